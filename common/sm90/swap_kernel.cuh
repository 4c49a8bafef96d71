// The swap kernel (step 13's idea; its README teaches it): Cᵀ = Bᵀ·Aᵀ for few rows of A, M as the
// wgmma's n (a width of 8 to 256, picked from M: with_width) and 64 columns of C per consumer
// warpgroup, walking the stream-K schedule (stream_k_schedule.cuh) with the fixup through the
// workspace, or, where every tile fits in one wave, its k-parts as one cluster that adds them up in
// shared memory (reduce_in_cluster). Templates over the configuration (Layout names each knob) and,
// for the launch, the configuration of 64-column tiles (Narrow) that narrow_pays may pick instead;
// chained: a link of a chain of layers, by programmatic dependent launch.
#pragma once

#include <algorithm>
#include <array>
#include <string>
#include <type_traits>
#include <utility>

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "sm90/stream_k_schedule.cuh"
#include "sm90/swap_write_back.cuh"
#include "step.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog::swap_ab {

using namespace hopper;
using stream_k::Schedule;
using stream_k::Segment;
using stream_k::Walk;

// What the configuration and the width imply, and the checks that name the knob at fault. shared_c:
// the kernel that writes C through shared memory (swap_write_back.cuh), launched at width 256 only.
template <class Config, int width, bool shared_c = false>
struct Layout : Config {
  static constexpr int block_tile_m = width;                        // rows of C per block: the wgmma's n
  static constexpr int consumers = Config::block_tile_n / wgmma_m;  // consumer warpgroups, one per 64 columns
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = width * Config::block_tile_k * 2;          // width rows of 128 bytes: whole atoms
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;          // one per consumer
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // shared_c: two buffers per consumer, each a group of 8 rows of C (its 64 columns), rows 4 banks apart so
  // that a warp's 4 rows × 8 columns (store_transposed's layout) hit 32 banks.
  static constexpr int row_pitch = wgmma_m + 4, group_floats = 8 * row_pitch;
  static constexpr int c_buffer_bytes = shared_c ? 2 * consumers * group_floats * 4 : 0;
  // Shared memory: the stages, their 2·stages barriers, C's buffers, slack to align to a swizzle atom.
  static constexpr int stages_that_fit =
      (max_shared_bytes_per_block - swizzle_atom_bytes - c_buffer_bytes) / (stage_bytes + 16);
  static constexpr int stages = stages_that_fit < Config::max_stages ? stages_that_fit : Config::max_stages;
  static constexpr int shared_bytes = stages * stage_bytes + 2 * stages * 8 + c_buffer_bytes + swizzle_atom_bytes;
  // The accumulators of a consumer: its 64 columns of C × width rows, width / 2 floats per thread, in
  // groups of 8 rows of C (one float4 per thread each). A partial sum (schedule.cuh) stores group i of
  // thread t as float4 i·128 + t; a piece of the fixup is one group of one consumer.
  static constexpr int accumulators = width / 2;
  static constexpr int groups = width / 8;

