#!/usr/bin/env python3
"""Run every step of the GEMM worklog, then the size sweep, then write the table and the charts; or,
with --shapes, run chosen steps, cuBLAS and the peers on the shape corpus or a list of shapes.

    python3 plots/run/run_worklog.py --bin-dir BUILD/bin --out BUILD/results [--size 4096]
        [--steps 04,10] [--sweep-sizes 256,257,512,...] [--no-sweep] [--publish DIR] [--iters N --warmup N]
        [--timing cold|warm] [--venv BUILD/plots-venv] [--no-peers] [--peer-python PYTHON]
    python3 plots/run/run_worklog.py --bin-dir BUILD/bin --out BUILD/results --shapes [CORPUS | MxNxK,...]
        [--steps 10,08] [--timing cold|warm] [--publish DIR] [--no-peers] [--peer-python PYTHON] [--venv ...]

The steps and their order come from BIN_DIR/worklog_steps.txt, which the build writes from the
add_worklog_step() lines of CMakeLists.txt; --steps (by name or number) runs only those, in the
build's order, and is refused with --publish (the published worklog has every step). Each step runs
at --size; the sweep then runs the fastest verified step of each precision, as just measured, at
every --sweep-sizes N. The peers (plots/shapes/peers.py: torch.matmul and a Triton kernel, each in its own process, timed against cuBLAS
there) run at --size too, and the table gains their rows (peers.csv); a peer that this Python
(--peer-python) cannot run is a row saying "not available", and not a failure.

--shapes runs on every shape of the corpus (default plots/shape_corpus.csv), or of a list given
inline (--shapes 1x4096x4096,4097x4097x4097: category "inline"; a file whose name starts with a
number is ./NAME), the steps of --steps
(default: the last step of each precision, every step from 10 on, whose figures the
README's shapes chapter quotes, and 08_mma_ldmatrix, found by running each step once on a tiny shape), each in one process over the whole list (--shapes FILE of
the step executables: each shape checked and timed against cuBLAS, short timing: SHAPES_TIMING),
a chosen step's bounding variants after it (SHAPES_VARIANTS: 15_tile_per_shape's best_of_menu, one
more process), then each peer likewise; and writes shapes.csv, shapes.md and the charts
shapes_squares.png and shapes_llm.png (shapes.md joins cublas_picks.csv, plots/shapes/cublas_pick.py's,
when --out holds one). With --publish, it copies them there and, when that is a checkout's
plots/results, rewrites the READMEs' generated blocks (filler.py; the `shapes` block of
README.md among them).

Every run is timed in --timing's mode (default cold: L2 flushed before every timed run; warm:
operands left in L2 by the run before; common/harness_timing.hpp), which every row records. The
shapes run also measures each step process's DRAM read rate (--dram-fraction), so that shapes.csv
gives each row's least bytes over its time as a fraction of it.

The table needs only Python. The charts need matplotlib: when this Python cannot import it, it
is installed into the virtual environment --venv (default: BIN_DIR/../plots-venv, in the build
tree), made on first use; when that fails too, the CSVs and the table are still written and one
line says how to get the charts. When --out holds a profile.csv (from ncu_profile.py), the table
gains the "limited by (measured)" column and roofline_measured.png is redrawn.

Exit codes, the worklog's own (common/exit_codes.hpp, read through common/exit_codes.py):
  0   exit_ok: all good (steps that do not support this GPU are skipped, with one line each, peers
      that cannot run here are "not available", and charts left out for lack of matplotlib still
      mean 0)
  1   exit_check_failed: a step or peer failed verification (the run still completes) or stopped
      with another error (in the shapes run, the other engines still run)
  2   exit_bad_argument: bad arguments (a shape of an inline --shapes that is not MxNxK, a --steps
      that names no step or several, --steps with --publish without --shapes), a bad corpus, no
      list of steps, or no step executables
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

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from shapes import cublas_names  # noqa: E402
from report import make_plots  # noqa: E402
from run import plots_env  # noqa: E402
from readme import filler  # noqa: E402
from shapes import shape_corpus  # noqa: E402
from shapes import shape_results  # noqa: E402
from run.arguments import (add_venv_argument, check_list, comma_list, int_at_least,  # noqa: E402
                           parse_naming_unknown_first, positive_int)
from report.results_csv import InputError, load_rows  # noqa: E402


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
CSVS = ("worklog.csv", "sweep.csv", "peers.csv")  # what the runs write (in a temporary folder first)
PUBLISHED = ("worklog.csv", "sweep.csv", "peers.csv", "table.md", "tflops.png", "sweep.png", "roofline.png")
# The shapes run: each shape one warm-up round and up to 10 timed rounds, fewer where they would pass
# 100 ms (at least one), and its check: about 4 s per FP16 step over the corpus on an H200.
SHAPES_TIMING = ("--warmup", "1", "--iters", "10", "--time-cap", "100")
SHAPES_PUBLISHED = ("shapes.csv", "shapes.md", "shapes_squares.png", "shapes_llm.png")
# The shapes run's runs of a chosen step beyond the step itself: the variants that bound it, each one
# more process over the whole list, its rows under "<step>/<variant>". 15's best of menu times every
# entry of its menu on each shape and runs the fastest: what its model's choice is judged against.
SHAPES_VARIANTS = {"15_tile_per_shape": ("best_of_menu",)}
PROBE_SIZE = 64  # the tiny run that tells a step's precision and whether this GPU runs it
PORTABLE_STEP = "08_mma_ldmatrix"  # the fastest step that is not Hopper-only: always in the shapes run
# The shapes chapter's first step, by number: README.md's shapes chapter quotes every step from here on
# (10's cluster tiles, 11's split-K, 12's stream-K, 13's swapped operands, 14's padding, 15's menu), so
# the default run has each of them that the build has.
SHAPES_FROM = 10
PEERS = {"torch": "torch.matmul", "triton": "Triton"}  # peers.py --engine, and the engine's name


class Stop(Exception):
    """Ends the worklog (or the profile, ncu_profile.py) early: one line for stderr, and the exit
    code."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


