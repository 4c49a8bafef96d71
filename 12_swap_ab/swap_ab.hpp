// What step 12 offers the later steps: its launcher, the swap kernel alone, and the workspace each
// needs (13); the swap kernel at fixed block tiles, for a menu of both orientations (15). Defined in
// 12_swap_ab/kernel.cu; a later step's program links 12's kernel in through add_worklog_step(...
// FALLBACK 12_swap_ab).
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::stream_k {
struct Plan;  // 11's plan of a schedule (common/sm90/stream_k_schedule.cuh)
}

namespace worklog::swap_ab {

// The most rows of A the step gives the swap kernel; above, 11 is faster (README.md: the crossover).
inline constexpr int max_m = 128;

// C = alpha·A·B + beta·C by step 12: the swap kernel for M ≤ max_m, 11 above; step 08 when TMA cannot
// describe A or B (a base off 16 bytes, lda or ldb not a multiple of 8). C may have any ldc: the swap
// kernel writes it with ordinary stores.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);

// As launch, for a chain of layers: the swap kernel (M ≤ max_m) by programmatic dependent launch, free
// to start before the kernel ahead of it in the stream has finished. It copies its first slices of B
// (weights, which no earlier layer writes) at once and waits for that kernel before it reads A or
// writes C. Other shapes are launched as launch does.
void launch_chained(const GemmProblem<__half>& p, cudaStream_t stream);

// The swap kernel whatever M (tiles of 256 rows above 128): for C that 11's TMA store cannot take.
void launch_swapped(const GemmProblem<__half>& p, cudaStream_t stream);

// Bytes of workspace each needs for a shape with these (resolved) strides, on the current device.
std::size_t workspace_bytes(Shape shape, Strides strides);
std::size_t swapped_workspace_bytes(Shape shape, Strides strides);

// The swap kernel at one block tile: `rows` rows of C (our M side: the wgmma's n, any multiple of 8 up
// to 256) × `cols` columns (our N side: 64 per consumer warpgroup, the m of its wgmma).
struct SwappedTile {
  const char* name;         // swap_<rows>x<cols>
  const char* description;  // what it is for
  int rows, cols, stages;
  Launcher<__half> launch;  // any problem: the swap kernel where TMA can describe A and B, else 08's kernel
  WorkspaceSize workspace;  // bytes it needs for a shape
  int (*resident)();        // its blocks that fit on the current device at once
  // How it runs a shape on the current device: cut into cluster_parts k-parts a tile, summed in a
  // cluster (every tile in one wave), or, where cluster_parts is 0, 11's schedule: plan(shape, plan).
  int (*cluster_parts)(Shape shape);
  void (*plan)(Shape shape, stream_k::Plan& plan);
};
const std::vector<SwappedTile>& swapped_tiles();

}  // namespace worklog::swap_ab
