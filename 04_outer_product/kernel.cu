// Step 04 — register outer products.
//
// Adds to 03: each k of a slice, a thread loads a column piece of A (stored transposed) and a row
// piece of B into registers with 16-byte loads and adds their outer product to its accumulators;
// two shared buffers let the next slice arrive while this one is multiplied.
// Why it helps: an 8 × 8 patch costs 4 LDS.128 per 64 FMAs, and 128 × 128 block tiles halve the
// global traffic again.
//
// Run: build/bin/04_outer_product --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include <cstdint>

#include "kernel_utils.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// Reads 4 consecutive floats of which the first `valid` lie inside the matrix, zeros for the rest.
// One 16-byte load when allowed (src 16-byte aligned, all four inside); element by element at the
// edges and when the row length is not a multiple of 4.
template <bool vector_loads>
__device__ __forceinline__ float4 load_float4(const float* src, long long valid) {
  if (vector_loads && valid >= 4) return *reinterpret_cast<const float4*>(src);
  float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
  if (valid > 0) v.x = src[0];
  if (valid > 1) v.y = src[1];
  if (valid > 2) v.z = src[2];
  if (valid > 3) v.w = src[3];
  return v;
}

// The thread's patch of C is made of groups of 4 consecutive rows (columns), one float4 each,
// spaced `group stride` apart: thread ty owns rows ty·4 + g·threads_y·4 + {0..3}. Neighbouring
// threads thus read neighbouring float4s of a shared-memory row: conflict-free LDS.128.
template <int block_tile_m, int block_tile_n, int block_tile_k, int thread_tile_m, int thread_tile_n, bool vector_loads>
__global__ void __launch_bounds__((block_tile_m / thread_tile_m) * (block_tile_n / thread_tile_n), 2)
    outer_product_gemm(GemmProblem<float> p) {
  constexpr int threads_y = block_tile_m / thread_tile_m;
  constexpr int threads_x = block_tile_n / thread_tile_n;
  constexpr int threads = threads_x * threads_y;
  constexpr int a_pieces = block_tile_m * block_tile_k / 4 / threads;  // float4s of A each thread loads per slice
  constexpr int b_pieces = block_tile_k * block_tile_n / 4 / threads;  // and of B
  // Padding each k-row of the transposed A tile by 4 floats shifts the banks of consecutive rows,
  // so the transposing stores below are conflict-free, and keeps rows 16-byte aligned.
  constexpr int a_row_pitch = block_tile_m + 4;
  static_assert(thread_tile_m % 4 == 0, "thread_tile_m must be a multiple of 4 (float4 groups)");
  static_assert(thread_tile_n % 4 == 0, "thread_tile_n must be a multiple of 4 (float4 groups)");
  static_assert(block_tile_m % thread_tile_m == 0, "block_tile_m must be a multiple of thread_tile_m");
  static_assert(block_tile_n % thread_tile_n == 0, "block_tile_n must be a multiple of thread_tile_n");
  static_assert(block_tile_k % 4 == 0, "block_tile_k must be a multiple of 4 (float4 loads of A)");
  static_assert(threads % 32 == 0 && threads <= 1024,
                "thread count (block tile / thread tile) must be whole warps, <= 1024");
  static_assert(a_pieces >= 1 && a_pieces * 4 * threads == block_tile_m * block_tile_k,
                "block_tile_m * block_tile_k must be a multiple of 4 * thread count");
  static_assert(b_pieces >= 1 && b_pieces * 4 * threads == block_tile_k * block_tile_n,
                "block_tile_k * block_tile_n must be a multiple of 4 * thread count");

  __shared__ __align__(16) float a_tile[2][block_tile_k][a_row_pitch];   // a_tile[buf][i][r] = A[row0 + r][k0 + i]
  __shared__ __align__(16) float b_tile[2][block_tile_k][block_tile_n];  // b_tile[buf][i][c] = B[k0 + i][col0 + c]

  const TileOrigin origin = block_tile_origin(p.n, block_tile_m, block_tile_n);
  const int tid = threadIdx.x;
  const int ty = tid / threads_x, tx = tid % threads_x;
  const long long rows_left = p.m - origin.row, cols_left = p.n - origin.col;
  const float* a = p.a + origin.row * p.lda;
  const float* b = p.b + origin.col;

  // Stage 1, load a slice from global memory into registers. Piece e of A is 4 consecutive k of
  // row e / (block_tile_k / 4); piece e of B is 4 consecutive columns of row e / (block_tile_n / 4).
  float4 a_staged[a_pieces], b_staged[b_pieces];
  auto load_slice = [&](int k0) {
    const long long k_left = p.k - k0;
#pragma unroll
    for (int j = 0; j < a_pieces; ++j) {
      const int e = tid + j * threads;
      const int r = e / (block_tile_k / 4), i = (e % (block_tile_k / 4)) * 4;
      a_staged[j] = load_float4<vector_loads>(a + r * (long long)p.lda + k0 + i, r < rows_left ? k_left - i : 0);
    }
#pragma unroll
    for (int j = 0; j < b_pieces; ++j) {
      const int e = tid + j * threads;
      const int i = e / (block_tile_n / 4), c = (e % (block_tile_n / 4)) * 4;
      b_staged[j] = load_float4<vector_loads>(b + (k0 + i) * (long long)p.ldb + c, i < k_left ? cols_left - c : 0);
    }
  };

  // Stage 2, store the staged slice into shared buffer `buf`, transposing A.
  auto store_slice = [&](int buf) {
#pragma unroll
    for (int j = 0; j < a_pieces; ++j) {
      const int e = tid + j * threads;
      const int r = e / (block_tile_k / 4), i = (e % (block_tile_k / 4)) * 4;
      a_tile[buf][i + 0][r] = a_staged[j].x;
      a_tile[buf][i + 1][r] = a_staged[j].y;
      a_tile[buf][i + 2][r] = a_staged[j].z;
      a_tile[buf][i + 3][r] = a_staged[j].w;
    }
#pragma unroll
    for (int j = 0; j < b_pieces; ++j) {
      const int e = tid + j * threads;
      const int i = e / (block_tile_n / 4), c = (e % (block_tile_n / 4)) * 4;
      *reinterpret_cast<float4*>(&b_tile[buf][i][c]) = b_staged[j];
    }
  };

  // Stage 3, multiply the slice in buffer `buf`: for each k, one column piece of A and one row
  // piece of B into registers, then their outer product into the accumulators.
  float acc[thread_tile_m][thread_tile_n] = {};
  // EXCERPT BEGIN outer_product
  auto multiply_slice = [&](int buf) {
  // LAB BEGIN outer_product
#pragma unroll
    for (int i = 0; i < block_tile_k; ++i) {
      float a_col[thread_tile_m], b_row[thread_tile_n];
#pragma unroll
      for (int g = 0; g < thread_tile_m / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&a_tile[buf][i][(g * threads_y + ty) * 4]);
        a_col[g * 4 + 0] = v.x, a_col[g * 4 + 1] = v.y, a_col[g * 4 + 2] = v.z, a_col[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int g = 0; g < thread_tile_n / 4; ++g) {
        const float4 v = *reinterpret_cast<const float4*>(&b_tile[buf][i][(g * threads_x + tx) * 4]);
        b_row[g * 4 + 0] = v.x, b_row[g * 4 + 1] = v.y, b_row[g * 4 + 2] = v.z, b_row[g * 4 + 3] = v.w;
      }
#pragma unroll
      for (int y = 0; y < thread_tile_m; ++y)
#pragma unroll
        for (int x = 0; x < thread_tile_n; ++x) acc[y][x] += a_col[y] * b_row[x];
    }
    // LAB END
  };
  // EXCERPT END outer_product

  // Main loop, double-buffered: slice t+1 travels from global memory while slice t is multiplied.
  // One barrier per slice is enough: a thread that runs ahead writes the other buffer, which every
  // thread finished reading before the previous barrier.
  const int k_tiles = int(ceil_div(p.k, block_tile_k));
  load_slice(0);
  store_slice(0);
  __syncthreads();
  for (int t = 0; t < k_tiles; ++t) {
    const bool more = t + 1 < k_tiles;
    if (more) load_slice((t + 1) * block_tile_k);
    multiply_slice(t % 2);
    if (more) store_slice((t + 1) % 2);
    __syncthreads();
  }

  // Write back the patch, skipping what lies outside C.
#pragma unroll
  for (int y = 0; y < thread_tile_m; ++y)
#pragma unroll
    for (int x = 0; x < thread_tile_n; ++x) {
      const int r = ((y / 4) * threads_y + ty) * 4 + y % 4;
      const int c = ((x / 4) * threads_x + tx) * 4 + x % 4;
      if (r < rows_left && c < cols_left)
        store_c(p.c + (origin.row + r) * p.ldc + origin.col + c, acc[y][x], p.alpha, p.beta);
    }
}

