// 16's calibration: the price of each entry of its menu (15's tiles and 13's swapped tiles) on this
// GPU, for the model in 16_both_orientations/kernel.cu. Built as build/bin/16_both_orientations_calibrate; 15's
// calibrate_menu.cuh says how it measures and fits.
//
// Usage: 16_both_orientations_calibrate [--help] [--out FILE] [--iters N] [--explain MxNxK]...
// --out common/sm90/tile_prices_16.csv rewrites this GPU's rows. Exit codes as every program of
// the worklog (common/exit_codes.hpp): 0, 2 (bad argument), 4 (not compute capability 9.0), 5 (CUDA
// error), 77 (no usable CUDA device).

#include "calibrate_menu.cuh"
#include "sm90/both_orientations.hpp"
#include "sm90/tile_per_shape.hpp"

namespace {

namespace tps = worklog::tile_per_shape;
namespace both = worklog::both_orientations;

std::size_t pick(worklog::Shape shape, worklog::Strides strides) { return both::model().pick(shape, strides); }
const tps::Costs* costs(const tps::Entry& entry) { return both::model().costs(entry); }

}  // namespace

int main(int argc, char** argv) {
  const worklog::calibration::Menu menu{"step 16", "common/sm90/tile_prices_16.csv", both::menu, pick, costs};
  return worklog::calibration::calibrate_main(argc, argv, menu);
}
