#!/usr/bin/env python3
"""Turn the CSV rows written by the step executables into a table and charts.

    python3 plots/make_plots.py --csv RESULTS.csv [--sweep SWEEP.csv] --out DIR
                                [--peak-fp32 TFLOPS --peak-fp16 TFLOPS --bandwidth GBS]
                                [--profile PROFILE.csv]

Writes into DIR: table.md, tflops.png, roofline.png and, with --sweep, sweep.png. With --profile
(from ncu_profile.py), table.md gains the "limited by (measured)" column, and roofline_measured.png
is drawn.
Bad input prints one line starting with "make_plots: error:" and exits with code 2.
"""
import argparse
import itertools
import math
import statistics
import sys
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # draw straight to PNG files: no display is needed (or present on a server)
import matplotlib.pyplot as plt  # noqa: E402  (must come after matplotlib.use)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

import ncu_profile  # noqa: E402  (profile.csv and the "limited by (measured)" rule)
from arguments import add_peak_arguments  # noqa: E402
from csv_input import InputError, read_rows  # noqa: E402  (InputError: main() prints it, exit code 2)

# The CSV header every step executable writes, in this order.
COLUMNS = (
    "timestamp gpu sm_count compute_capability cuda_runtime cuda_driver step adds precision "
    "m n k alpha beta ms tflops cublas_ms cublas_tflops pct_cublas max_abs_err err_over_tol "
    "global_bytes status"
).split()
INT_COLUMNS = {"sm_count", "m", "n", "k", "global_bytes"}
FLOAT_COLUMNS = {"alpha", "beta", "ms", "tflops", "cublas_ms", "cublas_tflops", "pct_cublas",
                 "max_abs_err", "err_over_tol"}
# Left empty by a step run with --no-check (the error columns) or --no-cublas (all of these).
MAY_BE_EMPTY = {"cublas_ms", "cublas_tflops", "pct_cublas", "max_abs_err", "err_over_tol"}
POSITIVE = {"m", "n", "k", "ms", "cublas_ms"}  # we divide by these and take their logarithm
STATUSES = {"PASS", "FAIL", "UNCHECKED"}

PRECISION_LABELS = {"fp32": "FP32", "fp16": "FP16→FP32"}
CUBLAS_NAMES = {"fp32": "cuBLAS SGEMM", "fp16": "cuBLAS GemmEx FP16→FP32"}
COLORS = {"fp32": "tab:blue", "fp16": "tab:orange"}

# Datasheet peaks (not measurements) as (name substring, FP32 TFLOP/s,
# FP16 tensor-core dense TFLOP/s with FP32 accumulate, DRAM GB/s).
# Sources: NVIDIA H100 and H200 Tensor Core GPU datasheets, A100 80GB SXM datasheet,
# Ada Lovelace architecture whitepaper (RTX 4090). Tensor figures are the dense ones:
# datasheets often print the 2:4-sparsity number, which is twice as large.
# The first matching substring wins, so "H100 PCIe" must come before "H100" (SXM, HBM3).
GPU_PEAKS = (
    ("H100 PCIe", 51.2, 756.5, 2000.0),
    ("H100", 66.9, 989.4, 3350.0),
    ("H200", 66.9, 989.4, 4800.0),
    ("A100", 19.5, 312.0, 2039.0),
    ("RTX 4090", 82.6, 165.2, 1008.0),
)


def load_rows(path):
    """Read and validate a results CSV; return a list of dicts with numbers converted."""
    return read_rows(path, _check_header, _parse_row, no_rows="no data rows (the CSV has only a header)")


def _check_header(path, header):
    if not header:
        raise InputError(f"{path}: empty CSV (no header line)")
    problems = []
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing:
        problems.append("missing columns: " + ", ".join(missing))
    if unknown:
        problems.append("unknown columns: " + ", ".join(unknown))
    if problems:
        raise InputError(f"{path}: bad header: " + "; ".join(problems))


