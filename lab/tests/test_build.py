"""Slow: real builds with CMake and nvcc, no GPU needed (and none used: CUDA_VISIBLE_DEVICES is empty).

- every release, one per lab step (alone, or with the earlier steps `lab.py check` says to hand out
  with it) and one of every step together, is built and tested with the commands its own LAB.md
  gives, read from LAB.md itself: it configures, builds with its tests, and its ctest passes, the
  GPU and sanitizer tests reported skipped; the runs by hand stop with the no-device exit code;
- the grader's submission build: a step that compiles, one that does not (its first error is
  reported, the other step still builds), and one that the submission lacks;
- the no-GPU grade (`lab.py grade --no-gpu`) of the reference's own kernels (everything passes), of
  a kernel changed outside its TODO and of one that calls cuBLAS (both refused), and a student's
  self-grade in a release; then `lab.py collect` over those gradings.

CTest runs this as the test lab.build (LAB_BUILD_TESTS=1); without that variable it is skipped, so
that `python3 -m unittest discover -s lab/tests` stays quick. Everything builds for sm_90 only
(CUDAARCHS=90), and through compile_cache.py, which compiles each distinct file once for all the
releases: a release of step N holds the harness and steps 01..N, so without it the 14 builds
would compile the harness 14 times and the early steps up to 13 times each.
"""
import contextlib
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import unittest
from pathlib import Path
from unittest import mock

from lab_test_support import LAB, REPOSITORY

import lab  # noqa: E402
from labkit import exit_codes, grading, release  # noqa: E402
from labkit.rubric import load_rubric  # noqa: E402
from labkit.steps import discover_steps, region_files, regions_of  # noqa: E402

CACHE_SCRIPT = Path(__file__).resolve().with_name("compile_cache.py")
ONE_ARCHITECTURE = ["-DCMAKE_CUDA_ARCHITECTURES=90"]
COMMAND_TIMEOUT = 3600  # one LAB.md command (the workflow: configure, build, every test)


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


def build_environment(cache):
    """The environment of every build here: sm_90 only, through the compile cache, and no GPU."""
    env = dict(os.environ, CUDAARCHS=os.environ.get("CUDAARCHS", "90"), CUDA_VISIBLE_DEVICES="",
               COMPILE_CACHE_DIR=str(cache))
    for language in ("CUDA", "CXX"):
        env[f"CMAKE_{language}_COMPILER_LAUNCHER"] = f"{sys.executable};{CACHE_SCRIPT}"
    return env


CACHE = None  # one compile cache for every build of this module: the gradings reuse the releases' objects


def setUpModule():
    """LAB_BUILD_CACHE names a cache folder to keep between runs (for working on the kit); by
    default each run starts from an empty one, which it removes. LAB_BUILD_SEED names a build whose
    objects start the cache (CTest gives its own build: every object a release compiles as that
    build did, with the same flags, is taken from it; compile_cache.py --seed)."""
    global CACHE
    if os.environ.get("LAB_BUILD_TESTS") == "1":
        kept = os.environ.get("LAB_BUILD_CACHE")
        CACHE = Path(kept) if kept else Path(tempfile.mkdtemp(prefix="lab-compile-cache-"))
        CACHE.mkdir(parents=True, exist_ok=True)
        seed = os.environ.get("LAB_BUILD_SEED")
        if seed:
            done = subprocess.run([sys.executable, str(CACHE_SCRIPT), "--seed", seed], capture_output=True, text=True,
                                  env=dict(os.environ, COMPILE_CACHE_DIR=str(CACHE)))
            print(f"\nlab.build: {(done.stdout + done.stderr).strip()}", file=sys.stderr)
            if done.returncode != 0:
                raise RuntimeError(f"LAB_BUILD_SEED={seed}: the compile cache could not be seeded")


def tearDownModule():
    if CACHE is not None and not os.environ.get("LAB_BUILD_CACHE"):
        shutil.rmtree(CACHE)


def run_command(command, cwd, env, timeout=COMMAND_TIMEOUT):
    done = subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return done.returncode, done.stdout + done.stderr


