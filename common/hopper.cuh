// Hopper (sm_90a) building blocks shared by steps 09 and 10: one small wrapper per PTX
// instruction, named after what it does. Three families:
//   - mbarriers: shared-memory barriers that count arrivals *and* bytes delivered by the copy engine;
//   - the tensor memory accelerator (TMA): one thread copies a whole 2-D tile between global and
//     shared memory, described by a CUtensorMap (tensor_map.hpp builds it on the host);
//   - warpgroup MMA (wgmma): 4 warps multiply operands read straight from shared memory, described by
//     64-bit matrix descriptors, into accumulators held in registers.
// Only compiled for sm_90a (add_worklog_step(... HOPPER)): wgmma and setmaxnreg exist nowhere else.
#pragma once

#include <cuda.h>  // CUtensorMap
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernel_utils.cuh"  // shared_address

namespace worklog::hopper {

// The shapes every Hopper step here is built on.
constexpr int warpgroup_threads = 128;                          // 4 warps issue one wgmma together
constexpr int swizzle_bytes = 128;                              // the TMA/wgmma swizzle span
constexpr int swizzle_halves = swizzle_bytes / sizeof(__half);  // 64 FP16 per swizzled row
constexpr int wgmma_m = 64, wgmma_n = 256, wgmma_k = 16;       // one wgmma.m64n256k16

// ---- Clusters -----------------------------------------------------------------------------------

// This block's rank in its cluster (0 … cluster size − 1).
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives (release: its earlier writes, barrier
// initialisations included, become visible to the cluster)...
__device__ __forceinline__ void cluster_arrive() { asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory"); }
// ...and waits until all have arrived (acquire).
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// ---- mbarriers ----------------------------------------------------------------------------------
// An mbarrier completes a phase when `count` threads have arrived AND every byte announced with
// expect_tx has landed. Waiters name the phase they wait for by its parity (0, 1, 0, ...), so a
// ring of stages needs no reset: stage s is in phase (use / stages) & 1.

// Sets the barrier's arrival count for each phase.
__device__ __forceinline__ void mbarrier_init(std::uint64_t* barrier, std::uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(shared_address(barrier)), "r"(count) : "memory");
}

// Makes barrier initialisations visible to the other blocks of the cluster and to the copy engine.
__device__ __forceinline__ void fence_barrier_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// Arrives once and announces `bytes` that the copy engine will deliver in this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_bytes(std::uint64_t* barrier, std::uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(shared_address(barrier)), "r"(bytes)
               : "memory");
}

// Arrives once on a barrier of this block.
__device__ __forceinline__ void mbarrier_arrive(std::uint64_t* barrier) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(shared_address(barrier)) : "memory");
}

// Arrives once on the barrier at the same shared-memory offset in block `cluster_rank` of this
// cluster (mapa translates the address). Relaxed: it orders none of this thread's memory accesses,
// which is all a consumer releasing a stage needs (wgmma_wait_group already guarantees that the
// tensor cores finished reading it); a release at cluster scope would add a memory fence to every
// arrive, and measured twice as slow (48% of warp cycles stalled on that fence, ncu).
__device__ __forceinline__ void mbarrier_arrive_in_block(std::uint64_t* barrier, std::uint32_t cluster_rank) {
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.relaxed.cluster.shared::cluster.b64 _, [remote];\n"
      "}" ::"r"(shared_address(barrier)),
      "r"(cluster_rank)
      : "memory");
}

// True once the phase of parity `parity` has completed (polls once; the hardware may suspend the
// thread for a while before answering, so a spin loop around it is cheap).
__device__ __forceinline__ bool mbarrier_try_wait(std::uint64_t* barrier, std::uint32_t parity) {
  std::uint32_t done;
  asm volatile(
      "{\n"
      ".reg .pred complete;\n"
      "mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], %2;\n"
      "selp.u32 %0, 1, 0, complete;\n"
      "}"
      : "=r"(done)
      : "r"(shared_address(barrier)), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ void mbarrier_wait(std::uint64_t* barrier, std::uint32_t parity) {
  while (!mbarrier_try_wait(barrier, parity)) {
  }
}

// ---- Tensor memory accelerator ------------------------------------------------------------------

// Copies the box of `map` whose first element is at (inner, outer) (inner: the contiguous
// dimension) into shared memory at `destination`; the bytes count towards `barrier`'s phase.
// Parts of the box outside the tensor arrive as zeros.
__device__ __forceinline__ void tma_load_2d(void* destination, const CUtensorMap& map, std::uint64_t* barrier,
                                            int inner, int outer) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], [%4];" ::"r"(
          shared_address(destination)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(inner), "r"(outer), "r"(shared_address(barrier))
      : "memory");
}

