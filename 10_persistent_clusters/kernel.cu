// Step 10 (Hopper) — persistent scheduling, grouped tile order, clusters with TMA multicast.
//
// Adds to 09: one block per SM walks a list of tiles (the barrier ring runs on across them), in
// grouped order; clusters of 2 blocks share each slice of B by multicast; C goes out through shared
// memory by TMA stores while the next tile's loads run.
// Why it helps: no block pays a launch or a tail of its own, L2 serves the shared panels, each block
// requests half of B, and the write-back overlaps the next tile.
//
// Run: build/bin/10_persistent_clusters --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "swizzle.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen.
// EXCERPT BEGIN config
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group, as in 07 to 09
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr bool staged_epilogue = true;   // C through shared memory and TMA stores, overlapping the next tile
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
};
// EXCERPT END config

// What the configuration implies, and the checks that name the knob at fault.
template <class Config>
struct Layout : Config {
  static constexpr int consumers = Config::block_tile_m / wgmma_m;  // consumer warpgroups, one per 64 rows
  static constexpr int threads = warpgroup_threads * (1 + consumers);
  static constexpr int a_tile_bytes = Config::block_tile_m * Config::block_tile_k * 2;
  static constexpr int b_box_bytes = Config::block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 columns
  static constexpr int b_boxes = Config::block_tile_n / swizzle_halves;
  static constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
  static constexpr int warps_per_consumer = warpgroup_threads / 32;
  // The staged write-back: each consumer writes its 64 × 256 FP32 part of C in chunks of 64 rows × 32
  // columns (one 128-byte swizzled row each), through c_buffers buffers of its own.
  static constexpr int c_chunk_cols = swizzle_bytes / sizeof(float);  // 32
  static constexpr int c_chunk_bytes = wgmma_m * swizzle_bytes;       // 8 KiB
  static constexpr int c_staging_bytes = Config::staged_epilogue ? consumers * Config::c_buffers * c_chunk_bytes : 0;
  // Stages, the C staging buffers, then the 2·stages barriers, plus slack to align the start to a
  // swizzle atom.
  static constexpr int shared_bytes =
      Config::stages * stage_bytes + c_staging_bytes + 2 * Config::stages * 8 + swizzle_atom_bytes;

  static_assert(Config::block_tile_m % wgmma_m == 0 && consumers >= 1 && consumers <= 2,
                "block_tile_m must be 64 or 128: one or two consumer warpgroups of 64 rows");
  static_assert(Config::block_tile_n == wgmma_n, "block_tile_n must be 256, the n of the wgmma used");
  static_assert(Config::block_tile_k == swizzle_halves, "block_tile_k must be 64: one 128-byte swizzled row of A");
  static_assert(Config::stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "stages × stage_bytes must fit in 227 KiB");
  static_assert(Config::group_rows >= 1, "group_rows must be at least 1 (1: row-major order)");
  static_assert(Config::cluster_size == 1 || Config::cluster_size == 2,
                "cluster_size must be 1 or 2 (blocks sharing B)");
  static_assert(b_boxes % Config::cluster_size == 0, "cluster_size must divide the 4 boxes of a B slice");
  static_assert(Config::c_buffers >= 1, "c_buffers must be at least 1");
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
}

// ---- Write back -----------------------------------------------------------------------------------

// Writes one warpgroup's m64n256 accumulators, alpha·acc + beta·C, to the 64 × 256 tile of C at
// (row0, col0), only inside C (beta == 0: C is not read). Needs N and ldc even and C 8-byte aligned
// (the TMA path's checks imply all three).
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
    if (col >= p.n) continue;  // N even, col even: col + 1 < N too
