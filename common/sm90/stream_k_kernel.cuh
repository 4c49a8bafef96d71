// The split-K kernel (step 11's idea; its README teaches it): a template over its configuration
// (block tile, stages, cluster, the schedule's rule and fixup). 10's warp-specialized persistent
// kernel (a TMA producer warpgroup, one wgmma consumer warpgroup per 64 rows, clusters that share B
// by multicast, a staged TMA-store epilogue) walking the schedule of split_k_schedule.cuh, and its
// launch on problems TMA can describe (tma_path_possible: the caller sends the others elsewhere).
//
// A configuration gives: block_tile_m (64 or 128), block_tile_n (64, 128, 192 or 256: a wgmma's n),
// block_tile_k (64), stages, group_rows, producer_registers, consumer_registers, cluster_size (1 or
// 2), c_buffers, and the schedule's: rule, fixup_slices and fixup (split_k_schedule.cuh).
// Layout derives the rest and checks each knob by name.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>
#include <stdexcept>

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "sm90/split_k_schedule.cuh"
#include "sm90/staged_store.cuh"
#include "step.hpp"
#include "swizzle.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog::stream_k {

using namespace hopper;

// ---- Layout ---------------------------------------------------------------------------------------

// What a configuration implies, and the checks that name the knob at fault.
template <class Config>
struct Layout : Config {
  static constexpr int consumers = Config::block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = Config::block_tile_m * Config::block_tile_k * 2;
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // A consumer's accumulators: its 64 rows × block_tile_n FP32, block_tile_n / 2 per thread (128 at
  // 256 columns), written back in chunks of 64 rows × 32 columns (one 128-byte swizzled row each)
  // through c_buffers buffers of its own. The fixup (split_k_schedule.cuh) stores all of them as a partial,
  // float4s per thread (64 KiB at 256 columns); a piece is one chunk, float4s 4c … 4c+3.
  static constexpr int accumulators = Config::block_tile_n / 2;
  static constexpr int float4s = accumulators / 4;
  static constexpr int c_chunk_cols = swizzle_bytes / sizeof(float);  // 32
  static constexpr int c_chunk_bytes = wgmma_m * swizzle_bytes;       // 8 KiB
  static constexpr int chunks = Config::block_tile_n / c_chunk_cols;  // chunks per consumer's rows
  static constexpr int c_staging_bytes = consumers * Config::c_buffers * c_chunk_bytes;
  // Stages, the C staging buffers, then the 2·stages barriers, plus slack to align the start to a
  // swizzle atom.
  static constexpr int shared_bytes =
      Config::stages * stage_bytes + c_staging_bytes + 2 * Config::stages * 8 + swizzle_atom_bytes;

