"""Slow: every release, built for real with CMake and nvcc, no GPU needed (and none used:
CUDA_VISIBLE_DEVICES is empty).

Every release, one per lab step (alone, or with the earlier steps `lab.py check` says to hand out
with it) and one of every step together, is built and tested with the commands its own LAB.md
gives, read from LAB.md itself: it configures, builds with its tests, and its ctest passes, the GPU
and sanitizer tests reported skipped; the runs by hand stop with the no-device exit code; then the
same with the solutions filled in.

CTest runs this as the test lab.build (LAB_BUILD_TESTS=1); without that variable it is skipped, so
that `python3 -m unittest discover -s lab/tests` stays quick. The grader's builds are
test_grade_build.py (lab.grade_build), which CTest runs beside it. The releases are built
LAB_BUILD_JOBS at a time (default 2), for sm_90 only, through one compile cache seeded from CTest's
own build (build_support.py).
"""
import concurrent.futures
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path

from build_support import COMMAND_TIMEOUT, build_environment, close_cache, enabled, open_cache
from lab_test_support import REPOSITORY

from labkit import exit_codes, release  # noqa: E402  (after lab_test_support, which puts lab/ on the path)
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, region_files, regions_of  # noqa: E402


def lab_md_commands(guide, sections=("Build and test", "Sanitizer")):
    """The shell lines of LAB.md's ```sh blocks in the named sections, in order."""
    commands, section, inside = [], None, False
    for line in guide.splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("```"):
            inside = not inside
        elif inside and section in sections and line.strip():
            commands.append(line.strip())
    return commands


def releases_to_build(root):
    """[(name, steps, leak_check)]: one release per lab step, alone or with the earlier steps its
    solution repeats (as `lab.py check` says to hand it out), and every step together. The joint
    release of every step is made without the leak check, which refuses it where a later step's
    remaining code repeats an earlier step's solution outside its repeat regions (lab.py check's last
    line shows where); its repeat regions are blanked all the same, so that their TODOs are built too."""
    steps = [s for s in discover_steps(root) if regions_of(root, s)]
    rubric = load_rubric()
    found = []
    for step in steps:
        leaks = release.Plan(root, [step], rubric).leaks()
        earlier = [s for s in release.leaked_steps(leaks, steps) if s < step]
        found.append((step[:2], sorted(earlier + [step]), True))
    found.append(("all", steps, False))
    return found


def failed_tests(build_dir):
    """The tests the last ctest run in build_dir failed (CTest's LastTestsFailed.log)."""
    log = Path(build_dir) / "Testing" / "Temporary" / "LastTestsFailed.log"
    if not log.is_file():
        return []
    return [line.split(":", 1)[1] for line in log.read_text(encoding="utf-8").splitlines() if ":" in line]


CACHE = None  # one compile cache for every release: each object is compiled once, by the first to need it


def setUpModule():
    global CACHE
    if enabled():
        CACHE = open_cache("lab.build")


def tearDownModule():
    close_cache(CACHE)


def run_command(command, cwd, env, timeout=COMMAND_TIMEOUT):
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


def cache_counts(cache):
    """(hits, compilations, their CPU seconds) from the compile cache's log (compile_cache.py)."""
    hits = misses = 0
    seconds = 0.0
    for line in (Path(cache) / "log").read_text(encoding="utf-8").splitlines():
        words = line.split()
        if words and words[0] == "hit":
            hits += 1
        elif words and words[0] == "miss":
            misses += 1
            seconds += float(words[2]) if len(words) > 2 else 0.0
    return hits, misses, seconds


def longest_first(releases):
    """The releases in the order to start them: every step together, then 13 (whose kernel.cu is
    the longest compilation), then from the last step down: the Hopper steps' skeletons compile for
    minutes, the early steps' in seconds, so that the last to finish are short."""
    def rank(entry):
        name = entry[0]
        return (0, 0) if name == "all" else (1, 0) if name == "13" else (2, -int(name))
    return sorted(releases, key=rank)


RELEASE_JOBS = int(os.environ.get("LAB_BUILD_JOBS", "2"))  # releases built at once


