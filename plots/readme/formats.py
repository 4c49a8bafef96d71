"""What a cell or a table column shows of a value: the formats (`format=`), choosing rows by their
columns (`KEY=VALUE`), and the quantities of a results row that are not a column of its CSV
(`column=` may name them). Shared by the filler's cells (filler.py) and its tables (table.py).
Needs only the Python standard library.
"""
import math
import re

from report.results_csv import TIMING_WORDS, cublas_name, precision_label
from report.results_table import fmt_ms, fmt_pct, fmt_tflops


class Missing(Exception):
    """A block or cell asks for something the results do not have; the filler says where."""


def number(row, column):
    value = row.get(column)
    if value is None or value == "":
        return None
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def significant(value, digits):
    """value to `digits` significant digits, trailing zeros kept: 3.40, 0.0625, 447."""
    if value == 0:
        return "0"
    decimals = digits - 1 - math.floor(math.log10(abs(value)))
    rounded = round(value, decimals)
    if rounded and math.floor(math.log10(abs(rounded))) != math.floor(math.log10(abs(value))):
        decimals -= 1  # 999.7 became 1000: one digit fewer after the point
    return f"{rounded:.{max(0, decimals)}f}"


def with_unit(value, digits, units):
    """value with the largest unit (factor, suffix) it reaches: 4.33 GB, 396 MB, 21.2 M."""
    if value == 0:
        return "0"
    rounded = float(significant(value, digits))
    for factor, suffix in units:
        if abs(rounded) >= factor:
            return f"{significant(value / factor, digits)}{suffix}"
    return significant(value, digits)


BYTE_UNITS = ((1e12, " TB"), (1e9, " GB"), (1e6, " MB"), (1e3, " kB"), (1, " B"))
COUNT_UNITS = ((1e9, " G"), (1e6, " M"), (1e3, " k"))


def auto(value):
    """Two decimals below 10, one below 1000, none above: 0.22, 30.4, 738.9, 1234."""
    return f"{value:.2f}" if abs(value) < 10 else f"{value:.1f}" if abs(value) < 1000 else f"{value:.0f}"


FORMATS = {
    "auto": auto,
    "ms": fmt_ms,                                   # as the results table: 3 significant digits
    "tflops": fmt_tflops,                           # as the results table: 4.51, 38.4
    "pct": fmt_pct,                                 # as the results table: 38.0%
    "auto_pct": lambda v: f"{auto(v)}%",            # 85.7%
    "sig3": lambda v: significant(v, 3),
    "sig4": lambda v: significant(v, 4),
    "bytes": lambda v: with_unit(v, 3, BYTE_UNITS),   # 4.33 GB
    "bytes4": lambda v: with_unit(v, 4, BYTE_UNITS),  # 1.373 GB
    "count": lambda v: with_unit(v, 3, COUNT_UNITS),  # 21.2 M
}
TEXT_FORMATS = {"words": lambda text: text.replace("_", " ")}  # for a text column: snake_case as words


def format_value(value, spec="auto", scale=1.0):
    """A number (or a text, as it is) as a cell or a table shows it."""
    if isinstance(value, str):
        return TEXT_FORMATS[spec](value) if spec in TEXT_FORMATS else value
    if value is None:
        raise Missing("no value (empty or n/a)")
    value = value / scale
    if spec in FORMATS:
        return FORMATS[spec](value)
    try:
        return format(value, spec)
    except ValueError:
        raise Missing(f"bad format {spec!r} (a Python format spec or one of {', '.join(FORMATS)})") from None


def join_range(texts):
    """"a–b" from the texts of the smallest and the largest value; one text when they agree."""
    return texts[0] if texts[0] == texts[-1] else f"{texts[0]}–{texts[-1]}"


def matches(value, wanted):
    """Whether a CSV value (number, text or None) is the selector's VALUE (`a|b`: either)."""
    for choice in str(wanted).split("|"):
        if value is None or value == "":
            if choice in ("", "n/a"):
                return True
            continue
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            try:
                if float(choice) == value:
                    return True
            except ValueError:
                pass
            continue
        if str(value) == choice:
            return True
    return False


