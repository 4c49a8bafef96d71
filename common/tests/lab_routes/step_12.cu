// lab_routes (lab_routes.hpp): step 12. Its kernel.cu, included whole, gives the rule and the
// configuration; the route below is launch_config's, in its order: 08's kernel where TMA cannot
// describe A or B (tma_path_possible), 11 for M above Config::swap_max_m (swap_ab::max_m), the swap
// kernel otherwise, at the width with_width picks. Every LAB region of 12 is in the swap kernel.
#include "12_swap_ab/kernel.cu"
#include "lab_routes.hpp"

namespace worklog::lab_routes {

Route route_12(Shape s, const Gpu&) {
  const GemmProblem<__half> p = packed_problem(s);
  const bool swap = tma_path_possible(p) && p.m <= Config::swap_max_m;
  Route r{!tma_path_possible(p) ? "08" : swap ? "swap" : "11"};
  for (const char* name :
       {"descriptors", "store_transposed", "barriers", "producer", "arm_and_copy", "release_stage", "wait_full"})
    r.region(name, swap);
  r.fact("swap_max_m", (long long)Config::swap_max_m);
  if (swap) r.fact("width", (long long)with_width(p.m, [](auto width) { return int(width); }));
  return r;
}

}  // namespace worklog::lab_routes
