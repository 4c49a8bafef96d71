"""release: a student copy of the repository, with the chosen steps' LAB regions replaced by TODOs,
the steps after them left out (their code carries the chosen steps' solutions), a LAB.md for the
students, and a check that no removed solution is left anywhere in it: not a line of it, and not a
renamed or reformatted copy (tokens.py)."""
import json
import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import course, exit_codes, markers, tokens
from .rubric import sizes_text
from .steps import SOURCE_SUFFIXES, library_sources
from .steps import (NOT_RELEASED, RELEASE_RECORD, UsageError, check_repeats, discover_steps, later_steps,
                    region_files, registrations, repository_files, without_registrations)
from .tasks import load_tasks, tasks_path

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
        for number, line in zip(region.solution_lines, region.solution):
            code = code_of(line)
            if not TRIVIAL_CODE.match(code):
                prints.setdefault(code, f"{region.path}:{number}")
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


def token_fingerprints(regions):
    """tokens.Fingerprints of the regions being removed: runs of their code, names normalized."""
    prints = tokens.Fingerprints()
    for region in regions:
        code = tokens.tokenize("\n".join(region.solution), region.path)
        prints.add_code(code, lambda token, region=region: f"{region.path}:{region.solution_lines[token.line - 1]}")
    return prints


def find_copies(prints, files):
    """Where a removed solution is left renamed or reformatted: ["path:line: text (a copy of the
    solution at file:line, names aside)"]."""
    leaks = []
    for path, text in files:
        lines = text.splitlines()
        for number, origin in prints.find(tokens.tokenize(text, path)):
            leaks.append(f"{path}:{number}: {lines[number - 1].strip()}  (the code of solution line {origin}, "
                         "names aside)")
    return leaks


def all_leaks(regions, files):
    """find_leaks and find_copies over the same files, one report per line of the copy (the
    line check's, when both find it)."""
    files = list(files)
    found = find_leaks(solution_fingerprints(regions), files)
    seen = {leak.split(": ", 1)[0] for leak in found}
    for leak in find_copies(token_fingerprints(regions), files):
        if leak.split(": ", 1)[0] not in seen:
            found.append(leak)
            seen.add(leak.split(": ", 1)[0])
    return sorted(found, key=leak_order)


def leak_order(leak):
    path, line = leak.split(": ", 1)[0].rsplit(":", 1)
    return path, int(line)


def leaked_steps(leaks, steps):
    """The steps among `steps` in whose sources (its folder's kernel.cu and headers) a leak is."""
    where = {leak.split(":", 1)[0] for leak in leaks}
    return [s for s in steps if any(w.startswith(f"{s}/") and w.endswith(SOURCE_SUFFIXES) for w in where)]


EXCERPT_BLOCK = re.compile(r"(<!-- BEGIN generated: excerpt/(\S+)[^\n]*-->\n)(.*?)(<!-- END generated: excerpt/\2 -->)",
                           re.DOTALL)
EXCERPT_HIDDEN = ("\n*In this copy of the lab this code is yours to write: the `TODO`s of the file it is "
                  "quoted from.*\n\n")


def excerpts_without_answers(text, regions):
    """A README's text with every code excerpt (plots/readme/filler.py: excerpt blocks) that quotes a
    line of the regions being removed replaced by a sentence saying so."""
    def hide(match):
        leaks = all_leaks(regions, [("README.md", match.group(3))])
        return match.group(1) + EXCERPT_HIDDEN + match.group(4) if leaks else match.group(0)
    return EXCERPT_BLOCK.sub(hide, text)


def text_files(root, paths):
    """(path, text) for each path that is UTF-8 text; binary files cannot quote code."""
    for path in paths:
        try:
            yield path.as_posix(), (Path(root) / path).read_text(encoding="utf-8")
        except (UnicodeDecodeError, OSError):
            continue


def student_files(root, steps, level=markers.DEFAULT_LEVEL):
    """{step: {relative path: (the student's text at `level`, the regions it blanks, [(line of
    each TODO, its region)])}} for each source file of the steps that has LAB regions (kernel.cu,
    and headers such as 11's split_k_schedule.cuh), handed out together: a repeat region of one of
    them is blanked where a step it repeats is among them (MarkerError when a marker is malformed)."""
    result = {}
    for step in steps:
        check_repeats(root, step)
        result[step] = {}
        tasks = load_tasks(root, step)
        for path in region_files(root, step):
            text = (Path(root) / path).read_text(encoding="utf-8")
            lines, todos = markers.released_lines(text, path, level, steps, tasks)
            student = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
            result[step][path] = (student, [region for _, region in todos], todos)
    return result


