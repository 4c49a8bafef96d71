// Hopper (sm_90a) instructions used by the steps from 09 on: one small wrapper per PTX instruction,
// named after what it does, with the operand ranges PTX sets checked where they are compile-time
// constants. How the steps combine them (the pipeline, the descriptors, the epilogues) is each
// step's own, in its kernel.cu. Three families:
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

// The shapes of the instructions below.
constexpr int warpgroup_threads = 128;                    // 4 warps issue one wgmma together
constexpr int wgmma_m = 64, wgmma_n = 256, wgmma_k = 16;  // one wgmma.m64n256k16
// The 128-byte swizzle of TMA and wgmma: rows of 128 bytes in atoms of 8 rows (1024 bytes, aligned
// to 1024), the 16-byte chunk c of row r stored at chunk c ^ (r % 8): swizzled_chunk(r, c, 8) of
// swizzle.hpp, whose comment says why this spreads a column of chunks over all the banks.
constexpr int swizzle_bytes = 128;
constexpr int swizzle_atom_bytes = 8 * swizzle_bytes;
constexpr int swizzle_halves = swizzle_bytes / sizeof(__half);  // 64 FP16 per swizzled row

// ---- Clusters -----------------------------------------------------------------------------------

// This block's rank in its cluster (0 … cluster size − 1).
__device__ __forceinline__ std::uint32_t cluster_rank() {
  std::uint32_t rank;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(rank));
  return rank;
}

// Every thread of every block of the cluster arrives (release: its earlier writes, barrier
// initialisations included, become visible to the cluster)...
__device__ __forceinline__ void cluster_arrive() {
  asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}
// ...and waits until all have arrived (acquire).
__device__ __forceinline__ void cluster_wait() { asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory"); }

// Loads the float4 at the same shared-memory offset as `local` in block `cluster_rank` of this
// cluster (distributed shared memory: mapa translates the address). The reader must know the data is
// there: the writer stored it before a cluster barrier that both passed (cluster_arrive, cluster_wait).
__device__ __forceinline__ float4 load_shared_in_block(const float4* local, std::uint32_t cluster_rank) {
  float4 v;
  asm volatile(
      "{\n"
      ".reg .b32 remote;\n"
      "mapa.shared::cluster.u32 remote, %4, %5;\n"
      "ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [remote];\n"
      "}"
      : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
      : "r"(shared_address(local)), "r"(cluster_rank)
      : "memory");
  return v;
}

// ---- Programmatic dependent launch ----------------------------------------------------------------
// A kernel launched with cudaLaunchAttributeProgrammaticStreamSerialization may start before the
// kernel ahead of it in the stream has finished. Without that attribute both are no-ops.

// Lets the kernel after this one in the stream start as soon as every block of this one has said so
// (or exited): its blocks take SMs as this kernel's blocks leave them.
__device__ __forceinline__ void allow_next_grid_to_start() {
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

// Waits until the kernel ahead of this one in the stream has finished and its writes are visible:
// before the first read of what it wrote, and the first write of what it reads.
__device__ __forceinline__ void wait_for_previous_grid() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

// ---- mbarriers ----------------------------------------------------------------------------------
// An mbarrier completes a phase when `count` threads have arrived AND every byte announced with
// expect_tx has landed. Waiters name the phase they wait for by its parity (0, 1, 0, ...), so a
// ring of stages needs no reset: stage s is in phase (use / stages) & 1.

// Sets the barrier's arrival count for each phase (PTX: 1 to 2^20 − 1).
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

// The wait itself, a loop around mbarrier_try_wait with a watchdog, is watchdog.cuh's mbarrier_wait.

// ---- Flags in global memory, between blocks ----------------------------------------------------
// A block publishes data to other blocks of the same launch by writing it, then storing a flag with
// release semantics; a reader loads the flag with acquire semantics until it holds the expected
// value, and then reads the data (bypassing L1, which is not coherent between SMs: __ldcg). Both
// at GPU scope: the blocks may run on any SMs.

// Stores `value` to `flag`, after every memory access of this thread that precedes it (and, through
// a barrier before it, of the threads that synchronized with this one) is visible at GPU scope.
__device__ __forceinline__ void store_release_gpu(unsigned* flag, unsigned value) {
  asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(flag), "r"(value) : "memory");
}

// Loads `flag` with no ordering: for polling, before one load_acquire_gpu of the value seen.
__device__ __forceinline__ unsigned load_relaxed_gpu(const unsigned* flag) {
  unsigned value;
  asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// Loads `flag`; the accesses of this thread that follow it see everything the releasing thread
// published with the value read.
__device__ __forceinline__ unsigned load_acquire_gpu(const unsigned* flag) {
  unsigned value;
  asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(value) : "l"(flag) : "memory");
  return value;
}

// ---- Tensor memory accelerator ------------------------------------------------------------------

// Fetches a tensor map (a kernel parameter) into the copy engine's cache ahead of the first copy
// that names it, so that the first copy waits for its data alone.
__device__ __forceinline__ void prefetch_tensor_map(const CUtensorMap& map) {
  asm volatile("prefetch.tensormap [%0];" ::"l"(reinterpret_cast<std::uint64_t>(&map)) : "memory");
}

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
__device__ __forceinline__ void tma_load_2d_multicast(void* destination, const CUtensorMap& map, std::uint64_t* barrier,
                                                      int inner, int outer, std::uint16_t block_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
      " [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(shared_address(destination)),
      "l"(reinterpret_cast<std::uint64_t>(&map)), "r"(inner), "r"(outer), "r"(shared_address(barrier)), "h"(block_mask)
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
  static_assert(pending >= 0, "bulk_store_wait_read: pending counts groups, at least 0");
  asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(pending) : "memory");
}

