"""The worklog's steps as PyTorch operators.

    import worklog_torch as worklog
    y = worklog.gemm(a, b, step="10_persistent_clusters")                  # y = A·B
    worklog.gemm(a, b, step="10_persistent_clusters", alpha=2.0, beta=1.0, out=c)  # c = 2·A·B + c

The steps come from libworklog_steps.so (python/c_api/), built with them; importing this package
needs no PyTorch: the library's listing (`steps()`, `variants()`, `library()`) and
`require_cuda_device()` work without it. The operators (`gemm`, `error_bound`, `reference`) are
registered with torch.library when one of them is first asked for, and need PyTorch then.
docs/pytorch.md says more.
"""
from ._library import Library, NoCudaDevice, WorklogError, library, require_cuda_device, steps, variants

__all__ = ["Library", "NoCudaDevice", "WorklogError", "library", "require_cuda_device", "steps", "variants", "gemm",
           "error_bound", "reference"]
_TORCH_NAMES = ("gemm", "error_bound", "reference")


def __getattr__(name):
    # Imported here, on first use, so that `import worklog_torch` works in a Python without PyTorch
    # (the library's own tests run there); afterwards the names are ordinary attributes.
    if name not in _TORCH_NAMES:
        raise AttributeError(f"module 'worklog_torch' has no attribute '{name}'")
    try:
        from . import _ops
    except ModuleNotFoundError as e:
        if e.name != "torch":
            raise
        raise ImportError(f"worklog_torch.{name} needs PyTorch, which this Python lacks "
                          f"(python3 -m pip install -r plots/requirements-peers.txt)") from e
    globals().update({n: getattr(_ops, n) for n in _TORCH_NAMES})
    return globals()[name]
