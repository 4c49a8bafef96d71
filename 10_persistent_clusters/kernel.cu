// Step 10 (Hopper) — persistent scheduling, grouped tile order, clusters with TMA multicast.
//
// Change from 09: the same producer/consumer block (one TMA warpgroup, two wgmma warpgroups, a
// 128 × 256 tile, 4 stages of 64-wide K slices), scheduled differently.
//   - Persistent grid: as many blocks as fit on the GPU at once (read from the device, one per SM),
//     each walking a list of tiles. The barrier ring runs on across tiles, so the producer starts
//     copying the next tile's first slices while the consumers still multiply, and then write back,
//     the current one: the write-back of one tile overlaps the loads of the next, and no block pays
//     a launch, a prologue or a tail of its own.
//   - Tile order: tiles are numbered in groups of `group_rows` rows of tiles, column by column inside
//     a group (grouped_tile, gemm_math.hpp), so the tiles in flight at any moment share a few panels
//     of A and B, which L2 then serves.
//   - Clusters of 2 blocks on vertically adjacent tiles, which need the same 64 × 256 slice of B for
//     every K step: each block copies half of that slice with TMA *multicast*, delivered into both
//     blocks' shared memory, and its own 128 × 64 slice of A: each block requests half of B. A stage of
//     a block can now only be refilled when the consumers of *both* blocks are done with it (the
//     peer's copy writes into it too), so each consumer warp releases a stage on the "empty" barrier
//     of every block of the cluster.
//
// Each technique is registered as a variant of this step (--variant, README.md's table) and tested
// like the step itself.
// Shapes TMA cannot describe (K or N not a multiple of 8) are handed to step 08's kernel.
//
// Measured on an H200 (CUDA 13.0, 2026-11-21), step and cuBLAS timed in alternation: 4096³ 0.188 ms,
// 731 TFLOP/s, 99.2% of cuBLAS FP16; 8192³ 100.3–102.3% of cuBLAS (three processes). README.md: each
// technique's share, and the two profiling findings that shaped this kernel.

#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "step.hpp"
#include "tensor_map.hpp"

