"""python.torch_gpu: the PyTorch operators on a GPU. Skipped without PyTorch or a CUDA device.

Every step and variant of the library (those the GPU can run) against torch.matmul in float64, within
the worklog's bound from K and the step's precision (worklog.error_bound, common/gemm_math.hpp):
odd shapes, few rows, leading dimensions past the rows with NaN in the gaps of A and B and C's gaps
checked untouched, transposed operands (computed as Cᵀ = Bᵀ·Aᵀ), beta = 0 over a C of NaN (C must
not be read). Then each step captured in a CUDA graph and replayed on new inputs, each under
torch.compile, torch.library.opcheck on both operators, and the example.
"""
import os
import subprocess
import sys
import unittest

try:
    import torch
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    torch = None

import worklog_torch as worklog
from worklog_torch import _library

HAS_GPU = torch is not None and torch.cuda.is_available()
WHY = "PyTorch is not installed" if torch is None else "no CUDA device (torch.cuda.is_available() is false)"
EXAMPLE = _library.REPOSITORY / "python" / "examples" / "linear.py"


def dtype_of(step):
    return torch.float32 if worklog.library().precision(step) == _library.FP32 else torch.float16


def runs_here(step):
    lowest, highest = worklog.library().compute_capability(step)
    major, minor = torch.cuda.get_device_capability()
    cc = 10 * major + minor
    return cc >= lowest and (highest == 0 or cc <= highest)


def every_step_and_variant():
    names = []
    for step in worklog.steps():
        names += [step] + [f"{step}/{v}" for v in worklog.variants(step)]
    return names


def matrix(rows, cols, dtype, ld=None, transposed=False, generator=None):
    """A rows × cols matrix of random values, row-major with leading dimension ld (NaN in the gap),
    or with `transposed` the transpose of such a cols × rows matrix (column-major)."""
    r, c = (cols, rows) if transposed else (rows, cols)
    ld = ld or c
    storage = torch.full((r, ld), float("nan"), dtype=dtype, device="cuda")
    storage[:, :c] = torch.randn(r, c, generator=generator, device="cuda").to(dtype)
    view = storage[:, :c]
    return view.t() if transposed else view