  static_assert(width % 8 == 0 && width >= 8 && width <= 256,
                "width must be a wgmma width (hopper.cuh): a multiple of 8 from 8 to 256");
  static_assert(Config::block_tile_n % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_n must be 64 or 128: one or two consumer warpgroups of 64 columns");
  static_assert(b_boxes == consumers, "block_tile_n must be 64 per consumer: one 64-column box of B each");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(stages >= 2, "max_stages must be at least 2, and two stages must fit: copies overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::swap_max_m >= 1, "swap_max_m must be at least 1");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  // setmaxnreg moves registers between the warpgroups within what the block gets at launch (hopper.cuh).
  static_assert(setmaxnreg_fits(Config::producer_registers, Config::consumer_registers, consumers),
                "producer_registers and consumer_registers must fit the registers the block gets at launch");
  static_assert(Config::max_cluster >= 1 && Config::max_cluster <= 8, "max_cluster must be 1 to 8 (portable clusters)");
  static_assert(Config::narrow_whole_max_k_tiles >= 0,
                "narrow_whole_max_k_tiles must be at least 0 (0: narrow tiles only where they split in k)");
  // reduce_in_cluster leaves each consumer's partial (groups float4 a thread) over the stages.
  static_assert(consumers * groups * warpgroup_threads * 16 <= stages * stage_bytes,
                "the partials of a cluster split must fit in the stages' shared memory");
};

// ---- Descriptors ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote
// (hopper.cuh: rows of 128 bytes in 1024-byte atoms, which must start 1024-byte aligned). Fields,
// in 16-byte units: start address (bits 0-13), leading-dimension byte offset (16-29),
// stride-dimension byte offset (32-45); swizzle mode 1 = 128 B (bits 62-63). What the two offsets
// mean depends on the operand's major-ness (13's README):
//   K-major (A's tile, wgmma's B here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B's tile, wgmma's A here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                                        one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// The descriptors of one consumer's operands in stage 0, k-step 0. wgmma's A operand is this
// consumer's 64 columns of B (its own 64-column box, MN-major: 128-byte rows of 64 n, one per k); its
// B operand is A's tile (K-major: width rows of 64 k).
struct StageDescriptors {
  std::uint64_t b, a;
};
template <class L>
__device__ __forceinline__ StageDescriptors stage0_descriptors(const unsigned char* a_tile0,
                                                               const unsigned char* b_tile0, int consumer) {
  // LAB BEGIN descriptors
  return {matrix_descriptor(b_tile0 + consumer * L::b_box_bytes, L::b_box_bytes, swizzle_atom_bytes),
          matrix_descriptor(a_tile0, 16, swizzle_atom_bytes)};
  // LAB END
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64n{width}k16
// of Cᵀ = Bᵀ·Aᵀ, from the stage's descriptors. k-step kk lies 16 rows of 128 bytes further into B's
// box and 32 bytes further into each row of A's tile: an addition to the descriptors' start address
// (in 16-byte units, which nothing carries out of: shared memory is below 256 KiB). With a narrow n,
// a wgmma is a few cycles of tensor-core work, so the instructions around it set the pace: nothing
// here is computed per k-step but that addition (13's README: the counters). The caller commits the
// group and waits for it.
// EXCERPT BEGIN multiply_stage
template <class L>
__device__ __forceinline__ void multiply_stage(float (&acc)[L::accumulators], StageDescriptors stage) {
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < L::block_tile_k / wgmma_k; ++kk)
    wgmma_m64nk16_a_mn_major<L::block_tile_m>(acc, stage.b + (kk * wgmma_k * swizzle_bytes >> 4),
                                              stage.a + (kk * wgmma_k * 2 >> 4));
}
// EXCERPT END multiply_stage

// ---- Write back -----------------------------------------------------------------------------------

// Writes `groups` groups of 8 rows of C from one consumer's accumulators, transposed: the consumer
// holds Cᵀ's rows col0 … col0 + 63 (columns of C) × columns row0 … (rows of C) in wgmma's layout
// (warp w: rows 16w … 16w + 15 of its 64; in group jj, lane l holds columns 8jj + 2(l % 4) + {0, 1} of
// row 16w + l/4, v[4jj], v[4jj + 1], and of the row 8 below, v[4jj + 2], v[4jj + 3]). So element
// (r, c) of the accumulators is C[row0 + c][col0 + r]: the 8 lanes of a lane group l % 4 write 8
// consecutive floats of one row of C (32 bytes, one sector). alpha·v + beta·C (beta == 0: C is not
// read), only inside C. No staging: C is a few rows, and every byte of DRAM time goes to B.
template <int groups>
__device__ __forceinline__ void store_transposed(const float (&v)[4 * groups], const GemmProblem<__half>& p,
                                                 long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
  // LAB BEGIN store_transposed
#pragma unroll
  for (int jj = 0; jj < groups; ++jj) {
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long col = col0 + warp * 16 + lane / 4 + half * 8;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const long long row = row0 + jj * 8 + 2 * (lane % 4) + e;
        const bool in_c = row < p.m && col < p.n;  // only what lies inside C is written
        if (in_c) store_c(p.c + row * p.ldc + col, v[4 * jj + 2 * half + e], p.alpha, p.beta);
      }
    }
  }
  // LAB END
}

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "13_swap_ab", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{"13_swap_ab", "producer", "empty",
                                 "the stage was never released: does one lane of every consumer warp arrive on "
                                 "empty[s], as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "13_swap_ab", "consumer", "flags",
      "a partial sum was never published: do writer and reader compute the same slot (Schedule::slot), "
      "does every unit publish its partials before it waits for others', are all blocks resident?"};
};

