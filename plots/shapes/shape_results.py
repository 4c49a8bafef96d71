"""The results of the shapes run: shapes.csv (one row per engine × corpus entry), built from the rows
that the step executables and peers.py append (results_csv's columns); the arithmetic of its summary
(geometric mean and minimum of % of cuBLAS per category and engine, the worst shapes, how often a
step's model is within 5% of its best of menu); shapes.md, with the shapes of cublas_picks.csv
beside cuBLAS's own kernel when that file is given (cublas_names.py); the per-category table of
README.md's "Shapes" section (a generated block); and peers.csv, the same rows for the worklog's
table. Standard library only.
"""
import statistics
from collections import Counter
from pathlib import Path

from shapes.cublas_names import pick_text
from report.results_csv import (InputError, TIMING_MODES, TIMING_WORDS, cublas_name, least_bytes, precision_label,
                         read_fixed_rows, size_of, timing_of, write_fixed_rows)
from shapes.shape_corpus import CATEGORY_NAMES, shape_text

# The last five: how the row was timed (results_csv.TIMING_COLUMNS: the mode, the SM clock before and
# after its timed rounds, whether it fell) and its least bytes over its time as a fraction of the DRAM
# read rate the steps measured in the run (every engine's row against that one rate).
COLUMNS = ("engine kind precision category label m n k ms tflops cublas_ms cublas_tflops pct_cublas "
           "max_abs_err err_over_tol check note gpu sm_count timestamp "
           "timing sm_mhz_before sm_mhz_after clock_fell dram_fraction").split()
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
# A step's variant that times every entry of its menu on the shape and runs the fastest (14's): the
# bound that the step's own choice, its model, is judged against. Its engine is "<step>/best_of_menu",
# as the step executable names it in its CSV rows.
BEST_OF_MENU = "best_of_menu"
WITHIN = 1.05  # the model's target: its time within 5% of best of menu's


# --- reading and writing -------------------------------------------------------------------

def write_rows(path, rows):
    write_fixed_rows(path, COLUMNS, rows)


# The columns before the timing ones: a shapes.csv from before the timing modes, read with those empty.
COLUMNS_BEFORE_TIMING = COLUMNS[:COLUMNS.index("timing")]


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
                row[column] = "" if column == "timing" else None
            _check_row(row, str(path))
        return rows
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
            "sm_mhz_after": raw.get("sm_mhz_after"), "clock_fell": raw.get("clock_fell")}


def _empty(engine, kind, entry, check, note="", precision=""):
    """A row without numbers: the engine did not run this shape (check says why)."""
    row = dict.fromkeys(COLUMNS)
    row.update({"engine": engine, "kind": kind, "precision": precision, "category": entry.category,
                "label": entry.label, "m": entry.m, "n": entry.n, "k": entry.k, "check": check, "note": note,
                "gpu": ""})
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
    """The step whose best of menu this engine is ("14_tile_per_shape/best_of_menu" ->
    "14_tile_per_shape"), else None."""
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


