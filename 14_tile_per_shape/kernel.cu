// Step 14 (Hopper) — a tile for every shape: a menu of kernels, and a model that picks one.
//
// Change from 13: the Hopper kernel is a family. Steps 09 to 13 run one block tile, 128 × 256 (12:
// its swapped widths); a library runs many, and picks one per shape.
//   - 11's kernel, copied here with its tile made a template parameter: 64 or 128 rows (one 64-row
//     consumer warpgroup per wgmma_m, one or two of them), 64 to 256 columns (the wgmma's n, a
//     multiple of 64: one 64-column TMA box of B each), clusters of one or two blocks, and as many
//     pipeline stages as shared memory holds for that tile. The schedule is 11's (schedule.cuh,
//     included), so every entry splits the tiles of its own last wave by 11's rule.
//   - The menu: a list of instantiations, each one line (menu_items below), each a variant of the step.
//   - The choice: a model predicts each entry's time on the shape from the work of its busiest
//     cluster under 11's plan (slices: whole waves, then its part of a split last wave; segments: a
//     pipeline fill and a write-back each; a fixup; slices whose rows start off a 128-byte line), each
//     term at a price that a calibration measured for that entry on this GPU (calibration.inc, written
//     by the calibrate tool beside this file from shapes of the entry's own waves, never a shape of the
//     corpus). It runs the cheapest.
//   - Best of menu (a variant): time every entry on the shape, in the process, and run the fastest:
//     the bound the model is judged against.
//   - Few columns: one column, or a few columns of few rows (a dot product, a matrix times a vector),
//     leave most tiles' columns empty and most SMs idle: a pass over A with K split over the GPU.
//   - Every other shape goes where the earlier steps answer it: few rows (M ≤ few_rows) to 12's
//     swapped family, whose widths follow M; rows TMA cannot describe to 13's padding.

#include <algorithm>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "11_stream_k/schedule.cuh"
#include "12_swap_ab/swap_ab.hpp"
#include "13_pad_unaligned/pad_unaligned.hpp"
#include "14_tile_per_shape/tile_per_shape.hpp"
#include "device_buffer.hpp"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "swizzle.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;
using stream_k::Decomposition;
using stream_k::Schedule;
using stream_k::Segment;
using stream_k::Walk;

// ---- Configuration ------------------------------------------------------------------------------
// The knobs every entry of the menu shares, one a line; an entry (Tile) adds its tile and cluster.
struct Common {
  static constexpr int block_tile_k = 64;        // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int max_stages = 8;           // stages as fit in 227 KiB, no more: deeper gains nothing (README.md)
  static constexpr int group_rows = 8;           // grouped tile order: tile rows per group, as in 07 to 11
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few (11)
  static constexpr int c_buffers = 2;            // staging buffers per consumer: one fills while one drains
  static constexpr Decomposition decomposition = Decomposition::hybrid;  // 11's rule, on each entry's own waves
  static constexpr int split_k = 1;                                      // (Decomposition::split_k only)
  static constexpr int fixup_slices = 16;      // 11's estimate of what splitting costs a unit, in k-slices
  static constexpr int fixup_alone_units = 2;  // a tile split among this many units or fewer: fixed up by one (11)
};

// One entry of the menu: rows × cols block tiles, cluster blocks stacked vertically sharing B.
template <int rows, int cols, int cluster>
struct Tile : Common {
  static constexpr int block_tile_m = rows;     // 64 per consumer warpgroup
  static constexpr int block_tile_n = cols;     // the wgmma's n
  static constexpr int cluster_size = cluster;  // blocks on vertically adjacent tiles share each B slice
};