namespace worklog {
namespace {

using namespace hopper;

constexpr int block_tile_m = 128, block_tile_n = 256, block_tile_k = 64;
constexpr int consumers = block_tile_m / wgmma_m;  // two consumer warpgroups, 64 rows each
static_assert(block_tile_n == wgmma_n, "block_tile_n must be 256, the n of the wgmma used");
constexpr int threads = warpgroup_threads * (1 + consumers);
constexpr int warps_per_consumer = warpgroup_threads / 32;
constexpr int a_tile_bytes = block_tile_m * block_tile_k * 2;
constexpr int b_box_bytes = block_tile_k * swizzle_halves * 2;  // one TMA box of B: 64 k × 64 columns
constexpr int b_boxes = block_tile_n / swizzle_halves;
constexpr int stage_bytes = a_tile_bytes + b_boxes * b_box_bytes;
// The register split (setmaxnreg): 128·40 + 2·128·232 = 64 512 of the SM's 65 536.
constexpr int producer_registers = 40, consumer_registers = 232;

// The staged write-back: each consumer writes its 64 × 256 FP32 part of C in 8 chunks of
// 64 rows × 32 columns (one 128-byte swizzled row each), through two 8 KiB buffers of its own.
constexpr int c_chunk_cols = swizzle_bytes / sizeof(float);  // 32
constexpr int c_chunk_bytes = wgmma_m * swizzle_bytes;        // 8 KiB
constexpr int c_buffers = 2;
constexpr int c_staging_bytes = consumers * c_buffers * c_chunk_bytes;

template <int stages>
constexpr int shared_bytes = stages * stage_bytes + c_staging_bytes + 2 * stages * 8 + 1024;  // + barriers, + alignment

// Writes one consumer's accumulators (rows row0 … +63, columns col0 … +255 of C) through shared
// memory: each chunk goes into a swizzled 64 × 32 buffer with ordinary stores, then one thread hands
// it to the copy engine (TMA store), which writes only what lies inside C. The consumer does not
// wait for the global writes: they drain while it multiplies the next tile. A buffer is reused only
// once the store issued from it two chunks earlier has finished reading it.
__device__ __forceinline__ void store_accumulators_staged(const float (&acc)[128], const GemmProblem<__half>& p,
                                                          const CUtensorMap& c_map, unsigned char* buffers,
                                                          int consumer, long long row0, long long col0) {
  const int t = threadIdx.x % warpgroup_threads, warp = t / 32, lane = t % 32;
  const bool elected = t == 0;
#pragma unroll
  for (int chunk = 0; chunk < wgmma_n / c_chunk_cols; ++chunk) {
    unsigned char* buffer = buffers + (chunk % c_buffers) * c_chunk_bytes;
    if (elected) bulk_store_wait_read<c_buffers - 1>();
    named_barrier_sync(1 + consumer, warpgroup_threads);  // the buffer is free for every thread
#pragma unroll
    for (int jj = 0; jj < c_chunk_cols / 8; ++jj) {
      const int j = chunk * (c_chunk_cols / 8) + jj;  // 8-column group of the accumulator layout
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int row = warp * 16 + lane / 4 + half * 8, col = jj * 8 + 2 * (lane % 4);
        float2 value = make_float2(p.alpha * acc[4 * j + 2 * half], p.alpha * acc[4 * j + 2 * half + 1]);
        const long long c_row = row0 + row, c_col = col0 + chunk * c_chunk_cols + col;
        if (p.beta != 0.0f && c_row < p.m && c_col < p.n) {  // N even: c_col + 1 < N too
          const float2 old = *reinterpret_cast<const float2*>(p.c + c_row * p.n + c_col);
          value.x += p.beta * old.x;
          value.y += p.beta * old.y;
        }
        // 128-byte swizzle, as TMA expects it: 16-byte chunk k of row r sits at chunk k ^ (r % 8).
        const int byte = col * 4, swizzled = ((byte / 16) ^ (row % 8)) * 16 + byte % 16;
        *reinterpret_cast<float2*>(buffer + row * swizzle_bytes + swizzled) = value;
      }
    }
    fence_proxy_async_shared();  // these ordinary stores, then the copy engine reads them
    named_barrier_sync(1 + consumer, warpgroup_threads);
    if (elected) {
      tma_store_2d(c_map, buffer, int(col0) + chunk * c_chunk_cols, int(row0));
      bulk_store_commit();
    }
  }
}

template <int cluster_size, int stages, bool staged_epilogue>
__global__ void __launch_bounds__(threads, 1)
    persistent_gemm(const __grid_constant__ CUtensorMap a_map, const __grid_constant__ CUtensorMap b_map,
                    const __grid_constant__ CUtensorMap c_map, GemmProblem<__half> p, int group_rows) {
  static_assert(cluster_size == 1 || cluster_size == 2, "cluster_size must be 1 or 2 (blocks sharing B)");
  static_assert(b_boxes % cluster_size == 0, "cluster_size must divide the 4 boxes of a B slice");
  static_assert(stages >= 2, "stages must be at least 2 for copies to overlap products");
  static_assert(shared_bytes<stages> <= 227 * 1024, "stages × 48 KiB must fit in 227 KiB of shared memory");

  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared = reinterpret_cast<unsigned char*>((reinterpret_cast<std::uintptr_t>(shared_raw) + 1023) &
                                                           ~std::uintptr_t(1023));
  auto a_tile = [&](int stage) { return shared + stage * stage_bytes; };
  auto b_tile = [&](int stage) { return shared + stage * stage_bytes + a_tile_bytes; };
  unsigned char* c_staging = shared + stages * stage_bytes;  // 1024-byte aligned, as the swizzle needs
  std::uint64_t* full = reinterpret_cast<std::uint64_t*>(c_staging + c_staging_bytes);
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
    const TileIndex tile = grouped_tile(t, cluster_rows, tiles_n, group_rows);
    return TileOrigin{(long long)(tile.row * cluster_size + int(rank)) * block_tile_m,
                      (long long)tile.col * block_tile_n};
  };

