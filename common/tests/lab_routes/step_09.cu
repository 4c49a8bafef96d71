// lab_routes (lab_routes.hpp): step 09. Its registration says which problems its own kernel takes
// (Step::own_path: TMA can describe A, B and C), the program linking the step's kernel; 08's kernel
// takes the others. Every LAB region is in the TMA kernel.
#include <stdexcept>

#include "lab_routes.hpp"
#include "step.hpp"

namespace worklog::lab_routes {

Route route_09(Shape s, const Gpu&) {
  const RegisteredStep* step = find_step("09_wgmma_tma");
  if (!step || !step->fp16 || !step->fp16->own_path)
    throw std::logic_error(
        "lab_routes: 09_wgmma_tma is not linked in, or does not say which problems its kernel takes");
  const bool tma = step->fp16->own_path(packed_problem(s));
  Route r{tma ? "tma" : "08"};
  for (const char* name : {"barriers", "producer", "arm_and_copy", "wait_full", "release_stage"}) r.region(name, tma);
  return r;
}

}  // namespace worklog::lab_routes