class Plan:
    """What a release of `steps` from `root` holds: the files copied as they are, the chosen steps'
    kernels in their student version, the regions removed, the later steps left out (and out of
    the build's list of steps), and LAB.md. `keep`: later steps to copy all the same; `level`: the
    difficulty level of the release (markers.LEVELS): the regions of that level and easier ones are
    blanked."""

    def __init__(self, root, steps, rubric, exclude=(), keep=(), level=markers.DEFAULT_LEVEL):
        self.root = Path(root).resolve()
        self.level = markers.check_level(level)
        self.kernels = student_files(self.root, steps, self.level)
        self.withheld = later_steps(self.root, steps, keep)
        self.withheld_library = withheld_library_files(self.root, self.withheld, self.kernels)
        registered = registrations(self.root)
        for step in [s for s in discover_steps(self.root) if s not in self.withheld]:
            fallback = registered[step].fallback if step in registered else None
            if fallback in self.withheld:
                raise UsageError(f"{step} hands shapes to {fallback} (FALLBACK), which this copy leaves out: "
                                 f"keep {fallback} too, or leave {step} out")
        self.cmake = without_registrations(self.root, self.withheld)
        # A step left out takes its tasks with it (lab/tasks/<step>.md): they describe code the copy lacks.
        self.paths = repository_files(self.root, exclude=tuple(exclude) + NOT_RELEASED
                                      + tuple(Path(s) for s in self.withheld) + tuple(tasks_path(s) for s in self.withheld))
        self.regions = [r for files in self.kernels.values() for _, rs, _ in files.values() for r in rs]
        hopper = [s for s in steps if s in registered and registered[s].hopper]
        self.guide = lab_guide(self.root, self.kernels, rubric, self.withheld, hopper, self.level)
        self.handouts = handouts(self.root, self.kernels, rubric, self.level)
        # The handed-out steps' READMEs without their folded answers (course.py): those go to the key;
        # and every step README of the copy without the code excerpts that quote a region being
        # removed (the answer, in the lesson): a kept later step's (10's excerpt of its producer is
        # 09's solution renamed) or an earlier one's as much as a handed-out step's.
        self.readmes = {}
        copied = {path.as_posix() for path in self.paths}
        for step in [s for s in discover_steps(self.root) if s not in self.withheld]:
            readme = self.root / step / "README.md"
            if f"{step}/README.md" in copied:
                original = readme.read_text(encoding="utf-8")
                text, answers = course.split_readme(original) if step in self.kernels else (original, None)
                text = excerpts_without_answers(text, self.regions)
                if answers or text != original:
                    self.readmes[f"{step}/README.md"] = text

    def replaced(self):
        """{relative path: text} of the files that differ from the tree: kernels, the CMake files
        that list the steps left out, and LAB.md."""
        files = {path: text for step_files in self.kernels.values() for path, (text, _, _) in step_files.items()}
        files.update(self.withheld_library)
        files.update(self.cmake)
        files.update(self.handouts)
        files.update(self.readmes)
        files["LAB.md"] = self.guide
        return files

    def text_files(self):
        """(path, text) of every text file of the copy, without writing it (for lab.py check)."""
        replaced = self.replaced()
        kept = [(path, text) for path, text in text_files(self.root, self.paths) if path not in replaced]
        return kept + sorted(replaced.items())

    def leaks(self):
        return all_leaks(self.regions, self.text_files())

    def record(self, commit):
        """lab/released.json: the steps handed out and at which level, the steps left out, the
        folders the kit leaves out of every copy (docs/check_docs.py skips paths into them), and
        each handed-out file (kernel.cu, and a header with regions) as the copy has it, so that
        grading in the copy can check that only the TODOs changed (integrity.py)."""
        return {"steps": list(self.kernels), "level": self.level, "withheld": self.withheld,
                "removed": [p.as_posix() for p in NOT_RELEASED], "source_commit": commit,
                "handout": {path: {
                    "lines": text.splitlines(), "todos": [[line, len(region.todo_lines())] for line, region in todos]}
                    for step_files in self.kernels.values() for path, (text, _, todos) in step_files.items()}}


def withheld_library_files(root, withheld, kernels):
    """{relative path: text} of the library files (steps.library_sources) of the steps a copy leaves
    out: a left-out step's folder is not copied, but the library under the steps is, and its regions
    of that step (a repeat region holds an earlier step's solution) are blanked at the hardest level,
    as a release of that step would, so that the copy builds and gives no solution away."""
    handed = {path for step_files in kernels.values() for path in step_files}
    files = {}
    for step in withheld:
        tasks = load_tasks(root, step)
        for path in library_sources(root, step):
            if path in handed or path in files:
                continue
            text = (Path(root) / path).read_text(encoding="utf-8")
            lines, _ = markers.released_lines(text, path, markers.LEVELS[-1], [step, *discover_steps(root)], tasks)
            files[path] = "\n".join(lines) + ("\n" if text.endswith("\n") else "")
    return files


