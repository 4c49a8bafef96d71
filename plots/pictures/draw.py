"""Draws the steps' pictures, each from its step's configuration as the source states it (config.py
reads it), into docs/pictures/NN_name.svg: change a tile size, redraw, and the picture follows.

  python3 plots/pictures/draw.py              # redraw every picture into docs/pictures/
  python3 plots/pictures/draw.py --out DIR    # ... into DIR
  python3 plots/pictures/draw.py --check      # exit 1 when a committed picture differs from its redraw

Exit codes (common/exit_codes.hpp): 0 drawn, or every picture as committed (--check); 1 a picture
differs (--check); 6 no matplotlib here.

The SVGs are deterministic for one matplotlib (plots/constraints.txt's): fixed hash salt, no date,
text as text, DejaVu Sans (matplotlib's own font). Needs matplotlib; config.py, stream_k.py, padding.py
and tile_menu.py do not.
"""
import argparse
import filecmp
import math
import sys
import tempfile
import textwrap
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # plots/: its folders import as folder.module
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from pictures import config  # noqa: E402
from pictures import padding  # noqa: E402
from pictures import stream_k  # noqa: E402
from pictures import tile_menu  # noqa: E402

ROOT = config.ROOT
PICTURES = ROOT / "docs" / "pictures"

# Colours: one role each, in every picture.
A_COLOUR, B_COLOUR, C_COLOUR = "#4c72b0", "#dd8452", "#55a868"
LIGHT = {A_COLOUR: "#c9d6ec", B_COLOUR: "#f5d9c3", C_COLOUR: "#cde6d3"}
GREY, EDGE, MARK = "#eeeeee", "#444444", "#c44e52"
WARP_COLOURS = ["#8dd3c7", "#ffffb3", "#bebada", "#fb8072", "#80b1d3", "#fdb462", "#b3de69", "#fccde5"]


def matplotlib_modules():
    import matplotlib
    matplotlib.use("Agg")
    matplotlib.rcParams.update({
        "svg.hashsalt": "gemm-worklog-pictures",  # ids of clip paths and the like: the same every run
        "svg.fonttype": "none",  # text stays text: reviewable, and no glyph paths
        "font.family": "DejaVu Sans",
        "font.size": 9,
    })
    import matplotlib.pyplot as plt
    from matplotlib import patches
    return plt, patches