// What a tile implies, and the checks that name the knob at fault.
template <class Config>
struct Layout : Config {
  static constexpr int consumers = Config::block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = Config::block_tile_m * Config::block_tile_k * 2;
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // A consumer's accumulators: its 64 rows × block_tile_n FP32, block_tile_n / 2 per thread, written
  // back (and fixed up) in chunks of 64 rows × 32 columns, 16 per thread (4 float4).
  static constexpr int accumulators = Config::block_tile_n / 2;
  static constexpr int float4s = accumulators / 4;
  static constexpr int c_chunk_cols = swizzle_bytes / sizeof(float);  // 32
  static constexpr int c_chunk_bytes = wgmma_m * swizzle_bytes;       // 8 KiB
  static constexpr int chunks = Config::block_tile_n / c_chunk_cols;
  static constexpr int c_staging_bytes = consumers * Config::c_buffers * c_chunk_bytes;
  // Shared memory: the stages (as many as fit beside the C staging buffers, at most max_stages), the
  // staging buffers, the 2·stages barriers, and slack to align the start to a swizzle atom.
  static constexpr int stages_that_fit =
      (max_shared_bytes_per_block - c_staging_bytes - swizzle_atom_bytes) / (stage_bytes + 16);
  static constexpr int stages = stages_that_fit < Config::max_stages ? stages_that_fit : Config::max_stages;
  static constexpr int shared_bytes = stages * stage_bytes + c_staging_bytes + 2 * stages * 8 + swizzle_atom_bytes;
  // setmaxnreg moves registers between the warpgroups within what the block got at launch (11's Layout
  // says why): the consumers take what the producer leaves, in steps of 8, at most 232.
  static constexpr int registers_per_lane = 65536 / threads / 8 * 8 * (1 + consumers);
  static constexpr int consumer_share = (registers_per_lane - Config::producer_registers) / consumers / 8 * 8;
  static constexpr int consumer_registers = consumer_share < 232 ? consumer_share : 232;

  // Three or four consumers (192 or 256 rows) leave each thread 104 to 152 registers: ptxas spills
  // in the K loop (README.md: the menu).
  static_assert(Config::block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(Config::block_tile_n % swizzle_halves == 0 && b_boxes >= 1 && b_boxes <= 4,
                "block_tile_n must be 64, 128, 192 or 256: whole 64-column boxes of B, a wgmma's n");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(stages >= 2, "two stages must fit beside the C staging buffers: copies overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  static_assert(Config::cluster_size == 1 || Config::cluster_size == 2,
                "cluster_size must be 1 or 2 (blocks sharing B)");
  static_assert(b_boxes % Config::cluster_size == 0, "cluster_size must divide the boxes of a B slice");
  static_assert(Config::c_buffers >= 1, "c_buffers must be at least 1");
  static_assert(consumer_registers >= accumulators + 40,
                "block_tile_n / 2 accumulators must leave a consumer about 40 registers (fewer rows, or columns)");
  static_assert(stream_k::check_policy<Config>());
};
static_assert(tile_per_shape::few_rows <= swap_ab::max_m, "few_rows must not exceed what 12's swap takes");

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

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64nNk16 (N =
// block_tile_n), each this warpgroup's 64 rows of the A tile (K-major, 128-byte swizzled rows of 64 k)
// times 16 rows of the B tile (MN-major: 64-column boxes of 128-byte rows, b_box_bytes apart), into
// acc. The caller commits the group and waits for it.
template <class L>
__device__ __forceinline__ void multiply_stage(float (&acc)[L::accumulators], const unsigned char* a_tile,
                                               const unsigned char* b_tile, int consumer) {
  constexpr int block_tile_k = L::block_tile_k, b_box_bytes = L::b_box_bytes;
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
    wgmma_m64nk16<L::block_tile_n, 0, 1>(acc, a_desc, b_desc);
  }
}

// ---- Write back -----------------------------------------------------------------------------------

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

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "14_tile_per_shape", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{
      "14_tile_per_shape", "producer", "empty",
      "the stage was never released: does one lane of every consumer warp of the cluster arrive on empty[s] of "
      "every block, as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "14_tile_per_shape", "consumer", "flags",
      "a partial sum was never published: do writer and reader compute the same slot (Schedule::slot), "
      "does every unit publish its partials before it waits for others', are all clusters resident?"};
};

// ---- The kernel -----------------------------------------------------------------------------------

