"""What Nsight Compute is asked for and what its answer means: the metrics of profile.csv
(METRIC_FIELDS, STALL_REASONS) and the arithmetic that turns them into its columns, the reading of
ncu's CSV with its units, and a profiled kernel's row. ncu_profile.py runs ncu with these.
Needs only the Python standard library.
"""
import csv
import io
import math
import re
from collections import namedtuple

from profiling.profile_csv import PROFILE_COLUMNS, TEXT_COLUMNS, kernel_name


# ---- The metrics ------------------------------------------------------------------------------
# Each profile.csv column comes from the first of its ways whose metrics this ncu and GPU offer;
# a way is a tuple of metric names and the formula that combines their values. Names are those of
# Nsight Compute 2025 on Hopper (sm_90); the fallbacks cover older ncu versions and other GPUs.
Way = namedtuple("Way", "metrics formula")
MetricField = namedtuple("MetricField", "column ways")


def _same(value):
    return value


def _sum(*values):
    return sum(values)


def _product(*values):
    return math.prod(values)


def _sectors_to_bytes(sectors):
    return 32 * sectors  # an L2 sector is 32 bytes


def _sector_rate_to_bytes(sectors_per_cycle, cycles_per_second):
    return 32 * sectors_per_cycle * cycles_per_second


def _one(metric):
    return Way((metric,), _same)


METRIC_FIELDS = (
    MetricField("duration_ns", (_one("gpu__time_duration.sum"),)),
    MetricField("dram_read_bytes", (_one("dram__bytes_read.sum"),)),
    MetricField("dram_write_bytes", (_one("dram__bytes_write.sum"),)),
    # Every byte the L2 serves: reads, writes and atomics, from every unit that asks.
    MetricField("l2_bytes", (_one("lts__t_bytes.sum"), Way(("lts__t_sectors.sum",), _sectors_to_bytes))),
    # Shared-memory wavefronts: the passes (one per cycle) the L1 data banks make for shared loads
    # and stores. Bank conflicts: the wavefronts beyond the minimum each access needed (an LDS.128
    # needs 4).
    MetricField("shared_wavefronts", (_one("l1tex__data_pipe_lsu_wavefronts_mem_shared.sum"),)),
    MetricField("shared_bank_conflicts", (_one("l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum"),)),
    MetricField("shared_ld_instructions", (_one("smsp__sass_inst_executed_op_shared_ld.sum"),)),
    MetricField("shared_st_instructions", (_one("smsp__sass_inst_executed_op_shared_st.sum"),)),
    MetricField("instructions", (_one("smsp__inst_executed.sum"),)),  # warp instructions
    MetricField("achieved_occupancy_pct", (_one("sm__warps_active.avg.pct_of_peak_sustained_active"),)),
    MetricField("registers_per_thread", (_one("launch__registers_per_thread"),)),
    MetricField("shared_mem_per_block_bytes",
                (Way(("launch__shared_mem_per_block_static", "launch__shared_mem_per_block_dynamic"),
                     _sum),)),
    MetricField("sm_throughput_pct", (_one("sm__throughput.avg.pct_of_peak_sustained_elapsed"),)),
    # The busiest memory unit (L1/shared, L2 or DRAM) against its own peak.
    MetricField("memory_throughput_pct",
                (_one("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed"),)),
    MetricField("dram_throughput_pct", (_one("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed"),
                                        _one("dram__throughput.avg.pct_of_peak_sustained_elapsed"))),
    MetricField("l2_throughput_pct", (_one("lts__throughput.avg.pct_of_peak_sustained_elapsed"),)),
    MetricField("l1_throughput_pct", (_one("l1tex__throughput.avg.pct_of_peak_sustained_active"),)),
    MetricField("issue_active_pct", (_one("smsp__issue_active.avg.pct_of_peak_sustained_active"),)),
    # All tensor-pipe work: HMMA (mma.sync, WMMA) and, on sm_90, HGMMA (wgmma). The fallback, the
    # HMMA pipe alone, is for an ncu or GPU without the first metric.
    MetricField("tensor_pipe_pct",
                (_one("sm__pipe_tensor_cycles_active.avg.pct_of_peak_sustained_elapsed"),
                 _one("sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_elapsed"))),
    # The L2 roof of the measured roofline: ncu's peak L2 bytes per cycle times the L2 clock.
    MetricField("l2_peak_bytes_per_second",
                (Way(("lts__t_bytes.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"), _product),
                 Way(("lts__t_sectors.sum.peak_sustained", "lts__cycles_elapsed.avg.per_second"),
                     _sector_rate_to_bytes))),
    MetricField("gpu", (_one("device__attribute_display_name"),)),
)

