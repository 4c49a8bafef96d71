// 14's calibration: the price of each entry of its menu on this GPU, for the model in kernel.cu.
// Built as build/bin/14_tile_per_shape_calibrate; calibrate_menu.cuh says how it measures and fits.
//
// Usage: 14_tile_per_shape_calibrate [--help] [--out FILE] [--iters N] [--explain MxNxK]...
// --out 14_tile_per_shape/calibration.inc rewrites this GPU's lines. Exit codes as every program of
// the worklog (common/exit_codes.hpp): 0, 2 (bad argument), 4 (not compute capability 9.0), 5 (CUDA
// error), 77 (no usable CUDA device).

#include "14_tile_per_shape/calibrate_menu.cuh"
#include "14_tile_per_shape/tile_per_shape.hpp"

int main(int argc, char** argv) {
  namespace tps = worklog::tile_per_shape;
  const worklog::calibration::Menu menu{"step 14", "14_tile_per_shape/calibration.inc", tps::menu, tps::pick,
                                        tps::costs};
  return worklog::calibration::calibrate_main(argc, argv, menu);
}
