// A route of the Hopper library, step 15's pass over A (tile_per_shape.hpp: Route::pass_over_a): few columns
// of C, K split over the GPU. Compiled in tile_per_shape.cu; docs/routes.md measures it.
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernel_utils.cuh"
#include "sm90/part_counter.cuh"  // last_part_in: the parts' counters hold the launch's epoch
#include "step.hpp"

namespace worklog {
namespace {

// ---- Few columns: one pass over A, K split over the GPU --------------------------------------------
// With N ≤ thin_max_n every tile of the menu is mostly columns that do not exist, and with M and N
// both small (a dot product, a GEMV by a few vectors) there are too few tiles to keep the SMs busy
// however small the tile. The work is then a pass over A (M × K) and B's few columns: a block takes
// one row of A and one part of K, its threads stride over that part (A's row read once, B's few
// columns from L2), and add up N sums. Enough parts in K for every SM to have blocks; the block that
// finishes a row's last part adds the parts' sums in the order of k (11's epochs: nothing to reset),
// so the result is the same bits in every run. Any alignment: the loads are scalar.
struct Thin {
  static constexpr int max_n = 8;                      // columns of C at most: one sum per column in each thread
  static constexpr int threads = 256;                  // per block, striding over the block's part of K
  static constexpr int blocks_per_sm = 8;              // blocks the parts aim for: enough loads in flight per SM
  static constexpr int min_part_k = 512;               // elements of K per part at least: two a thread, worth the sums
  static constexpr long long max_rows_by_cols = 2048;  // M·N at most, for 2 to 8 columns (thin())
};
static_assert(Thin::threads % 32 == 0 && Thin::threads / 32 <= 32, "Thin::threads must be whole warps, at most 32");

struct ThinPlan {
  int parts;         // parts of K per row
  long long part_k;  // elements of K per part (the last one fewer)
  std::size_t partial_bytes, counter_bytes;
};
ThinPlan plan_thin(Shape s, int sms) {
  ThinPlan plan{};
  const long long want = ceil_div((long long)sms * Thin::blocks_per_sm, s.m);  // parts per row for the GPU
  const long long most = std::max<long long>(1, s.k / Thin::min_part_k);
  plan.parts = int(std::max<long long>(1, std::min(want, most)));
  plan.part_k = ceil_div(ceil_div(s.k, plan.parts), 8) * 8;  // whole 16-byte chunks of A per part
  plan.parts = int(ceil_div(s.k, plan.part_k));
  plan.partial_bytes = plan.parts > 1 ? std::size_t(s.m) * plan.parts * Thin::max_n * sizeof(float) : 0;
  plan.counter_bytes = plan.parts > 1 ? std::size_t(s.m) * sizeof(unsigned long long) : 0;
  return plan;
}

// The sum of every thread's v, the same bits in every run: each warp's by shuffles in a fixed tree,
// then the warps' in order. Every thread of the block calls it; every thread gets the sum.
__device__ __forceinline__ float block_sum(float v, float (&scratch)[Thin::threads / 32]) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < Thin::threads / 32; ++w) total += scratch[w];
  __syncthreads();  // scratch is free again
  return total;
}

// vector_a (N = 1 only): A's rows start on 16 bytes and K is a multiple of 8, so each thread loads 8
// halves of A at a time (16-byte loads keep enough bytes in flight for DRAM); vector_b: B is one
// contiguous column (ldb = 1), loaded alike. Otherwise each element by itself: consecutive threads
// read consecutive k, so B's rows too are read in order (with 16-byte loads of A a thread would take
// 8 rows of B, and a warp's load would touch 32 lines).
template <bool vector_a, bool vector_b>
__global__ void __launch_bounds__(Thin::threads)
    thin_gemm(const __grid_constant__ GemmProblem<__half> p, long long part_k, float* partials,
              unsigned long long* counters, unsigned epoch) {
  // Rows along y, then z (a grid's y holds at most 65535); parts of K along x.
  const long long row = (long long)blockIdx.z * gridDim.y + blockIdx.y;
  const int part = blockIdx.x, parts = gridDim.x;
  if (row >= p.m) return;  // the last z-slab's spare rows: the whole block, before any barrier
  const long long k0 = part * part_k, k1 = k0 + part_k < p.k ? k0 + part_k : p.k;
  const __half* a = p.a + (long long)row * p.lda;
  float sum[Thin::max_n] = {};
  if constexpr (vector_a) {
    for (long long k = k0 + 8 * threadIdx.x; k < k1; k += 8 * Thin::threads) {
      const uint4 a_chunk = *reinterpret_cast<const uint4*>(a + k);
      const __half* x = reinterpret_cast<const __half*>(&a_chunk);
      if constexpr (vector_b) {
        const uint4 b_chunk = *reinterpret_cast<const uint4*>(p.b + k);
        const __half* y = reinterpret_cast<const __half*>(&b_chunk);
#pragma unroll
        for (int i = 0; i < 8; ++i) sum[0] += __half2float(x[i]) * __half2float(y[i]);
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const __half* b = p.b + (k + i) * p.ldb;
#pragma unroll
          for (int j = 0; j < Thin::max_n; ++j)
            if (j < p.n) sum[j] += __half2float(x[i]) * __half2float(b[j]);
        }
      }
    }
  } else {
    for (long long k = k0 + threadIdx.x; k < k1; k += Thin::threads) {
      const float x = __half2float(a[k]);
      const __half* b = p.b + k * p.ldb;
#pragma unroll
      for (int j = 0; j < Thin::max_n; ++j)
        if (j < p.n) sum[j] += x * __half2float(b[j]);
    }
  }
  // The block's sum of each column, in a fixed order (block_sum): thread 0 holds it.
  __shared__ float scratch[Thin::threads / 32];
  float total[Thin::max_n];