def _parse_row(raw, where):
    if None in raw or None in raw.values():  # DictReader's marks for too many / too few fields
        raise InputError(f"{where}: expected {len(COLUMNS)} fields")
    row = dict(raw)
    for col in COLUMNS:
        if col not in INT_COLUMNS and col not in FLOAT_COLUMNS:
            continue
        text = raw[col].strip()
        if text == "" and col in MAY_BE_EMPTY:
            row[col] = None
            continue
        try:
            row[col] = int(text) if col in INT_COLUMNS else float(text)
        except ValueError:
            raise InputError(f"{where}: column '{col}' is not a number: {text!r}") from None
        if col in POSITIVE and not (math.isfinite(row[col]) and row[col] > 0):
            raise InputError(f"{where}: column '{col}' must be positive, got {text!r}")
    if row["status"] not in STATUSES:
        raise InputError(f"{where}: column 'status' must be PASS, FAIL or UNCHECKED, "
                         f"got {row['status']!r}")
    try:
        time = datetime.fromisoformat(row["timestamp"])
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


def precision_label(precision):
    return PRECISION_LABELS.get(precision, precision.upper())


def cublas_name(precision):
    return CUBLAS_NAMES.get(precision, f"cuBLAS {precision_label(precision)}")


# --- the Markdown table -----------------------------------------------------------------

def fmt_ms(ms):
    """Three significant digits without an exponent: 40.0, 2.60, 0.720, 0.00512."""
    return f"{ms:.{max(0, 2 - math.floor(math.log10(ms)))}f}"


def fmt_tflops(tflops):
    return f"{tflops:.2f}" if tflops < 10 else f"{tflops:.1f}"


def fmt_pct(pct):
    return "—" if pct is None else f"{pct:.1f}%"


def _speedup(row, previous):
    # Compare with the step just before, even across precisions: the jump to tensor cores is
    # part of the story, but the cell says "(vs FP32)" so nobody reads it as a like-for-like win.
    # A failed step has no trustworthy time, so no speed-up is shown next to it.
    if previous is None or "FAIL" in (row["status"], previous["status"]):
        return "—"
    text = f"{previous['ms'] / row['ms']:.2f}×"
    if previous["precision"] != row["precision"]:
        text += f" (vs {precision_label(previous['precision'])})"
    return text


