"""Views: the rows that a table block reads where no results CSV holds them as they are, made by
joining CSVs or by arithmetic over several rows (a step's speed-up over the step before it, the
ladder's verdicts from profile.csv beside worklog.csv's times, a step's counters beside those of the
kernel it is compared with, a variant table's rows over several processes). A view returns rows
(dicts), which a table spec (readme/tables.py) then lays out like a CSV's; it writes no Markdown.
MARKDOWN holds the tables that the reports also write into results files (table.md, shapes.md),
quoted as they write them. Needs only the Python standard library.
"""
import re
import statistics

from profiling.profile_csv import CUBLAS, limited_by_step
from readme.formats import DERIVED, Missing, format_value, join_range, matches, plain_limit
from report.results_csv import cublas_name, headline_size, latest_per_step, precision_label, size_of
from report.results_table import build_table, fmt_pct_spread, fmt_tflops
from run import registrations
from shapes import shape_results
from shapes import shape_tables


def _words(value):
    """A comma-separated option's items."""
    return [item for item in value.split(",") if item]


def _shape(size):
    return "×".join(map(str, size))


def speedups(results, **_):
    """worklog.csv's rows, each with previous_step (the step run before it at its size) and speedup
    (that step's time over this one's; "(vs FP32)" where the precision changes; "—" beside a FAIL)."""
    rows, out = results.rows("worklog.csv"), []
    for row in rows:
        group = [r for r in rows if size_of(r) == size_of(row)]
        order = list(dict.fromkeys(r["step"] for r in group))
        at = order.index(row["step"])
        previous = next(r for r in reversed(group) if r["step"] == order[at - 1]) if at else None
        speedup = "—"
        if previous and "FAIL" not in (row["status"], previous["status"]):
            speedup = f"{previous['ms'] / row['ms']:.2f}×"
            if previous["precision"] != row["precision"]:
                speedup += f" (vs {precision_label(previous['precision'])})"
        out.append({**row, "previous_step": previous["step"] if previous else "previous step", "speedup": speedup,
                    "_sources": [row] + ([previous] if previous else [])})
    return out


def _longest_kernels(results):
    """{(step, precision): the step's longest-running kernel in profile.csv}."""
    longest = {}
    for r in results.rows("profile.csv"):
        key = (r["step"], r["precision"])
        if key not in longest or (r["duration_ns"] or 0) > (longest[key]["duration_ns"] or 0):
            longest[key] = r
    return longest


def _pays(results, spec, order):
    """{step: text} for the ladder's pays=STEP:SHAPE,...: the step's % of cuBLAS on the shape it was
    written for (shapes.csv), beside the ladder's step before it. SHAPE is MxNxK, or `corpus`: the
    geometric mean over every shape of the corpus (a shape in two categories counted once)."""
    rows = [r for r in results.rows("shapes.csv") if shape_results.counted(r)]

    def on(engine, shape):
        by_shape = {}
        for r in rows:
            if r["engine"] == engine and (shape == "corpus" or (r["m"], r["n"], r["k"]) == shape):
                by_shape.setdefault((r["m"], r["n"], r["k"]), r["pct_cublas"])
        if not by_shape:
            raise Missing(f"pays=: shapes.csv has no passed row of {engine}"
                          + ("" if shape == "corpus" else f" at {_shape(shape)}"))
        if shape == "corpus":
            return shape_results.geometric_mean(by_shape.values()), len(by_shape)
        return next(iter(by_shape.values())), 1

    cells = {}
    for item in _words(spec):
        step, _, wanted = item.partition(":")
        if step not in order or order.index(step) == 0:
            raise Missing(f"pays=: '{step}' is not a step of the ladder after its first")
        shape = wanted
        if wanted != "corpus":
            try:
                shape = tuple(int(x) for x in wanted.split("x"))
            except ValueError:
                shape = ()
            if len(shape) != 3:
                raise Missing(f"pays=: '{item}' is not STEP:MxNxK or STEP:corpus")
        before = order[order.index(step) - 1]
        (mine, count), (theirs, _) = on(step, shape), on(before, shape)
        where = f"geometric mean over the corpus's {count} shapes" if shape == "corpus" else f"at {_shape(shape)}"
        cells[step] = f"{shape_results.fmt_pct(mine)} {where} ({before[:2]}: {shape_results.fmt_pct(theirs)})"
    return cells


