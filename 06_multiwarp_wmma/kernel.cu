// Step 06 — several warps per block, several accumulators per warp.
//
// Adds to 05: a block of warps computes a block tile, each warp a warp tile of (warp_tile_m / 16)
// × (warp_tile_n / 16) accumulators, loading each A and B fragment once per slice for a whole row
// or column of them.
// Why it helps: a 64 × 64 warp tile makes 8 fragment loads feed 16 mma_sync (05: 2 loads each),
// and 16 independent accumulators keep the tensor cores busy while loads are in flight.
//
// Run: build/bin/06_multiwarp_wmma --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "step.hpp"
#include "wmma_tiles.cuh"

namespace worklog {
namespace {

using namespace wmma_tiles;

template <int block_tile_m, int block_tile_n, int warp_tile_m, int warp_tile_n>
__global__ void __launch_bounds__((block_tile_m / warp_tile_m) * (block_tile_n / warp_tile_n) * 32)
    multiwarp_wmma_gemm(GemmProblem<__half> p) {
  constexpr int warps_n = block_tile_n / warp_tile_n;
  constexpr int warps = (block_tile_m / warp_tile_m) * warps_n;
  constexpr int fragments_m = warp_tile_m / fragment_size;  // accumulators along the rows of a warp tile
  constexpr int fragments_n = warp_tile_n / fragment_size;  // and along its columns
  static_assert(warp_tile_m % fragment_size == 0, "warp_tile_m must be a multiple of 16");
  static_assert(warp_tile_n % fragment_size == 0, "warp_tile_n must be a multiple of 16");
  static_assert(block_tile_m % warp_tile_m == 0, "block_tile_m must be a multiple of warp_tile_m");
  static_assert(block_tile_n % warp_tile_n == 0, "block_tile_n must be a multiple of warp_tile_n");
  static_assert(warps >= 1 && warps <= 32, "block_tile / warp_tile must give 1 to 32 warps");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 700
  __trap();  // not reached: the harness refuses GPUs below sm_70 (exit code 4) before launching
#else
  // Each warp's own staging buffers for edge tiles and for the epilogue (see wmma_tiles.cuh).
  __shared__ __align__(32) __half a_staging[warps][fragment_elements];
  __shared__ __align__(32) __half b_staging[warps][fragment_elements];
  __shared__ __align__(32) float c_staging[warps][fragment_elements];

  const TileOrigin block = block_tile_origin(p.n, block_tile_m, block_tile_n);
  const int warp = threadIdx.x / 32;
  const long long row = block.row + (warp / warps_n) * warp_tile_m;  // first row of this warp's tile
  const long long col = block.col + (warp % warps_n) * warp_tile_n;  // and first column
  // A warp whose whole tile lies outside C has nothing to do. The kernel has no block-wide
  // barrier, so it may leave early.
  if (row >= p.m || col >= p.n) return;
  // As in 05: fragments straight from memory when they are 32-byte aligned.
  const bool a_direct = p.lda % 8 == 0 && is_aligned(p.a, 32), b_direct = p.ldb % 8 == 0 && is_aligned(p.b, 32);

  Accumulator acc[fragments_m][fragments_n];
#pragma unroll
  for (int i = 0; i < fragments_m; ++i)
#pragma unroll
    for (int j = 0; j < fragments_n; ++j) wmma::fill_fragment(acc[i][j], 0.0f);

  // EXCERPT BEGIN k_loop
  const int k_steps = int(ceil_div(p.k, fragment_size));
  for (int s = 0; s < k_steps; ++s) {
    const int k0 = s * fragment_size;
    FragmentA a[fragments_m];  // this slice's column of A fragments
    FragmentB b[fragments_n];  // and row of B fragments
    // LAB BEGIN warp_tile_products
    // Load the slice's fragments, all of them before the first product so that their loads are
    // in flight together: a column of A fragments, each of which serves fragments_n products, and
    // a row of B fragments, each serving fragments_m. Slices that lie wholly inside the matrices
    // (all but the edges) load straight from global memory without per-fragment edge tests. This
    // special case keeps load_fragment()'s tests, its staging and its __syncwarp at the edges, out of
    // the loop that every interior slice runs.
    const bool interior =
        a_direct && b_direct && row + warp_tile_m <= p.m && col + warp_tile_n <= p.n && k0 + fragment_size <= p.k;
    if (interior) {
#pragma unroll
      for (int i = 0; i < fragments_m; ++i)
        wmma::load_matrix_sync(a[i], p.a + (row + i * fragment_size) * p.lda + k0, p.lda);
#pragma unroll
      for (int j = 0; j < fragments_n; ++j)
        wmma::load_matrix_sync(b[j], p.b + k0 * (long long)p.ldb + col + j * fragment_size, p.ldb);
    } else {
#pragma unroll
      for (int i = 0; i < fragments_m; ++i) {
        const long long r = row + i * fragment_size;
        load_fragment(a[i], p.a + r * p.lda + k0, p.lda, p.m - r, p.k - k0, a_direct, a_staging[warp]);
      }
#pragma unroll
      for (int j = 0; j < fragments_n; ++j) {
        const long long c = col + j * fragment_size;
        load_fragment(b[j], p.b + k0 * (long long)p.ldb + c, p.ldb, p.k - k0, p.n - c, b_direct, b_staging[warp]);
      }
    }
    // Compute: every pair (A fragment, B fragment) into its accumulator.
#pragma unroll
    for (int i = 0; i < fragments_m; ++i)
#pragma unroll
      for (int j = 0; j < fragments_n; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    // LAB END
  }
  // EXCERPT END k_loop

  // Write back every accumulator, with alpha and beta.
#pragma unroll
  for (int i = 0; i < fragments_m; ++i)
#pragma unroll
    for (int j = 0; j < fragments_n; ++j) {
      const long long r = row + i * fragment_size, c = col + j * fragment_size;
      if (r < p.m && c < p.n)
        store_accumulator(acc[i][j], p.c + r * p.ldc + c, p.ldc, p.m - r, p.n - c, p.alpha, p.beta, c_staging[warp]);
    }
#endif
}

// 128 × 128 tile of C per block, 4 warps in 2 × 2, each warp 64 × 64 (4 × 4 accumulators,
// 128 of its registers per thread).
constexpr int block_tile_m = 128, block_tile_n = 128, warp_tile_m = 64, warp_tile_n = 64;

void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  constexpr int threads = (block_tile_m / warp_tile_m) * (block_tile_n / warp_tile_n) * 32;
  multiwarp_wmma_gemm<block_tile_m, block_tile_n, warp_tile_m, warp_tile_n>
      <<<tile_grid({p.m, p.n, p.k}, block_tile_m, block_tile_n), threads, 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

// Fragments come from global memory per warp, so the fetch is shared by one warp tile.
WORKLOG_REGISTER_STEP(Step<__half>{"06_multiwarp_wmma", launch}
                          .adds("4 warps, 64x64 warp tiles: fragment reuse")
                          .reuses_tile(warp_tile_m, warp_tile_n)
                          .needs_compute_capability(70))

}  // namespace worklog
