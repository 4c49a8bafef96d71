// What step 16 offers its calibrate tool and the tests: its menu (15's entries, then 13's swapped
// tiles) and the model over it at this step's prices. Defined in 16_both_orientations/kernel.cu; the calibrate tool
// links that step.
#pragma once

#include <vector>

#include "sm90/tile_per_shape.hpp"

namespace worklog::both_orientations {

const std::vector<tile_per_shape::Entry>& menu();
const tile_per_shape::Model& model();

}  // namespace worklog::both_orientations