def size_list(text):
    return [positive_int(part) for part in text.split(",")]


def shapes_argument(text):
    """--shapes' value: a list of shapes given inline (a list of Entry), else the corpus file's Path."""
    if not shape_corpus.is_inline_list(text):
        return Path(text)
    try:
        return shape_corpus.parse_inline(text)
    except InputError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    required = [parser.add_argument("--bin-dir", required=True, type=Path,
                                    help=f"folder with the step executables and {STEP_LIST}"),
                parser.add_argument("--out", required=True, type=Path, help="folder for CSVs, table and charts")]
    parser.add_argument("--size", type=positive_int, default=4096, help="M = N = K of the main runs")
    parser.add_argument("--sweep-sizes", type=size_list, default=list(DEFAULT_SWEEP),
                        help="comma-separated square sizes for the sweep")
    parser.add_argument("--no-sweep", action="store_true", help="skip the size sweep")
    parser.add_argument("--publish", type=Path, help="also copy the results into this folder")
    parser.add_argument("--iters", type=positive_int, help="timed iterations of the main runs")
    parser.add_argument("--timing", choices=("cold", "warm"), default="cold",
                        help="cold (default): L2 flushed before every timed run; warm: operands left in L2")
    parser.add_argument("--warmup", type=int_at_least(0), help="warm-up iterations of the main runs")
    parser.add_argument("--shapes", nargs="?", const=shape_corpus.CORPUS, type=shapes_argument,
                        metavar="CORPUS|MxNxK,...",
                        help="run the shape corpus instead (default corpus: plots/shape_corpus.csv), or the "
                             "shapes listed inline, e.g. 1x4096x4096,4097x4097x4097 (a file whose name starts "
                             "with a number: ./NAME)")
    parser.add_argument("--steps", type=comma_list,
                        help="the steps to run, by name or number (e.g. 04,10): the worklog runs only those (its "
                             "sweep the fastest of them; not with --publish); with --shapes, default: the "
                             f"last step of each precision, every step from {SHAPES_FROM:02d} on, and {PORTABLE_STEP}")
    parser.add_argument("--no-peers", action="store_true", help="leave out torch.matmul and Triton")
    parser.add_argument("--peer-python", type=Path, default=Path(sys.executable),
                        help="the Python that runs plots/shapes/peers.py (default: this one)")
    add_venv_argument(parser)
    args = parse_naming_unknown_first(parser, required, argv)
    check_list(parser, "--steps", args.steps, "step")
    if args.steps is not None and args.publish is not None and args.shapes is None:
        # The published worklog.csv is the ladder of every step: a run of some would replace it.
        parser.error("--steps with --publish: the published worklog holds every step; run them all to publish")
    return args


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
    timing = ["--timing", args.timing]
    if args.warmup is not None:
        timing += ["--warmup", str(args.warmup)]
    if args.iters is not None:
        timing += ["--iters", str(args.iters)]
    return [(step, args.size, timing, folder / "worklog.csv") for step in steps]


