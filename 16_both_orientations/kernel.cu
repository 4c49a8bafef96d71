// Step 16 (Hopper) — both orientations: the menu gains cuBLAS's side of the swap.
//
// Adds to 15: 13's swap kernel at fixed block tiles joins the menu, every entry priced by 15's model
// at prices this step measured, and the route of a problem is decided once for the launch and its
// workspace.
// Why it helps: cuBLAS computes Cᵀ = Bᵀ·Aᵀ, whose tiles step in 8 rows; shapes between 15's tiles
// find an entry that fits them.
//
// Run: build/bin/16_both_orientations --m 1024 --n 1024 --k 1024
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include <algorithm>
#include <cstddef>
#include <stdexcept>
#include <utility>
#include <vector>

#include "kernel_utils.cuh"
#include "sm90/both_orientations.hpp"
#include "sm90/launch_routes.cuh"
#include "sm90/pad_unaligned.hpp"
#include "sm90/stream_k_kernel.cuh"  // tma_path_possible: what 15's entries take as they are
#include "sm90/stream_k_schedule.cuh"
#include "sm90/swap_gemm.hpp"
#include "sm90/tile_per_shape.hpp"
#include "step.hpp"

namespace worklog {
namespace {

using tile_per_shape::Entry;
using tile_per_shape::Route;
using tile_per_shape::Work;

// ---- The menu ---------------------------------------------------------------------------------------
// An entry of 13's swap kernel, in 15's terms: its rows and columns of C, no cluster of shared B, and
// the work of its busiest block. Where every tile fits in one wave its tiles' k-parts are summed in a
// cluster (each block one segment of ⌈slices / parts⌉ slices, then the sum: priced as a fixup); else
// 11's schedule, whose busiest worker 15 computes.
template <std::size_t i>
Work swapped_work(Shape shape, Strides strides) {
  // maybe unused: a student copy blanks the region, the one place that reads the tile
  [[maybe_unused]] const swap_ab::SwappedTile& tile = swap_ab::swapped_tiles()[i];
  Work work{};
  // LAB BEGIN swapped_work
  if (const int parts = tile.cluster_parts(shape); parts > 0) {
    const long long slices = ceil_div(ceil_div(shape.k, 64), parts);
    const bool off_lines = (strides.lda | strides.ldb) % 64 != 0;  // either off 64 halves: as 15 prices them
    work = {slices, 1, parts > 1, off_lines ? slices : 0};
  } else {
    stream_k::Plan plan{};
    tile.plan(shape, plan);
    work = tile_per_shape::busiest_cluster(plan, strides);
  }
  // LAB END
  return work;
}
template <std::size_t i>
Entry swapped_entry() {
  const swap_ab::SwappedTile& tile = swap_ab::swapped_tiles()[i];
  return {tile.name,   tile.description, tile.rows,      tile.cols,     1,
          tile.stages, tile.launch,      tile.workspace, tile.resident, swapped_work<i>};
}
template <std::size_t... i>
void add_swapped(std::vector<Entry>& menu, std::index_sequence<i...>) {
  (menu.push_back(swapped_entry<i>()), ...);
}

// 15's entries, then 13's. Every entry takes problems TMA can describe: the route pads the others first.
// EXCERPT BEGIN menu
constexpr std::size_t swapped_count = 6;  // swap_ab::swapped_tiles().size(), checked below
const std::vector<Entry>& menu_items() {
  static const std::vector<Entry> menu = [] {
    std::vector<Entry> all = tile_per_shape::menu();
    if (swap_ab::swapped_tiles().size() != swapped_count)
      throw std::logic_error("16_both_orientations: swapped_count must match swap_ab::swapped_tiles()");
    add_swapped(all, std::make_index_sequence<swapped_count>{});
    return all;
  }();
  return menu;
}
// EXCERPT END menu

// ---- The model ------------------------------------------------------------------------------------
// 15's model (its terms, its choice) at this step's prices: every entry of both families measured on
// the same GPU by this step's calibrate tool (tools/calibrate_16.cu) into
// common/sm90/tile_prices_16.csv (README.md: the calibration).
const tile_per_shape::Model& both_model() {
  static const tile_per_shape::Model model{menu_items, &tile_per_shape::prices_of_step(16)};
  return model;
}

// ---- The route ----------------------------------------------------------------------------------------
// 15's routes (launch_routes.cuh), with this step's model on the menu's route. Rows TMA cannot
// describe are padded by 14 and the padded problem comes back to this menu.
template <bool best_of_menu>
using Routes15 = tile_per_shape::Routes<both_model, best_of_menu>;

// One entry on any problem (a variant): rows TMA cannot describe padded by 14 first, as the step does.
template <std::size_t i>
void launch_entry(const GemmProblem<__half>& p, cudaStream_t stream) {
  const Entry& e = menu_items()[i];
  if (!stream_k::tma_path_possible(p)) return pad_unaligned::launch_with(p, stream, e.launch, e.workspace);
  e.launch(p, stream);
}
template <std::size_t i>
std::size_t entry_workspace_bytes(Shape shape, Strides strides) {
  return pad_unaligned::workspace_bytes_with(shape, strides, menu_items()[i].workspace);
}

// The step with every entry of the menu as a variant of its own, in the menu's order (as 15's).
constexpr std::size_t max_entries = 24;  // variants that can be registered: at least the menu's size
template <std::size_t... i>
Step<__half> with_menu(Step<__half> step, std::index_sequence<i...>) {
  constexpr Launcher<__half> launchers[] = {launch_entry<i>...};
  constexpr WorkspaceSize workspaces[] = {entry_workspace_bytes<i>...};
  const std::vector<Entry>& menu = menu_items();
  if (menu.size() > sizeof...(i)) throw std::logic_error("16_both_orientations: max_entries is below the menu's size");
  for (std::size_t j = 0; j < menu.size(); ++j)
    step = std::move(step).variant(menu[j].name, menu[j].description, launchers[j], workspaces[j],
                                   menu[j].rows * menu[j].cluster, menu[j].cols);
  return step;
}

}  // namespace

const std::vector<tile_per_shape::Entry>& both_orientations::menu() { return menu_items(); }
const tile_per_shape::Model& both_orientations::model() { return both_model(); }

// The step, best of menu, and each entry of the menu. wgmma and setmaxnreg exist on sm_90a alone.
WORKLOG_REGISTER_STEP(with_menu(
    Step<__half>{"16_both_orientations", Routes15<false>::launch}
        .adds("both orientations in the menu: 15's tiles and 13's swap kernel at fixed tiles; the route decided once")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(Routes15<false>::workspace_bytes)
        .variant("best_of_menu", "every entry timed on the shape in the process, the fastest run: the model's bound",
                 Routes15<true>::launch, Routes15<true>::workspace_bytes),
    std::make_index_sequence<max_entries>{}))

}  // namespace worklog
