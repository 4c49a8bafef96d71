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

Exit codes, the worklog's own (common/exit_codes.hpp, read through common/exit_codes.py):
  0   exit_ok: all good (steps that do not support this GPU are skipped, with one line each, and
      charts left out for lack of matplotlib still mean 0)
  1   exit_check_failed: a step failed verification (the run still completes) or stopped with
      another error
  2   exit_bad_argument: bad arguments, no list of steps, or no step executables
  4   exit_unsupported_gpu: no step supports this GPU
  77  exit_no_device: no CUDA device (the first step says why: no driver, a driver too old, no GPU)
The CSVs are written into a temporary folder and moved into --out when the runs end, so a run
that stops before any step has measured (no CUDA device, say) leaves --out as it was.
"""
import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "common"))
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
import make_plots  # noqa: E402
import plots_env  # noqa: E402
import readme_blocks  # noqa: E402
from arguments import add_venv_argument, int_at_least, positive_int  # noqa: E402
from results_csv import InputError, load_rows  # noqa: E402

STEP_LIST = "worklog_steps.txt"  # in --bin-dir, written by CMake
# Multiples of 128 (whole tiles) next to N+1, which needs one more, mostly empty, row of tiles.
DEFAULT_SWEEP = (128, 129, 256, 257, 512, 513, 1024, 1025, 1536, 1537, 2048, 2049,
                 3072, 3073, 4096, 4097)
SWEEP_TIMING = ("--warmup", "2", "--iters", "10")  # 32 sweep runs: keep each one short
# What a step executable's exit code means here: a failed check is noted and the worklog goes on;
# a step this GPU cannot run is skipped; no CUDA device stops the worklog; any other stops it too.
STOPPING_EXITS = {exit_codes.EXIT_BAD_ARGUMENT: "bad argument",
                  exit_codes.EXIT_DOES_NOT_FIT: "matrices do not fit in device memory",
                  exit_codes.EXIT_CUDA_ERROR: "CUDA or cuBLAS error"}
CSVS = ("worklog.csv", "sweep.csv")  # what the step runs append to (in a temporary folder first)
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
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"cannot read the list of steps {path} ({e.strerror}): "
                                                 "--bin-dir must be the build's bin folder, where the build writes it"
                   ) from None
    steps = [line.strip() for line in lines if line.strip() and not line.lstrip().startswith("#")]
    if not steps:
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"{path} lists no steps")
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
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"no step executables in {bin_dir}")
    return steps


def main_runs(args, steps, folder):
    """The (step, size, extra arguments, CSV file in folder) of every run at --size, in step order."""
    timing = []
    if args.warmup is not None:
        timing += ["--warmup", str(args.warmup)]
    if args.iters is not None:
        timing += ["--iters", str(args.iters)]
    return [(step, args.size, timing, folder / "worklog.csv") for step in steps]


def sweep_runs(args, steps, folder):
    return [(step, n, list(SWEEP_TIMING), folder / "sweep.csv") for step in steps for n in args.sweep_sizes]


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
        raise Stop(exit_codes.EXIT_CHECK_FAILED, f"cannot run {command[0]}: {e}") from None
    return done.returncode, done.stderr


def run_all(bin_dir, runs, label, failed, unsupported):
    """Run each (step, size, extra, CSV file); note failed verifications in `failed` and steps
    that cannot run on this GPU in `unsupported` (their later runs are left out)."""
    for number, (step, n, extra, csv_file) in enumerate(runs, 1):
        if step in unsupported:
            continue
        print(f"[{label}{number}/{len(runs)}] {step} {n}x{n}x{n}", flush=True)
        code, stderr = run_step(bin_dir, step, n, extra, csv_file)
        prefix = f"{step}: error: "  # the step's own one-line message, said again as ours
        said = stderr.strip().splitlines()[-1] if stderr.strip() else ""
        said = said[len(prefix):] if said.startswith(prefix) else said
        if code == exit_codes.EXIT_UNSUPPORTED_GPU:
            print(f"run_worklog: skipping {step}: {said or f'exit code {code}'}", file=sys.stderr, flush=True)
            unsupported.add(step)
            continue
        if code == exit_codes.EXIT_NO_DEVICE:  # the step's reason, in our one line
            raise Stop(exit_codes.EXIT_NO_DEVICE, "no CUDA device; the worklog needs an NVIDIA GPU"
                                                  + (f" ({step}: {said})" if said else ""))
        sys.stderr.write(stderr)
        if code == exit_codes.EXIT_CHECK_FAILED:
            failed.append(f"{step} {n}x{n}x{n}")
            print(f"run_worklog: {step} FAILED verification; continuing", file=sys.stderr, flush=True)
        elif code != exit_codes.EXIT_OK:
            meaning = f" ({STOPPING_EXITS[code]})" if code in STOPPING_EXITS else ""
            raise Stop(exit_codes.EXIT_CHECK_FAILED, f"{step} exited with code {code}{meaning}; stopping")


def publish(out, target, names=PUBLISHED):
    """Copy the files of these names that are in out into target (a chart may not have been drawn)."""
    target.mkdir(parents=True, exist_ok=True)
    for name in names:
        if (out / name).exists():
            shutil.copy2(out / name, target / name)
            print(target / name, flush=True)


def move_results(staging, out):
    """Moves the CSVs the runs wrote in staging into out, in place of those of an earlier run, and
    removes staging. When no step wrote a row (no CUDA device, say), out is left as it was."""
    written = [staging / name for name in CSVS if (staging / name).is_file()]
    if written:
        out.mkdir(parents=True, exist_ok=True)
        for name in CSVS:
            (out / name).unlink(missing_ok=True)
        for path in written:
            shutil.move(str(path), str(out / path.name))
    shutil.rmtree(staging, ignore_errors=True)


def run_worklog(args):
    """Everything after the command line; raises Stop to end early. Returns the exit code."""
    started = time.monotonic()
    steps = built_steps(args.bin_dir, "run_worklog")

    staging = Path(tempfile.mkdtemp(prefix="run_worklog-"))
    try:
        failed, unsupported = [], set()  # failed verifications; steps this GPU cannot run
        run_all(args.bin_dir, main_runs(args, steps, staging), "", failed, unsupported)
        if len(unsupported) == len(steps):
            raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, "no step supports this GPU")
        if not args.no_sweep:
            try:
                sweep_steps = fastest_per_precision(load_rows(staging / "worklog.csv"))
            except InputError as e:
                raise Stop(exit_codes.EXIT_CHECK_FAILED, f"cannot read the results just written: {e}") from None
            print("run_worklog: size sweep of the fastest step of each precision: "
                  + (", ".join(sweep_steps) or "none passed"), flush=True)
            run_all(args.bin_dir, sweep_runs(args, sweep_steps, staging), "sweep ", failed, unsupported)
    finally:
        move_results(staging, args.out)

    # The table and the charts; with profile.csv (ncu_profile.py) in --out, also the "limited by
    # (measured)" column and roofline_measured.png.
    code = make_plots.draw_results(args.out, args.venv or plots_env.build_tree_venv(args.bin_dir), "run_worklog")
    if code != exit_codes.EXIT_OK:
        return code
    if args.publish:
        publish(args.out, args.publish)
        readme_blocks.refresh(args.publish, "run_worklog")  # a checkout's plots/results: its READMEs
    print(f"run_worklog: done in {time.monotonic() - started:.1f} s", flush=True)
    if failed:
        print("run_worklog: FAILED verification: " + ", ".join(failed), file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


def main(argv=None):
    """Run the worklog; return the exit code."""
    args = parse_args(argv)
    try:
        return run_worklog(args)
    except Stop as stop:
        error = "error: " if stop.code == exit_codes.EXIT_BAD_ARGUMENT else ""
        print(f"run_worklog: {error}{stop}", file=sys.stderr, flush=True)
        return stop.code


if __name__ == "__main__":
    sys.exit(main())
