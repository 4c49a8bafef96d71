#!/usr/bin/env python3
"""Run every step of the GEMM worklog, then the size sweep, then write the table and the charts.

    python3 plots/run_worklog.py --bin-dir BUILD/bin --out BUILD/results [--size 4096]
        [--sweep-sizes 256,257,512,...] [--no-sweep] [--publish DIR] [--iters N --warmup N]
        [--venv BUILD/plots-venv]

The steps and their order come from BIN_DIR/worklog_steps.txt, which the build writes from the
add_worklog_step() lines of CMakeLists.txt. Each step runs at --size; the sweep then runs the
fastest verified step of each precision, as just measured, at every --sweep-sizes N.

The table needs only Python. The charts need matplotlib: when this Python cannot import it, it
is installed into the virtual environment --venv (default: BIN_DIR/../plots-venv, in the build
tree), made on first use; when that fails too, the CSVs and the table are still written and one
line says how to get the charts. When --out holds a profile.csv (from ncu_profile.py), the table
gains the "limited by (measured)" column and roofline_measured.png is redrawn.

Exit codes: 0 all good (steps that do not support this GPU are skipped, with one line each,
and charts left out for lack of matplotlib still mean 0); 1 a step failed verification (the run
still completes) or stopped with another error; 2 bad arguments, no list of steps, or no step
executables; 4 no step supports this GPU; 77 no CUDA device.
"""
import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import make_plots
import plots_env
import readme_blocks
from arguments import add_venv_argument, int_at_least, positive_int
from results_csv import InputError, load_rows

STEP_LIST = "worklog_steps.txt"  # in --bin-dir, written by CMake
# Multiples of 128 (whole tiles) next to N+1, which needs one more, mostly empty, row of tiles.
DEFAULT_SWEEP = (128, 129, 256, 257, 512, 513, 1024, 1025, 1536, 1537, 2048, 2049,
                 3072, 3073, 4096, 4097)
SWEEP_TIMING = ("--warmup", "2", "--iters", "10")  # 32 sweep runs: keep each one short
# The step executables' exit codes (their --help and README.md list them all).
VERIFY_FAILED = 1    # the result does not match the reference: noted, and the worklog goes on
UNSUPPORTED_GPU = 4  # the step cannot run on this GPU (e.g. Hopper-only code): skipped
NO_DEVICE = 77       # no CUDA GPU (77 = "skipped" for CTest/automake): the worklog stops
# The others stop the worklog.
OTHER_EXITS = {2: "bad argument", 3: "matrices do not fit in device memory", 5: "CUDA or cuBLAS error"}
PUBLISHED = ("worklog.csv", "sweep.csv", "table.md", "tflops.png", "sweep.png", "roofline.png")


