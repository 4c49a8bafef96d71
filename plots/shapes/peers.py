#!/usr/bin/env python3
"""Time what a reader would use instead of writing CUDA, against cuBLAS, on a list of shapes: one
process per peer, each shape checked, then timed in alternation with cuBLAS.

    python3 plots/shapes/peers.py --engine torch|triton --shapes FILE --csv OUT.csv
        [--warmup 1 --iters 10 --time-cap 100 --seed 2024 --device 0 --timing cold|warm]

Engines (FP16 inputs, FP32 accumulation):
  torch   torch.matmul as PyTorch offers it: FP32 output through torch.mm(..., out_dtype=float32)
          where this PyTorch has it, else FP16 output (its rows then say precision fp16_out_fp16).
  triton  the Triton kernel of triton_matmul.py (Triton's tutorial design, FP32 output), with block
          sizes chosen per shape class (shape_class()) among a few candidates (CANDIDATES), each class
          tuned once, on its median shape, before the run.
The reference is cuBLAS's cublasGemmEx, FP16 in, FP32 compute and out, as the step executables call
it, made through ctypes on the cuBLAS library that PyTorch loaded: the check compares every element
with it within the error bound the steps use (common/gemm_math.hpp: twice γ(K+2) for the
tensor-core unit roundoff 4·2⁻²⁴, times |A|·|B|, itself computed by cuBLAS), plus the FP16 rounding
of the output where there is one; NaN and Inf never pass. The timing is the steps': one warm-up round,
then rounds of one peer run and one cuBLAS run (fewer than --iters where they would pass --time-cap
milliseconds), median of each; the GPU is held by a spin kernel while the rounds are queued, so that
Python's launch overhead is not what is timed, and in the cold mode (the default, as the steps')
each timed run follows a read of three times L2, which evicts the operands.

FILE: one MxNxK a line ('#' comments), as the step executables read it. OUT.csv: one row per shape
in the step executables' columns (plots/report/results_csv.py), the peer's name in the step column.
Exit codes (common/exit_codes.hpp): 0 done; 1 a check failed; 2 bad arguments; 3 some shapes did
not fit in device memory (skipped); 5 a CUDA error; 6 this Python lacks PyTorch or Triton (one line
says which: the peer is not available); 77 no CUDA device.
"""
import argparse
import ctypes
import math
import os
import statistics
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

sys.path[:0] = [str(Path(__file__).resolve().parents[1]), str(Path(__file__).resolve().parents[2] / "common")]
import exit_codes  # noqa: E402
from run.arguments import int_at_least, positive_float, positive_int  # noqa: E402
from report.results_csv import (CHECK_COLUMNS, CODE_COLUMNS, COLUMNS, SPREAD_COLUMNS, TIMING_COLUMNS, TIMING_MODES,  # noqa: E402
                                InputError, least_bytes)
from shapes.peer_rules import (CANDIDATES, FP16_HALF_SMALLEST_SUBNORMAL, FP16_UNIT_ROUNDOFF,  # noqa: E402,F401
                               FP32_UNIT_ROUNDOFF, TENSOR_CORE_UNIT_ROUNDOFF, class_representatives,
                               comparison_scale, fp16_output_tolerance, gamma_n, median, shape_class, timed_rounds)
from shapes.shape_corpus import parse_shape_list, shape_text  # noqa: E402

ENGINES = {"torch": "torch.matmul", "triton": "Triton"}

# cuBLAS's enumerators (cublas_api.h, library_types.h).
CUBLAS_OP_N, CUDA_R_16F, CUDA_R_32F, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT = 0, 2, 0, 68, -1


