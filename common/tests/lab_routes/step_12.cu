// lab_routes (lab_routes.hpp): step 11. The library's stream-K GEMM (stream_k_gemm.hpp: plan_on), at
// the configuration 11 teaches, gives the plan (stream_k_kernel.cuh: plan_shape, the rule of
// stream_k_schedule.cuh), which says which tiles are split and how
// each split tile is fixed up, which decides which regions run:
//   - a whole tile is written by the "whole tile" store, and so is a split tile that the unit holding
//     its slice 0 fixes up alone (Fixup::finish_segment);
//   - a split tile leaves partials that its units publish; fixed up alone, one unit adds them
//     (add_later_partials); shared, every unit adds and writes a share of its pieces (share, and the
//     "piece" store).
// Under 11's rule every split tile of a shape has the same number of parts, so one shape runs either
// add_later_partials (2 parts or fewer) or share, not both.
#include "lab_routes.hpp"
#include "sm90/stream_k_gemm.hpp"
#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"

namespace worklog::lab_routes {

Route route_12(Shape s, const Gpu& gpu) {
  const bool tma = stream_k::tma_path_possible(packed_problem(s));
  Route r{tma ? "tma" : "08"};
  const int resident = gpu.sms / stream_k::cluster_size();  // clusters of 2 on pairs of SMs (lab_routes.hpp)
  const stream_k::Plan plan = stream_k::plan_on(s, gpu.sms);
  const stream_k::Schedule& schedule = plan.schedule;
  bool alone = false, shared = false;
  for (long long tile = 0; tile < schedule.sk_tiles; ++tile) (schedule.fixed_up_alone(tile) ? alone : shared) = true;
  const bool whole = schedule.tiles > schedule.sk_tiles;
  // schedule.cuh
  r.region("publish", tma && schedule.units > 0);
  r.region("add_later_partials", tma && alone);  // a split tile fixed up by the unit that holds its end
  r.region("share", tma && shared);              // a split tile's fixup shared among its units
  // stream_k_kernel.cuh: the repeat regions of 09's and 10's protocol run on every TMA launch.
  for (const char* name : {"barriers", "producer", "arm_and_copy", "release_in_every_block", "wait_full",
                           "release_previous_slice", "release_last_slice"})
    r.region(name, tma);
  r.region("store_whole_tile", tma && (whole || alone));
  r.region("store_fixup_piece", tma && shared);
  r.region("plan_shape", tma);
  r.fact("resident_clusters", (long long)resident);
  r.fact("tiles", schedule.tiles);
  r.fact("k_slices", (long long)schedule.k_tiles);
  r.fact("whole_tiles", schedule.tiles - schedule.sk_tiles);
  r.fact("split_tiles", schedule.sk_tiles);
  r.fact("parts_per_split_tile", (long long)schedule.split);
  r.fact("fixup", std::string(shared && alone ? "alone and shared" : shared ? "shared" : alone ? "alone" : "none"));
  return r;
}

}  // namespace worklog::lab_routes
