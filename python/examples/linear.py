"""An nn.Linear whose matmul is step 10 of the worklog, checked against PyTorch; docs/pytorch.md says more."""
import worklog_torch as worklog

worklog.require_cuda_device()  # without one: "linear.py: error: <why>", exit code 77, as the steps say
import torch  # noqa: E402  (after the check, so that a machine without a GPU needs no PyTorch to be told)

linear = torch.nn.Linear(4096, 1024, device="cuda", dtype=torch.float16)
x = torch.randn(8, 4096, device="cuda", dtype=torch.float16)
weight = linear.weight.detach().t().contiguous()  # B = Wᵀ, row-major K × N: the layout the steps take
bias = linear.bias.detach().float().expand(8, 1024).contiguous()  # C = the bias, added with beta = 1
y = worklog.gemm(x, weight, step="10_persistent_clusters", beta=1.0, out=bias.clone())
expected = worklog.reference(x, weight, beta=1.0, c=bias)  # in float64
bound = worklog.error_bound(x, weight, step="10_persistent_clusters", beta=1.0, c=bias)  # from K and FP16
within = (y.double() - expected).abs() <= bound
print(f"step 10 in nn.Linear: {int(within.sum())} of {y.numel()} outputs within the error bound; nn.Linear's "
      f"own: largest difference {(y - linear(x).float()).abs().max().item():.3g} (its output is float16)")
assert within.all()