class NotAvailable(Exception):
    """The peer cannot run in this Python (exit code 6, or 77 without a GPU)."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


# --- the GPU side ----------------------------------------------------------------------------

def import_engine(engine):
    """(torch, triton_matmul or None); raises NotAvailable."""
    try:
        import torch
    except ImportError as e:
        raise NotAvailable(exit_codes.EXIT_TOOL_MISSING,
                           f"PyTorch is not installed for {sys.executable} ({e})") from None
    if not torch.cuda.is_available():
        raise NotAvailable(exit_codes.EXIT_NO_DEVICE, "PyTorch sees no CUDA device")
    module = None
    if engine == "triton":
        try:
            from shapes import triton_matmul as module
        except ImportError as e:
            raise NotAvailable(exit_codes.EXIT_TOOL_MISSING,
                               f"Triton is not installed for {sys.executable} ({e})") from None
    return torch, module


def loaded_library(fragment):
    """The path of a loaded shared library whose file name contains fragment (from /proc/self/maps)."""
    try:
        with open("/proc/self/maps", encoding="utf-8") as maps:
            for line in maps:
                path = line.split()[-1] if len(line.split()) >= 6 else ""
                if fragment in os.path.basename(path):
                    return path
    except OSError:
        pass
    return None


class Cublas:
    """cublasGemmEx through ctypes, on the cuBLAS library that PyTorch loaded: FP16 in, FP32 compute
    and out, row-major (as common/cublas_reference.cpp calls it), on PyTorch's current stream."""

    def __init__(self, torch):
        torch.mm(torch.ones(16, 16, device="cuda", dtype=torch.float16),
                 torch.ones(16, 16, device="cuda", dtype=torch.float16))  # makes PyTorch load cuBLAS
        torch.cuda.synchronize()
        path = loaded_library("libcublas.so")
        try:
            self.lib = ctypes.CDLL(path or "libcublas.so")
        except OSError as e:
            raise NotAvailable(exit_codes.EXIT_TOOL_MISSING, f"cannot load cuBLAS ({e})") from None
        self.path = path or "libcublas.so"
        self.handle = ctypes.c_void_p()
        self._check(self.lib.cublasCreate_v2(ctypes.byref(self.handle)), "cublasCreate")
        self._check(self.lib.cublasSetStream_v2(self.handle, ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)),
                    "cublasSetStream")
        version = ctypes.c_int()
        self._check(self.lib.cublasGetVersion_v2(self.handle, ctypes.byref(version)), "cublasGetVersion")
        self.version = f"{version.value // 10000}.{version.value // 100 % 100}.{version.value % 100}"
        self.one, self.zero = ctypes.c_float(1.0), ctypes.c_float(0.0)
        self.lib.cublasGemmEx.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int,
                                          ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                                          ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int]

    @staticmethod
    def _check(status, what):
        if status != 0:
            raise RuntimeError(f"{what} failed with cuBLAS status {status}")

    def gemm(self, a, b, c):
        """c = a · b, row-major: cuBLAS is column-major, so it computes cᵀ = bᵀ · aᵀ."""
        m, k = a.shape
        n = b.shape[1]
        self._check(self.lib.cublasGemmEx(self.handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, ctypes.byref(self.one),
                                          b.data_ptr(), CUDA_R_16F, n, a.data_ptr(), CUDA_R_16F, k,
                                          ctypes.byref(self.zero), c.data_ptr(), CUDA_R_32F, n, CUBLAS_COMPUTE_32F,
                                          CUBLAS_GEMM_DEFAULT), "cublasGemmEx")
        return c


def driver_version():
    try:
        version = ctypes.c_int()
        ctypes.CDLL("libcuda.so.1").cuDriverGetVersion(ctypes.byref(version))
        return f"{version.value // 1000}.{version.value % 1000 // 10}"
    except (OSError, AttributeError):
        return ""


def sm_clock_mhz(torch):
    """The SM clock now (MHz), as the driver reports it (torch.cuda.clock_rate, through NVML), or None
    where this PyTorch or machine cannot say."""
    try:
        return float(torch.cuda.clock_rate())
    except Exception:  # no pynvml, no NVML, an older PyTorch: the row leaves the clocks empty
        return None


