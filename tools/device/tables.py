#!/usr/bin/env python3
"""The hand-made tables of plots/results, remade from what `tools/device/remeasure.sh counters` left
in its raw folder: Nsight Compute's counters of single launches, and the tools' printed output.

    python3 tools/device/tables.py RAW [--results plots/results]

RAW holds one `TABLE@STEP[~VARIANT]@MxNxK@TARGET.csv` per profiled launch (ncu's raw page, base
units), the calibrations' `--explain` output (`tile_model@STEP.txt`, `edges_4096@STEP.txt`), the
tools' output (`dram_copy.txt`, `mma_peak.txt`), two harness CSVs (`slice_cost_1024.csv`,
`one_process_each.csv`) and `gpu.txt`, `date.txt` (the card and the day). Written: tile_limits.csv,
tile_counters.csv, small_counters.csv and tile_model.csv whole, and in experiments.csv the rows of
the experiments remade here (the old rows of those experiments replaced, the others kept). The code
column is left empty for `tools/fingerprints.py --stamp` to fill from the build that ran.
Exit codes: 0 written; 2 a raw file missing or unreadable (nothing written).
"""
import argparse
import csv
import re
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(ROOT / "plots"), str(ROOT / "common")]
import exit_codes  # noqa: E402
from profiling.ncu_metrics import parse_ncu_csv  # noqa: E402
from profiling.profile_csv import kernel_name  # noqa: E402

NCU = ("Nsight Compute, one launch after an unprofiled one (`--profile step` or `--profile cublas`), "
       "`--clock-control none --cache-control all` (the GPU's own clocks, caches flushed): "
       "tools/device/remeasure.sh counters, then tools/device/tables.py")
EXPERIMENTS = ("ncu_dram_llm_m256", "ncu_gate_up_sectors", "copy_share", "ncu_swap_ab", "dram_copy", "mma_peak",
               "edges_4096", "slice_cost_1024", "one_process_each")
EXPERIMENT_COLUMNS = ["experiment", "date", "gpu", "step", "variant", "m", "n", "k", "run", "metric", "value",
                      "source", "code"]


class RawMissing(Exception):
    pass


def short_name(name):
    """A kernel's name without `void `, its namespaces' noise and its parameter list."""
    name = re.sub(r"^void ", "", kernel_name(name))  # kernel_name: ncu's "unnamed>" respelled
    for noise in ("(anonymous namespace)::", "worklog::"):
        name = name.replace(noise, "")
    depth, cut = 0, len(name)
    for i, ch in enumerate(name):  # the parameter list: the first "(" outside template brackets
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "(" and depth <= 0:
            cut = i
            break
    return name[:cut][:100]


def role(name):
    lower = name.lower()
    if "reduce" in lower or "fixup" in lower:
        return "reduce"
    if "copy" in lower or "pad" in lower.split("<")[0]:
        return "copy"
    return "gemm"


class Raw:
    def __init__(self, folder):
        self.folder = Path(folder)
        self.gpu = self.text("gpu.txt").strip().splitlines()[0].strip()
        self.date = self.text("date.txt").strip()
        self.runs = {}  # (table, step, variant, shape, target) -> [kernels]
        for path in sorted(self.folder.glob("*@*.csv")):
            parts = path.stem.split("@")
            if len(parts) != 4:
                continue
            table, who, shape, target = parts
            step, _, variant = who.partition("~")
            m, n, k = (int(x) for x in shape.split("x"))
            try:
                kernels = parse_ncu_csv(path.read_text(encoding="utf-8", errors="replace"))
            except Exception as e:  # noqa: BLE001 (a run that left no table is reported, not skipped)
                raise RawMissing(f"{path}: {e}") from None
            self.runs[(table, step, variant, (m, n, k), target)] = kernels

    def text(self, name):
        path = self.folder / name
        if not path.is_file():
            raise RawMissing(f"{path}: missing")
        return path.read_text(encoding="utf-8", errors="replace")

    def of(self, table):
        return [(step, variant, shape, kernels) for (t, step, variant, shape, _), kernels in self.runs.items()
                if t == table]


def value(kernel, metric):
    v = kernel.metrics.get(metric)
    return v if isinstance(v, float) else None


