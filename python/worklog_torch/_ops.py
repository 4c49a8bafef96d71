"""The PyTorch operators: worklog::gemm (a new C) and worklog::gemm_out (into a given C), each a
torch.library.custom_op with a fake implementation, so that torch.compile traces them and a CUDA graph
captures them. A launch runs on PyTorch's current stream, its workspace allocated by PyTorch's
caching allocator on that stream.

What a step cannot take is refused before anything runs, with one line naming the problem: a dtype
other than the step's (float32 A and B for 01 to 04, float16 from 05 on; C float32), a tensor off the
GPU or on another device, a tensor that is not a matrix, and strides the steps' leading dimensions
cannot describe. The steps take row-major operands with unit column stride and leading dimensions at
least the rows' lengths; operands that are all column-major (transposed views of row-major tensors)
are computed as Cᵀ = Bᵀ·Aᵀ, which is again such a problem.
"""
import functools

import torch

from ._library import FP16, FP32, WorklogError, library

_DTYPES = {FP32: torch.float32, FP16: torch.float16}


def _refuse(message):
    raise ValueError(f"worklog.gemm: {message}")


@functools.lru_cache(maxsize=None)
def _input_dtype(step):
    try:
        return _DTYPES[library().precision(step)]
    except WorklogError as e:
        _refuse(str(e))


def _leading_dimension(t):
    """The leading dimension of `t` read as a row-major matrix (unit column stride, rows at least a
    row's length apart), or None when its strides are not such a matrix's. With one row (or one
    column) the stride along it addresses nothing, so any is taken."""
    rows, cols = t.shape
    if cols > 1 and t.stride(1) != 1:
        return None
    if rows == 1:
        return cols
    return t.stride(0) if t.stride(0) >= cols else None


def _layout(t):
    if _leading_dimension(t) is not None:
        return "row-major"
    if _leading_dimension(t.t()) is not None:
        return "column-major"
    return f"neither row- nor column-major (strides {tuple(t.stride())})"


def _orientation(a, b, out):
    """'rows' when A, B and C (out; None: to be made) are row-major, 'columns' when all are
    column-major (computed as Cᵀ = Bᵀ·Aᵀ); refused otherwise."""
    operands = [t for t in (a, b, out) if t is not None]
    if all(_leading_dimension(t) is not None for t in operands):
        return "rows"
    if all(_leading_dimension(t.t()) is not None for t in operands):
        return "columns"
    names = ("A", "B", "out")
    said = ", ".join(f"{name} is {_layout(t)}" for name, t in zip(names, (a, b, out)) if t is not None)
    _refuse(f"{said}: the steps take A, B and out all row-major, or all column-major; "
            f"pass .contiguous() copies of the others")


def _check(a, b, out, step):
    """The problem's (M, N, K), once every tensor is one the step takes."""
    dtype = _input_dtype(step)
    for name, t in (("A", a), ("B", b)):
        if t.dim() != 2:
            _refuse(f"{name} has {t.dim()} dimensions, and the steps multiply matrices: reshape it to 2-D")
        if t.dtype != dtype:
            _refuse(f"step {step} takes {str(dtype).replace('torch.', '')} A and B; {name} is "
                    f"{str(t.dtype).replace('torch.', '')}")
    if a.device.type != "cuda":
        _refuse(f"A is on {a.device}: the steps run on a CUDA device")
    if b.device != a.device:
        _refuse(f"B is on {b.device} and A on {a.device}")
    m, k = a.shape
    if b.shape[0] != k:
        _refuse(f"A is {m}×{k} and B {b.shape[0]}×{b.shape[1]}: B needs K = {k} rows")
    n = b.shape[1]
    if out is not None:
        if out.dtype != torch.float32:
            _refuse(f"out is {str(out.dtype).replace('torch.', '')}; C is float32 in every step")
        if out.device != a.device:
            _refuse(f"out is on {out.device} and A on {a.device}")
        if tuple(out.shape) != (m, n):
            _refuse(f"out is {'×'.join(str(s) for s in out.shape)}; A·B is {m}×{n}")
    return m, n, k


def _empty_result(a, b, m, n):
    """The C that worklog::gemm returns: row-major, or column-major when A and B are."""
    if _orientation(a, b, None) == "rows":
        return torch.empty((m, n), dtype=torch.float32, device=a.device)
    return torch.empty_strided((m, n), (1, max(m, 1)), dtype=torch.float32, device=a.device)


