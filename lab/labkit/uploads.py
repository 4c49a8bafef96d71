"""Grade uploads made from the class table (lab.py collect): one file for Gradescope's score import and
one for an LMS gradebook's (Canvas's CSV import), each a row per student.

Neither knows the grader's folder names, which are the students' names as the TA filed them. A roster
(--roster FILE, a CSV) maps them: a column `submission` (the folder's name) and any of `name`, `email`,
`sid` (the student ID Gradescope matches on), `canvas_id`, `sis_user_id`, `sis_login_id`, `section`.
Without a roster, or for a folder it does not list, the folder's name stands for the student's
login (Gradescope's SID, Canvas's SIS Login ID), and collect says which rows were not on the roster.

- Gradescope (Assignments > an assignment > Review grades > Import scores, or an assignment made
  without submissions): columns Name, Email, SID, Total Score; Gradescope matches rows on Email or SID
  and asks which column is the score.
- Canvas (Grades > Import): columns Student, ID, SIS User ID, SIS Login ID, Section, then one column
  named after the assignment ("GEMM lab 1", or "GEMM lab 1 (1234)" with its Canvas ID, to fill an
  existing one); a second row "Points Possible" gives the maximum. Canvas matches on ID, SIS User ID or
  SIS Login ID.

A grading without a GPU scores only the checks: its rows are written, and collect warns, since such a
score is not the assignment's.
"""
import csv
from pathlib import Path

from .steps import UsageError

ROSTER_COLUMNS = ("submission", "name", "email", "sid", "canvas_id", "sis_user_id", "sis_login_id", "section")
GRADESCOPE_COLUMNS = ["Name", "Email", "SID", "Total Score"]
CANVAS_FIXED = ["Student", "ID", "SIS User ID", "SIS Login ID", "Section"]


def read_roster(path):
    """{submission folder name: {roster column: value}}; UsageError for a roster without a
    `submission` column or with an unknown one."""
    if path is None:
        return {}
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        raise UsageError(f"cannot read roster {path}: {e.strerror}") from None
    if not rows:
        return {}
    unknown = [c for c in rows[0] if c not in ROSTER_COLUMNS]
    if "submission" not in rows[0] or unknown:
        raise UsageError(f"{path}: a roster has a 'submission' column (the grading folder's name) and any of "
                         f"{', '.join(ROSTER_COLUMNS[1:])}" + (f"; unknown: {', '.join(unknown)}" if unknown else ""))
    return {row["submission"]: row for row in rows}


def _number(value):
    return f"{float(value):g}" if value not in ("", None) else ""


def write_uploads(rows, roster, gradescope_path, canvas_path, assignment):
    """Writes both files from the class table's rows; returns the warnings to print."""
    warnings = []
    missing = [r["submission"] for r in rows if roster and r["submission"] not in roster]
    if missing:
        warnings.append(f"not on the roster (their folder's name is used as their login): {', '.join(missing)}")
    no_gpu = [r["submission"] for r in rows if r.get("mode") == "no-gpu"]
    if no_gpu:
        warnings.append(f"graded without a GPU (their score is the checks' alone, the rest pending): {', '.join(no_gpu)}")
    maximum = max((float(r["max_total"]) + float(r.get("pending") or 0) for r in rows), default=0.0)
    Path(gradescope_path).parent.mkdir(parents=True, exist_ok=True)
    with open(gradescope_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(GRADESCOPE_COLUMNS)
        for row in rows:
            who = roster.get(row["submission"], {})
            writer.writerow([who.get("name", ""), who.get("email", ""), who.get("sid") or row["submission"],
                             _number(row["total"])])
    Path(canvas_path).parent.mkdir(parents=True, exist_ok=True)
    with open(canvas_path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(CANVAS_FIXED + [assignment])
        writer.writerow(["Points Possible", "", "", "", "", f"{maximum:g}"])
        for row in rows:
            who = roster.get(row["submission"], {})
            writer.writerow([who.get("name") or row["submission"], who.get("canvas_id", ""),
                             who.get("sis_user_id", ""), who.get("sis_login_id") or row["submission"],
                             who.get("section", ""), _number(row["total"])])
    return warnings
