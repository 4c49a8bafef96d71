// Step 11 (Hopper) — stream-K: every cluster busy to the end, whatever the number of tiles.
//
// Change from 10: the same warp-specialized persistent kernel (a TMA producer warpgroup, two wgmma
// consumer warpgroups, 128 × 256 block tiles in 2-block clusters that share B by multicast, a staged
// TMA-store epilogue), with a work-centric schedule instead of a tile-centric one.
//   - 10 deals whole tiles to the resident clusters. When the tiles do not fill whole waves, the
//     last wave runs on a few clusters while the others idle; with fewer tiles than clusters, most
//     never work at all. Here the work is counted in iterations (one 64-wide k-slice of one cluster
//     tile) and the iterations of the "split" tiles are dealt out to all clusters: each unit of work
//     is one contiguous range of them, which may begin and end inside a tile (Schedule).
//   - A range that begins or ends inside a tile leaves a partial sum of that tile. Each such
//     partial goes to a workspace slot, and a flag says it is there (stored with release semantics,
//     the launch's number as its value, so that the flags never need resetting). When its range is
//     done, every unit that holds part of a split tile waits for the tile's other partials, adds
//     them up in the order of their k-slices for one share of the tile (16 pieces of 64 × 32 split
//     among the contributors' warpgroups), and writes that share of C: the fixup. The sum of every
//     element is taken in the same order in every run, so results are bitwise reproducible: no
//     atomics, no order that depends on who finishes first.
//   - The schedule, the rule and the fixup protocol live in schedule.cuh beside this file, written
//     once for this step and the next (12 includes it). The kernel that walks them is
//     stream_k_kernel.cuh, also beside it: a template over the configuration below, which 14
//     instantiates with other tiles. This file holds the configuration, the variants and the launch.
//   - The rule (Config::decomposition, README.md derives and measures it): whole waves of tiles stay
//     data-parallel (10's schedule, no fixup); each of the r remaining tiles is cut into ⌊clusters /
//     r⌋ equal k-parts, one unit each, aligned across tiles so that the units running at the same
//     time read the same k-slices of A and B (ranges dealt evenly over all the split iterations, as
//     the stream-K paper does, land at scattered k and measured slower here: the variants
//     stream_k_only and hybrid_even); a shape whose saving would not repay the fixup stays
//     data-parallel.
//   - The epilogue is 10's staged one, written per 64 × 32 chunk so that the fixup can write any
//     share of a tile; 10's knob for plain stores is gone.
//
// The workspace (partials and flags) comes from the harness, allocated once per shape, zeroed, and
// sized by workspace_bytes below. Variants (README.md's tables): data-parallel only, split-K in 2
// and 4 parts, the even deal of stream-K for every tile or for all but the whole waves, the fixup
// by one unit alone or always shared, and no clusters. Problems TMA cannot describe (a leading
// dimension or base off 16 bytes) are handed to step 08's kernel. stream_k.hpp declares what later
// steps call: the launcher and the workspace.

#include "08_mma_ldmatrix/mma_ldmatrix.hpp"
#include "11_stream_k/schedule.cuh"
#include "11_stream_k/stream_k.hpp"
#include "11_stream_k/stream_k_kernel.cuh"
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
  static constexpr Decomposition decomposition = Decomposition::hybrid;  // schedule.cuh: the rule
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
  if (!stream_k::tma_path_possible(p)) return mma_ldmatrix::launch(p, stream);
  stream_k::launch_tma<Variant>(p, stream, "11_stream_k");
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

// What later steps call (stream_k.hpp).
void stream_k::launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_config<Config>(p, stream); }
std::size_t stream_k::workspace_bytes(Shape shape, Strides strides) {
  return worklog::workspace_bytes<Config>(shape, strides);
}

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(
    Step<__half>{"11_stream_k", launch_config<Config>}
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
