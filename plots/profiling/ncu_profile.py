#!/usr/bin/env python3
"""Profile every step of the GEMM worklog, and cuBLAS, with Nsight Compute: counters, not models.

    python3 plots/profiling/ncu_profile.py --bin-dir BUILD/bin --out DIR [--size 4096] [--ncu PATH]
        [--publish DIR] [--timeout SECONDS] [--peak-fp32 T --peak-fp16 T --bandwidth GBS]
        [--venv BUILD/plots-venv] [--variants STEP/VARIANT,...]

Each step executable runs once under ncu with `--profile step`: it launches its kernel once
unprofiled, then once between cudaProfilerStart and cudaProfilerStop, and ncu, started with
`--profile-from-start off`, profiles that launch and nothing else. Then cuBLAS, once per
precision (`--profile cublas`, through the first step of that precision). ncu runs with
`--clock-control none` (the GPU keeps its own clocks, as in the timed worklog) and a fixed list
of metrics (METRIC_FIELDS, STALL_REASONS), less any this ncu says it does not know (the run is
repeated without them; their columns read n/a). It writes into DIR:
  profile.csv            one row per profiled kernel (profile_csv.PROFILE_COLUMNS)
  ncu/<step>.ncu-rep     ncu's own reports, to open in the Nsight Compute GUI
and then runs make_plots on DIR (make_plots.draw_results), which draws
  roofline_measured.png  each step at its measured FLOP per DRAM byte and per L2 byte
  table.md               rewritten with the "limited by (measured)" column, when DIR/worklog.csv
                         (from run_worklog.py) is there (the worklog's charts are redrawn too)
with a Python that has matplotlib, as the worklog does (--venv); without one, profile.csv and
table.md are still written, and one line says how to get the chart.
With --variants, only the named steps' variants are profiled (`07_async_pipeline/no_padding`; a
name without a variant, the step itself), no cuBLAS and no chart: their rows, the step column
naming the variant, go to variant_profile.csv (profile.csv's columns), which the steps' READMEs
quote to show what each technique changes.
The steps are those listed in BUILD/bin/worklog_steps.txt, the build's list of steps, read as
run_worklog.py reads it. A step the GPU cannot run (exit code 4: for example a Hopper-only step
on another GPU) is skipped with a line saying why.

Exit codes, the worklog's own (common/exit_codes.hpp, read through common/exit_codes.py):
  0   exit_ok: every step (not skipped) and cuBLAS profiled
  1   exit_check_failed: a profile failed (the others are still written)
  2   exit_bad_argument: bad arguments, no list of steps, or no step executables
  6   exit_tool_missing: ncu not found
  7   exit_no_counter_access: ncu cannot read the GPU's performance counters (permissions:
      ERR_NVGPUCTRPERM)
  77  exit_no_device: no CUDA device
Nothing is left in DIR by a profile that stops before any kernel was profiled.
"""
import argparse
import csv
import io
import itertools
import math
import os
import re
import shutil
import subprocess
import sys
import time
from collections import namedtuple
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from report import make_plots  # noqa: E402
from run import plots_env  # noqa: E402
from readme import filler  # noqa: E402
from run.arguments import (add_peak_arguments, add_venv_argument, comma_list, given_peak_arguments,  # noqa: E402
                       positive_int)
from profiling.profile_csv import (CUBLAS, MISSING, PROFILE_COLUMNS, TEXT_COLUMNS, add_step_totals,  # noqa: E402
                         kernel_name, write_profile)
from run.run_worklog import Stop, built_steps, publish  # noqa: E402

PUBLISHED = ("profile.csv", "roofline_measured.png", "table.md")  # what --publish copies, when written
VARIANT_PROFILE = "variant_profile.csv"  # what --variants writes (and --publish copies) instead

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


# ---- Running ncu --------------------------------------------------------------------------------

def find_ncu(given):
    """The ncu executable: --ncu, else PATH, else the CUDA toolkit's bin/ (beside nvcc on PATH,
    CUDA_HOME, CUDA_PATH, /usr/local/cuda)."""
    if given:
        if Path(given).is_file() and os.access(given, os.X_OK):
            return str(given)
        raise Stop(exit_codes.EXIT_TOOL_MISSING, f"--ncu {given}: no such executable")
    found = shutil.which("ncu")
    if found:
        return found
    nvcc = shutil.which("nvcc")
    bin_dirs = [Path(nvcc).resolve().parent] if nvcc else []
    bin_dirs += [Path(root) / "bin" for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"),
                                                 "/usr/local/cuda") if root]
    for bin_dir in bin_dirs:
        if (bin_dir / "ncu").is_file():
            return str(bin_dir / "ncu")
    raise Stop(exit_codes.EXIT_TOOL_MISSING, "Nsight Compute (ncu) not found: install it with the CUDA Toolkit, "
                                             "put it on PATH, or pass --ncu PATH")