class Timer:
    """CUDA-event timing of runs in alternation, as common/harness_timing.hpp times the steps: the GPU
    is held by a spin kernel while the rounds are queued, so that Python's launch overhead is not what
    is timed, and in cold mode each timed run follows a read of a buffer three times the size of L2,
    which evicts the operands. The SM clock is read before and after the timed rounds."""

    def __init__(self, torch, mode="cold", l2_bytes=0):
        self.torch, self.mode = torch, mode
        self.flush_buffer = None
        if mode == "cold":  # a PyTorch that does not say the L2's size: 64 MiB, more than a Hopper's
            self.flush_buffer = torch.zeros(3 * (l2_bytes or 64 << 20) // 4, device="cuda", dtype=torch.float32)
        self.clocks = (None, None)

    def cover(self):
        if self.flush_buffer is not None:
            self.flush_buffer.sum()

    def medians(self, runs, warmup, iters):
        torch = self.torch
        for _ in range(warmup):
            for run in runs:
                self.cover()
                run()
        events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in runs]
                  for _ in range(iters)]
        torch.cuda.synchronize()
        before = sm_clock_mhz(torch)
        # About 60 µs of Python per launch, twice over, at 2 GHz; at least 1 ms.
        torch.cuda._sleep(int(2e9 * max(1e-3, 2 * 60e-6 * iters * len(runs))))
        for round_events in events:
            for run, (start, end) in zip(runs, round_events):
                self.cover()
                start.record()
                run()
                end.record()
        torch.cuda.synchronize()
        self.clocks = (before, sm_clock_mhz(torch))
        return [median([round_events[i][0].elapsed_time(round_events[i][1]) for round_events in events])
                for i in range(len(runs))]

    def capped(self, runs, warmup, iters, cap_ms):
        """The medians over --iters rounds or, under --time-cap, over as many as fit (one round,
        after the warm-up, measured first)."""
        rounds = iters
        if cap_ms:
            rounds = timed_rounds(sum(self.medians(runs, warmup, 1)), iters, cap_ms)
            warmup = 0
        return self.medians(runs, warmup, rounds)


class TritonEngine:
    """The Triton kernel with its configuration per shape class, each class tuned once."""

    def __init__(self, torch, module, cublas, timer, shapes, sm_count):
        self.torch, self.module, self.timer = torch, module, timer
        self.sm_count = sm_count
        self.representatives = class_representatives([s for s in shapes if module.fits(*s)], sm_count)
        self.chosen = {}
        self.precision = "fp16"
        self.note = f"{module.version()}: after Triton's matmul tutorial, FP32 out, block sizes per shape class"

    def config(self, m, n, k):
        cls = shape_class(m, n, k, self.sm_count)
        if cls not in self.chosen:
            self.chosen[cls] = self._tune(cls, self.representatives.get(cls, (m, n, k)))
        return self.chosen[cls]

    def _tune(self, cls, shape):
        torch, module = self.torch, self.module
        m, n, k = shape
        started = time.monotonic()
        a = torch.rand(m, k, device="cuda", dtype=torch.float16)
        b = torch.rand(k, n, device="cuda", dtype=torch.float16)
        c = torch.empty(m, n, device="cuda", dtype=torch.float32)
        times = {}
        for candidate in CANDIDATES[cls]:
            config = module.Config(*candidate)
            try:
                times[config] = self.timer.medians([lambda: module.gemm(a, b, c, config)], 1, 5)[0]
            except Exception as e:  # a configuration this GPU cannot compile or run (shared memory)
                why = str(e).splitlines()[0] if str(e).strip() else type(e).__name__
                print(f"peers: Triton {config} left out for {cls}: {why}", flush=True)
        if not times:
            raise RuntimeError(f"no Triton configuration of class {cls} runs here")
        best = min(times, key=times.get)
        print(f"peers: Triton, shapes of class '{cls}': {best} (tuned on {shape_text(shape)} among "
              f"{len(times)} in {time.monotonic() - started:.1f} s)", flush=True)
        return best

    def make(self, a, b):
        m, k = a.shape
        n = b.shape[1]
        if not self.module.fits(m, n, k):
            raise Unsupported(f"{m}x{n}x{k} has a matrix of 2^31 elements or more, past this kernel's 32-bit offsets")
        config = self.config(m, n, k)
        c = self.torch.empty(m, n, device="cuda", dtype=self.torch.float32)
        return lambda: self.module.gemm(a, b, c, config), lambda: c


