#!/usr/bin/env python3
"""Measure a committed results file again: the same steps (and variants), shapes, scalars and number
of processes, under the harness's current timing, into a new file of the step executables' columns.

    python3 plots/run/remeasure.py --bin-dir BUILD/bin --out DIR FILE.csv [FILE.csv ...]
        [--timing cold|warm] [--processes N] [--warmup 5] [--iters 20]

A results file here is any CSV with the columns step, m, n, k (and alpha, beta where it has them):
the rows the step executables append (decode.csv, targets.csv, ...) or a file condensed from them
with a run column (tile_per_shape.csv, ...). For each file, the steps it names are run in turns,
process after process: process p runs every (step, alpha, beta) group of the file once, each over
its shapes in one process (--shapes), as many processes as the file has rows of one step and shape
(--processes overrides), each checked, timed in --timing's mode and given its DRAM fraction
(--dram-fraction). A step's variant ("13_swap_ab/swap_all") runs as --variant. DIR/FILE.csv gets the
new rows, every column the harness writes (results_csv.py), in the order of the runs; copy it over
the committed one and run readme/filler.py --write.

Exit codes (common/exit_codes.hpp): 0 done; 1 a check failed or a step stopped (the rest still runs);
2 bad arguments or a file without those columns.
"""
import argparse
import csv
import sys
import tempfile
from collections import Counter
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402
from shapes import shape_corpus  # noqa: E402
from run.arguments import int_at_least, positive_int  # noqa: E402
from run.run_worklog import run_command  # noqa: E402


def plan(path):
    """[(step, variant, alpha, beta, [shapes])] of a results file, in the order of first appearance,
    and its processes: the most rows of one (step, alpha, beta, shape)."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    if not rows or not {"step", "m", "n", "k"} <= set(rows[0]):
        raise ValueError(f"{path}: expected the columns step, m, n, k")
    groups, counts = {}, Counter()
    for row in rows:
        step, _, variant = row["step"].partition("/")
        key = (step, variant, float(row.get("alpha") or 1), float(row.get("beta") or 0))
        shape = (int(row["m"]), int(row["n"]), int(row["k"]))
        shapes = groups.setdefault(key, [])
        if shape not in shapes:
            shapes.append(shape)
        counts[key + shape] += 1
    return [(*key, shapes) for key, shapes in groups.items()], max(counts.values())


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--out", required=True, type=Path, help="folder for the new files")
    parser.add_argument("files", nargs="+", type=Path, help="committed results files")
    parser.add_argument("--timing", choices=("cold", "warm"), default="cold")
    parser.add_argument("--processes", type=positive_int, help="processes per step (default: as the file has)")
    parser.add_argument("--warmup", type=int_at_least(0), default=5)
    parser.add_argument("--iters", type=positive_int, default=20)
    return parser.parse_args(argv)


def remeasure(args, path):
    groups, processes = plan(path)
    processes = args.processes or processes
    out = args.out / path.name
    out.unlink(missing_ok=True)
    failed = []
    with tempfile.TemporaryDirectory() as tmp:
        for process in range(1, processes + 1):
            for number, (step, variant, alpha, beta, shapes) in enumerate(groups):
                listing = Path(tmp) / "shapes.txt"
                listing.write_text(shape_corpus.shape_list_text(shapes), encoding="utf-8")
                engine = f"{step}/{variant}" if variant else step
                print(f"[{path.name}: process {process}/{processes}, {number + 1}/{len(groups)}] {engine} "
                      f"{len(shapes)} shape(s)", flush=True)
                code, stderr = run_command([str(args.bin_dir / step), "--shapes", str(listing), "--alpha", repr(alpha),
                                            "--beta", repr(beta), "--timing", args.timing, "--dram-fraction",
                                            "--warmup", str(args.warmup), "--iters", str(args.iters),
                                            *(["--variant", variant] if variant else []), "--csv", str(out)],
                                           quiet=True)
                sys.stderr.write(stderr)
                if code != exit_codes.EXIT_OK:
                    failed.append(f"{engine} (exit code {code})")
    return failed


def main(argv=None):
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    failed = []
    for path in args.files:
        try:
            failed += remeasure(args, path)
        except (OSError, ValueError) as e:
            print(f"remeasure: error: {e}", file=sys.stderr)
            return exit_codes.EXIT_BAD_ARGUMENT
    if failed:
        print("remeasure: FAILED: " + ", ".join(failed), file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    print("remeasure: done", flush=True)
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
