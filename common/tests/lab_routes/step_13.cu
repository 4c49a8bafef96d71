// lab_routes (lab_routes.hpp): step 13. The library's swap kernel (swap_kernel.cuh) gives the rule and
// the widths; the route below is 13's launch_config's, in its order: 08's kernel where TMA cannot
// describe A or B (tma_path_possible), 12 (the library's stream-K GEMM) for M above swap_ab::max_m
// (13's swap_max_m), the swap kernel otherwise, at the width with_width picks. Every LAB region of 13 is in the swap
// kernel.
#include "lab_routes.hpp"
#include "sm90/swap_gemm.hpp"
#include "sm90/swap_kernel.cuh"

namespace worklog::lab_routes {

Route route_13(Shape s, const Gpu&) {
  const GemmProblem<__half> p = packed_problem(s);
  const bool swap = swap_ab::tma_path_possible(p) && p.m <= swap_ab::max_m;
  Route r{!swap_ab::tma_path_possible(p) ? "08" : swap ? "swap" : "12"};
  for (const char* name :
       {"descriptors", "store_transposed", "barriers", "producer", "arm_and_copy", "release_stage", "wait_full"})
    r.region(name, swap);
  r.fact("swap_max_m", (long long)swap_ab::max_m);
  if (swap) r.fact("width", (long long)swap_ab::with_width(p.m, [](auto width) { return int(width); }));
  return r;
}

}  // namespace worklog::lab_routes