class TorchEngine:
    """torch.matmul: FP32 output where this PyTorch offers it (torch.mm's out_dtype), else FP16."""

    def __init__(self, torch):
        self.torch = torch
        a = torch.ones(16, 16, device="cuda", dtype=torch.float16)
        try:
            self.fp32_out = torch.mm(a, a, out_dtype=torch.float32).dtype == torch.float32
        except (TypeError, RuntimeError):
            self.fp32_out = False
        self.precision = "fp16" if self.fp32_out else "fp16_out_fp16"
        how = "torch.mm(a, b, out_dtype=torch.float32)" if self.fp32_out else \
            "torch.matmul(a, b), FP16 out (no FP32 output for FP16 inputs in this PyTorch)"
        self.note = f"PyTorch {torch.__version__}: {how}"

    def make(self, a, b):
        torch = self.torch
        out = [None]
        if self.fp32_out:
            def run():
                out[0] = torch.mm(a, b, out_dtype=torch.float32)
        else:
            def run():
                out[0] = torch.matmul(a, b)
        return run, lambda: out[0]


class Unsupported(Exception):
    """A shape this engine cannot run (skipped, with a line)."""


def check(torch, out, reference, bound, k, fp16_out):
    """Compare out with cuBLAS's reference element by element, in slices of rows; returns (pass,
    bad count, max |out − ref|, max |out − ref| / tolerance)."""
    scale = comparison_scale(k, TENSOR_CORE_UNIT_ROUNDOFF)
    m, n = reference.shape
    rows = max(1, (1 << 26) // n)
    bad, max_err, max_ratio = 0, 0.0, 0.0
    for r0 in range(0, m, rows):
        got = out[r0:r0 + rows].float()
        ref = reference[r0:r0 + rows]
        tolerance = scale * bound[r0:r0 + rows]
        if fp16_out:
            tolerance = fp16_output_tolerance(tolerance, ref)
        finite = torch.isfinite(got)
        err = torch.where(finite, (got - ref).abs(), torch.full_like(got, math.inf))
        ok = finite & (err <= tolerance)  # NaN compares false
        bad += int((~ok).sum().item())
        max_err = max(max_err, float(err.max().item()))
        ratio = torch.where(tolerance > 0, err / tolerance,
                            torch.where(err == 0, torch.zeros_like(err), torch.full_like(err, math.inf)))
        max_ratio = max(max_ratio, float(ratio.max().item()))
    return bad == 0, bad, max_err, max_ratio


CLOCK_FALL_TOLERANCE = 0.02  # common/harness_timing.hpp's Timings::clock_fall_tolerance


def csv_row(info, engine, note, precision, shape, ms, cublas_ms, max_err, ratio, status, bad=0, timing="cold",
            clocks=(None, None)):
    """One row in the steps' columns, the check's verdict and timing columns included (the steps and
    the peers append to one CSV in the shapes run): the count of bad elements, the first one's place
    and values left empty (the peer's check counts them only); the clocks as read (empty where they
    cannot be), no count of uncovered runs (the spin kernel holds the GPU over the whole queue) and no
    DRAM rate (the shapes run takes the steps')."""
    m, n, k = shape
    flops = 2.0 * m * n * k
    values = {
        "timestamp": datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "gpu": info["gpu"],
        "sm_count": info["sm_count"], "compute_capability": info["cc"], "cuda_runtime": info["runtime"],
        "cuda_driver": info["driver"], "step": engine, "adds": note, "precision": precision, "m": m, "n": n, "k": k,
        "alpha": 1, "beta": 0, "ms": f"{ms:.6g}", "tflops": f"{flops / ms / 1e9:.6g}", "cublas_ms": f"{cublas_ms:.6g}",
        "cublas_tflops": f"{flops / cublas_ms / 1e9:.6g}", "pct_cublas": f"{100 * cublas_ms / ms:.6g}",
        "max_abs_err": f"{max_err:.6g}", "err_over_tol": f"{ratio:.6g}", "global_bytes": 0, "status": status,
        "bad_count": bad, "first_bad_row": "", "first_bad_col": "", "expected": "", "obtained": "",
        "timing": timing, "timer": "events", "sm_mhz_before": "" if clocks[0] is None else f"{clocks[0]:.0f}",
        "sm_mhz_after": "" if clocks[1] is None else f"{clocks[1]:.0f}",
        "clock_fell": "" if None in clocks else int(clocks[1] < clocks[0] * (1 - CLOCK_FALL_TOLERANCE)),
        "uncovered_runs": "", "least_bytes": least_bytes(m, n, k, precision), "dram_read_gbps": "",
        "dram_fraction": "", "cublas_dram_fraction": "",
        # The spread columns stay empty: the peer keeps its medians only. They are written, so that a
        # peer's rows have as many fields as the steps' header in the CSV they share.
        **{column: "" for column in SPREAD_COLUMNS},
        "code": "",  # a peer's row measured no code of ours
    }
    return ",".join(_csv_field(values[c]) for c in
                    COLUMNS + CHECK_COLUMNS + TIMING_COLUMNS + SPREAD_COLUMNS + CODE_COLUMNS) + "\n"


def _csv_field(value):
    text = str(value)
    return '"' + text.replace('"', '""') + '"' if any(ch in text for ch in ',"\n') else text


def print_row(engine, precision, shape, ms, cublas_ms, max_err, ratio, status, header):
    if header:
        print(f"{'step':<22} {'precision':<9} {'MxNxK':<17} {'median_ms':>10} {'TFLOP/s':>9} {'cuBLAS_ms':>10} "
              f"{'%cuBLAS':>9} {'max_abs_err':>11} {'err/tol':>9} check")
    flops = 2.0 * shape[0] * shape[1] * shape[2]
    print(f"{engine:<22} {precision:<9} {shape_text(shape):<17} {ms:10.4f} {flops / ms / 1e9:9.2f} {cublas_ms:10.4f} "
          f"{100 * cublas_ms / ms:8.1f}% {max_err:11.2e} {ratio:9.2e} {status}", flush=True)


def run(args, shapes):
    torch, module = import_engine(args.engine)
    torch.cuda.set_device(args.device)
    props = torch.cuda.get_device_properties(args.device)
    cublas = Cublas(torch)
    timer = Timer(torch, args.timing, getattr(props, "L2_cache_size", 0))
    name = ENGINES[args.engine]
    engine = TorchEngine(torch) if args.engine == "torch" else \
        TritonEngine(torch, module, cublas, timer, shapes, props.multi_processor_count)
    note = f"{engine.note}; against cuBLAS {cublas.version} (PyTorch's)"
    info = {"gpu": props.name, "sm_count": props.multi_processor_count, "cc": f"{props.major}.{props.minor}",
            "runtime": torch.version.cuda or "", "driver": driver_version()}
    print(f"GPU {args.device}: {props.name}, sm_{props.major}{props.minor}, {props.multi_processor_count} SMs; "
          f"{name}: {engine.note}; reference: cuBLAS {cublas.version} from {cublas.path}", flush=True)
    generator = torch.Generator(device="cuda")
    failed = skipped = False
    header = True
    for shape in shapes:
        m, n, k = shape
        try:
            generator.manual_seed(args.seed)
            a = torch.rand(m, k, device="cuda", dtype=torch.float16, generator=generator) * 2 - 1
            b = torch.rand(k, n, device="cuda", dtype=torch.float16, generator=generator) * 2 - 1
            reference = cublas.gemm(a, b, torch.empty(m, n, device="cuda", dtype=torch.float32))
            bound = cublas.gemm(a.abs(), b.abs(), torch.empty(m, n, device="cuda", dtype=torch.float32))
            peer_run, peer_out = engine.make(a, b)
            peer_run()
            ok, bad, max_err, ratio = check(torch, peer_out(), reference, bound, k, engine.precision != "fp16")
            del bound
            ms, cublas_ms = timer.capped([peer_run, lambda: cublas.gemm(a, b, reference)], args.warmup, args.iters,
                                         args.time_cap)
        except torch.cuda.OutOfMemoryError:
            print(f"peers: error: {shape_text(shape)} does not fit in device memory; skipping this shape",
                  file=sys.stderr, flush=True)
            skipped = True
            continue
        except Unsupported as e:
            print(f"peers: error: {e}; skipping this shape", file=sys.stderr, flush=True)
            skipped = True
            continue
        finally:
            a = b = reference = bound = peer_run = peer_out = None
        status = "PASS" if ok else "FAIL"
        print_row(name, engine.precision, shape, ms, cublas_ms, max_err, ratio, status, header)
        header = False
        with open(args.csv, "a", encoding="utf-8") as out:
            if out.tell() == 0:
                out.write(",".join(COLUMNS + CHECK_COLUMNS + TIMING_COLUMNS + SPREAD_COLUMNS + CODE_COLUMNS) + "\n")
            out.write(csv_row(info, name, note, engine.precision, shape, ms, cublas_ms, max_err, ratio, status, bad,
                              args.timing, timer.clocks))
        if not ok:
            failed = True
            print(f"peers: error: {name} {shape_text(shape)}: check failed: {bad} element(s) outside the error bound",
                  file=sys.stderr, flush=True)
    return exit_codes.EXIT_CHECK_FAILED if failed else exit_codes.EXIT_DOES_NOT_FIT if skipped else exit_codes.EXIT_OK


def parse_args(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--engine", required=True, choices=sorted(ENGINES))
    parser.add_argument("--shapes", required=True, type=Path, help="the shapes: one MxNxK a line")
    parser.add_argument("--csv", required=True, type=Path, help="append one row per shape to this CSV")
    parser.add_argument("--warmup", type=int_at_least(0), default=1)
    parser.add_argument("--iters", type=positive_int, default=10)
    parser.add_argument("--time-cap", type=positive_float, help="milliseconds of timed rounds per shape, at most")
    parser.add_argument("--seed", type=int_at_least(0), default=2024)
    parser.add_argument("--device", type=int_at_least(0), default=0)
    parser.add_argument("--timing", choices=TIMING_MODES, default="cold",
                        help="cold (default): L2 flushed before every timed run; warm: operands left in L2")
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    try:
        shapes = parse_shape_list(args.shapes.read_text(encoding="utf-8"), str(args.shapes))
    except OSError as e:
        print(f"peers: error: cannot read {args.shapes}: {e.strerror}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    except InputError as e:
        print(f"peers: error: {e}", file=sys.stderr)
        return exit_codes.EXIT_BAD_ARGUMENT
    try:
        return run(args, shapes)
    except NotAvailable as e:
        print(f"peers: {ENGINES[args.engine]} not available: {e}", file=sys.stderr, flush=True)
        return e.code
    except Exception as e:  # a CUDA, cuBLAS or Triton error: this process's CUDA state is not to be trusted
        first = str(e).splitlines()[0] if str(e).strip() else type(e).__name__
        print(f"peers: error: {ENGINES[args.engine]}: {first}", file=sys.stderr, flush=True)
        return exit_codes.EXIT_CUDA_ERROR


if __name__ == "__main__":
    sys.exit(main())