def select(rows, file, selectors):
    """The rows of a CSV whose columns match every selector; Missing for an unknown column."""
    if rows:
        for column in selectors:
            if column not in rows[0] and column not in DERIVED:
                raise Missing(f"{file} has no column '{column}'")
    return [r for r in rows if all(matches(value_of(r, c, file), v) for c, v in selectors.items())]


def value_of(row, column, file):
    """A row's column (a number where it reads as one), or a quantity of DERIVED."""
    if column in row:
        return number(row, column) if not isinstance(row[column], (int, float)) else row[column]
    if column in DERIVED:
        try:
            return DERIVED[column](row)
        except KeyError:  # made from columns this CSV lacks
            raise Missing(f"{file} has no column '{column}' (its derived quantity needs other columns)") from None
        except TypeError:  # a count missing from the arithmetic
            return None
    raise Missing(f"{file} has no column '{column}' (nor a derived quantity of that name)")


# ---- Quantities of a row that are not a column of its CSV ----------------------------------------

def _ratio(a, b):
    return None if a is None or not b else a / b


def fma_instructions(row):
    """Warp FFMA instructions of an FP32 GEMM: M·N·K / 32."""
    return number(row, "m") * number(row, "n") * number(row, "k") / 32


def conflict_pct(r):
    return (None if r["shared_bank_conflicts"] is None or not r["shared_wavefronts"]
            else 100 * r["shared_bank_conflicts"] / r["shared_wavefronts"])


def stalls(row):
    return ", ".join(f"`{row[name]}` {auto(row[name + '_per_issue'])}" for name in ("top_stall", "second_stall")
                     if row[name] is not None and row[name + "_per_issue"] is not None) or None


def conflicts(row):
    conflicts, wavefronts = row["shared_bank_conflicts"], row["shared_wavefronts"]
    if conflicts is None or wavefronts is None:
        return None
    text = f"{conflicts:,.0f} / {with_unit(wavefronts, 3, COUNT_UNITS)}"
    return text + (f" ({auto(conflict_pct(row))}%)" if conflicts and wavefronts else "")


def occupancy_registers(r):
    if r["achieved_occupancy_pct"] is None:
        return None
    registers = r["registers_per_thread"]
    return f"{auto(r['achieved_occupancy_pct'])}%" + ("" if registers is None else f" ({registers:.0f})")


# The counter that shows each verdict of profile_csv.limited_by: (profile.csv column, its words).
LIMIT_COUNTERS = (("tensor pipe", "tensor_pipe_pct", "tensor pipe busy"),
                  ("memory bandwidth (DRAM)", "dram_throughput_pct", "DRAM busy"),
                  ("memory bandwidth (L2)", "l2_throughput_pct", "L2 busy"),
                  ("memory bandwidth (L1/shared)", "l1_throughput_pct", "L1/shared busy"),
                  ("memory bandwidth", "memory_throughput_pct", "memory busy"))


def limiting_counter(row):
    """The one counter of a profile.csv row that shows what limits the kernel (its limited_by), in
    words with its value: "tensor pipe busy 85.7%", "issue slots busy 75.2%", "29.1 warps stalled
    on long_scoreboard per issued instruction"."""
    verdict = row.get("limited_by") or ""
    for name, column, words in LIMIT_COUNTERS:
        if verdict == name and row.get(column) is not None:
            return f"{words} {auto(row[column])}%"
    if verdict == "issue":
        issue, sm = row.get("issue_active_pct"), row.get("sm_throughput_pct")
        if issue is not None and (sm is None or issue >= sm):
            return f"issue slots busy {auto(issue)}%"
        if sm is not None:
            return f"SM busy {auto(sm)}%"
    if verdict == "shared-memory bank conflicts" and conflict_pct(row) is not None:
        return f"{auto(conflict_pct(row))}% of the shared wavefronts are bank conflicts"
    if verdict.startswith("latency") and row.get("top_stall") and row.get("top_stall_per_issue") is not None:
        return f"{auto(row['top_stall_per_issue'])} warps stalled on {row['top_stall']} per issued instruction"
    return None


