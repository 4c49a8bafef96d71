#!/usr/bin/env python3
"""Before and after: the same steps from two builds, on the same shapes and GPU, in alternating processes.

    python3 plots/run/compare_builds.py --before OLD/build/bin --after build/bin \\
        --steps 12_stream_k,14_pad_unaligned --shapes FILE [--processes 3] [--warmup 10] [--iters 200] \\
        [--loss 1] [--no-check] [--out FILE.csv]

A change that should not cost speed (a refactor, a shared header) is checked by building the commit
before it in a folder of its own (same build type), then running both builds' programs here. For
each process round, each step runs each shape of --shapes (one MxNxK a line, # comments) in a
process of its own, the "before" build's, then the "after" build's, so that a slow spell of the GPU
falls on both alike. One shape a process, as the worklog's own runs: no shape's timing depends on
which shapes ran before it in the same process. In every process the harness times the kernel and
cuBLAS in alternation, so the comparison is of the median % of cuBLAS over the processes, the figure
the worklog quotes; the median time is shown beside it. A shape whose % of cuBLAS drops by more than
--loss percent (default 1) is listed as a loss on the last lines. --no-check passes --no-check to
both builds' programs: time only. Use it against an older build whose harness checked before timing
(docs/running.md: the check's work slowed some kernels' timed runs after it).

--out appends every process's row (the harness's CSV columns, with `build` and `run` in front).
Exit codes (common/exit_codes.py): 0 every run gave its rows (losses or not: a benchmark, not a test);
1 exit_check_failed, a run failed (its check or anything else: said on stderr, the rest goes on);
2 exit_bad_argument, bad arguments; 77 exit_no_device, no GPU. Needs only the Python standard library.
"""
import argparse
import csv
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402

BUILDS = ("before", "after")


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, type=Path, help="bin folder of the build before the change")
    parser.add_argument("--after", required=True, type=Path, help="bin folder of the build after the change")
    parser.add_argument("--steps", required=True, type=lambda t: [s.strip() for s in t.split(",") if s.strip()],
                        help="comma-separated step programs to compare (in both bin folders)")
    parser.add_argument("--shapes", required=True, type=Path, help="shapes file: one MxNxK a line")
    parser.add_argument("--processes", type=int, default=3, help="processes per build and step (default 3)")
    parser.add_argument("--warmup", type=int, default=10, help="untimed runs per shape (default 10)")
    parser.add_argument("--iters", type=int, default=200, help="timed runs per shape, median kept (default 200)")
    parser.add_argument("--loss", type=float, default=1.0, help="a drop of %% of cuBLAS listed as a loss (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds one process may take (default 600)")
    parser.add_argument("--no-check", action="store_true", help="pass --no-check to both builds: time only")
    parser.add_argument("--out", type=Path, help="CSV file every process's rows are appended to")
    args = parser.parse_args(argv)
    if not args.steps:
        parser.error("--steps names no step")
    if args.processes < 1 or args.iters < 1 or args.warmup < 0:
        parser.error("--processes and --iters must be at least 1, --warmup at least 0")
    if not args.shapes.is_file():
        parser.error(f"--shapes: no file {args.shapes}")
    args.shape_list = []
    for number, line in enumerate(args.shapes.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        sides = text.split("x")
        if len(sides) != 3 or not all(side.isdigit() and int(side) > 0 for side in sides):
            parser.error(f"--shapes: line {number} of {args.shapes} is not MxNxK: {line.strip()!r}")
        args.shape_list.append(text)
    if not args.shape_list:
        parser.error(f"--shapes: {args.shapes} lists no shape")
    for build in BUILDS:
        folder = getattr(args, build)
        missing = [s for s in args.steps if not (folder / s).is_file()]
        if missing:
            parser.error(f"--{build}: {folder} has no {', '.join(missing)}")
    return args


def run_process(program, shape, args):
    """One process of a step on one shape. Returns (exit code, message, harness CSV rows)."""
    with tempfile.TemporaryDirectory() as folder:
        csv_file = Path(folder) / "run.csv"
        shape_file = Path(folder) / "shape.txt"
        shape_file.write_text(shape + "\n", encoding="utf-8")
        command = [str(program), "--shapes", str(shape_file), "--warmup", str(args.warmup), "--iters",
                   str(args.iters), "--csv", str(csv_file)] + (["--no-check"] if args.no_check else [])
        try:
            done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                  errors="replace", timeout=args.timeout)
        except subprocess.TimeoutExpired:
            return exit_codes.EXIT_CHECK_FAILED, f"no result after {args.timeout:g} s: stopped", []
        except OSError as e:
            return exit_codes.EXIT_BAD_ARGUMENT, f"cannot run {program}: {e}", []
        rows = []
        if csv_file.exists():
            with csv_file.open(newline="", encoding="utf-8") as f:
                rows = list(csv.DictReader(f))
        lines = done.stderr.strip().splitlines()
        return done.returncode, (lines[-1] if lines else f"exit code {done.returncode}"), rows