def sweep_runs(args, steps, folder):
    return [(step, n, [*SWEEP_TIMING, "--timing", args.timing], folder / "sweep.csv")
            for step in steps for n in args.sweep_sizes]


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


def run_command(command, quiet=False):
    """Run a step executable or peers.py; its stdout goes straight to ours (quiet: nowhere).
    Returns (exit code, stderr)."""
    try:
        done = subprocess.run(command, stdout=subprocess.DEVNULL if quiet else None, stderr=subprocess.PIPE,
                              text=True, errors="replace")
    except OSError as e:
        raise Stop(exit_codes.EXIT_CHECK_FAILED, f"cannot run {command[0]}: {e}") from None
    return done.returncode, done.stderr


def run_step(bin_dir, step, n, extra, csv_file, quiet=False):
    """Run one step executable at n×n×n. Returns (exit code, stderr)."""
    return run_command([str(bin_dir / step), "--m", str(n), "--n", str(n), "--k", str(n), *extra,
                        "--csv", str(csv_file)], quiet)


def last_error_line(step, stderr, code):
    """The last line a program wrote to stderr, without its "<step>: error: " prefix."""
    reason = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
    prefix = f"{step}: error: "
    return reason[len(prefix):] if reason.startswith(prefix) else reason


def run_all(bin_dir, runs, label, failed, unsupported, quiet=False):
    """Run each (step, size, extra, CSV file); note failed verifications in `failed` and steps
    that cannot run on this GPU in `unsupported` (their later runs are left out)."""
    for number, (step, n, extra, csv_file) in enumerate(runs, 1):
        if step in unsupported:
            continue
        print(f"[{label}{number}/{len(runs)}] {step} {n}x{n}x{n}", flush=True)
        code, stderr = run_step(bin_dir, step, n, extra, csv_file, quiet)
        said = last_error_line(step, stderr, code) if stderr.strip() else ""  # the step's own message
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


def run_peers(args, shapes, raw_csv, label, timing, failed):
    """Run each peer (peers.py, one process each) on these shapes, appending to raw_csv. Returns
    {engine: None when it ran, else why it is not available here}."""
    status = {}
    if args.no_peers:
        return status
    with tempfile.TemporaryDirectory() as tmp:
        shape_list = Path(tmp) / "shapes.txt"
        shape_list.write_text(shape_corpus.shape_list_text(shapes), encoding="utf-8")
        what = f"{shape_corpus.shape_text(shapes[0])}" if len(shapes) == 1 else f"{len(shapes)} shapes"
        for number, (engine, name) in enumerate(PEERS.items(), 1):
            print(f"[{label}{number}/{len(PEERS)}] {name} {what}", flush=True)
            code, stderr = run_command([str(args.peer_python), str(Path(__file__).resolve().parents[1] / "shapes" / "peers.py"),
                                        "--engine", engine, "--shapes", str(shape_list), "--csv", str(raw_csv),
                                        *timing])
            status[name] = None
            if code in (exit_codes.EXIT_TOOL_MISSING, exit_codes.EXIT_NO_DEVICE):
                last = stderr.strip().splitlines()[-1] if stderr.strip() else f"exit code {code}"
                reason = last.split(f"peers: {name} not available: ", 1)[-1]
                status[name] = reason
                print(f"run_worklog: {name} not available: {reason}", flush=True)
                continue
            sys.stderr.write(stderr)
            if code == exit_codes.EXIT_CHECK_FAILED:
                failed.append(f"{name} ({what})")
                print(f"run_worklog: {name} FAILED verification; continuing", file=sys.stderr, flush=True)
            elif code == exit_codes.EXIT_DOES_NOT_FIT:
                print(f"run_worklog: warning: {name} skipped shapes that do not fit in device memory",
                      file=sys.stderr, flush=True)
            elif code != exit_codes.EXIT_OK:
                failed.append(f"{name} (exit code {code}: {exit_codes.MEANING.get(code, 'unknown')})")
                print(f"run_worklog: {name} stopped with exit code {code}; continuing", file=sys.stderr, flush=True)
    return status