  // Three or four consumers (192 or 256 rows) would leave each thread 104 to 152 registers: ptxas
  // spills in the K loop (15's README: the menu).
  static_assert(Config::block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(Config::block_tile_n % swizzle_halves == 0 && b_boxes >= 1 && b_boxes <= 4,
                "block_tile_n must be 64, 128, 192 or 256: whole 64-column boxes of B, a wgmma's n");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(Config::stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  static_assert(Config::cluster_size == 1 || Config::cluster_size == 2,
                "cluster_size must be 1 or 2 (blocks sharing B)");
  static_assert(b_boxes % Config::cluster_size == 0, "cluster_size must divide the boxes of a B slice");
  static_assert(Config::c_buffers >= 1, "c_buffers must be at least 1");
  // setmaxnreg moves registers between the warpgroups within what the block gets at launch (hopper.cuh).
  static_assert(setmaxnreg_fits(Config::producer_registers, Config::consumer_registers, consumers),
                "producer_registers and consumer_registers must fit the registers the block gets at launch");
  static_assert(Config::consumer_registers >= accumulators + 40,
                "block_tile_n / 2 accumulators must leave a consumer about 40 registers (fewer columns)");
};

// ---- Descriptors ----------------------------------------------------------------------------------

// A shared-memory matrix descriptor for a tile stored with the 128-byte swizzle that TMA wrote
// (hopper.cuh: rows of 128 bytes in 1024-byte atoms, which must start 1024-byte aligned). Fields,
// in 16-byte units: start address (bits 0-13), leading-dimension byte offset (16-29),
// stride-dimension byte offset (32-45); swizzle mode 1 = 128 B (bits 62-63). What the two offsets
// mean depends on the operand's major-ness (11's README):
//   K-major (A here):  stride = 1024 B from one 8-row group to the next; leading unused (set to 1).
//   MN-major (B here): stride = 1024 B from one group of 8 k-rows to the next; leading = bytes from
//                      one 64-element-wide column block to the next.
__device__ __forceinline__ std::uint64_t matrix_descriptor(const void* tile, std::uint32_t leading_bytes,
                                                           std::uint32_t stride_bytes) {
  return std::uint64_t((shared_address(tile) & 0x3FFFF) >> 4) | std::uint64_t((leading_bytes >> 4) & 0x3FFF) << 16 |
         std::uint64_t((stride_bytes >> 4) & 0x3FFF) << 32 | std::uint64_t(1) << 62;
}

// Issues the products of one stage for one consumer warpgroup: block_tile_k / 16 wgmma.m64nNk16 (N =
// block_tile_n: 256 in 11's), each this warpgroup's 64 rows of the A tile (K-major, 128-byte
// swizzled rows of 64 k) times 16 rows of the B tile (MN-major: 64-column boxes of 128-byte rows,
// b_box_bytes apart), into acc, from the stage's descriptors (the kernel's a_desc0 and b_desc0, one
// stage further each stage). k-step kk lies 32 bytes further into each row of A and 16 rows of 128
// bytes further into B: an addition to the descriptors' start address, in 16-byte units, which
// nothing carries out of (shared memory is below 256 KiB). With a narrow tile a wgmma is little
// tensor-core work, and the instructions around it set the pace. The caller commits the group and
// waits for it.
template <class L>
__device__ __forceinline__ void multiply_stage(float (&acc)[L::accumulators], std::uint64_t a_desc,
                                               std::uint64_t b_desc) {
  wgmma_fence();
  fence_registers(acc);
#pragma unroll
  for (int kk = 0; kk < L::block_tile_k / wgmma_k; ++kk)
    wgmma_m64nk16<L::block_tile_n, 0, 1>(acc, a_desc + (kk * wgmma_k * 2 >> 4),
                                         b_desc + (kk * wgmma_k * swizzle_bytes >> 4));  // A K-major, B MN-major
}

// ---- Write back -----------------------------------------------------------------------------------
// A tile goes to C through shared memory, 64 × 32 chunk by chunk (staged_store.cuh): whole with
// store_accumulators_staged, one chunk with store_chunk_staged.

// What the watchdog says when a wait never ends (watchdog.cuh). It names the step that teaches this
// kernel, whichever step runs it: the text is compiled into the kernel's code (the watchdog's report
// copies it character by character), so a name of its own per step would be a kernel of its own.
struct FullWait {
  static constexpr WaitSite site{
      "11_split_k", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{
      "11_split_k", "producer", "empty",
      "the stage was never released: does one lane of every consumer warp of the cluster arrive on empty[s] of "
      "every block, as its count at init says?"};
};
struct FlagWait {
  static constexpr WaitSite site{
      "11_split_k", "consumer", "flags",
      "a partial sum was never published: do writer and reader compute the same slot (Schedule::slot), "
      "does every unit publish its partials before it waits for others', are all clusters resident?"};
};

// ---- The kernel -----------------------------------------------------------------------------------

template <class Config>
__global__ void __launch_bounds__(Layout<Config>::threads, 1)
    stream_k_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                  const __grid_constant__ CUtensorMap c_map, const __grid_constant__ GemmProblem<__half> p,
                  const __grid_constant__ Schedule schedule) {
  using L = Layout<Config>;
  constexpr int block_tile_m = L::block_tile_m, block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k;
  constexpr int stages = L::stages, cluster_size = L::cluster_size;
  extern __shared__ unsigned char shared_raw[];
  // Swizzle atoms must be 1024-byte aligned: round the dynamic shared memory's start up.
  unsigned char* shared =
      reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + swizzle_atom_bytes - 1) &
                                       ~std::uintptr_t(swizzle_atom_bytes - 1));
  auto a_tile = [&](int s) { return shared + s * L::stage_bytes; };
  auto b_tile = [&](int s) { return shared + s * L::stage_bytes + L::a_tile_bytes; };
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

