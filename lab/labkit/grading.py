"""grade: build a submission's kernels against the reference tree and run them.

The reference tree is built as it is (its own solutions: the speed to beat, and gpu_tests, whose
--list-cases gives the standard cases). The submission is built in a scratch copy of the
reference tree in which only the chosen steps' kernel.cu come from the submission, so edits to
the harness or the tests cannot help it. Then, for each step: every case through the step's
executable (each in its own process, with a timeout), the project's own sanitize.* tests for the
rubric's tools, and the speed of the submission, the reference solution and cuBLAS, alternating in
one run. What a submission does wrong is recorded for its step and grading goes on; only problems
of the grading machine stop it (GradingError).

The record written here (grading.json) is all that report.py needs to score.
"""
import concurrent.futures
import csv
import datetime
import json
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import threading
from dataclasses import dataclass
from pathlib import Path

import cuda_probe  # common/cuda_probe.py, on the path with exit_codes (labkit/__init__.py)

from . import exit_codes, integrity, markers
from .cases import parse_cases
from .release import source_commit
from .rubric import performance_size
from .steps import KERNEL, RELEASE_RECORD, region_files, repository_files
from .tasks import load_tasks

# Every exit code, the step executables' and grade's own, is the worklog's (common/exit_codes.hpp,
# read by common/exit_codes.py): grade exits with exit_unsupported_gpu and exit_no_device meaning
# what they mean for a step, and with exit_cannot_grade when this machine cannot grade.


class GradingError(Exception):
    """The grading machine, not the submission, is at fault; exit_code says which way (lab.py)."""

    def __init__(self, message, exit_code):
        super().__init__(message)
        self.exit_code = exit_code


# ---- Running commands -----------------------------------------------------------------------------

@dataclass
class Outcome:
    code: int            # negative: killed by that signal; None when timed out
    stdout: str
    stderr: str
    timed_out: bool = False

    @property
    def output(self):
        return self.stdout + self.stderr