// 128 × 128 tile of C per block, K in slices of 8, an 8 × 8 patch per thread: 256 threads,
// 64 accumulators each, 2 × (8 × 132 + 8 × 128) × 4 B = 16.3 KiB of shared memory per block.
constexpr int block_tile_m = 128, block_tile_n = 128, block_tile_k = 8;
constexpr int thread_tile_m = 8, thread_tile_n = 8;

template <bool vector_loads>
void launch_variant(const GemmProblem<float>& p, cudaStream_t stream) {
  constexpr int threads = (block_tile_m / thread_tile_m) * (block_tile_n / thread_tile_n);
  outer_product_gemm<block_tile_m, block_tile_n, block_tile_k, thread_tile_m, thread_tile_n, vector_loads>
      <<<tile_grid({p.m, p.n, p.k}, block_tile_m, block_tile_n), threads, 0, stream>>>(p);
  WORKLOG_CHECK_LAUNCH();
}

void launch(const GemmProblem<float>& p, cudaStream_t stream) {
  // 16-byte loads need every row of A and B to start on a 16-byte boundary: the bases, and the leading
  // dimensions a multiple of 4 floats.
  const bool aligned = p.lda % 4 == 0 && p.ldb % 4 == 0 && reinterpret_cast<std::uintptr_t>(p.a) % 16 == 0 &&
                       reinterpret_cast<std::uintptr_t>(p.b) % 16 == 0;
  if (aligned)
    launch_variant<true>(p, stream);
  else
    launch_variant<false>(p, stream);
}

}  // namespace

WORKLOG_REGISTER_STEP(Step<float>{"04_outer_product", launch}
                          .adds("register outer products, float4 loads")
                          .reuses_tile(block_tile_m, block_tile_n))

}  // namespace worklog