template <class Config>
__global__ void __launch_bounds__(Layout<Config>::threads, 1)
    stream_k_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                  const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmProblem<__half> p,
                  const __grid_constant__ Schedule s) {
  using L = Layout<Config>;
  constexpr int block_tile_m = L::block_tile_m, block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k;
  constexpr int stages = L::stages, cluster_size = L::cluster_size;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int stage) { return shared + stage * L::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * L::stage_bytes + L::a_tile_bytes; };
  unsigned char* c_staging = shared + stages * L::stage_bytes;  // 1024-byte aligned, as the swizzle needs
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(c_staging + L::c_staging_bytes);
  std::uint64_t* empty = full + stages;

  // A cluster computes a "cluster tile" of cluster_size block tiles stacked vertically, and walks
  // the schedule's segments (both blocks of a cluster the same ones: they share copies), even where
  // one of them lies below C. Tile t is the t-th in grouped order.
  const std::uint32_t rank = cluster_size > 1 ? cluster_rank() : 0;
  const int tiles_m = int(ceil_div(p.m, block_tile_m)), tiles_n = int(ceil_div(p.n, block_tile_n));
  const int cluster_rows = int(ceil_div(tiles_m, cluster_size));
  const int cluster = blockIdx.x / cluster_size, clusters = gridDim.x / cluster_size;
  auto tile_origin = [&](long long t) {
    const TileIndex tile = grouped_tile(t, cluster_rows, tiles_n, L::group_rows);
    return TileOrigin{(long long)(tile.row * cluster_size + int(rank)) * block_tile_m,
                      (long long)tile.col * block_tile_n};
  };

  // LAB BEGIN [hard, repeats 09 10 11]: The barriers, as in 10: thread 0 alone initializes, for each stage, full[stage]
  // LAB: for 1 arrival (the local producer's arming) and empty[stage] for every consumer warp of the cluster
  // LAB: (L::consumers · L::warps_per_consumer · cluster_size); then fence_barrier_init.
  if (threadIdx.x == 0) {
    for (int stage = 0; stage < stages; ++stage) {
      mbarrier_init(&full[stage], 1);  // the local producer's arrive, plus the bytes of every copy into us
      mbarrier_init(&empty[stage],
                    L::consumers * L::warps_per_consumer * cluster_size);  // every consumer warp of the cluster
    }
    fence_barrier_init();
  }
  // LAB END
  // No block may copy into, or arrive on, a peer's barriers before the peer has initialized them.
  if constexpr (cluster_size > 1) {
    cluster_arrive();
    cluster_wait();
  } else {
    __syncthreads();
  }

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: copies for every segment of the walk, `stages` slices ahead of the consumers ---
    setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      int slice = 0;  // slices copied so far, over all segments: stage = slice % stages
      Segment segment;
      for (Walk walk(s, cluster, clusters); walk.next(segment);) {
        const TileOrigin origin = tile_origin(segment.tile);
        for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
          const int stage = slice % stages, use = slice / stages;
          // LAB BEGIN [hard, repeats 09 10 11]: The producer's side of the protocol for slice `slice`, as in 10 (stage
          // LAB: and use count on across segments): mbarrier_wait<EmptyWait> on empty[stage] (stage for the watchdog)
          // LAB: for the parity of phase use − 1; k0 = kt·block_tile_k; then the arming and the copies.
          // First use: parity 1 counts as complete.
          mbarrier_wait<EmptyWait>(&empty[stage], (use & 1) ^ 1, stage);
          const int k0 = kt * block_tile_k;
          // LAB BEGIN [easy, repeats 09 10 11]: As in 10 (09's, with a cluster): arm full[stage] for L::stage_bytes,
          // LAB: copy this block's A box at (k0, origin.row), then its share of the B slice, boxes = L::b_boxes /
          // LAB: cluster_size of them from rank·boxes on: by tma_load_2d_multicast to every block of the cluster (mask:
          // LAB: cluster_size low bits), else by tma_load_2d. Count the boxes from 0 (box + rank·boxes): a loop whose
          // LAB: bounds depend on rank costs the producer a register it does not have (ptxas spills it, and reloads it
          // LAB: in every slice).
          // Arm full[stage] for the whole stage (every byte lands here, the peer's multicast included),
          // copy this block's A box, then its share of the B slice, multicast to the cluster.
          mbarrier_arrive_expect_bytes(&full[stage], L::stage_bytes);
          tma_load_2d(a_tile(stage), a_map, &full[stage], k0, int(origin.row));
          // This block's boxes are rank·boxes … +boxes−1. The loop counts them from 0: a constant
          // trip count, fully unrolled. With bounds that depend on rank (10's form), the loop's end
          // was one more value kept across the whole walk, which the producer's 40 registers did not
          // hold: ptxas spilled it and reloaded it (LDL) in every slice.
          constexpr int boxes = L::b_boxes / cluster_size;  // per block
#pragma unroll
          for (int box = 0; box < boxes; ++box) {
            const int j = int(rank) * boxes + box;
            if constexpr (cluster_size > 1)
              tma_load_2d_multicast(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage],
                                    int(origin.col) + j * swizzle_halves, k0, std::uint16_t((1u << cluster_size) - 1u));
            else
              tma_load_2d(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage], int(origin.col) + j * swizzle_halves,
                          k0);
          }
          // LAB END
          // LAB END
        }
      }
    }
  } else {
    // ---- Consumers: for each segment, the K loop of step 09, then the write-back or the fixup -----
    setmaxnreg_increase<L::consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    const int t = threadIdx.x % warpgroup_threads, lane = threadIdx.x % 32;
    const int barrier = 1 + consumer;  // this warpgroup's named barrier
    unsigned char* buffers = c_staging + consumer * L::c_buffers * L::c_chunk_bytes;
    // A stage is released by one lane per consumer warp, on the empty barrier of every block of the
    // cluster (its own included): the producers of all of them write into this stage.
    auto release = [&](int stage) {
      // LAB BEGIN [easy, repeats 10 11]: As in 10: from lane 0 of each consumer warp, arrive on empty[stage] of every
      // LAB: block of the cluster (mbarrier_arrive_in_block), or on this block's own without a cluster.
      if (lane == 0) {
        if constexpr (cluster_size > 1) {
#pragma unroll
          for (int r = 0; r < cluster_size; ++r) mbarrier_arrive_in_block(&empty[stage], r);
        } else {
          mbarrier_arrive(&empty[stage]);
        }
      }
      // LAB END
    };
    // The fixup protocol (schedule.cuh) for this warpgroup: partials of all its accumulators, pieces
    // of one 64 × 32 chunk (4 float4 a thread), each written by the staged epilogue.
    stream_k::Fixup<cluster_size, L::consumers, L::float4s, 4, FlagWait> fixup(consumer, barrier);

    int slice = 0;
    unsigned stored = 0;  // chunks written through the staging buffers (unsigned: % c_buffers without a sign fix)
    float acc[L::accumulators];
    Segment segment;
    for (Walk walk(s, cluster, clusters); walk.next(segment);) {
      const TileOrigin origin = tile_origin(segment.tile);
#pragma unroll
      for (int i = 0; i < L::accumulators; ++i) acc[i] = 0.0f;
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
        const int stage = slice % stages, use = slice / stages;
        // LAB BEGIN [hard, repeats 09 10 11]: As in 10: wait until stage `stage` is full, mbarrier_wait<FullWait> on
        // LAB: full[stage] (stage for the watchdog) for the parity of phase use.
        mbarrier_wait<FullWait>(&full[stage], use & 1, stage);
        // LAB END
        multiply_stage<L>(acc, a_tile(stage), b_tile(stage), consumer);
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        // LAB BEGIN [hard, repeats 10 11]: As in 10: release the stage of the previous slice, none at the segment's
        // LAB: first.
        if (kt > segment.k_begin) release((slice - 1) % stages);
        // LAB END
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      // LAB BEGIN [hard, repeats 10 11]: As in 10: release the stage of the segment's last slice.
      release((slice - 1) % stages);  // the segment's last slice; the producer is already on the next
      // LAB END

      // A whole tile (or one this unit fixes up alone) goes to C: alpha·acc + beta·C, only inside C;
      // a piece of a shared fixup likewise, a 64 × 32 chunk of rows `half`.
      fixup.finish_segment(
          s, segment, acc,
          [&](const float(&sum)[L::accumulators]) {
            // LAB BEGIN [easy, repeats 11]: Write a whole tile (store_accumulators_staged): this consumer's 64 rows of
            // LAB: it.
            store_accumulators_staged<L>(sum, p, c_map, buffers, stored, consumer, origin.row + consumer * wgmma_m,
                                         origin.col);
            // LAB END
          },
          tile_origin,
          [&](const float(&sum)[16], const TileOrigin& piece, int half, int chunk) {
            // LAB BEGIN [easy, repeats 11]: Write a piece of a shared fixup (store_chunk_staged): rows `half` of the
            // LAB: piece's tile, columns 32·chunk … .
            store_chunk_staged<L>(sum, p, c_map, buffers, stored, barrier, piece.row + half * wgmma_m,
                                  piece.col + chunk * L::c_chunk_cols);
            // LAB END
          });
    }
    // The block's shared memory must outlive the copy engine's reads of it.
    if (t == 0) bulk_store_wait_all();
  }

  // No block may leave while a peer can still copy into its shared memory or arrive on its barriers.
  if constexpr (cluster_size > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

// ---- Launch -----------------------------------------------------------------------------------------
// As 11's: the TMA path needs A's and B's rows on 16 bytes, and C's rows and N on 4 floats.

bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.lda) && tma_describable(p.b, p.ldb) && tma_describable(p.c, p.ldc, sizeof(float)) &&
         p.n % 4 == 0;
}

