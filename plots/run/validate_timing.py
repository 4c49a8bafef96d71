#!/usr/bin/env python3
"""Does the harness time what the GPU spends? For each shape, a step's % of cuBLAS as the harness
measures it (common/harness_timing.hpp, cold and warm) beside the ratio of the kernel times that
Nsight Compute measures with its caches flushed, into timing_validation.csv.

    python3 plots/run/validate_timing.py --bin-dir BUILD/bin --out DIR [--step 15_tile_per_shape]
        [--shapes 128x128x128,...] [--ncu PATH] [--timeout SECONDS]

For each shape (default SHAPES: small squares, decode layers, convolutions, the headline squares):
  - the step executable, once with --timing cold and once with --timing warm, each timing the step
    and cuBLAS in alternation (the medians of --iters rounds);
  - ncu (ncu_profile.run_profile: --cache-control all, --clock-control none) on `--profile step` and
    on `--profile cublas`, --launches launches each (--profile-launches), every kernel after a flush of
    the caches; a launch's time is the sum of its kernels' gpu__time_duration (cuBLAS's split-K
    reduction, 14's copies), and the median over the launches is kept.
A row agrees when the harness's cold ratio is within TOLERANCE (5%) of Nsight Compute's, or, for
launches of a few microseconds, when the harness's times of the step and of cuBLAS are each within
ABSOLUTE_US (0.3 µs) of Nsight Compute's. The harness's times include what lies between a launch's
kernels and Nsight Compute's do not, and Nsight Compute flushes the caches before every kernel where
the harness flushes them before every launch. The harness times the kernels by their own timestamps
(the timer column says "kernels"), where it can load CUPTI.

It writes DIR/timing_validation.csv (COLUMNS) and prints a table. Exit codes (common/exit_codes.hpp):
0 every shape measured and agreeing; 1 some shape disagrees or could not be measured (its row says
why); 2 bad arguments; 4 the step cannot run on this GPU; 6 ncu not found; 7 no access to the
counters; 77 no CUDA device.
"""
import argparse
import csv
import datetime
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402
from shapes import shape_corpus  # noqa: E402
from run.arguments import positive_int  # noqa: E402
from shapes.cublas_pick import shape_list  # noqa: E402
from profiling.ncu_profile import find_ncu, run_profile  # noqa: E402
from report.results_csv import InputError, load_rows  # noqa: E402
from run.run_worklog import Stop  # noqa: E402

# Small squares (where the host's time inside cuBLAS once counted as cuBLAS's), decode layers (where
# warm weights once sat in L2), convolutions as GEMMs, a mid-size square and the headline squares.
SHAPES = ((128, 128, 128), (256, 256, 256), (512, 512, 512), (1024, 1024, 1024), (1, 4096, 4096),
          (16, 4096, 4096), (64, 4096, 4096), (128, 4096, 4096), (16, 14336, 4096), (1, 28672, 8192),
          (200704, 128, 576), (802816, 64, 27), (2048, 2048, 2048), (4096, 4096, 4096), (8192, 8192, 8192))
TOLERANCE = 0.05   # the ratios agree within 5%...
ABSOLUTE_US = 0.3  # ...or both times within 0.3 µs
FILE = "timing_validation.csv"
COLUMNS = ("gpu date step m n k harness_step_us harness_cublas_us harness_pct warm_step_us warm_cublas_us "
           "warm_pct ncu_step_us ncu_cublas_us ncu_step_kernels ncu_cublas_kernels ncu_pct ratio_gap_pct "
           "step_gap_us cublas_gap_us agrees timer sm_mhz_before sm_mhz_after note").split()


def agrees(harness_step, harness_cublas, ncu_step, ncu_cublas):
    """(agrees, the ratios' gap in %, the step's and cuBLAS's gaps in µs) for times in µs."""
    harness_ratio, ncu_ratio = harness_cublas / harness_step, ncu_cublas / ncu_step
    gap = 100.0 * (harness_ratio / ncu_ratio - 1.0)
    step_gap, cublas_gap = harness_step - ncu_step, harness_cublas - ncu_cublas
    close = abs(step_gap) <= ABSOLUTE_US and abs(cublas_gap) <= ABSOLUTE_US
    return abs(gap) <= 100.0 * TOLERANCE or close, gap, step_gap, cublas_gap


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--out", required=True, type=Path, help=f"folder for {FILE}")
    parser.add_argument("--step", default="15_tile_per_shape", help="the step executable (default 15_tile_per_shape)")
    parser.add_argument("--shapes", type=shape_list, default=list(SHAPES),
                        help="comma-separated MxNxK (default: " + ",".join(map(shape_corpus.shape_text, SHAPES)) + ")")
    parser.add_argument("--iters", type=positive_int, default=50, help="timed rounds of the harness (default 50)")
    parser.add_argument("--launches", type=positive_int, default=5,
                        help="launches ncu profiles, each with its caches flushed; the median is kept (default 5)")
    parser.add_argument("--ncu", help="the ncu executable (default: PATH, then the CUDA toolkit)")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds allowed per run")
    return parser.parse_args(argv)


