"""Tests of the peers (plots/shapes/peers.py): their arithmetic, their rows beside the steps', how they stop without a GPU, and a run on stand-ins for torch, Triton and cuBLAS.

Run from anywhere:  python3 -m unittest discover -s plots/tests -v
"""
import math
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from support import PLOTS  # noqa: E402  (first: it sets the import path)
import exit_codes  # noqa: E402
from shapes import peers  # noqa: E402


class PeersArithmeticTest(unittest.TestCase):
    def test_error_bound_as_in_gemm_math(self):
        u = peers.FP32_UNIT_ROUNDOFF
        self.assertAlmostEqual(peers.comparison_scale(4096, u) / (2 * 4098 * u), 1.0, places=3)
        self.assertGreater(peers.comparison_scale(4096, peers.TENSOR_CORE_UNIT_ROUNDOFF),
                           peers.comparison_scale(4096, u))
        self.assertTrue(math.isinf(peers.gamma_n(1 << 24, u)))
        # FP16 output: one more rounding, relative to the value, and half a subnormal.
        self.assertAlmostEqual(peers.fp16_output_tolerance(0.0, -1024.0), 0.5 + 2.0 ** -25)

    def test_timed_rounds(self):
        self.assertEqual(peers.timed_rounds(5.0, 10, None), 10)
        self.assertEqual(peers.timed_rounds(5.0, 10, 100.0), 10)
        self.assertEqual(peers.timed_rounds(30.0, 10, 100.0), 3)
        self.assertEqual(peers.timed_rounds(400.0, 10, 100.0), 1)

    def test_shape_classes_and_representatives(self):
        self.assertEqual(peers.shape_class(1, 4096, 4096, 132), "m<=16")
        self.assertEqual(peers.shape_class(64, 4096, 4096, 132), "m<=64")
        self.assertEqual(peers.shape_class(256, 28672, 8192, 132), "few tiles")
        self.assertEqual(peers.shape_class(1024, 1024, 8192, 132), "few tiles")  # 8 × 4 = 32 tiles
        self.assertEqual(peers.shape_class(4096, 4096, 4096, 132), "large")
        # 2048³: 16 × 8 = 128 tiles of 128×256, fewer than the 132 SMs.
        self.assertEqual(peers.shape_class(2048, 2048, 2048, 132), "few tiles")
        shapes = [(3072, 3072, 3072), (4096, 4096, 4096), (8192, 8192, 8192), (6144, 6144, 6144), (1, 4096, 4096)]
        self.assertEqual(peers.class_representatives(shapes, 132),
                         {"large": (4096, 4096, 4096), "m<=16": (1, 4096, 4096)})
        for cls, candidates in peers.CANDIDATES.items():
            self.assertTrue(2 <= len(candidates) <= 4, cls)


def fake_module_path(root, torch_source=None, triton_source=None):
    """A folder to put first on PYTHONPATH that holds stand-ins for torch and triton."""
    folder = root / "fake-modules"
    folder.mkdir(exist_ok=True)
    for name, source in (("torch", torch_source), ("triton", triton_source)):
        if source is not None:
            (folder / f"{name}.py").write_text(source)
    return folder


class PeersRowsBesideStepRowsTest(unittest.TestCase):
    def test_a_peer_row_reads_back_under_the_header_a_step_writes(self):
        # The shapes run appends the steps' rows and the peers' rows to one raw CSV: a peer's row must
        # have the columns the harness writes (common/report.cpp), the check's verdict included.
        from report import results_csv
        info = {"gpu": "GPU", "sm_count": 132, "cc": "9.0", "runtime": "13.0", "driver": "13.0"}
        with tempfile.TemporaryDirectory() as tmp:
            raw = Path(tmp) / "raw.csv"
            raw.write_text(",".join(results_csv.COLUMNS + results_csv.CHECK_COLUMNS + results_csv.TIMING_COLUMNS
                                    + results_csv.SPREAD_COLUMNS + results_csv.CODE_COLUMNS) + "\n"
                           + peers.csv_row(info, "torch.matmul", "", "fp16", (8, 16, 32), 0.5, 0.25, 0.0, 0.0,
                                           "PASS"), encoding="utf-8")
            rows = results_csv.load_rows(raw)
        self.assertEqual((rows[0]["step"], rows[0]["pct_cublas"], rows[0]["bad_count"]), ("torch.matmul", 50.0, 0))
        self.assertEqual((rows[0]["timing"], rows[0]["least_bytes"], rows[0]["sm_mhz_before"]),
                         ("cold", (8 * 32 + 32 * 16) * 2 + 8 * 16 * 4, None))
        self.assertEqual([rows[0][c] for c in results_csv.SPREAD_COLUMNS], [None] * 4)  # a peer keeps medians only
        self.assertEqual(rows[0]["code"], "")  # a peer's row measured no code of ours


