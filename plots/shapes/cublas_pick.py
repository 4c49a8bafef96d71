#!/usr/bin/env python3
"""cuBLAS's own pick: for each shape of a list, the kernel cuBLAS runs (its tile, stages, cluster,
split-K), read through Nsight Compute, into cublas_picks.csv.

    python3 plots/shapes/cublas_pick.py --bin-dir BUILD/bin --out DIR
        (--shapes 1024x1024x1024,1536x1536x1536,... | --shape-file FILE | --corpus [CSV] [--categories a,b])
        [--step 08_mma_ldmatrix] [--ncu PATH] [--timeout SECONDS]

For each shape, a step executable runs under ncu with `--profile cublas --m M --n N --k K`: one
cublasGemmEx call unprofiled (cuBLAS's choice, module loading), then one between cudaProfilerStart
and cudaProfilerStop, which ncu (`--profile-from-start off`) profiles, every kernel of it: the GEMM
and, for a split-K kernel, its reduction. Only launch metrics and the time are asked for (LAUNCH_METRICS),
so each shape takes a few seconds. The step executable (--step, default 08_mma_ldmatrix, the FP16
step that runs on any GPU from sm_80) only carries the call: every FP16 step makes the same
cublasGemmEx (FP16 in, FP32 compute and out) on the same inputs; an FP32 step would show SGEMM's pick.

The GEMM's name is parsed (cublas_names.parse_kernel_name: `nvjet_sm90_hss_128x64_64x8_1x2_h_bz_coopA_NNT`
is a 64×128 tile in our rows × columns, cuBLAS being column-major, 8 stages of K 64, a 2×1 cluster).
It writes DIR/cublas_picks.csv (cublas_names.COLUMNS): one row per shape, the shape, the GEMM
kernel's name and its parsed fields, its grid, block, cluster and time, and the other kernels of the
call (the split-K reduction). Rows of shapes not profiled now are kept from an earlier file, so a
long list can be split over several runs; a shape profiled again replaces its row. The file is
rewritten after each shape. With it in the shapes run's results folder, shapes.md gains a table of
those shapes with cuBLAS's kernel beside the steps' % of cuBLAS (shape_tables.picks_table).

Exit codes, the worklog's own (common/exit_codes.hpp, read through common/exit_codes.py):
  0   exit_ok: every shape profiled
  1   exit_check_failed: some shape's profile failed (the others are written)
  2   exit_bad_argument: bad arguments, a bad shape list or corpus, no such step executable
  4   exit_unsupported_gpu: the step cannot run on this GPU (choose another with --step)
  6   exit_tool_missing: ncu not found
  7   exit_no_counter_access: ncu cannot read the GPU's performance counters (ERR_NVGPUCTRPERM)
  77  exit_no_device: no CUDA device
"""
import argparse
import datetime
import sys
import tempfile
import time
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402  (common/exit_codes.py: the codes of common/exit_codes.hpp)
from shapes import cublas_names  # noqa: E402
from shapes import shape_corpus  # noqa: E402
from run.arguments import check_list, comma_list, positive_int  # noqa: E402
from profiling.ncu_profile import find_ncu, run_profile  # noqa: E402
from report.results_csv import InputError  # noqa: E402
from run.run_worklog import PORTABLE_STEP, Stop  # noqa: E402

# What each kernel of the call is asked for: its time and its launch (no counters to replay). A
# metric this ncu does not know (the cluster's, before Hopper) is dropped and the run repeated.
LAUNCH_METRICS = ("gpu__time_duration.sum", "launch__grid_size", "launch__grid_dim_x", "launch__grid_dim_y",
                  "launch__grid_dim_z", "launch__block_size", "launch__cluster_dim_x", "launch__cluster_dim_y",
                  "launch__cluster_dim_z", "launch__registers_per_thread", "device__attribute_display_name")