def tile_limits(raw):
    rows = []
    for step, _, (m, n, k), kernels in raw.of("tile_limits"):
        base = {"gpu": raw.gpu, "step": step, "m": m, "n": n, "k": k, "code": ""}
        for kr in kernels:
            rows.append({**base, "kernel": short_name(kr.name), "role": role(kr.name),
                         "duration_ns": f"{value(kr, 'gpu__time_duration.sum'):.0f}",
                         "grid": f"{value(kr, 'launch__grid_size'):.0f}",
                         "sm_pct": f"{value(kr, 'sm__throughput.avg.pct_of_peak_sustained_elapsed'):.2f}",
                         "dram_pct": f"{value(kr, 'gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'):.2f}",
                         "l2_pct": f"{value(kr, 'lts__throughput.avg.pct_of_peak_sustained_elapsed'):.2f}",
                         "tensor_pct": f"{value(kr, 'sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed'):.2f}"})
        total = sum(value(kr, "gpu__time_duration.sum") for kr in kernels)
        rows.append({**base, "kernel": "all", "role": "all", "duration_ns": f"{total:.0f}"})
    return ["gpu", "step", "m", "n", "k", "kernel", "role", "duration_ns", "grid", "sm_pct", "dram_pct", "l2_pct",
            "tensor_pct", "code"], rows


TILE_COUNTERS = (("launch__grid_size", ""), ("launch__cluster_dim_x", ""), ("sm__cycles_active.avg", "cycle"),
                 ("sm__cycles_elapsed.max", "cycle"), ("lts__t_bytes.sum", "byte"), ("dram__bytes_read.sum", "byte"),
                 ("gpu__time_duration.sum", "ns"))


def tile_counters(raw):
    rows = []
    for step, _, (m, n, k), kernels in raw.of("tile_counters"):
        gemm = [kr for kr in kernels if role(kr.name) == "gemm"]
        if len(gemm) != 1:
            raise RawMissing(f"tile_counters {step} {m}x{n}x{k}: {len(gemm)} GEMM kernels (expected one)")
        for metric, unit in TILE_COUNTERS:
            rows.append({"gpu": raw.gpu, "step": step, "m": m, "n": n, "k": k, "kernel": short_name(gemm[0].name),
                         "metric": metric, "unit": unit, "value": f"{value(gemm[0], metric):.0f}", "code": ""})
    return ["gpu", "step", "m", "n", "k", "kernel", "metric", "unit", "value", "code"], rows


def small_counters(raw):
    rows = []
    for step, _, (m, n, k), kernels in raw.of("small_counters"):
        base = {"gpu": raw.gpu, "step": step, "m": m, "n": n, "k": k, "code": ""}
        for kr in kernels:
            rows.append({**base, "kernel": short_name(kr.name), "kernels": 1,
                         "blocks": f"{value(kr, 'launch__grid_size'):.0f}",
                         "duration_ns": f"{value(kr, 'gpu__time_duration.sum'):.0f}"})
        gemm = [kr for kr in kernels if role(kr.name) == "gemm"] or kernels
        rows.append({**base, "kernel": "all", "kernels": len(kernels),
                     "blocks": f"{value(gemm[-1], 'launch__grid_size'):.0f}",
                     "duration_ns": f"{sum(value(kr, 'gpu__time_duration.sum') for kr in kernels):.0f}"})
    return ["gpu", "step", "m", "n", "k", "kernel", "kernels", "blocks", "duration_ns", "code"], rows


EXPLAIN_SHAPE = re.compile(r"^(\d+)x(\d+)x(\d+):$")
EXPLAIN_ENTRY = re.compile(r"^\s+(\S+)\s+(\d+)\s+(\d+)\s+(\S+)\s+(\S+)\s+([\d.]+)\s+([\d.]+)\s+([-+][\d.]+)%(\s+<- the model's pick)?")


def explain_rows(text, gpu, step):
    """The rows of a calibration's --explain output: one per (shape, entry)."""
    rows, shape = [], None
    for line in text.splitlines():
        found = EXPLAIN_SHAPE.match(line.strip())
        if found:
            shape = tuple(int(x) for x in found.groups())
            continue
        entry = EXPLAIN_ENTRY.match(line)
        if entry and shape:
            name, slices, segments, fixup, off, model, measured, error, pick = entry.groups()
            rows.append({"gpu": gpu, "m": shape[0], "n": shape[1], "k": shape[2], "entry": name, "slices": slices,
                         "segments": segments, "fixup": fixup, "off_lines": off, "model_us": model,
                         "measured_us": measured, "error_pct": error, "picked": "yes" if pick else "no",
                         "step": step, "code": ""})
    return rows


