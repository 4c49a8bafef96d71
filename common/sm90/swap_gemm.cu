// The library's swap GEMM (swap_gemm.hpp): the swap kernel (swap_kernel.cuh) at the configuration
// step 13 teaches (13_swap_ab/kernel.cu), compiled once here for the steps that hand problems to it.
#include <string>
#include <vector>

#include "general_gemm.hpp"
#include "sm90/stream_k_gemm.hpp"
#include "sm90/swap_gemm.hpp"
#include "sm90/swap_kernel.cuh"

namespace worklog {
namespace {

using namespace swap_ab;

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; 13's README says how each value was chosen. The width of a block tile (rows of C,
// the wgmma's n) is not a knob: launch_config picks it from M (with_width).
struct Config {
  static constexpr int block_tile_n = 128;  // columns of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_k = 64;   // K per stage: one 128-byte swizzled row of A, 64 rows of B's boxes
  static constexpr int max_stages = 16;     // as many stages as fit in 227 KiB, but no more than this
  static constexpr int swap_max_m = swap_ab::max_m;  // a larger M runs faster as the stream-K GEMM
  static constexpr int group_rows = 8;           // grouped tile order, as in 07 to 11 (several column tiles: M > width)
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;      // ...the consumers' accumulators (up to 128) many
  using rule = stream_k::LastWaveInParts;             // 11's rule (split_k_schedule.cuh; 13's README)
  static constexpr int fixup_slices = 16;             // 11's estimate of what splitting costs, for the hybrid rule
  using fixup = stream_k::ByFirstUnit;                // every split tile fixed up by one unit: partials are small
  static constexpr int shared_c_tiles_per_block = 4;  // width 256: C through shared memory above this (13's README)
  static constexpr bool cluster_split = true;  // tiles in one wave: k-parts in a cluster, summed in shared memory
  static constexpr int max_cluster = 8;        // parts of a tile at most: the largest cluster every GPU must allow
  static constexpr bool narrow_where_it_pays = true;   // 64-column tiles where they keep as many SMs busy (narrow_pays)
  static constexpr int narrow_whole_max_k_tiles = 64;  // ...and whole narrow tiles up to this many slices (narrow_pays)
};

// The same kernel with block tiles of 64 columns: one consumer warpgroup, twice the tiles, half the
// k-parts a tile: launch runs it where narrow_pays says, and the menu (swapped_tiles) at fixed tiles.
struct NarrowTiles : Config {
  static constexpr int block_tile_n = 64;
};

template <class Variant>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p)) return general::launch(p, stream);
  if (p.m > Variant::swap_max_m) return stream_k::launch(p, stream);
  launch_swapped<Variant, NarrowTiles>(p, stream);
}

}  // namespace

// swap_gemm.hpp's launchers.
void swap_ab::launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_config<Config>(p, stream); }
void swap_ab::launch_chained(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p) || p.m > Config::swap_max_m) return launch_config<Config>(p, stream);
  swap_ab::launch_swapped<Config, NarrowTiles, true>(p, stream);
}
void swap_ab::launch_swapped(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p)) return general::launch(p, stream);
  swap_ab::launch_swapped<Config, NarrowTiles>(p, stream);
}
std::size_t swap_ab::workspace_bytes(Shape shape, Strides strides) {
  if (shape.m > Config::swap_max_m) return stream_k::workspace_bytes(shape, strides);
  return swap_ab::swapped_workspace_bytes<Config, NarrowTiles>(shape, strides);
}
std::size_t swap_ab::swapped_workspace_bytes(Shape shape, Strides strides) {
  return swap_ab::swapped_workspace_bytes<Config, NarrowTiles>(shape, strides);
}

// The swap kernel at fixed block tiles (swap_gemm.hpp), for a menu of both orientations: 128 columns
// (two consumers, the step's tile) at widths 64, 96, 128 and 192, or 64 (one consumer) at 64 and 128.
// Not width 256: it has no cluster split (has_cluster_split), so its few-tile shapes wait on the
// fixup through the workspace, which 128 × 256 stream-K tiles do better. Any problem, as launch takes it.
namespace {
template <class Variant, int width>
swap_ab::SwappedTile swapped_tile(const char* description) {
  using L = Layout<Variant, width>;
  static const std::string name = "swap_" + std::to_string(width) + "x" + std::to_string(L::block_tile_n);
  return {name.c_str(),
          description,
          width,
          L::block_tile_n,
          L::stages,
          [](const GemmProblem<__half>& p, cudaStream_t stream) {
            if (!tma_path_possible(p)) return general::launch(p, stream);  // as launch: the general kernel
            launch_swapped_at<Variant, width>(p, stream);
          },
          swapped_workspace_at<Variant, width>,
          resident<Variant, width>,
          [](Shape s) { return cluster_split_of<Variant, width>(s.m, s.n, s.k).parts; },
          [](Shape s, stream_k::Plan& plan) {
            plan = plan_schedule<Variant, width>(s.m, s.n, s.k, resident<Variant, width>());
          }};
}
}  // namespace
// EXCERPT BEGIN swapped_tiles
const std::vector<swap_ab::SwappedTile>& swap_ab::swapped_tiles() {
  static const std::vector<SwappedTile> tiles = {
      swapped_tile<Config, 192>("192 rows × 128 columns, two consumers: rows in steps of 192"),
      swapped_tile<Config, 128>("128 rows × 128 columns, two consumers"),
      swapped_tile<Config, 96>("96 rows × 128 columns, two consumers: rows in steps of 96"),
      swapped_tile<Config, 64>("64 rows × 128 columns, two consumers: rows in steps of 64"),
      swapped_tile<NarrowTiles, 128>("128 rows × 64 columns, one consumer"),
      swapped_tile<NarrowTiles, 64>("64 rows × 64 columns, one consumer: the most tiles"),
  };
  return tiles;
}
// EXCERPT END swapped_tiles

}  // namespace worklog