def ladder(results, counters, pays, **_):
    """One row per step at the worklog's size (its words, precision, TFLOP/s, % of cuBLAS, what holds
    it back in plain words, linked to counters=), cuBLAS after the last step of each precision, a step
    the build has but the run did not measure after the last; pays=: _pays's column."""
    rows = latest_per_step(results.rows("worklog.csv"))  # already one per step and size: the median of its processes
    if not rows:
        raise Missing("worklog.csv has no rows")
    size = headline_size(rows)
    order = list(dict.fromkeys(r["step"] for r in results.rows("worklog.csv") if size_of(r) == size))
    mine = sorted((r for r in rows if size_of(r) == size), key=lambda r: order.index(r["step"]))
    profiled, paid = _longest_kernels(results), (_pays(results, pays, order) if pays else {})
    newest = max(mine, key=lambda r: r["time"])
    spread = any(r.get("ms_p10") is not None for r in mine)
    processes = max(r.get("processes", 1) for r in mine)
    common = {"shape": _shape(size), "run_line": DERIVED["run_line"](newest),
              "processes_caption": f"; each step's row the median of its {processes} processes by % of cuBLAS"
                                   if processes > 1 else "",
              "spread_caption": "; in parentheses, the range that the 10th and 90th percentiles of the step's and "
                                "cuBLAS's timed rounds give the ratio" if spread else "",
              "pays_caption": f"; the last column from the shape corpus (`plots/results/shapes.csv`; "
                              f"{shape_tables.run_caption(results.rows('shapes.csv'))})" if pays else ""}

    def verdict(step, precision):
        row = profiled.get((step, precision))
        if row is None:
            return "(not profiled)"
        words = plain_limit(row["limited_by"]) if row["limited_by"] else "n/a"
        return f"[{words}]({counters})" if counters and row["limited_by"] else words

    unmeasured = []
    try:
        built = registrations.steps(results.root)
    except registrations.RegistrationError:
        built = []
    for step in (s for s in built if s not in order):
        try:
            adds = results.registration(step).adds
        except Missing:
            adds = ""
        unmeasured.append({**common, "name": f"[{step}]({step}/)", "adds": adds, "precision": "",
                           "tflops": "not in this run", "pct": "—", "verdict": "its README measures it", "pays": ""})
    table = []
    for at, r in enumerate(mine):
        failed = r["status"] == "FAIL"
        table.append({**common, "name": f"[{r['step']}]({r['step']}/)", "adds": r["adds"],
                      "precision": precision_label(r["precision"]), "tflops": "—" if failed else fmt_tflops(r["tflops"]),
                      "pct": "—" if failed else fmt_pct_spread(r), "verdict": verdict(r["step"], r["precision"]),
                      "pays": paid.get(r["step"], ""),
                      "_sources": [r] + [x for x in [profiled.get((r["step"], r["precision"]))] if x]})
        if at + 1 == len(mine):
            table += unmeasured
        if at + 1 == len(mine) or mine[at + 1]["precision"] != r["precision"]:
            cublas = [x["cublas_tflops"] for x in mine if x["precision"] == r["precision"] and x["cublas_tflops"]]
            steps = [x["step"][:2] for x in mine if x["precision"] == r["precision"]]
            if cublas:
                table.append({**common, "name": cublas_name(r["precision"]), "precision": precision_label(r["precision"]),
                              "adds": f"the yardstick of {steps[0]}" + (f"–{steps[-1]}" if len(steps) > 1 else ""),
                              "tflops": fmt_tflops(statistics.median(cublas)),
                              "pct": "100%", "verdict": verdict(CUBLAS, r["precision"]), "pays": ""})
    return table


