"""Running the grader's commands, and what one case run's outcome says (lab.py grade; grading.py).

A command runs in its own session, so that a timeout kills everything it started; a case run's
exit code, stderr and CSV row become a status and its detail in words.
"""
import csv
import os
import re
import signal
import subprocess
from dataclasses import dataclass

import cuda_probe  # common/cuda_probe.py, on the path with exit_codes (labkit/__init__.py)

from . import exit_codes

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


def read_csv_row(path):
    try:
        with open(path, newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
    except OSError:
        return None
    return rows[-1] if rows else None
