#!/usr/bin/env python3
"""Turn the CSV rows written by the step executables into a table and charts.

    python3 plots/report/make_plots.py --csv RESULTS.csv [--sweep SWEEP.csv] --out DIR [--table-only]
                                [--peak-fp32 TFLOPS --peak-fp16 TFLOPS --bandwidth GBS]
                                [--profile PROFILE.csv] [--peers PEERS.csv] [--shapes SHAPES.csv]
                                [--cublas-picks CUBLAS_PICKS.csv]

Writes into DIR: table.md, and unless --table-only, tflops.png, roofline.png and, with --sweep,
sweep.png. With --profile (profile.csv from ncu_profile.py), table.md gains the "limited by
(measured)" column, and roofline_measured.png is drawn; --profile without --csv draws only that.
With --peers (peers.csv, run_worklog.py), table.md gains the peers' rows. With --shapes
(shapes.csv, the shapes run), shapes.md, and unless --table-only shapes_squares.png and
shapes_llm.png; --shapes needs no --csv. With --cublas-picks (cublas_picks.csv, plots/shapes/cublas_pick.py),
shapes.md gains a table of those shapes beside cuBLAS's own kernel.
The table needs only Python; the charts need matplotlib (plots/requirements.txt): without it, the
table is still written and one warning says how to get the charts. draw_results() runs this on
the results in one folder with a Python that has matplotlib (run_worklog.py and ncu_profile.py).
Exit codes (common/exit_codes.hpp, read through common/exit_codes.py): 0 exit_ok, written (also
when a chart had to be left out, with a warning); 2 exit_bad_argument, bad input, with one line
starting "make_plots: error:" and nothing written.
"""
import argparse
import importlib.util
import subprocess
import sys
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from shapes import cublas_names  # noqa: E402
from run import plots_env  # noqa: E402
from run.arguments import add_peak_arguments  # noqa: E402
from profiling.profile_csv import gpu_name, limited_by_step, load_profile, roofline_points  # noqa: E402
from shapes import shape_results  # noqa: E402
from shapes import shape_tables  # noqa: E402
from report.results_csv import InputError, load_rows, median_per_step, square_rows  # noqa: E402
from report.results_table import build_table  # noqa: E402


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--csv", help="results CSV written by the steps")
    parser.add_argument("--sweep", help="size-sweep CSV (adds sweep.png)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--table-only", action="store_true",
                        help="write table.md only (no matplotlib needed)")
    add_peak_arguments(parser)
    parser.add_argument("--profile", help="profile.csv from ncu_profile.py (adds the \"limited by "
                                          "(measured)\" column and roofline_measured.png)")
    parser.add_argument("--peers", help="peers.csv from run_worklog.py (adds the peers' rows to table.md)")
    parser.add_argument("--shapes", help="shapes.csv of the shapes run (shapes.md and its charts)")
    parser.add_argument("--cublas-picks",
                        help="cublas_picks.csv from cublas_pick.py (adds cuBLAS's own kernels to shapes.md)")
    args = parser.parse_args(argv)
    if not args.csv and not args.profile and not args.shapes:
        parser.error("give --csv, --profile, --shapes or several")
    if args.sweep and not args.csv:
        parser.error("--sweep needs --csv")
    if args.peers and not args.csv:
        parser.error("--peers needs --csv")
    if args.cublas_picks and not args.shapes:
        parser.error("--cublas-picks needs --shapes")
    return args


def roofline_peaks(charts, gpu, args, name):
    """The roofs for a roofline of this GPU (charts.resolve_peaks, with the flags); None, after
    a warning, when there are none."""
    peaks = charts.resolve_peaks(gpu, args.peak_fp32, args.peak_fp16, args.bandwidth)
    if not peaks:
        print(f"make_plots: warning: no datasheet peaks for '{gpu}'; skipping {name} "
              "(give --peak-fp32, --peak-fp16 and --bandwidth)", file=sys.stderr)
    return peaks