class PeersWithoutGpuTest(unittest.TestCase):
    """peers.py where it cannot run: each way ends with one line and its exit code."""

    def run_peers(self, engine, modules=None, shapes="64x64x64\n"):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            (root / "s.txt").write_text(shapes)
            env = dict(os.environ)
            if modules:
                env["PYTHONPATH"] = str(fake_module_path(root, *modules))
            done = subprocess.run([sys.executable, str(PLOTS / "shapes" / "peers.py"), "--engine", engine, "--shapes",
                                   str(root / "s.txt"), "--csv", str(root / "out.csv")],
                                  capture_output=True, text=True, timeout=60, env=env)
            self.assertFalse((root / "out.csv").exists())
            return done.returncode, done.stdout, done.stderr

    def test_no_pytorch(self):
        code, stdout, stderr = self.run_peers("torch", ("raise ImportError('No module named torch (test)')",))
        self.assertEqual((code, stdout), (exit_codes.EXIT_TOOL_MISSING, ""))
        self.assertRegex(stderr, r"^peers: torch.matmul not available: PyTorch is not installed for .* "
                                 r"\(No module named torch \(test\)\)\n$")

    def test_no_triton(self):
        torch = "class cuda:\n    @staticmethod\n    def is_available():\n        return True\n"
        code, _, stderr = self.run_peers("triton", (torch, "raise ImportError('No module named triton (test)')"))
        self.assertEqual(code, exit_codes.EXIT_TOOL_MISSING)
        self.assertRegex(stderr, r"^peers: Triton not available: Triton is not installed for .*\n$")

    def test_no_gpu(self):
        torch = "class cuda:\n    @staticmethod\n    def is_available():\n        return False\n"
        code, _, stderr = self.run_peers("torch", (torch,))
        self.assertEqual((code, stderr), (exit_codes.EXIT_NO_DEVICE,
                                          "peers: torch.matmul not available: PyTorch sees no CUDA device\n"))

    def test_bad_shape_list(self):
        code, _, stderr = self.run_peers("torch", shapes="64x64x64\n64x64\n")
        self.assertEqual(code, exit_codes.EXIT_BAD_ARGUMENT)
        self.assertRegex(stderr, r"^peers: error: .*s.txt:2: expected MxNxK, three positive integers \(got '64x64'\)\n$")


def make_fake_torch(np, wrong=False):
    """A module with the part of PyTorch that peers.py uses, computing with NumPy; wrong: torch.mm
    puts a NaN in its result."""
    import time
    import types

    class Tensor(np.ndarray):
        def float(self):
            return self.astype(np.float32).view(Tensor)

        def abs(self):
            return np.abs(self).view(Tensor)

        def data_ptr(self):
            return self.ctypes.data

    def wrap(array):
        return np.asarray(array).view(Tensor)

    torch = types.ModuleType("torch")
    torch.__version__ = "0.0+numpy"
    torch.float16, torch.float32 = np.dtype(np.float16), np.dtype(np.float32)
    torch.version = types.SimpleNamespace(cuda="13.0")

    class Generator:
        def __init__(self, device=None):
            self.rng = np.random.default_rng(0)

        def manual_seed(self, seed):
            self.rng = np.random.default_rng(seed)

    def mm(a, b, out_dtype=None):
        c = a.astype(np.float32) @ b.astype(np.float32)
        if wrong:
            c[0, 0] = np.nan
        return wrap(c.astype(out_dtype or a.dtype))

    torch.Generator = Generator
    default = Generator()
    torch.rand = lambda *shape, device=None, dtype=None, generator=None: wrap(
        (generator or default).rng.random(shape).astype(dtype))
    torch.empty = lambda *shape, device=None, dtype=None: wrap(np.zeros(shape, dtype))
    torch.ones = lambda *shape, device=None, dtype=None: wrap(np.ones(shape, dtype))
    torch.zeros = lambda *shape, device=None, dtype=None: wrap(np.zeros(shape, dtype))
    torch.mm = mm
    torch.matmul = lambda a, b: mm(a, b)
    torch.where = lambda c, x, y: wrap(np.where(c, x, y))
    torch.isfinite = lambda x: wrap(np.isfinite(x))
    torch.full_like = lambda x, v: wrap(np.full_like(x, v))
    torch.zeros_like = lambda x: wrap(np.zeros_like(x))

    class Event:
        def __init__(self, enable_timing=False):
            self.t = None

        def record(self):
            self.t = time.perf_counter()

        def elapsed_time(self, end):
            return max(1e-3, (end.t - self.t) * 1e3)

    torch.cuda = types.SimpleNamespace(
        is_available=lambda: True, set_device=lambda d: None, synchronize=lambda: None, Event=Event,
        _sleep=lambda cycles: None, current_stream=lambda: types.SimpleNamespace(cuda_stream=0),
        OutOfMemoryError=MemoryError,
        get_device_properties=lambda d: types.SimpleNamespace(name="Fake GPU", multi_processor_count=132,
                                                              major=9, minor=0, L2_cache_size=1 << 16))
    return torch


