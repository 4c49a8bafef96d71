// lab_routes (lab_routes.hpp): step 14. Its padding (common/sm90/pad_unaligned.cuh, included whole)
// gives the alignment rule (tma_describable, as launch_padded applies it) and the decision
// (decide_padding, its LAB region, which plan_padding calls before it sizes the workspace). The regions: the decision
// runs on every launch; the copy (pad_copy) where an operand is padded, the hand-off where anything is; the in-place
// kernel's repeat regions on the in-place route.
#include "lab_routes.hpp"
#include "sm90/pad_unaligned.cuh"

namespace worklog::lab_routes {

Route route_14(Shape s, const Gpu&) {
  const GemmProblem<__half> p = packed_problem(s);
  const bool a_ok = tma_describable(p.a, p.lda), b_ok = tma_describable(p.b, p.ldb),
             c_ok = tma_describable(p.c, p.ldc, sizeof(float)) && p.n % 4 == 0;
  const pad_unaligned::Padding d = pad_unaligned::decide_padding<pad_unaligned::PadConfig>(s, a_ok, b_ok, c_ok);
  using Path = pad_unaligned::Route;  // 14's routes (lab_routes::Route is this program's answer)
  const bool in_place = d.route == Path::in_place, pad_a = d.pad_a, pad_b = d.pad_b, stage_c = d.stage_c;
  Route r{in_place                         ? "in_place"
          : d.route == Path::staged_c      ? "staged_c"
          : d.route == Path::swap_direct_c ? "swap_direct_c"
                                           : "swap_step"};
  r.region("pad_copy", pad_a || pad_b);
  r.region("decide_padding", true);
  r.region("padded_hand_off", pad_a || pad_b || stage_c);
  r.region("in_place_products", in_place);
  r.region("in_place_pipeline", in_place);
  r.fact("pad_a", pad_a);
  r.fact("pad_b", pad_b);
  r.fact("stage_c", stage_c);
  return r;
}

}  // namespace worklog::lab_routes
