"""python.torch: the PyTorch operators without a GPU. Skipped without PyTorch.

The operators are registered with their schemas; what a step cannot take is refused with one line
naming it (dtype, device, dimensions, sizes, strides, beta without out, an unknown step); and the
fake implementation traces (make_fx on fake CUDA tensors, what torch.compile does before it
compiles) to the output a launch would give, row-major or column-major, refusing at trace time what
a launch would refuse.
"""
import unittest

try:
    import torch
    from torch._subclasses.fake_tensor import FakeTensorMode
    from torch.fx.experimental.proxy_tensor import make_fx
except ModuleNotFoundError as e:
    if e.name != "torch":
        raise
    torch = None

import worklog_torch as worklog
from worklog_torch import _library

NO_TORCH = "PyTorch is not installed (python3 -m pip install -r plots/requirements-peers.txt)"


def steps_of(precision):
    lib = worklog.library()
    return [s for s in lib.steps() if lib.precision(s) == precision]


def dtype_of(step):
    return torch.float32 if worklog.library().precision(step) == _library.FP32 else torch.float16


@unittest.skipIf(torch is None, NO_TORCH)
class RefusalTest(unittest.TestCase):
    def setUp(self):
        self.step = worklog.steps()[-1]
        self.dtype = dtype_of(self.step)

    def refused(self, pattern, *args, **kwargs):
        with self.assertRaisesRegex(ValueError, "^worklog.gemm: " + pattern) as caught:
            worklog.gemm(*args, **kwargs)
        self.assertNotIn("\n", str(caught.exception))

    def test_the_operators_are_registered(self):
        self.assertIn("worklog::gemm(Tensor a, Tensor b, float alpha, str step) -> Tensor",
                      str(torch.ops.worklog.gemm.default._schema))
        self.assertRegex(str(torch.ops.worklog.gemm_out.default._schema),
                         r"^worklog::gemm_out\(Tensor a, Tensor b, Tensor\(a\d*!\) out, float alpha, float beta, "
                         r"str step\) -> \(\)$")  # out mutated in place, nothing returned

    def test_dtypes_each_step_does_not_take(self):
        for step in worklog.steps():
            wrong = torch.float16 if dtype_of(step) == torch.float32 else torch.float32
            a, b = torch.ones(4, 4, dtype=wrong), torch.ones(4, 4, dtype=dtype_of(step))
            with self.subTest(step=step):
                self.refused(f"step {step} takes {str(dtype_of(step))[6:]} A and B; A is {str(wrong)[6:]}", a, b,
                             step=step)
        a = torch.ones(4, 4, dtype=self.dtype)
        self.refused(f"step {self.step} takes .* B is bfloat16", a, a.bfloat16(), step=self.step)

    def test_tensors_off_the_gpu_and_other_problems(self):
        a = torch.ones(4, 6, dtype=self.dtype)
        self.refused(r"A is on cpu: the steps run on a CUDA device", a, a.t(), step=self.step)
        self.refused(r"A has 3 dimensions, and the steps multiply matrices", a.reshape(2, 2, 6), a, step=self.step)
        self.refused(r"beta = 0.5 scales out, and no out was given", a, a.t(), step=self.step, beta=0.5)
        self.refused(r"no step called 'no_such_step' in this library", a, a.t(), step="no_such_step")
        self.refused(rf"step {self.step} has no variant 'x'", a, a.t(), step=f"{self.step}/x")


