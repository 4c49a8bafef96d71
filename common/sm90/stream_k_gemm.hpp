// The library's stream-K GEMM (stream_k_gemm.cu): the stream-K kernel (stream_k_kernel.cuh) at one
// configuration, 128 × 256 block tiles in clusters of two, whole waves data-parallel and the last
// wave in aligned k-parts. What a Hopper step hands the problems it does not take itself (more rows
// than the swap kernel takes; padded copies).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::stream_k {

// C = alpha·A·B + beta·C: the stream-K kernel where TMA can describe A, B and C (bases 16-byte
// aligned, lda and ldb multiples of 8, ldc and N of 4), the general kernel otherwise. p.workspace
// must hold workspace_bytes(shape, strides) bytes.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);

// Bytes of workspace launch() needs for a shape with these (resolved) strides, on the current device.
std::size_t workspace_bytes(Shape shape, Strides strides);

struct Plan;  // split_k_schedule.cuh
// The plan launch() makes for a shape on a GPU of `sms` multiprocessors, asking no device (a report
// of routes): its clusters of cluster_size() blocks, one on each pair of SMs, and the schedule; a
// split tile of at most fixup_alone_units() units is fixed up by the one holding its slice 0.
int cluster_size();
int fixup_alone_units();
Plan plan_on(Shape shape, int sms);

}  // namespace worklog::stream_k
