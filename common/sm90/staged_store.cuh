// The staged write-back of C that the Hopper kernels over a schedule share (stream_k_kernel.cuh):
// alpha·acc + beta·C goes into a swizzled 64 × 32 buffer in shared memory with ordinary stores, and
// one thread hands the buffer to the copy engine (TMA store), which writes only what lies inside C.
// 10's kernel writes its tiles this way in one loop; here one chunk is one call, so that a fixup can
// write a tile in pieces. A layout L gives c_chunk_cols, c_chunk_bytes, c_buffers, chunks and
// accumulators (stream_k_kernel.cuh's Layout).
#pragma once

#include <cuda_fp16.h>

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "swizzle.hpp"

namespace worklog::stream_k {

using namespace hopper;

// Writes one 64 × 32 chunk of C's values, alpha·v + beta·C (rows row0 … +63, columns col0 … +31),
// into a swizzled staging buffer. v is in wgmma's accumulator layout for 4 groups of 8 columns: warp
// w of the warpgroup holds rows 16w … 16w+15; in group jj, lane l holds columns 8jj + 2(l % 4) + {0,
// 1} of row 16w + l/4 (v[4jj], v[4jj+1]) and of the row 8 below (v[4jj+2], v[4jj+3]). reads_c
// (beta ≠ 0) is a template parameter so that the usual beta = 0 pays nothing for C: no 64-bit
// addresses, bounds or predicated loads, only the products and the stores into the buffer.
template <class L, bool reads_c>
__device__ __forceinline__ void stage_chunk(const float (&v)[16], const GemmProblem<__half>& p, unsigned char* buffer,
                                            long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
#pragma unroll
  for (int jj = 0; jj < L::c_chunk_cols / 8; ++jj) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const int row = warp * 16 + lane / 4 + half * 8, col = jj * 8 + 2 * (lane % 4);
      float2 value = make_float2(p.alpha * v[4 * jj + 2 * half], p.alpha * v[4 * jj + 2 * half + 1]);
      if constexpr (reads_c) {
        const long long c_row = row0 + row, c_col = col0 + col;
        if (c_row < p.m && c_col < p.n) {  // N a multiple of 4 on this path: c_col + 1 < N too
          const float2 old = *reinterpret_cast<const float2*>(p.c + c_row * p.ldc + c_col);
          value.x += p.beta * old.x;
          value.y += p.beta * old.y;
        }
      }
      // The 128-byte swizzle TMA expects (hopper.cuh): 16-byte chunk k of row r at chunk k ^ (r % 8).
      const int byte = col * 4;
      const int swizzled = swizzled_chunk(row, byte / 16, swizzle_bytes / 16) * 16 + byte % 16;
      *reinterpret_cast<float2*>(buffer + row * swizzle_bytes + swizzled) = value;
    }
  }
}

// The staged write-back of one 64 × 32 chunk of C (rows row0 … +63, columns col0 … +31): alpha·v +
// beta·C (beta == 0: C is not read). The chunk goes into one of the warpgroup's c_buffers swizzled
// buffers with ordinary stores, then one thread hands it to the copy engine (TMA store), which
// writes only what lies inside C. The warpgroup does not wait for the global writes: they drain
// while it goes on. A buffer is reused only once the store issued from it c_buffers chunks earlier
// has finished reading it (`stored` counts the chunks).
template <class L>
__device__ __forceinline__ void store_chunk_staged(const float (&v)[16], const GemmProblem<__half>& p,
                                                   const CUtensorMap& c_map, unsigned char* buffers, unsigned& stored,
                                                   int warpgroup_barrier, long long row0, long long col0) {
  const bool elected = threadIdx.x % warpgroup_threads == 0;
  unsigned char* buffer = buffers + (stored % L::c_buffers) * L::c_chunk_bytes;
  if (elected) bulk_store_wait_read<L::c_buffers - 1>();
  named_barrier_sync<warpgroup_threads>(warpgroup_barrier);  // the buffer is free for every thread
  // Two copies of the loop, one per case, chosen once per chunk (10's compiler made the same split
  // by itself in its loop over the chunks of a tile; this function, called per chunk, it kept whole,
  // with a load of C to predicate off for each of the thread's 8 pairs of values).
  if (p.beta != 0.0f)
    stage_chunk<L, true>(v, p, buffer, row0, col0);
  else
    stage_chunk<L, false>(v, p, buffer, row0, col0);
  fence_proxy_async_shared();  // these ordinary stores, then the copy engine reads them
  named_barrier_sync<warpgroup_threads>(warpgroup_barrier);
  if (elected) {
    tma_store_2d(c_map, buffer, int(col0), int(row0));
    bulk_store_commit();
  }
  ++stored;
}

// One consumer's whole 64 × block_tile_n result (rows row0 … +63, from column col0), chunk by chunk.
template <class L>
__device__ __forceinline__ void store_accumulators_staged(const float (&acc)[L::accumulators],
                                                          const GemmProblem<__half>& p, const CUtensorMap& c_map,
                                                          unsigned char* buffers, unsigned& stored, int consumer,
                                                          long long row0, long long col0) {
#pragma unroll
  for (int chunk = 0; chunk < L::chunks; ++chunk) {
    float v[16];
#pragma unroll
    for (int i = 0; i < 16; ++i) v[i] = acc[16 * chunk + i];
    store_chunk_staged<L>(v, p, c_map, buffers, stored, 1 + consumer, row0, col0 + chunk * L::c_chunk_cols);
  }
}

}  // namespace worklog::stream_k
