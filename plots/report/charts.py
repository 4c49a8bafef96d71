"""The charts of a worklog's results: tflops.png (every step at one size), sweep.png (the size
sweep), roofline.png and, from profile.csv, roofline_measured.png. These need matplotlib; the rest
of plots/ does not.
"""
import itertools
import math
import statistics

import matplotlib

matplotlib.use("Agg")  # draw straight to PNG files: no display is needed (or present on a server)
import matplotlib.pyplot as plt  # noqa: E402  (must come after matplotlib.use)
from matplotlib.lines import Line2D  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402
from matplotlib.ticker import FuncFormatter, NullFormatter  # noqa: E402

from profiling.profile_csv import gpu_name, measured_l2_bandwidth, roofline_points  # noqa: E402
from report.results_csv import (cublas_ms, cublas_name, failed_steps, gemm_flops, headline_size,  # noqa: E402
                         latest_per_step, newest, plottable, precision_label, precisions, timing_of)
from report.results_table import fmt_pct, fmt_tflops  # noqa: E402

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



def _timing(rows):
    """", timing cold" (or warm) for a title, from the rows' timing column; "" for rows that do not say."""
    mode = timing_of(rows)
    return f", timing {mode}" if mode else ""

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
    fig, ax = plt.subplots(figsize=(max(10, 2 + 1.1 * len(shown)), 5.5))  # wider as steps are added
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
    ax.set_title(f"GEMM {'×'.join(map(str, size))} on {newest(rows)['gpu']}{_timing(rows)}\n"
                 "bar labels: % of cuBLAS in the same precision")
    ax.legend(handles=handles, loc="upper left", fontsize=9)
    ax.grid(axis="y", which="both", alpha=0.3)
    if failed_steps(rows, size):
        fig.text(0.5, -0.02, "Not plotted, failed verification: " + ", ".join(failed_steps(rows, size)),
                 ha="center", va="top", color="red", fontsize=10)
    _save(fig, path)


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
    ax.set_title(f"size sweep: tile and wave quantization ({newest(square)['gpu']}{_timing(square)})")
    handles, _ = ax.get_legend_handles_labels()
    handles += [Line2D([], [], ls="", marker="o", color="black", label="N a multiple of 128"),
                Line2D([], [], ls="", marker="o", color="black", mfc="white", label="N not a multiple")]
    ax.legend(handles=handles, fontsize=8, loc="best")
    _save(fig, path)


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
    _label_points(fig, ax, [((intensity[r["step"]], r["tflops"]), r["step"]) for r in points])
    ax.grid(which="major", alpha=0.3)
    ax.set_xlabel("arithmetic intensity (FLOP/byte of modeled global-memory traffic)")
    ax.set_ylabel("TFLOP/s")
    ax.set_title(f"roofline, {'×'.join(map(str, size))} on {newest(rows)['gpu']}{_timing(rows)} (roofs: datasheet peaks)")
    _save(fig, path)


def plot_measured_roofline(profile, path, peaks):
    """The hierarchical roofline of profile.csv's rows: each step at FLOP/DRAM byte (filled) and
    FLOP/L2 byte (hollow), joined, at its profiled TFLOP/s; roofs: the datasheet compute and DRAM
    peaks and ncu's L2 peak."""
    points = roofline_points(profile)
    memory_roofs = [(f"DRAM {peaks[2]:g} GB/s (datasheet)", peaks[2], "-")]
    l2_bandwidth = measured_l2_bandwidth(profile)
    if l2_bandwidth:
        memory_roofs.append((f"L2 {l2_bandwidth:.0f} GB/s (ncu peak)", l2_bandwidth, "--"))
    fig, ax = plt.subplots(figsize=(9.5, 7))
    # The roofs are named in the legend, not on the chart: measured DRAM intensities are high (the
    # caches serve most operand reads), so the points crowd the right end, where the ceilings end.
    intensities = [x for p in points for x in p[2:4] if x]
    # Twice the usual room right of the rightmost point: the names go right of the points.
    draw_roofs(ax, peaks, intensities + [max(intensities) * 2], [p[4] for p in points], memory_roofs,
               labels_on_lines=False)
    for label, precision, dram, l2, tflops in points:
        color = COLORS.get(precision, "gray")
        if dram and l2:
            ax.plot([dram, l2], [tflops, tflops], color=color, lw=0.8, alpha=0.6)
        if l2:
            ax.plot(l2, tflops, "o", color=color, mfc="white")
        if dram:
            ax.plot(dram, tflops, "o", color=color)
    # Each name right of its step's rightmost point, where no roof is (the ceilings end at the
    # ridge points, left of most steps); steps of nearly the same speed and intensity (09, 10 and
    # cuBLAS FP16) have their names stacked apart, on thin lines back to their points, as in the
    # modeled roofline.
    _label_points(fig, ax, [((max(x for x in (dram, l2) if x), tflops), label)
                            for label, _, dram, l2, tflops in points], offset=10)
    roofs, _ = ax.get_legend_handles_labels()
    ax.legend(handles=roofs + [Line2D([], [], ls="", marker="o", color="black", label="FLOP per DRAM byte"),
                               Line2D([], [], ls="", marker="o", color="black", mfc="white",
                                      label="FLOP per L2 byte")],
              loc="upper left", fontsize=8)  # above the roofs, where no measured point can be
    ax.grid(which="major", alpha=0.3)
    ax.set_xlabel("arithmetic intensity (FLOP per byte moved, measured by Nsight Compute)")
    ax.set_ylabel("TFLOP/s (profiled run)")
    shape = "×".join(str(int(profile[0][c])) for c in "mnk")
    ax.set_title(f"measured roofline, {shape} on {gpu_name(profile)} (Nsight Compute, caches flushed)")
    _save(fig, path)