@unittest.skipIf(torch is None, NO_TORCH)
class FakeTest(unittest.TestCase):
    """The fake implementation, on fake CUDA tensors: no GPU is touched."""

    def trace(self, function, *shapes_and_strides, dtype):
        with FakeTensorMode(allow_non_fake_inputs=False) as mode:
            inputs = [torch.empty_strided(shape, stride, dtype=d, device="cuda") for shape, stride, d in
                      [(s, t, dtype if i < 2 else torch.float32) for i, (s, t) in enumerate(shapes_and_strides)]]
            graph = make_fx(function, tracing_mode="fake")(*inputs)
            return graph, function(*inputs), mode

    def test_a_new_c_is_row_major_or_column_major_as_a_and_b(self):
        for step in (steps_of(_library.FP32) + steps_of(_library.FP16))[:1] + steps_of(_library.FP16)[-1:]:
            dtype = dtype_of(step)
            with self.subTest(step=step):
                def f(a, b):
                    return worklog.gemm(a, b, step=step, alpha=2.0) + 1

                graph, out, _ = self.trace(f, ((67, 64), (64, 1)), ((64, 53), (53, 1)), dtype=dtype)
                self.assertIn("torch.ops.worklog.gemm.default", graph.code)
                self.assertEqual((tuple(out.shape), out.dtype, out.device.type), ((67, 53), torch.float32, "cuda"))
                self.assertEqual(out.stride(), (53, 1))
                # Transposed views of row-major tensors: C column-major (computed as Cᵀ = Bᵀ·Aᵀ).
                _, out, _ = self.trace(lambda a, b: worklog.gemm(a, b, step=step), ((67, 64), (1, 67)),
                                       ((64, 53), (1, 64)), dtype=dtype)
                self.assertEqual((tuple(out.shape), out.stride()), ((67, 53), (1, 67)))
                # Leading dimensions past the rows are taken as they are.
                _, out, _ = self.trace(lambda a, b: worklog.gemm(a, b, step=step), ((67, 64), (70, 1)),
                                       ((64, 53), (61, 1)), dtype=dtype)
                self.assertEqual(out.stride(), (53, 1))

    def test_out_is_mutated_in_the_graph(self):
        step = worklog.steps()[-1]

        def f(a, b, c):
            return worklog.gemm(a, b, step=step, alpha=1.5, beta=0.5, out=c)

        graph, out, _ = self.trace(f, ((16, 32), (32, 1)), ((32, 24), (24, 1)), ((16, 24), (24, 1)),
                                   dtype=dtype_of(step))
        self.assertIn("torch.ops.worklog.gemm_out.default", graph.code)
        self.assertEqual(tuple(out.shape), (16, 24))

    def test_what_a_launch_refuses_is_refused_when_traced(self):
        step = worklog.steps()[-1]
        dtype = dtype_of(step)
        cases = [
            # A row-major, B column-major (a transposed view), as x @ W.t() has it.
            ([((8, 32), (32, 1)), ((32, 16), (1, 32))], None,
             r"A is row-major, B is column-major: the steps take A, B and out all row-major, or all column-major"),
            ([((8, 32), (32, 1)), ((32, 16), (16, 1)), ((8, 16), (1, 8))], 0.5, r"out is column-major"),
            ([((8, 32), (64, 2)), ((32, 16), (16, 1))], None,
             r"A is neither row- nor column-major \(strides \(64, 2\)\)"),
            ([((8, 32), (32, 1)), ((32, 16), (0, 1))], None, r"B is neither row- nor column-major"),  # expanded rows
            ([((8, 32), (32, 1)), ((31, 16), (16, 1))], None, r"A is 8×32 and B 31×16: B needs K = 32 rows"),
            ([((8, 32), (32, 1)), ((32, 16), (16, 1)), ((8, 15), (15, 1))], 0.5, r"out is 8×15; A·B is 8×16"),
        ]
        for operands, beta, pattern in cases:
            with self.subTest(pattern=pattern):
                def f(*tensors):
                    if beta is None:
                        return worklog.gemm(*tensors, step=step)
                    return worklog.gemm(tensors[0], tensors[1], step=step, beta=beta, out=tensors[2])

                with self.assertRaisesRegex(ValueError, pattern):
                    self.trace(f, *operands, dtype=dtype)


if __name__ == "__main__":
    unittest.main()
