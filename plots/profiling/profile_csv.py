"""profile.csv, written by ncu_profile.py: its columns, writing and reading it, the totals of
each profiled step, what limits each kernel ("limited by (measured)", the table's last column),
and the points of the measured roofline. Needs only the Python standard library: make_plots.py
reads profile.csv where matplotlib is not installed.
"""
import csv

from report.results_csv import InputError, gemm_flops, read_rows

CUBLAS = "cuBLAS"  # the step column of cuBLAS's rows

PROFILE_COLUMNS = (
    "step precision kernel m n k duration_ns tflops dram_read_bytes dram_write_bytes l2_bytes "
    "dram_flop_per_byte l2_flop_per_byte shared_wavefronts shared_bank_conflicts "
    "shared_ld_instructions shared_st_instructions instructions achieved_occupancy_pct "
    "registers_per_thread shared_mem_per_block_bytes sm_throughput_pct memory_throughput_pct "
    "dram_throughput_pct l2_throughput_pct l1_throughput_pct issue_active_pct tensor_pipe_pct "
    "top_stall top_stall_per_issue second_stall second_stall_per_issue limited_by "
    "l2_peak_bytes_per_second gpu"
).split()
TEXT_COLUMNS = {"step", "precision", "kernel", "top_stall", "second_stall", "limited_by", "gpu"}
MISSING = "n/a"  # what profile.csv holds where ncu gave no value


def kernel_name(name):
    """A kernel's name as profile.csv keeps it: ncu's demangled name, with the anonymous namespace
    spelled `(anonymous namespace)`. Nsight Compute 2025 prints it `<unnamed>` and, after another
    namespace, drops its `<` (`worklog::<unnamed>::f` comes out `unnamed>::f`), which leaves the
    name's angle brackets unbalanced: `void unnamed>::g<unnamed>::Config, 1>(...)` has one `<` for
    three `>`. Each `unnamed>` whose `<` is missing is counted by that imbalance; a name with every
    `<unnamed>` whole (another ncu) is balanced and only respelled; one that is neither is left as
    it is."""
    token = "unnamed>"
    count = name.count(token)
    if not count:
        return name
    missing = name.count(">") - name.count("<")
    if missing == 0:
        return name.replace("<" + token, "(anonymous namespace)")
    if missing == count:
        return name.replace(token, "(anonymous namespace)")
    return name


def flop_per_byte(flops, nbytes):
    """Arithmetic intensity; None when the byte count is missing or zero."""
    return flops / nbytes if nbytes else None


def add_step_totals(rows):
    """Fill the columns that belong to a whole step (all of its kernels: one, in practice):
    TFLOP/s and FLOP per DRAM and per L2 byte; and each kernel's limited_by."""
    for totals in step_totals(rows):
        for row in totals["rows"]:
            row["tflops"] = totals["tflops"]
            row["dram_flop_per_byte"] = flop_per_byte(totals["flops"], totals["dram_bytes"])
            row["l2_flop_per_byte"] = flop_per_byte(totals["flops"], totals["l2_bytes"])
    for row in rows:
        row["limited_by"] = limited_by(row)
    return rows


def _total(rows, *columns):
    """The sum of these columns over the rows; None if any value is missing."""
    values = [row[c] for row in rows for c in columns]
    return None if any(v is None for v in values) else sum(values)


def step_totals(rows):
    """Per (step, precision), in order: the GEMM's FLOPs and the time and bytes of all its kernels."""
    groups = {}
    for row in rows:
        groups.setdefault((row["step"], row["precision"]), []).append(row)
    result = []
    for (step, precision), group in groups.items():
        first = group[0]
        flops = gemm_flops((first["m"], first["n"], first["k"]))
        nanoseconds = _total(group, "duration_ns")
        result.append({
            "step": step, "precision": precision, "rows": group, "flops": flops,
            "tflops": flops / nanoseconds / 1e3 if nanoseconds else None,
            "dram_bytes": _total(group, "dram_read_bytes", "dram_write_bytes"),
            "l2_bytes": _total(group, "l2_bytes"),
        })
    return result


def format_cell(value):
    """Counts as integers (5230400, not 5.2304e+06: unit scaling can leave 5230399.999999999),
    other numbers to 6 significant digits, missing values as n/a."""
    if value is None:
        return MISSING
    if isinstance(value, float):
        nearest = round(value)
        if abs(value) >= 1 and abs(value - nearest) <= 1e-9 * abs(value):
            return str(nearest)
        return f"{value:.6g}"
    return str(value)