def _label_points(fig, ax, points, offset=6):
    """Name each point, just right of it (offset points away). Steps of about the same intensity
    and speed (a kernel and its variant on the same tiles) would put their names on top of each
    other: those names move apart, up and down, on a thin line back to their point."""
    def label(xy, text, offset, **line):
        return ax.annotate(text, xy, xytext=offset, textcoords="offset points", va="center", fontsize=9,
                           bbox=dict(facecolor="white", edgecolor="none", alpha=0.9, pad=1), **line)

    drafts = [label(xy, text, (offset, 0)) for xy, text in points]
    fig.canvas.draw()  # where each name lands on the page is known once drawn
    shifts = spread_label_shifts([tuple(d.get_window_extent().extents) for d in drafts], gap=2)
    for draft, (xy, text), shift in zip(drafts, points, shifts):
        if abs(shift) > 0.5:
            draft.remove()
            label(xy, text, (offset, shift * 72 / fig.dpi),  # pixels to points
                  arrowprops=dict(arrowstyle="-", color="gray", lw=0.6, shrinkA=0, shrinkB=3))


def spread_label_shifts(boxes, gap=0.0):
    """How far to move each label up (positive) or down, in the boxes' units, so that no two that
    share some width overlap, keeping their order from top to bottom. boxes: (x0, y0, x1, y1) per
    label, y up. Labels that share width, directly or through others, form a column; in a column,
    overlapping labels are stacked, gap apart, centred where they wanted to be on average."""
    count = len(boxes)
    column = list(range(count))  # union-find: the column of each label

    def find(i):
        while column[i] != i:
            column[i] = column[column[i]]
            i = column[i]
        return i

    for i in range(count):
        for j in range(i + 1, count):
            if boxes[i][0] < boxes[j][2] and boxes[j][0] < boxes[i][2]:
                column[find(i)] = find(j)
    shifts = [0.0] * count
    for root in {find(i) for i in range(count)}:
        # From the top down (by the middle of each label; of two at the same height, the one
        # listed first); a stack is [its top, its labels], and merges with the one above while
        # they overlap.
        members = sorted((i for i in range(count) if find(i) == root),
                         key=lambda i: (-(boxes[i][1] + boxes[i][3]), i))
        stacks = []
        for i in members:
            stacks.append([boxes[i][3], [i]])
            while len(stacks) > 1 and _stack_bottom(stacks[-2], boxes, gap) < stacks[-1][0] + gap:
                top_stack = stacks.pop(-2)
                labels = top_stack[1] + stacks[-1][1]
                # Where each label's top would be below the stack's top; the stack sits where the
                # shifts add up to zero.
                depths, depth = [], 0.0
                for k in labels:
                    depths.append(depth)
                    depth += boxes[k][3] - boxes[k][1] + gap
                stacks[-1] = [sum(boxes[k][3] + d for k, d in zip(labels, depths)) / len(labels), labels]
        for top, labels in stacks:
            depth = 0.0
            for k in labels:
                shifts[k] = top - depth - boxes[k][3]
                depth += boxes[k][3] - boxes[k][1] + gap
    return shifts


def _stack_bottom(stack, boxes, gap):
    top, labels = stack
    return top - sum(boxes[k][3] - boxes[k][1] for k in labels) - gap * (len(labels) - 1)


def _save(fig, path):
    for ax in fig.axes:  # label log axes now that their limits are final
        for axis in (ax.xaxis, ax.yaxis):
            if axis.get_scale() == "log":
                _plain_log_labels(axis)
    fig.savefig(path, dpi=150, bbox_inches="tight")
    plt.close(fig)
