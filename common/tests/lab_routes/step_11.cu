// lab_routes (lab_routes.hpp): step 11. Its plan is the library's stream-K GEMM's (stream_k_gemm.hpp:
// plan_on), which plans with 11's rule at 11's tile and clusters (stream_k_kernel.cuh: plan_shape):
// which tiles are split, and into how many parts. 11 fixes every split tile up by the unit that holds
// its slice 0, which decides which regions run:
//   - a whole tile, and a split tile once fixed up, is written by the "whole tile" store;
//   - a split tile leaves partials that its units publish, and the unit holding slice 0 adds them
//     (add_later_partials).
#include "lab_routes.hpp"
#include "sm90/split_k_schedule.cuh"
#include "sm90/stream_k_gemm.hpp"
#include "sm90/stream_k_kernel.cuh"

namespace worklog::lab_routes {

Route route_11(Shape s, const Gpu& gpu) {
  const bool tma = stream_k::tma_path_possible(packed_problem(s));
  Route r{tma ? "tma" : "08"};
  const int resident = gpu.sms / stream_k::cluster_size();  // clusters of 2 on pairs of SMs (lab_routes.hpp)
  const stream_k::Plan plan = stream_k::plan_on(s, gpu.sms);
  const stream_k::Schedule& schedule = plan.schedule;
  const bool split = schedule.units > 0;
  // split_k_schedule.cuh
  r.region("publish", tma && split);
  r.region("add_later_partials", tma && split);
  // stream_k_kernel.cuh: the repeat regions of 09's and 10's protocol run on every TMA launch.
  for (const char* name : {"barriers", "producer", "arm_and_copy", "release_in_every_block", "wait_full",
                           "release_previous_slice", "release_last_slice"})
    r.region(name, tma);
  r.region("store_whole_tile", tma);
  r.region("plan_shape", tma);
  r.fact("resident_clusters", (long long)resident);
  r.fact("tiles", schedule.tiles);
  r.fact("k_slices", (long long)schedule.k_tiles);
  r.fact("whole_tiles", schedule.tiles - schedule.sk_tiles);
  r.fact("split_tiles", schedule.sk_tiles);
  r.fact("parts_per_split_tile", (long long)schedule.split);
  r.fact("fixup", std::string(split ? "alone" : "none"));
  return r;
}

}  // namespace worklog::lab_routes
