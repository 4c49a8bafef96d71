"""The results CSV that every step executable appends to (--csv): its columns, reading and
checking it, and choosing rows from it; and read_rows(), the reading with one-line errors that
profile.csv (profile_csv.py) shares, with read_fixed_rows() over it and write_fixed_rows() for
the files of one fixed header (shapes.csv, cublas_picks.csv). Needs only the Python standard library.
"""
import csv
import math
import statistics
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

# The CSV header every step executable writes, in this order.
COLUMNS = (
    "timestamp gpu sm_count compute_capability cuda_runtime cuda_driver step adds precision "
    "m n k alpha beta ms tflops cublas_ms cublas_tflops pct_cublas max_abs_err err_over_tol "
    "global_bytes status"
).split()
# The check's verdict for programs (the lab grader reads them), after those above: written by
# every step since they were added, absent from older CSVs, which are read all the same.
CHECK_COLUMNS = "bad_count first_bad_row first_bad_col expected obtained".split()
# How the row was timed (common/harness_timing.hpp), last: the mode ("cold": L2 flushed before every
# timed run; "warm": operands left in L2), the timer (TIMERS), the SM clock before and after the timed rounds, whether it
# fell, the timed runs the host took longer to enqueue than the GPU work before them, the least bytes
# the GEMM moves, and with --dram-fraction the DRAM read rate measured in the process (GB/s) and the
# least bytes over the step's and cuBLAS's times as fractions of it. Absent from older CSVs, which
# are read all the same.
TIMING_COLUMNS = ("timing timer sm_mhz_before sm_mhz_after clock_fell uncovered_runs least_bytes dram_read_gbps "
                  "dram_fraction cublas_dram_fraction").split()
# The spread of each median, last (common/percentile.hpp): the 10th and 90th percentiles of the timed
# rounds behind the step's median and cuBLAS's, in ms. Absent from the CSVs of earlier runs (the
# committed ones among them), which are read all the same; empty in a peer's row (peers.py keeps its
# medians only) and cuBLAS's with --no-cublas.
SPREAD_COLUMNS = "ms_p10 ms_p90 cublas_ms_p10 cublas_ms_p90".split()
# The code the row measured, last: the step's code (tools/fingerprints.py: step_codes), which
# `tools/fingerprints.py --stamp` fills in after a run on the build that ran it (a step executable
# leaves it empty); "unknown" in the rows measured before the column existed (docs/figures.md).
CODE_COLUMNS = ["code"]
TIMERS = ("kernels", "events")  # the GPU's timestamps of the kernels (CUPTI), or CUDA events around each run
TIMING_MODES = ("cold", "warm")
INT_COLUMNS = {"sm_count", "m", "n", "k", "global_bytes", "bad_count", "first_bad_row", "first_bad_col",
               "clock_fell", "uncovered_runs", "least_bytes"}
FLOAT_COLUMNS = {"alpha", "beta", "ms", "tflops", "cublas_ms", "cublas_tflops", "pct_cublas",
                 "max_abs_err", "err_over_tol", "expected", "obtained", "sm_mhz_before", "sm_mhz_after",
                 "dram_read_gbps", "dram_fraction", "cublas_dram_fraction", *SPREAD_COLUMNS}
# Left empty by a step run with --no-check (the error columns and the verdict) or --no-cublas (all
# of these); the first wrong element's columns are empty when there is none; the DRAM columns without
# --dram-fraction; the clocks and uncovered runs in a peer's row where its Python cannot read them.
MAY_BE_EMPTY = {"cublas_ms", "cublas_tflops", "pct_cublas", "max_abs_err", "err_over_tol", *CHECK_COLUMNS,
                "sm_mhz_before", "sm_mhz_after", "clock_fell", "uncovered_runs", "dram_read_gbps", "dram_fraction",
                "cublas_dram_fraction", *SPREAD_COLUMNS}
POSITIVE = {"m", "n", "k", "ms", "cublas_ms"}  # we divide by these and take their logarithm
STATUSES = {"PASS", "FAIL", "UNCHECKED"}

PRECISION_LABELS = {"fp32": "FP32", "fp16": "FP16→FP32"}
CUBLAS_NAMES = {"fp32": "cuBLAS SGEMM", "fp16": "cuBLAS GemmEx FP16→FP32"}


class InputError(Exception):
    """A problem with an input file, said in one line (make_plots exits with code 2 on it)."""


def read_rows(path, check_header, parse_row, no_rows="no data rows"):
    """The rows of the CSV file at path: check_header(path, field names) first, then each row as
    parse_row(raw dict, "<path>, line N"); both raise InputError for what they reject. A missing
    or unreadable file, or one without rows (the no_rows message), is an InputError too."""
    path = Path(path)
    try:
        with open(path, newline="", encoding="utf-8") as f:
            reader = csv.DictReader(f)
            check_header(path, reader.fieldnames)
            rows = [parse_row(raw, f"{path}, line {reader.line_num}") for raw in reader]
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"{path}: cannot read: {e}") from None
    if not rows:
        raise InputError(f"{path}: {no_rows}")
    return rows