def harness(exe, shape, mode, iters, csv_path, timeout):
    """The step's row of one run in `mode`; Stop for what ends the validation, None with a reason."""
    m, n, k = shape
    csv_path.unlink(missing_ok=True)
    command = [str(exe), "--m", str(m), "--n", str(n), "--k", str(k), "--timing", mode, "--warmup", "5",
               "--iters", str(iters), "--no-check", "--csv", str(csv_path)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None, f"the {mode} run timed out after {timeout} s"
    if done.returncode == exit_codes.EXIT_NO_DEVICE:
        raise Stop(exit_codes.EXIT_NO_DEVICE, "no CUDA device")
    if done.returncode == exit_codes.EXIT_UNSUPPORTED_GPU:
        raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, done.stderr.strip().splitlines()[-1])
    if done.returncode != exit_codes.EXIT_OK:
        return None, f"the {mode} run exited with {done.returncode}: {done.stderr.strip()[-200:]}"
    try:
        return load_rows(csv_path)[-1], ""
    except InputError as e:
        return None, f"the {mode} run's CSV: {e}"


def kernel_time_us(ncu, exe, step, target, shape, report, timeout, launches):
    """(µs, kernels a launch) of target through ncu: the median over `launches` launches of the sum of
    a launch's kernels' durations; or (None, reason)."""
    outcome, rejected = run_profile(ncu, exe, step, target, shape, ["gpu__time_duration.sum"], report, timeout,
                                    extra=("--profile-launches", str(launches)))
    if outcome.skipped:
        raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, outcome.skipped)
    if outcome.error or rejected:
        return None, outcome.error or "ncu rejected gpu__time_duration.sum"
    times = [k.metrics.get("gpu__time_duration.sum") for k in outcome.kernels]
    if any(not isinstance(t, float) for t in times):
        return None, "a kernel without a duration"
    if len(times) % launches:
        return None, f"{len(times)} kernels for {launches} launches"
    per = len(times) // launches
    return statistics.median(sum(times[i:i + per]) for i in range(0, len(times), per)) / 1e3, per


def validate(args):
    exe = args.bin_dir / args.step
    if not exe.is_file():
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"no step executable {exe}")
    ncu = find_ncu(args.ncu)
    rows, bad = [], 0
    today = datetime.date.today().isoformat()
    with tempfile.TemporaryDirectory() as tmp:
        for number, shape in enumerate(args.shapes, 1):
            text = shape_corpus.shape_text(shape)
            print(f"[{number}/{len(args.shapes)}] {args.step} and cuBLAS {text}", flush=True)
            row = dict.fromkeys(COLUMNS, "")
            row.update({"date": today, "step": args.step, "m": shape[0], "n": shape[1], "k": shape[2]})
            cold, why = harness(exe, shape, "cold", args.iters, Path(tmp) / "cold.csv", args.timeout)
            warm, why_warm = harness(exe, shape, "warm", args.iters, Path(tmp) / "warm.csv", args.timeout)
            step_us, step_kernels = kernel_time_us(ncu, exe, args.step, "step", shape, Path(tmp) / "s.ncu-rep",
                                                   args.timeout, args.launches)
            cublas_us, cublas_kernels = kernel_time_us(ncu, exe, args.step, "cublas", shape,
                                                       Path(tmp) / "c.ncu-rep", args.timeout, args.launches)
            problems = [p for p in (why, why_warm) if p]
            problems += [k for k in (step_kernels, cublas_kernels) if isinstance(k, str)]
            if warm:
                row.update({"warm_step_us": 1e3 * warm["ms"], "warm_cublas_us": 1e3 * warm["cublas_ms"],
                            "warm_pct": warm["pct_cublas"]})
            if cold:
                row.update({"gpu": cold["gpu"], "harness_step_us": 1e3 * cold["ms"],
                            "harness_cublas_us": 1e3 * cold["cublas_ms"], "harness_pct": cold["pct_cublas"],
                            "timer": cold.get("timer") or "", "sm_mhz_before": cold.get("sm_mhz_before"),
                            "sm_mhz_after": cold.get("sm_mhz_after")})
            if step_us is not None and cublas_us is not None:
                row.update({"ncu_step_us": step_us, "ncu_cublas_us": cublas_us, "ncu_step_kernels": step_kernels,
                            "ncu_cublas_kernels": cublas_kernels, "ncu_pct": 100.0 * cublas_us / step_us})
            if cold and step_us is not None and cublas_us is not None:
                ok, gap, step_gap, cublas_gap = agrees(1e3 * cold["ms"], 1e3 * cold["cublas_ms"], step_us, cublas_us)
                row.update({"ratio_gap_pct": gap, "step_gap_us": step_gap, "cublas_gap_us": cublas_gap,
                            "agrees": "yes" if ok else "no"})
                bad += not ok
            else:
                row["agrees"] = "no"
                bad += 1
            row["note"] = "; ".join(problems)
            rows.append(row)
            print("  harness cold {harness_pct}, warm {warm_pct}, Nsight Compute {ncu_pct} (% of cuBLAS); "
                  "agrees: {agrees}".format(**{k: f"{v:.1f}" if isinstance(v, float) else v for k, v in row.items()}),
                  flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    with open(args.out / FILE, "w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: f"{v:.6g}" if isinstance(v, float) else v for k, v in row.items()})
    print(f"{args.out / FILE}: {len(rows) - bad} of {len(rows)} shapes agree", flush=True)
    return exit_codes.EXIT_OK if bad == 0 else exit_codes.EXIT_CHECK_FAILED


def main(argv=None):
    args = parse_args(argv)
    started = time.monotonic()
    try:
        code = validate(args)
    except Stop as stop:
        print(f"validate_timing: error: {stop}", file=sys.stderr, flush=True)
        return stop.code
    print(f"validate_timing: done in {time.monotonic() - started:.0f} s", flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main())
