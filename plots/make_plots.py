#!/usr/bin/env python3
"""Turn the CSV rows written by the step executables into a table and charts.

    python3 plots/make_plots.py --csv RESULTS.csv [--sweep SWEEP.csv] --out DIR [--table-only]
                                [--peak-fp32 TFLOPS --peak-fp16 TFLOPS --bandwidth GBS]

Writes into DIR: table.md, and unless --table-only, tflops.png, roofline.png and, with --sweep,
sweep.png. The table needs only Python; the charts need matplotlib (plots/requirements.txt):
without it, the table is still written and one warning says how to get the charts.
Exit codes: 0 written (also when a chart had to be left out, with a warning); 2 bad input, with
one line starting "make_plots: error:" and nothing written.
"""
import argparse
import importlib.util
import sys
from pathlib import Path

from results_csv import InputError, load_rows, square_rows
from results_table import build_table

REQUIREMENTS = Path(__file__).resolve().with_name("requirements.txt")


def positive_float(text):
    """An argparse type for the peak flags (we divide by them)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text!r}")
    return value


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", required=True, help="results CSV written by the steps")
    parser.add_argument("--sweep", help="size-sweep CSV (adds sweep.png)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--table-only", action="store_true",
                        help="write table.md only (no matplotlib needed)")
    parser.add_argument("--peak-fp32", type=positive_float, help="FP32 peak in TFLOP/s (overrides the table)")
    parser.add_argument("--peak-fp16", type=positive_float, help="FP16 tensor-core peak in TFLOP/s")
    parser.add_argument("--bandwidth", type=positive_float, help="DRAM bandwidth in GB/s")
    return parser.parse_args(argv)


def draw_charts(args, rows, sweep, out):
    """Draw the charts into out; return the paths written."""
    import charts  # imports matplotlib: only once we know it is there

    written = [out / "tflops.png"]
    charts.plot_tflops(rows, written[0])
    if sweep:
        charts.plot_sweep(sweep, out / "sweep.png")
        written.append(out / "sweep.png")
    gpu = charts.newest(rows)["gpu"]
    peaks = charts.resolve_peaks(gpu, args.peak_fp32, args.peak_fp16, args.bandwidth)
    if peaks:
        charts.plot_roofline(rows, out / "roofline.png", peaks)
        written.append(out / "roofline.png")
    else:
        print(f"make_plots: warning: no datasheet peaks for '{gpu}'; skipping roofline.png "
              "(give --peak-fp32, --peak-fp16 and --bandwidth)", file=sys.stderr)
    return written


def main(argv=None):
    """Run the command line; return the exit code (0 written, 2 bad input)."""
    args = parse_args(argv)
    try:  # read and check every input before writing anything
        rows = load_rows(args.csv)
        sweep = square_rows(load_rows(args.sweep)) if args.sweep else None
    except InputError as e:
        print(f"make_plots: error: {e}", file=sys.stderr)
        return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = [out / "table.md"]
    written[0].write_text(build_table(rows), encoding="utf-8")
    if not args.table_only:
        if importlib.util.find_spec("matplotlib") is None:
            print(f"make_plots: warning: matplotlib is not installed for {sys.executable}, so only table.md "
                  f"was written; for the charts: {sys.executable} -m pip install -r {REQUIREMENTS}",
                  file=sys.stderr)
        else:
            written += draw_charts(args, rows, sweep, out)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