def profile_command(ncu, metrics, report, exe, shape, target, variant="", extra=()):
    m, n, k = (str(v) for v in shape)
    return [ncu, "--profile-from-start", "off", "--clock-control", "none", "--cache-control", "all",
            "--metrics", ",".join(metrics), "--export", str(report), "--force-overwrite",
            str(exe), "--m", m, "--n", n, "--k", k, "--profile", target] + (["--variant", variant] if variant else []) \
        + list(extra)


def import_command(ncu, report):
    return [ncu, "--import", str(report), "--csv", "--page", "raw", "--print-units", "base",
            "--print-kernel-base", "demangled"]


Outcome = namedtuple("Outcome", "kernels precision skipped error")  # one of the last three is set


def read_outcome(output, returncode, step):
    """What a profiling run's output (ncu's and the step's, together) says. Raises Stop when no
    profile can work (no counter access, no device); else an Outcome with the step's precision
    (it ran; the report is read next), or skipped (the GPU cannot run the step), or error."""
    if "ERR_NVGPUCTRPERM" in output:
        raise Stop(exit_codes.EXIT_NO_COUNTER_ACCESS,
                   "ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM): run as root, or let "
                   "users profile (https://developer.nvidia.com/ERR_NVGPUCTRPERM)")
    # Not anchored at a line start: ncu's progress dots may precede the step's line.
    said = re.search(rf"{re.escape(step)}: error: (.*)$", output, re.MULTILINE)
    returned = re.search(r"The application returned an error code \((\d+)\)", output)
    # The step's exit code, as ncu reports it; else ncu's own, when the step said it failed.
    app_code = int(returned.group(1)) if returned else returncode if said else None
    if app_code == exit_codes.EXIT_NO_DEVICE:
        raise Stop(exit_codes.EXIT_NO_DEVICE, "no CUDA device; profiling needs an NVIDIA GPU"
                                   + (f" ({step}: {said.group(1)})" if said else ""))
    if app_code == exit_codes.EXIT_UNSUPPORTED_GPU:
        reason = said.group(1) if said else f"the step cannot run on this GPU (exit code {app_code})"
        return Outcome(None, None, reason, None)
    # A variant says its own name, "07_async_pipeline/no_padding: profiled ...".
    ran = re.search(rf"{re.escape(step)}(?:/[\w-]+)?: profiled .* precision (\w+),", output)
    if ran and app_code is None:
        return Outcome(None, ran.group(1), None, None)
    errors = [line for line in output.splitlines() if line.startswith("==ERROR==")]
    return Outcome(None, None, None, (said.group(1) if said else None) or " ".join(errors)
                   or f"ncu exited with code {returncode} and the step did not run")


def run_profile(ncu, exe, step, target, shape, metrics, report, timeout, variant="", extra=()):
    """Profile one target ('step' or 'cublas') of one step executable (its variant, if named) on
    one shape (M, N, K). Returns an Outcome and the metrics ncu rejected (then the Outcome is an
    error and the run is worth repeating without them). cublas_pick.py profiles each shape of its
    list through it too."""
    report.unlink(missing_ok=True)
    command = profile_command(ncu, metrics, report, exe, shape, target, variant, extra)
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Outcome(None, None, None, f"timed out after {timeout} s"), set()
    except OSError as e:
        raise Stop(exit_codes.EXIT_TOOL_MISSING, f"cannot run {ncu}: {e}") from None
    output = done.stdout + done.stderr
    rejected = rejected_metrics(output, metrics)
    if rejected:
        return Outcome(None, None, None, f"ncu does not know {', '.join(sorted(rejected))}"), rejected
    outcome = read_outcome(output, done.returncode, step)
    if outcome.skipped or outcome.error:
        return outcome, set()
    if not report.is_file():
        errors = " ".join(line for line in output.splitlines() if line.startswith("==ERROR=="))
        return outcome._replace(error=f"ncu wrote no report ({errors or 'no kernel was profiled'})"), set()
    try:
        imported = subprocess.run(import_command(ncu, report), capture_output=True, text=True,
                                  timeout=timeout, env={**os.environ, "LC_ALL": "C"})
        kernels = parse_ncu_csv(imported.stdout)
    except (OSError, subprocess.TimeoutExpired, NcuCsvError) as e:
        return outcome._replace(error=f"cannot read the report {report}: {e}"), set()
    if not kernels:
        return outcome._replace(error="ncu profiled no kernel"), set()
    return outcome._replace(kernels=kernels), set()


