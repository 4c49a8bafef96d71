// Step 12 (Hopper) — stream-K's shared fixup: a tile cut among many units is added up by all of them.
//
// Adds to 11: a split tile held by more than two units is no longer added up and written by the unit
// holding its first part alone: every unit, once its range ends, adds the partials of a share of
// the tile's pieces, in the order of the k-slices (the same bits in every run), and writes them.
// Why it helps: the fixup of a tile cut in s parts takes one unit's share of the tile instead of s − 1
// partials read one after another by one unit.
//
// Run: build/bin/12_stream_k --m 3072 --n 3072 --k 3072
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "general_gemm.hpp"
#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// 11's configuration and one knob: the fixup. README.md says how its value was chosen.
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group, as in 07 to 11
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
  using rule = stream_k::LastWaveInParts;         // 11's rule: the last wave's tiles in aligned k-parts
  static constexpr int fixup_slices = 16;         // 11's estimate of what a cut costs a unit, in k-slices
  using fixup = stream_k::SharedAbove<2>;         // a tile cut among more than 2 units: its fixup shared (README.md)
};

// ---- Launch -----------------------------------------------------------------------------------------

// Bytes of workspace for a shape: as 11's, one 256 KiB slot per unit with clusters of 2. Ranges dealt
// evenly (stream_k_only, hybrid_even) leave up to two partials a unit: two slots, 33 MiB on a GPU of
// 132 SMs. None where the strides send the problem to 08.
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

// Variants, for the README's tables: the fixup shared for every split tile, stream-K's even deal of
// the iterations (ranges across tiles), no clusters.
struct FixupShared : Config {
  using fixup = stream_k::SharedAbove<1>;
};
struct StreamKOnly : Config {
  using rule = stream_k::EveryTileEven;
};
struct HybridEven : Config {
  using rule = stream_k::LastWavesEven;
};
struct NoCluster : Config {
  static constexpr int cluster_size = 1;
};

}  // namespace

// One fetch of A and B from global memory serves a cluster's 256 × 256 of C (two blocks sharing B).
// wgmma and setmaxnreg exist on sm_90a alone: compute capability 9.0, exactly.
WORKLOG_REGISTER_STEP(
    Step<__half>{"12_stream_k", launch_config<Config>}
        .adds("stream-K's shared fixup: a tile cut among more than 2 units is added up and written by all of them")
        .reuses_tile(Config::cluster_size* Config::block_tile_m, Config::block_tile_n)
        .needs_compute_capability(90, 90)
        .needs_workspace(workspace_bytes<Config>)
        .variant("fixup_shared", "every split tile's fixup shared by all its units", launch_config<FixupShared>,
                 workspace_bytes<FixupShared>)
        .variant("stream_k_only", "every tile's slices split evenly over the clusters", launch_config<StreamKOnly>,
                 workspace_bytes<StreamKOnly>)
        .variant("hybrid_even", "whole waves but one, the rest's slices evenly over the clusters",
                 launch_config<HybridEven>, workspace_bytes<HybridEven>)
        .variant("no_cluster", "single blocks, no multicast", launch_config<NoCluster>, workspace_bytes<NoCluster>,
                 Config::block_tile_m, Config::block_tile_n))

}  // namespace worklog