# What holds a kernel back, for a reader new to the profiler: each verdict of profile_csv.limited_by
# in plain words (a "latency (waiting for X)" verdict reads "waiting for X").
PLAIN_LIMITS = {"tensor pipe": "the tensor cores themselves",
                "shared-memory bank conflicts": "threads queueing on the same shared-memory banks",
                "issue": "issuing instructions",
                "memory bandwidth (DRAM)": "moving data from DRAM",
                "memory bandwidth (L2)": "moving data through the L2 cache",
                "memory bandwidth (L1/shared)": "moving data through L1/shared memory",
                "memory bandwidth": "moving data",
                "latency": "waiting, with no unit busy"}


def plain_limit(verdict):
    """A limited_by verdict in plain words (PLAIN_LIMITS); an unknown one as it is."""
    waiting = re.fullmatch(r"latency \(waiting for (.+)\)", verdict or "")
    return f"waiting for {waiting.group(1)}" if waiting else PLAIN_LIMITS.get(verdict, verdict)


def run_line(row):
    """GPU, CUDA, date and timing of a results row, for a caption."""
    timing = TIMING_WORDS.get(row.get("timing") or "")
    return (f"{row['gpu']} ({row['sm_count']} SMs), CUDA {row['cuda_runtime']} (driver "
            f"{row['cuda_driver']}), {row['time']:%Y-%m-%d}" + (f", timing {timing}" if timing else ""))


def ms_spread(row):
    """The 10th and 90th percentiles of a step's timed rounds, "0.715–0.731" ms; None from a CSV
    written before the harness wrote them (the committed ones), which a table shows as missing."""
    low, high = row.get("ms_p10"), row.get("ms_p90")
    return None if low is None or high is None else join_range([fmt_ms(low), fmt_ms(high)])


def pct_spread(row):
    """How far a step's % of cuBLAS moves with the spreads of the two medians: cuBLAS's 10th
    percentile over the step's 90th, to cuBLAS's 90th over the step's 10th, "96.1–99.0"; None from a
    CSV written before the harness wrote the spreads."""
    low, high = row.get("ms_p10"), row.get("ms_p90")
    cublas_low, cublas_high = row.get("cublas_ms_p10"), row.get("cublas_ms_p90")
    if None in (low, high, cublas_low, cublas_high) or not low or not high:
        return None
    return join_range([f"{100 * cublas_low / high:.1f}", f"{100 * cublas_high / low:.1f}"])


# Quantities of rows: of profile.csv (ncu_profile.py), and of any row with m, n, k or a precision.
DERIVED = {
    "day": lambda r: str(r.get("timestamp") or r["date"])[:10],  # the day a row was measured
    "ms_spread": ms_spread,                      # "0.715–0.731": p10–p90 of the timed rounds, ms
    "pct_spread": pct_spread,                    # "96.1–99.0": the range of % of cuBLAS those give
    "dram_bytes": lambda r: (None if r["dram_read_bytes"] is None or r["dram_write_bytes"] is None
                             else r["dram_read_bytes"] + r["dram_write_bytes"]),
    "fma_instructions": fma_instructions,
    "instructions_per_fma": lambda r: _ratio(r["instructions"], fma_instructions(r)),
    "shared_ld_per_fma": lambda r: _ratio(r["shared_ld_instructions"], fma_instructions(r)),
    "shared_instructions": lambda r: (None if r["shared_ld_instructions"] is None
                                      else r["shared_ld_instructions"] + (r["shared_st_instructions"] or 0)),
    "conflict_pct": conflict_pct,
    "limiting_counter": limiting_counter,
    "stalls": stalls,                            # "`long_scoreboard` 3.2, `barrier` 1.1"
    "conflicts": conflicts,                      # "1,024 / 21.2 M (0.01%)"
    "occupancy_registers": occupancy_registers,  # "45.2% (128)"
    "shape": lambda r: "×".join(str(int(number(r, c))) for c in "mnk"),
    "square": lambda r: "yes" if r["m"] == r["n"] == r["k"] else "no",
    "precision_label": lambda r: precision_label(r["precision"]),
    "cublas_name": lambda r: cublas_name(r["precision"]),
    "step_or_cublas": lambda r: f"cuBLAS {precision_label(r['precision'])}" if r["step"] == "cuBLAS" else r["step"],
    "run_line": run_line,
}