template <class Tile>
cudaLaunchConfig_t launch_configuration(cudaLaunchAttribute& cluster, cudaStream_t stream) {
  using L = Layout<Tile>;
  cudaLaunchConfig_t config{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = L::cluster_size;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.blockDim = dim3(L::threads);
  config.dynamicSmemBytes = L::shared_bytes;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  return config;
}

// As many clusters of the entry as can be resident at once (every unit must be: 11).
template <class Tile>
int resident_clusters() {
  static const int count = [] {
    using L = Layout<Tile>;
    constexpr auto kernel = stream_k_gemm<Tile>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    cudaLaunchAttribute cluster{};
    cudaLaunchConfig_t config = launch_configuration<Tile>(cluster, 0);
    config.gridDim = dim3(L::cluster_size);
    int clusters = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&clusters, kernel, &config));
    if (clusters < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    return clusters;
  }();
  return count;
}

// The entry's schedule of a shape (11's plan): cluster tiles over the columns' tiles, 64-wide
// k-slices, one partial per block and consumer in a slot, all of a consumer's accumulators.
template <class Tile>
stream_k::Plan plan_schedule(int m, int n, int k, int resident) {
  using L = Layout<Tile>;
  // LAB BEGIN [easy, repeats 11]: Plan the shape as 11 does, with stream_k::plan_schedule<Tile>: its cluster tiles, its
  // LAB: 64-wide k-slices, the resident clusters, and a slot of one partial per block and consumer warpgroup, of
  // LAB: L::float4s float4 per thread of a warpgroup.
  const long long tiles_m = ceil_div(m, L::block_tile_m), tiles_n = ceil_div(n, L::block_tile_n);
  return stream_k::plan_schedule<Tile>(ceil_div(tiles_m, L::cluster_size) * tiles_n, int(ceil_div(k, L::block_tile_k)),
                                       resident, L::cluster_size * L::consumers,
                                       L::float4s * warpgroup_threads * sizeof(float4));
  // LAB END
}

