// Step 09 (Hopper) — tiles copied by the tensor memory accelerator, products by warpgroup MMA.
//
// Adds to 08: one producer thread asks TMA for whole swizzled tiles into a ring of stages, mbarriers
// say when a stage is full or empty, and two consumer warpgroups multiply it with wgmma m64n256k16
// straight from shared memory (warp specialization, setmaxnreg).
// Why it helps: wgmma reads its operands from shared memory at the tensor cores' pace, with a higher
// ceiling than mma.sync, and no thread computes an address or a swizzle.
//
// Run: build/bin/09_wgmma_tma --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen.
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped block order: tile rows per group, as in 07 and 08
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr bool move_registers = true;    // setmaxnreg as above; false: every warpgroup keeps its launch count
  static constexpr int wgmma_groups_in_flight = 1;  // a slice's products still running when the next is issued
};

// What the configuration implies, and the checks that name the knob at fault.
template <class Config>
struct Layout : Config {
  static constexpr int consumers = Config::block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = Config::block_tile_m * Config::block_tile_k * 2;
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  // Stages, then the 2·stages barriers, plus slack to align the start to a swizzle atom.
  static constexpr int shared_bytes = Config::stages * stage_bytes + 2 * Config::stages * 8 + swizzle_atom_bytes;

  static_assert(Config::block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(Config::block_tile_n == wgmma_n, "block_tile_n must be 256, the n of the wgmma used");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(Config::stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  static_assert(Config::wgmma_groups_in_flight >= 0 && Config::wgmma_groups_in_flight < Config::stages,
                "wgmma_groups_in_flight must be below stages: a stage is released only when its products are done");
  // setmaxnreg moves registers between the warpgroups within what the block gets at launch (hopper.cuh).
  static_assert(setmaxnreg_fits(Config::producer_registers, Config::consumer_registers, consumers),
                "producer_registers and consumer_registers must fit the registers the block gets at launch");
};

// ---- Descriptors ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote
// (hopper.cuh: rows of 128 bytes in 1024-byte atoms, which must start 1024-byte aligned). Fields,
// in 16-byte units: start address (bits 0-13), leading-dimension byte offset (16-29),
// stride-dimension byte offset (32-45); swizzle mode 1 = 128 B (bits 62-63). What the two offsets
// mean depends on the operand's major-ness (README.md):
//   K-major (A here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                      one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64n256k16,
// each this warpgroup's 64 rows of the A tile (K-major, 128-byte swizzled rows of 64 k) times 16 rows
// of the B tile (MN-major: 64-column boxes of 128-byte rows, b_box_bytes apart), into acc. The
// caller commits the group and waits for it.
template <int block_tile_k, int b_box_bytes>
__device__ __forceinline__ void multiply_stage(float (&acc)[128], const unsigned char* a_tile,
                                               const unsigned char* b_tile, int consumer) {
  // EXCERPT BEGIN multiply_stage
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < block_tile_k / wgmma_k; ++kk) {
    // A: this consumer's 64 rows (64 · 128 bytes further), k-step kk 32 bytes into each row; the
    // leading offset is unused with this swizzle, the stride is one 8-row atom.
    const std::uint64_t a_desc =
        matrix_descriptor(a_tile + consumer * wgmma_m * swizzle_bytes + kk * wgmma_k * 2, 16, swizzle_atom_bytes);
    // B: k-step kk starts 16 rows of 128 bytes further; the leading offset is the distance from one
    // 64-column box to the next, the stride one atom of 8 k-rows.
    const std::uint64_t b_desc =
        matrix_descriptor(b_tile + kk * wgmma_k * swizzle_bytes, b_box_bytes, swizzle_atom_bytes);
    wgmma_m64n256k16(acc, a_desc, b_desc);
  }
  // EXCERPT END multiply_stage
}

// ---- Write back -----------------------------------------------------------------------------------

// Writes one warpgroup's m64n256 accumulators, alpha·acc + beta·C, to the 64 × 256 tile of C at
// (row0, col0), only inside C (beta == 0: C is not read). Needs ldc even and C 8-byte aligned (the
// TMA path checks both); an odd N's last column goes out alone.
// wgmma's accumulator layout: warp w of the warpgroup holds rows 16w … 16w+15; in each 8-column
// chunk j, lane l holds columns 8j + 2(l % 4) + {0, 1} of row 16w + l/4 (acc[4j], acc[4j+1]) and of
// the row 8 below (acc[4j+2], acc[4j+3]). Each pair of columns goes out as one 8-byte store.
__device__ __forceinline__ void store_accumulators(const float (&acc)[128], const GemmProblem<__half>& p,
                                                   long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
  const long long row_top = row0 + warp * 16 + lane / 4;
#pragma unroll
  for (int j = 0; j < wgmma_n / 8; ++j) {
    const long long col = col0 + j * 8 + 2 * (lane % 4);
    if (col >= p.n) continue;
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long row = row_top + half * 8;
      if (row >= p.m) continue;
      float* const c = p.c + row * p.ldc + col;
      if (col + 1 == p.n) {  // the last column of an odd N: its neighbour lies in C's gap
        store_c(c, acc[4 * j + 2 * half], p.alpha, p.beta);
        continue;
      }
      float2* out = reinterpret_cast<float2*>(c);
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

// ---- The kernel -----------------------------------------------------------------------------------

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "09_wgmma_tma", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{
      "09_wgmma_tma", "producer", "empty",
      "the stage was never released: does every consumer thread arrive on empty[s], as its count at init says?"};
};

template <class Config>
__global__ void __launch_bounds__(Layout<Config>::threads, 1)
    wgmma_tma_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                   GemmProblem<__half> p) {
  using L = Layout<Config>;
  constexpr int block_tile_m = L::block_tile_m, block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k;
  constexpr int stages = L::stages;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int stage) { return shared + stage * L::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * L::stage_bytes + L::a_tile_bytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(shared + stages * L::stage_bytes);
  std::uint64_t* empty = full + stages;

  // Which tile of C: grouped order, so that the blocks in flight share rows of A and columns of B in L2.
  const int tiles_m = int(ceil_div(p.m, block_tile_m)), tiles_n = int(ceil_div(p.n, block_tile_n));
  const TileIndex tile = grouped_tile(blockIdx.x, tiles_m, tiles_n, L::group_rows);
  const int row0 = tile.row * block_tile_m, col0 = tile.col * block_tile_n;
  const int k_tiles = int(ceil_div(p.k, block_tile_k));

  // LAB BEGIN barriers [hard]
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);                                  // the producer's one arrive (+ bytes)
      mbarrier_init(&empty[s], L::consumers * warpgroup_threads);  // every consumer thread
    }
    fence_barrier_init();
  }
  __syncthreads();
  // LAB END

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: one thread keeps the ring of stages filled -----------------------------------
    if constexpr (Config::move_registers) setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      for (int kt = 0; kt < k_tiles; ++kt) {
        const int s = kt % stages, use = kt / stages;
        // LAB BEGIN producer [hard]
        // Wait until the consumers have released this buffer. For its first use the wait is for
        // the phase "before" the first (parity 1), which counts as complete: no wait.
        mbarrier_wait<EmptyWait>(&empty[s], (use & 1) ^ 1, s);
        const int k0 = kt * block_tile_k;
        // LAB BEGIN arm_and_copy
        mbarrier_arrive_expect_bytes(&full[s], L::stage_bytes);
        tma_load_2d(a_tile(s), a_map, &full[s], k0, row0);  // block_tile_m rows × 64 k
#pragma unroll
        for (int j = 0; j < L::b_boxes; ++j)  // 64 k rows × 64 columns each
          tma_load_2d(b_tile(s) + j * L::b_box_bytes, b_map, &full[s], col0 + j * swizzle_halves, k0);
        // LAB END
        // LAB END
      }
    }
  } else {
    // ---- Consumers: multiply each stage as soon as it is full ----------------------------------
    if constexpr (Config::move_registers) setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    float acc[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) acc[i] = 0.0f;

    for (int kt = 0; kt < k_tiles; ++kt) {
      const int s = kt % stages, use = kt / stages;
      // LAB BEGIN wait_full [hard]
      mbarrier_wait<FullWait>(&full[s], use & 1, s);
      // LAB END
      multiply_stage<block_tile_k, L::b_box_bytes>(acc, a_tile(s), b_tile(s), consumer);
      wgmma_commit_group();
      // Keep this slice's products running; wait only for the previous slice's (all of them in the
      // variant wait_all), then give the buffer whose products are done back to the producer.
      constexpr int in_flight = Config::wgmma_groups_in_flight;
      wgmma_wait_group<in_flight>();
      fence_registers(acc);
      // LAB BEGIN release_stage
      if (kt >= in_flight) mbarrier_arrive(&empty[(kt - in_flight) % stages]);
      // LAB END
    }
    wgmma_wait_group<0>();
    fence_registers(acc);

    // ---- Write back: alpha·acc + beta·C, only inside C ---------------------------------------------
    store_accumulators(acc, p, row0 + consumer * wgmma_m, col0);
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

// TMA needs A's and B's base and row stride 16-byte aligned (lda and ldb multiples of 8), and the
// epilogue's 8-byte stores need C 8-byte aligned (ldc even). Other problems go to 08's kernel.
bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.lda) && tma_describable(p.b, p.ldb) && p.ldc % 2 == 0 &&
         reinterpret_cast<std::uintptr_t>(p.c) % 8 == 0;
}

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = Layout<Variant>;
  if (!tma_path_possible(p)) return general::launch(p, stream);
  constexpr auto kernel = wgmma_tma_gemm<Variant>;
  arm_watchdog();
  allow_dynamic_shared_memory<kernel>(L::shared_bytes);
  // A: M rows × K, copied in boxes of block_tile_m rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  kernel<<<tile_grid({p.m, p.n, p.k}, L::block_tile_m, L::block_tile_n), L::threads, L::shared_bytes, stream>>>(
      a_map, b_map, p);
  WORKLOG_CHECK_LAUNCH();
}

