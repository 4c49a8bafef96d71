"""The grader's runs beyond the cases (lab.py grade; grading.py): the project's own sanitize.*
tests for the rubric's tools, and the timing of the submission against the reference solution and
cuBLAS.
"""
import json
import re
import shutil
import statistics
from pathlib import Path

from . import exit_codes
from .runs import GradingError, case_result, error_message, read_csv_row, run


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