// ---- The sum of a split tile, in the cluster ------------------------------------------------------

// How a launch splits K when one wave holds every tile: `parts` blocks per tile make one cluster,
// block `rank` of the cluster taking k-slices [rank·k_tiles / parts, (rank + 1)·k_tiles / parts).
struct ClusterSplit {
  int parts;    // blocks per tile, the cluster's size (1: whole tiles, no cluster)
  int k_tiles;  // 64-wide k-slices of the problem
};

// The sum of a tile split over a cluster, in the cluster's shared memory rather than a workspace in
// global memory: no partial makes a round trip to L2, no flag is polled. Each block leaves its
// accumulators in its own stages (idle now: every copy has landed and been multiplied), the cluster
// meets at a barrier, and each block adds up the pieces it owns (a piece: 8 rows of C × one
// consumer's 64 columns; piece i of consumer c belongs to block (c·groups + i) mod parts), reading
// every block's partial in the order of their ranks (the same sum in every run), and writes them. A
// second barrier keeps each block's shared memory alive until the others have read it. The producer
// warpgroup meets both barriers too (cluster_barriers_of_the_reduction): a cluster barrier counts
// every thread.
template <class L>
__device__ __forceinline__ void reduce_in_cluster(const float (&acc)[L::accumulators], float4* partials, int consumer,
                                                  int parts, const GemmProblem<__half>& p, long long row0,
                                                  long long col0) {
  const int t = threadIdx.x % warpgroup_threads;
  float4* mine = partials + consumer * L::groups * warpgroup_threads + t;  // float4 i of thread t: i·128 + t
#pragma unroll
  for (int i = 0; i < L::groups; ++i)
    mine[i * warpgroup_threads] = make_float4(acc[4 * i], acc[4 * i + 1], acc[4 * i + 2], acc[4 * i + 3]);
  cluster_arrive();
  cluster_wait();
  const int rank = int(cluster_rank());
#pragma unroll 1
  for (int i = (rank - consumer * L::groups % parts + parts) % parts; i < L::groups; i += parts) {
    float4 part[L::max_cluster];  // every block's float4, loaded together: one round trip, then the sums in order
#pragma unroll
    for (int q = 0; q < L::max_cluster; ++q)
      if (q < parts) part[q] = load_shared_in_block(mine + i * warpgroup_threads, q);
    float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
    for (int q = 0; q < L::max_cluster; ++q)
      if (q < parts) sum[0] += part[q].x, sum[1] += part[q].y, sum[2] += part[q].z, sum[3] += part[q].w;
    store_transposed<1>(sum, p, row0 + i * 8, col0);
  }
  cluster_arrive();
  cluster_wait();
}

// The producer warpgroup's side of reduce_in_cluster's two barriers.
__device__ __forceinline__ void cluster_barriers_of_the_reduction() {
  __syncwarp();
  cluster_arrive();
  cluster_wait();
  cluster_arrive();
  cluster_wait();
}

// ---- The kernel -----------------------------------------------------------------------------------