// Waits until all of this thread's bulk stores have completed (written global memory).
__device__ __forceinline__ void bulk_store_wait_all() { asm volatile("cp.async.bulk.wait_group 0;" ::: "memory"); }

// Synchronizes the `threads` threads (whole warps) that use named barrier `id` (PTX: 0-15; 0 is
// __syncthreads's, so the steps use 1-15).
template <int threads>
__device__ __forceinline__ void named_barrier_sync(int id) {
  static_assert(threads > 0 && threads % 32 == 0, "named_barrier_sync: threads must be whole warps");
  asm volatile("bar.sync %0, %1;" ::"r"(id), "n"(threads) : "memory");
}

// Closes the group of bulk stores issued so far by this thread.
__device__ __forceinline__ void bulk_store_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

// Makes this thread's ordinary shared-memory writes visible to the async proxy (TMA, wgmma).
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

// ---- Warpgroup MMA ------------------------------------------------------------------------------

// Orders this warpgroup's register and shared-memory accesses before the wgmma that follows.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }

// Closes the group of wgmma issued so far by this warpgroup.
__device__ __forceinline__ void wgmma_commit_group() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

// Waits until at most `pending` of this warpgroup's wgmma groups are still running.
template <int pending>
__device__ __forceinline__ void wgmma_wait_group() {
  static_assert(pending >= 0, "wgmma_wait_group: pending counts groups, at least 0");
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

// D(64×256, FP32) += A(64×16, FP16) · B(16×256, FP16), both from shared memory, each described by a
// 64-bit matrix descriptor (step 09's kernel.cu builds them): A K-major (rows of A contiguous in k),
// B MN-major (rows of B contiguous in n: the "transpose" flag, last immediate = 1). Scale factors of A
// and B are +1; the predicate `accumulate` is always true (the caller zeroes D). Which thread holds
// which element of D: the comment on store_accumulators in step 09's kernel.cu.
__device__ __forceinline__ void wgmma_m64n256k16(float (&d)[128], std::uint64_t a_descriptor,
                                                 std::uint64_t b_descriptor) {
#define WORKLOG_D8(i)                                                                                         \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
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
      : WORKLOG_D8(0), WORKLOG_D8(8), WORKLOG_D8(16), WORKLOG_D8(24), WORKLOG_D8(32), WORKLOG_D8(40), WORKLOG_D8(48),
        WORKLOG_D8(56), WORKLOG_D8(64), WORKLOG_D8(72), WORKLOG_D8(80), WORKLOG_D8(88), WORKLOG_D8(96), WORKLOG_D8(104),
        WORKLOG_D8(112), WORKLOG_D8(120)
      : "l"(a_descriptor), "l"(b_descriptor), "r"(1)
      : "memory");
#undef WORKLOG_D8
}