# Warp stall reasons of sm_90 (gmma exists on sm_90 only, imc_miss up to sm_90: a reason this GPU
# lacks is not asked for). "selected" is left out on purpose: it is the issuing warp, 1 per issue.
STALL_REASONS = (
    "long_scoreboard", "short_scoreboard", "mio_throttle", "lg_throttle", "barrier", "math_pipe_throttle",
    "wait", "not_selected", "gmma", "dispatch_stall", "no_instruction", "branch_resolving", "membar", "drain",
    "sleeping", "tex_throttle", "imc_miss", "misc",
)  # profile_csv.STALL_WORDS says what each waits for, in the same order


def stall_metric(reason):
    """Average warps stalled for this reason per issued instruction (ncu's Warp State section)."""
    return f"smsp__average_warps_issue_stalled_{reason}_per_issue_active.ratio"


def metric_base(metric):
    """dram__bytes_read.sum -> dram__bytes_read: the metric without its roll-up and sub-metric."""
    return metric.split(".", 1)[0]


def is_rejected(metric, rejected):
    """Whether ncu said it does not know this metric (by its full name or by its base name)."""
    return metric in rejected or metric_base(metric) in rejected


def choose_metrics(rejected=frozenset()):
    """The metrics to ask ncu for: each field's first way that uses no metric ncu rejected, and the
    stall reasons it did not reject. Returns (metrics in order, columns left without a way)."""
    metrics, missing = [], []
    for field in METRIC_FIELDS:
        way = next((w for w in field.ways if not any(is_rejected(m, rejected) for m in w.metrics)), None)
        if way is None:
            missing.append(field.column)
        else:
            metrics += [m for m in way.metrics if m not in metrics]
    metrics += [stall_metric(r) for r in STALL_REASONS if not is_rejected(stall_metric(r), rejected)]
    return metrics, missing


# ncu refuses a run that asks for a metric it does not know, naming it as a regular expression:
#   ==ERROR== Failed to find metric regex:^lts__t_bytes\.sum\.peak_sustained$
#   ==ERROR== Failed to find metric regex:^sm__bogus_cycles\.(sum|min|max|avg|pct|ratio|max_rate)$
REJECTED_METRIC = re.compile(r"Failed to find metric regex:\^?([A-Za-z0-9_]+(?:\\?\.[A-Za-z0-9_]+)*)")


def rejected_metrics(output, asked):
    """The metrics (full names where they were asked for as such, else base names) that ncu's
    output says it does not know."""
    rejected = set()
    for name in REJECTED_METRIC.findall(output):
        name = name.replace("\\.", ".")
        rejected.add(name if name in asked else metric_base(name))
    return rejected


# ---- Reading ncu's CSV --------------------------------------------------------------------------
# `ncu --import R --csv --page raw` prints one header row (launch columns, then one column per
# metric), one row of units, and one row per kernel. `ncu --csv` while profiling (the details page)
# prints instead one row per (kernel, metric) with "Metric Name", "Metric Unit" and "Metric Value".
# Both are read. Numbers may carry thousands separators ("1,073,741,824"); "n/a" and empty cells
# are missing values; lines outside the table (==PROF==, the application's output) are skipped.

NcuKernel = namedtuple("NcuKernel", "id name metrics")


class NcuCsvError(Exception):
    """ncu's CSV output cannot be read; the message says why."""


