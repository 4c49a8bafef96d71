"""The Markdown of the shapes run: the per-category table of docs/results.md's "Shapes" section and its
memory-bound rows (generated blocks), and shapes.md, with the worst shapes per step and cuBLAS's own
kernel per shape beside them (cublas_picks.csv). The arithmetic is shape_results.py's. Standard
library only.
"""
import statistics
from collections import Counter

from shapes.cublas_names import pick_text
from report.results_csv import TIMING_WORDS, cublas_name, least_bytes, timing_of
from shapes.shape_results import (MEASURED, NOT_AVAILABLE, NOT_RUN, WITHIN, bounded_step, categories, category_name,
                                  counted, dram_fraction, engine_title, engines, fmt_pct, fmt_tflops, geometric_mean,
                                  model_within, summarize, worst)
from shapes.shape_corpus import shape_text


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
    # cuBLAS's picks are set beside the run only when they were read on the run's card.
    cards = Counter(r["gpu"] for r in rows if r.get("gpu"))
    card = cards.most_common(1)[0][0] if cards else ""
    other = sorted({p["gpu"] for p in picks or [] if p.get("gpu") and p["gpu"] != card})
    picks = [p for p in picks or [] if not p.get("gpu") or p["gpu"] == card]
    if other and not picks:
        lines += ["", "## cuBLAS's own kernel", "",
                  f"cublas_picks.csv was read on another card ({', '.join(other)}) than this run ({card}): "
                  "not set beside it (plots/shapes/cublas_pick.py reads it again)."]
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