  // LAB BEGIN barriers [hard, repeats 09 10]
  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);  // the local producer's arrive, plus the bytes of every copy into us
      mbarrier_init(&empty[s],
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
      for (Walk walk(schedule, cluster, clusters); walk.next(segment);) {
        const TileOrigin origin = tile_origin(segment.tile);
        for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
          const int s = slice % stages, use = slice / stages;
          // LAB BEGIN producer [hard, repeats 09 10]
          // First use: parity 1 counts as complete.
          mbarrier_wait<EmptyWait>(&empty[s], (use & 1) ^ 1, s);
          const int k0 = kt * block_tile_k;
          // LAB BEGIN arm_and_copy [easy, repeats 09 10]
          // Arm full[s] for the whole stage (every byte lands here, the peer's multicast included),
          // copy this block's A box, then its share of the B slice, multicast to the cluster.
          mbarrier_arrive_expect_bytes(&full[s], L::stage_bytes);
          tma_load_2d(a_tile(s), a_map, &full[s], k0, int(origin.row));
          // This block's boxes are rank·boxes … +boxes−1. The loop counts them from 0: a constant
          // trip count, fully unrolled. With bounds that depend on rank (10's form), the loop's end
          // was one more value kept across the whole walk, which the producer's 40 registers did not
          // hold: ptxas spilled it and reloaded it (LDL) in every slice.
          constexpr int boxes = L::b_boxes / cluster_size;  // per block
#pragma unroll
          for (int box = 0; box < boxes; ++box) {
            const int j = int(rank) * boxes + box;
            if constexpr (cluster_size > 1)
              tma_load_2d_multicast(b_tile(s) + j * L::b_box_bytes, b_map, &full[s],
                                    int(origin.col) + j * swizzle_halves, k0, std::uint16_t((1u << cluster_size) - 1u));
            else
              tma_load_2d(b_tile(s) + j * L::b_box_bytes, b_map, &full[s], int(origin.col) + j * swizzle_halves, k0);
          }
          // LAB END
          // LAB END
        }
      }
    }
  } else {
    // ---- Consumers: for each segment, the K loop of step 09, then the write-back or the fixup -----
    setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    const int t = threadIdx.x % warpgroup_threads, lane = threadIdx.x % 32;
    const int barrier = 1 + consumer;  // this warpgroup's named barrier
    unsigned char* buffers = c_staging + consumer * L::c_buffers * L::c_chunk_bytes;
    // A stage is released by one lane per consumer warp, on the empty barrier of every block of the
    // cluster (its own included): the producers of all of them write into this stage.
    auto release = [&](int s) {
      // LAB BEGIN release_in_every_block [easy, repeats 10]
      if (lane == 0) {
        if constexpr (cluster_size > 1) {
#pragma unroll
          for (int r = 0; r < cluster_size; ++r) mbarrier_arrive_in_block(&empty[s], r);
        } else {
          mbarrier_arrive(&empty[s]);
        }
      }
      // LAB END
    };
    // The fixup the configuration names (split_k_schedule.cuh) for this warpgroup: partials of all its
    // accumulators (32 float4 a thread at 256 columns), pieces of one 64 × 32 chunk (4 float4 a thread)
    // where a fixup writes a tile in pieces, each written by the staged epilogue.
    using ConfigFixup =
        typename Config::fixup::template type<Partials<cluster_size, L::consumers, L::float4s, 4, FlagWait>>;
    ConfigFixup fixup(consumer, barrier);

    // Stage 0's descriptors; stage s's lie s · stage_bytes further. A: this consumer's 64 rows (64 ·
    // 128 bytes further), the leading offset unused with this swizzle, the stride one 8-row atom. B:
    // the leading offset is the distance from one 64-column box to the next, the stride one atom of
    // 8 k-rows.
    const std::uint64_t a_desc0 =
        matrix_descriptor(a_tile(0) + consumer * wgmma_m * swizzle_bytes, 16, swizzle_atom_bytes);
    const std::uint64_t b_desc0 = matrix_descriptor(b_tile(0), L::b_box_bytes, swizzle_atom_bytes);
    constexpr std::uint64_t stage_step = L::stage_bytes >> 4;  // from one stage's descriptors to the next
    int slice = 0;
    unsigned stored = 0;  // chunks written through the staging buffers (unsigned: % c_buffers without a sign fix)
    float acc[L::accumulators];
    Segment segment;
    for (Walk walk(schedule, cluster, clusters); walk.next(segment);) {
      const TileOrigin origin = tile_origin(segment.tile);
#pragma unroll
      for (int i = 0; i < L::accumulators; ++i) acc[i] = 0.0f;
      for (int kt = segment.k_begin; kt < segment.k_end; ++kt, ++slice) {
        const int s = slice % stages, use = slice / stages;
        // LAB BEGIN wait_full [hard, repeats 09 10]
        mbarrier_wait<FullWait>(&full[s], use & 1, s);
        // LAB END
        multiply_stage<L>(acc, a_desc0 + s * stage_step, b_desc0 + s * stage_step);
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        // LAB BEGIN release_previous_slice [hard, repeats 10]
        if (kt > segment.k_begin) release((slice - 1) % stages);
        // LAB END
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      // LAB BEGIN release_last_slice [hard, repeats 10]
      release((slice - 1) % stages);  // the segment's last slice; the producer is already on the next
      // LAB END

      // A whole tile (or one this unit fixes up alone) goes to C: alpha·acc + beta·C, only inside C;
      // a piece of a shared fixup likewise, a 64 × 32 chunk of rows `half`.
      fixup.finish_segment(
          schedule, segment, acc,
          [&](const float(&sum)[L::accumulators]) {
            // LAB BEGIN store_whole_tile
            store_accumulators_staged<L>(sum, p, c_map, buffers, stored, consumer, origin.row + consumer * wgmma_m,
                                         origin.col);
            // LAB END
          },
          tile_origin,
          [&](const float(&sum)[16], const TileOrigin& piece, int half, int chunk) {
            store_chunk_staged<L>(sum, p, c_map, buffers, stored, barrier, piece.row + half * wgmma_m,
                                  piece.col + chunk * L::c_chunk_cols);
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

// TMA needs A's and B's base and row stride 16-byte aligned (lda and ldb multiples of 8), and so does
// the TMA store of C (ldc a multiple of 4 floats); the store also writes whole 16-byte chunks, so a
// row of C must end on one (N a multiple of 4, as in 10). The caller sends other problems elsewhere.
inline bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.lda) && tma_describable(p.b, p.ldb) && tma_describable(p.c, p.ldc, sizeof(float)) &&
         p.n % 4 == 0;
}
// The same from the strides alone (for the workspace's size, before there are pointers).
inline bool tma_strides_possible(Shape shape, Strides strides) {
  return strides.lda % 8 == 0 && strides.ldb % 8 == 0 && strides.ldc % 4 == 0 && shape.n % 4 == 0;
}

// As many clusters as can be resident at once (read from the device: SM count, and how clusters fit
// into its GPCs). Every unit must be resident: a unit waits for others' partials.
template <class Config>
int resident_clusters() {
  static const int count = [] {
    using L = Layout<Config>;
    constexpr auto kernel = stream_k_gemm<Config>;
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    LaunchConfig config(L::cluster_size, L::threads, L::shared_bytes, nullptr);
    const int clusters = max_active_clusters<kernel>(config.cluster(L::cluster_size));
    if (clusters < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    return clusters;
  }();
  return count;
}

// The schedule of a shape on `resident` clusters (split_k_schedule.cuh): cluster tiles of cluster_size block
// tiles stacked vertically; a slot holds one partial (all of a consumer's accumulators) per block of
// the cluster and consumer.
template <class Config>
Plan plan_shape(int m, int n, int k, int resident) {
  using L = Layout<Config>;
  // LAB BEGIN plan_shape
  const long long tiles_m = ceil_div(m, L::block_tile_m), tiles_n = ceil_div(n, L::block_tile_n);
  return plan_schedule<Config>(ceil_div(tiles_m, L::cluster_size) * tiles_n, int(ceil_div(k, L::block_tile_k)),
                               resident, L::cluster_size * L::consumers,
                               L::float4s * warpgroup_threads * sizeof(float4));
  // LAB END
}

// Bytes of workspace for a shape on the TMA path: one partial and one flag per (slot, block,
// consumer): 256 KiB and 16 bytes per slot with 11's tile and clusters of 2 (its README: how many
// slots each rule needs).
template <class Config>
std::size_t tma_workspace_bytes(Shape shape) {
  const Plan plan = plan_shape<Config>(shape.m, shape.n, shape.k, resident_clusters<Config>());
  return plan.partial_bytes + plan.flag_bytes;
}

// C = alpha·A·B + beta·C by this kernel, on a problem TMA can describe (tma_path_possible); `step`
// names the caller in the workspace's errors.
template <class Config>
void launch_tma(const GemmProblem<__half>& p, cudaStream_t stream, const char* step) {
  using L = Layout<Config>;
  constexpr auto kernel = stream_k_gemm<Config>;
  arm_watchdog();
  Plan plan = plan_shape<Config>(p.m, p.n, p.k, resident_clusters<Config>());
  attach_workspace(plan, p, step);
  LaunchConfig config(plan.workers * L::cluster_size, L::threads, L::shared_bytes, stream);
  config.cluster(L::cluster_size);
  // A: M rows × K, copied in boxes of block_tile_m rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  // C: M rows × N FP32, written in boxes of 64 rows × 32 columns (128 bytes, swizzled).
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, p.ldc, wgmma_m,
                                               L::c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  CUDA_CHECK(cudaLaunchKernelEx(config.get(), kernel, a_map, b_map, c_map, p, plan.schedule));
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace worklog::stream_k