// The operand text of a wgmma of n = 8·j (j = 1 … 32): its n/2 = 4·j accumulators are operands %0 to
// %(4j − 1), written "+f" (read and written); the two descriptors, the predicate's source and the two
// major-ness immediates follow as %(4j) to %(4j + 4). WORKLOG_WGMMA_ACC_j is the list of accumulator
// names, WORKLOG_WGMMA_OUT_j the operands themselves (d, the caller's array). They stay defined after
// the wrapper; their prefix keeps them apart from every other name.
#define WORKLOG_WGMMA_D4(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3])
#define WORKLOG_WGMMA_ACC_1 "%0, %1, %2, %3"
#define WORKLOG_WGMMA_OUT_1 WORKLOG_WGMMA_D4(0)
#define WORKLOG_WGMMA_ACC_2 WORKLOG_WGMMA_ACC_1 ", %4, %5, %6, %7"
#define WORKLOG_WGMMA_OUT_2 WORKLOG_WGMMA_OUT_1, WORKLOG_WGMMA_D4(4)
#define WORKLOG_WGMMA_ACC_3 WORKLOG_WGMMA_ACC_2 ", %8, %9, %10, %11"
#define WORKLOG_WGMMA_OUT_3 WORKLOG_WGMMA_OUT_2, WORKLOG_WGMMA_D4(8)
#define WORKLOG_WGMMA_ACC_4 WORKLOG_WGMMA_ACC_3 ", %12, %13, %14, %15"
#define WORKLOG_WGMMA_OUT_4 WORKLOG_WGMMA_OUT_3, WORKLOG_WGMMA_D4(12)
#define WORKLOG_WGMMA_ACC_5 WORKLOG_WGMMA_ACC_4 ", %16, %17, %18, %19"
#define WORKLOG_WGMMA_OUT_5 WORKLOG_WGMMA_OUT_4, WORKLOG_WGMMA_D4(16)
#define WORKLOG_WGMMA_ACC_6 WORKLOG_WGMMA_ACC_5 ", %20, %21, %22, %23"
#define WORKLOG_WGMMA_OUT_6 WORKLOG_WGMMA_OUT_5, WORKLOG_WGMMA_D4(20)
#define WORKLOG_WGMMA_ACC_7 WORKLOG_WGMMA_ACC_6 ", %24, %25, %26, %27"
#define WORKLOG_WGMMA_OUT_7 WORKLOG_WGMMA_OUT_6, WORKLOG_WGMMA_D4(24)
#define WORKLOG_WGMMA_ACC_8 WORKLOG_WGMMA_ACC_7 ", %28, %29, %30, %31"
#define WORKLOG_WGMMA_OUT_8 WORKLOG_WGMMA_OUT_7, WORKLOG_WGMMA_D4(28)
#define WORKLOG_WGMMA_ACC_9 WORKLOG_WGMMA_ACC_8 ", %32, %33, %34, %35"
#define WORKLOG_WGMMA_OUT_9 WORKLOG_WGMMA_OUT_8, WORKLOG_WGMMA_D4(32)
#define WORKLOG_WGMMA_ACC_10 WORKLOG_WGMMA_ACC_9 ", %36, %37, %38, %39"
#define WORKLOG_WGMMA_OUT_10 WORKLOG_WGMMA_OUT_9, WORKLOG_WGMMA_D4(36)
#define WORKLOG_WGMMA_ACC_11 WORKLOG_WGMMA_ACC_10 ", %40, %41, %42, %43"
#define WORKLOG_WGMMA_OUT_11 WORKLOG_WGMMA_OUT_10, WORKLOG_WGMMA_D4(40)
#define WORKLOG_WGMMA_ACC_12 WORKLOG_WGMMA_ACC_11 ", %44, %45, %46, %47"
#define WORKLOG_WGMMA_OUT_12 WORKLOG_WGMMA_OUT_11, WORKLOG_WGMMA_D4(44)
#define WORKLOG_WGMMA_ACC_13 WORKLOG_WGMMA_ACC_12 ", %48, %49, %50, %51"
#define WORKLOG_WGMMA_OUT_13 WORKLOG_WGMMA_OUT_12, WORKLOG_WGMMA_D4(48)
#define WORKLOG_WGMMA_ACC_14 WORKLOG_WGMMA_ACC_13 ", %52, %53, %54, %55"
#define WORKLOG_WGMMA_OUT_14 WORKLOG_WGMMA_OUT_13, WORKLOG_WGMMA_D4(52)
#define WORKLOG_WGMMA_ACC_15 WORKLOG_WGMMA_ACC_14 ", %56, %57, %58, %59"
#define WORKLOG_WGMMA_OUT_15 WORKLOG_WGMMA_OUT_14, WORKLOG_WGMMA_D4(56)
#define WORKLOG_WGMMA_ACC_16 WORKLOG_WGMMA_ACC_15 ", %60, %61, %62, %63"
#define WORKLOG_WGMMA_OUT_16 WORKLOG_WGMMA_OUT_15, WORKLOG_WGMMA_D4(60)
#define WORKLOG_WGMMA_ACC_17 WORKLOG_WGMMA_ACC_16 ", %64, %65, %66, %67"
#define WORKLOG_WGMMA_OUT_17 WORKLOG_WGMMA_OUT_16, WORKLOG_WGMMA_D4(64)
#define WORKLOG_WGMMA_ACC_18 WORKLOG_WGMMA_ACC_17 ", %68, %69, %70, %71"
#define WORKLOG_WGMMA_OUT_18 WORKLOG_WGMMA_OUT_17, WORKLOG_WGMMA_D4(68)
#define WORKLOG_WGMMA_ACC_19 WORKLOG_WGMMA_ACC_18 ", %72, %73, %74, %75"
#define WORKLOG_WGMMA_OUT_19 WORKLOG_WGMMA_OUT_18, WORKLOG_WGMMA_D4(72)
#define WORKLOG_WGMMA_ACC_20 WORKLOG_WGMMA_ACC_19 ", %76, %77, %78, %79"
#define WORKLOG_WGMMA_OUT_20 WORKLOG_WGMMA_OUT_19, WORKLOG_WGMMA_D4(76)
#define WORKLOG_WGMMA_ACC_21 WORKLOG_WGMMA_ACC_20 ", %80, %81, %82, %83"
#define WORKLOG_WGMMA_OUT_21 WORKLOG_WGMMA_OUT_20, WORKLOG_WGMMA_D4(80)
#define WORKLOG_WGMMA_ACC_22 WORKLOG_WGMMA_ACC_21 ", %84, %85, %86, %87"
#define WORKLOG_WGMMA_OUT_22 WORKLOG_WGMMA_OUT_21, WORKLOG_WGMMA_D4(84)
#define WORKLOG_WGMMA_ACC_23 WORKLOG_WGMMA_ACC_22 ", %88, %89, %90, %91"
#define WORKLOG_WGMMA_OUT_23 WORKLOG_WGMMA_OUT_22, WORKLOG_WGMMA_D4(88)
#define WORKLOG_WGMMA_ACC_24 WORKLOG_WGMMA_ACC_23 ", %92, %93, %94, %95"
#define WORKLOG_WGMMA_OUT_24 WORKLOG_WGMMA_OUT_23, WORKLOG_WGMMA_D4(92)
#define WORKLOG_WGMMA_ACC_25 WORKLOG_WGMMA_ACC_24 ", %96, %97, %98, %99"
#define WORKLOG_WGMMA_OUT_25 WORKLOG_WGMMA_OUT_24, WORKLOG_WGMMA_D4(96)
#define WORKLOG_WGMMA_ACC_26 WORKLOG_WGMMA_ACC_25 ", %100, %101, %102, %103"
#define WORKLOG_WGMMA_OUT_26 WORKLOG_WGMMA_OUT_25, WORKLOG_WGMMA_D4(100)
#define WORKLOG_WGMMA_ACC_27 WORKLOG_WGMMA_ACC_26 ", %104, %105, %106, %107"
#define WORKLOG_WGMMA_OUT_27 WORKLOG_WGMMA_OUT_26, WORKLOG_WGMMA_D4(104)
#define WORKLOG_WGMMA_ACC_28 WORKLOG_WGMMA_ACC_27 ", %108, %109, %110, %111"
#define WORKLOG_WGMMA_OUT_28 WORKLOG_WGMMA_OUT_27, WORKLOG_WGMMA_D4(108)
#define WORKLOG_WGMMA_ACC_29 WORKLOG_WGMMA_ACC_28 ", %112, %113, %114, %115"
#define WORKLOG_WGMMA_OUT_29 WORKLOG_WGMMA_OUT_28, WORKLOG_WGMMA_D4(112)
#define WORKLOG_WGMMA_ACC_30 WORKLOG_WGMMA_ACC_29 ", %116, %117, %118, %119"
#define WORKLOG_WGMMA_OUT_30 WORKLOG_WGMMA_OUT_29, WORKLOG_WGMMA_D4(116)
#define WORKLOG_WGMMA_ACC_31 WORKLOG_WGMMA_ACC_30 ", %120, %121, %122, %123"
#define WORKLOG_WGMMA_OUT_31 WORKLOG_WGMMA_OUT_30, WORKLOG_WGMMA_D4(120)
#define WORKLOG_WGMMA_ACC_32 WORKLOG_WGMMA_ACC_31 ", %124, %125, %126, %127"
#define WORKLOG_WGMMA_OUT_32 WORKLOG_WGMMA_OUT_31, WORKLOG_WGMMA_D4(124)
// One `if constexpr` arm of wgmma_m64nk16 for n = N = 8·J; A, B, P, AM, BM are the operand numbers
// 4J … 4J + 4 (the descriptors, the predicate's source, the two immediates), spelled out because
// the preprocessor cannot add.
#define WORKLOG_WGMMA_CASE(N, J, A, B, P, AM, BM)                                        \
  if constexpr (n == N) {                                                                \
    asm volatile(                                                                        \
        "{\n"                                                                            \
        ".reg .pred accumulate;\n"                                                       \
        "setp.ne.b32 accumulate, %" #P                                                   \
        ", 0;\n"                                                                         \
        "wgmma.mma_async.sync.aligned.m64n" #N                                           \
        "k16.f32.f16.f16\n"                                                              \
        "{" WORKLOG_WGMMA_ACC_##J                                                        \
        "},\n"                                                                           \
        "%" #A ", %" #B ", accumulate, 1, 1, %" #AM ", %" #BM                            \
        ";\n"                                                                            \
        "}"                                                                              \
        : WORKLOG_WGMMA_OUT_##J                                                          \
        : "l"(a_descriptor), "l"(b_descriptor), "r"(1), "n"(a_mn_major), "n"(b_mn_major) \
        : "memory");                                                                     \
  }

