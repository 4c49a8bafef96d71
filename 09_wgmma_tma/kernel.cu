// Step 09 (Hopper) — tiles copied by the tensor memory accelerator, products by warpgroup MMA.
//
// Change from 08: three Hopper-only mechanisms replace the per-thread machinery of the earlier
// steps.
//   - TMA: one thread asks the copy engine for a whole tile (cp.async.bulk.tensor), described once on
//     the host by a CUtensorMap. The engine computes the addresses, writes the tile into shared
//     memory already in the 128-byte swizzled layout that wgmma reads, and fills with zeros what lies
//     outside the matrix: no address arithmetic, no edge tests, no swizzle code in the kernel.
//   - mbarriers instead of __syncthreads: each of the `stages` shared-memory buffers has a "full"
//     barrier (its phase completes when the copy engine has delivered all the stage's bytes) and an
//     "empty" barrier (its phase completes when every consumer thread is done reading the stage).
//   - wgmma: a warpgroup (4 warps, 128 threads) issues one asynchronous m64n256k16 product whose A
//     and B come straight from shared memory through 64-bit matrix descriptors; no ldmatrix, no
//     fragments in registers, only the accumulators. B is row-major (N contiguous): wgmma reads it
//     "MN-major" through the descriptor's transpose flag, so no operand is ever transposed.
// And the block is warp-specialized: warpgroup 0 is the producer (one thread issues every copy;
// setmaxnreg gives its registers away), warpgroups 1 and 2 are consumers that only multiply, each a
// 64 × 256 half of the 128 × 256 block tile, 128 FP32 accumulators per thread.
//
// Why it helps: mma.sync tops out at 647 TFLOP/s on the H200 (measured by 08's microbenchmark, its
// operands in registers), 88% of cuBLAS; wgmma reads operands from shared memory at the tensor cores' own pace. The 128 × 256
// tile with K-slices of 64 does 2·128·256·64 FLOP per 48 KiB stage: 85 FLOP per shared-memory byte,
// 4 stages deep (192 KiB) keep three slices in flight while one is multiplied.
//
// Shapes TMA cannot describe (K or N not a multiple of 8: row strides not 16-byte aligned) are handed
// to step 08's kernel, which is correct for every shape.
//
// Measured on an H200 (CUDA 13.0, 2026-11-21), step and cuBLAS timed in alternation: 4096³ 0.196 ms,
// 700 TFLOP/s, 94.9% of cuBLAS FP16; 8192³ 98.6–100.7% of cuBLAS (three processes). README.md: the
// pipeline, the descriptors, the paths and all the figures.

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "tensor_map.hpp"

namespace worklog {
namespace {

using namespace hopper;


template <int block_tile_m, int block_tile_n, int block_tile_k, int stages>
struct Config {
  static constexpr int consumers = block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = block_tile_m * block_tile_k * 2;
  static constexpr int b_box_bytes = block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_tile_bytes = block_tile_k * block_tile_n * 2;
  static constexpr int stage_bytes = a_tile_bytes + b_tile_bytes;
  // Stages, then the 2·stages barriers, plus slack to align the start to 1024 bytes (swizzle atoms).
  static constexpr int shared_bytes = stages * stage_bytes + 2 * stages * 8 + 1024;