def handouts(root, kernels, rubric, level):
    """{lab/handouts/<step>.md: its text} for each handed-out step (course.py): from the step's course
    file, or from the template alone."""
    written = {}
    for step, step_files in kernels.items():
        readme = Path(root) / step / "README.md"
        readme_text = readme.read_text(encoding="utf-8") if readme.is_file() else ""
        todos = []
        for path, (_, _, found) in step_files.items():
            for line, region in found:
                where = f"`{path}`, line {line}"
                todos.append((where, " ".join(region.instruction)))
        text = course.handout_markdown(root, step, step_title(root, step), course.load_course(root, step), rubric,
                                       list(step_files), todos, level, readme_text)
        written[(course.HANDOUTS / f"{step}.md").as_posix()] = text
    return written


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


def lab_guide(root, kernels, rubric, withheld=(), hopper=(), level=markers.DEFAULT_LEVEL):
    """LAB.md: what to write, where, and how to build, test, sanitize and grade it; `withheld`,
    the later steps this copy leaves out; `hopper`, the chosen steps built for Hopper alone."""
    steps = list(kernels)
    graded = [path for step_files in kernels.values() for path in step_files]
    numbers = ",".join(s.split("_", 1)[0] for s in steps)
    step_regex = "|".join(steps)
    perf = rubric["performance"]
    size = sizes_text(rubric, steps)
    lines = [
        "# Lab: GEMM kernels",
        "",
        "You write the heart of " + ("this step" if len(steps) == 1 else "these steps") + " of the GEMM worklog. "
        "Everything else, the harness that checks your result against cuBLAS, the tests and the earlier steps, is "
        "given and works; `README.md` explains the repository, and each step's `README.md` the idea it teaches.",
        "",
        f"This copy is handed out at level **{level}** (of {', '.join(markers.LEVELS)}, easiest first): "
        + ("the regions you write are the finer pieces of each step." if level == markers.LEVELS[0] else
           "where a step marks its idea as a whole at this level, you write the whole of it, not only its pieces."),
        "",
    ]
    if withheld:
        lines += [
            "The steps after " + ("it" if len(steps) == 1 else "the first of them") + " are not in this copy ("
            + ", ".join(f"`{s}`" for s in withheld) + "): they build on the code you write, so their kernels would "
            "show it. `README.md` still names them; their folders and their lines in `CMakeLists.txt` are gone.",
            "",
        ]
    lines += [
        "## What to implement",
        "",
    ]
    for step, step_files in kernels.items():
        title = step_title(root, step)
        lines.append(f"### {step}" + (f" — {title}" if title else ""))
        lines.append("")
        lines.append(f"Start with the step's handout, [`lab/handouts/{step}.md`](lab/handouts/{step}.md) (objectives, "
                     "reading, the task, questions, a prediction to measure, what is graded).")
        lines.append("")
        lines.append(f"Read [`{step}/README.md`]({step}/README.md), then fill in each `TODO` of "
                     + " and ".join(f"[`{path}`]({path})" for path in step_files) + ":")
        lines.append("")
        for path, (_, _, todos) in step_files.items():
            for line, region in todos:  # where each TODO landed in the student's file
                where = f"line {line}" if len(step_files) == 1 else f"`{path}`, line {line}"
                lines.append(f"- {where}: " + " ".join(region.instruction))
        words = {word for _, (_, _, todos) in step_files.items() for _, region in todos for word in region.repeats}
        repeated = [s for s in steps if any(markers.names_step(word, s) for word in words)]
        if repeated:
            lines.append("")
            lines.append("Some of these TODOs (those that begin \"As in\") ask again for code you write in "
                         + " and ".join(f"`{s}`" for s in repeated) + ": this step builds on it, and its own copy of "
                         "that code would show the answer there, so it is taken out here too.")
        lines.append("")
        lines.append("Until you do, the step compiles and its tests fail. nvcc may warn that a variable is declared "
                     "but never referenced (for some steps it does, for others not): where it does, that variable is "
                     "one the TODOs need.")
        if step in hopper:
            lines.append("Its warps wait on mbarriers that only the code you write completes (the TMA copies, the "
                         "release of a stage): until then the kernel's watchdog ends the wait, and the run stops with "
                         f"the watchdog's message (a CUDA error, exit code {exit_codes.EXIT_CUDA_ERROR}) instead of "
                         "hanging; the tests report that as a failure.")
        lines.append("")
    lines += [
        "Only these files are graded: " + ", ".join(f"`{path}`" for path in graded) + ". Edits anywhere else "
        "(the harness in `common/`, the tests) are not used by the grader, which builds your kernels against its own "
        "copy of them. In these files, change only what a `TODO` asks for: write your code in place of each `TODO` "
        "(keep the comment or not), and leave every other line as it is, formatting included. The grader refuses a "
        "file that differs from this copy anywhere else, and a kernel that calls cuBLAS or another library's "
        "kernels, or the harness's; either scores 0 for the step, with the reason in the report.",
        "",
        "## Build and test",
        "",
        "You need the CUDA Toolkit, CMake and doctest (see `README.md`, Prerequisites), and an NVIDIA GPU to run "
        "the kernels" + (" (compute capability 9.0, an H100 or H200, for " + ", ".join(hopper) + ")" if hopper else "")
        + ". Without a GPU everything still builds, and the tests that need one say \"Skipped\".",
        "",
        "```sh",
        "cmake --workflow --preset test    # configure build/, build every step and the tests, run every test",
        f"ctest --test-dir build --output-on-failure -R '^gpu\\.({step_regex})$'   # your steps on the standard cases",
        "```",
        "",
        "The first command also runs the tests of the harness and of the earlier steps, which pass as given. Your "
        "steps' tests fail until your code is right: on a GPU all of them (and the determinism and offset tests, "
        "which run every step), without one those that run on the CPU (such as 11's schedule, played on the CPU). "
        "After a change, `cmake --build build` and `ctest --test-dir build --output-on-failure` (every test) or the "
        "second command (yours) are enough.",
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
        f"python3 lab/lab.py grade --submission . --steps {numbers} --out my-grade --no-gpu   # on a machine "
        "without one",
        "```",
        "",
        "This builds your kernels against a fresh copy of the harness and tests and writes `my-grade/report.md`. "
        "Without a GPU (`--no-gpu`) it checks what it can: that only the TODOs changed, that your kernel calls no "
        "other library's kernels, that it builds, and the tests that need no GPU; the rest is marked as not run. "
        "The score follows the course's rubric:",
        "",
        f"- correctness, {rubric['correctness']['points']} points per step: the share of cases that pass, the "
        "standard ones above and, in the course's grading, cases of the instructor's that you do not see;",
        f"- compute-sanitizer, {rubric['sanitizer']['points']} points: {' and '.join(rubric['sanitizer']['tools'])} "
        "on the odd shapes of the sanitizer tests above come out clean"
        + (" (once at least one correctness case passes)" if rubric["sanitizer"]["requires_a_passing_case"] else "")
        + ";",
        f"- performance, {perf['points']} points, only when every correctness case passes: your speed {size} "
        f"against the instructor's solution, full points from {perf['full_at']:.0%} of its speed, none at "
        f"{perf['zero_at']:.0%} or below. Your copy has no solution to compare with, so your own grade shows "
        "your speed against cuBLAS and leaves these points to the instructor's grading.",
        "",
        "Submit " + ", ".join(f"`{path}`" for path in graded) + " as your course asks.",
        "",
    ]
    return "\n".join(lines)


