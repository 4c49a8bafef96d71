// Step 15 (Hopper) — a tile for every shape: a menu of kernels, and a model that picks one.
//
// Adds to 14: 11's kernel at nine block tiles and clusters (the menu), and a model that prices each
// entry's busiest cluster on the shape (slices, segments, fixups) at prices measured on the GPU and
// runs the cheapest; few columns, tiny K and small problems take kernels of their own.
// Why it helps: the tile that fills the GPU best differs from shape to shape.
//
// Run: build/bin/15_tile_per_shape --m 1024 --n 1024 --k 1024
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include <utility>

#include "sm90/launch_routes.cuh"
#include "sm90/tile_per_shape.hpp"
#include "step.hpp"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// The menu (one entry a line, each with why it is there), the knobs its entries share and the model
// are common/sm90/tile_per_shape.cu's; the prices common/sm90/tile_prices_15.csv's.
using tile_per_shape::Entry;

// ---- The step ---------------------------------------------------------------------------------------
// launch_routes.cuh: few columns to the pass over A (pass_over_a.cuh), tiny K to the write of C
// (tiny_k.cuh), small problems to 08's kernel with small tiles, rows TMA cannot describe padded by 14
// and sent back here, few rows to 13's swapped family (its width follows M); every other shape to the
// menu's entry that the model picks (best of menu: the fastest measured).
template <bool best_of_menu>
using Routes14 = tile_per_shape::Routes<tile_per_shape::model, best_of_menu>;

}  // namespace

// The step with every entry of the menu as a variant of its own, in the menu's order. An entry's
// tile of reuse is its cluster's: the blocks of a cluster share each slice of B, so one fetch of B
// serves rows · cluster rows of C.
Step<__half> with_menu(Step<__half> step) {
  for (const Entry& e : tile_per_shape::menu())
    step = std::move(step).variant(e.name, e.description, e.launch, e.workspace, e.rows * e.cluster, e.cols);
  return step;
}

// The step, best of menu, and each entry of the menu (with_menu). wgmma and setmaxnreg exist on
// sm_90a alone: compute capability 9.0.
WORKLOG_REGISTER_STEP(with_menu(
    Step<__half>{"15_tile_per_shape", Routes14<false>::launch}
        .adds("a menu of block tiles and clusters; a model of waves, slices and fixups picks one per shape")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(Routes14<false>::workspace_bytes)
        .variant("best_of_menu", "every entry timed on the shape in the process, the fastest run: the model's bound",
                 Routes14<true>::launch, Routes14<true>::workspace_bytes)))

}  // namespace worklog