class Canvas:
    """One figure of boxes in element units: x to the right, y downward (row numbers)."""

    def __init__(self, width, height, inches=8.0, margin=None):
        self.plt, self.patches = matplotlib_modules()
        margin = 0.02 * max(width, height) if margin is None else margin
        self.figure = self.plt.figure(figsize=(inches, inches * (height + 2 * margin) / (width + 2 * margin)))
        self.ax = self.figure.add_axes((0, 0, 1, 1))
        self.ax.set_xlim(-margin, width + margin)
        self.ax.set_ylim(height + margin, -margin)
        self.ax.set_aspect("equal")
        self.ax.axis("off")

    def box(self, x, y, w, h, face="none", edge=EDGE, width=0.8, **kw):
        self.ax.add_patch(self.patches.Rectangle((x, y), w, h, facecolor=face, edgecolor=edge, linewidth=width, **kw))

    def grid(self, x, y, w, h, step_x, step_y, colour="#bbbbbb", width=0.4):
        """Lines every step_x columns and step_y rows inside the box (x, y, w, h)."""
        for i in range(1, int(w // step_x) + (0 if w % step_x else 0)):
            self.ax.plot([x + i * step_x] * 2, [y, y + h], color=colour, linewidth=width)
        for j in range(1, int(h // step_y) + (0 if h % step_y else 0)):
            self.ax.plot([x, x + w], [y + j * step_y] * 2, color=colour, linewidth=width)

    def text(self, x, y, words, size=9, ha="center", va="center", **kw):
        self.ax.text(x, y, words, fontsize=size, ha=ha, va=va, **kw)

    def note(self, x, y, words, characters, size=8, **kw):
        """A paragraph from (x, y) down, wrapped at about `characters` a line."""
        paragraphs = [textwrap.fill(p, characters) for p in words.split("\n")]
        self.ax.text(x, y, "\n".join(paragraphs), fontsize=size, ha="left", va="top", linespacing=1.4, **kw)

    def arrow(self, x0, y0, x1, y1, colour=EDGE, style="-|>", width=1.0, **kw):
        self.ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                         arrowprops=dict(arrowstyle=style, color=colour, linewidth=width, **kw))

    def save(self, path):
        self.figure.savefig(path, format="svg", metadata={"Date": None})
        self.plt.close(self.figure)


# ---- 01 to 05: the matrices, a block's tile of C and what it reads ------------------------------------

def layout_abc(m, n, k, gap):
    """Where A (m × k, left), B (k × n, top) and C (m × n, below B) go: their top-left corners."""
    return {"A": (0, k + gap), "B": (k + gap, 0), "C": (k + gap, k + gap)}, k + gap + n, k + gap + m


def draw_01(step):
    c = config.step_config(step)
    cols, rows = c["block_cols"], c["block_rows"]
    m, n, k = 4 * rows, 2 * cols, 32
    gap = 4
    at, width, height = layout_abc(m, n, k, gap)
    canvas = Canvas(width, height + 3, inches=7)
    (ax_, ay), (bx, by), (cx, cy) = at["A"], at["B"], at["C"]
    br, bc = 1, 1  # the block pictured: block row 1, block column 1
    row, col = br * rows + 2, bc * cols + 5  # and one of its threads
    canvas.box(ax_, ay, k, m, face=GREY)
    canvas.box(bx, by, n, k, face=GREY)
    canvas.box(cx, cy, n, m, face="white")
    canvas.grid(cx, cy, n, m, cols, rows, colour=EDGE, width=0.6)
    canvas.box(cx + bc * cols, cy + br * rows, cols, rows, face=LIGHT[C_COLOUR], edge=C_COLOUR, width=1.5)
    canvas.box(cx + bc * cols, cy + row, cols, 1, face=C_COLOUR, edge="none")  # the thread's warp
    canvas.box(cx + col, cy + row, 1, 1, face=MARK, edge="none")
    canvas.box(ax_, ay + row, k, 1, face=A_COLOUR, edge="none")
    canvas.box(bx + col, by, 1, k, face=B_COLOUR, edge="none")
    canvas.text(ax_ + k / 2, ay + m + 1.5, "A (M × K)")
    canvas.text(bx + n / 2, by + k + 1.2, "B (K × N)")
    canvas.text(cx + n / 2, cy + m + 1.5, f"C (M × N) in blocks of {cols} × {rows} threads")
    canvas.text(ax_ + k / 2, ay + row - 0.6, "row `row` of A", size=8, va="bottom", color=A_COLOUR)
    canvas.text(bx + col + 1, by + k / 2, "column `col` of B", size=8, ha="left", color=B_COLOUR)
    canvas.note(0, 0, f"A block is {cols} × {rows} threads, one element of C each (light green). Thread"
                f" (row, col), red, walks row `row` of A and column `col` of B: K FMAs, two loads each.\n"
                f"One warp is {cols} threads along x: {cols} adjacent columns of one row of C (dark green),"
                f" reading one element of A (a broadcast) and {cols} adjacent ones of B (coalesced) per k.",
                32)
    return canvas


def draw_block_tile(step, tile_m, tile_n, tile_k, words):
    """A block's tile of C and the strips of A and B it reads, one slice of K at a time (02, 05)."""
    m, n, k = 4 * tile_m, 4 * tile_n, 4 * tile_k
    gap = max(tile_k, tile_m) // 4
    at, width, height = layout_abc(m, n, k, gap)
    canvas = Canvas(width, height + gap, inches=7)
    (ax_, ay), (bx, by), (cx, cy) = at["A"], at["B"], at["C"]
    bi, bj, t = 1, 2, 1  # the block's tile row and column, the slice pictured
    canvas.box(ax_, ay, k, m, face=GREY)
    canvas.box(bx, by, n, k, face=GREY)
    canvas.box(cx, cy, n, m, face="white")
    canvas.grid(cx, cy, n, m, tile_n, tile_m)
    canvas.grid(ax_, ay, k, m, tile_k, tile_m)
    canvas.grid(bx, by, n, k, tile_n, tile_k)
    canvas.box(ax_, ay + bi * tile_m, k, tile_m, face=LIGHT[A_COLOUR], edge=A_COLOUR)
    canvas.box(bx + bj * tile_n, by, tile_n, k, face=LIGHT[B_COLOUR], edge=B_COLOUR)
    canvas.box(ax_ + t * tile_k, ay + bi * tile_m, tile_k, tile_m, face=A_COLOUR, edge=A_COLOUR)
    canvas.box(bx + bj * tile_n, by + t * tile_k, tile_n, tile_k, face=B_COLOUR, edge=B_COLOUR)
    canvas.box(cx + bj * tile_n, cy + bi * tile_m, tile_n, tile_m, face=C_COLOUR, edge=C_COLOUR, width=1.5)
    for t2 in range(4):  # the slices in order
        canvas.text(ax_ + (t2 + 0.5) * tile_k, ay + bi * tile_m + tile_m / 2, f"slice {t2}", size=7,
                    color="white" if t2 == t else A_COLOUR)
        canvas.text(bx + bj * tile_n + tile_n / 2, by + (t2 + 0.5) * tile_k, f"slice {t2}", size=7,
                    color="white" if t2 == t else B_COLOUR)
    canvas.text(ax_ + k / 2, ay + m + gap * 0.5, "A (M × K)")
    canvas.text(bx + n / 2, by + k + gap * 0.5, "B (K × N)")
    canvas.text(cx + n / 2, cy + m + gap * 0.5, "C (M × N)")
    canvas.text(cx + bj * tile_n + tile_n / 2, cy + bi * tile_m + tile_m / 2, words["tile"], color="white", size=8)
    canvas.note(0, 0, words["caption"], 40)
    return canvas


def draw_02(step):
    tile = config.step_config(step)["tile"]
    return draw_block_tile(step, tile, tile, tile, {
        "tile": f"block tile\n{tile} × {tile}",
        "caption": f"A block of {tile} × {tile} threads computes a {tile} × {tile} tile of C (green). It walks its"
                   f" strip of A and its strip of B one slice of K at a time ({tile} wide): all its threads copy the"
                   f" slice's {tile} × {tile} of A and {tile} × {tile} of B into shared memory, then each thread"
                   f" adds its dot product over the slice.\nEvery element brought from global memory serves {tile}"
                   f" FMAs."})


def draw_05(step):
    f = config.header_constants("common/wmma_tiles.cuh")["fragment_size"]
    return draw_block_tile(step, f, f, f, {
        "tile": f"one warp\n{f} × {f}",
        "caption": f"A block of one warp computes a {f} × {f} tile of C (green). Per {f}-wide slice of K it loads"
                   f" one {f} × {f} fragment of A and one of B from global memory and issues one mma_sync:"
                   f" {f}·{f}·{f} = {f ** 3} multiply-adds."})


def draw_thread_patch(step, c, rows_of, cols_of, words):
    """The block tile of C, the slices of A and B it multiplies, and the patch one thread owns (03, 04):
    rows_of(ty) and cols_of(tx) are the rows and columns of C that thread (ty, tx) accumulates."""
    bm, bn, bk = c["block_tile_m"], c["block_tile_n"], c["block_tile_k"]
    gap = max(bm, bn) // 16
    at, width, height = layout_abc(bm, bn, bk, gap)
    canvas = Canvas(width + 1, height + gap * 3, inches=6.5)
    (ax_, ay), (bx, by), (cx, cy) = at["A"], at["B"], at["C"]
    threads_y, threads_x = bm // c["thread_tile_m"], bn // c["thread_tile_n"]
    i = bk // 2  # the k of the slice pictured
    canvas.box(ax_, ay, bk, bm, face=GREY)
    canvas.box(bx, by, bn, bk, face=GREY)
    canvas.box(cx, cy, bn, bm, face="white")
    for thread, (colour, ty, tx) in enumerate([(C_COLOUR, 0, 0), ("#8172b3", 1, 2)]):
        rows, cols = rows_of(ty, threads_y), cols_of(tx, threads_x)
        for r in rows:
            for col in cols:
                canvas.box(cx + col, cy + r, 1, 1, face=colour, edge="none")
        if thread == 0:  # what thread (0, 0) reads of the slices
            for r in rows:
                canvas.box(ax_, ay + r, bk, 1, face=LIGHT[A_COLOUR], edge="none")
                canvas.box(ax_ + i, ay + r, 1, 1, face=A_COLOUR, edge="none")
            for col in cols:
                canvas.box(bx + col, by, 1, bk, face=LIGHT[B_COLOUR], edge="none")
                canvas.box(bx + col, by + i, 1, 1, face=B_COLOUR, edge="none")
    canvas.grid(cx, cy, bn, bm, words["grid_x"], words["grid_y"], colour="#999999", width=0.3)
    canvas.box(cx, cy, bn, bm)
    canvas.box(ax_, ay, bk, bm)
    canvas.box(bx, by, bn, bk)
    canvas.text(ax_ + bk / 2, ay + bm + gap * 0.6, f"A slice\n{bm} × {bk}", size=8)
    canvas.text(bx - gap * 0.3, by + bk / 2, f"B slice\n{bk} × {bn}", size=8, ha="right")
    canvas.text(cx + bn / 2, cy + bm + gap * 0.6, f"block tile of C, {bm} × {bn}: {threads_y} × {threads_x}"
                f" threads, {c['thread_tile_m']} × {c['thread_tile_n']} elements each", size=8)
    canvas.text(width / 2, cy + bm + gap * 2.0, words["caption"], size=8)
    return canvas


def draw_03(step):
    c = config.step_config(step)
    tm, tn = c["thread_tile_m"], c["thread_tile_n"]
    ty_count, tx_count = c["block_tile_m"] // tm, c["block_tile_n"] // tn
    return draw_thread_patch(
        step, c, lambda ty, threads_y: [ty + y * threads_y for y in range(tm)],
        lambda tx, threads_x: [tx + x * threads_x for x in range(tn)],
        {"grid_x": tx_count, "grid_y": ty_count,
         "caption": f"Thread (ty, tx) owns rows ty + {ty_count}·i and columns tx + {tx_count}·j (green: (0, 0);"
                    f" purple: (1, 2)).\nFor each k of the slice (dark: one k) thread (0, 0) reads {tm} values of A"
                    f" and {tn} of B for {tm * tn} FMAs"})


def draw_04(step):
    c = config.step_config(step)
    tm, tn = c["thread_tile_m"], c["thread_tile_n"]
    ty_count, tx_count = c["block_tile_m"] // tm, c["block_tile_n"] // tn
    return draw_thread_patch(
        step, c, lambda ty, threads_y: [((y // 4) * threads_y + ty) * 4 + y % 4 for y in range(tm)],
        lambda tx, threads_x: [((x // 4) * threads_x + tx) * 4 + x % 4 for x in range(tn)],
        {"grid_x": 4 * tx_count, "grid_y": 4 * ty_count,
         "caption": f"Thread (ty, tx) owns {tm // 4} × {tn // 4} groups of 4 × 4 (green: (0, 0); purple: (1, 2)),"
                    f" {4 * ty_count} rows and {4 * tx_count} columns apart.\nFor each k (dark) its"
                    f" {tm} values of A and {tn} of B (A's slice is stored transposed, k-major),\nfour float4 loads, give"
                    f" the outer product: {tm * tn} FMAs"})


# ---- 06, 08: the warp tiles inside a block tile -------------------------------------------------------

def draw_warp_tiles(step, c, frag_m, frag_n, frag_k, what):
    bm, bn = c["block_tile_m"], c["block_tile_n"]
    wm, wn = c["warp_tile_m"], c["warp_tile_n"]
    gap = max(bm, bn) // 12
    at, width, height = layout_abc(bm, bn, frag_k, gap)
    canvas = Canvas(width + 2, height + gap * 2.5, inches=7)
    (ax_, ay), (bx, by), (cx, cy) = at["A"], at["B"], at["C"]
    warps_m, warps_n = bm // wm, bn // wn
    canvas.box(ax_, ay, frag_k, bm, face=GREY)
    canvas.box(bx, by, bn, frag_k, face=GREY)
    for w in range(warps_m * warps_n):
        wy, wx = divmod(w, warps_n)
        colour = WARP_COLOURS[w % len(WARP_COLOURS)]
        canvas.box(cx + wx * wn, cy + wy * wm, wn, wm, face=colour, edge=EDGE, width=1.2)
        canvas.grid(cx + wx * wn, cy + wy * wm, wn, wm, frag_n, frag_m, colour="#777777", width=0.4)
        canvas.text(cx + wx * wn + wn / 2, cy + wy * wm + wm / 2, f"warp {w}", size=9,
                    bbox=dict(facecolor="white", edgecolor="none", pad=1.5))
    # warp 0's fragments of this k-step: A's down its rows, B's along its columns
    canvas.box(ax_, ay, frag_k, wm, face=WARP_COLOURS[0], edge=EDGE)
    canvas.grid(ax_, ay, frag_k, wm, frag_k, frag_m, colour=EDGE)
    canvas.box(bx, by, wn, frag_k, face=WARP_COLOURS[0], edge=EDGE)
    canvas.grid(bx, by, wn, frag_k, frag_n, frag_k, colour=EDGE)
    canvas.box(ax_, ay, frag_k, bm)
    canvas.box(bx, by, bn, frag_k)
    fm, fn = wm // frag_m, wn // frag_n
    canvas.text(ax_ + frag_k / 2, ay + bm + gap * 0.5, f"A\n{bm} × {frag_k}", size=8)
    canvas.text(bx - gap * 0.3, by + frag_k / 2, f"B {frag_k} × {bn}", size=8, ha="right")
    canvas.text(cx + bn / 2, cy + bm + gap * 0.5,
                f"block tile {bm} × {bn}: {warps_m} × {warps_n} warps of {wm} × {wn}, each {fm} × {fn}"
                f" accumulators of {frag_m} × {frag_n}", size=8)
    canvas.text(width / 2, cy + bm + gap * 1.4,
                f"Per k-step of {frag_k}, warp 0 loads its {fm} A fragments ({frag_m} × {frag_k}) and {fn} B"
                f" fragments ({frag_k} × {frag_n}) {what}\nand does {fm * fn} products: each A fragment serves"
                f" {fn} accumulators, each B fragment {fm}", size=8)
    return canvas


def draw_06(step):
    f = config.header_constants("common/wmma_tiles.cuh")["fragment_size"]
    return draw_warp_tiles(step, config.step_config(step), f, f, f, "from global memory")


def draw_08(step):
    mma = config.header_constants("common/mma_ldmatrix_gemm.cuh")
    return draw_warp_tiles(step, config.step_config(step), mma["mma_m"], mma["mma_n"], mma["mma_k"],
                    "from shared memory (ldmatrix)")


# ---- 07: the ring of stages ---------------------------------------------------------------------------

def draw_07(step):
    c = config.step_config(step)
    stages, bm, bn, bk, pad = c["stages"], c["block_tile_m"], c["block_tile_n"], c["block_tile_k"], c["row_padding"]
    stage_kib = (bm * (bk + pad) + bk * (bn + pad)) * 2 / 1024
    slices = stages + 4  # the slices pictured on the time line
    cell, label = 3.0, 9.0
    width, height = label + stages * (cell * 2 + 1) + 14, 4 + slices * 1.6 + 5.5
    canvas = Canvas(width, height, inches=8)
    # The ring at iteration t = stages - 1: buffer t % stages multiplied, the others being filled.
    t = stages - 1
    ring_y = 1.0
    canvas.text(0.5, ring_y + 1.0, f"the ring at slice t = {t}:", ha="left", size=8)
    for b in range(stages):
        x = label + b * (cell * 2 + 1)
        computing = b == t % stages
        slice_held = t if computing else t + (b - t % stages) % stages
        canvas.box(x, ring_y, cell * 2, 2, face=C_COLOUR if computing else LIGHT[A_COLOUR], edge=EDGE)
        canvas.text(x + cell, ring_y + 1, f"buffer {b}\n{'multiply' if computing else 'copy'} {slice_held}",
                    size=7, color="white" if computing else "black")
    x_end = label + stages * (cell * 2 + 1) - 1
    canvas.arrow(x_end + 0.3, ring_y + 1, x_end + 2.5, ring_y + 1)
    canvas.text(x_end + 2.8, ring_y + 1, f"slice t + {stages} refills buffer {t % stages}\nonce it is multiplied",
                ha="left", size=7)
    # The time line: slice s is copied during iterations s - (stages - 1) ... s - 1 and multiplied at s.
    top = ring_y + 4
    canvas.text(0.5, top - 0.6, "iteration →", ha="left", size=8)
    for it in range(slices):
        canvas.text(label + (it + 0.5) * cell, top - 0.6, str(it), size=7)
    for s in range(slices):
        y = top + s * 1.6
        canvas.text(0.5, y + 0.6, f"slice {s} (buffer {s % stages})", ha="left", size=7)
        first = max(0, s - (stages - 1))
        if s - first > 0 or s == 0:
            begin = first if s > 0 else 0
            end = s if s > 0 else 0
            if end > begin:
                canvas.box(label + begin * cell, y, (end - begin) * cell, 1.2, face=LIGHT[A_COLOUR], edge=A_COLOUR)
        if s < stages - 1:  # the prologue issues the first stages - 1 copies before iteration 0
            canvas.box(label - 0.8, y, 0.8, 1.2, face=LIGHT[A_COLOUR], edge=A_COLOUR)
        canvas.box(label + s * cell, y, cell, 1.2, face=C_COLOUR, edge=C_COLOUR)
    bottom = top + slices * 1.6 + 0.6
    warps = (bm // c["warp_tile_m"]) * (bn // c["warp_tile_n"])
    canvas.box(label, bottom, cell, 1.2, face=LIGHT[A_COLOUR], edge=A_COLOUR)
    canvas.text(label + cell + 0.5, bottom + 0.6, "cp.async copies in flight", ha="left", size=8)
    canvas.box(label + 5 * cell, bottom, cell, 1.2, face=C_COLOUR, edge=C_COLOUR)
    canvas.text(label + 6 * cell + 0.5, bottom + 0.6, f"multiplied by the block's {warps} warps", ha="left", size=8)
    canvas.text(width / 2, bottom + 3.2,
                f"{stages} stages of {bm} × {bk} of A and {bk} × {bn} of B ({stage_kib:.1f} KiB each with"
                f" {pad} halves of padding a row):\nwhile slice t is multiplied, slices t + 1 … t + {stages - 1}"
                f" are on their way", size=8)
    return canvas


# ---- 09: producer and consumers over the stages ------------------------------------------------------

def draw_09(step):
    c = config.step_config(step)
    hopper = config.header_constants("common/hopper.cuh")
    stages, bm, bn, bk = c["stages"], c["block_tile_m"], c["block_tile_n"], c["block_tile_k"]
    wgmma_m, threads = hopper["wgmma_m"], hopper["warpgroup_threads"]
    consumers = bm // wgmma_m
    stage_kib = (bm * bk + bk * bn) * 2 / 1024
    row_h = 3.2
    height = max(stages * row_h, consumers * 6.2) + 6
    width = 60
    canvas = Canvas(width, height, inches=8)
    # the producer warpgroup, left
    py = (stages * row_h) / 2 - 2 + 1
    canvas.box(1, py, 13, 5, face=LIGHT[A_COLOUR], edge=A_COLOUR, width=1.2)
    canvas.text(7.5, py + 2.5, f"producer warpgroup\n({threads} threads: one issues\nthe copies;"
                f" {c['producer_registers']} registers)", size=7)
    # the stages, middle
    for s in range(stages):
        y = 1 + s * row_h
        canvas.box(22, y, 14, 2.2, face=GREY, edge=EDGE)
        canvas.text(29, y + 1.1, f"stage {s}: A {bm} × {bk}, B {bk} × {bn}", size=7)
        canvas.box(18.4, y, 3.2, 1.0, face=A_COLOUR, edge="none")
        canvas.box(18.4, y + 1.2, 3.2, 1.0, face=B_COLOUR, edge="none")
        canvas.text(20, y + 0.5, f"full[{s}]", size=6, color="white")
        canvas.text(20, y + 1.7, f"empty[{s}]", size=6, color="white")
        canvas.arrow(14, py + 2.5, 18.3, y + 1.1, colour=A_COLOUR, width=0.8)
    # the consumers, right
    cy0 = (stages * row_h) / 2 - consumers * 3 + 1
    for w in range(consumers):
        y = cy0 + w * 6.2
        canvas.box(44, y, 15, 5, face=LIGHT[C_COLOUR], edge=C_COLOUR, width=1.2)
        canvas.text(51.5, y + 2.5, f"consumer warpgroup {w}\nrows {w * wgmma_m}–{(w + 1) * wgmma_m - 1} of the"
                    f" {bm} × {bn} tile\n({c['consumer_registers']} registers)", size=7)
        for s in range(stages):
            canvas.arrow(36, 1 + s * row_h + 1.1, 44, y + 2.5, colour=C_COLOUR, width=0.6, style="<|-")
    bottom = stages * row_h + 2
    canvas.text(width / 2, bottom + 1.6,
                f"The producer waits on empty[s], starts the TMA copies of slice t into stage s = t mod {stages}"
                f" ({stage_kib:.0f} KiB) on full[s];\nthe copies' bytes complete full[s]. Each consumer waits"
                f" on full[s], issues its wgmma on its {wgmma_m} rows, and arrives on empty[s] when done.",
                size=7.5)
    return canvas


# ---- 10: the persistent grid's grouped order and a cluster --------------------------------------------

EXAMPLE_RESIDENT_CLUSTERS = 66  # an H100's or H200's 132 SMs, one block each, in clusters of 2
EXAMPLE_SMS = 2 * EXAMPLE_RESIDENT_CLUSTERS


def grouped_tile(tile, tiles_m, tiles_n, group_rows):
    """gemm_math.hpp's grouped_tile: (row, column) of the tile numbered `tile` in grouped order."""
    per_group = group_rows * tiles_n
    first_row = (tile // per_group) * group_rows
    rows_in_group = min(group_rows, tiles_m - first_row)
    in_group = tile % per_group
    return first_row + in_group % rows_in_group, in_group // rows_in_group


def draw_10(step):
    c = config.step_config(step)
    bm, bn, cluster, group = c["block_tile_m"], c["block_tile_n"], c["cluster_size"], c["group_rows"]
    m = n = 4096
    tiles_m, tiles_n = stream_k.ceil_div(m, bm), stream_k.ceil_div(n, bn)
    cluster_rows = stream_k.ceil_div(tiles_m, cluster)
    resident = EXAMPLE_RESIDENT_CLUSTERS
    cell_w, cell_h = 2.0, 2.0 * bm * cluster / bn  # a cluster tile's shape
    grid_w, grid_h = tiles_n * cell_w, cluster_rows * cell_h
    right = grid_w + 6
    width, height = right + 20, grid_h + 7
    canvas = Canvas(width, height, inches=8.5)
    order = {}
    for t in range(cluster_rows * tiles_n):
        order[grouped_tile(t, cluster_rows, tiles_n, group)] = t
    for (r, col), t in order.items():
        wave = t // resident
        face = [C_COLOUR, LIGHT[C_COLOUR], "#f0f0f0", "white"][min(wave, 3)]
        canvas.box(col * cell_w, 1 + r * cell_h, cell_w, cell_h, face=face, edge="#999999", width=0.3)
        canvas.text(col * cell_w + cell_w / 2, 1 + r * cell_h + cell_h / 2, str(t), size=5,
                    color="white" if wave == 0 else "black")
    for g in range(0, cluster_rows, group):
        canvas.box(0, 1 + g * cell_h, grid_w, min(group, cluster_rows - g) * cell_h, edge=EDGE, width=1.2)
    canvas.text(grid_w / 2, 0.4, f"C at {m} × {n}: {cluster_rows} × {tiles_n} cluster tiles"
                f" ({cluster} × {bm} rows × {bn} columns), numbered in grouped order", size=7.5)
    canvas.note(0, grid_h + 2, f"Groups of {group} rows of tiles, column by column inside a group. Cluster c"
                f" computes tiles c, c + {resident}, c + {2 * resident}, … (as on 132 SMs: {resident} clusters"
                f" resident; dark green: the first {resident} tiles, light: the next {resident}). The tiles"
                f" resident at one time share a few rows of A and columns of B in L2.", 95, size=7.5)
    # one cluster: its blocks stacked, B's slice shared
    x0, y0 = right, 6
    block_w, block_h = 16, 16 * bm / bn
    canvas.box(x0, y0 - 4.5, block_w, 3, face=B_COLOUR, edge=EDGE)
    canvas.ax.plot([x0 + block_w / 2] * 2, [y0 - 4.5, y0 - 1.5], color="white", linewidth=1.5)
    canvas.text(x0 + block_w / 2, y0 - 5.2, f"B slice {c['block_tile_k']} × {bn}", size=7, va="bottom")
    for b in range(cluster):
        y = y0 + b * (block_h + 0.6)
        canvas.box(x0, y, block_w, block_h, face=LIGHT[C_COLOUR], edge=C_COLOUR, width=1.2)
        canvas.text(x0 + block_w / 2, y + block_h / 2, f"block {b}: {bm} × {bn}\nits own A slice", size=7)
    half = block_w / cluster
    for b in range(cluster):
        for target in range(cluster):
            canvas.arrow(x0 + (b + 0.5) * half, y0 - 1.5, x0 + block_w / 2 + (target - 0.5) * 3,
                         y0 + target * (block_h + 0.6) + 0.3, colour=B_COLOUR, width=0.7)
    canvas.text(x0 + block_w / 2, y0 + cluster * (block_h + 0.6) + 1.8,
                f"a cluster of {cluster}: each block copies\n1/{cluster} of B's slice, multicast into both",
                size=7)
    return canvas


# ---- 11: the split-K schedule -------------------------------------------------------------------------

STREAM_K_EXAMPLE = (3072, 3072, 3072)  # 11's README's example: 2 waves of 66 cluster tiles and 12 more


def fixup_words(fixup):
    """What a fixup a Config names does, in words."""
    alone = stream_k.alone_units(fixup)
    if alone >= stream_k.alone_units("ByFirstUnit"):
        return "each split tile fixed up by one unit, the one holding its slice 0"
    return f"a tile in more than {alone} parts fixed up by all of its units, shared"


def draw_11(step):
    c = config.step_config(step)
    m, n, k = STREAM_K_EXAMPLE
    resident = EXAMPLE_RESIDENT_CLUSTERS
    plans = [("whole tiles (WholeTiles, 10's schedule)", stream_k.plan_shape(dict(c, rule="WholeTiles"), m, n, k,
                                                                             resident)),
             (f"{c['rule']} (11's rule)", stream_k.plan_shape(c, m, n, k, resident))]
    k_tiles = plans[0][1].k_tiles
    longest = max(sum(e - b for _, b, e, _ in s.walk(w)) for _, s in plans for w in range(s.workers))
    scale = 60 / longest
    row = 0.36
    label = 7
    panel = resident * row + 6.5
    width, height = label + longest * scale + 8, 2 * panel + 2
    canvas = Canvas(width, height, inches=8)
    for p, (name, s) in enumerate(plans):
        top = 2.5 + p * panel
        canvas.text(label, top - 1.2, f"{name}: {s.tiles} tiles of {s.k_tiles} slices on {resident} clusters", ha="left",
                    size=8, weight="bold")
        for w in range(resident):
            x = label
            for tile, kb, ke, unit in s.walk(w) if w < s.workers else []:
                length = (ke - kb) * scale
                if unit < 0:
                    wave = (tile - s.sk_tiles) // resident
                    face = [C_COLOUR, "#8cc29a", "#b9dcc2"][wave % 3]
                else:
                    face = MARK
                canvas.box(x, top + w * row, length, row, face=face, edge="white", width=0.2)
                x += length
        for tick in range(0, longest + 1, k_tiles):
            canvas.ax.plot([label + tick * scale] * 2, [top, top + resident * row], color="#888888",
                           linewidth=0.4, linestyle=":")
        canvas.text(label - 0.5, top + resident * row / 2, f"cluster\n0 … {resident - 1}", ha="right", size=7)
        finish = max(sum(e - b for _, b, e, _ in s.walk(w)) for w in range(s.workers))
        canvas.text(label + finish * scale + 0.3, top + resident * row / 2, f"{finish}\nslices", ha="left", size=7)
        if s.units:
            lengths = " or ".join(str(p) for p in sorted({s.begin(u + 1) - s.begin(u) for u in range(s.split)},
                                                        reverse=True))
            cut = (f"in {s.split} aligned parts of {lengths} slices ({s.units} units)" if s.slots_per_unit == 1 else
                   f"dealt evenly over {s.units} units of {lengths} slices")
            canvas.text(label + 1, top + resident * row + 0.5,
                        f"red: tiles 0–{s.sk_tiles - 1} {cut}, {fixup_words(c['fixup'])};"
                        f"\nthen {s.tiles - s.sk_tiles} whole tiles: {(s.tiles - s.sk_tiles) // resident} waves",
                        ha="left", va="top", size=7)
        else:
            canvas.text(label + 1, top + resident * row + 0.5,
                        f"whole tiles only: the last wave keeps {s.tiles % resident} clusters busy for {k_tiles}"
                        f" slices while {resident - s.tiles % resident} wait", ha="left", va="top", size=7)
    canvas.text(width / 2, height - 0.5, f"time in k-slices →  ({m} × {n} × {k}, {c['block_tile_m']} × "
                f"{c['block_tile_n']} tiles in clusters of {c['cluster_size']}, fixup_slices = {c['fixup_slices']},"
                f" fixup {c['fixup']})", size=7.5)
    return canvas


# ---- 12: the shared fixup -----------------------------------------------------------------------------

def draw_12(step):
    """One split tile of the 3072³ plan (tile 0, in parts on clusters 0 …): fixed up by the unit holding
    its slice 0 (11's ByFirstUnit) against 12's fixup, shared by its units (stream_k_schedule.cuh's
    share_of over the pieces of stream_k_kernel.cuh's Layout: one 64-row × 32-column chunk each)."""
    c = config.step_config(step)
    hopper = config.header_constants("common/hopper.cuh")
    m, n, k = STREAM_K_EXAMPLE
    resident = EXAMPLE_RESIDENT_CLUSTERS
    s = stream_k.plan_shape(c, m, n, k, resident)
    alone = stream_k.alone_units(c["fixup"])
    tile = 0
    if s.sk_tiles == 0:
        raise ValueError(f"{step}'s picture: {c['rule']} splits no tile at {m} × {n} × {k}")
    c0, c1 = s.first_unit(tile), s.last_unit(tile)
    parts = c1 - c0 + 1
    if parts <= alone:
        raise ValueError(f"{step}'s picture: tile {tile} at {m} × {n} × {k} is in {parts} parts, which"
                         f" {c['fixup']} fixes up by one unit: nothing shared to draw")
    wgmma_m = hopper["wgmma_m"]
    consumers = c["block_tile_m"] // wgmma_m  # Layout::consumers
    chunk_cols = hopper["swizzle_bytes"] // 4  # Layout::c_chunk_cols: one 128-byte row of FP32
    chunks = c["block_tile_n"] // chunk_cols  # a consumer's pieces (piece_float4s = 4: one chunk)
    pieces = consumers * chunks  # SharedFixup::pieces, of one block of the cluster
    bands = c["cluster_size"] * consumers  # the cluster tile's 64-row bands
    rows, cols = c["cluster_size"] * c["block_tile_m"], c["block_tile_n"]
    chunk_kib = wgmma_m * chunk_cols * 4 // 1024
    tile_kib = rows * cols * 4 // 1024  # a unit's partial sums: its blocks' consumers' accumulators
    # writer[band][column]: the unit whose consumer adds up and writes that chunk (every block of a
    # cluster takes the same share of its own rows).
    writer = [[None] * chunks for _ in range(bands)]
    for u in range(c0, c1 + 1):
        for consumer in range(consumers):
            first, end = s.share_of(u, tile, consumer, consumers, pieces)
            for piece in range(first, end):
                half, within = divmod(piece, chunks)
                for rank in range(c["cluster_size"]):
                    writer[rank * consumers + half][within] = u
    written = {u: sum(line.count(u) for line in writer) for u in range(c0, c1 + 1)}
    colour = {u: WARP_COLOURS[(u - c0) % len(WARP_COLOURS)] for u in range(c0, c1 + 1)}

    side = 16  # the cluster tile, drawn square
    cell_w, cell_h = side * chunk_cols / cols, side * wgmma_m / rows
    panel_w, gap = 34, 4
    width = 2 * panel_w + gap
    canvas = Canvas(width, 40.5, inches=8)
    canvas.text(width / 2, 0.8, f"tile {tile} of {m} × {n} × {k} ({c['rule']}: {s.sk_tiles} tiles in {s.split}"
                f" parts on {resident} clusters): its {s.k_tiles} k-slices in {parts} parts, units {c0}–{c1}",
                size=8, weight="bold")
    # the parts along K
    scale = (width - 8) / s.k_tiles
    for u in range(c0, c1 + 1):
        first, end = s.begin(u) - tile * s.k_tiles, s.begin(u + 1) - tile * s.k_tiles
        canvas.box(4 + first * scale, 2.5, (end - first) * scale, 2.6, face=colour[u], edge=EDGE)
        canvas.text(4 + (first + end) / 2 * scale, 3.8, f"unit {u}, on cluster {u % s.workers}\nslices {first}–{end - 1}",
                    size=6.5)
    canvas.text(4, 6.1, "k-slice 0", size=6.5, ha="left")
    canvas.text(width - 4, 6.1, f"{s.k_tiles - 1}", size=6.5, ha="right")
    top = 9.5
    panels = [(0, "fixed up by one unit (11: ByFirstUnit)", None),
              (panel_w + gap, f"shared by its {parts} units ({int(step[:2])}: {c['fixup']})", writer)]
    for x0, title, owners in panels:
        canvas.text(x0 + panel_w / 2, top, title, size=8, weight="bold")
        # the units' partial sums, left; the tile of C, right
        box_w, box_h, tile_x = 11.5, 2.2, x0 + panel_w - side - 1
        tile_y = top + 2
        for i, u in enumerate(range(c0, c1 + 1)):
            y = tile_y + (side - parts * (box_h + 0.8) + 0.8) / 2 + i * (box_h + 0.8)
            kept = owners is None and u == c0  # the fixing unit keeps its own sum in registers
            canvas.box(x0 + 1, y, box_w, box_h, face=colour[u], edge=EDGE, linestyle="--" if kept else "-")
            canvas.text(x0 + 1 + box_w / 2, y + box_h / 2,
                        f"unit {u}: {'accumulators' if kept else f'partial, {tile_kib} KiB'}", size=6.5)
            if owners is None:  # every partial to unit c0, which writes the whole tile
                canvas.arrow(x0 + 1 + box_w, y + box_h / 2, tile_x - 0.3, tile_y + side / 2,
                             colour=MARK if kept else EDGE, width=1.0 if kept else 0.6)
            else:  # every partial to every chunk: each unit reads its chunks of all of them
                canvas.arrow(x0 + 1 + box_w, y + box_h / 2, tile_x - 0.3, y + box_h / 2, colour=EDGE, width=0.6)
        for band in range(bands):
            for column in range(chunks):
                u = c0 if owners is None else owners[band][column]
                canvas.box(tile_x + column * cell_w, tile_y + band * cell_h, cell_w, cell_h, face=colour[u],
                           edge="white", width=0.6)
                canvas.text(tile_x + (column + 0.5) * cell_w, tile_y + (band + 0.5) * cell_h, str(u), size=6.5)
        canvas.box(tile_x, tile_y, side, side, edge=EDGE, width=1.0)
        for rank in range(1, c["cluster_size"]):
            canvas.ax.plot([tile_x, tile_x + side], [tile_y + rank * consumers * cell_h] * 2, color=EDGE,
                           linewidth=1.0)
        canvas.text(tile_x + side / 2, tile_y + side + 1.4, f"C tile {rows} × {cols} ({c['cluster_size']} blocks),\n{bands * chunks} chunks of"
                    f" {wgmma_m} × {chunk_cols}", size=6.5)
        canvas.text(x0 + 1 + box_w / 2, tile_y + side + 0.9, "in the workspace" if owners is not None else
                    "in registers, in the workspace", size=6.5)
    later = f"{c0 + 1}–{c1}" if parts > 2 else f"{c1}"
    canvas.note(1, top + side + 5.2,
                f"Units {later} store their partial sums ({tile_kib} KiB each: {c['cluster_size']} blocks ×"
                f" {consumers} consumer warpgroups) and are done with it. Unit {c0}, holding slice 0, waits for all"
                f" {parts - 1}, adds them to its own accumulators in the order of the k-slices and writes the whole"
                f" tile (every chunk numbered {c0}): {(parts - 1) * tile_kib} KiB read and {tile_kib} KiB written"
                f" by one cluster after its {s.begin(c0 + 1) - s.begin(c0)} slices, before its whole tiles,"
                f" while the other {parts - 1} go on to theirs.",
                68, size=7)
    reads = sorted({parts * chunk_kib * count for count in written.values()})
    writes = sorted({chunk_kib * count for count in written.values()})
    counts = sorted(set(written.values()))
    canvas.note(panel_w + gap + 1, top + side + 5.2,
                f"Each unit stores its partial and waits for all {parts}; then its consumer warpgroups add up, in"
                f" the order of the k-slices, the {parts} partials of their share of the chunks (each numbered"
                f" by the unit that writes it), and write them: {' or '.join(map(str, counts))} chunks,"
                f" {' or '.join(map(str, reads))} KiB read and {' or '.join(map(str, writes))} KiB written a unit,"
                f" before its whole tiles."
                f" A tile in {alone} part{'s' if alone > 1 else ''} or fewer is still fixed up by one unit.",
                68, size=7)
    return canvas


# ---- 13: the swap -------------------------------------------------------------------------------------

SWAP_EXAMPLE_M = 16  # 13's run command: --m 16


def draw_13(step):
    c = config.step_config(step)
    before = config.step_config("12_stream_k")  # the tile 13 replaces for few rows
    hopper = config.header_constants("common/hopper.cuh")
    wgmma_m = hopper["wgmma_m"]
    m = SWAP_EXAMPLE_M
    width_n = config.swap_width(m)
    rows12, bm12, bn12, bn = (before["cluster_size"] * before["block_tile_m"], before["block_tile_m"],
                              before["block_tile_n"], c["block_tile_n"])
    s = 0.1  # drawing units per row or column of C
    x0, y0, x1 = 1, 3.5, 6 + bn12 * s
    tall = max(rows12, bn) * s
    width, height = x1 + 30, y0 + tall + 4
    canvas = Canvas(width, height, inches=8)
    # left: 12's cluster tile of C = A·B, M rows of it real
    canvas.text(x0 + bn12 * s / 2, y0 - 2, f"C = A·B in 12's cluster tile, {rows12} × {bn12}", size=8, weight="bold")
    for w in range(rows12 // wgmma_m):
        canvas.box(x0, y0 + w * wgmma_m * s, bn12 * s, wgmma_m * s, face="white", edge=EDGE, linestyle="--")
        canvas.text(x0 + bn12 * s / 2, y0 + (w + 0.7) * wgmma_m * s,
                    f"block {w * wgmma_m // bm12}, consumer warpgroup {w % (bm12 // wgmma_m)}: wgmma m{wgmma_m}",
                    size=7, color="#666666")
    canvas.box(x0, y0, bn12 * s, m * s, face=C_COLOUR, edge=C_COLOUR)
    canvas.text(x0 + bn12 * s / 2, y0 + m * s / 2, f"the {m} rows of C", size=7, color="white")
    canvas.note(x0, y0 + tall + 0.8, f"M = {m}: {rows12 - m} of the tile's {rows12} rows multiply rows that do"
                f" not exist; {m} / {rows12} of the tensor cores' work is used.", 60, size=7.5)
    # right: 13's tile of Cᵀ = Bᵀ·Aᵀ, M as the wgmma's n
    canvas.text(x1 + 12, y0 - 2, "Cᵀ = Bᵀ·Aᵀ in 13's tile", size=8, weight="bold")
    for w in range(bn // wgmma_m):
        y = y0 + w * wgmma_m * s
        canvas.box(x1, y, width_n * s, wgmma_m * s, face=WARP_COLOURS[w], edge=EDGE)
        canvas.text(x1 + width_n * s + 0.6, y + wgmma_m * s / 2,
                    f"consumer warpgroup {w}: columns {w * wgmma_m}–{(w + 1) * wgmma_m - 1} of C,\n"
                    f"one wgmma m{wgmma_m}n{width_n}k16 per k-step", ha="left", size=7)
    canvas.text(x1 + width_n * s / 2, y0 - 0.5, f"{width_n}", size=7)
    bounded, widest = config.swap_widths()
    widths = ", ".join(str(w) for _, w in bounded) + f" and {widest}"
    canvas.note(x1, y0 + bn * s + 0.8, f"{bn} columns of C × a width of {width_n}: with_width picks the narrowest"
                f" of {widths} that holds M. B's slices ({c['block_tile_k']} × {bn}) become the wgmma's"
                f" {wgmma_m}-row operand, A's {m} rows its n: no row wasted beyond that rounding.", 55, size=7.5)
    return canvas


# ---- 14: the padded copies ---------------------------------------------------------------------------

PAD_EXAMPLE = (4097, 4097, 4097)  # 14's run command and its README's example: every operand copied
PAD_EXAMPLE_FEW_ROWS, PAD_EXAMPLE_PADDED_ROWS = 8, 64  # 14's README's question: M × 4097 × 4096


def megabytes(size):
    return f"{size / 1e6:.1f} MB"


def route_words(m, n, k, pad):
    """What decide_padding does with a packed M × N × K problem, in words."""
    d = padding.plan_padding(m, n, k, k, n, n, pad)
    copies = [name for name, padded in [("A", d.pad_a), ("B", d.pad_b)] if padded]
    copied = f"{' and '.join(copies)} copied" if copies else "nothing copied"
    if d.route == "in_place":
        return (f"B's rows unaligned, M ≤ in_place_max_m = {pad['in_place_max_m']}: read in place"
                f" (in_place_gemm), nothing copied")
    if d.route == "swap_direct_c":
        return (f"{copied}; C's rows unaligned, M > {pad['swap_max_m']}, K ≤ direct_c_max_k ="
                f" {pad['direct_c_max_k']}: 13's swap kernel writes C directly")
    if d.route == "staged_c":
        return f"{copied}, C staged: 12 writes C₈, unpad_c copies it out"
    return f"{copied}; 13's launcher writes C"


def draw_14(step):
    """An operand whose rows TMA cannot describe (A at 4097³: rows 4097 halves apart) in memory, its
    copy with rows K8 apart (pad_copy), and where each copy goes at that shape (plan_padding's
    buffers; 13's launcher hands M > max_m to 12, whose padded C unpad_c copies out)."""
    pad = padding.constants()
    m, n, k = PAD_EXAMPLE
    d = padding.plan_padding(m, n, k, k, n, n, pad)
    if d.route != "staged_c" or not (d.pad_a and d.pad_b):
        raise ValueError(f"{step}'s picture: {m} × {n} × {k} no longer copies A, B and C ({d.route})")
    chunk = pad["halves_per_chunk"]
    width, height = 100, 49.5
    canvas = Canvas(width, height, inches=8)
    canvas.text(width / 2, 0.8, f"A at {m} × {n} × {k}: its rows lda = K = {k} halves apart, row r starting (r·{k})"
                f" mod {chunk} halves into a chunk", size=7.5, weight="bold")
    # left: A's first rows in memory, each from the start of the chunk that holds its first half
    x0, top, pitch, cell_h = 13.5, 4.6, 1.5, 1.1
    shown = 3 * chunk
    canvas.text(x0 + shown / 2, top - 1.4, f"A in memory: chunks of {chunk} halves (16 bytes)", size=7,
                weight="bold")
    for r in range(chunk):
        y = top + r * pitch
        first, offset = divmod(r * k, chunk)
        for j in range(shown):
            mine = j >= offset
            face = (A_COLOUR if j == offset else LIGHT[A_COLOUR]) if mine else GREY
            canvas.box(x0 + j, y, 1, cell_h, face=face, edge="white", width=0.4)
        for c in range(0, shown + 1, chunk):
            canvas.ax.plot([x0 + c] * 2, [y - 0.15, y + cell_h + 0.15], color=EDGE, linewidth=1.2)
        canvas.text(x0 - 0.5, y + cell_h / 2, f"row {r} at {chunk}·{first} + {offset}", ha="right", size=6.3)
    below = top + chunk * pitch + 0.2
    canvas.note(0.5, below, f"Dark: a row's first half; grey: the end of the row before. A TMA box row, like a"
                f" 16-byte cp.async, starts on a chunk: one row of A in {chunk // math.gcd(k, chunk)} does.", 60,
                size=6.5)
    # middle: the copy
    ax0 = x0 + shown + 1.5
    canvas.arrow(ax0, top + chunk * pitch / 2, ax0 + 6.5, top + chunk * pitch / 2, width=1.4)
    canvas.text(ax0 + 3.2, top + chunk * pitch / 2 - 0.5, "pad_copy,\nonce", size=7, va="bottom")
    # right: the copy, rows K8 apart: its first two chunks and its last two
    x1 = ax0 + 9.5
    head, gap = 2 * chunk, 3
    canvas.text(x1 + (2 * head + gap) / 2, top - 1.4, f"its copy in the workspace: rows K₈ = {d.k8} halves apart",
                size=7, weight="bold")
    for r in range(chunk):
        y = top + r * pitch
        for j in range(head):
            canvas.box(x1 + j, y, 1, cell_h, face=A_COLOUR if j == 0 else LIGHT[A_COLOUR], edge="white", width=0.4)
        for j in range(head):
            real = d.k8 - head + j < k
            canvas.box(x1 + head + gap + j, y, 1, cell_h, face=LIGHT[A_COLOUR] if real else "white",
                       edge="white" if real else "#bbbbbb", width=0.4)
            if not real:
                canvas.text(x1 + head + gap + j + 0.5, y + cell_h / 2, "0", size=5, color="#666666")
        canvas.text(x1 + head + gap / 2, y + cell_h / 2, "…", size=7)
        for c in range(0, head + 1, chunk):
            for x in (x1 + c, x1 + head + gap + c):
                canvas.ax.plot([x] * 2, [y - 0.15, y + cell_h + 0.15], color=EDGE, linewidth=1.2)
    for column, x in [(0, x1), (head - 1, x1 + head - 1), (d.k8 - head, x1 + head + gap),
                      (d.k8 - 1, x1 + 2 * head + gap - 1)]:
        canvas.text(x + 0.5, below + 0.1, str(column), size=5.5, va="top")
    last = d.k8 - chunk
    held = f"half {last}" if k - last == 1 else f"halves {last}–{k - 1}"
    canvas.note(x1, below + 1.4, f"Every row starts on a chunk; its last chunk holds {held} and {d.k8 - k} zeros"
                f" (K₈ − K). TMA reads nothing past K.", 56, size=6.5)

    # below: where each copy goes at this shape
    fy, bh, gap_y = 27.5, 4.2, 2.6
    canvas.text(width / 2, fy - 2.0, f"where the copies go at {m} × {n} × {k}: plan_padding's route {d.route},"
                f" each buffer on a {pad['scratch_alignment']}-byte boundary", size=7.5, weight="bold")

    def block(x, y, w, words, face, edge, colour="black", h=bh):
        canvas.box(x, y, w, h, face=face, edge=edge, width=1.0)
        canvas.text(x + w / 2, y + h / 2, words, size=6.3, color=colour)

    a_y, b_y = fy, fy + bh + gap_y
    mid = (a_y + b_y + bh) / 2
    block(0.5, a_y, 14, f"A: {m} × {k}\nlda {k}", LIGHT[A_COLOUR], A_COLOUR)
    block(0.5, b_y, 14, f"B: {k} × {n}\nldb {n}", LIGHT[B_COLOUR], B_COLOUR)
    for y, colour in [(a_y, A_COLOUR), (b_y, B_COLOUR)]:
        canvas.arrow(14.6, y + bh / 2, 20.9, y + bh / 2, colour=colour, width=1.0)
        canvas.text(17.7, y + bh / 2 - 0.4, "pad_copy", size=5.8, va="bottom")
    block(21, a_y, 20, f"A₈: {m} × {d.k8} halves\n{megabytes(m * d.k8 * padding.HALF_BYTES)},"
          f" at offset {d.a_offset}",
          A_COLOUR, A_COLOUR, "white")
    block(21, b_y, 20, f"B₈: {k} × {d.n8} halves\n{megabytes(k * d.n8 * padding.HALF_BYTES)},"
          f" at offset {d.b_offset}",
          B_COLOUR, B_COLOUR, "white")
    sx, sw = 46, 23
    canvas.arrow(41.1, a_y + bh / 2, sx - 0.1, mid - 0.6, width=0.8)
    canvas.arrow(41.1, b_y + bh / 2, sx - 0.1, mid + 0.6, width=0.8)
    block(sx, a_y, sw, f"13's launcher (swap_ab::launch):\nM = {m} > max_m = {pad['swap_max_m']}, so 12's\n"
                       f"stream-K GEMM, on the M × N₈ × K\n= {m} × {d.n8} × {k} problem", GREY, EDGE,
          h=b_y + bh - a_y)
    cx, cw = sx + sw + 6.5, width - sx - sw - 7
    canvas.arrow(sx + sw + 0.1, a_y + bh / 2, cx - 0.1, a_y + bh / 2, colour=C_COLOUR, width=1.0)
    canvas.text(sx + sw + 3.25, a_y + bh / 2 - 0.4, "TMA store", size=5.5, va="bottom")
    block(cx, a_y, cw, f"C₈: {m} × {d.n8} floats\n{megabytes(m * d.n8 * padding.FLOAT_BYTES)},"
          f" at offset {d.c_offset}",
          LIGHT[C_COLOUR], C_COLOUR)
    canvas.arrow(cx + cw / 2, a_y + bh + 0.1, cx + cw / 2, b_y - 0.1, colour=C_COLOUR, width=1.0)
    canvas.text(cx + cw / 2 + 0.6, a_y + bh + gap_y / 2, "unpad_c", size=5.8, ha="left")
    block(cx, b_y, cw, f"C: {m} × {n} floats, ldc {n}:\nC = C₈ + β·C, on its {n} columns", C_COLOUR, C_COLOUR,
          "white")
    canvas.text(sx + sw / 2, b_y + bh + 1.0, f"then 12's own workspace, from offset {d.rest_offset}", size=6.3,
                color="#666666")

    moved = padding.copy_bytes(m, n, k, d)
    others = [(m, n, k - 1), (PAD_EXAMPLE_FEW_ROWS, n, k - 1), (PAD_EXAMPLE_PADDED_ROWS, n, k - 1)]
    lines = [f"The copies move {' + '.join(f'{megabytes(size)} ({name})' for name, size in moved.items())} ="
             f" {megabytes(sum(moved.values()))}: a copy reads its operand once and writes it padded; the staged C"
             f" is written by 12, read by unpad_c, and written to C. Other shapes, packed:"]
    lines += [f"{a} × {b} × {c}: {route_words(a, b, c, pad)}." for a, b, c in others]
    canvas.note(0.5, b_y + bh + 2.6, "\n".join(lines), 135, size=6.5)
    return canvas


# ---- 15: the menu and its waves -----------------------------------------------------------------------

MENU_EXAMPLE = (1024, 1024, 1024)  # 15's README's example ("Why one tile loses") and its run command


def segment_lengths(s, worker, wave_of):
    """Worker's walk as (slices, kind) pairs: kind the wave of a whole tile (wave_of(tile)), or -1 a part
    of a split one."""
    return tuple((e - b, -1 if unit >= 0 else wave_of(tile)) for tile, b, e, unit in s.walk(worker))


def draw_15(step):
    """The menu's entries (tile_per_shape.cu's menu_items), each cluster tile to scale, and on one shape
    what every SM multiplies under the entry's schedule (11's rule on its own resident clusters): the
    busiest SM sets the time, the grey the SMs idle meanwhile."""
    m, n, k = MENU_EXAMPLE
    sms = EXAMPLE_SMS
    entries = tile_menu.menu(sms)
    rows = []
    for e in entries:
        c = e.config
        s = tile_menu.plan(e, m, n, k)
        work = tile_menu.work(e, m, n, k)
        slice_flop = 2 * c["block_tile_m"] * c["block_tile_n"] * c["block_tile_k"]  # one block's k-slice
        rows.append((e, s, work, slice_flop))
    busiest = max(work.slices * flop for _, _, work, flop in rows)
    useful = 2 * m * n * k
    utilization = {e.name: useful / (sms * work.slices * flop) for e, _, work, flop in rows}
    side = max(max(e.config["block_tile_m"] * e.config["cluster_size"], e.config["block_tile_n"]) for e in entries)

    tile_h, pitch, top = 5.0, 6.4, 4.2
    label, panel, panel_w = tile_h + 1.0, 20.5, 46.0
    width, height = 100, top + len(rows) * pitch + 4.6
    canvas = Canvas(width, height, inches=8.5)
    canvas.text(width / 2, 0.8, f"{m} × {n} × {k} on {sms} SMs: the menu's {len(entries)} entries to scale, and what"
                f" each SM multiplies under 11's rule", size=8, weight="bold")
    canvas.text(panel + panel_w / 2, top - 1.4, f"each SM's multiply-adds, SM 0 at the top, SM {sms - 1} at the"
                " bottom: the longest bar sets the time", size=6.5)
    canvas.text(tile_h / 2, top - 1.4, "cluster tile", size=6.5)
    scale = panel_w / busiest
    for i, (e, s, work, flop) in enumerate(rows):
        c = e.config
        y = top + i * pitch
        bm, bn, cluster = c["block_tile_m"], c["block_tile_n"], c["cluster_size"]
        unit = tile_h / side
        for b in range(cluster):  # the cluster's blocks, stacked: they share each slice of B
            canvas.box(0, y + b * bm * unit, bn * unit, bm * unit, face=LIGHT[C_COLOUR], edge=C_COLOUR, width=0.9)
        canvas.text(label, y + 0.7, e.name, ha="left", size=7, weight="bold")
        canvas.text(label, y + 2.1, f"{bm} × {bn}, {'no cluster' if cluster == 1 else f'clusters of {cluster}'}",
                    ha="left", size=6.3)
        canvas.text(label, y + 3.5, f"{e.stages} stages", ha="left", size=6.3)
        # the SMs: grey for the time of the busiest, bars for each one's segments
        canvas.box(panel, y, work.slices * flop * scale, tile_h, face=GREY, edge="none")
        sm_h = tile_h / sms

        def wave_of(tile):
            return (tile - s.sk_tiles) // s.workers

        groups = []  # [first worker, workers, segments]
        for w in range(s.workers):
            walk = segment_lengths(s, w, wave_of)
            if groups and groups[-1][2] == walk:
                groups[-1][1] += 1
            else:
                groups.append([w, 1, walk])
        for first, count, walk in groups:
            x = panel
            for slices, kind in walk:
                face = MARK if kind < 0 else [C_COLOUR, "#8cc29a", "#b9dcc2"][kind % 3]
                canvas.box(x, y + first * cluster * sm_h, slices * flop * scale, count * cluster * sm_h, face=face,
                           edge="white", width=0.3)
                x += slices * flop * scale
        canvas.box(panel, y, work.slices * flop * scale, tile_h, edge=EDGE, width=0.6)
        busy = sum(count * cluster for _, count, walk in groups if walk)
        waves = stream_k.ceil_div(s.tiles - s.sk_tiles, s.workers)
        kind = "cluster tiles" if cluster > 1 else "tiles"
        workers = "clusters" if cluster > 1 else "SMs"
        split = f", {s.sk_tiles} split in {s.split} parts" if s.units else ""
        terms = f"{work.slices} slices, {work.segments} segment{'s' if work.segments > 1 else ''}"
        terms += (", a shared fixup" if work.shared_fixup else ", a fixup") if work.fixup else ", no fixup"
        tx = panel + panel_w + 1.2
        canvas.text(tx, y + 0.7, f"{s.tiles} {kind} on {e.resident} {workers}: {waves} wave{'s' if waves != 1 else ''}"
                    f"{split}", ha="left", size=6.3)
        canvas.text(tx, y + 2.1, f"{busy} of {sms} SMs busy; {utilization[e.name]:.0%} used", ha="left", size=6.3)
        canvas.text(tx, y + 3.5, f"busiest: {terms}", ha="left", size=6.3)
    best = max(utilization.values())
    tied = [name for name, value in utilization.items() if round(value, 3) == round(best, 3)]
    canvas.note(0, top + len(rows) * pitch - 0.8,
                f"Grey: an SM idle while the busiest works; a bar's length is its multiply-adds ({busiest / 1e6:.1f}"
                f" MFLOP the longest), dark and light green its whole tiles wave by wave, red its parts of split tiles."
                f" Used: the problem's 2·M·N·K FLOP over {sms} × the busiest SM's. Counted in FLOP,"
                f" {', '.join(tied)} tie at {best:.0%}; the model's prices, measured for each entry"
                f" (tile_prices_15.csv), tell them apart: a smaller tile moves more bytes per FLOP.", 150, size=6.5)
    return canvas


# ---- all of them ---------------------------------------------------------------------------------------

PICTURES_DRAWN = {
    "01_naive": draw_01, "02_block_tiling": draw_02, "03_thread_coarsening": draw_03,
    "04_outer_product": draw_04, "05_wmma": draw_05, "06_multiwarp_wmma": draw_06,
    "07_async_pipeline": draw_07, "08_mma_ldmatrix": draw_08, "09_wgmma_tma": draw_09,
    "10_persistent_clusters": draw_10, "11_split_k": draw_11, "12_stream_k": draw_12, "13_swap_ab": draw_13,
    "14_pad_unaligned": draw_14, "15_tile_per_shape": draw_15,
}


def draw_all(out):
    """Draws every picture into the folder out; returns the paths written."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    for step, draw in PICTURES_DRAWN.items():
        draw(step).save(out / f"{step}.svg")
    return [out / f"{step}.svg" for step in PICTURES_DRAWN]


def differing(committed=PICTURES):
    """The committed pictures that differ from a redraw (or are missing), by name."""
    with tempfile.TemporaryDirectory() as folder:
        drawn = draw_all(folder)
        return [path.name for path in drawn
                if not (Path(committed) / path.name).exists() or not filecmp.cmp(path, Path(committed) / path.name,
                                                                                  shallow=False)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=PICTURES, help="folder to draw into (default docs/pictures)")
    parser.add_argument("--check", action="store_true", help="redraw into a temporary folder and compare")
    args = parser.parse_args(argv)
    try:
        matplotlib_modules()
    except ImportError:
        print("draw.py needs matplotlib: python3 -m pip install -r plots/requirements.txt -c plots/constraints.txt",
              file=sys.stderr)
        return exit_codes.EXIT_TOOL_MISSING
    if args.check:
        stale = differing(args.out)
        for name in stale:
            print(f"{args.out / name}: differs from its redraw (python3 plots/pictures/draw.py)")
        return exit_codes.EXIT_CHECK_FAILED if stale else exit_codes.EXIT_OK
    for path in draw_all(args.out):
        print(path)
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