def _cells(*cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def _summary_cell(s):
    if s is None:
        return ""
    if s["unavailable"]:
        return "not available"
    if s["kind"] == "cublas":
        return "—" if s["geomean_tflops"] is None else f"{fmt_tflops(s['geomean_tflops'])} TFLOP/s"
    if s["geomean_pct"] is None:
        return f"FAIL {s['failed']}" if s["failed"] else "—"
    text = f"{fmt_pct(s['geomean_pct'])} (min {fmt_pct(s['min_pct'])})"
    return text + (f", FAIL {s['failed']}" if s["failed"] else "")


def run_caption(rows):
    """The GPU, the date and the timing of the rows, for a table's caption."""
    measured = [r for r in rows if r["gpu"]]
    if not measured:
        return "GPU: none (nothing was measured)"
    last = max(measured, key=lambda r: r["timestamp"])
    words = TIMING_WORDS.get(timing_of(measured), "")
    return f"GPU: {last['gpu']} ({last['sm_count']} SMs) · {last['timestamp'][:10]}" + (f" · timing {words}" if words else "")


def category_table(rows, caption=True):
    """The README's per-category table (the generated block `shapes`): a row per category, a column
    per engine; each cell the geometric mean of the engine's % of cuBLAS over the category's shapes
    and its minimum; cuBLAS's columns give its geometric-mean TFLOP/s. With caption, a line first
    that names the GPU, the date and the timing."""
    summary = summarize(rows)
    found = {(s["category"], s["engine"]): s for s in summary}
    order = engines(rows)
    lines = ([f"{run_caption(rows)}; geometric mean of % of cuBLAS over each category's shapes (minimum in "
              "brackets), cuBLAS's geometric-mean TFLOP/s:", ""] if caption else [])
    lines += [_cells("category (shapes)", *(engine_title(*e, rows) for e in order)),
              "|---|" + "---:|" * len(order)]
    for category in categories(rows):
        count = len({(r["m"], r["n"], r["k"], r["label"]) for r in rows if r["category"] == category})
        lines.append(_cells(f"{category_name(category)} ({count})",
                            *(_summary_cell(found.get((category, e[0]))) for e in order)))
    return "\n".join(lines) + "\n"


# The memory-bound rows whose DRAM fraction the tables put beside % of cuBLAS: the decode layers (an
# LLM layer at M ≤ 128: weights streamed once per token) and the convolutions (few columns, tall M).
MEMORY_BOUND = (("decode layers (LLM, M ≤ 128)", lambda r: r["category"] == "llm" and r["m"] <= 128),
                ("convolutions as GEMMs", lambda r: r["category"] == "conv"))


def fmt_fraction(fraction):
    return "—" if fraction is None else f"{100 * fraction:.0f}%"


def _roofline_cell(group, kind):
    good = [r for r in group if counted(r)]
    fractions = [r["dram_fraction"] for r in good if r["dram_fraction"] is not None]
    dram = (f"DRAM {fmt_fraction(statistics.median(fractions))} ({fmt_fraction(min(fractions))}–"
            f"{fmt_fraction(max(fractions))})") if fractions else "DRAM —"
    if kind == "cublas":
        return dram
    pct = geometric_mean(r["pct_cublas"] for r in good)
    return f"{fmt_pct(pct)} · {dram}"


def roofline_table(rows, caption=True):
    """The memory-bound groups (MEMORY_BOUND), a column per engine: the geometric mean of % of cuBLAS,
    then the median (and range) over the group's shapes of the DRAM fraction, its least bytes over its
    time as a share of the DRAM read rate measured in the run."""
    order = engines(rows)
    lines = ([f"{run_caption(rows)}; each cell: geometric mean of % of cuBLAS · median (range) of the least "
              "bytes over the time, as a share of the DRAM read rate measured in the run:", ""] if caption else [])
    lines += [_cells("rows (shapes)", *(engine_title(*e, rows) for e in order)), "|---|" + "---:|" * len(order)]
    for name, select in MEMORY_BOUND:
        mine = [r for r in rows if select(r)]
        if not mine:
            continue
        count = len({(r["m"], r["n"], r["k"]) for r in mine})
        lines.append(_cells(f"{name} ({count})", *(_roofline_cell([r for r in mine if r["engine"] == e[0]], e[1])
                                                    for e in order)))
    return "\n".join(lines) + "\n"


def roofline_shapes(rows):
    """Every memory-bound shape (MEMORY_BOUND), a column per engine: % of cuBLAS / DRAM fraction."""
    order = engines(rows)
    lines = [_cells("shape", "layer", "least MB", *(engine_title(*e, rows) for e in order)),
             "|---|---|---:|" + "---:|" * len(order)]
    for name, select in MEMORY_BOUND:
        shapes = list(dict.fromkeys((r["m"], r["n"], r["k"], r["label"]) for r in rows if select(r)))
        for m, n, k, label in shapes:
            mine = {r["engine"]: r for r in rows if (r["m"], r["n"], r["k"], r["label"]) == (m, n, k, label)}

            def cell(engine, kind):
                r = mine.get(engine)
                if r is None or not counted(r):
                    return "FAIL" if r is not None and r["check"] == "FAIL" else "—"
                if kind == "cublas":
                    return fmt_fraction(r["dram_fraction"])
                return f"{fmt_pct(r['pct_cublas'])} / {fmt_fraction(r['dram_fraction'])}"
            lines.append(_cells(shape_text((m, n, k)), label or name, f"{least_bytes(m, n, k, 'fp16') / 1e6:.1f}",
                                *(cell(e[0], e[1]) for e in order)))
    return "\n".join(lines) + "\n"


def _worst_cell(s):
    if s is None:
        return ""
    if s["geomean_pct"] is None:
        return f"FAIL {s['failed']}" if s["failed"] else "—"
    row = s["min_row"]
    text = f"{fmt_pct(s['geomean_pct'])} · worst {fmt_pct(s['min_pct'])} {shape_text((row['m'], row['n'], row['k']))}"
    return text + (f", FAIL {s['failed']}" if s["failed"] else "")


def step_table(rows):
    """Per category, each step's geometric mean of % of cuBLAS and its worst shape (a step's best of
    menu is a column of its own, after the step); and, for a step whose best of menu was measured,
    on how many of the category's shapes the step's own choice is within 5% of it."""
    summary = {(s["category"], s["engine"]): s for s in summarize(rows)}
    steps = [e for e in engines(rows) if e[1] == "step"]
    names = {e[0] for e in steps}
    bounds = [(bounded_step(e[0]), e[0]) for e in steps if bounded_step(e[0]) in names]
    lines = [_cells("category (shapes)", *(e[0] for e in steps),
                    *(f"{step} within 5% of {bound}" for step, bound in bounds)),
             "|---|" + "---:|" * (len(steps) + len(bounds))]
    for category in categories(rows):
        count = len({(r["m"], r["n"], r["k"], r["label"]) for r in rows if r["category"] == category})
        within = [model_within(rows, category, step, bound) for step, bound in bounds]
        lines.append(_cells(f"{category_name(category)} ({count})",
                            *(_worst_cell(summary.get((category, e[0]))) for e in steps),
                            *(f"{hits}/{both}" if both else "—" for hits, both in within)))
    return "\n".join(lines) + "\n"


def picks_table(rows, picks):
    """The shapes of cublas_picks.csv (cublas_names.load_picks), in its order: where the corpus has
    them, the steps of the pick's precision (% of cuBLAS) and cuBLAS's TFLOP/s; and cuBLAS's own
    kernel, its configuration in the worklog's orientation (rows × columns), its grid and what else
    it ran."""
    lines = []
    by_precision = {}
    for pick in picks:
        by_precision.setdefault(pick["precision"] or "fp16", []).append(pick)
    for precision, group in by_precision.items():
        steps = [e for e in engines(rows) if e[1] == "step" and e[2] == precision]
        reference = cublas_name(precision)
        lines += [_cells("shape", "in the corpus as", *(e[0] for e in steps), f"{reference} TFLOP/s",
                         "cuBLAS's kernel", "what its name and launch say"),
                  "|---|---|" + "---:|" * (len(steps) + 1) + "---|---|"]
        for pick in group:
            shape = (pick["m"], pick["n"], pick["k"])
            mine = [r for r in rows if (r["m"], r["n"], r["k"]) == shape]
            where = "; ".join(dict.fromkeys(category_name(r["category"]) + (f": {r['label']}" if r["label"] else "")
                                            for r in mine)) or "—"

            def cell(engine, value):
                row = next((r for r in mine if r["engine"] == engine), None)
                if row is None:
                    return "—"
                if row["check"] == "FAIL":
                    return "FAIL"
                return value(row) if counted(row) else "—"
            lines.append(_cells(shape_text(shape), where,
                                *(cell(e[0], lambda r: fmt_pct(r["pct_cublas"])) for e in steps),
                                cell(reference, lambda r: fmt_tflops(r["tflops"])),
                                f"`{pick['kernel']}`", pick_text(pick)))
        lines.append("")
    return "\n".join(lines)


def shapes_markdown(rows, corpus_name="plots/shape_corpus.csv", picks=None):
    """shapes.md: the per-category table, each step's worst shape per category (and its model
    against its best of menu), the summary per category and engine, the worst five shapes of each
    engine, with picks (cublas_picks.csv's rows) the table of those shapes beside cuBLAS's own
    kernel, and how it was measured."""
    head = run_caption(rows)
    shapes = {(r["m"], r["n"], r["k"]) for r in rows}
    lines = ["# Shapes: the worklog's steps, PyTorch and Triton against cuBLAS", "",
             f"{head} · {len(shapes)} shapes from {corpus_name}", "",
             "## % of cuBLAS per category", "",
             "Geometric mean over the category's shapes (minimum in brackets); cuBLAS: geometric-mean TFLOP/s.", "",
             category_table(rows, caption=False),
             "## The DRAM roofline of the memory-bound rows", "",
             "A memory-bound GEMM can go no faster than its least bytes (A and B read once, C written once) at "
             "the DRAM's rate, measured in the run by a read of 4 GiB. Each cell: the geometric mean of % of "
             "cuBLAS, then the median (and range) of that floor's share of the time, the DRAM fraction.", "",
             roofline_table(rows, caption=False),
             "Per shape, % of cuBLAS / DRAM fraction (cuBLAS: its DRAM fraction):", "",
             roofline_shapes(rows),
             "## Each step's worst shape per category", "",
             "Geometric mean of % of cuBLAS over the category's shapes, then the slowest shape against cuBLAS"
             + (f"; where a step's best of menu was measured (every entry of its menu timed on the shape, the "
                f"fastest run), on how many shapes the step's own choice takes at most {WITHIN:g}× its time."
                if any(bounded_step(e[0]) for e in engines(rows)) else "."), "",
             step_table(rows),
             "## Per category and engine", "",
             _cells("category", "engine", "shapes", "checked and passed", "failed", "geomean % of cuBLAS",
                    "min % of cuBLAS", "slowest shape", "geomean TFLOP/s"),
             "|---|---|---:|---:|---:|---:|---:|---|---:|"]
    for s in summarize(rows):
        slowest = s["min_row"] if s["kind"] != "cublas" else None
        lines.append(_cells(category_name(s["category"]), s["engine"], s["shapes"], s["passed"], s["failed"],
                            NOT_AVAILABLE if s["unavailable"] else fmt_pct(s["geomean_pct"]),
                            fmt_pct(s["min_pct"]) if slowest else "—",
                            f"{shape_text((slowest['m'], slowest['n'], slowest['k']))}"
                            + (f" ({slowest['label']})" if slowest["label"] else "") if slowest else "—",
                            fmt_tflops(s["geomean_tflops"])))
    if picks:
        lines += ["", "## cuBLAS's own kernel", "",
                  "The kernel that cuBLAS ran for each shape of cublas_picks.csv (plots/shapes/cublas_pick.py: its name "
                  "and launch read through Nsight Compute), its configuration turned into the worklog's rows × "
                  "columns (cuBLAS is column-major: its first tile dimension runs along our N), beside the "
                  "steps' % of cuBLAS on the same shape.", "", picks_table(rows, picks).rstrip("\n")]
    lines += ["", "## The five shapes slowest against cuBLAS, per engine", ""]
    for engine, kind, precision in engines(rows):
        if kind == "cublas":
            continue
        bottom = worst(rows, engine)
        lines.append(f"**{engine_title(engine, kind, precision, rows)}**: " + (", ".join(
            f"{shape_text((r['m'], r['n'], r['k']))} {fmt_pct(r['pct_cublas'])} ({category_name(r['category'])}"
            + (f", {r['label']}" if r["label"] else "") + f"; {fmt_tflops(r['tflops'])} TFLOP/s)"
            for r in bottom) or "no measured shape") + "")
        lines.append("")
    unavailable = {r["engine"]: r["note"] for r in rows if r["check"] == NOT_AVAILABLE}
    failed = [r for r in rows if r["check"] == "FAIL"]
    not_run = [r for r in rows if r["check"] == NOT_RUN]
    lines += ["## Notes", ""]
    for engine, why in unavailable.items():
        lines.append(f"- {engine}: not available ({why}).")
    fell = [r for r in rows if r.get("clock_fell")]
    if fell:
        def fall(r):
            return 1 - r["sm_mhz_after"] / r["sm_mhz_before"]
        worst_fall = max(fell, key=fall)
        categories = Counter(category_name(r["category"]) for r in fell)
        lines.append(f"- The SM clock fell by more than 2% during the timed rounds of {len(fell)} rows ("
                     + ", ".join(f"{name} {count}" for name, count in categories.most_common()) + "), by "
                     f"{100 * fall(worst_fall):.0f}% at most ({worst_fall['engine']} "
                     f"{shape_text((worst_fall['m'], worst_fall['n'], worst_fall['k']))}); the engine and cuBLAS "
                     "alternate, so both ran at the clocks of those rounds.")
    if failed:
        lines.append("- Failed checks, left out of the means: " + ", ".join(
            f"{r['engine']} {shape_text((r['m'], r['n'], r['k']))}" for r in failed) + ".")
    if not_run:
        lines.append("- Not run (no row; see the run's log): " + ", ".join(sorted(
            {f"{r['engine']} {shape_text((r['m'], r['n'], r['k']))}" for r in not_run})) + ".")
    notes = {r["engine"]: r["note"] for r in rows if r["kind"] == "peer" and r["note"] and r["check"] in MEASURED}
    for engine, note in notes.items():
        lines.append(f"- {engine}: {note}.")
    lines += [
        "- % of cuBLAS: cuBLAS's time / the engine's, both timed in the same process, in alternation (one run "
        "of each per round, median of the rounds). The steps against `cublasGemmEx` in their own precision "
        "(FP16 in, FP32 accumulate and out; FP32 for the FP32 step), the peers against the same call made "
        "from Python on the cuBLAS that PyTorch loaded.",
        "- Short timing: each shape is timed for up to 10 rounds after one warm-up round, fewer where the "
        "rounds would pass 100 ms (at least one), and checked.",
        "- Timing: each timed run follows GPU work that holds the GPU while the host enqueues it, so the "
        "interval is the GPU's time alone; cold: that work also reads three times L2, so the operands come "
        "from DRAM, as a model reads a layer's weights once per token (common/harness_timing.hpp).",
        "- A failed check is never a number: such shapes are left out of the means and listed above.",
    ]
    return "\n".join(lines) + "\n"


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
