"""The charts of the shapes run, from shapes.csv's rows (shape_results): shapes_squares.png, TFLOP/s
against N for the square shapes, every engine, with the wave boundaries of a step's tiles marked
(the shapes tutorial's plot); and shapes_llm.png, heat maps of % of cuBLAS over the LLM layers
(M across, layer down), one per engine, after cuBLAS's own TFLOP/s. Needs matplotlib.
"""
import math

import matplotlib

matplotlib.use("Agg")  # draw straight to PNG files: no display is needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import LogNorm, TwoSlopeNorm  # noqa: E402

from shapes.shape_corpus import WAVE_TILES, wave_starts  # noqa: E402
from report.results_csv import timing_of  # noqa: E402
from shapes.shape_results import NOT_AVAILABLE, counted, engine_title, engines, fmt_tflops  # noqa: E402

SQUARES, LLM = "shapes_squares.png", "shapes_llm.png"
FP32 = "fp32"
# Steps in warm colours, peers in cool ones, cuBLAS in black.
STEP_COLORS = ["tab:red", "tab:orange", "tab:brown", "tab:pink", "tab:olive", "darkgoldenrod", "maroon"]
PEER_COLORS = ["tab:blue", "tab:green", "tab:purple", "tab:cyan"]



def _timing(rows):
    """", timing cold" (or warm) for a title, from the rows' timing column; "" for rows that do not say."""
    mode = timing_of([r for r in rows if r.get("gpu")])
    return f", timing {mode}" if mode else ""

def draw(rows, out):
    """Draw the charts that these rows allow into folder out; returns the paths written."""
    written = []
    if any(r["category"] == "square" and counted(r) for r in rows):
        plot_squares(rows, out / SQUARES)
        written.append(out / SQUARES)
    if any(r["category"] == "llm" and counted(r) for r in rows):
        plot_llm(rows, out / LLM)
        written.append(out / LLM)
    return written


def _colors(rows):
    colors, steps, peers = {}, iter(STEP_COLORS), iter(PEER_COLORS)
    for engine, kind, _ in engines(rows):
        colors[engine] = "black" if kind == "cublas" else next(steps, "gray") if kind == "step" else next(peers, "gray")
    return colors


def _gpu(rows):
    measured = [r for r in rows if r["gpu"]]
    return (measured[-1]["gpu"], measured[-1]["sm_count"]) if measured else ("?", None)


def plot_squares(rows, path):
    """TFLOP/s against N, the FP16 engines above and the FP32 ones (if any) below, each with the
    wave boundaries of its panel's newest step that WAVE_TILES knows."""
    squares = [r for r in rows if r["category"] == "square"]
    panels = [("FP16 inputs", [e for e in engines(squares) if e[2] != FP32])]
    if any(e[2] == FP32 for e in engines(squares)):
        panels.append(("FP32", [e for e in engines(squares) if e[2] == FP32]))
    colors = _colors(rows)
    gpu, sm_count = _gpu(rows)
    fig, axes = plt.subplots(len(panels), 1, figsize=(11, 5.5 * len(panels)), squeeze=False)
    for ax, (title, group) in zip(axes[:, 0], panels):
        for engine, kind, precision in group:
            points = sorted((r["n"], r["tflops"]) for r in squares if r["engine"] == engine and counted(r))
            # A line through the grid of tile multiples; the neighbours one off (N ± 1) as hollow
            # markers beside it, where their drop shows.
            grid = [(n, y) for n, y in points if n % 128 == 0]
            off = [(n, y) for n, y in points if n % 128]
            style = "--" if kind == "cublas" else ":" if kind == "peer" else "-"
            marker = "o" if kind == "step" else "s" if kind == "peer" else "."
            label = engine_title(engine, kind, precision, rows)
            if grid:
                ax.plot(*zip(*grid), style, color=colors[engine], marker=marker, ms=3.5, lw=1.2, label=label)
                label = None
            if off:
                ax.plot(*zip(*off), ls="", color=colors[engine], marker=marker, ms=6, mfc="none", label=label)
        ns = [r["n"] for r in squares if counted(r) and any(r["engine"] == e[0] for e in group)]
        wave_step = next((e[0] for e in group if e[1] == "step" and e[0] in WAVE_TILES), None)
        if wave_step and sm_count and ns:
            tile = WAVE_TILES[wave_step]
            top = ax.get_ylim()[1]
            for n, rounds in wave_starts(min(ns), max(ns), tile, sm_count):
                ax.axvline(n, color="gray", ls=":", lw=0.8)
                ax.text(n, top, f" {rounds}", fontsize=7, color="gray", va="top", ha="left")
            units = sm_count * tile[2]
            ax.plot([], [], color="gray", ls=":", lw=0.8,
                    label=f"{wave_step}: a new wave of its {tile[0]}×{tile[1]} tiles over {units:g} at once "
                          "(numbers: waves from there)")
        ax.set_xlabel("N (C = A·B, all N×N)")
        ax.set_ylabel("TFLOP/s")
        ax.set_ylim(bottom=0)
        ax.grid(alpha=0.3)
        handles, _ = ax.get_legend_handles_labels()
        handles.append(plt.Line2D([], [], ls="", marker="o", ms=6, mfc="none", color="gray",
                                  label="hollow: N ± 1 beside a multiple of 128 (alignment, tile quantization)"))
        ax.legend(handles=handles, fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2)
        ax.set_title(f"square GEMMs, {title}, on {gpu}{_timing(rows)}")
    _save(fig, path)