// One kernel, two ways to share out the work: 11's schedule (s: whole tiles and aligned k-parts over
// resident blocks, a fixup through the workspace), or with cluster_split one (tile, k-part) per block,
// the parts of a tile a cluster that adds them up in shared memory (split; every tile in one wave).
// chained: launched as a link of a chain of layers (programmatic dependent launch), the kernel ahead
// of it in the stream still running (a template parameter: its few instructions would cost the
// producer's 40 registers a spill in every launch).
template <class Config, int width, bool shared_c, bool cluster_split, bool chained = false>
__global__ void __launch_bounds__(Layout<Config, width, shared_c>::threads, 1)
    swap_ab_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                 const __grid_constant__ GemmProblem<__half> p, const __grid_constant__ Schedule s,
                 const __grid_constant__ ClusterSplit split) {
  using L = Layout<Config, width, shared_c>;
  constexpr int block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k, stages = L::stages;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int stage) { return shared + stage * L::stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * L::stage_bytes + L::a_tile_bytes; };
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(shared + stages * L::stage_bytes);
  std::uint64_t* empty = full + stages;
  float* c_buffers = reinterpret_cast<float*>(empty + stages);  // shared_c: two groups of rows per consumer

  // A block tile is width rows × 128 columns of C; tile t is the t-th in grouped order (one row of
  // tiles unless M > width, a variant's case).
  const int tiles_m = int(ceil_div(p.m, width)), tiles_n = int(ceil_div(p.n, block_tile_n));
  auto tile_origin = [&](long long t) {
    const TileIndex tile = grouped_tile(t, tiles_m, tiles_n, L::group_rows);
    return TileOrigin{(long long)tile.row * width, (long long)tile.col * block_tile_n};
  };

  // LAB BEGIN barriers [hard, repeats 09]
  if (threadIdx.x == 0) {
    for (int stage = 0; stage < stages; ++stage) {
      mbarrier_init(&full[stage], 1);                                      // the producer's arrive, plus bytes
      mbarrier_init(&empty[stage], L::consumers * L::warps_per_consumer);  // every consumer warp
    }
    fence_barrier_init();
  }
  __syncthreads();
  // LAB END
  // A chain of layers (chained: programmatic dependent launch): the next kernel in the stream may start
  // now; its blocks take SMs as this kernel's leave them.
  if constexpr (chained) allow_next_grid_to_start();

  // The segments of this block, in order: 11's walk, or its one part of one tile.
  auto cluster_segment = [&] {
    const int part = int(blockIdx.x) % split.parts;
    return Segment{int(blockIdx.x) / split.parts, part * split.k_tiles / split.parts,
                   (part + 1) * split.k_tiles / split.parts, 0};
  };
  auto for_each_segment = [&](auto&& f) {
    if constexpr (cluster_split) {
      f(cluster_segment());
    } else {
      Segment segment;
      for (Walk walk(s, blockIdx.x, gridDim.x); walk.next(segment);) f(segment);
    }
  };
  auto first_segment = [&](Segment& segment) {  // false: the block has none
    if constexpr (cluster_split) {
      segment = cluster_segment();
      return true;
    } else {
      return Walk(s, blockIdx.x, gridDim.x).next(segment);
    }
  };

  const int warpgroup = threadIdx.x / warpgroup_threads;
  if (warpgroup == 0) {
    // ---- Producer: copies for every segment of the walk, `stages` slices ahead of the consumers ---
    setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      prefetch_tensor_map(a_map);
      prefetch_tensor_map(b_map);
      int stage = 0, phase = 0;  // the ring of stages, over all segments: phase flips at each wrap
      // Chained, B (a layer's weights) does not depend on the kernel ahead of this one, A (its
      // activations) does: before the walk, the ring fills with the first segment's B at once, and
      // then with its A, once that kernel has finished. A stage's first use needs no wait for `empty`.
      // (Apart from the walk, so that the walk's state is not live across it: the producer has 40
      // registers.)
      int skip = 0;  // slices of the first segment copied before the walk
      if constexpr (chained) {
        Segment first;
        if (first_segment(first)) {
          const TileOrigin origin = tile_origin(first.tile);
          skip = min(stages, first.k_end - first.k_begin);
          for (int ahead = 0; ahead < skip; ++ahead) {
            std::uint64_t* const landed = &full[ahead];  // the stage's barrier: A's bytes too, copied below
            const int k_origin = (first.k_begin + ahead) * block_tile_k;
            mbarrier_arrive_expect_bytes(landed, L::stage_bytes);
            auto box = b_tile(ahead);
#pragma unroll
            for (int j = 0; j < L::b_boxes; ++j, box += L::b_box_bytes)
              tma_load_2d(box, b_map, landed, int(origin.col) + j * swizzle_halves, k_origin);
          }
          wait_for_previous_grid();
          for (int ahead = 0; ahead < skip; ++ahead)
            tma_load_2d(a_tile(ahead), a_map, &full[ahead], (first.k_begin + ahead) * block_tile_k, int(origin.row));
          stage = skip % stages, phase = skip / stages;
        }
      }
      for_each_segment([&](const Segment& segment) {
        const TileOrigin origin = tile_origin(segment.tile);
        int kt = segment.k_begin + skip;
        skip = 0;
        for (; kt < segment.k_end; ++kt) {
          // LAB BEGIN producer [hard, repeats 09]
          mbarrier_wait<EmptyWait>(&empty[stage], phase ^ 1, stage);  // first use: parity 1 counts as complete
          const int k0 = kt * block_tile_k;
          // LAB BEGIN arm_and_copy [easy, repeats 09]
          // A's box: width rows × 64 k (rows below M arrive as zeros); B's: 64 k × 64 columns per consumer.
          mbarrier_arrive_expect_bytes(&full[stage], L::stage_bytes);
          tma_load_2d(a_tile(stage), a_map, &full[stage], k0, int(origin.row));
#pragma unroll
          for (int j = 0; j < L::b_boxes; ++j)
            tma_load_2d(b_tile(stage) + j * L::b_box_bytes, b_map, &full[stage], int(origin.col) + j * swizzle_halves,
                        k0);
          // LAB END
          // LAB END
          if (++stage == stages) stage = 0, phase ^= 1;
        }
      });
    }
    if (cluster_split && split.parts > 1) cluster_barriers_of_the_reduction();
  } else {
    // ---- Consumers: for each segment, the K loop, then the write-back or the fixup -----------------
    setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;                         // columns consumer·64 … +63 of the block tile
    const int lane = threadIdx.x % 32, barrier = 1 + consumer;  // barrier: this warpgroup's named barrier
    auto release = [&](int stage) {
      // LAB BEGIN release_stage [easy, repeats 10]
      if (lane == 0) mbarrier_arrive(&empty[stage]);
      // LAB END
    };
    // The fixup the configuration names (split_k_schedule.cuh) for this warpgroup: partials of `groups` float4 a
    // thread, pieces of one group (8 rows of C × the consumer's 64 columns), each written transposed.
    using ConfigFixup =
        typename Config::fixup::template type<stream_k::Partials<1, L::consumers, L::groups, 1, FlagWait>>;
    ConfigFixup fixup(consumer, barrier);

    // The ring of stages, as the producer walks it; the descriptors of stage 0 (stage s: s·stage_bytes further).
    int stage = 0, phase = 0, previous = 0;
    const StageDescriptors stage0 = stage0_descriptors<L>(a_tile(0), b_tile(0), consumer);
    constexpr std::uint64_t stage_step = L::stage_bytes >> 4;
    float acc[L::accumulators];
    for_each_segment([&](const Segment& segment) {
      const TileOrigin origin = tile_origin(segment.tile);
#pragma unroll
      for (int i = 0; i < L::accumulators; ++i) acc[i] = 0.0f;
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt) {
        // LAB BEGIN wait_full [hard, repeats 09]
        mbarrier_wait<FullWait>(&full[stage], phase, stage);
        // LAB END
        multiply_stage<L>(acc, {stage0.b + stage * stage_step, stage0.a + stage * stage_step});
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        if (kt > segment.k_begin) release(previous);
        previous = stage;
        if (++stage == stages) stage = 0, phase ^= 1;
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      release(previous);  // the segment's last slice; the producer is already on the next
      // Chained, the kernel ahead must have finished before this one writes C or the workspace (it may
      // read them). No wait is needed here: this segment's products waited for A, which the producer
      // copies only once that kernel has finished (wait_for_previous_grid: its writes are then visible
      // to the whole grid).

      if constexpr (cluster_split) {
        if (split.parts > 1) {
          // Both consumers are done reading the stages (their products waited for) before either
          // writes its partial over them.
          named_barrier_sync<L::consumers * warpgroup_threads>(L::consumers + 1);
          reduce_in_cluster<L>(acc, reinterpret_cast<float4*>(shared), consumer, split.parts, p, origin.row,
                               origin.col + consumer * wgmma_m);
        } else {
          store_transposed<L::groups>(acc, p, origin.row, origin.col + consumer * wgmma_m);
        }
      } else {
        // A whole tile (or one this unit fixes up alone) goes to C transposed: alpha·acc + beta·C, only
        // inside C; a piece of a shared fixup likewise, 8 rows of this tile's columns `half`.
        fixup.finish_segment(
            s, segment, acc,
            [&](const float(&sum)[L::accumulators]) {
              if constexpr (shared_c)
                store_through_shared<L>(sum, c_buffers + 2 * consumer * L::group_floats, barrier, p, origin.row,
                                        origin.col + consumer * wgmma_m);
              else
                store_transposed<L::groups>(sum, p, origin.row, origin.col + consumer * wgmma_m);
            },
            tile_origin,
            [&](const float(&sum)[4], const TileOrigin& piece, int half, int group) {
              store_transposed<1>(sum, p, piece.row + group * 8, piece.col + half * wgmma_m);
            });
      }
    });
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

// TMA needs A's and B's base and row stride 16-byte aligned (lda and ldb multiples of 8). C is
// written with ordinary stores, which need nothing.
inline bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.lda) && tma_describable(p.b, p.ldb);
}

