// Step 05 — tensor cores through WMMA: one warp computes one 16 × 16 tile of C.
//
// Adds to 04: FP16 inputs, and the multiply-adds move to the tensor cores: one mma_sync of a warp
// is a 16 × 16 × 16 product (4096 multiply-adds, FP32 accumulate) from fragments in registers.
// Why it helps (and why it is still slow): the tensor cores do in one instruction what took a warp
// 128 FMAs, but each mma_sync here needs two fresh fragments from global memory.
//
// Run: build/bin/05_wmma --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "step.hpp"
#include "wmma_tiles.cuh"

namespace worklog {
namespace {

using namespace wmma_tiles;

__global__ void __launch_bounds__(32) wmma_gemm(GemmProblem<__half> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
  __trap();  // not reached: the harness refuses GPUs below sm_70 (exit code 4) before launching
#else
  __shared__ __align__(32) __half a_staging[fragment_elements];  // edge tiles of A and B, zero-padded
  __shared__ __align__(32) __half b_staging[fragment_elements];
  __shared__ __align__(32) float c_staging[fragment_elements];  // the accumulator on its way to C

  const TileOrigin tile = block_tile_origin(p.n, fragment_size, fragment_size);
  const long long rows_left = p.m - tile.row, cols_left = p.n - tile.col;
  // wmma loads need 32-byte aligned fragments. With lda (ldb) a multiple of 8 halves and tile origins
  // multiples of 16 rows and columns, every fragment of A (B) starts a multiple of 256 bytes from
  // the base: interior fragments load straight from memory when the base itself is 32-byte aligned
  // (cudaMalloc's are; a pointer into the middle of an allocation may not be).
  const bool a_direct = p.lda % 8 == 0 && is_aligned(p.a, 32), b_direct = p.ldb % 8 == 0 && is_aligned(p.b, 32);

  Accumulator acc;
  wmma::fill_fragment(acc, 0.0f);
  FragmentA a;
  FragmentB b;
  // EXCERPT BEGIN k_loop
  const int k_steps = int(ceil_div(p.k, fragment_size));
  for (int s = 0; s < k_steps; ++s) {
    const int k0 = s * fragment_size;
    // LAB BEGIN fragment_product
    // Load the 16 × 16 fragments of A (rows tile.row.., columns k0..) and B (rows k0.., columns tile.col..).
    load_fragment(a, p.a + tile.row * p.lda + k0, p.lda, rows_left, p.k - k0, a_direct, a_staging);
    load_fragment(b, p.b + k0 * (long long)p.ldb + tile.col, p.ldb, p.k - k0, cols_left, b_direct, b_staging);
    // Compute: acc += a · b on the tensor cores.
    wmma::mma_sync(acc, a, b, acc);
    // LAB END
  }
  // EXCERPT END k_loop

  // Write back, with alpha and beta.
  store_accumulator(acc, p.c + tile.row * p.ldc + tile.col, p.ldc, rows_left, cols_left, p.alpha, p.beta, c_staging);
#endif
}

void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  wmma_gemm<<<tile_grid({p.m, p.n, p.k}, fragment_size, fragment_size), 32, 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

// Each warp fetches its A and B fragments itself: the fetch is shared by one 16 × 16 tile.
WORKLOG_REGISTER_STEP(Step<__half>{"05_wmma", launch}
                          .adds("tensor cores: one warp per 16x16 tile")
                          .reuses_tile(16, 16)
                          .needs_compute_capability(70))

}  // namespace worklog
