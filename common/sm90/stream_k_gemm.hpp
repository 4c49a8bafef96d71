// What step 11 offers the later steps: its launcher and the workspace it needs, for the problems they
// hand it (12: more rows than its swap takes; 13: padded copies). Defined in 11_stream_k/kernel.cu; a
// later step's program links 11's kernel in through add_worklog_step(... FALLBACK 11_stream_k). The
// schedule itself, which 12 shares, is schedule.cuh beside this file.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::stream_k {

// C = alpha·A·B + beta·C by step 11: its kernel where TMA can describe A, B and C (bases 16-byte
// aligned, lda and ldb multiples of 8, ldc and N of 4), step 08's otherwise. p.workspace must hold
// workspace_bytes(shape, strides) bytes.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);

// Bytes of workspace launch() needs for a shape with these (resolved) strides, on the current device.
std::size_t workspace_bytes(Shape shape, Strides strides);

}  // namespace worklog::stream_k
