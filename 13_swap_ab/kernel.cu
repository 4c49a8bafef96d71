// Step 13 (Hopper) — swap AB: few rows of A, at the speed of DRAM.
//
// Adds to 12: for M up to 128, the kernel computes Cᵀ = Bᵀ·Aᵀ, so that M becomes the wgmma's n (a
// width of 8 to 256, picked from M) and N its 64-row side, and cuts K over the SMs; a tile's
// k-parts that fit in one wave add up in their cluster's shared memory.
// Why it helps: decode-time GEMMs are bound by reading B once; the swap wastes no tensor-core rows
// on rows of C that do not exist and keeps every SM's copies of B in flight.
//
// Run: build/bin/13_swap_ab --m 16 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "sm90/stream_k_gemm.hpp"
#include "sm90/swap_gemm.hpp"  // max_m: the rows the library's swap GEMM takes
#include "sm90/swap_kernel.cuh"
#include "step.hpp"

namespace worklog {
namespace {

using namespace swap_ab;

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md says how each value was chosen. The width of a block tile (rows of C,
// the wgmma's n) is not a knob: launch_config picks it from M (with_width).
struct Config {
  static constexpr int block_tile_n = 128;       // columns of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_k = 64;        // K per stage: one 128-byte swizzled row of A, 64 rows of B's boxes
  static constexpr int max_stages = 16;          // as many stages as fit in 227 KiB, but no more than this
  static constexpr int swap_max_m = 128;         // a larger M runs faster as 12 (README.md: the crossover)
  static constexpr int group_rows = 8;           // grouped tile order, as in 07 to 12 (several column tiles: M > width)
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;      // ...the consumers' accumulators (up to 128) many
  using rule = stream_k::LastWaveInParts;             // 11's rule (split_k_schedule.cuh; README.md: measured)
  static constexpr int fixup_slices = 16;             // 11's estimate of what splitting costs, for the hybrid rule
  using fixup = stream_k::ByFirstUnit;                // every split tile fixed up by one unit: partials are small
  static constexpr int shared_c_tiles_per_block = 4;  // width 256: C through shared memory above this (README.md)
  static constexpr bool cluster_split = true;  // tiles in one wave: k-parts in a cluster, summed in shared memory
  static constexpr int max_cluster = 8;        // parts of a tile at most: the largest cluster every GPU must allow
  static constexpr bool narrow_where_it_pays = true;   // 64-column tiles where they keep as many SMs busy (narrow_pays)
  static constexpr int narrow_whole_max_k_tiles = 64;  // ...and whole narrow tiles up to this many slices (narrow_pays)
};

// The library's swap GEMM, which later steps call, takes as many rows.
static_assert(Config::swap_max_m == swap_ab::max_m, "swap_max_m must equal swap_ab::max_m");

// The same kernel with block tiles of 64 columns: one consumer warpgroup, twice the tiles, half the
// k-parts a tile. The step runs it where narrow_pays says; the variant narrow_tiles everywhere.
struct NarrowTiles : Config {
  static constexpr int block_tile_n = 64;
  static constexpr bool narrow_where_it_pays = false;  // it is the narrow tile
};

// ---- Launch -----------------------------------------------------------------------------------------
// The swap kernel (common/sm90/swap_kernel.cuh) at this step's configuration: M up to swap_max_m, at
// the width M picks and the tile narrow_pays picks; a larger M to the stream-K GEMM; what TMA cannot
// describe to the general kernel.

// The step's workspace: the swap kernel's, or the stream-K GEMM's for the shapes it hands on.
template <class Variant>
std::size_t workspace_bytes(Shape shape, Strides strides) {
  if (shape.m > Variant::swap_max_m) return stream_k::workspace_bytes(shape, strides);
  return swapped_workspace_bytes<Variant, NarrowTiles>(shape, strides);
}

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p)) return general::launch(p, stream);
  if (p.m > Variant::swap_max_m) return stream_k::launch(p, stream);
  launch_swapped<Variant, NarrowTiles>(p, stream);
}

// Variants, for the README's tables: the swap for every M, other schedules (whole tiles, the even
// deal, split-K in 2 and 4 parts, over several rounds of units), the fixup shared.
struct SwapAll : Config {
  static constexpr int swap_max_m = 1 << 30;
};
struct DataParallel : Config {
  using rule = stream_k::WholeTiles;
  static constexpr bool cluster_split = false;
};
struct StreamK : Config {
  using rule = stream_k::EveryTileEven;
  static constexpr bool cluster_split = false;
};
struct SplitK2 : Config {
  using rule = stream_k::EveryTileInParts<2>;
  static constexpr bool cluster_split = false;
};
struct SplitK4 : SplitK2 {
  using rule = stream_k::EveryTileInParts<4>;
};
struct FixupShared : Config {
  using fixup = stream_k::SharedAbove<2>;  // 12's: tiles of more than 2 units share their fixup
  static constexpr bool cluster_split = false;
};
struct WorkspaceFixup : Config {
  static constexpr bool cluster_split = false;  // 11's schedule for every shape: partials through the workspace
};
}  // namespace

// For the shapes the swap takes, the reuse tile depends on M; the roofline's model (the worklog's
// large squares) sees 12's tile, to which those go.
WORKLOG_REGISTER_STEP(
    Step<__half>{"13_swap_ab", launch_config<Config>}
        .adds("few rows of A: Cᵀ = Bᵀ·Aᵀ with M as the wgmma's n (M ≤ 128), K split over the SMs; larger M as 12")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("swap_all", "the swap for every M (no hand-off to 12)", launch_config<SwapAll>,
                 workspace_bytes<SwapAll>)
        .variant("data_parallel", "whole tiles only: one block per tile", launch_config<DataParallel>,
                 workspace_bytes<DataParallel>)
        .variant("stream_k", "every tile's slices dealt evenly over all SMs", launch_config<StreamK>,
                 workspace_bytes<StreamK>)
        .variant("split_k2", "every tile in 2 k-parts", launch_config<SplitK2>, workspace_bytes<SplitK2>)
        .variant("split_k4", "every tile in 4 k-parts", launch_config<SplitK4>, workspace_bytes<SplitK4>)
        .variant("fixup_shared", "tiles of more than 2 units share their fixup (12's rule)", launch_config<FixupShared>,
                 workspace_bytes<FixupShared>)
        .variant("workspace_fixup", "11's schedule for every shape: k-parts summed through the workspace",
                 launch_config<WorkspaceFixup>, workspace_bytes<WorkspaceFixup>)
        .variant("narrow_tiles", "block tiles of 64 columns for every shape: one consumer, fewer k-parts a tile",
                 launch_config<NarrowTiles>, workspace_bytes<NarrowTiles>))

}  // namespace worklog
