// The general kernel (general_gemm.cu): for the problems the Hopper steps' TMA kernels cannot take.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "step.hpp"

namespace worklog::general {

// C = alpha·A·B + beta·C, any shape, any strides, any alignment: 128 × 256 block tiles.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);
// The same kernel with 32 × 32 block tiles: one launch, no workspace, for problems too small to fill
// the GPU with 128 × 256 tiles (every side a few hundred).
void launch_small_tile(const GemmProblem<__half>& p, cudaStream_t stream);

}  // namespace worklog::general
