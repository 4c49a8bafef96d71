// lab_routes (lab_routes.hpp): step 10. Its kernel.cu, included whole, decides the path: TMA where it
// can describe A, B and C (tma_path_possible), 08's kernel otherwise; every LAB region is in the TMA
// kernel.
#include "10_persistent_clusters/kernel.cu"
#include "lab_routes.hpp"

namespace worklog::lab_routes {

Route route_10(Shape s, const Gpu&) {
  const bool tma = tma_path_possible(packed_problem(s));
  Route r{tma ? "tma" : "08"};
  for (const char* name : {"barriers", "producer", "arm_and_copy", "release_in_every_block", "wait_full",
                           "release_previous_slice", "release_last_slice"})
    r.region(name, tma);
  return r;
}

}  // namespace worklog::lab_routes