#pragma unroll
  for (int j = 0; j < Thin::max_n; ++j) total[j] = j < p.n ? block_sum(sum[j], scratch) : 0.0f;
  auto store = [&](int j, float value) {
    float* c = p.c + row * p.ldc + j;
    *c = p.beta != 0.0f ? p.alpha * value + p.beta * *c : p.alpha * value;
  };
  if (parts == 1) {
    if (threadIdx.x == 0)
      for (int j = 0; j < p.n; ++j) store(j, total[j]);
    return;
  }
  float* mine = partials + (row * parts + part) * Thin::max_n;
  if (threadIdx.x == 0)
    for (int j = 0; j < p.n; ++j) __stcg(mine + j, total[j]);
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = stream_k::last_part_in(counters + row, epoch, parts);
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The last block adds the parts: thread t parts t, t + threads, … in order, then block_sum.
  for (int j = 0; j < p.n; ++j) {
    float v = 0.0f;
    for (int q = threadIdx.x; q < parts; q += Thin::threads)
      v += __ldcg(partials + (row * parts + q) * Thin::max_n + j);
    v = block_sum(v, scratch);
    if (threadIdx.x == 0) store(j, v);
  }
}

// The shapes the pass over A takes: one column, or few columns of few rows. With many rows and 2 to
// 8 columns a thread's scalar loads of A keep too few bytes in flight, and 13's and 14's tiles, wasteful
// as they are, run faster (docs/routes.md: measured).
bool thin(Shape s) { return s.n == 1 || (s.n <= Thin::max_n && (long long)s.m * s.n <= Thin::max_rows_by_cols); }

std::size_t thin_workspace_bytes(Shape shape) {
  const ThinPlan plan = plan_thin(shape, multiprocessor_count());
  return plan.partial_bytes + plan.counter_bytes;
}

void launch_thin(const GemmProblem<__half>& p, cudaStream_t stream) {
  const ThinPlan plan = plan_thin(shape_of(p), multiprocessor_count());
  float* partials = nullptr;
  unsigned long long* counters = nullptr;
  unsigned epoch = 0;
  if (plan.parts > 1) {
    if (!p.workspace || p.workspace_bytes < plan.partial_bytes + plan.counter_bytes)
      throw std::runtime_error("15_tile_per_shape: the few-columns path needs " +
                               std::to_string(plan.partial_bytes + plan.counter_bytes) + " bytes of workspace");
    partials = static_cast<float*>(p.workspace);
    counters = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(p.workspace) + plan.partial_bytes);
    epoch = stream_k::next_epoch();
  }
  const unsigned rows_y = unsigned(std::min(p.m, 65535));
  const dim3 grid(unsigned(plan.parts), rows_y, unsigned(ceil_div(p.m, rows_y)));
  const bool vector_a = p.n == 1 && is_aligned(p.a, 16) && p.lda % 8 == 0 && p.k % 8 == 0;
  const bool vector_b = vector_a && p.n == 1 && p.ldb == 1 && is_aligned(p.b, 16);
  if (vector_b)
    thin_gemm<true, true><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  else if (vector_a)
    thin_gemm<true, false><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  else
    thin_gemm<false, false><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace
}  // namespace worklog
