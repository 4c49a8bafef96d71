"""A Triton GEMM after the design of Triton's public matmul tutorial (written here in our own code):
C (M×N, FP32) = A (M×K, FP16) · B (K×N, FP16), all row-major and dense, accumulated in FP32.
One program computes one BLOCK_M × BLOCK_N tile of C, walking K in BLOCK_K slices; programs are
numbered in grouped order (GROUP_M rows of tiles, column by column) so that the tiles running at the
same time share rows of A and columns of B in L2. Block sizes, warps and pipeline stages are chosen
per shape class by peers.py (Config, tune()), not by triton.autotune, to bound the compilations.

Needs PyTorch and Triton; peers.py imports this module only when both are there.
"""
import torch
import triton
import triton.language as tl

from shapes.triton_config import LARGEST, Config, fits  # noqa: F401  (peers.py reads them from this module)


# M is left unspecialized (Triton compiles one variant per divisibility class of each integer
# argument otherwise); N and K stay specialized: whether their rows are 16-byte aligned decides
# whether the loads can be vectorized.
@triton.jit(do_not_specialize=["M"])
def _gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K,
                 BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    # This program's tile, in grouped order.
    pid = tl.program_id(axis=0)
    tiles_m = tl.cdiv(M, BLOCK_M)
    tiles_n = tl.cdiv(N, BLOCK_N)
    programs_per_group = GROUP_M * tiles_n
    first_row = (pid // programs_per_group) * GROUP_M
    rows_in_group = tl.minimum(tiles_m - first_row, GROUP_M)
    in_group = pid % programs_per_group
    tile_m = first_row + in_group % rows_in_group
    tile_n = in_group // rows_in_group

    rows = tile_m * BLOCK_M + tl.arange(0, BLOCK_M)
    cols = tile_n * BLOCK_N + tl.arange(0, BLOCK_N)
    ks = tl.arange(0, BLOCK_K)
    # Rows and columns past the edge of C read valid rows of A and columns of B again (modulo M
    # and N): their products are never stored, and the loads need no mask but along K.
    a_ptrs = a_ptr + (rows % M)[:, None] * K + ks[None, :]
    b_ptrs = b_ptr + ks[:, None] * N + (cols % N)[None, :]

    acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
    for step in range(0, tl.cdiv(K, BLOCK_K)):
        k_left = K - step * BLOCK_K
        a = tl.load(a_ptrs, mask=ks[None, :] < k_left, other=0.0)
        b = tl.load(b_ptrs, mask=ks[:, None] < k_left, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BLOCK_K
        b_ptrs += BLOCK_K * N

    c_ptrs = c_ptr + rows[:, None] * N + cols[None, :]
    tl.store(c_ptrs, acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


def gemm(a, b, c, config):
    """c = a · b with this config (c FP32, a and b FP16, all contiguous on the GPU)."""
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, config.block_m) * triton.cdiv(n, config.block_n),)
    _gemm_kernel[grid](a, b, c, m, n, k, BLOCK_M=config.block_m, BLOCK_N=config.block_n,
                       BLOCK_K=config.block_k, GROUP_M=config.group_m, num_warps=config.warps,
                       num_stages=config.stages)
    return c


def version():
    return f"Triton {triton.__version__}, PyTorch {torch.__version__}"