class Stop(Exception):
    """Ends the worklog (or the profile, ncu_profile.py) early: one line for stderr, and the exit
    code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def size_list(text):
    return [positive_int(part) for part in text.split(",")]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path,
                        help=f"folder with the step executables and {STEP_LIST}")
    parser.add_argument("--out", required=True, type=Path, help="folder for CSVs, table and charts")
    parser.add_argument("--size", type=positive_int, default=4096, help="M = N = K of the main runs")
    parser.add_argument("--sweep-sizes", type=size_list, default=list(DEFAULT_SWEEP),
                        help="comma-separated square sizes for the sweep")
    parser.add_argument("--no-sweep", action="store_true", help="skip the size sweep")
    parser.add_argument("--publish", type=Path, help="also copy the results into this folder")
    parser.add_argument("--iters", type=positive_int, help="timed iterations of the main runs")
    parser.add_argument("--warmup", type=int_at_least(0), help="warm-up iterations of the main runs")
    add_venv_argument(parser)
    return parser.parse_args(argv)


def read_step_list(bin_dir):
    """The steps, in order, from the list the build wrote (one name a line; # starts a comment)."""
    path = bin_dir / STEP_LIST
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as e:
        raise Stop(2, f"cannot read the list of steps {path} ({e.strerror}): --bin-dir must be the "
                      "build's bin folder, where the build writes it") from None
    steps = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not steps:
        raise Stop(2, f"{path} lists no steps")
    return steps


def built_steps(bin_dir, who):
    """The listed steps (read_step_list) whose executables are in bin_dir, in order; one warning,
    starting "<who>:", for each that is not. Raises Stop when none is."""
    steps = []
    for step in read_step_list(bin_dir):
        if (bin_dir / step).is_file():
            steps.append(step)
        else:
            print(f"{who}: warning: {bin_dir / step} not found; skipping {step}", file=sys.stderr, flush=True)
    if not steps:
        raise Stop(2, f"no step executables in {bin_dir}")
    return steps


def main_runs(args, steps):
    """The (step, size, extra arguments, CSV file) of every run at --size, in step order."""
    timing = []
    if args.warmup is not None:
        timing += ["--warmup", str(args.warmup)]
    if args.iters is not None:
        timing += ["--iters", str(args.iters)]
    return [(step, args.size, timing, args.out / "worklog.csv") for step in steps]


def sweep_runs(args, steps):
    return [(step, n, list(SWEEP_TIMING), args.out / "sweep.csv") for step in steps for n in args.sweep_sizes]


def fastest_per_precision(rows):
    """The fastest step of each precision, by TFLOP/s, leaving out results that failed their
    check; in the order the precisions first appear."""
    fastest = {}
    for row in rows:
        if row["status"] == "FAIL":
            continue
        best = fastest.get(row["precision"])
        if best is None or row["tflops"] > best["tflops"]:
            fastest[row["precision"]] = row
    return [row["step"] for row in fastest.values()]


def run_step(bin_dir, step, n, extra, csv_file):
    """Run one step executable; its stdout goes straight to ours. Returns (exit code, stderr)."""
    command = [str(bin_dir / step), "--m", str(n), "--n", str(n), "--k", str(n), *extra,
               "--csv", str(csv_file)]
    try:
        done = subprocess.run(command, stderr=subprocess.PIPE, text=True, errors="replace")
    except OSError as e:
        raise Stop(1, f"cannot run {command[0]}: {e}") from None
    return done.returncode, done.stderr


def run_all(bin_dir, runs, label, failed, unsupported):
    """Run each (step, size, extra, CSV file); note failed verifications in `failed` and steps
    that cannot run on this GPU in `unsupported` (their later runs are left out)."""
    for number, (step, n, extra, csv_file) in enumerate(runs, 1):
        if step in unsupported:
            continue
        print(f"[{label}{number}/{len(runs)}] {step} {n}x{n}x{n}", flush=True)
        code, stderr = run_step(bin_dir, step, n, extra, csv_file)
        if code == UNSUPPORTED_GPU:
            reason = stderr.strip().splitlines()[-1] if stderr.strip() else "exit code 4"
            prefix = f"{step}: error: "  # the step's own one-line message, said again as ours
            reason = reason[len(prefix):] if reason.startswith(prefix) else reason
            print(f"run_worklog: skipping {step}: {reason}", file=sys.stderr, flush=True)
            unsupported.add(step)
            continue
        sys.stderr.write(stderr)
        if code == VERIFY_FAILED:
            failed.append(f"{step} {n}x{n}x{n}")
            print(f"run_worklog: {step} FAILED verification; continuing", file=sys.stderr, flush=True)
        elif code == NO_DEVICE:
            raise Stop(NO_DEVICE, "no CUDA device; the worklog needs an NVIDIA GPU")
        elif code != 0:
            meaning = f" ({OTHER_EXITS[code]})" if code in OTHER_EXITS else ""
            raise Stop(1, f"{step} exited with code {code}{meaning}; stopping")


def publish(out, target, names=PUBLISHED):
    """Copy the files of these names that are in out into target (a chart may not have been drawn)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (out / name).exists():
            shutil.copy2(out / name, target / name)
            print(target / name, flush=True)


def run_worklog(args):
    """Everything after the command line; raises Stop to end early. Returns the exit code."""
    started = time.monotonic()
    steps = built_steps(args.bin_dir, "run_worklog")

    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("worklog.csv", "sweep.csv"):  # start fresh: the steps append to these files
        (args.out / name).unlink(missing_ok=True)

    failed, unsupported = [], set()  # failed verifications; steps this GPU cannot run
    run_all(args.bin_dir, main_runs(args, steps), "", failed, unsupported)
    if len(unsupported) == len(steps):
        raise Stop(UNSUPPORTED_GPU, "no step supports this GPU")
    if not args.no_sweep:
        try:
            sweep_steps = fastest_per_precision(load_rows(args.out / "worklog.csv"))
        except InputError as e:
            raise Stop(1, f"cannot read the results just written: {e}") from None
        print("run_worklog: size sweep of the fastest step of each precision: "
              + (", ".join(sweep_steps) or "none passed"), flush=True)
        run_all(args.bin_dir, sweep_runs(args, sweep_steps), "sweep ", failed, unsupported)

    # The table and the charts; with profile.csv (ncu_profile.py) in --out, also the "limited by
    # (measured)" column and roofline_measured.png.
    code = make_plots.draw_results(args.out, args.venv or plots_env.build_tree_venv(args.bin_dir), "run_worklog")
    if code != 0:
        return code
    if args.publish:
        publish(args.out, args.publish)
        readme_blocks.refresh(args.publish, "run_worklog")  # a checkout's plots/results: its READMEs
    print(f"run_worklog: done in {time.monotonic() - started:.1f} s", flush=True)
    if failed:
        print("run_worklog: FAILED verification: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


def main(argv=None):
    """Run the worklog; return the exit code."""
    args = parse_args(argv)
    try:
        return run_worklog(args)
    except Stop as stop:
        print(f"run_worklog: {'error: ' if stop.code == 2 else ''}{stop}", file=sys.stderr, flush=True)
        return stop.code


if __name__ == "__main__":
    sys.exit(main())