#pragma unroll
    for (int half = 0; half < 2; ++half) {
      const long long row = row_top + half * 8;
      if (row >= p.m) continue;
      float2* out = reinterpret_cast<float2*>(p.c + row * p.ldc + col);
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

// The staged write-back. Writes one consumer's accumulators (rows row0 … +63, columns col0 … +255
// of C) through shared memory: each chunk goes into a swizzled 64 × 32 buffer with ordinary stores,
// then one thread hands it to the copy engine (TMA store), which writes only what lies inside C. The
// consumer does not wait for the global writes: they drain while it multiplies the next tile. A
// buffer is reused only once the store issued from it c_buffers chunks earlier has finished reading it.
template <class L>
__device__ __forceinline__ void store_accumulators_staged(const float (&acc)[128], const GemmProblem<__half>& p,
                                                          const CUtensorMap& c_map, unsigned char* buffers,
                                                          int consumer, long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
  const bool elected = t == 0;
#pragma unroll
  for (int chunk = 0; chunk < wgmma_n / L::c_chunk_cols; ++chunk) {
    unsigned char* buffer = buffers + (chunk % L::c_buffers) * L::c_chunk_bytes;
    if (elected) bulk_store_wait_read<L::c_buffers - 1>();
    named_barrier_sync<warpgroup_threads>(1 + consumer);  // the buffer is free for every thread
#pragma unroll
    for (int jj = 0; jj < L::c_chunk_cols / 8; ++jj) {
      const int j = chunk * (L::c_chunk_cols / 8) + jj;  // 8-column group of the accumulator layout
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp * 16 + lane / 4 + half * 8, col = jj * 8 + 2 * (lane % 4);
        float2 value = make_float2(p.alpha * acc[4 * j + 2 * half], p.alpha * acc[4 * j + 2 * half + 1]);
        const long long c_row = row0 + row, c_col = col0 + chunk * L::c_chunk_cols + col;
        if (p.beta != 0.0f && c_row < p.m && c_col < p.n) {  // N even: c_col + 1 < N too
          const float2 old = *reinterpret_cast<const float2*>(p.c + c_row * p.ldc + c_col);
          value.x += p.beta * old.x;
          value.y += p.beta * old.y;
        }
        // The 128-byte swizzle TMA expects (hopper.cuh): 16-byte chunk k of row r at chunk k ^ (r % 8).
        const int byte = col * 4;
        const int swizzled = swizzled_chunk(row, byte / 16, swizzle_bytes / 16) * 16 + byte % 16;
        *reinterpret_cast<float2*>(buffer + row * swizzle_bytes + swizzled) = value;
      }
    }
    fence_proxy_async_shared();  // these ordinary stores, then the copy engine reads them
    named_barrier_sync<warpgroup_threads>(1 + consumer);
    if (elected) {
      tma_store_2d(c_map, buffer, int(col0) + chunk * L::c_chunk_cols, int(row0));
      bulk_store_commit();
    }
  }
}

// ---- The kernel -----------------------------------------------------------------------------------

// What the watchdog says when a wait never ends (watchdog.cuh).
struct FullWait {
  static constexpr WaitSite site{
      "10_persistent_clusters", "consumer", "full",
      "no copy arrived: are the stage's bytes announced (mbarrier_arrive_expect_bytes) and its "
      "TMA boxes issued?"};
};
struct EmptyWait {
  static constexpr WaitSite site{
      "10_persistent_clusters", "producer", "empty",
      "the stage was never released: does one lane of every consumer warp of the cluster arrive on empty[s] of "
      "every block, as its count at init says?"};
};

