"""The READMEs' generated tables, by the name their BEGIN line gives: data for the generic table
block (readme/table.py says what each key means), no code. `argument`: what NAME/ARGUMENT names
(`measured/04_outer_product`: a step); `options`: the KEY=VALUE words a BEGIN line may give, with
their defaults (REQUIRED: none; the line must give it); `sources`: the committed CSVs it is made
from, named on the block's note line. `markdown`: a table the reports also write into the results
folder (readme/views.py's MARKDOWN), quoted as they write it.
"""
REQUIRED = None

STEP_RUN = {"header": "check", "column": "status", "align": "---"}
FAILED = {"failed": "—"}
RUN_COLUMNS = [
    {"header": "median ms", "column": "ms", "format": "ms", **FAILED},
    # Shown where a README asks for it (spread=yes on the BEGIN line): the rounds' 10th to 90th
    # percentile; "—" for rows measured before the harness wrote them.
    {"header": "p10–p90 ms", "column": "ms_spread", "when": "spread", **FAILED},
    {"header": "TFLOP/s", "column": "tflops", "format": "tflops", **FAILED},
    {"header": "cuBLAS TFLOP/s", "column": "cublas_tflops", "format": "tflops"},
    {"header": "% of cuBLAS", "column": "pct_cublas", "format": "pct", **FAILED},
]
PROFILE_CAPTION = ("Nsight Compute, {first[gpu]}, {first[shape]}, one profiled launch each, caches flushed before it "
                   "(`plots/results/profile.csv`)")
NA = {"missing": "n/a"}

