"""Which code a figure measured: a row of a measurement CSV names its step (its `step` or `engine`
column, NN_name or NN_name/variant) and, in its `code` column, the code of that step it ran
(tools/fingerprints.py: step_codes, --stamp). Today's code of each step is the committed
tools/fingerprints.csv, which the fingerprints test keeps equal to the build. A row of a step whose
code differs, or is unknown (rows measured before the column existed say "unknown"; a step named
NN_name@commit was measured on that commit on purpose), measured earlier code: the filler marks
every figure quoted from it (docs/figures.md). Rows of cuBLAS, torch or Triton, and of files that
name no step, are bound to no code of ours. Needs only the Python standard library.
"""
import os
import re
import sys
from pathlib import Path

STEP = re.compile(r"^(\d\d_[A-Za-z0-9_]+)(@[0-9a-f]+)?(/\S*)?$")
# The page that explains the mark, from the checkout's root.
PAGE = "docs/figures.md"
ANCHOR = "measured-on-earlier-code"


def current_codes(root):
    """{step: today's code} from ROOT/tools/fingerprints.csv; None when the checkout has none (a copy
    without tools/): then no figure can be judged, and none is marked."""
    tools = Path(root) / "tools"
    if not (tools / "fingerprints.csv").is_file():
        return None
    sys.path.insert(0, str(tools))
    try:
        import fingerprints  # noqa: E402  (tools/fingerprints.py: standard library only at import)
    finally:
        sys.path.remove(str(tools))
    return fingerprints.step_codes(fingerprints.read(tools / "fingerprints.csv")[1])


def row_step(row):
    """(step, pinned commit or None) of the step a row measured; None for a row of no step of ours."""
    for column in ("step", "engine"):
        match = STEP.match(str(row.get(column) or ""))
        if match:
            return match.group(1), (match.group(2) or "")[1:] or None
    return None


def row_date(row):
    """The day a row was measured, as its timestamp or date column says ("undated" without one)."""
    stamp = str(row.get("timestamp") or row.get("date") or "")
    return stamp[:10] if re.match(r"\d{4}-\d\d-\d\d", stamp) else "undated"


def earlier(row, codes):
    """The date of a row that measured code other than today's (None: today's, or no code of ours)."""
    found = row_step(row)
    if found is None or codes is None:
        return None
    step, pinned = found
    if pinned is None and codes.get(step) is not None and row.get("code") == codes[step]:
        return None
    return row_date(row)


def earliest(rows, codes):
    """The first date among rows that measured earlier code (None: none did)."""
    dates = sorted(d for d in (earlier(r, codes) for r in rows) if d is not None)
    return dates[0] if dates else None


def mark(date, readme, root):
    """The mark after a figure measured on earlier code: a superscript "‡ DATE" linking the page that
    explains it, relative to the README that shows it."""
    link = Path(os.path.relpath(Path(root).resolve() / PAGE, Path(readme).resolve().parent)).as_posix()
    return f"<sup>[‡ {date}]({link}#{ANCHOR})</sup>"


MARK = re.compile(r"<sup>\[‡ (\d{4}-\d\d-\d\d|undated)\]\([^)]*#" + ANCHOR + r"\)</sup>")
