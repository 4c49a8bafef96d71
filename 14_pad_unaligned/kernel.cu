// Step 14 (Hopper) — any alignment at full speed: pad once, or read in place.
//
// Adds to 13: operands whose rows TMA cannot describe are copied once into the workspace with their
// leading dimension rounded up to 8 and handed to 13's launcher; an unaligned C is written by the
// swap kernel or staged and copied out; few rows of A with an unaligned B are read in place.
// Why it helps: one extra column no longer sends a problem to a kernel a fraction as fast.
//
// Run: build/bin/14_pad_unaligned --m 4097 --n 4097 --k 4097
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "sm90/pad_unaligned.cuh"
#include "step.hpp"

namespace worklog {
namespace {

using pad_unaligned::launch_padded;
using pad_unaligned::PadConfig;
using pad_unaligned::padded_workspace_bytes;

// ---- Configuration ------------------------------------------------------------------------------
// The step runs common/sm90/pad_unaligned.cuh at its PadConfig (one knob a line there, each with its
// reason); the in-place route's kernel is common/sm90/in_place_rows.cu.

// Variants, for README.md's tables: each side of the decision forced.
struct PadAlways : PadConfig {  // B padded even for few rows: the copy where the rule reads in place
  static constexpr int in_place_max_m = 0;
};
struct CStaged : PadConfig {  // C always through a padded C and 12, never the swap kernel's stores
  static constexpr int direct_c_max_k = 0;
};
struct CDirect : PadConfig {  // C always written by the swap kernel's stores when its rows are unaligned
  static constexpr int direct_c_max_k = 1 << 30;
};

}  // namespace

// The reuse tile is 13's (the roofline's model sees 11's tile, to which the large squares go).
WORKLOG_REGISTER_STEP(
    Step<__half>{"14_pad_unaligned", launch_padded<PadConfig>}
        .adds("unaligned rows: operands padded once into the workspace for 13's launcher, few rows read in place")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(padded_workspace_bytes<PadConfig>)
        .variant("pad_always", "the copy for every unaligned shape, few rows of A too (no in-place kernel)",
                 launch_padded<PadAlways>, padded_workspace_bytes<PadAlways>)
        .variant("c_staged", "C with unaligned rows always through a padded C and 12", launch_padded<CStaged>,
                 padded_workspace_bytes<CStaged>)
        .variant("c_direct", "C with unaligned rows always written by the swap kernel's stores", launch_padded<CDirect>,
                 padded_workspace_bytes<CDirect>))

}  // namespace worklog