def read_fixed_rows(path, columns, int_columns, float_columns, check_row):
    """The rows of a CSV whose header is exactly `columns`, in order (shapes.csv, cublas_picks.csv):
    the int_columns and float_columns converted (None where empty), then check_row(row, where) for
    what that file needs more (it raises InputError, or returns nothing). InputError otherwise, as
    read_rows."""
    def check_header(path, header):
        if not header:
            raise InputError(f"{path}: empty CSV (no header line)")
        if tuple(header) != tuple(columns):
            raise InputError(f"{path}: bad header: expected {','.join(columns)}")

    def parse_row(raw, where):
        if None in raw or None in raw.values():  # DictReader's marks for too many / too few fields
            raise InputError(f"{where}: expected {len(columns)} fields")
        row = dict(raw)
        for column in int_columns | float_columns:
            row[column] = parse_number(raw, column, where, column in int_columns)
        check_row(row, where)
        return row

    return read_rows(path, check_header, parse_row)


def write_fixed_rows(path, columns, rows):
    """Write such a CSV (read_fixed_rows reads it back): the columns of each row dict in order,
    a missing or None value as an empty cell, floats to six significant digits."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c)) for c in columns})


def _cell(value):
    if value is None:
        return ""
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def load_rows(path):
    """Read and validate a results CSV; return a list of dicts with numbers converted."""
    return read_rows(path, _check_header, _parse_row, no_rows="no data rows (the CSV has only a header)")


def _check_header(path, header):
    if not header:
        raise InputError(f"{path}: empty CSV (no header line)")
    problems = []
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS + CHECK_COLUMNS + TIMING_COLUMNS + SPREAD_COLUMNS + CODE_COLUMNS]
    if missing:
        problems.append("missing columns: " + ", ".join(missing))
    if unknown:
        problems.append("unknown columns: " + ", ".join(unknown))
    if problems:
        raise InputError(f"{path}: bad header: " + "; ".join(problems))


def parse_number(raw, col, where, integer):
    """The number in column `col` of a CSV row, int or float, None when the cell is empty (callers
    decide whether empty is allowed); InputError naming the place when it is not a number."""
    text = raw[col].strip()
    if text == "":
        return None
    try:
        return int(text) if integer else float(text)
    except ValueError:
        raise InputError(f"{where}: column '{col}' is not a number: {text!r}") from None


def _parse_row(raw, where):
    if None in raw or None in raw.values():  # DictReader's marks for too many / too few fields
        raise InputError(f"{where}: expected {sum(k is not None for k in raw)} fields, as many as the header names")
    row = dict(raw)
    for col in COLUMNS + [c for c in CHECK_COLUMNS + TIMING_COLUMNS + SPREAD_COLUMNS if c in raw]:
        if col not in INT_COLUMNS and col not in FLOAT_COLUMNS:
            continue
        text = raw[col].strip()
        if text == "" and col in MAY_BE_EMPTY:
            row[col] = None
            continue
        row[col] = parse_number(raw, col, where, col in INT_COLUMNS)
        if row[col] is None:
            raise InputError(f"{where}: column '{col}' is not a number: {text!r}")
        if col in POSITIVE and not (math.isfinite(row[col]) and row[col] > 0):
            raise InputError(f"{where}: column '{col}' must be positive, got {text!r}")
    if row.get("timing") is not None and row["timing"] not in TIMING_MODES:
        raise InputError(f"{where}: column 'timing' must be cold or warm, got {row['timing']!r}")
    if row.get("timer") is not None and row["timer"] not in TIMERS:
        raise InputError(f"{where}: column 'timer' must be kernels or events, got {row['timer']!r}")
    if row["status"] not in STATUSES:
        raise InputError(f"{where}: column 'status' must be PASS, FAIL or UNCHECKED, "
                         f"got {row['status']!r}")
    try:
        # The steps write "...Z"; fromisoformat reads that suffix only from Python 3.11 on.
        stamp = row["timestamp"]
        time = datetime.fromisoformat(stamp[:-1] + "+00:00" if stamp.endswith("Z") else stamp)
    except ValueError:
        raise InputError(f"{where}: column 'timestamp' is not an ISO-8601 time: "
                         f"{row['timestamp']!r}") from None
    row["time"] = time if time.tzinfo else time.replace(tzinfo=timezone.utc)
    return row


# --- selecting rows ---------------------------------------------------------------------

def newest(rows):
    """The most recent row: it names the GPU and CUDA version shown on the outputs."""
    return max(rows, key=lambda r: r["time"])


def size_of(row):
    return row["m"], row["n"], row["k"]


def gemm_flops(size):
    m, n, k = size
    return 2.0 * m * n * k


def latest_per_step(rows):
    """One row per (step, size): a later run replaces an earlier one. Sorted by size, step."""
    latest = {(r["step"], size_of(r)): r for r in rows}
    return sorted(latest.values(), key=lambda r: (size_of(r), r["step"]))


def median_per_step(rows):
    """One row per (step, size): of a step's rows at a size (one per process), the one whose % of
    cuBLAS is the median (the lower of the two middle ones for an even count), or a failed one where
    any process failed its check, with `processes`, how many there were. Sorted by size, step."""
    groups = {}
    for r in rows:
        groups.setdefault((r["step"], size_of(r)), []).append(r)
    chosen = []
    for same in groups.values():
        failed = [r for r in same if r["status"] == "FAIL" or r["pct_cublas"] is None]
        pick = failed[0] if failed else sorted(same, key=lambda r: r["pct_cublas"])[(len(same) - 1) // 2]
        chosen.append({**pick, "processes": len(same)})
    return sorted(chosen, key=lambda r: (size_of(r), r["step"]))


def headline_size(rows):
    """The size the worklog was run at: the most common one (the largest on a tie)."""
    counts = Counter(size_of(r) for r in latest_per_step(rows))
    return max(counts, key=lambda s: (counts[s], gemm_flops(s)))


def plottable(rows, size):
    """Rows drawn on the charts: the latest of each step at this size, failed ones left out."""
    return [r for r in latest_per_step(rows) if size_of(r) == size and r["status"] != "FAIL"]


def failed_steps(rows, size):
    return [r["step"] for r in latest_per_step(rows) if size_of(r) == size and r["status"] == "FAIL"]


def precisions(rows):
    """Precisions in step order (fp32 steps come first in the worklog)."""
    return list(dict.fromkeys(r["precision"] for r in latest_per_step(rows)))


def cublas_ms(rows, precision, size):
    """Median cuBLAS time over all rows of this precision and size (each run times cuBLAS too);
    None when no row has one."""
    times = [r["cublas_ms"] for r in rows if r["precision"] == precision and size_of(r) == size
             and r["cublas_ms"] is not None]
    return statistics.median(times) if times else None


def timing_of(rows):
    """How rows were timed, for a caption: "cold" or "warm" when all say the same, "cold and warm"
    when they differ, None when none says (CSVs from before the modes)."""
    modes = list(dict.fromkeys(r.get("timing") for r in rows if r.get("timing")))
    return " and ".join(modes) if modes else None


TIMING_WORDS = {"cold": "cold: L2 flushed before every timed run", "warm": "warm: operands left in L2 by the run before"}


def timing_words(rows):
    """The caption's words for timing_of(rows), or "" for rows that do not say."""
    mode = timing_of(rows)
    return TIMING_WORDS.get(mode, f"timing {mode}") if mode else ""