@unittest.skipUnless(enabled(), "slow build tests: set LAB_BUILD_TESTS=1")
class ReleaseBuildTest(unittest.TestCase):
    """Every release, built and tested as its LAB.md says."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="lab-build-test-"))
        cls.env = build_environment(CACHE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def build_release(self, name, steps, leak_check):
        """Makes one release in a folder of its own and runs LAB.md's commands in it, on the skeleton,
        then with the solutions filled in: (its time in words, [what went wrong])."""
        problems = []

        def check(ok, message):
            if not ok:
                problems.append(f"release {name} ({', '.join(steps)}): {message}")
            return ok

        copy = self.tmp / f"release-{name}"
        began = time.monotonic()
        release.release(REPOSITORY, steps, copy, load_rubric(), leak_check=leak_check)
        check(not (copy / "plots" / "tests").exists(), "the copy holds plots/tests")
        commands = lab_md_commands((copy / "LAB.md").read_text(encoding="utf-8"))
        if not check(commands and commands[0].startswith("cmake --workflow --preset test"),
                     f"LAB.md's first command is not the test workflow: {commands}"):
            return name, problems
        skeleton_failures = []
        for command in commands:
            code, output = run_command(command, copy, self.env)
            if command.startswith("build/bin/"):  # a run by hand: without a GPU it stops, saying so
                check(code == exit_codes.EXIT_NO_DEVICE and ": error: " in output,  # the reason, in one line
                      f"{command}: exit code {code}, expected {exit_codes.EXIT_NO_DEVICE}\n{output[-3000:]}")
                continue
            if command.startswith("cmake --workflow"):
                # The tests of the student's code that need no GPU (11's schedule played on the CPU)
                # fail on the skeleton: they must pass once the solution is in, below. Everything
                # else passes or is skipped.
                skeleton_failures = failed_tests(copy / "build")
                if not check(code == 0 or skeleton_failures, f"{command}\n{output[-5000:]}"):
                    return name, problems
                continue
            check(code == 0, f"{command}\n{output[-5000:]}")
            if command.startswith("ctest") and "-R '^gpu" in command:
                # The step's GPU test exists and says it was skipped (no "Could not find executable").
                for step in steps:
                    check(f"gpu.{step} (Skipped)" in output,
                          f"{command}: no gpu.{step} reported skipped\n{output[-3000:]}")
        # The solutions filled in, LAB.md's commands after a change: every test passes (or is skipped).
        for step in steps:
            for path in region_files(REPOSITORY, step):
                shutil.copyfile(REPOSITORY / path, copy / path)
        guide = (copy / "LAB.md").read_text(encoding="utf-8")
        for command in ("cmake --build build", "ctest --test-dir build --output-on-failure"):
            check(f"`{command}`" in guide, f"LAB.md does not give `{command}`")
            code, output = run_command(command, copy, self.env)
            check(code == 0, f"solutions filled in: {command}\n{output[-5000:]}")
        shutil.rmtree(copy)  # the disk: a build tree is large
        return (f"{name} {time.monotonic() - began:.0f} s"
                + (f" (on the skeleton, {', '.join(skeleton_failures)} failed)" if skeleton_failures else "")), problems

    def test_every_release_builds_and_passes_its_own_tests_with_lab_md_commands(self):
        """RELEASE_JOBS releases at a time (LAB_BUILD_JOBS): a release's configure, links and tests
        leave most of a small machine idle, and its compilations are shared with the others
        through the compile cache, which compiles each object once whichever release asks first."""
        started, before = time.monotonic(), os.times()
        releases = releases_to_build(REPOSITORY)
        with concurrent.futures.ThreadPoolExecutor(max_workers=RELEASE_JOBS) as pool:
            futures = {entry[0]: pool.submit(self.build_release, *entry) for entry in longest_first(releases)}
        timings, problems = [], []
        for name, _, _ in releases:
            try:
                timing, found = futures[name].result()
            except Exception as e:  # noqa: BLE001  (a release that could not be made: report it with the rest)
                timing, found = f"{name} failed", [f"release {name}: {type(e).__name__}: {e}"]
            timings.append(timing)
            problems += found
        after = os.times()
        cpu = after.children_user + after.children_system - before.children_user - before.children_system
        hits, misses, seconds = cache_counts(CACHE)
        print(f"\nlab.build: {len(releases)} releases built and tested in {time.monotonic() - started:.0f} s, "
              f"{RELEASE_JOBS} at a time, {cpu:.0f} s of CPU ({', '.join(timings)}); compile cache: {hits} hits, "
              f"{misses} compilations ({seconds:.0f} s of CPU)", file=sys.stderr)
        self.assertEqual(problems, [], "\n\n".join(problems))
        self.assertGreater(hits, misses)  # the releases share most of their files


if __name__ == "__main__":
    unittest.main()