def _launch(a, b, out, alpha, beta, step):
    """out = alpha·A·B + beta·out by the step, on the current stream (all checked by _check)."""
    m, n, k = a.shape[0], b.shape[1], a.shape[1]
    if m == 0 or n == 0:
        return
    if k == 0:  # no products: C = beta·C, and with beta == 0 C is not read (BLAS)
        out.zero_() if beta == 0 else out.mul_(beta)
        return
    if _orientation(a, b, out) == "rows":
        problem = (m, n, k, a, _leading_dimension(a), b, _leading_dimension(b), out, _leading_dimension(out))
    else:  # Cᵀ = Bᵀ·Aᵀ, each transposed operand row-major
        at, bt, ct = a.t(), b.t(), out.t()
        problem = (n, m, k, bt, _leading_dimension(bt), at, _leading_dimension(at), ct, _leading_dimension(ct))
    pm, pn, pk, pa, lda, pb, ldb, pc, ldc = problem
    if pc.data_ptr() % 16:
        # The steps are tested with C at the start of an allocation; a view at another offset is not.
        _refuse(f"out starts {pc.data_ptr() % 16} bytes past a 16-byte boundary (a view at an offset): "
                f"pass a tensor of its own and copy it back")
    lib = library()
    device = a.device.index if a.device.index is not None else torch.cuda.current_device()
    with torch.cuda.device(device):
        try:
            size = lib.workspace_bytes(step, device, pm, pn, pk, lda, ldb, ldc)
            # Zeroed, as the harness hands it to a step (common/step.hpp); from the caching allocator, on
            # the current stream, so that a CUDA graph captures it from the graph's own pool.
            workspace = torch.zeros(size, dtype=torch.uint8, device=a.device) if size else None
            lib.gemm(step, device, pm, pn, pk, alpha, pa.data_ptr(), lda, pb.data_ptr(), ldb, beta, pc.data_ptr(),
                     ldc, workspace.data_ptr() if size else None, size, torch.cuda.current_stream(device).cuda_stream)
        except WorklogError as e:
            raise type(e)(e.code, f"worklog.gemm(step={step!r}): {e}") from None


@torch.library.custom_op("worklog::gemm", mutates_args=())
def _gemm(a: torch.Tensor, b: torch.Tensor, alpha: float, step: str) -> torch.Tensor:
    m, n, _ = _check(a, b, None, step)
    out = _empty_result(a, b, m, n)
    _launch(a, b, out, alpha, 0.0, step)
    return out


@_gemm.register_fake
def _gemm_fake(a, b, alpha, step):
    m, n, _ = _check(a, b, None, step)
    return _empty_result(a, b, m, n)


@torch.library.custom_op("worklog::gemm_out", mutates_args=("out",))
def _gemm_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float, beta: float, step: str) -> None:
    _check(a, b, out, step)
    _launch(a, b, out, alpha, beta, step)


@_gemm_out.register_fake
def _gemm_out_fake(a, b, out, alpha, beta, step):
    _check(a, b, out, step)
    if min(a.shape[0], b.shape[1], a.shape[1]) > 0:
        _orientation(a, b, out)


def gemm(a, b, *, step, alpha=1.0, beta=0.0, out=None):
    """alpha·A·B by `step` ("10_persistent_clusters", or "<step>/<variant>"), as a new float32 tensor;
    with `out`, out = alpha·A·B + beta·out in place, and out returned. With beta == 0, out is not read."""
    if out is None:
        if beta != 0:
            _refuse(f"beta = {beta} scales out, and no out was given")
        return torch.ops.worklog.gemm(a, b, float(alpha), step)
    torch.ops.worklog.gemm_out(a, b, out, float(alpha), float(beta), step)
    return out


def reference(a, b, *, alpha=1.0, beta=0.0, c=None):
    """alpha·A·B + beta·C in float64 (C left out when beta == 0, as the steps leave it unread)."""
    exact = alpha * (a.double() @ b.double())
    return exact + beta * c.double() if beta != 0 else exact


def error_bound(a, b, *, step, alpha=1.0, beta=0.0, c=None):
    """Per element, how far the step's result may lie from reference(): the worklog's bound,
    f·(|alpha|·(|A|·|B|)_ij + |beta|·|C_ij|), f from K and the step's precision (common/gemm_math.hpp)."""
    scale = library().error_scale(step, a.shape[1])
    bound = abs(alpha) * (a.double().abs() @ b.double().abs())
    if beta != 0:
        bound = bound + abs(beta) * c.double().abs()
    return scale * bound
