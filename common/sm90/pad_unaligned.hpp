// The library's padding (step 14's, pad_unaligned.cuh), compiled once in pad_unaligned.cu: a launcher
// that takes any problem (rows TMA cannot describe are padded into the workspace first), the
// workspace it needs, and the padding as a transform for a later step's own launchers.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::pad_unaligned {

// C = alpha·A·B + beta·C by step 14. p.workspace must hold workspace_bytes(shape, strides) bytes.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);

// Bytes of workspace launch() needs for a shape with these (resolved) strides, on the current device.
std::size_t workspace_bytes(Shape shape, Strides strides);

// The padding as a transform, for a later step with launchers of its own: as launch, but the padded
// problem (A's and B's rows on 16 bytes; C's too, or C staged and copied out) goes to `solve`, which
// must take any problem TMA can describe, with solve_workspace bytes for it. Where 13 reads in place
// (few rows, B unaligned) or its swap kernel writes an unaligned C (M above 13's swap, short K),
// solve is not called.
void launch_with(const GemmProblem<__half>& p, cudaStream_t stream, Launcher<__half> solve,
                 WorkspaceSize solve_workspace);
std::size_t workspace_bytes_with(Shape shape, Strides strides, WorkspaceSize solve_workspace);

}  // namespace worklog::pad_unaligned
