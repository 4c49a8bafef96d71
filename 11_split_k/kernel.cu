// Step 11 (Hopper) — split-K: the last wave's tiles cut along K over the clusters it leaves idle.
//
// Adds to 10: the work is counted in k-slices of tiles; whole waves stay data-parallel, and each tile
// of the last wave is cut into aligned k-parts, one per idle cluster, whose partial sums the unit
// holding the tile's first part adds in a fixed order (the fixup): the same bits in every run.
// Why it helps: a last wave of a few tiles no longer leaves most clusters idle.
//
// Run: build/bin/11_split_k --m 3072 --n 3072 --k 3072
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "sm90/split_k_schedule.cuh"
#include "sm90/stream_k_kernel.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen. stream_k_kernel.cuh's Layout derives the
// rest and checks each knob.
// EXCERPT BEGIN config
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group, as in 07 to 10
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
  using rule = stream_k::LastWaveInParts;         // split_k_schedule.cuh: which tiles are cut, in how many parts
  static constexpr int fixup_slices = 16;         // a cut costs a unit about this many k-slices (README.md)
  using fixup = stream_k::ByFirstUnit;            // the unit holding a tile's first part adds the others' partials
};
// EXCERPT END config

// ---- Launch -----------------------------------------------------------------------------------------

// Bytes of workspace for a shape: one 64 KiB partial and one flag per (slot, block, consumer), 256
// KiB and 16 bytes per slot with clusters of 2, one slot per unit. The step: at most one unit per
// resident cluster, at most 66 × 256 KiB = 16.5 MiB on a GPU of 132 SMs. Every tile in s parts (a
// variant): tiles · s slots, which grows with the shape. None where the strides send the problem to 08.
template <class Variant>
std::size_t workspace_bytes(Shape shape, Strides strides) {
  return stream_k::tma_strides_possible(shape, strides) ? stream_k::tma_workspace_bytes<Variant>(shape) : 0;
}

// The kernel where TMA can describe A, B and C; 08's kernel for the other problems.
template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!stream_k::tma_path_possible(p)) return general::launch(p, stream);
  stream_k::launch_tma<Variant>(p, stream, "11_split_k");
}

// Variants, for the README's tables: other rules.
struct DataParallel : Config {
  using rule = stream_k::WholeTiles;
};
struct SplitK2 : Config {
  using rule = stream_k::EveryTileInParts<2>;
};
struct SplitK4 : Config {
  using rule = stream_k::EveryTileInParts<4>;
};

}  // namespace

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(
    Step<__half>{"11_split_k", launch_config<Config>}
        .adds("split-K: whole waves data-parallel, the last wave's tiles in aligned k-parts, fixed up by one unit")
        .reuses_tile(Config::cluster_size* Config::block_tile_m, Config::block_tile_n)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("data_parallel", "whole tiles only (10's schedule)", launch_config<DataParallel>,
                 workspace_bytes<DataParallel>)
        .variant("split_k2", "every tile in 2 k-parts", launch_config<SplitK2>, workspace_bytes<SplitK2>)
        .variant("split_k4", "every tile in 4 k-parts", launch_config<SplitK4>, workspace_bytes<SplitK4>))

}  // namespace worklog