// Bytes of workspace: the entry's partials and flags on the TMA path, else 13's padded copies.
template <class Tile>
std::size_t workspace_bytes(Shape shape, Strides strides) {
  if (strides.lda % 8 != 0 || strides.ldb % 8 != 0 || strides.ldc % 4 != 0 || shape.n % 4 != 0)
    return pad_unaligned::workspace_bytes(shape, strides);
  const stream_k::Plan plan = plan_schedule<Tile>(shape.m, shape.n, shape.k, resident_clusters<Tile>());
  return plan.partial_bytes + plan.flag_bytes;
}

// One entry on any problem: rows TMA cannot describe go to 13 (which pads them for 12 and 11).
template <class Tile>
void launch_tile(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = Layout<Tile>;
  if (!tma_path_possible(p)) return pad_unaligned::launch(p, stream);
  constexpr auto kernel = stream_k_gemm<Tile>;
  arm_watchdog();
  stream_k::Plan plan = plan_schedule<Tile>(p.m, p.n, p.k, resident_clusters<Tile>());
  stream_k::attach_workspace(plan, p, "14_tile_per_shape");
  cudaLaunchAttribute cluster{};
  cudaLaunchConfig_t config = launch_configuration<Tile>(cluster, stream);
  config.gridDim = dim3(unsigned(plan.workers * L::cluster_size));
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, p.ldc, wgmma_m,
                                               L::c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, a_map, b_map, c_map, p, plan.schedule));
  WORKLOG_CHECK_LAUNCH();
}

// ---- The menu ---------------------------------------------------------------------------------------
// One line an entry; its name is its variant's. Why each is here (README.md measures them):
using tile_per_shape::Entry;
using tile_per_shape::Work;
// The work of an entry's busiest cluster under its plan (tile_per_shape.hpp: Work). Worker w walks
// its unit, if any, then the whole tiles w, w + workers, … (11's Walk).
Work busiest_cluster(const stream_k::Plan& plan, Strides strides) {
  Work work{};
  // LAB BEGIN: The model's terms, from plan.schedule: the busiest worker's whole tiles (the tiles not split, over
  // LAB: plan.workers), its units (units over the workers), a unit's slices (q, one more while rem > 0). slices = whole
  // LAB: tiles · k_tiles + units · a unit's slices; segments = whole tiles + units (2 a unit when split is 0: an even
  // LAB: deal may cross a tile's end); a fixup when units > 0; every slice off lines when lda or ldb is not a multiple
  // LAB: of 64 halves.
  const Schedule& schedule = plan.schedule;
  const long long whole_per_worker = ceil_div(schedule.tiles - schedule.sk_tiles, plan.workers);
  const long long units_per_worker = schedule.units > 0 ? ceil_div(schedule.units, plan.workers) : 0;
  const long long unit_slices = schedule.units > 0 ? schedule.q + (schedule.rem > 0 ? 1 : 0) : 0;
  const long long unit_segments = schedule.split > 0 ? 1 : 2;  // an even deal may cross one tile boundary
  const long long slices = whole_per_worker * schedule.k_tiles + units_per_worker * unit_slices;
  const bool off_lines = strides.lda % 64 != 0 || strides.ldb % 64 != 0;  // 64 halves: a 128-byte line
  work = {slices, whole_per_worker + units_per_worker * unit_segments, schedule.units > 0, off_lines ? slices : 0};
  // LAB END
  return work;
}