SI_PREFIXES = {"K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
BINARY_PREFIXES = {"Ki": 2.0 ** 10, "Mi": 2.0 ** 20, "Gi": 2.0 ** 30, "Ti": 2.0 ** 40}
NANOSECONDS = {"nsecond": 1.0, "usecond": 1e3, "msecond": 1e6, "second": 1e9}


def _prefix_scale(word):
    """Scale of a prefixed unit word: Mbyte -> 1e6, Kibyte -> 1024, Ghz -> 1e9, byte -> 1."""
    if word[:2] in BINARY_PREFIXES and len(word) > 2 and word[2].islower():
        return BINARY_PREFIXES[word[:2]]
    if word[:1] in SI_PREFIXES and len(word) > 1 and word[1].islower():
        return SI_PREFIXES[word[:1]]
    return 1.0


def unit_scale(unit):
    """Factor from a value in `unit` to the base unit profile.csv uses: bytes, cycles, counts;
    nanoseconds for times; per second for rates. ncu prints base units with --print-units base,
    but scaled ones (Mbyte, usecond, Kbyte/block, Gbyte/second) are read too."""
    numerator, _, denominator = (unit or "").strip().partition("/")
    scale = NANOSECONDS[numerator] if numerator in NANOSECONDS else _prefix_scale(numerator)
    if denominator in NANOSECONDS:
        scale *= NANOSECONDS["second"] / NANOSECONDS[denominator]
    return scale


def parse_value(text, unit=""):
    """A cell of ncu's CSV: a float in base units, a string (a name), or None when missing."""
    text = (text or "").strip()
    if text in ("", "n/a", "N/A"):
        return None
    plain = text.replace(",", "") if re.fullmatch(r"[-+]?\d{1,3}(,\d{3})+(\.\d*)?", text) else text
    try:
        return float(plain) * unit_scale(unit)
    except ValueError:
        return text


def parse_ncu_csv(text):
    """The kernels in ncu's CSV output (raw or details page), in the order ncu lists them."""
    lines = [line for line in text.splitlines() if line.startswith('"')]
    header_at = next((i for i, line in enumerate(lines) if line.startswith('"ID"')), None)
    if header_at is None:
        raise NcuCsvError("no ncu CSV table (no header line starting with \"ID\")")
    rows = list(csv.reader(io.StringIO("\n".join(lines[header_at:]))))
    header, body = rows[0], rows[1:]
    for needed in ("ID", "Kernel Name"):
        if needed not in header:
            raise NcuCsvError(f"the CSV header has no '{needed}' column")
    if any(len(row) != len(header) for row in body):
        raise NcuCsvError(f"a CSV row does not have the header's {len(header)} fields")
    if "Metric Name" in header and "Metric Value" in header:
        return _kernels_from_details(header, body)
    return _kernels_from_raw(header, body)


def _kernels_from_raw(header, body):
    id_at, name_at = header.index("ID"), header.index("Kernel Name")
    units = [""] * len(header)
    if body and body[0][id_at] == "":  # the units row: no kernel ID
        units, body = body[0], body[1:]
    metric_columns = [i for i, name in enumerate(header) if "__" in name]
    return [NcuKernel(row[id_at], row[name_at],
                      {header[i]: parse_value(row[i], units[i]) for i in metric_columns})
            for row in body]


def _kernels_from_details(header, body):
    column = {name: header.index(name) for name in ("ID", "Kernel Name", "Metric Name", "Metric Value")}
    unit_at = header.index("Metric Unit") if "Metric Unit" in header else None
    kernels = {}
    for row in body:
        kernel_id = row[column["ID"]]
        kernel = kernels.setdefault(kernel_id, NcuKernel(kernel_id, row[column["Kernel Name"]], {}))
        unit = row[unit_at] if unit_at is not None else ""
        kernel.metrics[row[column["Metric Name"]]] = parse_value(row[column["Metric Value"]], unit)
    return list(kernels.values())


# ---- profile.csv's rows -------------------------------------------------------------------------

def field_value(field, metrics):
    """The column's value from a kernel's metrics: its first way with every metric present."""
    for way in field.ways:
        values = [metrics.get(m) for m in way.metrics]
        if all(isinstance(v, float) for v in values):
            return way.formula(*values)
        if field.column in TEXT_COLUMNS and all(isinstance(v, str) for v in values):
            return way.formula(*values)
    return None


def top_stalls(metrics, count=2):
    """The `count` largest stall reasons present, as (reason, warps per issue), largest first."""
    found = [(reason, metrics[stall_metric(reason)]) for reason in STALL_REASONS
             if isinstance(metrics.get(stall_metric(reason)), float)]
    return sorted(found, key=lambda pair: -pair[1])[:count]  # sorted() is stable: ties keep list order


def kernel_row(kernel, step, precision, shape):
    """One profile.csv row (as numbers and strings, None where missing) from one ncu kernel."""
    row = dict.fromkeys(PROFILE_COLUMNS)
    row.update(step=step, precision=precision, kernel=kernel_name(kernel.name), m=shape[0], n=shape[1],
               k=shape[2])
    for field in METRIC_FIELDS:
        row[field.column] = field_value(field, kernel.metrics)
    for (reason, ratio), prefix in zip(top_stalls(kernel.metrics), ("top_stall", "second_stall")):
        row[prefix], row[prefix + "_per_issue"] = reason, ratio
    return row
