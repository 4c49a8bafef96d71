"""The results of the shapes run: shapes.csv (one row per engine × corpus entry), built from the rows
that the step executables and peers.py append (results_csv's columns); the arithmetic of its summary
(geometric mean and minimum of % of cuBLAS per category and engine, the worst shapes, how often a
step's model is within 5% of its best of menu); and peers.csv, the same rows for the worklog's
table. Its Markdown (shapes.md, docs/results.md's "Shapes" tables) is shape_tables.py's. Standard library only.
"""
import statistics

from report.results_csv import (InputError, TIMING_MODES, cublas_name, least_bytes, precision_label, read_fixed_rows,
                                size_of, write_fixed_rows)
from shapes.shape_corpus import CATEGORY_NAMES

# The last column: the code a step's row measured (results_csv.CODE_COLUMNS; empty for cuBLAS and
# the peers). The five before it: how the row was timed (results_csv.TIMING_COLUMNS: the mode, the SM clock before and
# after its timed rounds, whether it fell) and its least bytes over its time as a fraction of the DRAM
# read rate the steps measured in the run (every engine's row against that one rate).
COLUMNS = ("engine kind precision category label m n k ms tflops cublas_ms cublas_tflops pct_cublas "
           "max_abs_err err_over_tol check note gpu sm_count timestamp "
           "timing sm_mhz_before sm_mhz_after clock_fell dram_fraction code").split()
INT_COLUMNS = {"m", "n", "k", "sm_count", "clock_fell"}
FLOAT_COLUMNS = {"ms", "tflops", "cublas_ms", "cublas_tflops", "pct_cublas", "max_abs_err", "err_over_tol",
                 "sm_mhz_before", "sm_mhz_after", "dram_fraction"}
KINDS = ("step", "cublas", "peer")
# What `check` says: the step's or peer's own verdict (PASS, FAIL, UNCHECKED), "reference" for
# cuBLAS, and for a row without numbers why it has none.
MEASURED = ("PASS", "FAIL", "UNCHECKED", "reference")
NOT_AVAILABLE = "not available"  # the peer cannot run here (no PyTorch, no Triton, no GPU)
NOT_RUN = "not run"              # the engine ran but this shape has no row (it did not fit, or it stopped)
CHECKS = MEASURED + (NOT_AVAILABLE, NOT_RUN)
PEER_ENGINES = ("torch.matmul", "Triton")
PRECISION_LABELS = {"fp16_out_fp16": "FP16→FP16"}  # torch.matmul where PyTorch has no FP32 output
# A step's variant that times every entry of its menu on the shape and runs the fastest (15's): the
# bound that the step's own choice, its model, is judged against. Its engine is "<step>/best_of_menu",
# as the step executable names it in its CSV rows.
BEST_OF_MENU = "best_of_menu"
WITHIN = 1.05  # the model's target: its time within 5% of best of menu's


# --- reading and writing -------------------------------------------------------------------

def write_rows(path, rows):
    write_fixed_rows(path, COLUMNS, rows)


# The columns before the timing ones: a shapes.csv from before the timing modes, read with those empty;
# and those before the code: one from before the code column, read with an empty code.
COLUMNS_BEFORE_TIMING = COLUMNS[:COLUMNS.index("timing")]
COLUMNS_BEFORE_CODE = COLUMNS[:COLUMNS.index("code")]


def load(path):
    """The rows of a shapes.csv (or peers.csv), numbers converted, None where empty."""
    try:
        with open(path, newline="", encoding="utf-8") as f:
            header = f.readline().strip().split(",")
    except OSError:
        header = None
    if header == COLUMNS_BEFORE_TIMING:
        before = set(COLUMNS_BEFORE_TIMING)
        rows = read_fixed_rows(path, COLUMNS_BEFORE_TIMING, INT_COLUMNS & before, FLOAT_COLUMNS & before,
                               lambda row, where: None)
        for row in rows:
            for column in COLUMNS[len(COLUMNS_BEFORE_TIMING):]:
                row[column] = "" if column in ("timing", "code") else None
            _check_row(row, str(path))
        return rows
    if header == COLUMNS_BEFORE_CODE:
        rows = read_fixed_rows(path, COLUMNS_BEFORE_CODE, INT_COLUMNS, FLOAT_COLUMNS, _check_row)
        return [dict(row, code="") for row in rows]
    return read_fixed_rows(path, COLUMNS, INT_COLUMNS, FLOAT_COLUMNS, _check_row)


def _check_row(row, where):
    if row["kind"] not in KINDS:
        raise InputError(f"{where}: column 'kind' must be one of {', '.join(KINDS)}, got {row['kind']!r}")
    if row["check"] not in CHECKS:
        raise InputError(f"{where}: column 'check' must be one of {', '.join(CHECKS)}, got {row['check']!r}")
    if None in (row["m"], row["n"], row["k"]):
        raise InputError(f"{where}: m, n and k are needed")
    if row["check"] in MEASURED and not (row["ms"] and row["ms"] > 0):
        raise InputError(f"{where}: a measured row needs a positive 'ms'")
    if row["timing"] and row["timing"] not in TIMING_MODES:
        raise InputError(f"{where}: column 'timing' must be cold or warm, got {row['timing']!r}")