TABLES = {
    "measured": {
        "argument": "step", "options": {"spread": ""}, "sources": ["worklog.csv"],
        "csv": "view:speedups", "latest": True, "where": {"step": "{step}"},
        "caption": "`run_worklog.py` on {last[run_line]}; the step and {last[cublas_name]} timed in alternation "
                   "in the same process (`plots/results/worklog.csv`):",
        "columns": [{"header": "M×N×K", "column": "shape", "align": "---"},
                    {"header": "precision", "column": "precision_label", "align": "---"},
                    *RUN_COLUMNS,
                    {"header": "speed-up over {last[previous_step]}", "column": "speedup"},
                    STEP_RUN],
    },
    "sweep_points": {
        "argument": "step", "options": {"spread": ""}, "sources": ["sweep.csv"],
        "csv": "sweep.csv", "latest": True, "where": {"step": "{step}", "square": "yes"}, "sort": ["n"],
        "caption": "The size sweep (M = N = K = N), {last[run_line]}, against {last[cublas_name]} in the same "
                   "process (`plots/results/sweep.csv`):",
        "columns": [{"header": "N", "text": "{n}"}, *RUN_COLUMNS, STEP_RUN],
    },
    "sweep": {
        "sources": ["sweep.csv"],
        "csv": "sweep.csv", "latest": True, "where": {"square": "yes"}, "group": ["n"], "sort": ["n"],
        "caption": "TFLOP/s at M = N = K = N, each step beside cuBLAS timed in the same process; "
                   "{newest[run_line]} (`plots/results/sweep.csv`):",
        "columns": [{"header": "N", "text": "{n}"}],
        "pivot": "step",
        "repeat": [{"header": "{step} ({precision_label})", "column": "tflops", "format": "tflops", **FAILED},
                   {"header": "{cublas_name}", "column": "cublas_tflops", "format": "tflops"},
                   {"header": "% of cuBLAS", "column": "pct_cublas", "format": "pct", **FAILED}],
    },
    "ladder": {
        "options": {"counters": "", "pays": ""}, "sources": ["worklog.csv", "profile.csv", "shapes.csv"],
        "csv": "view:ladder",
        "caption": "{first[shape]}, {first[run_line]}; each step and cuBLAS timed in alternation in one process "
                   "(`plots/results/worklog.csv`), what holds it back from Nsight Compute's counters "
                   "(`plots/results/profile.csv`); cuBLAS's TFLOP/s is the median over the steps' runs"
                   "{first[processes_caption]}{first[spread_caption]}{first[pays_caption]}:",
        "columns": [{"header": "step", "text": "{name}", "align": "---"},
                    {"header": "what it adds", "text": "{adds}", "align": "---", "missing": ""},
                    {"header": "precision", "text": "{precision}", "align": "---", "missing": ""},
                    {"header": "TFLOP/s", "text": "{tflops}"},
                    {"header": "% of cuBLAS", "text": "{pct}"},
                    {"header": "what holds it back (measured)", "text": "{verdict}", "align": "---"},
                    {"header": "on the shapes it is for: % of cuBLAS (the step before)", "text": "{pays}",
                     "align": "---", "missing": "", "when": "pays"}],
    },
    "counters": {
        "argument": "step", "options": {"compare": REQUIRED, "precision": "", "rows": REQUIRED},
        "sources": ["profile.csv"], "csv": "view:counters",
        "caption": PROFILE_CAPTION + "{first[fma_note]}:",
        "columns": [{"header": "", "text": "{label}", "align": "---"},
                    {"header": "{first[theirs_name]}", "text": "{theirs}", "align": "---"},
                    {"header": "{first[mine_name]}", "text": "{mine}", "align": "---"}],
    },
    "profile_summary": {
        "sources": ["profile.csv"], "csv": "profile.csv", "longest": ["step", "precision"],
        "caption": PROFILE_CAPTION + ":",
        "columns": [{"header": "step", "column": "step_or_cublas", "align": "---"},
                    {"header": "ms", "column": "duration_ns", "scale": 1e6, "format": "ms", **NA},
                    {"header": "TFLOP/s", "column": "tflops", "format": "tflops", **NA},
                    {"header": "DRAM bytes", "column": "dram_bytes", "format": "bytes", **NA},
                    {"header": "FLOP per DRAM byte", "column": "dram_flop_per_byte", "format": ".0f", **NA},
                    {"header": "L2 bytes", "column": "l2_bytes", "format": "bytes", **NA},
                    {"header": "FLOP per L2 byte", "column": "l2_flop_per_byte", "format": "auto", **NA},
                    {"header": "tensor pipe busy", "column": "tensor_pipe_pct", "format": "auto_pct", **NA},
                    {"header": "limited by (measured)", "column": "limited_by", "align": "---", **NA},
                    {"header": "the counter that shows it", "column": "limiting_counter", "align": "---", **NA}],
    },
    "compare": {
        "options": {"csv": REQUIRED, "steps": REQUIRED, "shapes": REQUIRED, "cublas": ""},
        "sources": ["{csv}"], "csv": "view:compare", "group": ["order"], "sort": ["order"], "pivot": "rank",
        "caption": "",
        "columns": [{"header": "shape", "text": "{shape}", "align": "---"},
                    {"header": "cuBLAS: µs", "column": "cublas_ms", "where": {"step": "{cublas}"}, "agg": "range",
                     "scale": 1e-3, "format": ".1f", "when": "cublas"}],
        "repeat": [{"header": "{label}: µs", "column": "ms", "agg": "median", "scale": 1e-3, "format": ".1f"},
                   {"header": "{label}: % of cuBLAS", "column": "pct_cublas", "agg": "median", "format": ".0f",
                    "suffix": "%"}],
    },
    "compare_launches": {
        "options": {"csv": REQUIRED, "steps": REQUIRED, "shapes": REQUIRED},
        "sources": ["{csv}"], "csv": "view:compare", "where": {"kernel": "all"}, "group": ["order"],
        "sort": ["order"], "pivot": "rank", "caption": "",
        "columns": [{"header": "shape", "text": "{shape}", "align": "---"}],
        "repeat": [{"header": "{label}: kernels", "column": "kernels", "format": ".0f"},
                   {"header": "{label}: blocks", "column": "blocks", "format": ".0f"},
                   {"header": "{label}: µs", "column": "duration_ns", "scale": 1e3, "format": ".1f"}],
    },
    "variants": {
        "argument": "step", "options": {"rows": REQUIRED, "experiment": "one_process_each", "labels": "names"},
        "sources": ["experiments.csv"], "csv": "view:variants",
        "caption": "M = N = K, {first[how]} (`plots/results/experiments.csv`, experiment `{experiment}`):",
        "columns": [{"header": "variant", "text": "{label}", "align": "---"},
                    {"header": "what changes", "text": "{what}", "align": "---"},
                    {"header": "4096³ TFLOP/s", "text": "{tflops_4096}"},
                    {"header": "4096³ % of cuBLAS", "text": "{pct_cublas_4096}", "when": "with_pct"},
                    {"header": "8192³ TFLOP/s", "text": "{tflops_8192}"},
                    {"header": "8192³ % of cuBLAS", "text": "{pct_cublas_8192}", "when": "with_pct"}],
    },
    "fastcu": {
        "sources": ["experiments.csv"], "csv": "view:experiments", "options": {"experiment": "fastcu"},
        "group": ["variant"],
        "caption": "{each[n]}³, BF16 in and out with FP32 accumulation, its own harness and its own cuBLAS call; "
                   "{first[caption]}; recorded by hand (`plots/results/experiments.csv`, experiment `fastcu`):",
        "columns": [{"header": "fast.cu kernel, cumulative", "column": "variant", "format": "words", "align": "---"},
                    {"header": "TFLOP/s", "where": {"metric": "tflops"}, "column": "value", "agg": "range",
                     "format": ".0f"},
                    {"header": "% of its cuBLAS", "where": {"metric": "pct_cublas"}, "column": "value", "agg": "range",
                     "format": ".0f", "suffix": "%"}],
    },
    "timing_validation": {
        "sources": ["timing_validation.csv"], "csv": "view:timing_validation",
        "caption": "{first[step]} and cuBLAS, {each[gpu]}, {each[date]} (`plots/results/timing_validation.csv`, "
                   "remade by `plots/run/validate_timing.py`); the harness's median of 30 rounds, timed by the "
                   "kernels' timestamps, cold and warm; Nsight Compute's median of 5 launches with its caches "
                   "flushed; {first[agree_count]} of {first[shape_count]} shapes agree (a shape listed twice was "
                   "measured twice):",
        "columns": [{"header": "shape", "column": "shape", "align": "---"},
                    {"header": "harness: step µs", "column": "harness_step_us", "format": ".2f"},
                    {"header": "cuBLAS µs", "column": "harness_cublas_us", "format": ".2f"},
                    {"header": "% of cuBLAS, cold", "column": "harness_pct", "format": ".1f", "suffix": "%"},
                    {"header": "warm", "column": "warm_pct", "format": ".1f", "suffix": "%"},
                    {"header": "Nsight Compute: step µs", "column": "ncu_step_us", "format": ".2f"},
                    {"header": "cuBLAS µs", "text": "{ncu_cublas_us:.2f}{kernels}"},
                    {"header": "% of cuBLAS", "column": "ncu_pct", "format": ".1f", "suffix": "%"},
                    {"header": "gap", "column": "ratio_gap_pct", "format": "+.1f", "suffix": "%"},
                    {"header": "agree", "column": "agrees", "align": "---"}],
    },
    "results_table": {"sources": ["worklog.csv", "profile.csv", "peers.csv"], "markdown": "results_table"},
    "shapes": {"sources": ["shapes.csv"], "markdown": "shapes"},
    "shapes_roofline": {"sources": ["shapes.csv"], "markdown": "shapes_roofline"},
}
