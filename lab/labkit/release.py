"""release: a student copy of the repository, with the chosen steps' LAB regions replaced by TODOs,
a LAB.md for the students, and a check that no line of a removed solution is left anywhere in it."""
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import markers
from .steps import KERNEL, NOT_RELEASED, RELEASE_RECORD, repository_files

# Lines that carry no solution however often they appear: punctuation, pragmas, barriers, and loop
# or branch headers without a statement (if constexpr too). Everything else inside a region must not survive.
TRIVIAL_CODE = re.compile(r"^(|[{}()\[\];,]+|#\s*pragma\b.*|__sync\w*\(\);|else\s*\{?|\}\s*else\s*\{?"
                          r"|(for|if(\s+constexpr)?|while)\s*\(.*\)\s*\{?)$")
# A solution line is also a leak when it appears inside a longer line (an instruction quoting
# it, a Markdown snippet) if it is at least this long: shorter code is too likely by chance.
SUBSTRING_MINIMUM = 16


def code_of(line):
    """The code on a line, without its // comment, whitespace collapsed."""
    return " ".join(line.split("//", 1)[0].split())


def solution_fingerprints(regions):
    """{code of a non-trivial solution line: where it is} for the regions being removed."""
    prints = {}
    for region in regions:
        for offset, line in enumerate(region.solution, start=1):
            code = code_of(line)
            if not TRIVIAL_CODE.match(code):
                prints.setdefault(code, f"{region.path}:{region.begin_line + offset}")
    return prints


def find_leaks(fingerprints, files):
    """Where a removed solution line still appears: ["path:line: text (solution at file:line)"].
    `files` yields (relative path, text) for every text file of the copy."""
    long_prints = [p for p in fingerprints if len(p) >= SUBSTRING_MINIMUM]
    leaks = []
    for path, text in files:
        for number, line in enumerate(text.splitlines(), start=1):
            code, whole = code_of(line), " ".join(line.split())
            origin = fingerprints.get(code) or next((fingerprints[p] for p in long_prints if p in whole), None)
            if origin:
                leaks.append(f"{path}:{number}: {line.strip()}  (solution line {origin})")
    return leaks