def write_profile(rows, path):
    with open(path, "w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(PROFILE_COLUMNS)
        for row in rows:
            writer.writerow([format_cell(row[c]) for c in PROFILE_COLUMNS])


def load_profile(path):
    """Read a profile.csv back: numbers as floats, "n/a" as None. Raises InputError."""
    return read_rows(path, _check_profile_header, _profile_row)


def _check_profile_header(path, header):
    missing = [c for c in PROFILE_COLUMNS if c not in (header or [])]
    if missing:
        raise InputError(f"{path}: not a profile.csv: missing columns: {', '.join(missing)}")


def _profile_row(raw, where):
    row = {"code": (raw.get("code") or "").strip()}  # the code it measured (results_csv.CODE_COLUMNS)
    for column in PROFILE_COLUMNS:
        text = (raw.get(column) or "").strip()
        if text in ("", MISSING):
            row[column] = None
        elif column in TEXT_COLUMNS:
            row[column] = text
        else:
            try:
                row[column] = float(text)
            except ValueError:
                raise InputError(f"{where}: column '{column}' is not a number: {text!r}") from None
    return row


# ---- What limits each kernel, from its counters -------------------------------------------------
# The rule, in this order (a unit "busy" at BUSY_PCT % of its peak or more):
#   1. tensor pipe:  the tensor pipe is busy.
#   2. shared-memory bank conflicts:  at least CONFLICT_SHARE of the shared-memory wavefronts are
#      conflict replays, and shared memory is what the warps feel: L1/shared throughput is busy,
#      or the top stall is one of SHARED_MEMORY_STALLS.
#   3. memory bandwidth or issue:  the memory system (its busiest unit) or the SM (instruction
#      issue, or the busiest of its pipes) is busy; when both are, the busier one. "memory
#      bandwidth" names the busiest of DRAM, L2 and L1/shared.
#   4. latency:  nothing is busy, so warps wait: the top stall reason says for what.
# 60 % is Nsight Compute's own line in its Speed Of Light guidance: under 60 % of peak for both
# compute and memory, a kernel is latency-bound.
BUSY_PCT = 60.0
CONFLICT_SHARE = 0.2
SHARED_MEMORY_STALLS = ("mio_throttle", "short_scoreboard")
# The memory levels "memory bandwidth" names, by their throughput columns.
MEMORY_LEVELS = (("dram_throughput_pct", "DRAM"), ("l2_throughput_pct", "L2"),
                 ("l1_throughput_pct", "L1/shared"))
# What a warp stalled for each reason waits for, in words, for the "limited by" column.
STALL_WORDS = {
    "long_scoreboard": "global/local memory", "short_scoreboard": "shared-memory (MIO) results",
    "mio_throttle": "the shared-memory (MIO) queue", "lg_throttle": "the global-memory queue",
    "barrier": "a __syncthreads barrier", "math_pipe_throttle": "a busy math pipe",
    "wait": "fixed-latency dependencies", "not_selected": "the scheduler (other warps issue)",
    "gmma": "wgmma results", "dispatch_stall": "dispatch", "no_instruction": "instruction fetch",
    "branch_resolving": "branch targets", "membar": "memory barriers", "drain": "stores to drain",
    "sleeping": "nanosleep", "tex_throttle": "the texture queue", "imc_miss": "the constant cache",
    "misc": "miscellaneous reasons",
}


def limited_by(row):
    """What limits the kernel of one profile.csv row, in words (see the rule above)."""
    def pct(column):
        return row.get(column) if row.get(column) is not None else 0.0

    if row.get("sm_throughput_pct") is None and row.get("memory_throughput_pct") is None:
        return MISSING
    if pct("tensor_pipe_pct") >= BUSY_PCT:
        return "tensor pipe"
    wavefronts, conflicts = row.get("shared_wavefronts"), row.get("shared_bank_conflicts")
    if wavefronts and conflicts is not None and conflicts / wavefronts >= CONFLICT_SHARE and (
            pct("l1_throughput_pct") >= BUSY_PCT or row.get("top_stall") in SHARED_MEMORY_STALLS):
        return "shared-memory bank conflicts"
    memory = pct("memory_throughput_pct")
    issue = max(pct("issue_active_pct"), pct("sm_throughput_pct"))
    if max(memory, issue) >= BUSY_PCT:
        if memory < issue:
            return "issue"
        levels = [(pct(column), name) for column, name in MEMORY_LEVELS if row.get(column) is not None]
        return f"memory bandwidth ({max(levels)[1]})" if levels else "memory bandwidth"
    stall = row.get("top_stall")
    return f"latency (waiting for {STALL_WORDS.get(stall, stall)})" if stall else "latency"


def limited_by_step(rows):
    """{(step, precision, (m, n, k)): words} for the results table (results_table.build_table): what
    limits each step's longest-running kernel (its only one, in practice)."""
    result = {}
    for totals in step_totals(rows):
        longest = max(totals["rows"], key=lambda r: r["duration_ns"] or 0.0)
        shape = tuple(int(longest[c]) for c in "mnk")
        result[(totals["step"], totals["precision"], shape)] = limited_by(longest)
    return result


# ---- The measured roofline's points --------------------------------------------------------------

def roofline_points(rows):
    """Per step (and cuBLAS): (label, precision, FLOP/DRAM byte, FLOP/L2 byte, TFLOP/s); steps
    without a time or any byte count are left out."""
    points = []
    for t in step_totals(rows):
        dram, l2 = flop_per_byte(t["flops"], t["dram_bytes"]), flop_per_byte(t["flops"], t["l2_bytes"])
        if t["tflops"] and (dram or l2):
            label = f"{CUBLAS} {t['precision'].upper()}" if t["step"] == CUBLAS else t["step"]
            points.append((label, t["precision"], dram, l2, t["tflops"]))
    return points


def measured_l2_bandwidth(rows):
    """The L2 roof in GB/s: the median of the kernels' ncu L2 peaks (None when ncu gave none)."""
    peaks = sorted(r["l2_peak_bytes_per_second"] for r in rows if r["l2_peak_bytes_per_second"])
    return peaks[len(peaks) // 2] / 1e9 if peaks else None


def gpu_name(rows):
    return next((r["gpu"] for r in rows if r["gpu"]), "unknown GPU")