# The rows a step README's counter table may have (rows=): label, quantity of profile.csv, format.
COUNTER_ROWS = {
    "dram_bytes": ("DRAM bytes (read + write)", "dram_bytes", "bytes"),
    "dram_read_bytes": ("DRAM bytes read", "dram_read_bytes", "bytes"),
    "l2_bytes": ("L2 bytes", "l2_bytes", "bytes"),
    "l2_bytes4": ("L2 bytes", "l2_bytes", "bytes4"),
    "instructions": ("warp instructions", "instructions", "count"),
    "instructions_per_fma": ("warp instructions per FMA instruction", "instructions_per_fma", "sig3"),
    "shared_ld_per_fma": ("shared load instructions per FMA instruction", "shared_ld_per_fma", "g"),
    "shared_wavefronts": ("shared wavefronts", "shared_wavefronts", "count"),
    "conflicts": ("shared bank conflicts / wavefronts", "conflicts", ""),
    "occupancy": ("achieved occupancy", "achieved_occupancy_pct", "auto_pct"),
    "occupancy_registers": ("achieved occupancy (registers per thread)", "occupancy_registers", ""),
    "issue": ("issue slots busy", "issue_active_pct", "auto_pct"),
    "l1": ("L1/shared busy", "l1_throughput_pct", "auto_pct"),
    "l2_busy": ("L2 busy", "l2_throughput_pct", "auto_pct"),
    "dram_busy": ("DRAM busy", "dram_throughput_pct", "auto_pct"),
    "tensor": ("tensor pipe busy", "tensor_pipe_pct", "auto_pct"),
    "stalls": ("top stalls (warps per issued instruction)", "stalls", ""),
    "limited_by": ("limited by", "limited_by", ""),
}


def _profile_row(results, step, precision=None):
    """The longest-running kernel of a step (cuBLAS: of a precision) in profile.csv."""
    rows = [r for r in results.rows("profile.csv") if r["step"] == step and (precision is None or r["precision"] == precision)]
    if not rows:
        raise Missing(f"profile.csv has no row of {step}" + (f" {precision}" if precision else ""))
    return max(rows, key=lambda r: r["duration_ns"] or 0.0)


def counters(results, step, compare, precision, rows, **_):
    """One row per counter of rows= (COUNTER_ROWS), its value for compare= (a step, or cuBLAS with
    precision=) and for the step."""
    keys = _words(rows)
    unknown = [key for key in keys if key not in COUNTER_ROWS]
    if unknown or not keys:
        raise Missing(f"unknown counter row(s) {', '.join(unknown) or '(none given)'} in rows= "
                      f"(known: {', '.join(COUNTER_ROWS)})")
    mine, theirs = _profile_row(results, step), _profile_row(results, compare, precision or None)

    def shown(row, quantity, spec):
        try:
            value = row[quantity] if quantity in row else DERIVED[quantity](row)
            return "n/a" if value in (None, "") else format_value(value, spec or "auto")
        except TypeError:  # a count missing from the arithmetic
            return "n/a"
    name = {r["step"]: cublas_name(r["precision"]) if r["step"] == CUBLAS else r["step"] for r in (mine, theirs)}
    note = "; an FMA instruction is one warp FFMA, M·N·K / 32 of them" if any(k.endswith("per_fma") for k in keys) else ""
    return [{"label": label, "theirs": shown(theirs, quantity, spec), "mine": shown(mine, quantity, spec),
             "theirs_name": name[theirs["step"]], "mine_name": name[mine["step"]], "gpu": mine["gpu"],
             "shape": DERIVED["shape"](mine), "fma_note": note, "_sources": [mine, theirs]}
            for label, quantity, spec in (COUNTER_ROWS[k] for k in keys)]


STEP_NAME = re.compile(r"^\d\d_[A-Za-z0-9_]+$")  # a step's directory, as the build names it
LABELS = ("names", "flags")
COLD_SOURCE = "cold (L2 flushed"  # how experiments.csv's `source` says a row was timed cold
BEFORE_THE_MODES = "timing warm, by CUDA events with nothing queued before each run (before the timing modes)"


