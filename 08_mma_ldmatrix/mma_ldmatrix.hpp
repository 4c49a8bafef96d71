// What step 08 offers the later steps: its launcher, for the shapes their Hopper kernels leave to it
// (rows that TMA cannot describe), and its kernel with a small tile (14's small problems). Defined
// in 08_mma_ldmatrix/kernel.cu; a later step's program links 08's kernel in through
// add_worklog_step(... FALLBACK 08_mma_ldmatrix).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include "step.hpp"

namespace worklog::mma_ldmatrix {

// C = alpha·A·B + beta·C by step 08's kernel, any shape, any strides, any alignment.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);
// The same kernel with 32 × 32 block tiles (the variant small_tile): one launch, no workspace, for
// problems too small to fill the GPU with 08's own tile (step 14's small shapes).
void launch_small_tile(const GemmProblem<__half>& p, cudaStream_t stream);

}  // namespace worklog::mma_ldmatrix
