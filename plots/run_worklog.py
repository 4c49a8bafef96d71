#!/usr/bin/env python3
"""Run every step of the GEMM worklog, then the size sweep, then draw the table and charts.

    python3 plots/run_worklog.py --bin-dir BUILD/bin --out BUILD/results [--size 4096]
        [--sweep-sizes 256,257,512,...] [--no-sweep] [--publish DIR] [--iters N --warmup N]

Exit codes: 0 all good; 1 a step failed verification (the run still completes) or stopped
with another error; 2 bad arguments or no step executables; 77 no CUDA device.
"""
import argparse
import shutil
import subprocess
import sys
import time
from pathlib import Path

import make_plots
from arguments import int_at_least, positive_int

STEPS = ("01_naive", "02_block_tiling", "03_thread_coarsening", "04_outer_product",
         "05_wmma", "06_multiwarp_wmma")
SWEEP_STEPS = ("04_outer_product", "06_multiwarp_wmma")  # the fastest step of each precision
# Multiples of 128 (whole tiles) next to N+1, which needs one more, mostly empty, row of tiles.
DEFAULT_SWEEP = (128, 129, 256, 257, 512, 513, 1024, 1025, 1536, 1537, 2048, 2049,
                 3072, 3073, 4096, 4097)
SWEEP_TIMING = ("--warmup", "2", "--iters", "10")  # 32 sweep runs: keep each one short
VERIFY_FAILED = 1  # the step's exit code when its result does not match the reference
NO_DEVICE = 77     # the step's exit code without a CUDA GPU (77 = "skipped" for CTest/automake)
# The step's other exit codes (see its --help); each one stops the worklog.
OTHER_EXITS = {2: "bad argument", 3: "matrices do not fit in device memory",
               4: "GPU not supported by this step", 5: "CUDA or cuBLAS error"}
PUBLISHED = ("worklog.csv", "sweep.csv", "table.md", "tflops.png", "sweep.png", "roofline.png")


def size_list(text):
    return [positive_int(part) for part in text.split(",")]


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--out", required=True, type=Path, help="folder for CSVs, table and charts")
    parser.add_argument("--size", type=positive_int, default=4096, help="M = N = K of the main runs")
    parser.add_argument("--sweep-sizes", type=size_list, default=list(DEFAULT_SWEEP),
                        help="comma-separated square sizes for the sweep")
    parser.add_argument("--no-sweep", action="store_true", help="skip the size sweep")
    parser.add_argument("--publish", type=Path, help="also copy the results into this folder")
    parser.add_argument("--iters", type=positive_int, help="timed iterations of the main runs")
    parser.add_argument("--warmup", type=int_at_least(0), help="warm-up iterations of the main runs")
    return parser.parse_args(argv)


def plan_runs(args, available):
    """The (step, size, extra arguments, CSV file) of every run, in order."""
    timing = []
    if args.warmup is not None:
        timing += ["--warmup", str(args.warmup)]
    if args.iters is not None:
        timing += ["--iters", str(args.iters)]
    runs = [(step, args.size, timing, args.out / "worklog.csv") for step in available]
    if not args.no_sweep:
        for step in (s for s in SWEEP_STEPS if s in available):
            runs += [(step, n, list(SWEEP_TIMING), args.out / "sweep.csv") for n in args.sweep_sizes]
    return runs


def publish(out, target):
    target.mkdir(parents=True, exist_ok=True)
    for name in PUBLISHED:
        if (out / name).exists():  # sweep.png or roofline.png may not have been drawn
            shutil.copy2(out / name, target / name)
            print(target / name, flush=True)


def main(argv=None):
    """Run the worklog; return the exit code."""
    args = parse_args(argv)
    started = time.monotonic()
    available = []
    for step in STEPS:
        exe = args.bin_dir / step
        if exe.is_file():
            available.append(step)
        else:
            print(f"run_worklog: warning: {exe} not found; skipping {step}", file=sys.stderr, flush=True)
    if not available:
        print(f"run_worklog: error: no step executables in {args.bin_dir}", file=sys.stderr)
        return 2

    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("worklog.csv", "sweep.csv"):  # start fresh: the steps append to these files
        (args.out / name).unlink(missing_ok=True)

    failed = []  # steps whose result did not match the reference
    runs = plan_runs(args, available)
    for number, (step, n, extra, csv_file) in enumerate(runs, 1):
        print(f"[{number}/{len(runs)}] {step} {n}x{n}x{n}", flush=True)
        command = [str(args.bin_dir / step), "--m", str(n), "--n", str(n), "--k", str(n),
                   *extra, "--csv", str(csv_file)]
        try:
            code = subprocess.run(command).returncode  # its output goes straight to our stdout
        except OSError as e:
            print(f"run_worklog: cannot run {command[0]}: {e}", file=sys.stderr)
            return 1
        if code == VERIFY_FAILED:
            failed.append(f"{step} {n}x{n}x{n}")
            print(f"run_worklog: {step} FAILED verification; continuing", file=sys.stderr, flush=True)
        elif code == NO_DEVICE:
            print("run_worklog: no CUDA device; the worklog needs an NVIDIA GPU", file=sys.stderr)
            return NO_DEVICE
        elif code != 0:
            meaning = f" ({OTHER_EXITS[code]})" if code in OTHER_EXITS else ""
            print(f"run_worklog: {step} exited with code {code}{meaning}; stopping", file=sys.stderr)
            return 1

    plot_args = ["--csv", str(args.out / "worklog.csv"), "--out", str(args.out)]
    if (args.out / "sweep.csv").exists():
        plot_args += ["--sweep", str(args.out / "sweep.csv")]
    if (args.out / "profile.csv").exists():  # from ncu_profile.py: the "limited by (measured)" column
        plot_args += ["--profile", str(args.out / "profile.csv")]
    code = make_plots.main(plot_args)
    if code != 0:
        return code
    if args.publish:
        publish(args.out, args.publish)
    print(f"run_worklog: done in {time.monotonic() - started:.1f} s", flush=True)
    if failed:
        print("run_worklog: FAILED verification: " + ", ".join(failed), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