def _layers(llm):
    """The heat map's rows: (label, n, k) in corpus order."""
    return list(dict.fromkeys((r["label"], r["n"], r["k"]) for r in llm))


def plot_llm(rows, path):
    """One panel per engine: % of cuBLAS for each layer (down) and M (across); cuBLAS's own panel
    first, in TFLOP/s, which shows small M bound by memory."""
    llm = [r for r in rows if r["category"] == "llm"]
    layers = _layers(llm)
    ms = sorted({r["m"] for r in llm})
    fp16_cublas = [e for e in engines(llm) if e[1] == "cublas" and e[2] != FP32]
    panels = fp16_cublas[:1] + [e for e in engines(llm) if e[1] != "cublas"]
    columns = 2
    lines = math.ceil(len(panels) / columns)
    fig, axes = plt.subplots(lines, columns, figsize=(8.5 * columns, 0.42 * len(layers) * lines + 1.6 * lines),
                             squeeze=False)
    norm = TwoSlopeNorm(vmin=0, vcenter=100, vmax=150)
    for ax, (engine, kind, precision) in zip(axes.flat, panels):
        cells = {(r["label"], r["n"], r["k"], r["m"]): r for r in llm if r["engine"] == engine}
        reference = kind == "cublas"
        value = (lambda r: r["tflops"]) if reference else (lambda r: r["pct_cublas"])
        grid = [[value(cells[(*layer, m)]) if (*layer, m) in cells and counted(cells[(*layer, m)]) else math.nan
                 for m in ms] for layer in layers]
        values = [v for line in grid for v in line if not math.isnan(v)]
        if reference:
            image = ax.imshow(grid, aspect="auto", cmap="viridis",
                              norm=LogNorm(vmin=min(values), vmax=max(values)) if values else None)
        else:
            image = ax.imshow(grid, aspect="auto", cmap="RdYlGn", norm=norm)
        fig.colorbar(image, ax=ax, shrink=0.8, label="TFLOP/s" if reference else "% of cuBLAS")
        for i, layer in enumerate(layers):
            for j, m in enumerate(ms):
                row = cells.get((*layer, m))
                if row is None or not counted(row):
                    text = "FAIL" if row is not None and row["check"] == "FAIL" else "—"
                else:
                    text = fmt_tflops(row["tflops"]) if reference else f"{row['pct_cublas']:.0f}"
                color = "black"
                if not math.isnan(grid[i][j]):
                    red, green, blue, _ = image.cmap(image.norm(grid[i][j]))
                    color = "white" if 0.3 * red + 0.6 * green + 0.1 * blue < 0.45 else "black"
                ax.text(j, i, text, ha="center", va="center", fontsize=7, color=color)
        ax.set_xticks(range(len(ms)), [str(m) for m in ms], fontsize=8)
        ax.set_yticks(range(len(layers)), [f"{label} ({n}×{k})" for label, n, k in layers], fontsize=8)
        ax.set_xlabel("M (tokens)")
        unavailable = [r["note"] for r in llm if r["engine"] == engine and r["check"] == NOT_AVAILABLE]
        title = engine_title(engine, kind, precision, rows)
        ax.set_title(f"{title}: TFLOP/s" if reference else f"{title}: % of cuBLAS"
                     + (f"\n(not available: {unavailable[0]})" if unavailable else ""), fontsize=10)
    for ax in list(axes.flat)[len(panels):]:
        ax.axis("off")
    gpu, _ = _gpu(rows)
    fig.suptitle(f"LLM linear layers (N outputs × K inputs) against M tokens, on {gpu}{_timing(rows)}", fontsize=12)
    fig.tight_layout(rect=(0, 0, 1, 0.98))
    _save(fig, path)


def _save(fig, path):
    if not fig.get_constrained_layout() and fig._suptitle is None:
        fig.tight_layout()
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