@unittest.skipUnless(os.environ.get("LAB_BUILD_TESTS") == "1", "slow build tests: set LAB_BUILD_TESTS=1")
class ReleaseBuildTest(unittest.TestCase):
    """Every release, built and tested as its LAB.md says."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="lab-build-test-"))
        cls.env = build_environment(CACHE)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def test_every_release_builds_and_passes_its_own_tests_with_lab_md_commands(self):
        started = time.monotonic()
        timings = []
        for name, steps, leak_check in releases_to_build(REPOSITORY):
            with self.subTest(release=name, steps=steps):
                copy = self.tmp / f"release-{name}"
                release.release(REPOSITORY, steps, copy, load_rubric(), leak_check=leak_check)
                self.assertFalse((copy / "plots" / "tests").exists())
                commands = lab_md_commands((copy / "LAB.md").read_text(encoding="utf-8"))
                self.assertTrue(commands[0].startswith("cmake --workflow --preset test"), commands)
                begun = time.monotonic()
                skeleton_failures = []
                for command in commands:
                    code, output = run_command(command, copy, self.env)
                    if command.startswith("build/bin/"):  # a run by hand: without a GPU it stops, saying so
                        self.assertEqual(code, exit_codes.EXIT_NO_DEVICE, f"{command}\n{output[-3000:]}")
                        self.assertIn(": error: ", output)  # the reason, in one line
                        continue
                    if command.startswith("cmake --workflow"):
                        # The tests of the student's code that need no GPU (11's schedule played on
                        # the CPU) fail on the skeleton: they must pass once the solution is in,
                        # below. Everything else passes or is skipped.
                        skeleton_failures = failed_tests(copy / "build")
                        self.assertTrue(code == 0 or skeleton_failures, f"release {name}: {command}\n{output[-5000:]}")
                        continue
                    self.assertEqual(code, 0, f"release {name}: {command}\n{output[-5000:]}")
                    if command.startswith("ctest") and "-R '^gpu" in command:
                        # The step's GPU test exists and says it was skipped (no "Could not find executable").
                        for step in steps:
                            self.assertIn(f"gpu.{step} (Skipped)", output)
                # The solutions filled in, LAB.md's commands after a change: every test passes (or is skipped).
                for step in steps:
                    for path in region_files(REPOSITORY, step):
                        shutil.copyfile(REPOSITORY / path, copy / path)
                guide = (copy / "LAB.md").read_text(encoding="utf-8")
                for command in ("cmake --build build", "ctest --test-dir build --output-on-failure"):
                    self.assertIn(f"`{command}`", guide)
                    code, output = run_command(command, copy, self.env)
                    self.assertEqual(code, 0, f"release {name}, solutions filled in: {command}\n{output[-5000:]}")
                timings.append(f"{name} {time.monotonic() - begun:.0f} s"
                               + (f" (on the skeleton, {', '.join(skeleton_failures)} failed)" if skeleton_failures else ""))
                shutil.rmtree(copy)  # the disk: a build tree is large
        log = (CACHE / "log").read_text(encoding="utf-8").split()
        hits, misses = log[0::2].count("hit"), log[0::2].count("miss")
        print(f"\nlab.build: {len(timings)} releases built and tested in {time.monotonic() - started:.0f} s "
              f"({', '.join(timings)}); compile cache: {hits} hits, {misses} compilations", file=sys.stderr)
        self.assertGreater(hits, misses)  # the releases share most of their files


@unittest.skipUnless(os.environ.get("LAB_BUILD_TESTS") == "1", "slow build tests: set LAB_BUILD_TESTS=1")
class GradeBuildTest(unittest.TestCase):
    """The grader's builds, for real, without a GPU."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = Path(tempfile.mkdtemp(prefix="lab-grade-build-test-"))
        cls.env = build_environment(CACHE)
        cls.work = cls.tmp / "work"

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp)

    def grade(self, *args):
        """lab.py grade --no-gpu as a process, in this class's environment: (exit code, output)."""
        done = subprocess.run([sys.executable, str(LAB / "lab.py"), "grade", "--no-gpu", "--work", str(self.work),
                               *map(str, args)], capture_output=True, text=True, env=self.env, timeout=COMMAND_TIMEOUT)
        return done.returncode, done.stdout + done.stderr

    def test_submission_build_step_by_step(self):
        steps = ["02_block_tiling", "03_thread_coarsening", "04_outer_product"]
        submission = self.tmp / "submission"
        release.release(REPOSITORY, steps, submission, load_rubric(), leak_check=False)
        broken = submission / "03_thread_coarsening" / "kernel.cu"
        broken.write_text(broken.read_text().replace("// TODO: ", "acc2[0][0] += 1.0f;  // TODO: ", 1))
        (submission / "04_outer_product" / "kernel.cu").unlink()
        grader = grading.Grader(submission, REPOSITORY, steps, load_rubric(), [], self.tmp / "work-steps", jobs=2,
                                use_gpu=False)
        with contextlib.redirect_stderr(io.StringIO()), mock.patch.dict(os.environ, self.env):
            build, compiled = grader.build_submission(self.tmp / "logs", ONE_ARCHITECTURE)
        self.assertTrue(compiled["02_block_tiling"]["ok"])
        self.assertTrue(build.executable("02_block_tiling").is_file())
        error = compiled["03_thread_coarsening"]["error"]
        self.assertEqual(compiled["03_thread_coarsening"]["reason"], "compiler")
        self.assertRegex(error, r'^03_thread_coarsening/kernel\.cu\(\d+\): error: identifier "acc2" is undefined')
        self.assertNotIn(str(self.tmp), error)
        self.assertEqual(compiled["04_outer_product"], {"ok": False, "reason": "no kernel",
                                                        "error": "the submission has no 04_outer_product/kernel.cu"})
        # Only the chosen kernels come from the submission: the rest of the scratch tree is the reference's.
        tree = self.tmp / "work-steps" / "submission-tree"
        self.assertEqual((tree / "02_block_tiling" / "kernel.cu").read_bytes(),
                         (submission / "02_block_tiling" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "04_outer_product" / "kernel.cu").read_bytes(),
                         (REPOSITORY / "04_outer_product" / "kernel.cu").read_bytes())
        self.assertEqual((tree / "common" / "run_step.cpp").read_bytes(),
                         (REPOSITORY / "common" / "run_step.cpp").read_bytes())

    def test_no_gpu_grade_integrity_and_collect(self):
        grades = self.tmp / "grades"
        # 1. The reference's own kernel: only the TODOs changed (the solution is in them), it calls no
        #    foreign kernel, it builds, and its host tests pass.
        started = time.monotonic()
        code, output = self.grade("--submission", REPOSITORY, "--steps", "04", "--out", grades / "reference")
        first = time.monotonic() - started
        self.assertEqual(code, exit_codes.EXIT_OK, output[-4000:])
        results = json.loads((grades / "reference" / "results.json").read_text())
        statuses = {t["name"]: t.get("status") for t in results["tests"]}
        self.assertEqual(statuses["04_outer_product: integrity, only the TODOs changed"], "passed")
        self.assertEqual(statuses["04_outer_product: integrity, no kernel but the step's own"], "passed")
        self.assertEqual(statuses["04_outer_product: builds"], "passed")
        self.assertEqual(statuses["04_outer_product: host tests (no GPU)"], "passed")
        correctness = next(t for t in results["tests"] if t["name"] == "04_outer_product: correctness")
        self.assertIn("not run: graded without a GPU", correctness["output"])
        self.assertIn("not run: graded without a GPU", (grades / "reference" / "report.md").read_text())

        source = (REPOSITORY / "04_outer_product" / "kernel.cu").read_text(encoding="utf-8")
        # 2. A line added outside the region: refused, and the report says which line.
        outside = self.tmp / "outside" / "04_outer_product" / "kernel.cu"
        outside.parent.mkdir(parents=True)
        first_code = next(i for i, line in enumerate(source.splitlines()) if line.startswith("namespace worklog"))
        lines = source.splitlines()
        lines.insert(first_code + 1, "static int helper_outside_the_todo = 1;")
        outside.write_text("\n".join(lines) + "\n", encoding="utf-8")
        code, output = self.grade("--submission", outside.parents[1], "--steps", "04", "--out", grades / "outside")
        self.assertEqual(code, exit_codes.EXIT_OK, output[-4000:])
        outside_report = (grades / "outside" / "report.md").read_text()
        self.assertIn("lines are added, changed or removed here, outside the TODOs", outside_report)
        record = json.loads((grades / "outside" / "grading.json").read_text())["steps"][0]
        self.assertEqual(record["compile"]["reason"], "refused")

        # 4. collect: one row per grading.
        table = self.tmp / "class.csv"
        code, out = lab.main(["collect", "--grades", str(grades), "--out", str(table)]), None
        self.assertEqual(code, exit_codes.EXIT_OK)
        with table.open(encoding="utf-8") as f:
            rows = {row["submission"]: row for row in csv.DictReader(f)}
        self.assertEqual(sorted(rows), ["outside", "reference"])
        self.assertEqual(rows["reference"]["04_outer_product status"], "built, host tests pass, no GPU run")
        self.assertEqual(rows["outside"]["refused_steps"], "04_outer_product")
        self.assertEqual(rows["outside"]["04_outer_product status"], "refused")
        print(f"\nlab.build: a no-GPU grade of one step took {first:.0f} s with an empty --work folder "
              f"(the reference's kernel and a scratch tree built)", file=sys.stderr)


