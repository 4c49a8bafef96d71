"""The Markdown table of a worklog's results (table.md): one row per step and size, then cuBLAS;
with profile.csv, a last column of what limits each (profile_csv.limited_by_step).
Needs only the Python standard library.
"""
import math

from profiling.profile_csv import CUBLAS
from shapes.shape_results import peer_table_rows
from report.results_csv import (cublas_ms, timing_words, cublas_name, gemm_flops, latest_per_step, newest,
                         precision_label, precisions, size_of)


def fmt_ms(ms):
    """Three significant digits without an exponent: 40.0, 2.60, 0.720, 0.00512."""
    return f"{ms:.{max(0, 2 - math.floor(math.log10(ms)))}f}"


def fmt_ms_spread(row):
    """A step's median ms and, where its row has them, the 10th and 90th percentiles of the rounds
    behind it, "0.720 (0.715–0.731)"; the median alone from a CSV written before the harness wrote
    them (the committed ones)."""
    low, high = row.get("ms_p10"), row.get("ms_p90")
    text = fmt_ms(row["ms"])
    return text if low is None or high is None else f"{text} ({fmt_ms(low)}–{fmt_ms(high)})"


def fmt_pct_spread(row):
    """A step's % of cuBLAS and, where its row has the spreads of both medians, how far the ratio
    moves with them: cuBLAS's fastest tenth over the step's slowest, to cuBLAS's slowest over the
    step's fastest, "97.8% (96.1–99.0)"; the % alone without them (the committed rows)."""
    low, high = row.get("ms_p10"), row.get("ms_p90")
    cublas_low, cublas_high = row.get("cublas_ms_p10"), row.get("cublas_ms_p90")
    text = fmt_pct(row.get("pct_cublas"))
    if None in (low, high, cublas_low, cublas_high) or not low or not high:
        return text
    return f"{text} ({100 * cublas_low / high:.1f}–{100 * cublas_high / low:.1f})"


def fmt_tflops(tflops):
    return f"{tflops:.2f}" if tflops < 10 else f"{tflops:.1f}"


def fmt_pct(pct):
    return "—" if pct is None else f"{pct:.1f}%"


# How each row was timed, in words: the steps' and cuBLAS's by the CSV's `timer` column
# (common/harness_timing.hpp), the peers' always by CUDA events (plots/shapes/peers.py).
TIMER_WORDS = {"kernels": "the kernels' own timestamps (CUPTI)", "events": "CUDA events around each run"}
PEER_TIMER = "CUDA events around each run, behind a spin kernel"


def timer_sentence(steps, has_peers):
    """Which timer each row used, or "" when the rows do not say (CSVs written before the `timer`
    column) and there are no peers."""
    used = [t for t in TIMER_WORDS if any(r.get("timer") == t for r in steps)]
    parts = []
    if len(used) == 1:
        parts.append(f"the steps and cuBLAS by {TIMER_WORDS[used[0]]}")
    elif used:
        parts.append(f"the steps and cuBLAS by {TIMER_WORDS['kernels']}, or by {TIMER_WORDS['events']} where CUPTI "
                     "could not be had (the CSV's timer column says which)")
    if has_peers:
        parts.append(f"torch.matmul and Triton by {PEER_TIMER}")
    return f" Timed by: {'; '.join(parts)}." if parts else ""


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


def _peer_cells(peer, limited_by):
    engine, what, precision, shape, ms, tflops, pct, check = peer
    numbers = ("—", "—", "—") if ms is None else (fmt_ms(ms), fmt_tflops(tflops), fmt_pct(pct))
    return _cells(engine, what, precision, shape, *numbers, "—", check, *([] if limited_by is None else ["—"]))


def _cells(*cells):
    return "| " + " | ".join(str(c).replace("|", "\\|") for c in cells) + " |"


def build_table(rows, limited_by=None, peers=None):
    """Return the comparison table as Markdown text. With limited_by, a {(step, precision,
    (m, n, k)): words} dict from profile_csv.limited_by_step(), a last column says what the
    profiler found limits each row ("—" where profile.csv has no row for it). With peers, the rows
    of peers.csv (shape_results), each peer follows cuBLAS at its size (at the end when the steps
    ran at no such size), its % against the cuBLAS of its own process."""
    def measured(step, precision, size):
        return [] if limited_by is None else [limited_by.get((step, precision, size), "—")]

    last = newest(rows)
    timing = timing_words(rows)
    lines = [
        f"GPU: {last['gpu']} · CUDA {last['cuda_runtime']} (driver {last['cuda_driver']})"
        f" · {last['time']:%Y-%m-%d}" + (f" · timing {timing}" if timing else ""),
        "",
        _cells("step", "what it adds", "precision", "M×N×K", "median ms", "TFLOP/s",
               "% of cuBLAS (same precision)", "speed-up over previous step", "check",
               *([] if limited_by is None else ["limited by (measured)"])),
        "|---|---|---|---|---:|---:|---:|---:|---|" + ("" if limited_by is None else "---|"),
    ]
    steps = latest_per_step(rows)
    peer_rows = [] if peers is None else peer_table_rows(peers)
    sizes = sorted({size_of(r) for r in steps})
    for size in sizes:
        group = [r for r in steps if size_of(r) == size]
        shape = "×".join(map(str, size))
        previous = None
        for row in group:
            if row["status"] == "FAIL":  # a failed result is never shown as a number
                numbers = ("—", "—", "—")
            else:
                numbers = (fmt_ms_spread(row), fmt_tflops(row["tflops"]), fmt_pct_spread(row))
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
                                *measured(CUBLAS, precision, size)))
        lines += [_peer_cells(p, limited_by) for p in peer_rows if p[3] == shape]
    shown = {"×".join(map(str, size)) for size in sizes}
    lines += [_peer_cells(p, limited_by) for p in peer_rows if p[3] not in shown]
    lines += [
        "",
        "% of cuBLAS compares with cuBLAS timed in the same run and precision. "
        "Speed-up = previous step's time / this step's time; \"(vs FP32)\" marks a change of "
        "precision. FP16→FP32 means FP16 inputs with FP32 accumulation and output.",
    ]
    if any(r.get("ms_p10") is not None and r["status"] != "FAIL" for r in steps):
        lines[-1] += (" A step's median ms is followed, in parentheses, by the 10th and 90th percentiles of its "
                      "timed rounds, and its % of cuBLAS by the range those and cuBLAS's percentiles give the ratio "
                      "(cuBLAS's 10th over the step's 90th, to cuBLAS's 90th over the step's 10th).")
    if peer_rows:
        lines[-1] += (" torch.matmul and Triton are what a reader would use instead of writing CUDA "
                      "(plots/shapes/peers.py): each is timed in its own process in alternation with cuBLAS's "
                      "cublasGemmEx there, and its % is against that.")
    lines[-1] += timer_sentence(steps, bool(peer_rows))
    if limited_by is not None:
        lines[-1] += (" Limited by (measured): the rule in plots/profiling/profile_csv.py (limited_by) applied to "
                      "Nsight Compute's counters in profile.csv.")
    return "\n".join(lines) + "\n"