def text_files(root, paths):
    """(path, text) for each path that is UTF-8 text; binary files cannot quote code."""
    for path in paths:
        try:
            yield path.as_posix(), (Path(root) / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


def student_kernels(root, steps):
    """{step: (student kernel.cu text, its regions)} (MarkerError when a marker is malformed)."""
    result = {}
    for step in steps:
        text = (Path(root) / step / KERNEL).read_text(encoding="utf-8")
        result[step] = markers.student_version(text, f"{step}/{KERNEL}")
    return result


class Plan:
    """What a release of `steps` from `root` holds: the files copied as they are, the chosen steps'
    kernels in their student version, the regions removed, and LAB.md."""

    def __init__(self, root, steps, rubric, exclude=()):
        self.root = Path(root).resolve()
        self.kernels = student_kernels(self.root, steps)
        self.paths = repository_files(self.root, exclude=tuple(exclude) + NOT_RELEASED)
        self.regions = [r for _, rs in self.kernels.values() for r in rs]
        self.guide = lab_guide(self.root, self.kernels, rubric)

    def replaced(self):
        """{relative path: text} of the files that differ from the tree: kernels and LAB.md."""
        files = {(Path(step) / KERNEL).as_posix(): text for step, (text, _) in self.kernels.items()}
        files["LAB.md"] = self.guide
        return files

    def text_files(self):
        """(path, text) of every text file of the copy, without writing it (for lab.py check)."""
        replaced = self.replaced()
        kept = [(path, text) for path, text in text_files(self.root, self.paths) if path not in replaced]
        return kept + sorted(replaced.items())

    def leaks(self):
        return find_leaks(solution_fingerprints(self.regions), self.text_files())


def step_title(root, step):
    """What a step teaches, from the first line of its README ("# 02_x — title"), if any."""
    readme = Path(root) / step / "README.md"
    if readme.is_file():
        first = readme.read_text(encoding="utf-8").splitlines()[:1]
        if first and "—" in first[0]:
            return first[0].split("—", 1)[1].strip()
    return ""


def source_commit(root):
    try:
        return subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return None


def lab_guide(root, kernels, rubric):
    """LAB.md: what to write, where, and how to build, test, sanitize and grade it."""
    steps = list(kernels)
    numbers = ",".join(s.split("_", 1)[0] for s in steps)
    step_regex = "|".join(steps)
    perf = rubric["performance"]
    size = "×".join(str(v) for v in perf["size"])
    lines = [
        "# Lab: GEMM kernels",
        "",
        "You write the heart of " + ("this step" if len(steps) == 1 else "these steps") + " of the GEMM worklog. "
        "Everything else, the harness that checks your result against cuBLAS, the tests and the other steps, is "
        "given and works; `README.md` explains the repository, and each step's `README.md` the idea it teaches.",
        "",
        "## What to implement",
        "",
    ]
    for step, (text, regions) in kernels.items():
        title = step_title(root, step)
        lines.append(f"### {step}" + (f" — {title}" if title else ""))
        lines.append("")
        lines.append(f"Read [`{step}/README.md`]({step}/README.md), then fill in each `TODO` of "
                     f"[`{step}/{KERNEL}`]({step}/{KERNEL}):")
        lines.append("")
        # Where each TODO landed in the student's file: regions shrink to their TODO lines.
        shift = 0
        for region in regions:
            line = region.begin_line - shift
            lines.append(f"- line {line}: " + " ".join(region.instruction))
            shift += (region.end_line - region.begin_line + 1) - len(region.instruction)
        lines.append("")
        lines.append("Until you do, the step compiles (nvcc warns about variables declared but never referenced: "
                     "they are what the TODOs need) and its tests fail.")
        lines.append("")
    lines += [
        "Only these files are graded: " + ", ".join(f"`{s}/{KERNEL}`" for s in steps) + ". Edits anywhere else "
        "(the harness in `common/`, the tests) are not used by the grader, which builds your kernels against its own "
        "copy of them.",
        "",
        "## Build and test",
        "",
        "You need an NVIDIA GPU, the CUDA Toolkit, CMake and doctest (see `README.md`, Prerequisites).",
        "",
        "```sh",
        "cmake --preset default                      # configure a Release build in build/",
        "cmake --build build -j                      # build every step and the tests",
        f"ctest --test-dir build --output-on-failure -R '^gpu\\.({step_regex})$'   # your steps on the standard cases",
        "```",
        "",
        "Each test runs your kernel on odd, skinny and tile-multiple shapes with several alpha and beta, and "
        "prints the first wrong element of a failing case. One run by hand, with its check against cuBLAS "
        "and its speed:",
        "",
        "```sh",
    ]
    lines += [f"build/bin/{s} --m 4096 --n 4096 --k 4096" for s in steps]
    lines += [
        f"build/bin/{steps[0]} --m 127 --n 129 --k 67 --alpha 0.75 --beta -0.5   # a small odd shape",
        "```",
        "",
        "## Sanitizer",
        "",
        "compute-sanitizer finds out-of-bounds accesses, uninitialized reads and shared-memory races:",
        "",
        "```sh",
        f"ctest --test-dir build --output-on-failure -L sanitize -R '\\.({step_regex})\\.'",
        "```",
        "",
        "## Grade yourself",
        "",
        "```sh",
        f"python3 lab/lab.py grade --submission . --steps {numbers} --out my-grade",
        "```",
        "",
        "This builds your kernels against a fresh copy of the harness and tests and writes `my-grade/report.md`. "
        "The score follows the course's rubric:",
        "",
        f"- correctness, {rubric['correctness']['points']} points per step: the share of cases that pass, the "
        "standard ones above and, in the course's grading, cases of the instructor's that you do not see;",
        f"- compute-sanitizer, {rubric['sanitizer']['points']} points: {' and '.join(rubric['sanitizer']['tools'])} "
        "on the odd shapes of the sanitizer tests above come out clean"
        + (" (once at least one correctness case passes)" if rubric["sanitizer"]["requires_a_passing_case"] else "")
        + ";",
        f"- performance, {perf['points']} points, only when every correctness case passes: your speed at {size} "
        f"against the instructor's solution, full points from {perf['full_at']:.0%} of its speed, none at "
        f"{perf['zero_at']:.0%} or below. Your copy has no solution to compare with, so your own grade shows "
        "your speed against cuBLAS and leaves these points to the instructor's grading.",
        "",
        "Submit " + ", ".join(f"`{s}/{KERNEL}`" for s in steps) + " as your course asks.",
        "",
    ]
    return "\n".join(lines)


def release(root, steps, out, rubric):
    """Writes the student copy of `root` into `out` (a new or empty folder) and returns its Plan.
    Raises MarkerError, or LeakError when a solution line survived; then `out` is left as it was.
    The leak check reads back what was written, so it also covers the copying itself."""
    root, out = Path(root).resolve(), Path(out).resolve()
    exclude = [out.relative_to(root)] if root in out.parents else []  # a copy inside the tree skips itself
    plan = Plan(root, steps, rubric, exclude)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        for path in plan.paths:
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / path, target)
        for path, text in plan.replaced().items():
            (staging / path).write_text(text, encoding="utf-8")
        record = {"steps": list(plan.kernels), "source_commit": source_commit(root)}
        (staging / RELEASE_RECORD).parent.mkdir(parents=True, exist_ok=True)
        (staging / RELEASE_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

        written = sorted(p.relative_to(staging) for p in staging.rglob("*") if p.is_file())
        leaks = find_leaks(solution_fingerprints(plan.regions), text_files(staging, written))
        if leaks:
            raise LeakError(leaks)
        if out.exists():
            out.rmdir()  # empty: the command line refuses a folder with files in it
        os.replace(staging, out)
    finally:
        if staging.exists():
            shutil.rmtree(staging)
    return plan


class LeakError(Exception):
    def __init__(self, leaks):
        super().__init__(f"{len(leaks)} line(s) of a removed solution would be in the copy")
        self.leaks = leaks
