// Moving 16 × 16 WMMA fragments between global memory and registers, for any M, N, K.
//
// wmma::load_matrix_sync and store_matrix_sync need a full 16 × 16 tile in memory, a leading
// dimension that is a multiple of 16 bytes and a 32-byte-aligned pointer. Inside the matrices, with
// K and N multiples of 8, fragments come straight from global memory. A tile that sticks out past
// an edge, or one whose rows are not aligned, is first copied by the warp into a zero-padded
// 16 × 16 staging buffer in shared memory, and the fragment is loaded from there.
// Used by steps 05 and 06.
#pragma once

#include <cuda_fp16.h>
#include <mma.h>

#include "kernel_utils.cuh"

namespace worklog::wmma_tiles {

namespace wmma = nvcuda::wmma;
constexpr int fragment_size = 16;  // m16n16k16: the one FP16 shape WMMA has on every GPU since sm_70
constexpr int fragment_elements = fragment_size * fragment_size;

using FragmentA = wmma::fragment<wmma::matrix_a, 16, 16, 16, __half, wmma::row_major>;
using FragmentB = wmma::fragment<wmma::matrix_b, 16, 16, 16, __half, wmma::row_major>;
using Accumulator = wmma::fragment<wmma::accumulator, 16, 16, 16, float>;

// Loads the 16 × 16 tile at `src` (leading dimension ld) of which `rows_left` rows and `cols_left`
// columns lie inside the matrix. `direct` says that the matrix's rows are aligned for WMMA (ld a
// multiple of 8 halves); `staging` is this warp's own 16 × 16 buffer in shared memory.
template <class Fragment>
__device__ void load_fragment(Fragment& fragment, const __half* src, long long ld, long long rows_left,
                              long long cols_left, bool direct, __half* staging) {
  if (direct && rows_left >= fragment_size && cols_left >= fragment_size) {
    wmma::load_matrix_sync(fragment, src, unsigned(ld));
    return;
  }
  const int lane = threadIdx.x % 32;
  for (int e = lane; e < fragment_elements; e += 32) {
    const int r = e / fragment_size, c = e % fragment_size;
    staging[e] = (r < rows_left && c < cols_left) ? src[r * ld + c] : __float2half(0.0f);
  }
  __syncwarp();  // the whole tile is staged before any lane loads it
  wmma::load_matrix_sync(fragment, staging, fragment_size);
  __syncwarp();  // every lane has loaded before the next call overwrites the buffer
}

// C tile ← alpha·accumulator + beta·C tile, for the `rows_left` × `cols_left` part inside C.
// The accumulator's element-to-lane mapping is unspecified, so it goes through the warp's
// 16 × 16 float staging buffer, and each lane then finishes a fixed set of elements; with
// beta == 0, C is not read.
__device__ inline void store_accumulator(const Accumulator& acc, float* dst, long long ldc, long long rows_left,
                                         long long cols_left, float alpha, float beta, float* staging) {
  wmma::store_matrix_sync(staging, acc, fragment_size, wmma::mem_row_major);
  __syncwarp();
  const int lane = threadIdx.x % 32;
  for (int e = lane; e < fragment_elements; e += 32) {
    const int r = e / fragment_size, c = e % fragment_size;
    if (r < rows_left && c < cols_left) store_c(dst + r * ldc + c, staging[e], alpha, beta);
  }
  __syncwarp();
}

}  // namespace worklog::wmma_tiles