def shape_list(text):
    """--shapes: comma-separated MxNxK."""
    shapes = []
    for word in text.split(","):
        try:
            shapes += shape_corpus.parse_shape_list(word, "--shapes")
        except InputError:
            raise argparse.ArgumentTypeError(f"expected MxNxK, three positive integers (got {word.strip()!r})") \
                from None
    return shapes


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin-dir", required=True, type=Path, help="folder with the step executables")
    parser.add_argument("--out", required=True, type=Path, help=f"folder for {cublas_names.PICKS}")
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--shapes", type=shape_list, help="comma-separated MxNxK, e.g. 1024x1024x1024,16x4096x4096")
    where.add_argument("--shape-file", type=Path, help="a file of MxNxK lines (what the steps' --shapes reads)")
    where.add_argument("--corpus", nargs="?", const=shape_corpus.CORPUS, type=Path, metavar="CSV",
                       help="the shapes of a corpus (default plots/shape_corpus.csv)")
    parser.add_argument("--categories", type=comma_list, help="with --corpus: only these categories (comma-separated)")
    parser.add_argument("--step", default=PORTABLE_STEP,
                        help=f"the FP16 step executable that makes the cuBLAS call (default {PORTABLE_STEP})")
    parser.add_argument("--ncu", help="the ncu executable (default: PATH, then the CUDA toolkit)")
    parser.add_argument("--timeout", type=positive_int, default=300, help="seconds allowed per ncu run")
    args = parser.parse_args(argv)
    check_list(parser, "--categories", args.categories, "category", needs=("--corpus", args.corpus))
    return args


def chosen_shapes(args):
    """The shapes to profile, each once, in order. Raises Stop (exit 2) for a bad file or corpus."""
    try:
        if args.shapes is not None:
            shapes = args.shapes
        elif args.shape_file is not None:
            try:
                text = args.shape_file.read_text(encoding="utf-8")
            except OSError as e:
                raise InputError(f"{args.shape_file}: cannot read: {e.strerror}") from None
            shapes = shape_corpus.parse_shape_list(text, str(args.shape_file))
        else:
            entries = shape_corpus.load(args.corpus)
            if args.categories:
                known = {e.category for e in entries}
                unknown = [c for c in args.categories if c not in known]
                if unknown:
                    raise InputError(f"{args.corpus}: no category {', '.join(unknown)} (it has "
                                     f"{', '.join(dict.fromkeys(e.category for e in entries))})")
                entries = [e for e in entries if e.category in args.categories]
            shapes = shape_corpus.unique_shapes(entries)
    except InputError as e:
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, str(e)) from None
    return list(dict.fromkeys(shapes))


def _int_metric(metrics, name):
    value = metrics.get(name)
    return int(value) if isinstance(value, float) else None


def launch_of(kernel):
    """A kernel's launch, from its metrics: grid (blocks), grid_dims and cluster_dims ('16x32x2'),
    block (threads), registers, duration_us; None where ncu gave nothing."""
    metrics = kernel.metrics

    def dims(prefix):
        values = [_int_metric(metrics, f"{prefix}_{axis}") for axis in "xyz"]
        return "x".join(map(str, values)) if None not in values else None

    duration = metrics.get("gpu__time_duration.sum")
    return {"grid": _int_metric(metrics, "launch__grid_size"), "grid_dims": dims("launch__grid_dim"),
            "block": _int_metric(metrics, "launch__block_size"), "cluster_dims": dims("launch__cluster_dim"),
            "registers": _int_metric(metrics, "launch__registers_per_thread"),
            "duration_us": duration / 1e3 if isinstance(duration, float) else None}


def split_kernels(kernels):
    """(the GEMM, [the others]) among the kernels of one cuBLAS call: the GEMM is the kernel whose
    name parses as one (the longest-running of those, if several), else the longest-running kernel."""
    def duration(kernel):
        value = kernel.metrics.get("gpu__time_duration.sum")
        return value if isinstance(value, float) else 0.0

    gemms = [k for k in kernels if cublas_names.parse_kernel_name(k.name)]
    gemm = max(gemms or kernels, key=duration)
    return gemm, [k for k in kernels if k is not gemm]