  if (threadIdx.x == 0) {
    for (int s = 0; s < stages; ++s) {
      mbarrier_init(&full[s], 1);  // the local producer's arrive, plus the bytes of every copy into us
      mbarrier_init(&empty[s], consumers * warps_per_consumer * cluster_size);  // every consumer warp of the cluster
    }
    fence_barrier_init();
  }
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
    setmaxnreg_decrease<producer_registers>();
    if (threadIdx.x == 0) {
      int slice = 0;  // slices copied so far, over all tiles: stage = slice % stages
      for (long long t = first_tile; t < cluster_tiles; t += clusters) {
        const TileOrigin origin = tile_origin(t);
        for (int kt = 0; kt < k_tiles; ++kt, ++slice) {
          const int s = slice % stages, use = slice / stages;
          mbarrier_wait(&empty[s], (use & 1) ^ 1);  // first use: parity 1 counts as complete
          mbarrier_arrive_expect_bytes(&full[s], stage_bytes);
          const int k0 = kt * block_tile_k;
          tma_load_2d(a_tile(s), a_map, &full[s], k0, int(origin.row));
          // LAB BEGIN: Copy this block's share of the B slice, boxes rank·(b_boxes / cluster_size) onward: with a
          // LAB: cluster by tma_load_2d_multicast to every block of it (mask), else by tma_load_2d.
          // LAB: Until then full[s] never completes: the tests hang.
          // This block's share of the B slice; with a cluster, multicast to every block of it.
          constexpr int boxes_per_block = b_boxes / cluster_size;
#pragma unroll
          for (int j = int(rank) * boxes_per_block; j < (int(rank) + 1) * boxes_per_block; ++j) {
            if constexpr (cluster_size > 1)
              tma_load_2d_multicast(b_tile(s) + j * b_box_bytes, b_map, &full[s], int(origin.col) + j * swizzle_halves,
                                    k0, std::uint16_t((1u << cluster_size) - 1));
            else
              tma_load_2d(b_tile(s) + j * b_box_bytes, b_map, &full[s], int(origin.col) + j * swizzle_halves, k0);
          }
          // LAB END
        }
      }
    }
  } else {
    // ---- Consumers: for each tile, the K loop of step 09, then the write-back ---------------------
    setmaxnreg_increase<consumer_registers>();
    const int consumer = warpgroup - 1;
    const int lane = threadIdx.x % 32;
    // A stage is released by one lane per consumer warp, on the empty barrier of every block of the
    // cluster (its own included): the producers of all of them write into this stage.
    auto release = [&](int s) {
      // LAB BEGIN: Release stage s, from lane 0 of each consumer warp: on the empty barrier of every block of
      // LAB: the cluster (mbarrier_arrive_in_block), or on this block's own without a cluster.
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
        mbarrier_wait(&full[s], use & 1);
        wgmma_stage<block_tile_k>(acc, a_tile(s), b_tile(s), consumer, b_box_bytes);
        wgmma_commit_group();
        wgmma_wait_group<1>();  // the previous slice's products are done: release its stage
        fence_registers(acc);
        if (kt > 0) release((slice - 1) % stages);
      }
      wgmma_wait_group<0>();
      fence_registers(acc);
      release((slice - 1) % stages);  // the tile's last slice; the producer is already on the next tile
      if constexpr (staged_epilogue)
        store_accumulators_staged(acc, p, c_map, c_staging + consumer * c_buffers * c_chunk_bytes, consumer,
                                  origin.row + consumer * wgmma_m, origin.col);
      else
        store_accumulators(acc, p, origin.row + consumer * wgmma_m, origin.col);
    }
    // The block's shared memory must outlive the copy engine's reads of it.
    if (staged_epilogue && threadIdx.x % warpgroup_threads == 0) bulk_store_wait_all();
  }

  // No block may leave while a peer can still copy into its shared memory or arrive on its barriers.
  if constexpr (cluster_size > 1) {
    cluster_arrive();
    cluster_wait();
  }
}

