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
import datetime
import json
import os
import re
import sys
import threading
from pathlib import Path

from . import exit_codes, integrity, markers
from .builds import Build, cache_value, find_submission_file, find_submission_kernel, first_compiler_error, sync_tree
from .cases import parse_cases
from .measure import measure_step, sanitizer_result, sanitizer_tests
from .release import source_commit
from .rubric import performance_size
from .runs import (GradingError, Outcome, case_result, check_verdict, cuda_devices, error_message, read_csv_row,
                   run)
from .steps import KERNEL, RELEASE_RECORD, region_files, step_sources
from .tasks import load_tasks

# The pieces live by concern: runs.py (commands and what a case run's outcome says), builds.py
# (CMake builds and the submission's files), measure.py (the sanitizer runs and the timing). The
# names lab.py and the tests use are imported here too.
__all__ = ["Build", "GradingError", "Grader", "Outcome", "case_result", "check_verdict", "cuda_devices",
           "find_submission_kernel", "first_compiler_error", "handout_of", "measure_step", "run", "sync_tree"]


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
            own = set(step_sources(reference, step))  # its folder's files and its library files
            found = {path: (h["lines"], [tuple(block) for block in h["todos"]])
                     for path, h in handouts.items() if path in own}
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
        (texts, handouts: by relative path), or when it differs outside them in no more lines than
        the rubric lets pass at a price (integrity.per_changed_line each; the check's status is then
        "changed", with the lines); else the first problem, naming its file (the step is refused).
        A file that differs as written is compared again after clang-format (integrity.py), so that
        reformatting costs nothing; without clang-format, as written, and the report says so."""
        if handouts is None:
            self.integrity[step].append({"check": TODOS_ONLY, "status": "not run",
                                         "detail": f"{RELEASE_RECORD} has no handout of {step}"})
            return ""
        problems, changed, notes = [], [], []
        wrote = False
        for path, (lines, todos) in handouts.items():
            name = f"{path} as handed out"
            wrote = wrote or [line.rstrip() for line in texts[path].splitlines()] != [line.rstrip() for line in lines]
            problem = integrity.changed_outside_todos(lines, todos, texts[path], name)
            if not problem:
                continue
            tool = integrity.clang_format_tool()
            found = None
            if tool is not None:
                found, lines_changed = integrity.compare_formatted(lines, todos, texts[path], self.reference / path,
                                                                   tool, name)
            if found is None:
                notes.append("clang-format " + ("is not installed" if tool is None else "failed") + ": compared as "
                             "written, formatting included")
                problems.append(problem)
                changed.append({"path": path, "line": None, "handout": None, "submission": None, "note": problem,
                                "uncounted": True})
            elif found == "":
                notes.append(f"{path} is reformatted: the same code as the handout after clang-format")
            else:
                problems.append(found)
                changed += [dict(change, path=path) for change in lines_changed]
        record = {"check": TODOS_ONLY, "wrote_code": wrote}
        policy = self.rubric.get("integrity", {})
        limit, price = policy.get("refuse_above_lines", 0), policy.get("per_changed_line", 0)
        counted = not any(c.get("uncounted") for c in changed)
        if not problems:
            record.update(status="pass", detail="; ".join(notes))
        elif counted and len(changed) <= limit:
            record.update(status="changed", changed_lines=changed,
                          detail=f"{len(changed)} line(s) changed outside the TODOs ({price:g} points each): "
                                 + integrity.describe_changes(changed) + ("; " + "; ".join(notes) if notes else ""))
        else:
            why = (f"{len(changed)} line(s) changed outside the TODOs, more than the rubric's {limit}: refused"
                   if counted else "; ".join(notes))
            record.update(status="fail", detail=f"{problems[0]} ({why})")
        self.integrity[step].append(record)
        return record["detail"] if record["status"] == "fail" else ""

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
        sanitizer = cache_value(build.directory, "COMPUTE_SANITIZER")
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

        for step in runnable:  # the tests that need no GPU, in both modes (the rubric's checks)
            results[step]["host_tests"] = self.run_host_tests(submission, self.work / "submission-tree", step)
            passed = sum(r["status"] == "pass" for r in results[step]["host_tests"])
            log(f"{step}: {passed} of {len(results[step]['host_tests'])} host tests pass")
        if not self.use_gpu:
            for step in runnable:
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
