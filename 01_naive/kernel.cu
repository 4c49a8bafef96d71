// Step 01 — naive GEMM: one thread per element of C, FP32 on the CUDA cores.
//
// The starting point. Thread (row, col) walks row `row` of A and column `col` of B and keeps the
// dot product in a register; the 32 threads of a warp take 32 adjacent columns, so their loads of B
// coalesce and their loads of A are one broadcast. Every FMA still fetches two fresh operands from
// global memory: 0.25 FLOP per byte, far below any GPU's ridge point.
//
// Run: build/bin/01_naive --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "kernel_utils.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// A block is 32 × 8 threads: x runs along a row of C (one warp = 32 adjacent columns).
constexpr int block_cols = 32;
constexpr int block_rows = 8;

__global__ void __launch_bounds__(block_cols* block_rows) naive_gemm(GemmProblem<float> p) {
  // EXCERPT BEGIN kernel
  const TileOrigin tile = block_tile_origin(p.n, block_rows, block_cols);
  const long long row = tile.row + threadIdx.y;
  const long long col = tile.col + threadIdx.x;
  if (row >= p.m || col >= p.n) return;  // the block sticks out past the edge of C

  // Dot product of row `row` of A with column `col` of B.
  const float* a = p.a + row * p.lda;  // walks along the row: stride 1
  const float* b = p.b + col;          // walks down the column: stride ldb (N when B is packed)
  float acc = 0.0f;
  // LAB BEGIN dot_product
  for (int i = 0; i < p.k; ++i, b += p.ldb) acc += a[i] * *b;
  // LAB END

  // Write back.
  store_c(p.c + row * p.ldc + col, acc, p.alpha, p.beta);
  // EXCERPT END kernel
}

void launch(const GemmProblem<float>& p, cudaStream_t stream) {
  const dim3 block(block_cols, block_rows);
  naive_gemm<<<tile_grid({p.m, p.n, p.k}, block_rows, block_cols), block, 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

// No tile of C shares a load: every FMA fetches both operands (reuse 1 × 1).
WORKLOG_REGISTER_STEP(Step<float>{"01_naive", launch}.adds("one thread per element of C").reuses_tile(1, 1))

}  // namespace worklog