def tile_model(raw):
    rows = explain_rows(raw.text("tile_model@15_tile_per_shape.txt"), raw.gpu, "15_tile_per_shape")
    if not rows:
        raise RawMissing("tile_model@15_tile_per_shape.txt: no entry line")
    return ["gpu", "m", "n", "k", "entry", "slices", "segments", "fixup", "off_lines", "model_us", "measured_us",
            "error_pct", "picked", "step", "code"], rows


def harness_rows(raw, name):
    with open(raw.folder / name, newline="") as f:
        return list(csv.DictReader(f))


def experiment_rows(raw):
    out = []

    def add(experiment, step, variant, shape, metric, number, source, run=""):
        m, n, k = shape if shape else ("", "", "")
        out.append({"experiment": experiment, "date": raw.date, "gpu": raw.gpu, "step": step, "variant": variant,
                    "m": m, "n": n, "k": k, "run": run, "metric": metric, "value": number, "source": source,
                    "code": ""})

    for step, variant, shape, kernels in raw.of("ncu_dram_llm_m256"):
        add("ncu_dram_llm_m256", step, variant, shape, "dram_read_mb",
            f"{sum(value(kr, 'dram__bytes_read.sum') for kr in kernels) / 1e6:.2f}", NCU)
        add("ncu_dram_llm_m256", step, variant, shape, "duration_us",
            f"{sum(value(kr, 'gpu__time_duration.sum') for kr in kernels) / 1e3:.2f}", NCU)
    for step, variant, shape, kernels in raw.of("ncu_gate_up_sectors"):
        gemm = [kr for kr in kernels if role(kr.name) == "gemm"]
        for metric, name in (("dram__sectors_read.sum", "dram_read_sectors"),
                             ("lts__t_sectors_srcunit_tex_op_read.sum", "l2_read_sectors_from_sms"),
                             ("lts__t_sectors_srcunit_tex_lookup_hit.sum", "l2_hit_sectors_from_sms")):
            add("ncu_gate_up_sectors", step, variant, shape, name, f"{sum(value(kr, metric) for kr in gemm):.0f}",
                NCU + "; the GEMM kernel's sectors")
    for step, variant, shape, kernels in raw.of("copy_share"):
        copies, seen = 0.0, {}
        total = sum(value(kr, "gpu__time_duration.sum") for kr in kernels)
        for kr in kernels:
            name = re.sub(r"<.*", "", short_name(kr.name)).split("::")[-1]
            seen[name] = seen.get(name, 0) + 1
            name = f"{name}_{seen[name]}"  # pad_copy_1, pad_copy_2, gemm kernels by name, in launch order
            us = value(kr, "gpu__time_duration.sum")
            if role(kr.name) == "copy":
                copies += us
            add("copy_share", step, name, shape, "duration_us", f"{us / 1e3:.2f}", NCU + "; each kernel of the launch")
        add("copy_share", step, "", shape, "copy_share_pct", f"{100 * copies / total:.1f}",
            NCU + "; the copy kernels' time over all kernels' time")
    for step, variant, shape, kernels in raw.of("ncu_swap_ab"):
        if step == "cuBLAS":
            for kr in kernels:
                which = "cublas_reduce_kernel" if role(kr.name) == "reduce" else "cublas_main_kernel"
                add("ncu_swap_ab", step, which, shape, "duration_us",
                    f"{value(kr, 'gpu__time_duration.sum') / 1e3:.2f}", NCU + f"; {short_name(kr.name)}")
                add("ncu_swap_ab", step, which, shape, "blocks", f"{value(kr, 'launch__grid_size'):.0f}", NCU)
            continue
        label = "one_tile_one_slice" if shape == (16, 128, 64) else variant
        add("ncu_swap_ab", step, label, shape, "duration_us",
            f"{sum(value(kr, 'gpu__time_duration.sum') for kr in kernels) / 1e3:.2f}", NCU)
        add("ncu_swap_ab", step, label, shape, "instructions",
            f"{sum(value(kr, 'smsp__inst_executed.sum') for kr in kernels):.0f}", NCU)
        add("ncu_swap_ab", step, label, shape, "dram_read_mb",
            f"{sum(value(kr, 'dram__bytes_read.sum') for kr in kernels) / 1e6:.2f}", NCU)
    text = raw.text("dram_copy.txt")
    for metric, pattern in (("copy_tb_s", r"DRAM copy: ([\d.]+) TB/s"), ("read_tb_s", r"DRAM read: ([\d.]+) TB/s")):
        found = re.search(pattern, text)
        if not found:
            raise RawMissing(f"dram_copy.txt: no line matching '{pattern}'")
        add("dram_copy", "", "", None, metric, found.group(1), "build/bin/dram_copy, as it prints")
    found = re.search(r"mma.sync peak: ([\d.]+) TFLOP/s", raw.text("mma_peak.txt"))
    if not found:
        raise RawMissing("mma_peak.txt: no 'mma.sync peak' line")
    add("mma_peak", "08_mma_ldmatrix", "mma_peak", None, "tflops", found.group(1), "build/bin/mma_peak, as it prints")
    for r in explain_rows(raw.text("edges_4096@16_both_orientations.txt"), raw.gpu, "16_both_orientations"):
        if r["picked"] == "yes":
            add("edges_4096", "16_both_orientations", r["entry"], (r["m"], r["n"], r["k"]), "measured_us",
                r["measured_us"], "build/bin/16_both_orientations_calibrate --explain MxNxK: the entry the model "
                "picks, timed warm (each entry launched 15 times, the median)")
    slices = harness_rows(raw, "slice_cost_1024.csv")
    source = ("build/bin/16_both_orientations --variant menu_64x128_c1 --shapes (1024x1024xK) --warmup 2 --iters 10, "
              "cold, cuBLAS in the same process; median of three processes; per_slice_us = (time at K 8192 - time "
              "at K 4096) / 64 slices")
    for who, column in (("menu_64x128_c1", "ms"), ("cublas", "cublas_ms")):
        us = {}
        for kk in (1024, 4096, 8192):
            us[kk] = 1e3 * statistics.median(float(r[column]) for r in slices if int(r["k"]) == kk)
            add("slice_cost_1024", "16_both_orientations", who, (1024, 1024, kk), "us", f"{us[kk]:.2f}", source)
        add("slice_cost_1024", "16_both_orientations", who, (1024, 1024, ""), "per_slice_us",
            f"{(us[8192] - us[4096]) / 64:.4f}", source)
    for r in harness_rows(raw, "one_process_each.csv"):
        add("one_process_each", r["step"], "", (r["m"], r["n"], r["k"]), "cublas_tflops", f"{float(r['cublas_tflops']):.1f}",
            "build/bin/06_multiwarp_wmma --m 8192 --n 8192 --k 8192: the cuBLAS GemmEx of the same process")
    return out


def write(path, fields, rows):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("raw", type=Path, help="the raw folder of remeasure.sh counters")
    parser.add_argument("--results", type=Path, default=ROOT / "plots" / "results")
    args = parser.parse_args(argv)
    try:
        raw = Raw(args.raw)
        tables = {"tile_limits.csv": tile_limits(raw), "tile_counters.csv": tile_counters(raw),
                  "small_counters.csv": small_counters(raw), "tile_model.csv": tile_model(raw)}
        new = experiment_rows(raw)
    except (RawMissing, TypeError, KeyError, ValueError, OSError) as e:
        print(f"tables: error: {e}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    for name, (fields, rows) in tables.items():
        write(args.results / name, fields, rows)
        print(f"tables: {name}: {len(rows)} rows")
    path = args.results / "experiments.csv"
    with open(path, newline="") as f:
        old = list(csv.DictReader(f))
    kept = [r for r in old if r["experiment"] not in EXPERIMENTS]
    write(path, EXPERIMENT_COLUMNS, kept + new)
    print(f"tables: experiments.csv: {len(new)} rows of {', '.join(EXPERIMENTS)} in place of {len(old) - len(kept)}")
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