template <class T>
Work work_on_this_gpu(Shape shape, Strides strides) {
  return busiest_cluster(plan_schedule<T>(shape.m, shape.n, shape.k, resident_clusters<T>()), strides);
}
template <int rows, int cols, int cluster>
Entry item(const char* name) {
  using T = Tile<rows, cols, cluster>;
  return {name,
          rows,
          cols,
          cluster,
          Layout<T>::stages,
          launch_tile<T>,
          workspace_bytes<T>,
          resident_clusters<T>,
          work_on_this_gpu<T>};
}
// The menu's names are its entries' dimensions, and each is a variant the registration below lists
// (the variants' list is the one the README tooling reads): a mismatch is a bug, said at first use.
std::vector<Entry> check_names(std::vector<Entry> menu) {
  const auto* step = find_step("14_tile_per_shape");
  for (const Entry& e : menu) {
    const std::string expected =
        "menu_" + std::to_string(e.rows) + "x" + std::to_string(e.cols) + "_c" + std::to_string(e.cluster);
    if (expected != e.name || (step && !step->has_variant(e.name)))
      throw std::logic_error(std::string("14_tile_per_shape: menu entry ") + e.name + " is not registered as " +
                             expected);
  }
  return menu;
}
const std::vector<Entry>& menu_items() {
  static const std::vector<Entry> menu = check_names({
      item<128, 256, 2>("menu_128x256_c2"),  // 11's tile: the most reuse, for the large squares
      item<128, 256, 1>("menu_128x256_c1"),  // twice the workers: a finer last wave
      item<128, 192, 1>("menu_128x192_c1"),  // three boxes of B: N in multiples of 192
      item<128, 128, 2>("menu_128x128_c2"),  // half 11's tile: twice the tiles on mid-size shapes
      item<128, 128, 1>("menu_128x128_c1"),
      item<128, 64, 1>("menu_128x64_c1"),  // few columns (N ≤ 64: early convolution layers)
      item<64, 256, 2>("menu_64x256_c2"),  // a quarter of 11's cluster tile: small squares, more tiles
      item<64, 128, 1>("menu_64x128_c1"),
      item<64, 64, 1>("menu_64x64_c1"),  // the smallest: small problems, the most tiles
  });
  return menu;
}

// ---- The model ------------------------------------------------------------------------------------
// The price of each entry on a GPU, measured by the calibrate tool (README.md: the calibration).
struct Calibration {
  const char* gpu;  // cudaDeviceProp::name
  int sms;          // its multiprocessors
  const char* entry;
  tile_per_shape::Costs costs;
};
const std::vector<Calibration> calibration{
#include "14_tile_per_shape/calibration.inc"
};

// The device the launch runs on: its name and multiprocessors, read once per device.
const cudaDeviceProp& device_properties() {
  static std::map<int, cudaDeviceProp> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  auto found = known.find(device);
  if (found == known.end()) {
    cudaDeviceProp properties{};
    CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    found = known.emplace(device, properties).first;
  }
  return found->second;
}

// The costs of an entry on this GPU: its own calibration, else (a GPU never calibrated) the first
// GPU's of the table, the ratios between entries being what the choice needs; none: not priced.
const tile_per_shape::Costs* costs_of(const Entry& e) {
  const cudaDeviceProp& gpu = device_properties();
  const Calibration* fallback = nullptr;
  for (const Calibration& c : calibration) {
    if (std::strcmp(c.entry, e.name) != 0) continue;
    if (std::strcmp(c.gpu, gpu.name) == 0 && c.sms == gpu.multiProcessorCount) return &c.costs;
    if (!fallback) fallback = &c;
  }
  return fallback ? &fallback->costs : nullptr;
}