// Variants that change one knob or leave one technique out (README.md: what each contributes).
struct OneConsumer : Config {
  static constexpr int block_tile_m = 64;  // one consumer warpgroup: 64 × 256 tiles, 256 threads
};
struct NoSetmaxnreg : Config {
  static constexpr bool move_registers = false;
};
struct WaitAll : Config {
  static constexpr int wgmma_groups_in_flight = 0;
};
struct Stages3 : Config {
  static constexpr int stages = 3;
};
struct Stages2 : Config {
  static constexpr int stages = 2;
};

}  // namespace

// One fetch of A and B from global memory serves a 128 × 256 tile of C. wgmma and setmaxnreg exist
// on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(Step<__half>{"09_wgmma_tma", launch_config<Config>}
                          .adds("TMA tiles, warpgroup MMA, warp specialization")
                          .reuses_tile(Config::block_tile_m, Config::block_tile_n)
                          .needs_compute_capability(90, 90)
                          .takes_own_path(tma_path_possible)  // the rest: 08's kernel (general_gemm.hpp)
                          .variant("one_consumer", "one consumer warpgroup: 64 × 256 tiles", launch_config<OneConsumer>,
                                   OneConsumer::block_tile_m, OneConsumer::block_tile_n)
                          .variant("no_setmaxnreg", "no setmaxnreg: every warpgroup keeps the launch count",
                                   launch_config<NoSetmaxnreg>)
                          .variant("wait_all", "wgmma.wait_group 0 after each slice: no products in flight",
                                   launch_config<WaitAll>)
                          .variant("stages3", "3 pipeline stages", launch_config<Stages3>)
                          .variant("stages2", "2 pipeline stages", launch_config<Stages2>))

}  // namespace worklog