// Calls f with the width of block tile for M: the narrowest of 8, 16, 32, 64 and 128 that holds M rows
// (every width is a kernel to compile), 256 for any M above.
// EXCERPT BEGIN with_width
template <class F>
decltype(auto) with_width(int m, F&& f) {
  if (m <= 8) return f(std::integral_constant<int, 8>{});
  if (m <= 16) return f(std::integral_constant<int, 16>{});
  if (m <= 32) return f(std::integral_constant<int, 32>{});
  if (m <= 64) return f(std::integral_constant<int, 64>{});
  if (m <= 128) return f(std::integral_constant<int, 128>{});
  return f(std::integral_constant<int, 256>{});
}
// EXCERPT END with_width

// As many blocks as can be resident at once (one per SM: each takes most of the shared memory).
// Every unit must be resident: a unit waits for others' partials.
template <class Variant, int width, bool shared_c = false>
int resident() {
  using L = Layout<Variant, width, shared_c>;
  return resident_blocks<swap_ab_gemm<Variant, width, shared_c, false>>(L::threads, L::shared_bytes);
}

// How many clusters of `parts` blocks can be resident at once (read from the device once per size).
template <class Variant, int width>
int resident_clusters(int parts) {
  using L = Layout<Variant, width>;
  static std::array<int, L::max_cluster + 1> count = [] {
    std::array<int, L::max_cluster + 1> unknown;
    unknown.fill(-1);  // -1: not read yet (0 is an answer: no such cluster fits)
    return unknown;
  }();
  if (count[parts] < 0) {
    constexpr auto kernel = swap_ab_gemm<Variant, width, false, true>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    LaunchConfig config(parts, L::threads, L::shared_bytes, nullptr);
    count[parts] = max_active_clusters<kernel>(config.cluster(parts));
  }
  return count[parts];
}