// The entry the model picks for a TMA-describable shape: the cheapest priced one (the first on a
// tie); 11's tile when nothing is priced. A function of the shape, the strides' alignment and the GPU
// alone: the same problem runs the same kernel in every run, so results are the same bits. The pick
// is kept per shape: a launch of a few microseconds must not wait for nine plans on the host.
std::size_t choose(Shape shape, Strides strides) {
  static std::map<std::tuple<int, int, int, int, bool, bool>, std::size_t> picks;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, shape.m, shape.n, shape.k, strides.lda % 64 == 0, strides.ldb % 64 == 0);
  if (auto found = picks.find(key); found != picks.end()) return found->second;
  const std::vector<Entry>& menu = menu_items();
  std::size_t best = 0;
  [[maybe_unused]] double best_us = -1.0;  // none priced yet (maybe unused: a student copy blanks the loop body)
  for (std::size_t i = 0; i < menu.size(); ++i) {
    const tile_per_shape::Costs* c = costs_of(menu[i]);
    if (!c) continue;
    // LAB BEGIN [hard]: The choice: predict entry i (tile_per_shape::predict_us of its costs and its busiest cluster's
    // LAB: work on the shape, menu[i].work); keep the cheapest, the first of equals.
    const double us = tile_per_shape::predict_us(*c, menu[i].work(shape, strides));
    if (best_us < 0.0 || us < best_us) {
      best = i;
      best_us = us;
    }
    // LAB END
  }
  picks.emplace(key, best);
  return best;
}

// ---- Best of menu ---------------------------------------------------------------------------------
// The bound the model is judged by: every entry timed on the shape, in this process, on the problem's
// own A and B into a scratch C (beta 0: C itself is written once, by the launch that counts), the
// fastest kept for the shape. Not part of the step's answer: timings differ between runs, so two runs
// may pick different entries (and split K differently: other bits).
std::size_t fastest_entry(const GemmProblem<__half>& p, cudaStream_t stream) {
  static std::map<std::tuple<int, int, int, int, int, int, int>, std::size_t> picks;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(device, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  if (auto found = picks.find(key); found != picks.end()) return found->second;
  const std::vector<Entry>& menu = menu_items();
  DeviceBuffer<float> scratch(std::size_t(p.m) * p.ldc);
  // The timings' problem: C in the scratch buffer, beta 0 (C is not read); A, B and the workspace the launch's.
  GemmProblem<__half> q = make_problem(shape_of(p), p.alpha, 0.0f, p.a, p.b, scratch.data(), strides_of(p));
  q.workspace = p.workspace;
  q.workspace_bytes = p.workspace_bytes;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  // Rounds over the whole menu, each entry's best round kept: a drift of the clock over the rounds
  // touches every entry alike.
  constexpr int rounds = 3, launches = 5;
  std::vector<float> best_ms(menu.size(), -1.0f);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < menu.size(); ++i) {
      if (menu[i].workspace(shape_of(p), strides_of(p)) > p.workspace_bytes) continue;
      menu[i].launch(q, stream);  // warm: the entry's first launch sets up its kernel
      CUDA_CHECK(cudaEventRecord(start, stream));
      for (int r = 0; r < launches; ++r) menu[i].launch(q, stream);
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (best_ms[i] < 0.0f || ms < best_ms[i]) best_ms[i] = ms;
    }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::size_t best = 0;
  for (std::size_t i = 1; i < menu.size(); ++i)
    if (best_ms[i] >= 0.0f && (best_ms[best] < 0.0f || best_ms[i] < best_ms[best])) best = i;
  picks.emplace(key, best);
  return best;
}

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

int multiprocessors() { return device_properties().multiProcessorCount; }

// The shapes the pass over A takes: one column, or few columns of few rows. With many rows and 2 to
// 8 columns a thread's scalar loads of A keep too few bytes in flight, and 12's and 13's tiles, wasteful
// as they are, run faster (README.md: measured).
bool thin(Shape s) { return s.n == 1 || (s.n <= Thin::max_n && (long long)s.m * s.n <= Thin::max_rows_by_cols); }

std::size_t thin_workspace_bytes(Shape shape) {
  const ThinPlan plan = plan_thin(shape, multiprocessors());
  return plan.partial_bytes + plan.counter_bytes;
}