  static_assert(block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(block_tile_n == wgmma_n, "block_tile_n must be 256, the n of the wgmma used");
  static_assert(block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes <= 227 * 1024, "stages × stage size must fit in 227 KiB of shared memory");
};

// Registers per thread after the split (setmaxnreg): the producer keeps 40; each consumer thread
// gets 232 for its 128 accumulators. 128·40 + 2·128·232 = 64 512 of the SM's 65 536.
constexpr int producer_registers = 40, consumer_registers = 232;

template <int block_tile_m, int block_tile_n, int block_tile_k, int stages>
__global__ void __launch_bounds__(Config<block_tile_m, block_tile_n, block_tile_k, stages>::threads, 1)
    wgmma_tma_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                   GemmProblem<__half> p) {
  using C = Config<block_tile_m, block_tile_n, block_tile_k, stages>;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + 1023) &
                                                           ~std::uintptr_t(1023));
  auto a_tile = [&](int stage) { return shared + stage * C::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * C::stage_bytes + C::a_tile_bytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(shared + stages * C::stage_bytes);
  std::uint64_t* empty = full + stages;

  // Which tile of C: grouped order, 8 rows of tiles per group, so that the blocks in flight share
  // rows of A and columns of B in L2.
  const int tiles_m = int(ceil_div(p.m, block_tile_m)), tiles_n = int(ceil_div(p.n, block_tile_n));
  const TileIndex tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, 8);
  const int row0 = tile.row * block_tile_m, col0 = tile.col * block_tile_n;
  const int k_tiles = int(ceil_div(p.k, block_tile_k));

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);                                  // the producer's one arrive (+ bytes)
      mbarrier_init(&empty[s], C::consumers * warpgroup_threads);  // every consumer thread
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: one thread keeps the ring of stages filled -----------------------------------
    setmaxnreg_decrease<producer_registers>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % stages, use = kt / stages;
        // Wait until the consumers have released this buffer. For its first use the wait is for
        // the phase "before" the first (parity 1), which counts as complete: no wait.
        mbarrier_wait(&empty[s], (use & 1) ^ 1);
        const int k0 = kt * block_tile_k;
        // LAB BEGIN: Arm full[s] for the stage's bytes (mbarrier_arrive_expect_bytes), then start its TMA copies
        // LAB: (tma_load_2d, completing on full[s]): A's box at (k0, row0), and B's 64-column boxes b_box_bytes apart.
        // LAB: Until then the consumers wait on full[s] forever: the tests hang.
        mbarrier_arrive_expect_bytes(&full[s], C::stage_bytes);
        tma_load_2d(a_tile(s), a_map, &full[s], k0, row0);  // block_tile_m rows × 64 k
#pragma unroll
        for (int j = 0; j < block_tile_n / swizzle_halves; ++j)  // 64 k rows × 64 columns each
          tma_load_2d(b_tile(s) + j * C::b_box_bytes, b_map, &full[s], col0 + j * swizzle_halves, k0);
        // LAB END
      }
    }
  } else {
    // ---- Consumers: multiply each stage as soon as it is full ----------------------------------
    setmaxnreg_increase<consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % stages, use = kt / stages;
      mbarrier_wait(&full[s], use & 1);
      // block_tile_k / 16 products of this stage, A and B read by descriptors (hopper.cuh; README.md:
      // the descriptor fields).
      wgmma_stage<block_tile_k>(acc, a_tile(s), b_tile(s), consumer, C::b_box_bytes);
      wgmma_commit_group();
      // Keep this slice's products running; wait only for the previous slice's, then give its
      // buffer back to the producer.
      wgmma_wait_group<1>();
      fence_registers(acc);
      // LAB BEGIN: Give the previous slice's stage back to the producer: arrive on its empty barrier
      // LAB: (every consumer thread; there is none before the first slice).
      if (kt > 0) mbarrier_arrive(&empty[(kt - 1) % stages]);
      // LAB END
    }
    wgmma_wait_group<0>();
    fence_registers(acc);

    // ---- Write back: alpha·acc + beta·C, only inside C ---------------------------------------------
    store_accumulators(acc, p, row0 + consumer * wgmma_m, col0);
  }
}

// 128 × 256 block tile, K-slices of 64, 4 stages: 4 × 48 KiB of shared memory.
constexpr int block_tile_m = 128, block_tile_n = 256, block_tile_k = 64, stages = 4;
// Shapes TMA cannot describe go to this step's kernel instead.
constexpr const char* unaligned_fallback = "08_mma_ldmatrix";

void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  using C = Config<block_tile_m, block_tile_n, block_tile_k, stages>;
  if (launch_fallback_unless_tma(p, stream, unaligned_fallback, 8)) return;
  constexpr auto kernel = wgmma_tma_gemm<block_tile_m, block_tile_n, block_tile_k, stages>;
  allow_dynamic_shared_memory<kernel>(C::shared_bytes);
  // A: M rows × K, copied in boxes of block_tile_m rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const OperandMaps maps = operand_tensor_maps(p, block_tile_m, block_tile_k);
  kernel<<<tile_grid({p.m, p.n, p.k}, block_tile_m, block_tile_n), C::threads, C::shared_bytes, stream>>>(maps.a, maps.b,
                                                                                                         p);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace

// One fetch of A and B from global memory serves a 128 × 256 tile of C.
WORKLOG_REGISTER_STEP(__half, {"09_wgmma_tma", "TMA tiles, warpgroup MMA, warp specialization", launch, block_tile_m,
                               block_tile_n, 90, 90})

}  // namespace worklog