// The cluster split of a shape at a width, or none (parts = 0): 11's schedule then. It needs every
// tile in one wave of one block per SM (no block waits for a block that is not running: no cluster
// waits for another); each tile gets as many parts as SMs allow (at most max_cluster, at most its
// k-slices), fewer if that many clusters of that size cannot be resident at once (clusters fill
// GPCs, and a GPC's SMs need not divide by the size).
template <class Variant, int width>
inline constexpr bool has_cluster_split = Variant::cluster_split&& width != 256;  // else no cluster kernel is built
template <class Variant, int width>
ClusterSplit cluster_split_of(int m, int n, int k) {
  using L = Layout<Variant, width>;
  const int k_tiles = int(ceil_div(k, L::block_tile_k));
  const long long tiles = ceil_div(m, width) * ceil_div(n, L::block_tile_n);
  if constexpr (!has_cluster_split<Variant, width>) {
    return {0, k_tiles};
  } else {
    if (tiles > multiprocessor_count()) return {0, k_tiles};
    int parts = int(std::min<long long>({multiprocessor_count() / tiles, L::max_cluster, k_tiles}));
    while (parts > 1 && resident_clusters<Variant, width>(parts) < tiles) --parts;
    return {parts, k_tiles};
  }
}

// Whether a shape runs at this width on tiles of 64 columns (Narrow, the configuration with
// block_tile_n = 64) rather than the configuration's 128: where both run every tile in one wave (the cluster kernel)
// and the narrow tiles keep at least as many SMs busy, each of their tiles then has half as many k-parts to add
// (13's README: narrower tiles). 4096 columns on 132 SMs: 32 tiles in 4 parts, or 64 tiles
// in 2, 128 SMs either way; 5120: 40 × 3 = 120 SMs against 80 × 1, which stays at 128 columns.
// Where the narrow tiles would not be split at all (6144 columns: 48 tiles in 2 parts, or 96
// whole), they take twice the slices of half the size in place of the cluster's sum: that pays
// only up to narrow_whole_max_k_tiles slices.
template <class Variant, class Narrow, int width>
bool narrow_pays(int m, int n, int k) {
  if constexpr (!Variant::narrow_where_it_pays || !has_cluster_split<Variant, width>) {
    return false;
  } else {
    const ClusterSplit wide = cluster_split_of<Variant, width>(m, n, k);
    const ClusterSplit narrow = cluster_split_of<Narrow, width>(m, n, k);
    if (wide.parts == 0 || narrow.parts == 0) return false;
    if (narrow.parts == 1 && narrow.k_tiles > Variant::narrow_whole_max_k_tiles) return false;
    // Busy SMs: tiles × parts (the tiles' rows, ⌈m / width⌉, are the same for both).
    return ceil_div(n, Narrow::block_tile_n) * narrow.parts >= ceil_div(n, Variant::block_tile_n) * wide.parts;
  }
}

