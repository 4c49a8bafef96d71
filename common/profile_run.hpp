// The --profile mode of a step executable: one launch of the step's kernel (or of cuBLAS in the
// step's precision) inside a cudaProfilerStart/Stop range, so that `ncu --profile-from-start off`
// profiles exactly that kernel. plots/ncu_profile.py drives it.
#pragma once

#include "cli.hpp"
#include "step.hpp"

namespace worklog {

// Runs what o.profile names once unprofiled (module loading, cuBLAS's choice of kernel), then once
// in the profiled range, and prints one line naming what ran and the step's precision (the
// driver reads the precision from it). Returns the exit code; CUDA errors throw, as in measure().
template <class Input>
int profile_once(const Step<Input>& step, const Options& o);

}  // namespace worklog