def run(command, timeout, cwd=None):
    """Runs `command`, and on timeout kills it with everything it started (its own session)."""
    try:
        process = subprocess.Popen([str(c) for c in command], cwd=cwd, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, start_new_session=True)
    except OSError as e:
        return Outcome(127, "", f"cannot run {command[0]}: {e.strerror}\n")
    try:
        out, err = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        out, err = process.communicate()
        return Outcome(None, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), timed_out=True)
    return Outcome(process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"))


def error_message(stderr):
    """The step executable's one-line message ("<step>: error: <message>"), or its last line."""
    lines = [line for line in stderr.splitlines() if line.strip()]
    for line in lines:
        if ": error: " in line:
            return line.split(": error: ", 1)[1].strip()
    return lines[-1].strip() if lines else ""


def signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


# The line a kernel's mbarrier watchdog leaves before the run ends with a CUDA error (run_step.cpp
# prints it first): "<step>: watchdog: <which thread waited on which barrier, for how long>".
WATCHDOG = re.compile(r"^\S+: watchdog: (.*)$", re.MULTILINE)


def check_verdict(row):
    """A wrong result in words, from the check's columns of the step's CSV row (--csv: bad_count,
    first_bad_row, first_bad_col, expected, obtained; common/report.cpp writes them); '' when the
    row has none (no row, an older executable, or a check that passed)."""
    if not row or (row.get("bad_count") or "0").strip() in ("", "0"):
        return ""
    where = ""
    if (row.get("first_bad_row") or "").strip():
        where = (f"; first at (row {row['first_bad_row']}, col {row['first_bad_col']}): "
                 f"expected {row['expected']}, got {row['obtained']}")
    return f"{row['bad_count']} wrong element(s){where}"


def case_result(outcome, timeout, row=None):
    """(status, detail) of one case run: pass, fail (wrong result), error (a CUDA error or the
    harness refusing), crash (killed by a signal or an unexpected exit) or timeout. `row` is the
    CSV row the run wrote (or None): a wrong result is described from it (check_verdict), and
    only without one from the step's message."""
    if outcome.timed_out:
        return "timeout", f"stopped after {timeout:g} s: the kernel hangs or is far too slow"
    message = error_message(outcome.stderr)
    if outcome.code == exit_codes.EXIT_OK:
        return "pass", ""
    if outcome.code == exit_codes.EXIT_CHECK_FAILED:
        return "fail", check_verdict(row) or message
    if outcome.code == exit_codes.EXIT_CUDA_ERROR:
        watchdog = WATCHDOG.search(outcome.stderr)
        if watchdog:  # a barrier wait that never ended, stopped by the kernel's watchdog (watchdog.cuh)
            return "error", f"stopped by the watchdog: {watchdog.group(1).strip()}"
        return "error", f"CUDA error: {message}"
    if outcome.code < 0:
        return "crash", f"killed by {signal_name(outcome.code)}" + (f" after: {message}" if message else "")
    return "crash", f"exit code {outcome.code}" + (f": {message}" if message else "")


# ---- The GPU ----------------------------------------------------------------------------------------

def cuda_devices():
    """(number of CUDA devices, name of the first or why there are none), asked of the driver
    library (common/cuda_probe.py), so that no GPU is found before anything is built.
    CUDA_VISIBLE_DEVICES applies."""
    names, reason = cuda_probe.probe()
    return (len(names), names[0]) if names else (0, reason)


# ---- Building -----------------------------------------------------------------------------------------

# The first line that reports an error, from nvcc, the host compiler, ptxas, the linker or CMake;
# make's and ninja's own lines are only echoes.
COMPILER_ERROR = re.compile(r"(\berror\b|undefined reference|ptxas fatal|CMake Error)", re.IGNORECASE)
BUILD_TOOL_LINE = re.compile(r"^(g?make(\[\d+\])?:|ninja:|FAILED:|\[\s*\d+%\]|collect2:|\d+ errors? detected)")


def first_compiler_error(output, tree):
    """The compiler's first error with the lines that show where (nvcc prints the source line and
    a caret after it), paths made relative to `tree`; '' when none is recognized."""
    lines = output.replace(str(Path(tree).resolve()) + "/", "").replace(str(tree) + "/", "").splitlines()
    for index, line in enumerate(lines):
        if COMPILER_ERROR.search(line) and not BUILD_TOOL_LINE.match(line.strip()):
            shown = [line.rstrip()]
            for following in lines[index + 1:index + 3]:
                if (not following.strip() or COMPILER_ERROR.search(following)
                        or BUILD_TOOL_LINE.match(following.strip())):
                    break
                shown.append(following.rstrip())
            return "\n".join(shown)
    return ""


def _cache_value(build_dir, key):
    cache = Path(build_dir) / "CMakeCache.txt"
    if cache.is_file():
        for line in cache.read_text(encoding="utf-8", errors="replace").splitlines():
            if line.startswith(key + ":"):
                return line.split("=", 1)[1]
    return None


class Build:
    """A CMake build directory of one tree."""

    def __init__(self, source, directory, log_dir, jobs):
        self.source, self.directory = Path(source).resolve(), Path(directory).resolve()
        self.log_dir, self.jobs = Path(log_dir), jobs

    def _log(self, name, outcome):
        self.log_dir.mkdir(parents=True, exist_ok=True)
        (self.log_dir / f"{name}.log").write_text(outcome.output, encoding="utf-8")

    def configure(self, name, timeout, options=()):
        home = _cache_value(self.directory, "CMAKE_HOME_DIRECTORY")
        if home is not None and Path(home).resolve() != self.source:
            shutil.rmtree(self.directory)  # a build of another tree: start afresh
        outcome = run(["cmake", "-S", self.source, "-B", self.directory, "-DCMAKE_BUILD_TYPE=Release", *options],
                      timeout)
        self._log(f"{name}-configure", outcome)
        return outcome

    def build(self, name, targets, timeout, keep_going=False):
        native = []
        if keep_going:  # build every target that can be built, whatever fails beside it
            generator = _cache_value(self.directory, "CMAKE_GENERATOR") or ""
            native = ["--", "-k"] if "Makefiles" in generator else ["--", "-k", "0"] if "Ninja" in generator else []
        outcome = run(["cmake", "--build", self.directory, "-j", str(self.jobs), "--target", *targets, *native],
                      timeout)
        self._log(name, outcome)
        return outcome

    def executable(self, target):
        return self.directory / "bin" / target


def find_submission_file(submission, path):
    """The submission's file `path` ("04_x/kernel.cu"): SUBMISSION/path, or the one .../path below
    it (an archive often adds a folder). (path or None, problem)."""
    direct = Path(submission) / path
    if direct.is_file():
        return direct, ""
    found = [p for p in Path(submission).rglob(path)
             if not any((parent / "CMakeCache.txt").exists() for parent in p.parents)]
    if len(found) == 1:
        return found[0], ""
    if not found:
        return None, f"the submission has no {path}"
    return None, f"the submission has {len(found)} files {path}: " + ", ".join(
        str(p.relative_to(submission)) for p in found[:3])


def find_submission_kernel(submission, step):
    """The submission's kernel.cu for `step` (find_submission_file)."""
    return find_submission_file(submission, f"{step}/{KERNEL}")


def sync_tree(reference, tree, replacements):
    """Makes `tree` a copy of the reference's files with `replacements` ({relative path: text})
    on top. Files already equal are left untouched and changed ones written afresh, so that an
    incremental build of a reused tree recompiles exactly what changed."""
    tree = Path(tree)
    wanted = {p.as_posix(): (Path(reference) / p).read_bytes() for p in repository_files(reference)}
    for path, text in replacements.items():
        wanted[path] = text.encode("utf-8")
    for path, content in wanted.items():
        target = tree / path
        if not target.is_file() or target.read_bytes() != content:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(content)
    for existing in [p for p in tree.rglob("*") if p.is_file()]:
        if existing.relative_to(tree).as_posix() not in wanted:
            existing.unlink()


# ---- The sanitizer runs: the project's sanitize.* tests ------------------------------------------

SANITIZE_TEST = re.compile(r"^sanitize\.(?P<tool>\w+)\.(?P<step>\d{2}_\w+?)\.(?P<shape>\d+x\d+x\d+)\.beta(?P<beta>.+)$")
SANITIZER_REPORT = re.compile(r"^=+ (?!ERROR SUMMARY: 0 errors)(?!RACECHECK SUMMARY: 0 hazards)\S.*")


def sanitizer_tests(build_dir, steps, tools, timeout):
    """{step: [(run name, command)]}: the sanitize.<tool>.<step>.* tests CTest knows in build_dir."""
    outcome = run(["ctest", "--test-dir", build_dir, "--show-only=json-v1"], timeout)
    if outcome.code != exit_codes.EXIT_OK:
        raise GradingError(f"ctest cannot list the sanitizer tests: {outcome.stderr.strip()}",
                           exit_codes.EXIT_CANNOT_GRADE)
    tests = {step: [] for step in steps}
    for test in json.loads(outcome.stdout).get("tests", []):
        found = SANITIZE_TEST.match(test.get("name", ""))
        if found and found["step"] in tests and found["tool"] in tools:
            name = f"{found['tool']} {found['shape']} beta={found['beta']}"
            tests[found["step"]].append((name, test["command"]))
    return tests


def sanitizer_result(outcome, timeout):
    """(status, detail) of one sanitize.* test run (common/tests/sanitize.cmake)."""
    if outcome.timed_out:
        return "timeout", f"stopped after {timeout:g} s"
    if "SKIPPED:" in outcome.output:
        reason = outcome.output.split("SKIPPED:", 1)[1].strip().splitlines()[0]
        if "unsupported GPU" in reason:  # the reference runs here, so the submission's registration refused it
            return "fail", f"the step refused this GPU ({reason})"
        return "not run", reason
    if outcome.code == exit_codes.EXIT_OK:
        return "pass", ""
    reports = [line.strip().lstrip("=").strip() for line in outcome.output.splitlines()
               if SANITIZER_REPORT.match(line.strip())]
    summary = [line for line in reports if "SUMMARY" in line]
    first = [line for line in reports if "SUMMARY" not in line][:1]
    return "fail", "; ".join(first + summary[-1:]) or error_message(outcome.output) or f"exit code {outcome.code}"


# ---- Performance ------------------------------------------------------------------------------------

def read_csv_row(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return None
    return rows[-1] if rows else None


def measure(executable, rubric, csv_path, timeout, size=None):
    """One timed run at `size` (default: the rubric's performance.size): (CSV row or None, problem)."""
    perf = rubric["performance"]
    m, n, k = size or perf["size"]
    Path(csv_path).unlink(missing_ok=True)
    outcome = run([executable, "--m", m, "--n", n, "--k", k, "--warmup", perf["warmup"], "--iters", perf["iters"],
                   "--csv", csv_path], timeout)
    row = read_csv_row(csv_path)
    if outcome.timed_out:
        return None, f"the run at {m}×{n}×{k} was stopped after {timeout:g} s"
    if row is None:
        status, detail = case_result(outcome, timeout)
        return None, f"the run at {m}×{n}×{k} failed ({status}: {detail})"
    return row, ""


def other_gpu_processes():
    """The compute processes on the GPUs that are not this grading's (nvidia-smi's list, taken
    between two runs of the grader's own, so that none of them is ours): ["pid name (MiB)"], or
    None when nvidia-smi cannot say."""
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return None
    outcome = run([smi, "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader,nounits"], 30)
    if outcome.code != exit_codes.EXIT_OK:
        return None
    found = []
    for line in outcome.stdout.splitlines():
        words = [w.strip() for w in line.split(",")]
        if len(words) >= 3 and words[0].isdigit():
            found.append(f"{words[0]} {words[1]} ({words[2]} MiB)")
    return found


def measure_step(submission_exe, reference_exe, rubric, scratch, timeout, busy=other_gpu_processes, size=None):
    """Submission and reference solution alternately, rubric rounds each, one process per run, at
    `size`: the step's performance shape (rubric.performance_size; default performance.size).
    Every run times its kernel and cuBLAS in alternation within the process (the harness does), so
    each run's speed is also a share of cuBLAS's measured under the same clocks: the ratio scored
    is the median share of the submission over the median share of the reference, which the
    clock and power state of one process or the next cannot tilt. Before each run the GPU is
    asked for compute processes that are not ours (busy()); any found are recorded."""
    rounds = rubric["performance"]["rounds"]
    size = list(size or rubric["performance"]["size"])
    result = {"size": size, "submission_tflops": None, "reference_tflops": None,
              "cublas_tflops": None, "submission_check": None, "note": "", "ratio": None,
              "runs": [], "other_processes": []}
    sub, ref, cublas, checks, gpu = [], [], [], [], None
    shares = {"submission": [], "reference": []}
    for round_number in range(rounds):
        for who, executable, speeds in (("submission", submission_exe, sub), ("reference", reference_exe, ref)):
            if executable is None:
                continue
            others = busy()
            if others:
                result["other_processes"] = sorted(set(result["other_processes"]) | set(others))
            row, problem = measure(executable, rubric, Path(scratch) / f"{who}-{round_number}.csv", timeout, size)
            if row is None:
                result["note"] = f"{who}: {problem}"
                if who == "submission":
                    result["submission_check"] = "FAIL"
                    return result, gpu
                continue
            gpu = row.get("gpu") or gpu
            tflops = float(row["tflops"])
            speeds.append(tflops)
            run_record = {"who": who, "round": round_number + 1, "tflops": tflops}
            if row.get("cublas_tflops"):
                cublas.append(float(row["cublas_tflops"]))
                run_record["cublas_tflops"] = float(row["cublas_tflops"])
                if float(row["cublas_tflops"]) > 0:
                    shares[who].append(tflops / float(row["cublas_tflops"]))
            result["runs"].append(run_record)
            if who == "submission":
                checks.append(row.get("status", ""))
    result["submission_tflops"] = max(sub) if sub else None
    result["reference_tflops"] = max(ref) if ref else None
    result["cublas_tflops"] = max(cublas) if cublas else None
    if shares["submission"] and shares["reference"] and len(shares["submission"]) == len(sub) \
            and len(shares["reference"]) == len(ref):
        result["ratio"] = statistics.median(shares["submission"]) / statistics.median(shares["reference"])
    elif sub and ref:
        result["ratio"] = max(sub) / max(ref)
    result["submission_check"] = "PASS" if checks and all(c == "PASS" for c in checks) else "FAIL"
    if result["submission_check"] == "FAIL" and not result["note"]:
        result["note"] = "the submission's result at this size failed the check against cuBLAS"
    return result, gpu


# ---- Grading ------------------------------------------------------------------------------------------

def log(message):
    print(f"[lab] {message}", file=sys.stderr, flush=True)


def handout_of(reference, step, level, self_check, handed_out=None):
    """{relative path: (lines, TODO blocks)} of each file of the step that the students got with
    TODOs in it (kernel.cu, and a header with regions): the reference's solution at `level`, as a
    release of the steps `handed_out` (default: the step alone) makes it (markers.released_lines: a
    repeat region is a TODO where a step it repeats was handed out too), or, in a student's own copy
    (self_check), the files that release recorded in lab/released.json. None when a student copy
    has no record of them."""
    if self_check:
        record_path = Path(reference) / RELEASE_RECORD
        try:
            handouts = json.loads(record_path.read_text(encoding="utf-8"))["handout"]
            found = {path: (h["lines"], [tuple(block) for block in h["todos"]])
                     for path, h in handouts.items() if path.startswith(f"{step}/")}
        except (OSError, ValueError, KeyError, TypeError, AttributeError):
            return None
        return found or None
    handed_out = [step] if handed_out is None else handed_out
    tasks = load_tasks(reference, step)
    return {path: integrity.handout_todos((Path(reference) / path).read_text(encoding="utf-8"), path, level,
                                          handed_out, tasks)
            for path in region_files(reference, step)}


TODOS_ONLY, OWN_KERNELS = "only the TODOs changed", "no kernel but the step's own"


class Grader:
    """One grading: options as lab.py's grade command takes them. use_gpu=False: the no-GPU
    grade (integrity, build, host tests; the GPU parts are recorded as not run)."""

    def __init__(self, submission, reference, steps, rubric, instructor_cases, work, jobs, self_check_steps=(),
                 level=markers.DEFAULT_LEVEL, use_gpu=True, handed_out=None):
        self.submission, self.reference = Path(submission).resolve(), Path(reference).resolve()
        self.steps, self.rubric, self.instructor_cases = steps, rubric, instructor_cases
        # The steps the release handed out together (default: those graded): where a step's repeat
        # region was a TODO (markers.py), the handout the integrity check compares with.
        self.handed_out = list(handed_out) if handed_out else list(steps)
        self.work, self.jobs = Path(work).resolve(), jobs
        self.self_check_steps = set(self_check_steps)
        self.level, self.use_gpu = level, use_gpu
        self.timeouts = rubric["timeouts_seconds"]
        self.build_jobs = os.cpu_count() or 2
        self.gpu = None
        self.integrity = {step: [] for step in steps}  # per step: [{"check", "status", "detail"}]
        self.reference_objects = {}  # step: the reference solution's kernel object, for the symbol check

    # -- the reference ----------------------------------------------------------------------------

    def build_reference(self, log_dir):
        reference = Build(self.reference, self.work / "reference-build", log_dir, self.build_jobs)
        log(f"building the reference ({self.reference}) in {reference.directory}")
        outcome = reference.configure("reference", self.timeouts["build"])
        if outcome.code == exit_codes.EXIT_OK:
            outcome = reference.build("reference-build", [*self.steps, "gpu_tests"], self.timeouts["build"])
        if outcome.code != exit_codes.EXIT_OK:
            error = first_compiler_error(outcome.output, self.reference) or outcome.output.strip()[-2000:]
            raise GradingError(f"the reference tree does not build, so nothing can be graded:\n{error}",
                               exit_codes.EXIT_CANNOT_GRADE)
        listing = run([reference.executable("gpu_tests"), "--list-cases"], self.timeouts["case"])
        if listing.code != exit_codes.EXIT_OK:
            raise GradingError("gpu_tests --list-cases failed: " + listing.output.strip(),
                               exit_codes.EXIT_CANNOT_GRADE)
        self.note_reference_objects(reference)
        return reference, parse_cases(listing.stdout, "gpu_tests --list-cases", "standard")

    def build_reference_objects(self, log_dir, options=()):
        """Without a GPU: only the reference solutions' kernel objects (<step>_kernel), which the
        symbol check compares the submission's with."""
        reference = Build(self.reference, self.work / "reference-build", log_dir, self.build_jobs)
        targets = [f"{s}_kernel" for s in self.steps if s not in self.self_check_steps]
        if not targets:
            return reference
        log(f"building the reference solutions' kernels ({self.reference}) in {reference.directory}")
        outcome = reference.configure("reference", self.timeouts["build"], options)
        if outcome.code == exit_codes.EXIT_OK:
            outcome = reference.build("reference-build", targets, self.timeouts["build"])
        if outcome.code != exit_codes.EXIT_OK:
            error = first_compiler_error(outcome.output, self.reference) or outcome.output.strip()[-2000:]
            raise GradingError(f"the reference tree does not build, so nothing can be graded:\n{error}",
                               exit_codes.EXIT_CANNOT_GRADE)
        self.note_reference_objects(reference)
        return reference

    def note_reference_objects(self, reference):
        for step in self.steps:
            if step not in self.self_check_steps:
                self.reference_objects[step] = integrity.kernel_object(reference.directory, step)

    def check_gpu_runs(self, reference):
        """Every chosen step must run on this GPU (the reference's own executable says so)."""
        for step in self.steps:
            probe = run([reference.executable(step), "--m", "1", "--n", "1", "--k", "1", "--warmup", "0",
                         "--iters", "1", "--no-cublas"], self.timeouts["case"])
            if probe.code == exit_codes.EXIT_UNSUPPORTED_GPU:
                raise GradingError(f"this GPU cannot run {step}: {error_message(probe.stderr)}",
                                   exit_codes.EXIT_UNSUPPORTED_GPU)
            if probe.code == exit_codes.EXIT_NO_DEVICE:
                raise GradingError(f"no CUDA device: {error_message(probe.stderr)}", exit_codes.EXIT_NO_DEVICE)

    # -- the submission ---------------------------------------------------------------------------

    def check_todos_only(self, step, texts, handouts):
        """The first integrity check: '' when each file differs from its handout only in its TODOs
        (texts, handouts: by relative path); else the first problem, naming its file."""
        if handouts is None:
            self.integrity[step].append({"check": TODOS_ONLY, "status": "not run",
                                         "detail": f"{RELEASE_RECORD} has no handout of {step}"})
            return ""
        problem = ""
        for path, handout in handouts.items():
            problem = integrity.changed_outside_todos(*handout, texts[path], f"{path} as handed out")
            if problem:
                break
        self.integrity[step].append({"check": TODOS_ONLY, "status": "fail" if problem else "pass", "detail": problem})
        return problem

    def check_own_kernels(self, build, step):
        """The second integrity check, on the compiled object: '' when it calls no foreign code."""
        submitted = integrity.kernel_object(build.directory, step)
        reference = self.reference_objects.get(step)
        if submitted is None:
            self.integrity[step].append({"check": OWN_KERNELS, "status": "not run",
                                         "detail": "the kernel object was not found in the build"})
            return ""
        try:
            found = integrity.foreign_calls(submitted, reference)
        except integrity.ToolMissing as e:
            raise GradingError(str(e), exit_codes.EXIT_CANNOT_GRADE) from None
        problem = "calls " + "; ".join(found) if found else ""
        self.integrity[step].append({"check": OWN_KERNELS, "status": "fail" if found else "pass", "detail": problem})
        return problem

    def build_submission(self, log_dir, options=()):
        """The Build, and per step {"ok", "error", "reason"}: each step compiles or fails on its own;
        reason says why one failed ("no kernel" in the submission, "compiler", "refused": it changes
        the handout outside its TODOs, or calls code that is not its own; integrity.py)."""
        kernels, results = {}, {}
        for step in self.steps:
            handouts = handout_of(self.reference, step, self.level, step in self.self_check_steps, self.handed_out)
            texts = {}
            for relative in handouts or [f"{step}/{KERNEL}"]:  # the files the students got with TODOs
                path, problem = find_submission_file(self.submission, relative)
                if path is None:
                    results[step] = {"ok": False, "error": problem, "reason": "no kernel"}
                    break
                try:
                    texts[relative] = path.read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError) as e:
                    results[step] = {"ok": False, "error": f"cannot read {path}: {e}", "reason": "no kernel"}
                    break
            if step in results:
                continue
            problem = self.check_todos_only(step, texts, handouts)
            if problem:
                log(f"{step}: refused: {problem}")
                results[step] = {"ok": False, "error": problem, "reason": "refused"}
                continue
            kernels.update(texts)
        tree = self.work / "submission-tree"
        sync_tree(self.reference, tree, kernels)
        build = Build(tree, self.work / "submission-build", log_dir, self.build_jobs)
        log(f"building the submission's kernels in {build.directory}")
        outcome = build.configure("submission", self.timeouts["build"], options)
        if outcome.code != exit_codes.EXIT_OK:
            raise GradingError("the scratch copy of the reference does not configure:\n" + outcome.output[-2000:],
                               exit_codes.EXIT_CANNOT_GRADE)
        sanitizer = _cache_value(build.directory, "COMPUTE_SANITIZER")
        if self.use_gpu and sanitizer is not None and sanitizer.endswith("NOTFOUND"):
            raise GradingError("compute-sanitizer is not installed (CMake did not find it next to nvcc): "
                               "the sanitizer part of the rubric cannot be graded", exit_codes.EXIT_CANNOT_GRADE)
        targets = [s for s in self.steps if s not in results]
        for step in targets:  # a failed build must not leave an earlier submission's executable behind
            build.executable(step).unlink(missing_ok=True)
        if targets:
            build.build("submission-build", targets, self.timeouts["build"], keep_going=True)
        for step in targets:
            if build.executable(step).is_file():
                problem = self.check_own_kernels(build, step)
                if problem:
                    log(f"{step}: refused: {problem}")
                    results[step] = {"ok": False, "error": problem, "reason": "refused"}
                else:
                    results[step] = {"ok": True, "error": "", "reason": ""}
                continue
            # Again alone, so that the error shown is this step's own.
            alone = build.build(f"submission-build-{step}", [step], self.timeouts["build"])
            error = (f"the build was stopped after {self.timeouts['build']:g} s" if alone.timed_out
                     else first_compiler_error(alone.output, tree) or alone.output.strip()[-1500:])
            results[step] = {"ok": False, "error": error, "reason": "compiler"}
        return build, results

    # -- the runs ---------------------------------------------------------------------------------

    def run_cases(self, build, step_cases):
        """Every case of every step, `jobs` at a time. After a timeout, the step's cases not yet
        started are not run: a kernel that hangs once would cost the timeout on each."""
        hung = set()
        lock = threading.Lock()
        timeout = self.timeouts["case"]

        rows = self.work / "cases"  # each case's CSV row: the check's verdict, read by case_result

        def one(step, seed, case):
            with lock:
                if step in hung:
                    return "not run", "an earlier case of this step timed out"
            csv_path = rows / step / f"{seed}.csv"
            csv_path.parent.mkdir(parents=True, exist_ok=True)
            csv_path.unlink(missing_ok=True)
            outcome = run([build.executable(step), *case.arguments(), "--seed", seed, "--warmup", "0", "--iters", "1",
                           "--csv", csv_path], timeout)
            status, detail = case_result(outcome, timeout, read_csv_row(csv_path))
            if status == "timeout":
                with lock:
                    hung.add(step)
            return status, detail

        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {step: [(case, pool.submit(one, step, seed, case)) for seed, case in enumerate(cases, start=1)]
                       for step, cases in step_cases.items()}
            results = {}
            for step, pending in futures.items():
                results[step] = [dict(case.as_record(), status=f.result()[0], detail=f.result()[1])
                                 for case, f in pending]
                passed = sum(r["status"] == "pass" for r in results[step])
                log(f"{step}: {passed} of {len(pending)} cases pass")
        return results, hung

    def run_sanitizer(self, build, steps):
        timeout = self.timeouts["sanitizer"]
        tests = sanitizer_tests(build.directory, steps, self.rubric["sanitizer"]["tools"], self.timeouts["case"])

        def one(command):
            return sanitizer_result(run(command, timeout), timeout)

        with concurrent.futures.ThreadPoolExecutor(max_workers=self.jobs) as pool:
            futures = {step: [(name, pool.submit(one, command)) for name, command in tests[step]] for step in steps}
            results = {step: [{"run": name, "status": f.result()[0], "detail": f.result()[1]} for name, f in pending]
                       for step, pending in futures.items()}
        for step, runs in results.items():
            log(f"{step}: {sum(r['status'] == 'pass' for r in runs)} of {len(runs)} sanitizer runs clean")
            if any(r["status"] == "not run" for r in runs):
                raise GradingError(f"the sanitizer tests were skipped on this machine: "
                                   f"{next(r['detail'] for r in runs if r['status'] == 'not run')}",
                                   exit_codes.EXIT_CANNOT_GRADE)
        return results

    # -- all of it ----------------------------------------------------------------------------------

    def run_host_tests(self, build, tree, step):
        """Without a GPU: the tests of a step that need none. The executable starts (--help, exit
        0), and every CTest test whose program is built from a test source that includes a file of
        the step's folder (11's schedule played on the CPU: stream_k_schedule.cu)."""
        runs = []
        outcome = run([build.executable(step), "--help"], self.timeouts["case"])
        status = "pass" if outcome.code == exit_codes.EXIT_OK else "fail"
        runs.append({"test": f"{step} --help", "status": status,
                     "detail": "" if status == "pass" else (error_message(outcome.stderr) or f"exit code {outcome.code}")})
        include = re.compile(r'^\s*#\s*include\s+"[^"]*\b' + re.escape(step) + r'/[^"/]+"', re.MULTILINE)
        programs = sorted(p.stem for p in (Path(tree) / "common" / "tests").glob("*.c[up]*")
                          if include.search(p.read_text(encoding="utf-8", errors="replace")))
        if not programs:
            return runs
        built = build.build(f"submission-host-tests-{step}", programs, self.timeouts["build"])
        listing = run(["ctest", "--test-dir", build.directory, "--show-only=json-v1"], self.timeouts["case"])
        tests = json.loads(listing.stdout).get("tests", []) if listing.code == exit_codes.EXIT_OK else []
        for test in tests:
            command = test.get("command") or [""]
            if Path(command[0]).name not in programs:
                continue
            if built.code != exit_codes.EXIT_OK:
                runs.append({"test": test["name"], "status": "fail", "detail": "does not build: "
                             + (first_compiler_error(built.output, tree) or built.output.strip()[-500:])})
                continue
            outcome = run(command, self.timeouts["case"])
            status = "timeout" if outcome.timed_out else "pass" if outcome.code == exit_codes.EXIT_OK else "fail"
            failed = [line.strip() for line in outcome.output.splitlines() if "ERROR" in line or "FAILED" in line]
            runs.append({"test": test["name"], "status": status,
                         "detail": "" if status == "pass" else "; ".join(failed[:2]) or f"exit code {outcome.code}"})
        return runs

    def grade(self, log_dir):
        started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
        if self.use_gpu:
            reference, standard_cases = self.build_reference(log_dir)
            self.check_gpu_runs(reference)
        else:
            reference, standard_cases = self.build_reference_objects(log_dir), []
        cases = standard_cases + self.instructor_cases
        submission, compiled = self.build_submission(log_dir)

        results = {step: {"step": step, "self_check": step in self.self_check_steps,
                          "compile": compiled[step], "integrity": self.integrity[step],
                          "cases": [], "sanitizer": [], "sanitizer_note": "",
                          "performance": {"size": performance_size(self.rubric, step), "note": ""}}
                   for step in self.steps}
        for step in self.steps:
            if not compiled[step]["ok"]:
                log(f"{step}: " + ("refused" if compiled[step]["reason"] == "refused" else "does not compile"))
                why = "refused" if compiled[step]["reason"] == "refused" else "did not compile"
                results[step]["cases"] = [dict(c.as_record(), status="not run", detail=why) for c in cases]
        runnable = [s for s in self.steps if compiled[s]["ok"]]
        record = {"schema": 1, "mode": "gpu" if self.use_gpu else "no-gpu", "level": self.level,
                  "submission": str(self.submission), "reference": str(self.reference),
                  "reference_commit": source_commit(self.reference), "started": started, "gpu": self.gpu,
                  "rubric": self.rubric, "steps": [results[s] for s in self.steps]}

        if not self.use_gpu:
            for step in runnable:
                results[step]["host_tests"] = self.run_host_tests(submission, self.work / "submission-tree", step)
                passed = sum(r["status"] == "pass" for r in results[step]["host_tests"])
                log(f"{step}: {passed} of {len(results[step]['host_tests'])} host tests pass")
                results[step]["sanitizer_note"] = "not run: graded without a GPU"
                results[step]["performance"]["note"] = "not measured: graded without a GPU"
            return record

        case_results, hung = self.run_cases(submission, {s: cases for s in runnable})
        for step in runnable:
            results[step]["cases"] = case_results[step]

        passing = {s for s in runnable if any(c["status"] == "pass" for c in case_results[s])}
        gated = self.rubric["sanitizer"]["requires_a_passing_case"]
        sanitize = [s for s in runnable if s not in hung and (s in passing or not gated)]
        for step in runnable:
            if step in hung:
                results[step]["sanitizer_note"] = "not run: a case timed out"
            elif step not in sanitize:
                results[step]["sanitizer_note"] = "not run: no correctness case passes"
        if sanitize:
            for step, runs in self.run_sanitizer(submission, sanitize).items():
                results[step]["sanitizer"] = runs

        scratch = self.work / "performance"
        scratch.mkdir(parents=True, exist_ok=True)
        for step in runnable:
            if step in hung or step not in passing:
                results[step]["performance"]["note"] = ("not measured: " +
                                                        ("a case timed out" if step in hung else "no case passes"))
                continue
            reference_exe = None if step in self.self_check_steps else reference.executable(step)
            log(f"{step}: timing the submission" + (", the reference solution" if reference_exe else "")
                + " and cuBLAS")
            perf, gpu = measure_step(submission.executable(step), reference_exe, self.rubric, scratch,
                                     self.timeouts["performance"], size=performance_size(self.rubric, step))
            if perf.get("other_processes"):
                log(f"{step}: other processes used the GPU while it was timed: {', '.join(perf['other_processes'])}")
            results[step]["performance"] = perf
            self.gpu = self.gpu or gpu
        record["gpu"] = self.gpu
        return record