class Profiler:
    """Runs ncu on the step executables, numbering the runs. It asks for the Hopper metric names
    first; a name this ncu rejects is dropped (its column takes its next way, or reads n/a) and the
    run repeated, and later runs no longer ask for it."""

    def __init__(self, ncu, bin_dir, size, reports, timeout):
        self.ncu, self.bin_dir, self.size, self.reports, self.timeout = ncu, bin_dir, size, reports, timeout
        self.rejected = set()
        self.runs = itertools.count(1)

    def profile(self, step, target, label, variant=""):
        """Profile `target` ('step' or 'cublas') through the executable of `step` (its variant, if
        named); an Outcome."""
        say(f"[{next(self.runs)}] {label} {self.size}x{self.size}x{self.size}")
        name = f"{step}_{variant}" if variant else step
        report = self.reports / (f"{name}.ncu-rep" if target == "step" else f"{CUBLAS}_{name}.ncu-rep")
        while True:
            metrics = choose_metrics(self.rejected)[0]
            outcome, rejected = run_profile(self.ncu, self.bin_dir / step, step, target, (self.size,) * 3, metrics,
                                            report, self.timeout, variant)
            if not rejected - self.rejected:  # nothing new to leave out: this is the answer
                return outcome
            self.rejected |= rejected
            missing = choose_metrics(self.rejected)[1]
            say(f"ncu_profile: note: this ncu does not know {', '.join(sorted(rejected))}; asking again "
                "without it" + (f" (n/a in profile.csv: {', '.join(missing)})" if missing else ""))


# ---- The run ------------------------------------------------------------------------------------

def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--out", required=True, type=Path,
                        help="folder for profile.csv, the roofline, the ncu reports")
    parser.add_argument("--size", type=positive_int, default=4096, help="M = N = K (default 4096)")
    parser.add_argument("--ncu", help="the ncu executable (default: PATH, then the CUDA toolkit)")
    parser.add_argument("--publish", type=Path,
                        help="also copy profile.csv, the roofline (and table.md) here")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds allowed per ncu run")
    parser.add_argument("--variants", type=comma_list,
                        help=f"profile only these, STEP/VARIANT or STEP, comma-separated, into {VARIANT_PROFILE}")
    add_peak_arguments(parser)
    add_venv_argument(parser)
    args = parser.parse_args(argv)
    if args.variants == []:
        parser.error("--variants: name at least one STEP/VARIANT")
    return args


def say(message, error=False):
    print(message, file=sys.stderr if error else sys.stdout, flush=True)


def profile_steps(args, ncu, names):
    """Profile each name, a step (STEP) or one of its variants (STEP/VARIANT), in order; returns
    (profile rows, names of the failed profiles, {precision: its first step profiled}) and the
    Profiler, for cuBLAS after them."""
    reports = args.out / "ncu"
    reports.mkdir(parents=True, exist_ok=True)
    profiler = Profiler(ncu, args.bin_dir, args.size, reports, args.timeout)
    shape = (args.size,) * 3
    rows, failures, first_step_of = [], [], {}
    for name in names:
        step, _, variant = name.partition("/")
        if not (args.bin_dir / step).is_file():
            raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"no step executable {args.bin_dir / step}")
        outcome = profiler.profile(step, "step", name, variant)
        if outcome.skipped:
            say(f"ncu_profile: skipping {name}: {outcome.skipped}")
        elif outcome.error:
            failures.append(name)
            say(f"ncu_profile: {name}: profile failed: {outcome.error}", error=True)
        else:
            first_step_of.setdefault(outcome.precision, step)
            rows += [kernel_row(k, name, outcome.precision, shape) for k in outcome.kernels]
    return rows, failures, first_step_of, profiler


def profile_all(args, ncu, steps):
    """Profile every step, then cuBLAS once per precision (through the first step of that
    precision that was profiled); returns (profile.csv rows, names of the failed profiles)."""
    rows, failures, first_step_of, profiler = profile_steps(args, ncu, steps)
    shape = (args.size,) * 3
    for precision, step in first_step_of.items():
        outcome = profiler.profile(step, "cublas", f"{CUBLAS} {precision} (through {step})")
        if outcome.kernels:
            rows += [kernel_row(k, CUBLAS, precision, shape) for k in outcome.kernels]
        else:
            failures.append(f"{CUBLAS} {precision}")
            say(f"ncu_profile: {CUBLAS} {precision}: profile failed: {outcome.error or outcome.skipped}",
                error=True)
    return add_step_totals(rows), failures