// The same copy, delivered to the same shared-memory offset (and barrier offset) in every block of
// the cluster whose bit is set in `block_mask`: one read of global memory feeds several blocks.
__device__ __forceinline__ void tma_load_2d_multicast(void* destination, const CUtensorMap& map,
                                                      std::uint64_t* barrier, int inner, int outer,
                                                      std::uint16_t block_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(shared_address(destination)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(inner), "r"(outer), "r"(shared_address(barrier)),
      "h"(block_mask)
      : "memory");
}

// Copies the box at (inner, outer) of `map` from shared memory at `source` to global memory; only
// the part inside the tensor is written.
__device__ __forceinline__ void tma_store_2d(const CUtensorMap& map, const void* source, int inner, int outer) {
  asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];" ::"l"(
                   reinterpret_cast<std::uint64_t>(&map)),
               "r"(inner), "r"(outer), "r"(shared_address(source))
               : "memory");
}

// Waits until at most `pending` of this thread's bulk store groups are still reading shared memory.
template <int pending>
__device__ __forceinline__ void bulk_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(pending) : "memory");
}

// Waits until all of this thread's bulk stores have completed (written global memory).
__device__ __forceinline__ void bulk_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Synchronizes the `threads` threads (whole warps) that use named barrier `id` (1-15; 0 is __syncthreads's).
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

// Closes the group of bulk stores issued so far by this thread.
__device__ __forceinline__ void bulk_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Makes this thread's ordinary shared-memory writes visible to the async proxy (TMA, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- Warpgroup MMA ------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote:
// rows of 128 bytes, 16-byte chunks XOR-ed with (row % 8), in atoms of 8 rows = 1024 bytes that
// must start 1024-byte aligned. Fields (in 16-byte units): start address (bits 0-13), leading-
// dimension byte offset (16-29), stride-dimension byte offset (32-45); swizzle mode 1 = 128 B
// (bits 62-63). What the two offsets mean depends on the operand's major-ness (see the step's README):
//   K-major (A here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                      one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// Orders this warpgroup's register and shared-memory accesses before the wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Closes the group of wgmma issued so far by this warpgroup.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// Waits until at most `pending` of this warpgroup's wgmma groups are still running.
template <int pending>
__device__ __forceinline__ void wgmma_wait_group() {
  asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(pending) : "memory");
}

// Tells the compiler that the asynchronous wgmma may read and write these registers now: no move of
// an access to them across this point (reading accumulators before wgmma_wait_group would read
// values still being computed).
template <int count>
__device__ __forceinline__ void fence_registers(float (&values)[count]) {
#pragma unroll
  for (int i = 0; i < count; ++i) asm volatile("" : "+f"(values[i])::"memory");
}

