// Step 11 (Hopper) — stream-K: every cluster busy to the end, whatever the number of tiles.
//
// Adds to 10: the work is counted in k-slices of tiles; whole waves of tiles stay data-parallel and
// the tiles of the last wave are cut into aligned k-parts over all clusters, whose partial sums meet
// in a workspace and are added in a fixed order (the fixup): the same bits in every run.
// Why it helps: a last wave of a few tiles no longer leaves most clusters idle.
//
// Run: build/bin/12_stream_k --m 3072 --n 3072 --k 3072
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"
#include "step.hpp"

namespace worklog {
namespace {

using stream_k::Decomposition;

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen. stream_k_kernel.cuh's Layout derives the
// rest and checks each knob.
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group, as in 07 to 09
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
  static constexpr Decomposition decomposition = Decomposition::hybrid;  // stream_k_schedule.cuh: the rule
  static constexpr int split_k = 1;                                      // parts per tile, for Decomposition::split_k
  static constexpr int fixup_slices = 16;      // splitting costs a unit about this many k-slices (README.md)
  static constexpr int fixup_alone_units = 2;  // a tile split among this many units or fewer: fixed up by one of them
};

// ---- Launch -----------------------------------------------------------------------------------------

// Bytes of workspace for a shape: one 64 KiB partial and one flag per (slot, block, consumer), 256
// KiB and 16 bytes per slot with clusters of 2. The step (aligned parts): one slot per unit, at most
// one unit per resident cluster: at most 66 × 256 KiB = 16.5 MiB on a GPU of 132 SMs. Even
// distribution (stream_k_only, hybrid_even): two slots per unit, 33 MiB. Split-K in s parts (a
// variant): tiles · s slots, which grows with the shape. None where the strides send the problem to 08.
template <class Variant>
std::size_t workspace_bytes(Shape shape, Strides strides) {
  return stream_k::tma_strides_possible(shape, strides) ? stream_k::tma_workspace_bytes<Variant>(shape) : 0;
}

// The kernel where TMA can describe A, B and C; 08's kernel for the other problems.
template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!stream_k::tma_path_possible(p)) return general::launch(p, stream);
  stream_k::launch_tma<Variant>(p, stream, "12_stream_k");
}

// Variants, for the README's tables: other decompositions, the fixup by one unit, no clusters.
struct DataParallel : Config {
  static constexpr Decomposition decomposition = Decomposition::data_parallel;
};
struct SplitK2 : Config {
  static constexpr Decomposition decomposition = Decomposition::split_k;
  static constexpr int split_k = 2;
};
struct SplitK4 : SplitK2 {
  static constexpr int split_k = 4;
};
struct StreamKOnly : Config {
  static constexpr Decomposition decomposition = Decomposition::stream_k;
};
struct HybridEven : Config {
  static constexpr Decomposition decomposition = Decomposition::hybrid_even;
};
struct FixupAlone : Config {
  static constexpr int fixup_alone_units = 1 << 30;
};
struct FixupShared : Config {
  static constexpr int fixup_alone_units = 1;
};
struct NoCluster : Config {
  static constexpr int cluster_size = 1;
};

}  // namespace

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(
    Step<__half>{"12_stream_k", launch_config<Config>}
        .adds(
            "stream-K: whole waves data-parallel, the remaining tiles in k-parts over all clusters, fixed-order fixup")
        .reuses_tile(Config::cluster_size* Config::block_tile_m, Config::block_tile_n)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("data_parallel", "whole tiles only (10's schedule)", launch_config<DataParallel>,
                 workspace_bytes<DataParallel>)
        .variant("split_k2", "every tile in 2 k-parts", launch_config<SplitK2>, workspace_bytes<SplitK2>)
        .variant("split_k4", "every tile in 4 k-parts", launch_config<SplitK4>, workspace_bytes<SplitK4>)
        .variant("stream_k_only", "every tile's slices split evenly over the clusters", launch_config<StreamKOnly>,
                 workspace_bytes<StreamKOnly>)
        .variant("hybrid_even", "whole waves but one, the rest's slices evenly over the clusters",
                 launch_config<HybridEven>, workspace_bytes<HybridEven>)
        .variant("fixup_alone", "every split tile fixed up by the unit holding its slice 0 alone",
                 launch_config<FixupAlone>, workspace_bytes<FixupAlone>)
        .variant("fixup_shared", "every split tile's fixup shared by all its units", launch_config<FixupShared>,
                 workspace_bytes<FixupShared>)
        .variant("no_cluster", "the hybrid with single blocks, no multicast", launch_config<NoCluster>,
                 workspace_bytes<NoCluster>, Config::block_tile_m, Config::block_tile_n))

}  // namespace worklog