template <class Config>
__global__ void __launch_bounds__(Layout<Config>::threads, 1)
    persistent_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                    const __grid_constant__ CUtensorMap c_map, GemmProblem<__half> p) {
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

  // ---- The schedule: which tiles this block computes --------------------------------------------
  // A cluster computes a "cluster tile" of cluster_size block tiles stacked vertically; cluster c
  // takes cluster tiles c, c + clusters, c + 2·clusters, … in grouped order. Both blocks of a
  // cluster walk the same list (they share copies), even where one of them lies below C.
  const std::uint32_t rank = cluster_size > 1 ? cluster_rank() : 0;
  const int tiles_m = int(ceil_div(p.m, block_tile_m)), tiles_n = int(ceil_div(p.n, block_tile_n));
  const int cluster_rows = int(ceil_div(tiles_m, cluster_size));
  const long long cluster_tiles = (long long)cluster_rows * tiles_n;
  const int first_tile = blockIdx.x / cluster_size, clusters = gridDim.x / cluster_size;
  const int k_tiles = int(ceil_div(p.k, block_tile_k));
  auto tile_origin = [&](long long t) {
    const TileIndex tile = grouped_tile(t, cluster_rows, tiles_n, L::group_rows);
    return TileOrigin{(long long)(tile.row * cluster_size + int(rank)) * block_tile_m,
                      (long long)tile.col * block_tile_n};
  };

  // LAB BEGIN barriers [hard]
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
    // ---- Producer: copies for every tile of the list, `stages` slices ahead of the consumers ------
    setmaxnreg_decrease<Config::producer_registers>();
    if (threadIdx.x == 0) {
      // EXCERPT BEGIN persistent_producer
      int slice = 0;  // slices copied so far, over all tiles: stage = slice % stages
      for (long long t = first_tile; t < cluster_tiles; t += clusters) {
        const TileOrigin origin = tile_origin(t);
        for (int kt = 0; kt < k_tiles; ++kt, ++slice) {
          const int s = slice % stages, use = slice / stages;
          // LAB BEGIN producer [hard]
          // First use: parity 1 counts as complete.
          mbarrier_wait<EmptyWait>(&empty[s], (use & 1) ^ 1, s);
          const int k0 = kt * block_tile_k;
          // LAB BEGIN arm_and_copy
          mbarrier_arrive_expect_bytes(&full[s], L::stage_bytes);
          tma_load_2d(a_tile(s), a_map, &full[s], k0, int(origin.row));
          // This block's share of the B slice; with a cluster, multicast to every block of it.
          constexpr int boxes_per_block = L::b_boxes / cluster_size;
#pragma unroll
          for (int j = int(rank) * boxes_per_block; j < (int(rank) + 1) * boxes_per_block; ++j) {
            if constexpr (cluster_size > 1)
              tma_load_2d_multicast(b_tile(s) + j * L::b_box_bytes, b_map, &full[s],
                                    int(origin.col) + j * swizzle_halves, k0, std::uint16_t((1u << cluster_size) - 1));
            else
              tma_load_2d(b_tile(s) + j * L::b_box_bytes, b_map, &full[s], int(origin.col) + j * swizzle_halves, k0);
          }
          // LAB END
          // LAB END
        }
      }
      // EXCERPT END persistent_producer
    }
  } else {
    // ---- Consumers: for each tile, the K loop of step 09, then the write-back ---------------------
    setmaxnreg_increase<Config::consumer_registers>();
    const int consumer = warpgroup - 1;  // rows consumer·64 … +63 of the block tile
    const int lane = threadIdx.x % 32;
    // A stage is released by one lane per consumer warp, on the empty barrier of every block of the
    // cluster (its own included): the producers of all of them write into this stage.
    auto release = [&](int s) {
      // LAB BEGIN release_in_every_block
      if (lane != 0) return;
      if constexpr (cluster_size > 1) {
#pragma unroll
        for (int r = 0; r < cluster_size; ++r) mbarrier_arrive_in_block(&empty[s], r);
      } else {
        mbarrier_arrive(&empty[s]);
      }
      // LAB END
    };
    int slice = 0;
    float acc[128];
    for (long long t = first_tile; t < cluster_tiles; t += clusters) {
      const TileOrigin origin = tile_origin(t);
#pragma unroll
      for (int i = 0; i < 128; ++i) acc[i] = 0.0f;
      for (int kt = 0; kt < k_tiles; ++kt, ++slice) {
        const int s = slice % stages, use = slice / stages;
        // LAB BEGIN wait_full [hard]
        mbarrier_wait<FullWait>(&full[s], use & 1, s);
        // LAB END
        multiply_stage<block_tile_k, L::b_box_bytes>(acc, a_tile(s), b_tile(s), consumer);
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        // LAB BEGIN release_previous_slice [hard]
        if (kt > 0) release((slice - 1) % stages);
        // LAB END
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      // LAB BEGIN release_last_slice [hard]
      release((slice - 1) % stages);  // the tile's last slice; the producer is already on the next tile
      // LAB END

      // ---- Write back: alpha·acc + beta·C, only inside C -------------------------------------------
      if constexpr (Config::staged_epilogue)
        store_accumulators_staged<L>(acc, p, c_map, c_staging + consumer * L::c_buffers * L::c_chunk_bytes, consumer,
                                     origin.row + consumer * wgmma_m, origin.col);
      else
        store_accumulators(acc, p, origin.row + consumer * wgmma_m, origin.col);
    }
    // The block's shared memory must outlive the copy engine's reads of it.
    if (Config::staged_epilogue && threadIdx.x % warpgroup_threads == 0) bulk_store_wait_all();
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
// row of C must end on one (N a multiple of 4), or its last chunk would spill into the gap after it.
// Other problems go to 08's kernel.
bool tma_path_possible(const GemmProblem<__half>& p) {
  return tma_describable(p.a, p.lda) && tma_describable(p.b, p.ldb) && tma_describable(p.c, p.ldc, sizeof(float)) &&
         p.n % 4 == 0;
}

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  using L = Layout<Variant>;
  if (!tma_path_possible(p)) return general::launch(p, stream);
  constexpr auto kernel = persistent_gemm<Variant>;
  arm_watchdog();
  // As many clusters as can be resident at once (read from the device: SM count, and how clusters
  // fit into its GPCs), but no more than there are cluster tiles.
  LaunchConfig config(L::cluster_size, L::threads, L::shared_bytes, stream);
  config.cluster(L::cluster_size);
  static const int resident_clusters = [&] {
    allow_dynamic_shared_memory<kernel>(L::shared_bytes);
    const int count = max_active_clusters<kernel>(config);
    if (count < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    return count;
  }();
  const long long tiles_m = ceil_div(p.m, L::block_tile_m), tiles_n = ceil_div(p.n, L::block_tile_n);
  const long long cluster_tiles = ceil_div(tiles_m, L::cluster_size) * tiles_n;
  config.blocks(std::min<long long>(resident_clusters, cluster_tiles) * L::cluster_size);
  // A: M rows × K, copied in boxes of block_tile_m rows × 64 k. B: K rows × N, boxes of 64 k × 64 columns.
  const CUtensorMap a_map = make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, p.lda,
                                               L::block_tile_m, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  const CUtensorMap b_map = make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, p.ldb,
                                               L::block_tile_k, swizzle_halves, CU_TENSOR_MAP_SWIZZLE_128B);
  // C: M rows × N FP32, written in boxes of 64 rows × 32 columns (128 bytes, swizzled).
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, p.ldc, wgmma_m,
                                               L::c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  CUDA_CHECK(cudaLaunchKernelEx(config.get(), kernel, a_map, b_map, c_map, p));
  WORKLOG_CHECK_LAUNCH();
}

// Variants, for the README's table: each adds one technique to the one before, up to the step.
struct PersistentRowMajor : Config {
  static constexpr int group_rows = 1, cluster_size = 1;
  static constexpr bool staged_epilogue = false;
};
struct PersistentGrouped : PersistentRowMajor {
  static constexpr int group_rows = Config::group_rows;
};
struct Clusters : PersistentGrouped {
  static constexpr int cluster_size = Config::cluster_size;
};

}  // namespace

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(Step<__half>{"10_persistent_clusters", launch_config<Config>}
                          .adds("persistent grid, grouped order, 2-block clusters with B multicast, TMA-store epilogue")
                          .reuses_tile(Config::cluster_size* Config::block_tile_m, Config::block_tile_n)
                          .needs_compute_capability(90, 90)
                          .takes_own_path(tma_path_possible)  // the rest: 08's kernel (general_gemm.hpp)
                          .variant("persistent_row_major", "persistent grid, row-major tile order",
                                   launch_config<PersistentRowMajor>, Config::block_tile_m, Config::block_tile_n)
                          .variant("persistent_grouped", "+ grouped tile order (8 rows)",
                                   launch_config<PersistentGrouped>, Config::block_tile_m, Config::block_tile_n)
                          .variant("clusters", "+ 2-block clusters, B multicast", launch_config<Clusters>))

}  // namespace worklog