// Calls f(width, tile) with the width M picks (with_width) and, in tile::type, the configuration
// whose block tile narrow_pays picks (Variant or Narrow): the launch, the chained launch and the
// workspace all ask this function, so they agree on the kernel.
template <class Variant, class Narrow, class F>
decltype(auto) with_tile(Shape s, F&& f) {
  return with_width(s.m, [&](auto width) {
    if (narrow_pays<Variant, Narrow, width>(s.m, s.n, s.k)) return f(width, std::common_type<Narrow>{});
    return f(width, std::common_type<Variant>{});
  });
}

// The schedule of a shape on `resident` blocks (11's, stream_k_schedule.cuh): tiles of width rows × 128
// columns; a slot holds one partial (64 × width FP32) per consumer.
template <class Variant, int width>
stream_k::Plan plan_schedule(int m, int n, int k, int resident) {
  using L = Layout<Variant, width>;
  return stream_k::plan_schedule<Variant>(ceil_div(m, width) * ceil_div(n, L::block_tile_n),
                                          int(ceil_div(k, L::block_tile_k)), resident, L::consumers,
                                          L::groups * warpgroup_threads * sizeof(float4));
}

// Bytes of the swap kernel's workspace for a shape, at the width M picks: one partial (64 × width
// FP32) and one flag per (slot, consumer). The step's aligned parts: one slot per unit, at most one
// unit per resident block: at most 132 × 2 × 32 KiB = 8.25 MiB at width 128 on a GPU of 132 SMs, 132
// × 2 × 4 KiB = 1 MiB at width 16. The even deal (a variant): two slots per unit, twice that;
// swap_all at width 256: 64 KiB partials, 33 MiB. None where the strides send the problem to 08.
template <class Variant, int width>
std::size_t swapped_workspace_at(Shape shape, Strides strides) {
  if (strides.lda % 8 != 0 || strides.ldb % 8 != 0) return 0;
  if (cluster_split_of<Variant, width>(shape.m, shape.n, shape.k).parts > 0) return 0;  // sums in shared memory
  const stream_k::Plan plan = plan_schedule<Variant, width>(shape.m, shape.n, shape.k, resident<Variant, width>());
  return plan.partial_bytes + plan.flag_bytes;
}
template <class Variant, class Narrow>
std::size_t swapped_workspace_bytes(Shape shape, Strides strides) {
  return with_tile<Variant, Narrow>(shape, [&](auto width, auto tile) {
    return swapped_workspace_at<typename decltype(tile)::type, width>(shape, strides);
  });
}

