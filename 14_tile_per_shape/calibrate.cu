// 14's calibration: the price of each entry of its menu on this GPU, for the model in kernel.cu.
// Built as build/bin/14_tile_per_shape_calibrate; calibrate_menu.cuh says how it measures and fits.
//
// Usage: 14_tile_per_shape_calibrate [--help] [--out FILE] [--iters N] [--explain MxNxK]...
// --out 14_tile_per_shape/calibration.inc rewrites this GPU's lines. Exit codes as every program of
// the worklog (common/exit_codes.hpp): 0, 2 (bad argument), 4 (not compute capability 9.0), 5 (CUDA
// error), 77 (no usable CUDA device).

#include "14_tile_per_shape/calibrate_menu.cuh"
#include "14_tile_per_shape/tile_per_shape.hpp"

namespace {

// Where 14 runs a shape with something else than its menu (tile_per_shape::route_of).
const char* route_note(worklog::Shape shape) {
  using worklog::tile_per_shape::Route;
  switch (worklog::tile_per_shape::route_of(shape, {shape.k, shape.n, shape.n}, true)) {
    case Route::pass_over_a:
      return "few columns: step 14 runs this shape with its pass over A";
    case Route::tiny_k:
      return "tiny K: step 14 runs this shape with its write of C";
    case Route::small_problem:
      return "every side small: step 14 runs this shape with 08's kernel in 32 × 32 tiles";
    case Route::few_rows:
      return "few rows: step 14 runs this shape with 12's family";
    case Route::padded:
    case Route::menu:
      break;
  }
  return nullptr;
}

}  // namespace

int main(int argc, char** argv) {
  namespace tps = worklog::tile_per_shape;
  const worklog::calibration::Menu menu{
      "step 14", "14_tile_per_shape/calibration.inc", tps::menu, tps::pick, tps::costs, route_note};
  return worklog::calibration::calibrate_main(argc, argv, menu);
}
