// lab_routes (lab_routes.hpp): step 09. Its kernel.cu, included whole, decides the path: TMA where it
// can describe A, B and C (tma_path_possible), 08's kernel otherwise; every LAB region is in the TMA
// kernel.
#include "09_wgmma_tma/kernel.cu"
#include "lab_routes.hpp"

namespace worklog::lab_routes {

Route route_09(Shape s, const Gpu&) {
  const bool tma = tma_path_possible(packed_problem(s));
  Route r{tma ? "tma" : "08"};
  for (const char* name : {"barriers", "producer", "arm_and_copy", "wait_full", "release_stage"}) r.region(name, tma);
  return r;
}

}  // namespace worklog::lab_routes