def _cells(*cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def build_table(rows, limited_by=None):
    """Return the comparison table as Markdown text. With limited_by, a {(step, precision,
    (m, n, k)): words} dict from ncu_profile.limited_by_step(), a last column says what the
    profiler found limits each row ("—" where profile.csv has no row for it)."""
    def measured(step, precision, size):
        return [] if limited_by is None else [limited_by.get((step, precision, size), "—")]

    last = newest(rows)
    lines = [
        f"GPU: {last['gpu']} · CUDA {last['cuda_runtime']} (driver {last['cuda_driver']})"
        f" · {last['time']:%Y-%m-%d}",
        "",
        _cells("step", "what it adds", "precision", "M×N×K", "median ms", "TFLOP/s",
               "% of cuBLAS (same precision)", "speed-up over previous step", "check",
               *([] if limited_by is None else ["limited by (measured)"])),
        "|---|---|---|---|---:|---:|---:|---:|---|" + ("" if limited_by is None else "---|"),
    ]
    steps = latest_per_step(rows)
    for size in sorted({size_of(r) for r in steps}):
        group = [r for r in steps if size_of(r) == size]
        shape = "×".join(map(str, size))
        previous = None
        for row in group:
            if row["status"] == "FAIL":  # a failed result is never shown as a number
                numbers = ("—", "—", "—")
            else:
                numbers = (fmt_ms(row["ms"]), fmt_tflops(row["tflops"]), fmt_pct(row["pct_cublas"]))
            lines.append(_cells(row["step"], row["adds"], precision_label(row["precision"]), shape,
                                *numbers, _speedup(row, previous), row["status"],
                                *measured(row["step"], row["precision"], size)))
            previous = row
        for precision in precisions(group):
            ms = cublas_ms(rows, precision, size)
            if ms is None:  # every run of this precision skipped cuBLAS
                continue
            lines.append(_cells(cublas_name(precision), "vendor library, the reference",
                                precision_label(precision), shape, fmt_ms(ms),
                                fmt_tflops(gemm_flops(size) / ms / 1e9), "100.0%", "—", "—",
                                *measured(ncu_profile.CUBLAS, precision, size)))
    lines += [
        "",
        "% of cuBLAS compares with cuBLAS timed in the same run and precision. "
        "Speed-up = previous step's time / this step's time; \"(vs FP32)\" marks a change of "
        "precision. FP16→FP32 means FP16 inputs with FP32 accumulation and output.",
    ]
    if limited_by is not None:
        lines[-1] += (" Limited by (measured): the rule in plots/ncu_profile.py (limited_by) applied to "
                      "Nsight Compute's counters in profile.csv.")
    return "\n".join(lines) + "\n"


# --- charts -----------------------------------------------------------------------------

def _plain_log_labels(axis):
    """Label a log axis 0.1, 1, 10 rather than 10^-1, 10^0, 10^1; on a short axis (under two
    decades) also label 2, 3 and 5 times each power of ten so it still has a few numbers."""
    axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
    low, high = axis.get_view_interval()
    if high / low < 100:
        between = FuncFormatter(lambda v, _: f"{v:g}" if round(v / 10 ** math.floor(math.log10(v)))
                                in (2, 3, 5) else "")
    else:
        between = NullFormatter()
    axis.set_minor_formatter(between)


def plot_tflops(rows, path):
    size = headline_size(rows)
    shown = plottable(rows, size)
    fig, ax = plt.subplots(figsize=(10, 5.5))
    x = range(len(shown))
    ax.bar(x, [r["tflops"] for r in shown], color=[COLORS.get(r["precision"], "gray") for r in shown])
    for i, r in enumerate(shown):
        ax.annotate(fmt_pct(r["pct_cublas"]), (i, r["tflops"]), xytext=(0, 3),
                    textcoords="offset points", ha="center", va="bottom", fontsize=9)
    handles = [Patch(color=COLORS.get(p, "gray"), label=precision_label(p)) for p in precisions(rows)]
    for p in precisions(rows):
        if cublas_ms(rows, p, size) is None:
            continue
        level = gemm_flops(size) / cublas_ms(rows, p, size) / 1e9
        handles.append(ax.axhline(level, ls="--", color=COLORS.get(p, "gray"),
                                  label=f"{cublas_name(p)}: {fmt_tflops(level)} TFLOP/s"))
    ax.set_yscale("log")
    ax.set_ylim(top=ax.get_ylim()[1] * 2)  # room for the legend above the cuBLAS lines
    ax.set_xticks(list(x), [r["step"].replace("_", "\n") for r in shown])
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"GEMM {'×'.join(map(str, size))} on {newest(rows)['gpu']}\n"
                 "bar labels: % of cuBLAS in the same precision")
    ax.legend(handles=handles, loc="upper left", fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    if failed_steps(rows, size):
        fig.text(0.5, -0.02, "Not plotted, failed verification: " + ", ".join(failed_steps(rows, size)),
                 ha="center", va="top", color="red", fontsize=10)
    save_figure(fig, path)


def square_rows(rows):
    """The N×N×N rows of a sweep CSV (the sweep only runs square sizes)."""
    square = [r for r in rows if r["m"] == r["n"] == r["k"]]
    if not square:
        raise InputError("sweep CSV has no square (N×N×N) rows")
    return square


def plot_sweep(square, path):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    markers = itertools.cycle("osD^vP*X")
    latest = latest_per_step(square)
    for p in precisions(square):
        for step in dict.fromkeys(r["step"] for r in latest if r["precision"] == p):
            points = sorted((r["n"], r["tflops"]) for r in latest
                            if r["step"] == step and r["precision"] == p and r["status"] != "FAIL")
            _sweep_line(ax, points, COLORS.get(p, "gray"), "-", next(markers),
                        f"{step} ({precision_label(p)})")
        with_cublas = [r for r in square if r["precision"] == p and r["cublas_tflops"] is not None]
        points = [(n, statistics.median(r["cublas_tflops"] for r in with_cublas if r["n"] == n))
                  for n in sorted({r["n"] for r in with_cublas})]
        _sweep_line(ax, points, COLORS.get(p, "gray"), "--", next(markers), cublas_name(p))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    # Ticks and gridlines only at the multiples of 128 (the tile size): N+1 sits just right of one.
    ax.set_xticks(sorted({r["n"] for r in square if r["n"] % 128 == 0}) or ax.get_xticks())
    ax.xaxis.set_minor_locator(plt.NullLocator())
    ax.grid(which="both", alpha=0.3)
    ax.set_xlabel("N (square N×N×N)")
    ax.set_ylabel("TFLOP/s (log scale)")
    ax.set_title(f"size sweep: tile and wave quantization ({newest(square)['gpu']})")
    handles, _ = ax.get_legend_handles_labels()
    handles += [Line2D([], [], ls="", marker="o", color="black", label="N a multiple of 128"),
                Line2D([], [], ls="", marker="o", color="black", mfc="white", label="N not a multiple")]
    ax.legend(handles=handles, fontsize=8, loc="best")
    save_figure(fig, path)


def _sweep_line(ax, points, color, style, marker, label):
    """A line through all points; filled markers at multiples of 128, hollow ones elsewhere."""
    if not points:
        return
    ns, ys = zip(*points)
    ax.plot(ns, ys, style, color=color, marker=marker, mfc="none", label=label)
    aligned = [(n, y) for n, y in points if n % 128 == 0]
    if aligned:
        ax.plot(*zip(*aligned), ls="", color=color, marker=marker)


def resolve_peaks(gpu, peak_fp32=None, peak_fp16=None, bandwidth=None):
    """(FP32 TFLOP/s, FP16 TFLOP/s, GB/s) from the table, each overridable; None if unknown."""
    table = next((p[1:] for p in GPU_PEAKS if p[0].lower() in gpu.lower()), (None, None, None))
    peaks = tuple(flag if flag is not None else value
                  for flag, value in zip((peak_fp32, peak_fp16, bandwidth), table))
    return None if None in peaks else peaks


def draw_roofs(ax, peaks, intensities, tflops, memory_roofs, labels_on_lines=True):
    """Log-log axes spanning the points and the ridge points, with the FP32 and FP16 compute
    ceilings of peaks and one sloped roof per (label, GB/s, line style) in memory_roofs. Each line
    is labelled on the chart (a ceiling's label below its right end, a roof's along its slope) or,
    with labels_on_lines=False, only as its matplotlib label, for the caller's legend. The limits
    are final: points plotted afterwards do not move them."""
    fp32, fp16 = peaks[0], peaks[1]
    bandwidths = [bandwidth for _, bandwidth, _ in memory_roofs]
    lo = min([*intensities, *(fp32 * 1000 / b for b in bandwidths)]) / 4
    hi = max([*intensities, *(fp16 * 1000 / b for b in bandwidths)]) * 4
    for label, bandwidth, style in memory_roofs:
        ax.plot([lo, fp16 * 1000 / bandwidth], [bandwidth * lo / 1000, fp16], style, color="black",
                label=label)
    # The ceilings start where the fastest memory roof meets them.
    for p, peak, name in (("fp32", fp32, "FP32 CUDA cores"), ("fp16", fp16, "FP16 tensor cores (dense)")):
        ax.plot([peak * 1000 / max(bandwidths), hi], [peak, peak], color=COLORS[p],
                label=f"{name} {peak:g} TFLOP/s")
        if labels_on_lines:  # below the roof: the steps' labels sit right of points that can reach up to it
            ax.text(hi / 1.1, peak / 1.12, f"{name} {peak:g} TFLOP/s", ha="right", va="top",
                    color=COLORS[p], fontsize=9)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlim(lo, hi)
    ax.set_ylim(min([min(bandwidths) * lo / 1000, *tflops]) / 2, fp16 * 2.5)
    # Write each bandwidth along its roof: the on-screen angle is known once limits are set.
    x0, x1 = lo * 1.5, lo * 15
    for label, bandwidth, _ in memory_roofs if labels_on_lines else ():
        (a, b), (c, d) = ax.transData.transform([(x0, bandwidth * x0 / 1000), (x1, bandwidth * x1 / 1000)])
        ax.text(x0, bandwidth * x0 / 1000 * 1.3, label, fontsize=9,
                rotation=math.degrees(math.atan2(d - b, c - a)), rotation_mode="anchor")


def plot_roofline(rows, path, peaks):
    bandwidth = peaks[2]
    size = headline_size(rows)
    points = [r for r in plottable(rows, size) if r["global_bytes"] > 0]
    intensity = {r["step"]: gemm_flops(size) / r["global_bytes"] for r in points}
    fig, ax = plt.subplots(figsize=(9, 5.5))
    draw_roofs(ax, peaks, list(intensity.values()), [r["tflops"] for r in points],
               [(f"memory {bandwidth:g} GB/s", bandwidth, "-")])
    for r in points:
        ax.plot(intensity[r["step"]], r["tflops"], "o", color=COLORS.get(r["precision"], "gray"))
        ax.annotate(r["step"], (intensity[r["step"]], r["tflops"]), xytext=(6, -3),
                    textcoords="offset points", fontsize=9,
                    bbox=dict(facecolor="white", edgecolor="none", alpha=0.9, pad=1))
    ax.grid(which="major", alpha=0.3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte of modeled global-memory traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"roofline, {'×'.join(map(str, size))} on {newest(rows)['gpu']} (roofs: datasheet peaks)")
    save_figure(fig, path)


def save_figure(fig, path):
    for ax in fig.axes:  # label log axes now that their limits are final
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                _plain_log_labels(axis)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)


