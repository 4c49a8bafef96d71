// lab_routes (lab_routes.hpp): step 16. Its menu (15's entries, then 13's swapped tiles:
// both_orientations::menu(), from 16's kernel, which the program links), the model (15's, over that
// menu at this step's prices: prices_of_step(16)) and its one LAB region, swapped_work: the work of a swapped entry,
// which the model asks for when it prices the entry. The route is Routes15's (15's launch_routes.cuh), in its order
// (tile_per_shape::route_of, which the launch calls): the model runs on the menu's route, and on 14's
// padding where 13 hands the padded problem back to the step (Routes::launch_aligned) and M is above
// tile_per_shape::few_rows; few rows go to 13's launcher, which asks no model.
//
// Which entries the model prices is read from 16's own table: 15's choice (choose) skips an entry
// that no line of the table names, before it asks for the entry's work, so swapped_work runs only
// where some swapped entry is priced. The pick among priced entries is not worked out here: a swapped
// entry's plan (swap_ab::SwappedTile: cluster_parts, plan) asks the device how many of its blocks
// and clusters fit, and 13's kernel.cu offers no way around that.
#include <algorithm>
#include <cstring>

#include "lab_routes.hpp"
#include "sm90/both_orientations.hpp"
#include "sm90/tile_per_shape.hpp"

namespace worklog::lab_routes {

Route route_16(Shape s, const Gpu& gpu) {
  const GemmProblem<__half> p = packed_problem(s);
  // The launch's own decision (tile_per_shape::route_of), on operands that start on 16 bytes.
  const tile_per_shape::Route route = tile_per_shape::route_of(s, strides_of(p), true);
  Route r{tile_per_shape::route_name(route)};
  // Where the problem reaches Routes::launch_aligned: directly, or padded by 13 when 14's decision hands the
  // padded problem on (route_14: 13's launcher there, Routes::launch_aligned here) rather than reading it in
  // place or writing C with 14's own swap kernel.
  bool aligned = route == tile_per_shape::Route::menu || route == tile_per_shape::Route::few_rows;
  if (route == tile_per_shape::Route::padded) {
    const std::string padding = route_14(s, gpu).path;
    aligned = padding == "swap_step" || padding == "staged_c";
    r.fact("padding", padding);
  }
  const bool model = aligned && s.m > tile_per_shape::few_rows;  // Routes::launch_aligned: few rows go to 12
  // choose(): an entry is priced when a line of the table names it (its GPU's, else the first GPU's).
  const std::vector<tile_per_shape::Entry>& entries = both_orientations::menu();
  const std::vector<tile_per_shape::Calibration>& calibration = tile_per_shape::prices_of_step(16);
  const std::size_t first_swapped = tile_per_shape::menu().size();  // 15's entries come first
  const auto priced = [&](const tile_per_shape::Entry& e) {
    return std::any_of(calibration.begin(), calibration.end(),
                       [&](const tile_per_shape::Calibration& c) { return std::strcmp(c.entry, e.name) == 0; });
  };
  const long long priced_entries = std::count_if(entries.begin(), entries.end(), priced);
  const bool swapped_priced = std::any_of(entries.begin() + first_swapped, entries.end(), priced);
  r.region("swapped_work", model && swapped_priced);
  r.fact("model", model);
  r.fact("menu_entries", (long long)entries.size());
  r.fact("swapped_entries", (long long)(entries.size() - first_swapped));
  r.fact("priced_entries", priced_entries);
  // Nothing priced: choose keeps entry 0 and asks no entry for its work.
  if (model && priced_entries == 0) r.fact("pick", std::string(entries[0].name));
  return r;
}

}  // namespace worklog::lab_routes
