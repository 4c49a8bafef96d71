// lab_routes (lab_routes.hpp): step 13. Its kernel.cu, included whole, gives the configuration
// (PadConfig) and the alignment rule (tma_describable, as launch_padded applies it). The route itself
// is plan_padding's decision (its LAB region), repeated below: plan_padding goes on to size the
// workspace of the path it hands over to, which asks the device how many blocks fit, so it cannot
// run here. The regions: the decision runs on every launch; the copy (pad_copy) where an operand is
// padded, the hand-off where anything is; the in-place kernel's repeat regions on the in-place route.
#include "13_pad_unaligned/kernel.cu"
#include "lab_routes.hpp"

namespace worklog::lab_routes {

Route route_13(Shape s, const Gpu&) {
  const GemmProblem<__half> p = packed_problem(s);
  const bool a_ok = tma_describable(p.a, p.lda), b_ok = tma_describable(p.b, p.ldb),
             c_ok = tma_describable(p.c, p.ldc, sizeof(float)) && p.n % 4 == 0;
  // plan_padding<PadConfig>'s decision.
  const bool in_place = !b_ok && s.m <= PadConfig::in_place_max_m;
  const bool swap_c = !in_place && s.m > swap_ab::max_m && !c_ok;
  const bool stage_c = swap_c && s.k > PadConfig::direct_c_max_k;
  const bool pad_a = !in_place && !a_ok, pad_b = !in_place && (!b_ok || (stage_c && round_up_8(s.n) != s.n));
  Route r{in_place ? "in_place" : stage_c ? "staged_c" : swap_c ? "swap_direct_c" : "step_12"};
  r.region("pad_copy: fill a chunk", pad_a || pad_b);
  r.region("in-place products (repeats 06 08)", in_place);
  r.region("in-place pipeline (repeats 07)", in_place);
  r.region("plan_padding: the decision", true);
  r.region("launch_padded: the padded hand-off", pad_a || pad_b || stage_c);
  r.fact("pad_a", pad_a);
  r.fact("pad_b", pad_b);
  r.fact("stage_c", stage_c);
  return r;
}

}  // namespace worklog::lab_routes
