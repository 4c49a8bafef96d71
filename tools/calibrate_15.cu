// 15's calibration: the price of each entry of its menu on this GPU, for its model
// (common/sm90/tile_per_shape.cu).
// Built as build/bin/15_tile_per_shape_calibrate; calibrate_menu.cuh says how it measures and fits.
//
// Usage: 15_tile_per_shape_calibrate [--help] [--out FILE] [--iters N] [--explain MxNxK]...
// --out common/sm90/tile_prices_15.csv rewrites this GPU's rows. Exit codes as every program of
// the worklog (common/exit_codes.hpp): 0, 2 (bad argument), 4 (not compute capability 9.0), 5 (CUDA
// error), 77 (no usable CUDA device).

#include "calibrate_menu.cuh"
#include "sm90/tile_per_shape.hpp"

int main(int argc, char** argv) {
  namespace tps = worklog::tile_per_shape;
  const worklog::calibration::Menu menu{"step 15", "common/sm90/tile_prices_15.csv", tps::menu, tps::pick, tps::costs};
  return worklog::calibration::calibrate_main(argc, argv, menu);
}
