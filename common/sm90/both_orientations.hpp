// What step 15 offers its calibrate tool and the tests: its menu (14's entries, then 12's swapped
// tiles) and the model over it at this step's prices. Defined in 15_both_orientations/kernel.cu; the calibrate tool
// links that step.
#pragma once

#include <vector>

#include "sm90/tile_per_shape.hpp"

namespace worklog::both_orientations {

const std::vector<tile_per_shape::Entry>& menu();
const tile_per_shape::Model& model();

}  // namespace worklog::both_orientations