// ---- Launch -----------------------------------------------------------------------------------------

constexpr int stages = 4;
// Shapes TMA cannot describe go to this step's kernel instead.
constexpr const char* unaligned_fallback = "08_mma_ldmatrix";

template <int cluster_size, bool staged_epilogue>
void launch_schedule(const GemmProblem<__half>& p, cudaStream_t stream, int group_rows) {
  if (launch_fallback_unless_tma(p, stream, unaligned_fallback, 16)) return;
  constexpr auto kernel = persistent_gemm<cluster_size, stages, staged_epilogue>;
  cudaLaunchConfig_t config{};
  cudaLaunchAttribute cluster{};
  cluster.id = cudaLaunchAttributeClusterDimension;
  cluster.val.clusterDim.x = cluster_size;
  cluster.val.clusterDim.y = 1;
  cluster.val.clusterDim.z = 1;
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = shared_bytes<stages>;
  config.stream = stream;
  config.attrs = &cluster;
  config.numAttrs = 1;
  // As many clusters as can be resident at once (read from the device: SM count, and how clusters
  // fit into its GPCs), but no more than there are cluster tiles.
  static const int resident_clusters = [&] {
    allow_dynamic_shared_memory<kernel>(shared_bytes<stages>);
    config.gridDim = dim3(cluster_size);
    int count = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveClusters(&count, kernel, &config));
    if (count < 1) throw std::runtime_error("no cluster of this kernel fits on the GPU");
    return count;
  }();
  const long long tiles_m = ceil_div(p.m, block_tile_m), tiles_n = ceil_div(p.n, block_tile_n);
  const long long cluster_tiles = ceil_div(tiles_m, cluster_size) * tiles_n;
  config.gridDim = dim3(unsigned(std::min<long long>(resident_clusters, cluster_tiles) * cluster_size));
  const OperandMaps maps = operand_tensor_maps(p, block_tile_m, block_tile_k);
  // C: M rows × N FP32, written in boxes of 64 rows × 32 columns (128 bytes, swizzled).
  const CUtensorMap c_map = make_tensor_map_2d(p.c, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 4, p.m, p.n, wgmma_m,
                                               c_chunk_cols, CU_TENSOR_MAP_SWIZZLE_128B);
  CUDA_CHECK(cudaLaunchKernelEx(&config, kernel, maps.a, maps.b, c_map, p, group_rows));
  WORKLOG_CHECK_LAUNCH();
}

// The step: all of it. Variants, for the README's table: each adds one technique to the one before.
void launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_schedule<2, true>(p, stream, 8); }
void launch_row_major(const GemmProblem<__half>& p, cudaStream_t stream) { launch_schedule<1, false>(p, stream, 1); }
void launch_grouped(const GemmProblem<__half>& p, cudaStream_t stream) { launch_schedule<1, false>(p, stream, 8); }
void launch_clusters(const GemmProblem<__half>& p, cudaStream_t stream) { launch_schedule<2, false>(p, stream, 8); }

}  // namespace

WORKLOG_REGISTER_STEP(__half, {"10_persistent_clusters",
                               "persistent grid, grouped order, 2-block clusters with B multicast, TMA-store epilogue",
                               launch, 2 * block_tile_m, block_tile_n, 90, 90})
WORKLOG_REGISTER_STEP(__half, {"10_persistent_clusters/persistent_row_major", "persistent grid, row-major tile order",
                               launch_row_major, block_tile_m, block_tile_n, 90, 90})
WORKLOG_REGISTER_STEP(__half, {"10_persistent_clusters/persistent_grouped", "+ grouped tile order",
                               launch_grouped, block_tile_m, block_tile_n, 90, 90})
WORKLOG_REGISTER_STEP(__half, {"10_persistent_clusters/clusters", "+ 2-block clusters, B multicast",
                               launch_clusters, 2 * block_tile_m, block_tile_n, 90, 90})

}  // namespace worklog