// D(64×n, FP32) += A(64×16, FP16) · B(16×n, FP16) for n any multiple of 8 from 8 to 256, both from
// shared memory, each operand K-major (its rows, or columns, contiguous in k) or MN-major
// ("transposed": contiguous in m or n), which the instruction takes as two immediates. d holds n/2
// floats per thread, laid out as wgmma_m64n256k16's first n/2. Step 13 reads A MN-major and B K-major
// (Cᵀ = Bᵀ·Aᵀ from row-major B and A), at widths that follow M; step 15 reads them as 09 to 11 do (A
// K-major, B MN-major) at every width of its menu.
template <int n, int a_mn_major, int b_mn_major>
__device__ __forceinline__ void wgmma_m64nk16(float (&d)[n / 2], std::uint64_t a_descriptor,
                                              std::uint64_t b_descriptor) {
  static_assert(n % 8 == 0 && n >= 8 && n <= 256, "wgmma_m64nk16: n must be a multiple of 8 from 8 to 256");
  static_assert((a_mn_major == 0 || a_mn_major == 1) && (b_mn_major == 0 || b_mn_major == 1),
                "wgmma_m64nk16: a_mn_major and b_mn_major are 0 (K-major) or 1 (MN-major)");
  WORKLOG_WGMMA_CASE(8, 1, 4, 5, 6, 7, 8)
  else WORKLOG_WGMMA_CASE(16, 2, 8, 9, 10,
                          11, 12) else WORKLOG_WGMMA_CASE(24, 3, 12, 13, 14, 15,
                                                          16) else WORKLOG_WGMMA_CASE(32, 4, 16, 17, 18, 19, 20) else WORKLOG_WGMMA_CASE(40, 5, 20, 21, 22, 23, 24) else WORKLOG_WGMMA_CASE(48, 6, 24, 25, 26, 27, 28) else WORKLOG_WGMMA_CASE(56, 7, 28, 29, 30, 31, 32) else WORKLOG_WGMMA_CASE(64,
                                                                                                                                                                                                                                                                                                  8,
                                                                                                                                                                                                                                                                                                  32,
                                                                                                                                                                                                                                                                                                  33, 34, 35, 36) else WORKLOG_WGMMA_CASE(72,
                                                                                                                                                                                                                                                                                                                                          9,
                                                                                                                                                                                                                                                                                                                                          36, 37, 38, 39, 40) else WORKLOG_WGMMA_CASE(80, 10, 40, 41, 42, 43, 44) else WORKLOG_WGMMA_CASE(88, 11, 44, 45, 46, 47, 48) else WORKLOG_WGMMA_CASE(96,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              12,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              48,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              49,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              50,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              51,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                              52) else WORKLOG_WGMMA_CASE(104, 13, 52,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          53,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          54,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          55, 56) else WORKLOG_WGMMA_CASE(112,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          14, 56, 57, 58,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                          59, 60) else WORKLOG_WGMMA_CASE(120, 15, 60, 61, 62, 63, 64) else WORKLOG_WGMMA_CASE(128,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               16, 64, 65, 66, 67, 68) else WORKLOG_WGMMA_CASE(136, 17, 68, 69, 70, 71, 72) else WORKLOG_WGMMA_CASE(144,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    18,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    72,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    73, 74, 75, 76) else WORKLOG_WGMMA_CASE(152, 19, 76, 77, 78,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            79, 80) else WORKLOG_WGMMA_CASE(160,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            20, 80, 81, 82, 83, 84) else WORKLOG_WGMMA_CASE(168,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            21,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            84,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                            85, 86, 87, 88) else WORKLOG_WGMMA_CASE(176,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    22, 88, 89,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    90,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    91, 92) else WORKLOG_WGMMA_CASE(184,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    23, 92, 93, 94, 95, 96) else WORKLOG_WGMMA_CASE(192,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    24, 96,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    97, 98,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    99, 100) else WORKLOG_WGMMA_CASE(200,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     25,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     100,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     101,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     102,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     103, 104) else WORKLOG_WGMMA_CASE(208,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       26, 104,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       105,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       106,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       107,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                       108) else WORKLOG_WGMMA_CASE(216,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    27,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                    108, 109, 110, 111, 112) else WORKLOG_WGMMA_CASE(224, 28, 112, 113,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                     114, 115, 116) else WORKLOG_WGMMA_CASE(232, 29, 116, 117, 118, 119, 120) else WORKLOG_WGMMA_CASE(240,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      30,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      120,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                      121, 122, 123, 124) else WORKLOG_WGMMA_CASE(248,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                  31, 124, 125,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                  126,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                  127,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                  128) else WORKLOG_WGMMA_CASE(256,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               32,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               128,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               129,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               130,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               131,
                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                                               132)
}
#undef WORKLOG_WGMMA_CASE
#undef WORKLOG_WGMMA_D4

