#!/usr/bin/env python3
"""Measure the rows of a step's variant table and write them as rows of plots/results/experiments.csv.

    python3 plots/run/record_variants.py --bin-dir build/bin --tables 07_async_pipeline,08_mma_ldmatrix \\
        [--sizes 4096,8192] [--processes 3] [--experiment technique_variants] [--root DIR] --out FILE

A step's variant table is the `variants/STEP` block of STEP/README.md: its BEGIN line's rows= names
the rows, the step itself, its variants, or another step (filler.variant_tables). The tables
known are those of the steps that CMakeLists.txt builds, in the checkout --root (default: the one
this script is in).

Every row of the named tables (the step itself, or one of its variants) runs at each size M = N = K
in a process of its own, its kernel and cuBLAS timed in alternation by the harness (median of 20
runs after 5 warm-ups). The processes are taken in turn: the first process of every row and size,
then the second of each, so that a slow spell of the GPU falls on all rows alike rather than on
one. Each run gives four rows of FILE (appended; the header written when FILE is new): ms, tflops,
cublas_tflops and pct_cublas, with `run` the process's number. Copy them into
plots/results/experiments.csv, then `python3 plots/readme/filler.py --write` renders the tables.

A run that fails (its check, or any other exit code) is reported on stderr and writes no row; the
other runs go on, and the exit code is then 1. A run that outlasts --timeout seconds is stopped and
counts as failed. Exit codes (common/exit_codes.py): 0 every run written; 1 exit_check_failed, some
run failed; 2 exit_bad_argument, bad arguments or an unknown table; 77 exit_no_device, no GPU (the
first run said so). Needs only the Python standard library.
"""
import argparse
import csv
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402
from readme import filler  # noqa: E402

COLUMNS = ["experiment", "date", "gpu", "step", "variant", "m", "n", "k", "run", "metric", "value", "source"]
METRICS = ("ms", "tflops", "cublas_tflops", "pct_cublas")  # columns of the harness's CSV, kept as metrics
SOURCE = ("plots/run/record_variants.py: each row of the variant table in its own process, the processes "
          "taken in turn; step and cuBLAS timed in alternation, cold (L2 flushed before every timed run), by the "
          "kernels' timestamps, median of 20 runs after 5 warm-ups")


def positive_list(text):
    values = [int(part) for part in text.split(",") if part.strip()]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"expected positive integers separated by commas (got '{text}')")
    return values


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--tables", required=True, type=lambda t: [s.strip() for s in t.split(",") if s.strip()],
                        help="comma-separated variant tables to measure, by step (its README's variants block)")
    parser.add_argument("--sizes", type=positive_list, default=[4096, 8192], help="M = N = K, comma-separated")
    parser.add_argument("--processes", type=int, default=3, help="processes per row and size (default 3)")
    parser.add_argument("--experiment", default="technique_variants", help="the rows' experiment name")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds one run may take (default 300)")
    parser.add_argument("--root", type=Path, default=filler.CHECKOUT,
                        help="the checkout whose steps' READMEs hold the tables (default: this script's)")
    parser.add_argument("--out", required=True, type=Path, help="CSV file the rows are appended to")
    args = parser.parse_args(argv)
    try:
        args.known = filler.variant_tables(args.root)
    except filler.BlockError as e:
        parser.error(str(e))
    unknown = [t for t in args.tables if t not in args.known]
    if unknown or not args.tables:
        parser.error(f"unknown variant table(s) {', '.join(unknown) or '(none given)'}; "
                     f"known: {', '.join(args.known) or 'none'}")
    if args.processes < 1:
        parser.error("--processes must be at least 1")
    return args


def table_rows(known, tables):
    """The (step, variant) pairs of the tables (known: filler.variant_tables), each once, in
    the tables' order."""
    pairs = []
    for table in tables:
        for pair in known[table]:
            if pair not in pairs:
                pairs.append(pair)
    return pairs


def run_once(bin_dir, step, variant, n, timeout):
    """Run one step (or variant) at n³ in its own process. Returns (exit code, message, harness CSV
    row or None)."""
    with tempfile.TemporaryDirectory() as folder:
        csv_file = Path(folder) / "run.csv"
        command = [str(bin_dir / step), "--m", str(n), "--n", str(n), "--k", str(n), "--csv", str(csv_file)]
        if variant:
            command += ["--variant", variant]
        try:
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  errors="replace", timeout=timeout)
        except subprocess.TimeoutExpired:
            return exit_codes.EXIT_CHECK_FAILED, f"no result after {timeout:g} s: stopped", None
        except OSError as e:
            return exit_codes.EXIT_BAD_ARGUMENT, f"cannot run {command[0]}: {e}", None
        lines = done.stderr.strip().splitlines()
        message = lines[-1] if lines else f"exit code {done.returncode}"
        prefix = f"{step}: error: "
        message = message[len(prefix):] if message.startswith(prefix) else message
        if done.returncode != exit_codes.EXIT_OK or not csv_file.exists():
            return done.returncode or exit_codes.EXIT_CHECK_FAILED, message, None
        with csv_file.open(newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        return exit_codes.EXIT_OK, "", rows[-1] if rows else None


def experiment_rows(experiment, step, variant, n, process, result):
    return [{"experiment": experiment, "date": result["timestamp"][:10], "gpu": result["gpu"], "step": step,
             "variant": variant, "m": n, "n": n, "k": n, "run": process, "metric": metric,
             "value": f"{float(result[metric]):.4g}", "source": SOURCE}
            for metric in METRICS]


def main(argv=None):
    args = parse_args(argv)
    pairs = table_rows(args.known, args.tables)
    runs = [(process, n, step, variant) for process in range(1, args.processes + 1) for n in args.sizes
            for step, variant in pairs]
    failed = []
    for number, (process, n, step, variant) in enumerate(runs, 1):
        name = f"{step}/{variant}" if variant else step
        code, message, result = run_once(args.bin_dir, step, variant, n, args.timeout)
        if code == exit_codes.EXIT_NO_DEVICE:
            print(f"record_variants: no CUDA device ({name}: {message})", file=sys.stderr)
            return exit_codes.EXIT_NO_DEVICE
        if result is None:
            failed.append(f"{name} {n}³ (process {process})")
            print(f"record_variants: {name} {n}³ failed: {message}", file=sys.stderr, flush=True)
            continue
        new_file = not args.out.exists() or args.out.stat().st_size == 0
        with args.out.open("a", newline="", encoding="utf-8") as out:
            writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
            if new_file:
                writer.writeheader()
            writer.writerows(experiment_rows(args.experiment, step, variant, n, process, result))
        print(f"[{number}/{len(runs)}] process {process} {name} {n}³: {float(result['tflops']):.1f} TFLOP/s, "
              f"{float(result['pct_cublas']):.1f}% of cuBLAS", flush=True)
    if failed:
        print(f"record_variants: {len(failed)} run(s) failed: {'; '.join(failed)}", file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