# --- command line -----------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="results CSV written by the steps")
    parser.add_argument("--sweep", help="size-sweep CSV (adds sweep.png)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    add_peak_arguments(parser)
    parser.add_argument("--profile", help="profile.csv from ncu_profile.py (adds the \"limited by "
                                          "(measured)\" column and roofline_measured.png)")
    return parser.parse_args(argv)


def main(argv=None):
    """Run the command line; return the exit code (0 ok, 2 bad input)."""
    args = parse_args(argv)
    try:  # read and check every input before writing anything
        rows = load_rows(args.csv)
        sweep = square_rows(load_rows(args.sweep)) if args.sweep else None
        profile = ncu_profile.load_profile(args.profile) if args.profile else None
    except InputError as e:
        print(f"make_plots: error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "table.md", out / "tflops.png"]
    limited_by = ncu_profile.limited_by_step(profile) if profile else None
    written[0].write_text(build_table(rows, limited_by), encoding="utf-8")
    plot_tflops(rows, out / "tflops.png")
    if sweep:
        plot_sweep(sweep, out / "sweep.png")
        written.append(out / "sweep.png")
    gpu = newest(rows)["gpu"]
    peaks = resolve_peaks(gpu, args.peak_fp32, args.peak_fp16, args.bandwidth)
    if peaks:
        plot_roofline(rows, out / "roofline.png", peaks)
        written.append(out / "roofline.png")
    else:
        print(f"make_plots: warning: no datasheet peaks for '{gpu}'; skipping roofline.png "
              "(give --peak-fp32, --peak-fp16 and --bandwidth)", file=sys.stderr)
    if profile:
        skipped = ncu_profile.write_measured_roofline(profile, out / "roofline_measured.png", args.peak_fp32,
                                                      args.peak_fp16, args.bandwidth)
        if skipped:
            print(f"make_plots: warning: {skipped}", file=sys.stderr)
        else:
            written.append(out / "roofline_measured.png")
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