class FakeCublas:
    def __init__(self, torch):
        self.version, self.path = "0.0.0", "fake-libcublas.so"

    def gemm(self, a, b, c):
        c[...] = a.astype("float32") @ b.astype("float32")
        return c


def make_fake_triton_matmul(np):
    import types

    from shapes import triton_config

    module = types.ModuleType("triton_matmul")
    module.Config = triton_config.Config
    module.fits = triton_config.fits
    module.version = lambda: "Triton 0.0 (fake)"
    module.calls = []

    def gemm(a, b, c, config):
        module.calls.append(config)
        c[...] = a.astype(np.float32) @ b.astype(np.float32)
        return c

    module.gemm = gemm
    return module


class PeersOnStandInsTest(unittest.TestCase):
    def setUp(self):
        try:
            import numpy
        except ImportError:
            self.skipTest("no NumPy")
        self.np = numpy
        self.tmp = tempfile.TemporaryDirectory()
        self.root = Path(self.tmp.name)
        self.saved = {name: sys.modules.get(name) for name in ("torch", "shapes.triton_matmul")}
        self.cublas = peers.Cublas

    def tearDown(self):
        for name, module in self.saved.items():
            if module is None:
                sys.modules.pop(name, None)
            else:
                sys.modules[name] = module
        peers.Cublas = self.cublas
        self.tmp.cleanup()

    def run_peer(self, engine, shapes, wrong=False, *extra):
        import contextlib
        import io
        sys.modules["torch"] = make_fake_torch(self.np, wrong)
        sys.modules["shapes.triton_matmul"] = make_fake_triton_matmul(self.np)
        peers.Cublas = FakeCublas
        (self.root / "s.txt").write_text("".join(f"{m}x{n}x{k}\n" for m, n, k in shapes))
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = peers.main(["--engine", engine, "--shapes", str(self.root / "s.txt"), "--csv",
                               str(self.root / "out.csv"), "--iters", "3", *extra])
        return code, out.getvalue(), err.getvalue()

    def test_torch_rows_checked_and_timed(self):
        from report import results_csv
        code, stdout, stderr = self.run_peer("torch", [(64, 48, 40), (1, 33, 17)])
        self.assertEqual((code, stderr), (0, ""), stdout)
        self.assertIn("torch.matmul: PyTorch 0.0+numpy: torch.mm(a, b, out_dtype=torch.float32)", stdout)
        rows = results_csv.load_rows(self.root / "out.csv")
        self.assertEqual([(r["step"], r["m"], r["n"], r["k"], r["precision"], r["status"]) for r in rows],
                         [("torch.matmul", 64, 48, 40, "fp16", "PASS"), ("torch.matmul", 1, 33, 17, "fp16", "PASS")])
        self.assertIn("against cuBLAS 0.0.0 (PyTorch's)", rows[0]["adds"])
        self.assertLess(rows[0]["err_over_tol"], 1.0)

    def test_a_nan_fails_the_check(self):
        code, _, stderr = self.run_peer("torch", [(32, 32, 32)], True)
        self.assertEqual(code, exit_codes.EXIT_CHECK_FAILED)
        self.assertIn("peers: error: torch.matmul 32x32x32: check failed: 1 element(s) outside the error bound",
                      stderr)

    def test_triton_tunes_each_class_once(self):
        from report import results_csv
        code, stdout, stderr = self.run_peer("triton", [(1, 64, 64), (8, 64, 64), (512, 512, 64)], False,
                                             "--time-cap", "1000")
        self.assertEqual((code, stderr), (0, ""), stdout)
        tuned = [line for line in stdout.splitlines() if line.startswith("peers: Triton, shapes of class")]
        self.assertEqual(len(tuned), 2, stdout)  # m<=16 (on 1x64x64, its lower median) and few tiles
        self.assertIn("shapes of class 'm<=16': ", tuned[0])
        self.assertIn("(tuned on 1x64x64 among 3", tuned[0])
        rows = results_csv.load_rows(self.root / "out.csv")
        self.assertEqual([r["status"] for r in rows], ["PASS"] * 3)
        self.assertTrue(rows[0]["adds"].startswith("Triton 0.0 (fake): after Triton's matmul tutorial"))


if __name__ == "__main__":
    unittest.main()
