// How the swap kernel (swap_kernel.cuh) writes C through shared memory (part of step 14's idea: C of any alignment at
// full speed): at width 256 with many tiles a block, for C whose rows are not 16-byte aligned (launch_swapped_at picks
// it). Straight from the accumulators (store_transposed), a warp's store is 4 rows × 8 floats of C: 32 bytes a row, in
// two sectors wherever a row starts off a 32-byte boundary, so 8 sectors for 128 bytes. Here each group of 8 rows goes
// into shared memory first, as rows of C; then a warp stores 32 consecutive floats of one row per instruction: 128
// bytes in at most 5 sectors.
#pragma once

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"

namespace worklog::swap_ab {

// Writes one consumer's accumulators v (store_transposed says which element lies where in C) into C
// for a kernel of layout L (swap_kernel.cuh's Layout with shared_c), group by group, through `rows`: two
// buffers of L::group_floats. Two buffers need one barrier a group: a thread writes a buffer only
// after every thread has passed the barrier that follows its reads of it. Every thread of the
// consumer calls it, with the consumer's named barrier.
template <class L>
__device__ __forceinline__ void store_through_shared(const float (&v)[L::accumulators], float* rows, int barrier,
                                                     const GemmProblem<__half>& p, long long row0, long long col0) {
  constexpr int rows_per_warp = 8 / L::warps_per_consumer;
  const int t = threadIdx.x % hopper::warpgroup_threads, warp = t / 32, lane = t % 32;
  if (col0 >= p.n) return;  // the same for the whole consumer: none of its columns lies in C
  hopper::named_barrier_sync<hopper::warpgroup_threads>(barrier);  // the previous call's reads are done
#pragma unroll
  for (int jj = 0; jj < L::groups; ++jj) {
    if (row0 + jj * 8 >= p.m) break;  // the same for the whole consumer: the rest lies below C
    float* group = rows + jj % 2 * L::group_floats;
    // Element i = 2·half + e of group jj: row 2(lane % 4) + e, column 16·warp + lane / 4 + 8·half.
#pragma unroll
    for (int i = 0; i < 4; ++i)
      group[(2 * (lane % 4) + i % 2) * L::row_pitch + warp * 16 + lane / 4 + i / 2 * 8] = v[4 * jj + i];
    hopper::named_barrier_sync<hopper::warpgroup_threads>(barrier);
    float x[rows_per_warp][2];  // every load first, then every store: one wait for shared memory, not four
#pragma unroll
    for (int r = 0; r < rows_per_warp; ++r)
#pragma unroll
      for (int h = 0; h < 2; ++h) x[r][h] = group[(warp + r * L::warps_per_consumer) * L::row_pitch + h * 32 + lane];
#pragma unroll
    for (int r = 0; r < rows_per_warp; ++r) {
      const long long row = row0 + jj * 8 + warp + r * L::warps_per_consumer;
#pragma unroll
      for (int h = 0; h < 2; ++h)
        if (row < p.m && col0 + h * 32 + lane < p.n)
          store_c(p.c + row * p.ldc + col0 + h * 32 + lane, x[r][h], p.alpha, p.beta);
    }
  }
}

}  // namespace worklog::swap_ab