def experiment_caption(rows):
    """GPUs, dates and timing of experiments.csv's rows."""
    cold = [COLD_SOURCE in (r.get("source") or "") for r in rows]
    timing = ("timing cold: L2 flushed before every timed run" if all(cold) else BEFORE_THE_MODES if not any(cold)
              else "timing cold and warm")
    return f"{', '.join(sorted({r['gpu'] for r in rows}))}, {', '.join(sorted({r['date'] for r in rows}))}, {timing}"


def experiments(results, experiment, **_):
    """experiments.csv's rows of one experiment, each with `caption` (experiment_caption of them all)."""
    rows = [r for r in results.rows("experiments.csv") if r["experiment"] == experiment]
    return [{**r, "caption": experiment_caption(rows)} for r in rows]


def variant_rows(step, rows):
    """The (step, variant) pairs of a variant table's rows=: STEP, VARIANT (of the table's step) or
    STEP/VARIANT; Missing for an empty or malformed list."""
    pairs = []
    for word in _words(rows):
        named, slash, variant = word.partition("/")
        if slash:
            if not STEP_NAME.match(named) or not variant:
                raise Missing(f"rows=: '{word}' is not STEP/VARIANT")
            pairs.append((named, variant))
        else:
            pairs.append((word, "") if STEP_NAME.match(word) else (step, word))
    if not pairs:
        raise Missing("rows= names no row")
    return pairs


def variants(results, step, rows, experiment, labels, **_):
    """A step's variants (rows=, variant_rows) at 4096³ and 8192³ from experiments.csv: TFLOP/s and
    % of cuBLAS as the range over the processes, what each changes as its kernel.cu registers it."""
    if labels not in LABELS:
        raise Missing(f"labels= must be one of {', '.join(LABELS)}")
    pairs, everything = variant_rows(step, rows), [r for r in results.rows("experiments.csv") if r["experiment"] == experiment]
    out, used = [], []
    for s, v in pairs:
        registration = results.registration(s)
        if v and v not in registration.variants:
            raise Missing(f"{registration.path} registers no variant '{v}' (it registers: "
                          f"{', '.join(registration.variants) or 'none'})")
        mine = [r for r in everything if r["step"] == s and r["variant"] == v]
        if not mine:
            raise Missing(f"experiments.csv has no {experiment} rows of {s} variant '{v}'")
        used += mine
        label = (f"`{v}`" if labels == "names" else f"`--variant {v}`") if v else \
            "(the step)" if s == step and labels == "names" else s
        row = {"label": label, "what": registration.variants[v] if v else registration.adds, "_sources": mine}
        for n in (4096, 8192):
            for metric, spec, suffix in (("tflops", ".1f", ""), ("pct_cublas", ".1f", "%")):
                values = [r["value"] for r in mine if r["metric"] == metric and matches(r["n"], str(n))]
                row[f"{metric}_{n}"] = (join_range([format_value(x, spec) for x in (min(values), max(values))]) + suffix
                                        if values else "—")
        out.append(row)
    with_pct = all(any(r["metric"] == "pct_cublas" for r in used if (r["step"], r["variant"]) == pair) for pair in pairs)
    processes = sorted({r["run"] for r in used if r["run"]})
    how = (f"each row in {len(processes)} processes of its own, taken in turn in one session (the range over them), "
           f"step and cuBLAS timed in alternation in each; {experiment_caption(used)}; `plots/run/record_variants.py`"
           if len(processes) > 1 else f"each in its own process in one session, step and cuBLAS timed in alternation; "
           f"{experiment_caption(used)}; recorded by hand")
    return [{**r, "with_pct": "yes" if with_pct else "", "how": how} for r in out]


