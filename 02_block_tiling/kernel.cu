// Step 02 — block tiling in shared memory.
//
// Adds to 01: a block of tile × tile threads copies one tile of A and one of B into shared memory
// per K slice, and every thread reads them from there instead of from global memory.
// Why it helps: each element fetched from global memory now feeds `tile` FMAs instead of one, so
// the arithmetic intensity against global memory rises from 0.25 to tile / 4 FLOP per byte.
//
// Run: build/bin/02_block_tiling --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "kernel_utils.cuh"
#include "step.hpp"

namespace worklog {
namespace {

template <int tile>
__global__ void __launch_bounds__(tile* tile) block_tiling_gemm(GemmProblem<float> p) {
  static_assert(tile >= 1 && tile * tile <= 1024, "tile: tile*tile threads must fit in one block (<= 1024)");
  __shared__ float a_tile[tile][tile];  // a_tile[r][i] = A[row0 + r][k0 + i]
  __shared__ float b_tile[tile][tile];  // b_tile[i][c] = B[k0 + i][col0 + c]

  const TileOrigin origin = block_tile_origin(p.n, tile, tile);
  const int ty = threadIdx.y, tx = threadIdx.x;  // this thread's row and column inside the tile
  // How much of the tile lies inside C; the rest is padding that reads zeros and writes nothing.
  const long long rows_left = p.m - origin.row, cols_left = p.n - origin.col;
  const float* a = p.a + origin.row * p.lda;  // first row of the block's strip of A
  const float* b = p.b + origin.col;          // first column of the block's strip of B

  float acc = 0.0f;
  // EXCERPT BEGIN slice_loop
  const int k_tiles = int(ceil_div(p.k, tile));
  for (int t = 0; t < k_tiles; ++t) {
    const int k0 = t * tile;
    const int k_left = p.k - k0;

    // LAB BEGIN load_tiles
    // Load tiles: one element of A and one of B per thread, zeros outside the matrices. Threads
    // adjacent in x read adjacent addresses of a row of A and of a row of B: coalesced.
    a_tile[ty][tx] = (ty < rows_left && tx < k_left) ? a[ty * (long long)p.lda + k0 + tx] : 0.0f;
    b_tile[ty][tx] = (ty < k_left && tx < cols_left) ? b[(k0 + ty) * (long long)p.ldb + tx] : 0.0f;
    __syncthreads();  // the tiles are complete before anyone reads them
                      // LAB END

    // LAB BEGIN tile_product
    // Compute: a_tile[ty][i] is the same address for the whole warp (broadcast); b_tile[i][tx] is
    // 32 consecutive words (32 different banks): no bank conflicts.
#pragma unroll
    for (int i = 0; i < tile; ++i) acc += a_tile[ty][i] * b_tile[i][tx];
    __syncthreads();  // everyone is done with the tiles before the next slice overwrites them
    // LAB END
  }
  // EXCERPT END slice_loop

  // Write back.
  if (ty < rows_left && tx < cols_left)
    store_c(p.c + (origin.row + ty) * p.ldc + origin.col + tx, acc, p.alpha, p.beta);
}

constexpr int tile = 32;  // 32 × 32 = 1024 threads, 8 KiB of shared memory per block

void launch(const GemmProblem<float>& p, cudaStream_t stream) {
  block_tiling_gemm<tile><<<tile_grid({p.m, p.n, p.k}, tile, tile), dim3(tile, tile), 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

WORKLOG_REGISTER_STEP(
    Step<float>{"02_block_tiling", launch}.adds("shared-memory tiles of A and B").reuses_tile(tile, tile))

}  // namespace worklog