@unittest.skipUnless(os.environ.get("LAB_BUILD_TESTS") == "1", "slow build tests: set LAB_BUILD_TESTS=1")
class SymbolCheckTest(unittest.TestCase):
    """integrity.foreign_calls on objects nvcc compiles here: a launcher that calls cuBLAS, one that
    calls a harness function its reference does not, and the reference itself."""

    def test_foreign_calls_are_found_in_real_objects(self):
        nvcc = os.environ.get("CUDACXX") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
        if not Path(nvcc).is_file():
            self.skipTest("nvcc not found")
        from labkit import integrity
        kernel = "__global__ void k(float* c) { c[threadIdx.x] = 1.0f; }\n"
        sources = {
            "reference": kernel + "void launch(float* c) { k<<<1, 32>>>(c); }\n",
            "cublas": "#include <cublas_v2.h>\n" + kernel
                      + "void launch(float* c) { cublasHandle_t h; cublasCreate(&h); k<<<1, 32>>>(c); }\n",
            "harness": "namespace worklog { void cublas_gemm_for_the_check(float*); }\n" + kernel
                       + "void launch(float* c) { worklog::cublas_gemm_for_the_check(c); }\n",
        }
        with tempfile.TemporaryDirectory() as tmp:
            objects = {}
            for name, text in sources.items():
                (Path(tmp) / f"{name}.cu").write_text(text)
                objects[name] = Path(tmp) / f"{name}.o"
                done = subprocess.run([nvcc, "-c", "-arch=sm_90", str(Path(tmp) / f"{name}.cu"), "-o", str(objects[name])],
                                      capture_output=True, text=True, timeout=600)
                self.assertEqual(done.returncode, 0, done.stderr)
            self.assertEqual(integrity.foreign_calls(objects["reference"], objects["reference"]), [])
            found = integrity.foreign_calls(objects["cublas"], objects["reference"])
            self.assertTrue(found and found[0].startswith("cublasCreate_v2 (a library"), found)
            found = integrity.foreign_calls(objects["harness"], objects["reference"])
            self.assertTrue(found and "worklog::cublas_gemm_for_the_check" in found[0], found)
            # In a student's copy there is no reference object: foreign libraries only.
            self.assertTrue(integrity.foreign_calls(objects["cublas"], None))
            self.assertEqual(integrity.foreign_calls(objects["harness"], None), [])


if __name__ == "__main__":
    unittest.main()