// D(64×256, FP32) += A(64×16, FP16) · B(16×256, FP16), both from shared memory: A K-major (rows of A
// contiguous in k), B MN-major (rows of B contiguous in n: the "transpose" flag, last immediate = 1).
// Scale factors of A and B are +1; the predicate `accumulate` is always true (D is zeroed by the caller). Thread t of the warpgroup holds d[8j + {0,1}] = D[r][8j/2 + c],
// see the step's README for the layout.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a_descriptor,
                                                 std::uint64_t b_descriptor) {
#define WORKLOG_D8(i) \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
  asm volatile(
      "{\n"
      ".reg .pred accumulate;\n"
      "setp.ne.b32 accumulate, %130, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n256k16.f32.f16.f16\n"
      "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15,\n"
      "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31,\n"
      "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47,\n"
      "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63,\n"
      "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79,\n"
      "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95,\n"
      "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111,\n"
      "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127},\n"
      "%128, %129, accumulate, 1, 1, 0, 1;\n"
      "}"
      : WORKLOG_D8(0), WORKLOG_D8(8), WORKLOG_D8(16), WORKLOG_D8(24), WORKLOG_D8(32), WORKLOG_D8(40),
        WORKLOG_D8(48), WORKLOG_D8(56), WORKLOG_D8(64), WORKLOG_D8(72), WORKLOG_D8(80), WORKLOG_D8(88),
        WORKLOG_D8(96), WORKLOG_D8(104), WORKLOG_D8(112), WORKLOG_D8(120)
      : "l"(a_descriptor), "l"(b_descriptor), "r"(1)
      : "memory");
#undef WORKLOG_D8
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64n256k16,
// each this warpgroup's 64 rows of the A tile (K-major, 128-byte swizzled rows of 64 k) times 16 rows
// of the B tile (MN-major: 64-column boxes of 128-byte rows, `b_box_bytes` apart), into acc. The
// caller commits the group and waits for it.
template <int block_tile_k>
__device__ __forceinline__ void wgmma_stage(float (&acc)[128], const unsigned char* a_tile,
                                            const unsigned char* b_tile, int consumer, int b_box_bytes) {
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < block_tile_k / wgmma_k; ++kk) {
    // A: this consumer's 64 rows (64 · 128 bytes further), k-step kk 32 bytes into each row; the
    // leading offset is unused with this swizzle, the stride is one 8-row atom (1024 bytes).
    const std::uint64_t a_desc =
        matrix_descriptor(a_tile + consumer * wgmma_m * swizzle_bytes + kk * wgmma_k * 2, 16, 1024);
    // B: k-step kk starts 16 rows of 128 bytes further; the leading offset is the distance from one
    // 64-column box to the next, the stride one atom of 8 k-rows (1024 bytes).
    const std::uint64_t b_desc = matrix_descriptor(b_tile + kk * wgmma_k * swizzle_bytes, b_box_bytes, 1024);
    wgmma_m64n256k16(acc, a_desc, b_desc);
  }
}

// Writes one warpgroup's m64n256 accumulators, alpha·acc + beta·C, to the 64 × 256 tile of C at
// (row0, col0), only inside C (beta == 0: C is not read). Needs N a multiple of 2 and C 8-byte
// aligned (the TMA path guarantees both).
// wgmma's accumulator layout: warp w of the warpgroup holds rows 16w … 16w+15; in each 8-column
// chunk j, lane l holds columns 8j + 2(l % 4) + {0, 1} of row 16w + l/4 (acc[4j], acc[4j+1]) and of
// the row 8 below (acc[4j+2], acc[4j+3]). Each pair of columns goes out as one 8-byte store.
template <class Problem>
__device__ __forceinline__ void store_accumulators(const float (&acc)[128], const Problem& p, long long row0,
                                                   long long col0) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const long long row_top = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const long long col = col0 + j * 8 + 2 * (lane % 4);
    if (col >= p.n) continue;  // N even, col even: col + 1 < N too
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long row = row_top + half * 8;
      if (row >= p.m) continue;
      float2* out = reinterpret_cast<float2*>(p.c + row * p.n + col);
      float2 value = make_float2(p.alpha * acc[4 * j + 2 * half], p.alpha * acc[4 * j + 2 * half + 1]);
      if (p.beta != 0.0f) {
        const float2 old = *out;
        value.x += p.beta * old.x;
        value.y += p.beta * old.y;
      }
      *out = value;
    }
  }
}

// ---- Registers per warpgroup --------------------------------------------------------------------

// Gives registers back to the pool (a warpgroup that only issues copies needs few)...
template <int registers>
__device__ __forceinline__ void setmaxnreg_decrease() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(registers));
}
// ...so that the warpgroups holding accumulators can take more.
template <int registers>
__device__ __forceinline__ void setmaxnreg_increase() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(registers));
}

}  // namespace worklog::hopper
