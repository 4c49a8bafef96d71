// Step 03 — thread coarsening: each thread computes a small 2-D patch of C.
//
// Adds to 02: a block computes a block_tile_m × block_tile_n tile, each thread thread_tile_m ×
// thread_tile_n elements of it in registers, strided so that a warp's reads stay conflict-free.
// Why it helps: larger block tiles read A and B fewer times, and the loop, address arithmetic and
// barriers are shared by many outputs per thread, with independent accumulators in flight.
//
// Run: build/bin/03_thread_coarsening --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "kernel_utils.cuh"
#include "step.hpp"

namespace worklog {
namespace {

template <int block_tile_m, int block_tile_n, int block_tile_k, int thread_tile_m, int thread_tile_n>
__global__ void __launch_bounds__((block_tile_m / thread_tile_m) * (block_tile_n / thread_tile_n))
    thread_coarsening_gemm(GemmProblem<float> p) {
  constexpr int threads_y = block_tile_m / thread_tile_m;  // threads along the rows of the tile
  constexpr int threads_x = block_tile_n / thread_tile_n;  // threads along its columns
  constexpr int threads = threads_x * threads_y;
  static_assert(block_tile_m % thread_tile_m == 0, "block_tile_m must be a multiple of thread_tile_m");
  static_assert(block_tile_n % thread_tile_n == 0, "block_tile_n must be a multiple of thread_tile_n");
  static_assert(threads % 32 == 0 && threads <= 1024,
                "thread count (block tile / thread tile) must be whole warps, <= 1024");
  static_assert((block_tile_m * block_tile_k) % threads == 0,
                "block_tile_m * block_tile_k must divide among the threads");
  static_assert((block_tile_k * block_tile_n) % threads == 0,
                "block_tile_k * block_tile_n must divide among the threads");

  __shared__ float a_tile[block_tile_m][block_tile_k];
  __shared__ float b_tile[block_tile_k][block_tile_n];

  const TileOrigin origin = block_tile_origin(p.n, block_tile_m, block_tile_n);
  const int tid = threadIdx.x;
  const int ty = tid / threads_x, tx = tid % threads_x;
  const long long rows_left = p.m - origin.row, cols_left = p.n - origin.col;
  const float* a = p.a + origin.row * p.lda;
  const float* b = p.b + origin.col;

  float acc[thread_tile_m][thread_tile_n] = {};
  const int k_tiles = int(ceil_div(p.k, block_tile_k));
  for (int t = 0; t < k_tiles; ++t) {
    const int k0 = t * block_tile_k;
    const int k_left = p.k - k0;

    // LAB BEGIN load_tiles
    // Load tiles: the block's threads sweep each tile in row-major order, several elements each;
    // consecutive threads take consecutive columns, so each row is read with coalesced accesses.
#pragma unroll
    for (int e = tid; e < block_tile_m * block_tile_k; e += threads) {
      const int r = e / block_tile_k, i = e % block_tile_k;
      a_tile[r][i] = (r < rows_left && i < k_left) ? a[r * (long long)p.lda + k0 + i] : 0.0f;
    }
#pragma unroll
    for (int e = tid; e < block_tile_k * block_tile_n; e += threads) {
      const int i = e / block_tile_n, c = e % block_tile_n;
      b_tile[i][c] = (i < k_left && c < cols_left) ? b[(k0 + i) * (long long)p.ldb + c] : 0.0f;
    }
    // LAB END
    // EXCERPT BEGIN patch_update
    __syncthreads();

    // LAB BEGIN patch_update
    // Compute: every thread updates its whole patch for each i of the slice.
#pragma unroll
    for (int i = 0; i < block_tile_k; ++i)
#pragma unroll
      for (int y = 0; y < thread_tile_m; ++y)
#pragma unroll
        for (int x = 0; x < thread_tile_n; ++x)
          acc[y][x] += a_tile[ty + y * threads_y][i] * b_tile[i][tx + x * threads_x];
    // LAB END
    __syncthreads();
    // EXCERPT END patch_update
  }

  // Write back the patch, skipping what lies outside C.
#pragma unroll
  for (int y = 0; y < thread_tile_m; ++y)
#pragma unroll
    for (int x = 0; x < thread_tile_n; ++x) {
      const int r = ty + y * threads_y, c = tx + x * threads_x;
      if (r < rows_left && c < cols_left)
        store_c(p.c + (origin.row + r) * p.ldc + origin.col + c, acc[y][x], p.alpha, p.beta);
    }
}

// 64 × 64 tile of C per block, K in slices of 16, a 4 × 4 patch per thread: 256 threads and
// 2 × 64 × 16 × 4 B = 8 KiB of shared memory per block.
constexpr int block_tile_m = 64, block_tile_n = 64, block_tile_k = 16;
constexpr int thread_tile_m = 4, thread_tile_n = 4;

void launch(const GemmProblem<float>& p, cudaStream_t stream) {
  constexpr int threads = (block_tile_m / thread_tile_m) * (block_tile_n / thread_tile_n);
  thread_coarsening_gemm<block_tile_m, block_tile_n, block_tile_k, thread_tile_m, thread_tile_n>
      <<<tile_grid({p.m, p.n, p.k}, block_tile_m, block_tile_n), threads, 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

WORKLOG_REGISTER_STEP(Step<float>{"03_thread_coarsening", launch}
                          .adds("a 4x4 patch of C per thread")
                          .reuses_tile(block_tile_m, block_tile_n))

}  // namespace worklog