void launch_thin(const GemmProblem<__half>& p, cudaStream_t stream) {
  const ThinPlan plan = plan_thin(shape_of(p), multiprocessors());
  float* partials = nullptr;
  unsigned long long* counters = nullptr;
  unsigned epoch = 0;
  if (plan.parts > 1) {
    if (!p.workspace || p.workspace_bytes < plan.partial_bytes + plan.counter_bytes)
      throw std::runtime_error("14_tile_per_shape: the few-columns path needs " +
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

// ---- The step ---------------------------------------------------------------------------------------
// Few columns go to the pass over A above; rows TMA cannot describe to 13, few rows to 12's swapped
// family (its width follows M); every other shape to the menu's entry that the model picks (best of
// menu: the fastest measured).
template <bool best_of_menu>
void launch_tile_per_shape(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (thin(shape_of(p))) return launch_thin(p, stream);
  if (!tma_path_possible(p)) return pad_unaligned::launch(p, stream);
  if (p.m <= tile_per_shape::few_rows) return swap_ab::launch(p, stream);
  const std::size_t pick = best_of_menu ? fastest_entry(p, stream) : choose(shape_of(p), strides_of(p));
  menu_items()[pick].launch(p, stream);
}

// The workspace: the most any route of the shape may take (13's, which covers 12's, or any entry's).
std::size_t tile_per_shape_workspace_bytes(Shape shape, Strides strides) {
  if (thin(shape)) return thin_workspace_bytes(shape);
  std::size_t bytes = pad_unaligned::workspace_bytes(shape, strides);
  for (const Entry& e : menu_items()) bytes = std::max(bytes, e.workspace(shape, strides));
  return bytes;
}

}  // namespace

const std::vector<tile_per_shape::Entry>& tile_per_shape::menu() { return menu_items(); }
const tile_per_shape::Costs* tile_per_shape::costs(const Entry& e) { return costs_of(e); }
std::size_t tile_per_shape::pick(Shape shape, Strides strides) { return choose(shape, strides); }

// The step, best of menu, and each entry of the menu as a variant of its own (menu_items() checks
// that the two lists agree). wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0.
WORKLOG_REGISTER_STEP(
    Step<__half>{"14_tile_per_shape", launch_tile_per_shape<false>}
        .adds("a menu of block tiles and clusters; a model of waves, slices and fixups picks one per shape")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(tile_per_shape_workspace_bytes)
        .variant("best_of_menu", "every entry timed on the shape in the process, the fastest run: the model's bound",
                 launch_tile_per_shape<true>, tile_per_shape_workspace_bytes)
        .variant("menu_128x256_c2", "128 × 256 tiles in clusters of 2 sharing B: 11's", launch_tile<Tile<128, 256, 2>>,
                 workspace_bytes<Tile<128, 256, 2>>, 256, 256)
        .variant("menu_128x256_c1", "128 × 256 tiles, no cluster: twice the workers", launch_tile<Tile<128, 256, 1>>,
                 workspace_bytes<Tile<128, 256, 1>>, 128, 256)
        .variant("menu_128x192_c1", "128 × 192 tiles (three boxes of B), no cluster", launch_tile<Tile<128, 192, 1>>,
                 workspace_bytes<Tile<128, 192, 1>>, 128, 192)
        .variant("menu_128x128_c2", "128 × 128 tiles in clusters of 2", launch_tile<Tile<128, 128, 2>>,
                 workspace_bytes<Tile<128, 128, 2>>, 256, 128)
        .variant("menu_128x128_c1", "128 × 128 tiles, no cluster", launch_tile<Tile<128, 128, 1>>,
                 workspace_bytes<Tile<128, 128, 1>>, 128, 128)
        .variant("menu_128x64_c1", "128 × 64 tiles, no cluster: few columns", launch_tile<Tile<128, 64, 1>>,
                 workspace_bytes<Tile<128, 64, 1>>, 128, 64)
        .variant("menu_64x256_c2", "64 × 256 tiles (one consumer) in clusters of 2", launch_tile<Tile<64, 256, 2>>,
                 workspace_bytes<Tile<64, 256, 2>>, 128, 256)
        .variant("menu_64x128_c1", "64 × 128 tiles (one consumer), no cluster", launch_tile<Tile<64, 128, 1>>,
                 workspace_bytes<Tile<64, 128, 1>>, 64, 128)
        .variant("menu_64x64_c1", "64 × 64 tiles (one consumer), no cluster: the most tiles",
                 launch_tile<Tile<64, 64, 1>>, workspace_bytes<Tile<64, 64, 1>>, 64, 64))

}  // namespace worklog