def least_bytes(m, n, k, precision, beta=0.0):
    """common/gemm_math.hpp's least_global_bytes for a row's precision: A and B read once in the input
    type (FP32 for the FP32 steps, FP16 otherwise), C written once (read once more when beta != 0)
    in FP32, or FP16 for a peer with FP16 output."""
    inputs = 4 if precision == "fp32" else 2
    output = 2 if precision == "fp16_out_fp16" else 4
    return (m * k + k * n) * inputs + m * n * output * (2 if beta else 1)


def precision_label(precision):
    return PRECISION_LABELS.get(precision, precision.upper())


def cublas_name(precision):
    return CUBLAS_NAMES.get(precision, f"cuBLAS {precision_label(precision)}")


def square_rows(rows):
    """The N×N×N rows of a sweep CSV (the sweep only runs square sizes)."""
    square = [r for r in rows if r["m"] == r["n"] == r["k"]]
    if not square:
        raise InputError("sweep CSV has no square (N×N×N) rows")
    return square


EXPERIMENT_COLUMNS = "experiment date gpu step variant m n k run metric value source".split()


def load_experiments(path):
    """experiments.csv (one-off runs recorded by hand, one number a row): the value as a number, m, n,
    k as integers or None."""
    def check_header(path, header):
        missing = [c for c in EXPERIMENT_COLUMNS if c not in (header or [])]
        if missing:
            raise InputError(f"{path}: missing columns: {', '.join(missing)}")

    def parse(raw, where):
        row = dict(raw)
        try:
            row["value"] = float(raw["value"])
            for column in "mnk":
                row[column] = int(raw[column]) if raw[column].strip() else None
        except ValueError:
            raise InputError(f"{where}: value, m, n and k must be numbers") from None
        return row

    return read_rows(path, check_header, parse)


def load_text_rows(path):
    """Any results CSV, its cells as text."""
    def check_header(path, header):
        if not header:
            raise InputError(f"{path}: empty CSV (no header line)")

    return read_rows(path, check_header, lambda raw, where: dict(raw))