def profile_shape(ncu, exe, step, shape, report, timeout, rejected):
    """Profile cuBLAS on one shape, as ncu_profile.py profiles it beside a step (run_profile);
    returns (Outcome, metrics ncu rejected just now). The metrics already rejected are not asked for."""
    metrics = [m for m in LAUNCH_METRICS if m not in rejected]
    return run_profile(ncu, exe, step, "cublas", shape, metrics, report, timeout)


def merged(old_rows, new_rows):
    """The earlier file's rows with those of the shapes profiled now replaced, new shapes after."""
    fresh = {(r["m"], r["n"], r["k"]): r for r in new_rows}
    kept = [fresh.pop((r["m"], r["n"], r["k"]), r) for r in old_rows]
    return kept + list(fresh.values())


def say(message, error=False):
    print(message, file=sys.stderr if error else sys.stdout, flush=True)


def run(args):
    """Profile every shape; returns the exit code (raises Stop to end early)."""
    shapes = chosen_shapes(args)
    exe = args.bin_dir / args.step
    if not exe.is_file():
        matches = sorted(p.name for p in args.bin_dir.glob(f"{args.step}_*") if p.is_file()) \
            if args.bin_dir.is_dir() else []
        if len(matches) != 1:
            raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"no step executable {exe}")
        exe = args.bin_dir / matches[0]
    step = exe.name
    ncu = find_ncu(args.ncu)
    path = args.out / cublas_names.PICKS
    try:
        old_rows = cublas_names.load_picks(path) if path.is_file() else []
    except InputError as e:
        raise Stop(exit_codes.EXIT_BAD_ARGUMENT, f"cannot add to {path}: {e}") from None
    today = datetime.date.today().isoformat()
    rows, failed, rejected = [], [], set()
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "cublas.ncu-rep"
        for number, shape in enumerate(shapes, 1):
            text = shape_corpus.shape_text(shape)
            say(f"[{number}/{len(shapes)}] cuBLAS {text} (through {step})")
            while True:
                outcome, newly = profile_shape(ncu, exe, step, shape, report, args.timeout, rejected)
                if not newly - rejected:
                    break
                rejected |= newly
                say(f"cublas_pick: note: this ncu does not know {', '.join(sorted(newly))}; asking again without it")
            if outcome.skipped:
                raise Stop(exit_codes.EXIT_UNSUPPORTED_GPU, f"{outcome.skipped} (choose another step with --step)")
            if outcome.error:
                failed.append(text)
                say(f"cublas_pick: {text}: profile failed: {outcome.error}", error=True)
                continue
            gemm, others = split_kernels(outcome.kernels)
            gpu = gemm.metrics.get("device__attribute_display_name")
            row = cublas_names.pick_row(shape, outcome.precision, (gemm.name, launch_of(gemm)),
                                        [(k.name, launch_of(k)) for k in others],
                                        gpu if isinstance(gpu, str) else "", today, step)
            rows.append(row)
            say(f"  {row['kernel']}: {cublas_names.pick_text(row)}")
            args.out.mkdir(parents=True, exist_ok=True)
            cublas_names.write_picks(path, merged(old_rows, rows))
    if rows:
        say(str(path))
    if failed:
        say(f"cublas_pick: FAILED: {', '.join(failed)}", error=True)
        return exit_codes.EXIT_CHECK_FAILED
    return exit_codes.EXIT_OK


def main(argv=None):
    args = parse_args(argv)
    started = time.monotonic()
    try:
        code = run(args)
    except Stop as stop:
        say(f"cublas_pick: error: {stop}", error=True)
        return stop.code
    say(f"cublas_pick: done in {time.monotonic() - started:.0f} s")
    return code


if __name__ == "__main__":
    sys.exit(main())