def variant_tables(root):
    """{step: its variant table's (step, variant) rows} for each step of the build (CMakeLists.txt)
    whose README or notes page (docs/notes/STEP.md) has a `variants/STEP` block, from that block's
    BEGIN line: what plots/run/record_variants.py measures. BlockError for a page or block that cannot
    be read."""
    from readme import filler  # the filler reads the READMEs; it imports this module
    tables = {}
    try:
        steps = registrations.steps(root)
    except registrations.RegistrationError as e:
        raise filler.BlockError(str(e)) from None
    for step in steps:
        pages = [filler.Path(root) / step / "README.md", filler.Path(root) / "docs" / "notes" / f"{step}.md"]
        for readme, found in ((page, found) for page in pages if page.is_file()
                              for found in filler.find(page.read_text(encoding="utf-8"), str(page))):
            if found.kind == "block" and found.name == f"variants/{step}":
                try:
                    options = filler.block_options(filler.TABLES["variants"], found.options)
                    tables[step] = variant_rows(step, options["rows"])
                except Missing as e:
                    raise filler.BlockError(f"{readme}:{found.line}: {e}") from None
    return tables


def timing_validation(results, **_):
    """timing_validation.csv's rows (plots/run/validate_timing.py), each with its cuBLAS kernels'
    count where it is not one, and the caption's count of shapes that agree."""
    rows = results.rows("timing_validation.csv")
    shapes = {(r["m"], r["n"], r["k"]) for r in rows}
    agree = {(r["m"], r["n"], r["k"]) for r in rows if r["agrees"] == "yes"}
    return [{**r, "shape": f"{r['m']}×{r['n']}×{r['k']}", "agree_count": len(agree), "shape_count": len(shapes),
             "kernels": "" if r["ncu_cublas_kernels"] in ("", "1") else f" ({r['ncu_cublas_kernels']} kernels)",
             **{c: float(r[c]) for c in ("harness_step_us", "harness_cublas_us", "harness_pct", "warm_pct",
                                         "ncu_step_us", "ncu_cublas_us", "ncu_pct", "ratio_gap_pct")}}
            for r in rows]


def _shape_list(value):
    """[(m, n, k)] of a comma-separated list of MxNxK words; Missing for one that is not."""
    shapes = []
    for word in _words(value):
        parts = word.lower().split("x")
        if len(parts) != 3 or not all(p.isdigit() for p in parts):
            raise Missing(f"shapes=: '{word}' is not MxNxK")
        shapes.append(tuple(int(p) for p in parts))
    if not shapes:
        raise Missing("shapes= names no shape")
    return shapes


def compare(results, csv, steps, shapes, **_):
    """The rows of csv= of the steps of steps= (STEP or STEP/VARIANT, in that order) on the shapes
    of shapes= (MxNxK, in that order), each with `shape` ("M × N × K"), `order` (its shape's place),
    `label` (the step's number, or its variant's name) and `rank` (its step's place): what the
    `compare` table pivots into a column group per step."""
    wanted, places = _words(steps), _shape_list(shapes)
    if not wanted:
        raise Missing("steps= names no step")
    rows = results.rows(csv)
    if rows is None:
        raise Missing(f"no {csv}")
    out = []
    for r in rows:
        size = (int(r["m"]), int(r["n"]), int(r["k"]))
        if r["step"] in wanted and size in places:
            step, _, variant = r["step"].partition("/")
            number = step[:2] if STEP_NAME.match(step) else step  # cuBLAS keeps its name
            out.append({**r, "shape": " × ".join(map(str, size)), "order": places.index(size),
                        "rank": wanted.index(r["step"]),
                        "label": f"{number}, {variant.replace('_', ' ')}" if variant else number})
    missing = [f"{s} at {'x'.join(map(str, size))}" for s in wanted for size in places
               if not any(o["step"] == s and o["order"] == places.index(size) for o in out)]
    if missing:
        raise Missing(f"{csv} has no rows of {', '.join(missing)}")
    return sorted(out, key=lambda o: (o["rank"], o["order"]))


VIEWS = {"speedups": speedups, "compare": compare, "ladder": ladder, "counters": counters, "experiments": experiments,
         "variants": variants, "timing_validation": timing_validation}

# Tables the reports also write into the results folder, quoted as they write them.
MARKDOWN = {
    "results_table": lambda results: build_table(results.rows("worklog.csv"), limited_by_step(results.rows("profile.csv")), results.rows("peers.csv")),
    "shapes": lambda results: shape_tables.category_table(results.rows("shapes.csv")),
    "shapes_roofline": lambda results: shape_tables.roofline_table(results.rows("shapes.csv")),
}
