// lab_routes (lab_routes.hpp): step 12. The library's stream-K GEMM (stream_k_gemm.hpp: plan_on), at
// the configuration 12 teaches, gives the plan (stream_k_kernel.cuh: plan_shape, 11's rule), which
// says which tiles are split and how each is fixed up. 12's regions, wait_for_partials and share, run
// where a split tile is held by more than fixup_alone_units() units: every unit adds and writes a share
// of its pieces. Under 11's rule every split tile of a shape has the same number of parts, so a shape's
// split tiles are all shared or all fixed up alone.
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
  for (long long tile = 0; tile < schedule.sk_tiles; ++tile)
    (stream_k::fixed_up_alone(schedule, tile, stream_k::fixup_alone_units()) ? alone : shared) = true;
  // stream_k_schedule.cuh: a split tile's fixup shared among its units
  r.region("wait_for_partials", tma && shared);
  r.region("share", tma && shared);
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