def profile_variants(args, ncu, names):
    """Profile each STEP/VARIANT (or STEP) of --variants, no cuBLAS; returns (rows, names of the
    failed)."""
    rows, failures, _, _ = profile_steps(args, ncu, names)
    return add_step_totals(rows), failures


def write_outputs(args, rows):
    """profile.csv, then make_plots on --out (make_plots.draw_results): roofline_measured.png and,
    with the worklog's worklog.csv there, table.md with the "limited by (measured)" column. What
    cannot be drawn (no matplotlib, no peaks for this GPU) is left out with a warning: the counters
    are never lost."""
    write_profile(rows, args.out / "profile.csv")
    say(str(args.out / "profile.csv"))
    (args.out / "roofline_measured.png").unlink(missing_ok=True)  # an old one is not this profile's
    venv = args.venv or plots_env.build_tree_venv(args.bin_dir)
    code = make_plots.draw_results(args.out, venv, "ncu_profile", given_peak_arguments(args))
    if code != exit_codes.EXIT_OK:
        say(f"ncu_profile: warning: make_plots exited with code {code}; only profile.csv is written", error=True)


def summary(rows):
    """A short table, one line per kernel, for the end of the run."""
    def number(value, scale=1.0, digits=1):
        return MISSING if value is None else f"{value / scale:.{digits}f}"

    lines = [f"{'step':<22} {'ms':>8} {'TFLOP/s':>8} {'DRAM GB':>8} {'L2 GB':>8} {'conflicts':>9} "
             f"{'occup%':>6} {'tensor%':>7}  limited by"]
    for r in rows:
        conflicts = (MISSING if r["shared_bank_conflicts"] is None or not r["shared_wavefronts"]
                     else f"{100 * r['shared_bank_conflicts'] / r['shared_wavefronts']:.0f}%")
        dram = None if r["dram_read_bytes"] is None or r["dram_write_bytes"] is None else \
            r["dram_read_bytes"] + r["dram_write_bytes"]
        name = r["step"] if r["step"] != CUBLAS else f"{CUBLAS} {r['precision']}"
        lines.append(f"{name:<22} {number(r['duration_ns'], 1e6, 3):>8} {number(r['tflops']):>8} "
                     f"{number(dram, 1e9, 2):>8} {number(r['l2_bytes'], 1e9, 2):>8} {conflicts:>9} "
                     f"{number(r['achieved_occupancy_pct']):>6} {number(r['tensor_pipe_pct']):>7}  "
                     f"{r['limited_by']}")
        if r["step"] == CUBLAS:
            lines.append(f"{'':<22} kernel: {r['kernel']}")
    return "\n".join(lines)


def remove_if_empty(folders):
    """Removes the folders this run made (innermost last in the list) that hold nothing: a profile
    that stopped before profiling anything leaves no trace."""
    for folder in reversed(folders):
        try:
            folder.rmdir()
        except OSError:
            pass


def main(argv=None):
    """Profile the worklog; return the exit code."""
    args = parse_args(argv)
    started = time.monotonic()
    created = [folder for folder in (args.out, args.out / "ncu") if not folder.exists()]
    try:
        if args.variants:
            ncu = find_ncu(args.ncu)
            rows, failures = profile_variants(args, ncu, args.variants)
        else:
            steps = built_steps(args.bin_dir, "ncu_profile")
            ncu = find_ncu(args.ncu)
            rows, failures = profile_all(args, ncu, steps)
    except Stop as stop:
        say(f"ncu_profile: error: {stop}", error=True)
        remove_if_empty(created)
        return stop.code
    if not rows:
        say("ncu_profile: error: no kernel was profiled", error=True)
        remove_if_empty(created)
        return exit_codes.EXIT_CHECK_FAILED
    if args.variants:
        write_profile(rows, args.out / VARIANT_PROFILE)
        say(str(args.out / VARIANT_PROFILE))
    else:
        write_outputs(args, rows)
    if args.publish:
        publish(args.out, args.publish, (VARIANT_PROFILE,) if args.variants else PUBLISHED)
        filler.refresh(args.publish, "ncu_profile", args.bin_dir)  # a checkout's plots/results: its READMEs
    say(summary(rows))
    say(f"ncu_profile: {len(rows)} kernel(s) profiled in {time.monotonic() - started:.0f} s"
        + (f"; FAILED: {', '.join(failures)}" if failures else ""))
    return exit_codes.EXIT_CHECK_FAILED if failures else exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