@unittest.skipUnless(HAS_GPU, WHY)
class StepsTest(unittest.TestCase):
    # (M, N, K, alpha, beta, lda, ldb, ldc, transposed): odd, skinny, few rows, unaligned K and N,
    # strided, transposed; leading dimensions of the row-major storage (0: packed), which for a
    # transposed operand is its transpose's (so ldb ≥ K there, ldc ≥ M).
    PROBLEMS = [
        (67, 53, 64, 1.0, 0.0, 0, 0, 0, False),
        (129, 127, 131, 1.5, 0.5, 0, 0, 0, False),
        (1, 1024, 1032, 1.0, 1.0, 0, 0, 0, False),
        (16, 264, 2056, -1.0, 0.25, 0, 0, 0, False),
        (300, 259, 67, 0.5, 2.0, 75, 263, 261, False),
        (136, 264, 200, 1.0, 0.5, 208, 272, 264, False),
        (65, 130, 72, 1.0, 1.0, 0, 0, 0, True),
        (96, 33, 257, 2.0, 0.0, 260, 264, 100, True),
    ]

    def check(self, step, m, n, k, alpha, beta, lda, ldb, ldc, transposed, seed):
        dtype = dtype_of(step)
        g = torch.Generator(device="cuda").manual_seed(seed)
        a = matrix(m, k, dtype, lda, transposed, g)
        b = matrix(k, n, dtype, ldb, transposed, g)
        out = matrix(m, n, torch.float32, ldc, transposed, g)
        if beta == 0:
            out.fill_(float("nan"))  # with beta == 0 C is not read: its NaN must not reach the result
        storage = out.t() if transposed else out
        whole = storage.as_strided((storage.shape[0], storage.stride(0)), (storage.stride(0), 1))
        gap_before = whole[:, storage.shape[1]:].clone().view(torch.int32)  # bits: the gaps hold NaN
        initial = out.clone()
        got = worklog.gemm(a, b, step=step, alpha=alpha, beta=beta, out=out)
        torch.cuda.synchronize()
        self.assertIs(got, out)
        exact = worklog.reference(a, b, alpha=alpha, beta=beta, c=initial)
        bound = worklog.error_bound(a, b, step=step, alpha=alpha, beta=beta, c=initial)
        error = (got.double() - exact).abs()
        bad = ~(error <= bound)  # NaN fails too
        if bad.any():
            first = tuple(bad.nonzero()[0].tolist())
            self.fail(f"{int(bad.sum())} element(s) outside the bound; first at {first}: {got[first].item()} "
                      f"against {exact[first].item()}, bound {bound[first].item():.3g}")
        gap_after = whole[:, storage.shape[1]:].view(torch.int32)
        self.assertTrue(torch.equal(gap_after, gap_before), "C's gaps were written")

    def test_every_step_and_variant_against_torch_matmul(self):
        for seed, step in enumerate(every_step_and_variant()):
            if not runs_here(step):
                continue
            for problem in self.PROBLEMS:
                with self.subTest(step=step, problem=problem):
                    self.check(step, *problem, seed=seed)
            with self.subTest(step=step, problem="a new C"):
                a, b = matrix(70, 90, dtype_of(step)), matrix(90, 45, dtype_of(step))
                c = worklog.gemm(a, b, step=step, alpha=0.5)
                self.assertEqual(c.dtype, torch.float32)
                self.assertTrue(((c.double() - worklog.reference(a, b, alpha=0.5)).abs()
                                 <= worklog.error_bound(a, b, step=step, alpha=0.5)).all())

    def test_refusals_on_the_gpu(self):
        step = worklog.steps()[-1]
        dtype = dtype_of(step)
        a, b = matrix(8, 16, dtype), matrix(16, 24, dtype)
        with self.assertRaisesRegex(ValueError, r"A is row-major, B is column-major"):
            worklog.gemm(a, matrix(16, 24, dtype, transposed=True), step=step)
        with self.assertRaisesRegex(ValueError, r"out starts 4 bytes past a 16-byte boundary"):
            worklog.gemm(a, b, step=step, out=torch.zeros(8 * 24 + 1, device="cuda")[1:].view(8, 24))

    def test_empty_problems(self):
        step = worklog.steps()[-1]
        dtype = dtype_of(step)
        out = torch.full((5, 7), 2.0, device="cuda")
        worklog.gemm(matrix(5, 0, dtype), matrix(0, 7, dtype), step=step, beta=0.5, out=out)
        self.assertTrue(torch.equal(out, torch.full_like(out, 1.0)))
        self.assertEqual(tuple(worklog.gemm(matrix(0, 3, dtype), matrix(3, 7, dtype), step=step).shape), (0, 7))