// The swap kernel at one width, A and B TMA-describable; at width 256 with more than
// shared_c_tiles_per_block tiles a block, the one that writes C through shared memory: there C's stores
// stream behind the next tile's loads, while with a wave or two the round trip would end the kernel.
// chained: a programmatic dependent launch, the kernel free to start before the one ahead of it in
// the stream has finished (launch_chained; M ≤ 128, so never at width 256).
template <class Variant, int width, bool chained = false>
void launch_swapped_at(const GemmProblem<__half>& p, cudaStream_t stream) {
  // A: M rows × K, copied in boxes of width rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const auto tensor_maps = [&](int box_k) {
    return std::pair{make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda, width, swizzle_halves,
                                        CU_TENSOR_MAP_SWIZZLE_128B),
                     make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb, box_k, swizzle_halves,
                                        CU_TENSOR_MAP_SWIZZLE_128B)};
  };
  const long long tiles = ceil_div(p.m, width) * ceil_div(p.n, Variant::block_tile_n);
  if constexpr (has_cluster_split<Variant, width>) {
    if (const ClusterSplit split = cluster_split_of<Variant, width>(p.m, p.n, p.k); split.parts > 0) {
      using L = Layout<Variant, width>;
      constexpr auto kernel = swap_ab_gemm<Variant, width, false, true, chained>;
      arm_watchdog();
      allow_dynamic_shared_memory<kernel>(L::shared_bytes);
      LaunchConfig config(tiles * split.parts, L::threads, L::shared_bytes, stream);
      config.cluster(split.parts).programmatic(chained);
      const auto [a_map, b_map] = tensor_maps(L::block_tile_k);
      CUDA_CHECK(cudaLaunchKernelEx(config.get(), kernel, a_map, b_map, p, Schedule{}, split));
      WORKLOG_CHECK_LAUNCH();
      return;
    }
  }
  const auto launch_kernel = [&](auto shared_c) {
    using L = Layout<Variant, width, shared_c>;
    constexpr bool chained_walk = chained && width != 256;  // (launch_chained never passes an M above 128)
    constexpr auto kernel = swap_ab_gemm<Variant, width, shared_c, false, chained_walk>;
    arm_watchdog();
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    stream_k::Plan plan = plan_schedule<Variant, width>(p.m, p.n, p.k, resident<Variant, width, shared_c>());
    stream_k::attach_workspace(plan, p, "13_swap_ab");
    const auto [a_map, b_map] = tensor_maps(L::block_tile_k);
    LaunchConfig config(plan.workers, L::threads, L::shared_bytes, stream);
    config.programmatic(chained_walk);
    CUDA_CHECK(cudaLaunchKernelEx(config.get(), kernel, a_map, b_map, p, plan.schedule, ClusterSplit{1, 0}));
    WORKLOG_CHECK_LAUNCH();
  };
  if constexpr (width == 256)
    if (tiles > (long long)Variant::shared_c_tiles_per_block * resident<Variant, width>())
      return launch_kernel(std::true_type{});
  launch_kernel(std::false_type{});
}
// ... and at the width and tile with_tile picks.
template <class Variant, class Narrow, bool chained = false>
void launch_swapped(const GemmProblem<__half>& p, cudaStream_t stream) {
  with_tile<Variant, Narrow>(shape_of(p), [&](auto width, auto tile) {
    launch_swapped_at<typename decltype(tile)::type, width, chained>(p, stream);
  });
}

}  // namespace worklog::swap_ab