# --- building shapes.csv -------------------------------------------------------------------

def _from_raw(raw, engine, kind, entry):
    """A shapes.csv row from one row of a step's or a peer's CSV (results_csv columns)."""
    return {"engine": engine, "kind": kind, "precision": raw["precision"], "category": entry.category,
            "label": entry.label, "m": entry.m, "n": entry.n, "k": entry.k, "ms": raw["ms"],
            "tflops": raw["tflops"], "cublas_ms": raw["cublas_ms"], "cublas_tflops": raw["cublas_tflops"],
            "pct_cublas": raw["pct_cublas"], "max_abs_err": raw["max_abs_err"],
            "err_over_tol": raw["err_over_tol"], "check": raw["status"],
            "note": raw["adds"] if kind == "peer" else "", "gpu": raw["gpu"], "sm_count": raw["sm_count"],
            "timestamp": raw["timestamp"], "timing": raw.get("timing") or "", "sm_mhz_before": raw.get("sm_mhz_before"),
            "sm_mhz_after": raw.get("sm_mhz_after"), "clock_fell": raw.get("clock_fell"),
            "code": (raw.get("code") or "") if kind == "step" else ""}


def _empty(engine, kind, entry, check, note="", precision=""):
    """A row without numbers: the engine did not run this shape (check says why)."""
    row = dict.fromkeys(COLUMNS)
    row.update({"engine": engine, "kind": kind, "precision": precision, "category": entry.category,
                "label": entry.label, "m": entry.m, "n": entry.n, "k": entry.k, "check": check, "note": note,
                "gpu": "", "code": ""})
    return row


def assemble(entries, raw_rows, steps, peers):
    """shapes.csv's rows: for each step (in order), each cuBLAS precision the steps ran, then each
    peer, one row per corpus entry. raw_rows: the rows the step executables and peers.py appended
    (results_csv columns; a later row of the same engine and shape replaces an earlier one).
    peers: {peer engine: None when it ran, else why it is not available}. cuBLAS's time for a shape
    is the median of the cuBLAS times measured beside the steps of its precision."""
    latest = {(r["step"], size_of(r)): r for r in raw_rows}
    rates = [r["dram_read_gbps"] for r in raw_rows if r.get("dram_read_gbps")]
    rate_gbps = statistics.median(rates) if rates else None
    rows = []
    for step in steps:
        for entry in entries:
            raw = latest.get((step, entry.shape))
            rows.append(_from_raw(raw, step, "step", entry) if raw else _empty(step, "step", entry, NOT_RUN))
    step_rows = [r for r in raw_rows if r["step"] in steps]
    for precision in dict.fromkeys(r["precision"] for r in step_rows):
        for entry in entries:
            same = [r for r in step_rows if r["precision"] == precision and size_of(r) == entry.shape
                    and r["cublas_ms"] is not None]
            if not same:
                rows.append(_empty(cublas_name(precision), "cublas", entry, NOT_RUN, precision=precision))
                continue
            ms = statistics.median(r["cublas_ms"] for r in same)
            tflops = 2.0 * entry.m * entry.n * entry.k / ms / 1e9
            rows.append({**_from_raw(same[-1], cublas_name(precision), "cublas", entry), "ms": ms, "tflops": tflops,
                         "cublas_ms": ms, "cublas_tflops": tflops, "pct_cublas": 100.0, "max_abs_err": None,
                         "err_over_tol": None, "check": "reference",
                         "note": f"median of {len(same)} process(es)" if len(same) > 1 else ""})
    for peer, unavailable in peers.items():
        for entry in entries:
            raw = latest.get((peer, entry.shape))
            if unavailable is not None:
                rows.append(_empty(peer, "peer", entry, NOT_AVAILABLE, unavailable))
            else:
                rows.append(_from_raw(raw, peer, "peer", entry) if raw else _empty(peer, "peer", entry, NOT_RUN))
    for row in rows:
        row["dram_fraction"] = dram_fraction(row, rate_gbps)
    return rows


def dram_fraction(row, rate_gbps):
    """The row's least bytes (results_csv.least_bytes: A and B read once, C written once) over its
    time, as a fraction of the DRAM read rate (GB/s); None for a row without a time or without a rate."""
    if not rate_gbps or not row.get("ms") or row["check"] not in MEASURED:
        return None
    return least_bytes(row["m"], row["n"], row["k"], row["precision"] or "fp16") / (row["ms"] * 1e-3) / (rate_gbps * 1e9)


# --- arithmetic ----------------------------------------------------------------------------

def geometric_mean(values):
    """The geometric mean of positive values (statistics.geometric_mean); None for none, ValueError for
    a value that is not positive (which some Python versions would take as 0)."""
    values = list(values)
    if not values:
        return None
    if any(not (v > 0) for v in values):
        raise ValueError("the geometric mean needs positive values")
    return statistics.geometric_mean(values)