@unittest.skipUnless(HAS_GPU, WHY)
class GraphsAndCompileTest(unittest.TestCase):
    def steps_here(self):
        return [s for s in worklog.steps() if runs_here(s)]

    def close(self, got, a, b, step, alpha=1.0, beta=0.0, c=None):
        error = (got.double() - worklog.reference(a, b, alpha=alpha, beta=beta, c=c)).abs()
        return bool((error <= worklog.error_bound(a, b, step=step, alpha=alpha, beta=beta, c=c)).all())

    def test_each_step_in_a_cuda_graph(self):
        for step in self.steps_here():
            with self.subTest(step=step):
                dtype = dtype_of(step)
                a, b = matrix(300, 264, dtype), matrix(264, 200, dtype)
                c = torch.randn(300, 200, device="cuda")
                initial = c.clone()
                side = torch.cuda.Stream()
                side.wait_stream(torch.cuda.current_stream())
                with torch.cuda.stream(side):  # the warm-up torch asks for before a capture
                    worklog.gemm(a, b, step=step)
                torch.cuda.current_stream().wait_stream(side)
                graph = torch.cuda.CUDAGraph()
                with torch.cuda.graph(graph):
                    y = worklog.gemm(a, b, step=step, alpha=2.0)
                    worklog.gemm(a, b, step=step, alpha=1.0, beta=0.5, out=c)
                a.copy_(matrix(300, 264, dtype))
                b.copy_(matrix(264, 200, dtype))
                c.copy_(initial)
                graph.replay()
                torch.cuda.synchronize()
                self.assertTrue(self.close(y, a, b, step, alpha=2.0), "the replayed graph's new C")
                self.assertTrue(self.close(c, a, b, step, beta=0.5, c=initial), "the replayed graph's out")

    def test_a_capture_before_the_first_launch_is_refused(self):
        # A fresh process, in which the step has never run: the launch inside the capture is refused
        # with the reason (worklog_c_api.h), not left to fail inside the capture.
        step = self.steps_here()[-1]
        script = (
            "import torch, worklog_torch as worklog\n"
            f"a = torch.ones(64, 64, device='cuda', dtype={dtype_of(step)})\n"
            "g = torch.cuda.CUDAGraph()\n"
            "try:\n"
            "    with torch.cuda.graph(g):\n"
            f"        worklog.gemm(a, a, step={step!r})\n"
            "except Exception as e:\n"
            "    print(str(e).splitlines()[0])\n")
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=str(_library.REPOSITORY / "python")))
        self.assertIn(f"{step} has not run on this device yet", run.stdout, run.stderr)

    def test_each_step_under_torch_compile(self):
        for step in self.steps_here():
            with self.subTest(step=step):
                dtype = dtype_of(step)
                # Each step is a constant of its own graph: start each from an empty cache, or dynamo's
                # limit of recompilations of one function (8) ends the loop, not a fault of the operator.
                torch._dynamo.reset()

                def model(a, b, c):
                    y = torch.relu(worklog.gemm(a, b, step=step)) + 1
                    worklog.gemm(a, b, step=step, alpha=0.5, beta=2.0, out=c)
                    return y, c

                compiled = torch.compile(model, fullgraph=True, dynamic=False)
                a, b, c = matrix(129, 136, dtype), matrix(136, 72, dtype), torch.randn(129, 72, device="cuda")
                initial = c.clone()
                y, out = compiled(a, b, c)
                exact = torch.relu(worklog.reference(a, b)) + 1
                self.assertTrue(bool(((y.double() - exact).abs() <= worklog.error_bound(a, b, step=step)).all()))
                self.assertTrue(self.close(out, a, b, step, alpha=0.5, beta=2.0, c=initial))
                self.assertTrue(self.close(c, a, b, step, alpha=0.5, beta=2.0, c=initial), "out was not mutated")

    def test_opcheck(self):
        for step in self.steps_here()[:1] + self.steps_here()[-1:]:
            with self.subTest(step=step):
                dtype = dtype_of(step)
                a, b = matrix(33, 40, dtype), matrix(40, 24, dtype)
                torch.library.opcheck(torch.ops.worklog.gemm.default, (a, b, 1.0, step))
                torch.library.opcheck(torch.ops.worklog.gemm_out.default,
                                      (a, b, torch.randn(33, 24, device="cuda"), 1.0, 0.5, step))

    def test_the_example(self):
        if "10_persistent_clusters" not in worklog.steps() or not runs_here("10_persistent_clusters"):
            self.skipTest("the example's step does not run on this GPU")
        run = subprocess.run([sys.executable, str(EXAMPLE)], capture_output=True, text=True, timeout=300,
                             env=dict(os.environ, PYTHONPATH=str(_library.REPOSITORY / "python")))
        self.assertEqual(run.returncode, 0, run.stderr)
        self.assertRegex(run.stdout, r"^step 10 in nn.Linear: 8192 of 8192 outputs within the error bound")


if __name__ == "__main__":
    unittest.main()