def compare(results, loss):
    """results: {(step, shape): {build: [(pct, us), ...]}}. Returns the table's lines and the losses'."""
    lines = ["| step | shape | before, % of cuBLAS | after | change | before, µs | after, µs | change |",
             "|---|---|--:|--:|--:|--:|--:|--:|"]
    losses = []
    for (step, shape), by_build in results.items():
        if not all(by_build.get(b) for b in BUILDS):
            continue
        pct = {b: statistics.median(p for p, _ in by_build[b]) for b in BUILDS}
        us = {b: statistics.median(t for _, t in by_build[b]) for b in BUILDS}
        change = 100 * (pct["after"] / pct["before"] - 1)
        line = (f"| {step} | {shape} | {pct['before']:.1f} | {pct['after']:.1f} | {change:+.1f}% | "
                f"{us['before']:.1f} | {us['after']:.1f} | {100 * (us['after'] / us['before'] - 1):+.1f}% |")
        lines.append(line)
        if change < -loss:
            losses.append((change, f"{step} {shape}: {pct['before']:.1f}% -> {pct['after']:.1f}% of cuBLAS ({change:+.1f}%)"))
    return lines, [text for _, text in sorted(losses)]


def main(argv=None):
    args = parse_args(argv)
    results, failed = {}, False
    for process in range(1, args.processes + 1):
        for step in args.steps:
            for shape_asked, build in ((shape, build) for shape in args.shape_list for build in BUILDS):
                code, message, rows = run_process(getattr(args, build) / step, shape_asked, args)
                if code == exit_codes.EXIT_NO_DEVICE:
                    print(f"compare_builds: no CUDA device ({step}: {message})", file=sys.stderr)
                    return exit_codes.EXIT_NO_DEVICE
                if code != exit_codes.EXIT_OK:
                    failed = True
                    print(f"compare_builds: {build} {step} {shape_asked} (process {process}) failed: {message}",
                          file=sys.stderr, flush=True)
                for row in rows:
                    if row.get("status") != ("UNCHECKED" if args.no_check else "PASS"):
                        continue  # a shape whose check failed (said above) or that was skipped
                    shape = f"{row['m']}x{row['n']}x{row['k']}"
                    results.setdefault((step, shape), {}).setdefault(build, []).append(
                        (float(row["pct_cublas"]), 1000 * float(row["ms"])))
                if args.out and rows:
                    new_file = not args.out.exists() or args.out.stat().st_size == 0
                    with args.out.open("a", newline="", encoding="utf-8") as out:
                        writer = csv.DictWriter(out, fieldnames=["build", "run"] + list(rows[0]), lineterminator="\n")
                        if new_file:
                            writer.writeheader()
                        for row in rows:
                            writer.writerow({"build": build, "run": process, **row})
    lines, losses = compare(results, args.loss)
    print("\n".join(lines))
    print(f"\nlosses over {args.loss:g}% of cuBLAS's share: " + ("none" if not losses else str(len(losses))))
    for text in losses:
        print(f"  {text}")
    return exit_codes.EXIT_CHECK_FAILED if failed else exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
