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
of metrics (ncu_metrics.py: METRIC_FIELDS, STALL_REASONS), less any this ncu says it does not know (the run is
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
import itertools
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
from profiling.ncu_metrics import (METRIC_FIELDS, NcuCsvError, NcuKernel, STALL_REASONS, choose_metrics,  # noqa: E402,F401
                                   kernel_row, metric_base, parse_ncu_csv, parse_value, rejected_metrics,
                                   stall_metric, unit_scale)
from profiling.profile_csv import CUBLAS, MISSING, add_step_totals, write_profile  # noqa: E402
from run.run_worklog import Stop, built_steps, publish  # noqa: E402

PUBLISHED = ("profile.csv", "roofline_measured.png", "table.md")  # what --publish copies, when written
VARIANT_PROFILE = "variant_profile.csv"  # what --variants writes (and --publish copies) instead

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
