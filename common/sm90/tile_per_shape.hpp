// Step 15's menu and model, as the library offers them (tile_per_shape.cu defines them): the menu of
// kernels, for the steps that register its entries (14, and 15 over a larger menu), the calibrate
// tools (tools/calibrate_15.cu) and the tests; the model's prices and choice; the route a problem
// takes, for the tests that every route is checked.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::stream_k {
struct Plan;  // 11's plan of a schedule (common/sm90/stream_k_schedule.cuh)
}

namespace worklog::tile_per_shape {

// The work of an entry's busiest cluster on a shape, under its schedule (11's plan): whole waves of
// tiles, then, where the rule splits the last wave, one unit of an aligned k-part and the fixup.
// EXCERPT BEGIN work
struct Work {
  long long slices;            // 64-wide k-slices it multiplies
  long long segments;          // tiles or pieces of tiles it walks: a pipeline fill and a write-back each
  bool fixup;                  // the schedule splits tiles: partials, flags, sums in order
  long long unaligned_slices;  // slices whose rows of A or B start off 128 bytes (lda or ldb not a multiple of 64)
  // Its split tiles have more parts than fixup_alone_units, which fix them up together (11's shared
  // fixup: every part waits for all the others' flags): set by busiest_cluster below.
  bool shared_fixup = false;
};
// EXCERPT END work

// One entry of the menu: a block tile of rows × cols, clusters of `cluster` blocks, `stages` stages.
struct Entry {
  const char* name;         // its variant's name: menu_<rows>x<cols>_c<cluster>
  const char* description;  // its variant's description (--list-variants, the README's tables)
  int rows, cols, cluster, stages;
  Launcher<__half> launch;                     // any problem (rows TMA cannot describe: 14's path)
  WorkspaceSize workspace;                     // bytes its schedule needs for a shape
  int (*resident)();                           // its clusters that fit on the current device at once
  Work (*work)(Shape shape, Strides strides);  // its busiest cluster's work on a shape, on the current device
  // The same on `resident` clusters, without asking a device (nullptr: not offered): the route report.
  Work (*work_on)(Shape shape, Strides strides, int resident) = nullptr;
};
const std::vector<Entry>& menu();
// The busiest worker's work under a plan of 11's schedule (each entry's `work` is this on its plan),
// for entries of a later step whose kernels walk the same schedule (15: 13's swap kernel), with
// shared_fixup where the plan's split tiles are fixed up by their parts together.
Work busiest_cluster(const stream_k::Plan& plan, Strides strides);

// The model's price of an entry on one GPU, in microseconds (tile_prices_15.csv; 15's README derives it):
// a launch costs launch_us, plus, on the busiest cluster, slice_us per k-slice, segment_us per
// segment (a pipeline fill and a write-back), fixup_us when its schedule splits tiles,
// unaligned_slice_us more per slice whose rows of A or B start off a 128-byte line (each TMA box row
// then touches two lines), and shared_fixup_us more when the parts of a split tile fix it up
// together. A calibration of five prices (15's of an H100) leaves the last at 0.
// EXCERPT BEGIN predict_us
struct Costs {
  double launch_us, slice_us, segment_us, fixup_us, unaligned_slice_us;
  double shared_fixup_us = 0.0;
};

// The model: an entry's predicted time for `work`, in µs.
inline double predict_us(const Costs& c, const Work& w) {
  return c.launch_us + double(w.slices) * c.slice_us + double(w.segments) * c.segment_us +
         (w.fixup ? c.fixup_us : 0.0) + double(w.unaligned_slices) * c.unaligned_slice_us +
         (w.shared_fixup ? c.shared_fixup_us : 0.0);
}
// EXCERPT END predict_us

// The model's prices of an entry on the current GPU (tile_prices_15.csv); nullptr: never calibrated.
const Costs* costs(const Entry& e);

// One GPU's prices of one entry: a row of a step's prices (tile_prices_<step>.csv).
struct Calibration {
  const char* gpu;  // cudaDeviceProp::name
  int sms;          // its multiprocessors
  const char* entry;
  Costs costs;
};
// The model over a menu at its prices: 15's, or a later step's over a larger menu (15). Defined in
// tile_per_shape.cu, where the model's choice is.
struct Model {
  const std::vector<Entry>& (*entries)();
  const std::vector<Calibration>* prices;
  // An entry's prices on the current GPU: its own, else the first GPU's of the table; nullptr: none.
  const Costs* costs(const Entry& e) const;
  // The index of the cheapest priced entry for a shape (the first on a tie; 0 when none is priced),
  // remembered per shape and alignment: the same problem, the same kernel, the same bits.
  std::size_t pick(Shape shape, Strides strides) const;
  // Best of menu, the model's bound: every entry timed on the problem in this process, the fastest.
  std::size_t fastest(const GemmProblem<__half>& p, cudaStream_t stream) const;
};
// The prices a step's calibrate tool measured (common/sm90/tile_prices_<step>.csv, compiled in by the
// build): step 15's or 16's; an empty table for any other.
const std::vector<Calibration>& prices_of_step(int step);
// 15's model: menu() at prices_of_step(15).
const Model& model();
// The entry (an index into menu()) the model picks for a shape whose rows TMA can describe, M above few_rows.
std::size_t pick(Shape shape, Strides strides);
// The kernels of 15's own routes (route_of, below), for a later step that routes the same way (15):
// the pass over A (few columns; its workspace: the parts' sums and counters) and the write of C (tiny K).
void launch_pass_over_a(const GemmProblem<__half>& p, cudaStream_t stream);
std::size_t pass_over_a_workspace_bytes(Shape shape);
void launch_tiny_k(const GemmProblem<__half>& p, cudaStream_t stream);
// M up to this goes to 13's swapped family, not to the menu.
inline constexpr int few_rows = 128;
// K up to this goes to the write of C (tiny K: one or two mma.sync k-steps a tile), not to the menu.
inline constexpr int tiny_k_max = 32;
// Every side up to this: a small problem, one launch of 08's kernel with 32 × 32 tiles, not the menu.
inline constexpr int small_max = 512;
inline bool small_problem(Shape s) { return s.m <= small_max && s.n <= small_max && s.k <= small_max; }

// The routes a launch of 14 can take, in the order the launch decides them (launch_routes.cuh:
// Routes): few columns to the pass over A, K ≤ tiny_k_max to the write of C, small
// problems to 08's kernel, rows TMA cannot describe to 14's padding, M ≤ few_rows to 13's swapped
// family, the rest to the menu's entry that the model picks.
enum class Route { pass_over_a, tiny_k, small_problem, padded, few_rows, menu };
inline constexpr Route all_routes[] = {Route::pass_over_a, Route::tiny_k,   Route::small_problem,
                                       Route::padded,      Route::few_rows, Route::menu};
const char* route_name(Route route);
// The route of a problem of this shape and these (resolved) strides whose A, B and C start on 16
// bytes when bases_aligned (every allocation does; an operand offset into one may not).
Route route_of(Shape shape, Strides strides, bool bases_aligned);

}  // namespace worklog::tile_per_shape