def worklog_peers(args, failed, folder):
    """The peers at --size, into folder/peers.csv (shape_results' columns) for the table."""
    raw = folder / "peers_raw.csv"
    raw.unlink(missing_ok=True)
    n = args.size
    timing = ["--warmup", str(5 if args.warmup is None else args.warmup),
              "--iters", str(20 if args.iters is None else args.iters), "--timing", args.timing]
    status = run_peers(args, [(n, n, n)], raw, "peers ", timing, failed)
    raw_rows = load_rows(raw) if raw.exists() and raw.stat().st_size else []
    entry = shape_corpus.Entry("worklog", n, n, n, "", 0)
    shape_results.write_rows(folder / "peers.csv", shape_results.assemble([entry], raw_rows, [], status))
    raw.unlink(missing_ok=True)


def named_steps(tokens, steps):
    """The steps that --steps' tokens name (each a step's name or its number, which must match one
    step), each once, in the order of steps; Stop otherwise."""
    chosen = []
    for token in tokens:
        match = [s for s in steps if s == token or s.startswith(f"{token}_")]
        if len(match) != 1:
            raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"--steps: '{token}' names {len(match) or 'no'} step(s) "
                                                     f"among {', '.join(steps)}")
        chosen.append(match[0])
    return sorted(set(chosen), key=steps.index)


def chosen_steps(args, steps, unsupported):
    """The steps of the shapes run: those --steps names, else the last step of each precision, every
    step from SHAPES_FROM on (the shapes chapter's steps, each building on the one before), and
    PORTABLE_STEP, as a tiny run of every step tells (steps this GPU cannot run are left out); newest
    first."""
    if args.steps is not None:
        return named_steps(args.steps, steps)[::-1]
    probe = args.out / "shapes_probe.csv"
    probe.unlink(missing_ok=True)
    failed = []
    tiny = ["--warmup", "0", "--iters", "1", "--no-cublas"]
    run_all(args.bin_dir, [(step, PROBE_SIZE, tiny, probe) for step in steps], "probe ", failed, unsupported,
            quiet=True)
    if len(unsupported) == len(steps):
        raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, "no step supports this GPU")
    try:
        rows = load_rows(probe)
    except InputError as e:
        raise Stop(exit_codes.EXIT_CHECK_FAILED, f"cannot read the probe's results: {e}") from None
    precision = {r["step"]: r["precision"] for r in rows}
    last = {precision[s]: s for s in steps if s in precision}
    chosen = set(last.values()) | ({PORTABLE_STEP} if PORTABLE_STEP in precision else set())
    chosen |= {s for s in steps if s in precision and s[:2].isdigit() and int(s[:2]) >= SHAPES_FROM}
    return sorted(chosen, key=steps.index, reverse=True)


def shapes_runs(chosen):
    """The (step, variant) runs of the shapes run, in order: each chosen step (variant None), then
    its SHAPES_VARIANTS."""
    return [(step, variant) for step in chosen for variant in (None, *SHAPES_VARIANTS.get(step, ()))]


