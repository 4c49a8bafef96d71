// A route of the Hopper library: few rows of A with B's rows off 16 bytes, read where they lie (no
// padded copy). 13's swap, Cᵀ = Bᵀ·Aᵀ, on mma.sync: a block takes 128 columns of C and every row of A
// over one part of K, staging the aligned 16-byte chunks that cover each row. Step 14's padding
// (pad_unaligned.cuh) routes problems of up to its in_place_max_m rows here; docs/routes.md and 14's
// README measure it.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::in_place_rows {

// The most rows of A the kernel takes (its widest tile: 128 rows of the mma's n side).
inline constexpr int max_m = 128;

// C = alpha·A·B + beta·C for M ≤ max_m, any strides and alignment; p.workspace must hold
// workspace_bytes(shape) (the parts' sums when K is split).
void launch(const GemmProblem<__half>& p, cudaStream_t stream);
std::size_t workspace_bytes(Shape shape);

}  // namespace worklog::in_place_rows