def draw_charts(args, rows, sweep, profile, out, shapes=None):
    """Draw the charts into out; return the paths written."""
    from report import charts  # imports matplotlib: only once we know it is there

    written = []
    if shapes:
        from shapes import shape_charts
        written += shape_charts.draw(shapes, out)
    if rows:
        written.append(out / "tflops.png")
        charts.plot_tflops(rows, written[-1])
        if sweep:
            charts.plot_sweep(sweep, out / "sweep.png")
            written.append(out / "sweep.png")
        peaks = roofline_peaks(charts, charts.newest(rows)["gpu"], args, "roofline.png")
        if peaks:
            charts.plot_roofline(rows, out / "roofline.png", peaks)
            written.append(out / "roofline.png")
    if profile:
        peaks = roofline_peaks(charts, gpu_name(profile), args, "roofline_measured.png")
        if peaks and not roofline_points(profile):
            print("make_plots: warning: no profiled step has a time and a byte count; skipping "
                  "roofline_measured.png", file=sys.stderr)
        elif peaks:
            charts.plot_measured_roofline(profile, out / "roofline_measured.png", peaks)
            written.append(out / "roofline_measured.png")
    return written


def main(argv=None):
    """Run the command line; return the exit code (exit_ok written, exit_bad_argument bad input)."""
    args = parse_args(argv)
    try:  # read and check every input before writing anything
        # One row per step and size: the median of its processes, as the READMEs quote them.
        rows = median_per_step(load_rows(args.csv)) if args.csv else None
        sweep = square_rows(load_rows(args.sweep)) if args.sweep else None
        profile = load_profile(args.profile) if args.profile else None
        peers = shape_results.load(args.peers) if args.peers else None
        shapes = shape_results.load(args.shapes) if args.shapes else None
        picks = cublas_names.load_picks(args.cublas_picks) if args.cublas_picks else None
    except InputError as e:
        print(f"make_plots: error: {e}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    if rows:
        written.append(out / "table.md")
        written[0].write_text(build_table(rows, limited_by_step(profile) if profile else None, peers),
                              encoding="utf-8")
    if shapes:
        written.append(out / "shapes.md")
        written[-1].write_text(shape_tables.shapes_markdown(shapes, picks=picks), encoding="utf-8")
    if not args.table_only:
        if importlib.util.find_spec("matplotlib") is None:
            print(f"make_plots: warning: matplotlib is not installed for {sys.executable}, so "
                  f"{'only table.md was written' if written else 'no chart was drawn'}; for the charts: "
                  f"{sys.executable} -m pip install -r {plots_env.REQUIREMENTS}", file=sys.stderr)
        else:
            written += draw_charts(args, rows, sweep, profile, out, shapes)
    for path in written:
        print(path)
    return exit_codes.EXIT_OK


def draw_results(out, venv, who, extra=(), only=None):
    """make_plots on what the results folder out holds (worklog.csv, sweep.csv, profile.csv,
    peers.csv, shapes.csv and cublas_picks.csv beside it; with only, those of these names alone),
    with the extra arguments, run by a Python with matplotlib (plots_env: this one, or the virtual
    environment venv, made on first use); without one, the tables alone and one line, starting
    "<who>:", on how to get the charts. Returns make_plots's exit code."""
    def given(flag, name):
        return [flag, str(out / name)] if (out / name).exists() and (only is None or name in only) else []

    plot_args = [*given("--csv", "worklog.csv"), "--out", str(out), *given("--sweep", "sweep.csv"),
                 *given("--profile", "profile.csv"), *(given("--peers", "peers.csv") if given("--csv", "worklog.csv")
                                                       else []), *given("--shapes", "shapes.csv"),
                 *(given("--cublas-picks", cublas_names.PICKS) if given("--shapes", "shapes.csv") else []), *extra]
    try:
        python = plots_env.python_with_matplotlib(venv, say=lambda line: print(f"{who}: {line}", flush=True))
    except plots_env.Unavailable as e:
        code = main(plot_args + ["--table-only"])
        if code == exit_codes.EXIT_OK:
            table = " and table.md" if "--csv" in plot_args else " and shapes.md" if "--shapes" in plot_args else ""
            print(f"{who}: charts not drawn, for want of matplotlib: {e}. The CSVs{table} are in {out}. "
                  f"For the charts, install matplotlib ({sys.executable} -m pip install -r "
                  f"{plots_env.REQUIREMENTS}) and run {sys.executable} {Path(__file__).resolve()} "
                  f"{' '.join(plot_args)}", file=sys.stderr, flush=True)
        return code
    sys.stdout.flush()
    return subprocess.run([str(python), str(Path(__file__).resolve()), *plot_args]).returncode


if __name__ == "__main__":
    sys.exit(main())
