// Asynchronous copies from global to shared memory (cp.async, sm_80 and newer), one PTX instruction
// per wrapper, and the chunk copy that steps 07 and 08 build their tile loads from.
//
// A plain load (LDG) puts its data in a register, and the thread stalls at the first instruction
// that needs that register; to move data to shared memory it must then store it (STS), so the load
// has to complete before the store can issue. cp.async (LDGSTS in the SASS) writes shared memory
// directly and the issuing thread does not wait: the copy stays in flight while the thread goes on
// multiplying. The thread groups its copies (commit_group) and later waits until at most N of its
// groups are still in flight (wait_group N). A copy is visible to *other* threads only after the
// issuing thread's wait_group and a barrier that both reach.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernel_utils.cuh"  // shared_address

namespace worklog::async_copy {

// Starts a copy of 16 bytes to shared `dst` of which the first `src_bytes` (0 … 16) come from global
// `src`, both 16-byte aligned, and the rest are zeros: that is the src-size operand, the number of
// bytes read. `src` must be a valid global address even when src_bytes is 0, so callers pass a
// clamped one for chunks outside the matrix.
// .cg caches in L2 only: tiles pass through shared memory, so L1 would hold them for nothing.
__device__ __forceinline__ void copy_16_bytes_zero_fill(void* dst, const void* src, int src_bytes) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(shared_address(dst)),
               "l"(__cvta_generic_to_global(src)), "r"(src_bytes)
               : "memory");
#else
  __trap();  // not reached: steps that use cp.async register min_compute_capability 80
#endif
}

// Closes the group of copies this thread started since the previous commit (possibly none: an
// empty group completes at once, which keeps the group count the same on every iteration).
__device__ __forceinline__ void commit_group() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.commit_group;\n" ::: "memory");
#else
  __trap();
#endif
}

// Waits until at most `pending` of this thread's committed groups are still in flight. Groups
// complete in the order they were committed.
template <int pending>
__device__ __forceinline__ void wait_group() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile("cp.async.wait_group %0;\n" ::"n"(pending) : "memory");
#else
  __trap();
#endif
}

// The 8 halves at `src` as one 16-byte value, each half e read only when first <= e < end and +0.0
// otherwise: for chunks that cross the end of a row or of a matrix, where 16-byte reads are not allowed.
__device__ __forceinline__ uint4 masked_8_halves(const __half* src, int first, int end) {
  unsigned short h[8];
#pragma unroll
  for (int e = 0; e < 8; ++e) h[e] = e >= first && e < end ? __half_as_ushort(src[e]) : 0;  // 0x0000 is +0.0
  return make_uint4(h[0] | unsigned(h[1]) << 16, h[2] | unsigned(h[3]) << 16, h[4] | unsigned(h[5]) << 16,
                    h[6] | unsigned(h[7]) << 16);
}

// Copies one 16-byte chunk of a tile, 8 halves starting at `src`, of which the first `valid` lie
// inside the matrix (valid <= 0: none), into `dst` in shared memory, zeros for the rest.
//   aligned: the matrix's rows start on 16-byte boundaries (base and leading dimension) and their
//     lengths are multiples of 8 halves, so a chunk is wholly inside (valid >= 8) or wholly outside
//     (valid <= 0): one cp.async, with zero fill outside, reading from `fallback` (any valid
//     address) instead of past the edge. (A row whose length is no multiple of 8 would end inside a
//     chunk whose 16 bytes may reach past the allocation: such matrices take the other path.)
//   otherwise: 16-byte reads are not allowed, so the thread reads the halves one by one, each only
//     if it is inside, and stores the 16 bytes itself: correct for any shape, but synchronous.
template <bool aligned>
__device__ __forceinline__ void copy_chunk(__half* dst, const __half* src, int valid, const __half* fallback) {
  if constexpr (aligned) {
    copy_16_bytes_zero_fill(dst, valid > 0 ? src : fallback, valid > 0 ? 16 : 0);
  } else {
    *reinterpret_cast<uint4*>(dst) = masked_8_halves(src, 0, valid);
  }
}

// True when the tiles of A (K halves a row, rows lda apart) and B (N halves, ldb apart) can move by
// cp.async in whole 16-byte chunks (copy_chunk<true>): K, N, lda and ldb multiples of 8, and both
// matrices 16-byte aligned.
inline bool rows_16_byte_aligned(long long k, long long n, long long lda, long long ldb, const void* a, const void* b) {
  return k % 8 == 0 && n % 8 == 0 && lda % 8 == 0 && ldb % 8 == 0 && reinterpret_cast<std::uintptr_t>(a) % 16 == 0 &&
         reinterpret_cast<std::uintptr_t>(b) % 16 == 0;
}

}  // namespace worklog::async_copy