def release(root, steps, out, rubric, keep=(), leak_check=True, level=markers.DEFAULT_LEVEL):
    """Writes the student copy of `root` into `out` (a new or empty folder) and returns its Plan;
    `keep`: later steps to copy all the same; `level`: the difficulty level (markers.LEVELS). Raises MarkerError, UsageError, or LeakError when a
    solution survived (a line, or a copy of its code); then `out` is left as it was. (leak_check=False
    is for the kit's build test, which compiles every skeleton at once.)
    The leak check reads back what was written, so it also covers the copying itself."""
    root, out = Path(root).resolve(), Path(out).resolve()
    exclude = [out.relative_to(root)] if root in out.parents else []  # a copy inside the tree skips itself
    plan = Plan(root, steps, rubric, exclude, keep, level)
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        for path in plan.paths:
            target = staging / path
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(root / path, target)
        for path, text in plan.replaced().items():
            (staging / path).parent.mkdir(parents=True, exist_ok=True)
            (staging / path).write_text(text, encoding="utf-8")
        record = plan.record(source_commit(root))
        (staging / RELEASE_RECORD).parent.mkdir(parents=True, exist_ok=True)
        (staging / RELEASE_RECORD).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")

        written = sorted(p.relative_to(staging) for p in staging.rglob("*") if p.is_file())
        leaks = all_leaks(plan.regions, text_files(staging, written)) if leak_check else []
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
