// lab_routes (lab_routes.hpp): step 15. The library's tile_per_shape.hpp gives the menu, each entry's
// work on a number of clusters (Entry::work_on: the model's terms, busiest_cluster, a LAB region of
// common/sm90/tile_per_shape.cu) and the prices (prices_of_step(15)). The route is
// launch_tile_per_shape's, in its order: few columns, tiny K, small problems, rows TMA cannot
// describe (13), few rows (12), and only then the menu (tile_per_shape::route_of, which the launch
// calls), whose entry the model picks (choose). Both
// LAB regions run on the menu's route; what tells whether they matter is the pick: a handout whose
// choice is not written runs entry 0 (choose's `best` stays 0), and one whose terms are not written
// (busiest_cluster's Work stays zero) picks the entry whose launch costs least. The plan of each entry
// is 11's (stream_k::plan_shape) on one worker per SM, clusters of two on pairs of SMs, as
// work_on_this_gpu asks the device (lab_routes.hpp).
#include <cstring>
#include <sstream>

#include "lab_routes.hpp"
#include "sm90/tile_per_shape.hpp"

namespace worklog::lab_routes {
namespace {

using tile_per_shape::Calibration;
using tile_per_shape::Costs;
using tile_per_shape::Entry;
using tile_per_shape::Work;

// costs_of without the device: the entry's prices on `gpu` (by name and multiprocessors), else the first
// GPU's of the table; nullptr when the entry has none. The calibration's GPU is returned in `priced_on`.
const Costs* costs_on(const Entry& e, const Gpu& gpu, std::string& priced_on) {
  const Calibration* fallback = nullptr;
  for (const Calibration& c : tile_per_shape::prices_of_step(15)) {
    if (std::strcmp(c.entry, e.name) != 0) continue;
    if (gpu.name == c.gpu && c.sms == gpu.sms) {
      priced_on = c.gpu;
      return &c.costs;
    }
    if (!fallback) fallback = &c;
  }
  if (fallback) priced_on = fallback->gpu;
  return fallback ? &fallback->costs : nullptr;
}

}  // namespace

Route route_15(Shape s, const Gpu& gpu) {
  const GemmProblem<__half> p = packed_problem(s);
  const Strides strides = strides_of(p);
  // The launch's own decision (tile_per_shape::route_of), on operands that start on 16 bytes.
  const tile_per_shape::Route route = tile_per_shape::route_of(s, strides, true);
  Route r{tile_per_shape::route_name(route)};
  const bool menu = route == tile_per_shape::Route::menu;
  r.region("busiest_cluster", menu);
  r.region("choose", menu);
  if (!menu) return r;
  // choose()'s loop: the cheapest priced entry, the first of equals; and the same without the terms.
  const std::vector<Entry>& entries = tile_per_shape::menu();
  std::size_t pick = 0, pick_without_work = 0;
  double best_us = -1.0, best_without_work_us = -1.0;
  std::string priced_on;
  std::ostringstream table;
  table << "[";
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    const int resident = gpu.sms / e.cluster;
    if (!e.work_on) throw std::logic_error(std::string("lab_routes: 15's menu entry ") + e.name + " offers no work_on");
    const Work work = e.work_on(s, strides, resident);
    const Costs* c = costs_on(e, gpu, priced_on);
    table << (i ? ", " : "") << "{\"entry\": " << Route::quoted(e.name) << ", \"resident\": " << resident
          << ", \"slices\": " << work.slices << ", \"segments\": " << work.segments
          << ", \"fixup\": " << (work.fixup ? "true" : "false") << ", \"unaligned_slices\": " << work.unaligned_slices;
    if (c) {
      const double us = tile_per_shape::predict_us(*c, work), without_work_us = tile_per_shape::predict_us(*c, Work{});
      table << ", \"model_us\": " << us;
      if (best_us < 0.0 || us < best_us) best_us = us, pick = i;
      if (best_without_work_us < 0.0 || without_work_us < best_without_work_us)
        best_without_work_us = without_work_us, pick_without_work = i;
    }
    table << "}";
  }
  table << "]";
  r.fact("priced_on", priced_on);
  r.fact("pick", std::string(entries[pick].name));
  r.fact("pick_without_the_choice", std::string(entries[0].name));
  r.fact("pick_without_the_terms", std::string(entries[pick_without_work].name));
  r.fact_json("entries", table.str());
  return r;
}

}  // namespace worklog::lab_routes