def run_shapes(args, started):
    """The shapes run (--shapes); raises Stop to end early. Returns the exit code."""
    if isinstance(args.shapes, Path):
        try:
            entries = shape_corpus.load(args.shapes)
        except InputError as e:
            raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"bad corpus: {e}") from None
        source = f"{len(entries)} corpus lines, {args.shapes}"
    else:  # listed inline, and parsed with the command line
        entries, source = args.shapes, "listed inline"
    steps = built_steps(args.bin_dir, "run_worklog")
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("shapes_raw.csv", *SHAPES_PUBLISHED):  # start fresh: nothing stale is published
        (args.out / name).unlink(missing_ok=True)
    unsupported, failed = set(), []
    chosen = chosen_steps(args, steps, unsupported)
    if not chosen:
        raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, "no step supports this GPU")
    shapes = shape_corpus.unique_shapes(entries)
    runs = shapes_runs(chosen)
    engines = [f"{step}/{variant}" if variant else step for step, variant in runs]
    print(f"run_worklog: {len(shapes)} shapes ({source}) with "
          f"{', '.join(engines)}, cuBLAS" + ("" if args.no_peers else ", " + ", ".join(PEERS.values())), flush=True)
    raw = args.out / "shapes_raw.csv"
    ran, skipped = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        shape_list = Path(tmp) / "shapes.txt"
        shape_list.write_text(shape_corpus.shape_list_text(shapes), encoding="utf-8")
        for number, (step, variant) in enumerate(runs, 1):
            if step in skipped:  # this GPU cannot run the step: nor its variants
                continue
            engine = f"{step}/{variant}" if variant else step
            print(f"[shapes {number}/{len(runs)}] {engine} {len(shapes)} shapes", flush=True)
            code, stderr = run_command([str(args.bin_dir / step), "--shapes", str(shape_list), *SHAPES_TIMING,
                                        "--timing", args.timing, "--dram-fraction",
                                        *(["--variant", variant] if variant else []), "--csv", str(raw)])
            if code == exit_codes.EXIT_UNSUPPORTED_GPU:
                print(f"run_worklog: skipping {engine}: {last_error_line(engine, stderr, code)}", file=sys.stderr,
                      flush=True)
                skipped.add(step)
                continue
            sys.stderr.write(stderr)
            ran.append(engine)
            if code == exit_codes.EXIT_NO_DEVICE:
                raise Stop(exit_codes.EXIT_NO_DEVICE, "no CUDA device; the worklog needs an NVIDIA GPU")
            if code == exit_codes.EXIT_CHECK_FAILED:
                failed.append(f"{engine} (some shapes: shapes.md lists them)")
                print(f"run_worklog: {engine} FAILED verification on some shapes; continuing", file=sys.stderr,
                      flush=True)
            elif code == exit_codes.EXIT_DOES_NOT_FIT:
                print(f"run_worklog: warning: {engine} skipped shapes that do not fit in device memory",
                      file=sys.stderr, flush=True)
            elif code != exit_codes.EXIT_OK:
                failed.append(f"{engine} (exit code {code}: {exit_codes.MEANING.get(code, 'unknown')})")
                print(f"run_worklog: {engine} stopped with exit code {code}; its remaining shapes are left out; "
                      "continuing", file=sys.stderr, flush=True)
    if not ran:
        raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, "no step supports this GPU")
    status = run_peers(args, shapes, raw, "peers ", [*SHAPES_TIMING, "--timing", args.timing], failed)
    try:
        raw_rows = load_rows(raw) if raw.exists() and raw.stat().st_size else []
    except InputError as e:
        raise Stop(exit_codes.EXIT_CHECK_FAILED, f"cannot read the results just written: {e}") from None
    rows = shape_results.assemble(entries, raw_rows, ran, status)
    shape_results.write_rows(args.out / "shapes.csv", rows)
    code = make_plots.draw_results(args.out, args.venv or plots_env.build_tree_venv(args.bin_dir), "run_worklog",
                                   only=("shapes.csv", cublas_names.PICKS))
    if code != exit_codes.EXIT_OK:
        return code
    if args.publish:
        publish(args.out, args.publish, SHAPES_PUBLISHED + (cublas_names.PICKS,))
        filler.refresh(args.publish, "run_worklog", args.bin_dir)  # the README's `shapes` block among the others
    print(f"run_worklog: done in {time.monotonic() - started:.1f} s", flush=True)
    if failed:
        print("run_worklog: FAILED: " + ", ".join(failed), file=sys.stderr)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


def run_worklog(args):
    """Everything after the command line; raises Stop to end early. Returns the exit code."""
    started = time.monotonic()
    if args.shapes is not None:
        return run_shapes(args, started)
    steps = built_steps(args.bin_dir, "run_worklog")
    if args.steps is not None:
        steps = named_steps(args.steps, steps)

    staging = Path(tempfile.mkdtemp(prefix="run_worklog-"))
    try:
        failed, unsupported = [], set()  # failed verifications; steps this GPU cannot run
        run_all(args.bin_dir, main_runs(args, steps, staging), "", failed, unsupported)
        if len(unsupported) == len(steps):
            raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, "no step supports this GPU")
        if not args.no_peers:
            worklog_peers(args, failed, staging)
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
        filler.refresh(args.publish, "run_worklog", args.bin_dir)  # a checkout's plots/results: its READMEs
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