// Step 13's operand orders: A MN-major, B K-major.
template <int n>
__device__ __forceinline__ void wgmma_m64nk16_a_mn_major(float (&d)[n / 2], std::uint64_t a_descriptor,
                                                         std::uint64_t b_descriptor) {
  wgmma_m64nk16<n, 1, 0>(d, a_descriptor, b_descriptor);
}

// ---- Registers per warpgroup --------------------------------------------------------------------

// The registers each thread of a block of `threads` gets at launch under __launch_bounds__(threads,
// 1): 64 Ki / threads, rounded down to a multiple of 8 (168 for 384 threads). setmaxnreg moves
// registers between the block's warpgroups within that budget; a sum above it leaves the consumers
// waiting in setmaxnreg.inc forever.
constexpr int launch_registers_per_thread(int threads) { return 65536 / threads / 8 * 8; }
// Whether one producer warpgroup at producer_registers and `consumers` consumer warpgroups at
// consumer_registers fit what their block gets at launch (each Layout checks its knobs with it).
constexpr bool setmaxnreg_fits(int producer_registers, int consumer_registers, int consumers) {
  const int threads = warpgroup_threads * (1 + consumers);
  return (producer_registers + consumer_registers * consumers) * warpgroup_threads <=
         launch_registers_per_thread(threads) * threads;
}

// Gives registers back to the pool (a warpgroup that only issues copies needs few)...
template <int registers>
__device__ __forceinline__ void setmaxnreg_decrease() {
  static_assert(registers >= 24 && registers <= 256 && registers % 8 == 0,
                "setmaxnreg: registers must be a multiple of 8 from 24 to 256");
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(registers));
}
// ...so that the warpgroups holding accumulators can take more.
template <int registers>
__device__ __forceinline__ void setmaxnreg_increase() {
  static_assert(registers >= 24 && registers <= 256 && registers % 8 == 0,
                "setmaxnreg: registers must be a multiple of 8 from 24 to 256");
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(registers));
}

}  // namespace worklog::hopper