def counted(row):
    """Whether a row's % of cuBLAS counts in the summary: measured, checked and passed (cuBLAS's own
    rows count too, at 100%)."""
    return row["check"] in ("PASS", "reference") and row["pct_cublas"] is not None


def engines(rows):
    """[(engine, kind, precision)]: the steps and peers in the order of first appearance, then the
    cuBLAS references."""
    seen = {}
    for r in rows:  # an engine's precision is that of its first row that has one
        if r["engine"] not in seen or (r["precision"] and not seen[r["engine"]][2]):
            seen[r["engine"]] = (r["engine"], r["kind"], r["precision"])
    found = list(seen.values())
    return [e for e in found if e[1] != "cublas"] + [e for e in found if e[1] == "cublas"]


def categories(rows):
    return list(dict.fromkeys(r["category"] for r in rows))


def category_name(category):
    return CATEGORY_NAMES.get(category, category)


def summarize(rows):
    """One dict per (category, engine), in order: shapes (rows), passed (rows that count), failed
    (checks that failed), geomean_pct, min_pct and min_row (the slowest against cuBLAS),
    geomean_tflops, unavailable (why, when the engine could not run at all)."""
    out = []
    for category in categories(rows):
        for engine, kind, _ in engines(rows):
            group = [r for r in rows if r["category"] == category and r["engine"] == engine]
            if not group:
                continue
            good = [r for r in group if counted(r)]
            slowest = min(good, key=lambda r: r["pct_cublas"]) if good else None
            unavailable = [r["note"] for r in group if r["check"] == NOT_AVAILABLE]
            out.append({
                "category": category, "engine": engine, "kind": kind, "shapes": len(group), "passed": len(good),
                "failed": sum(r["check"] == "FAIL" for r in group),
                "geomean_pct": geometric_mean(r["pct_cublas"] for r in good),
                "min_pct": slowest["pct_cublas"] if slowest else None, "min_row": slowest,
                "geomean_tflops": geometric_mean(r["tflops"] for r in good),
                "unavailable": unavailable[0] if len(unavailable) == len(group) else None,
            })
    return out


def worst(rows, engine, count=5):
    """The `count` rows of this engine slowest against cuBLAS (each shape once), slowest first."""
    by_shape = {}
    for r in rows:
        if r["engine"] == engine and counted(r):
            by_shape.setdefault((r["m"], r["n"], r["k"]), r)
    return sorted(by_shape.values(), key=lambda r: (r["pct_cublas"], r["m"], r["n"], r["k"]))[:count]


def bounded_step(engine):
    """The step whose best of menu this engine is ("15_tile_per_shape/best_of_menu" ->
    "15_tile_per_shape"), else None."""
    step, _, variant = engine.partition("/")
    return step if variant == BEST_OF_MENU else None


def model_within(rows, category, step, bound):
    """(shapes where the step's time is within WITHIN of its best of menu's, shapes where both were
    measured and passed) over one category."""
    def times(engine):
        return {(r["m"], r["n"], r["k"]): r["ms"] for r in rows
                if r["category"] == category and r["engine"] == engine and counted(r)}
    mine, best = times(step), times(bound)
    both = [shape for shape in mine if shape in best]
    return sum(mine[shape] <= WITHIN * best[shape] for shape in both), len(both)


# --- Markdown ------------------------------------------------------------------------------

def fmt_pct(pct):
    return "—" if pct is None else f"{pct:.0f}%" if pct >= 99.5 else f"{pct:.1f}%"


def fmt_tflops(tflops):
    if tflops is None:
        return "—"
    return f"{tflops:.2f}" if tflops < 10 else f"{tflops:.1f}" if tflops < 100 else f"{tflops:.0f}"


def engine_title(engine, kind, precision, rows=()):
    """How tables name an engine: a peer with its output precision (torch.matmul may write FP16)."""
    if kind != "peer":
        return engine
    precisions = {r["precision"] for r in rows if r["engine"] == engine and r["precision"]}
    if "fp16_out_fp16" in precisions:
        return f"{engine} (FP16 out)"
    return f"{engine} (FP32 out)" if precisions else engine


def peer_table_rows(rows):
    """Rows of the worklog's table (results_table.build_table) for peers.csv: [(engine, what,
    precision label, shape, ms, TFLOP/s, % of cuBLAS, check)]; numbers are None when not measured."""
    out = []
    for r in rows:
        shape = "×".join(map(str, (r["m"], r["n"], r["k"])))
        label = PRECISION_LABELS.get(r["precision"]) or precision_label(r["precision"] or "fp16")
        if r["check"] in ("PASS", "UNCHECKED"):
            out.append((r["engine"], r["note"], label, shape, r["ms"], r["tflops"], r["pct_cublas"], r["check"]))
        elif r["check"] == "FAIL":
            out.append((r["engine"], r["note"], label, shape, None, None, None, "FAIL"))
        else:
            out.append((r["engine"], f"{r['check']}: {r['note']}" if r["note"] else r["check"], label, shape,
                        None, None, None, "—"))
    return out
