// The library's swap GEMM (swap_gemm.cu): the swap kernel (swap_kernel.cuh) at the configuration
// step 13 teaches, compiled once for the steps that hand problems to it: few rows of A (M up to
// max_m), C that the stream-K GEMM's TMA store cannot take, a chain of layers, and fixed block tiles
// for a menu of both orientations.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <vector>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::stream_k {
struct Plan;  // the plan of a schedule (stream_k_schedule.cuh)
}

namespace worklog::swap_ab {

// The most rows of A launch() gives the swap kernel; above, the stream-K GEMM is faster (13's README:
// the crossover).
inline constexpr int max_m = 128;

// C = alpha·A·B + beta·C: the swap kernel for M ≤ max_m, the stream-K GEMM above; the general kernel
// when TMA cannot describe A or B (a base off 16 bytes, lda or ldb not a multiple of 8). C may have
// any ldc: the swap kernel writes it with ordinary stores.
void launch(const GemmProblem<__half>& p, cudaStream_t stream);

// As launch, for a chain of layers: the swap kernel (M ≤ max_m) by programmatic dependent launch, free
// to start before the kernel ahead of it in the stream has finished. It copies its first slices of B
// (weights, which no earlier layer writes) at once and waits for that kernel before it reads A or
// writes C. Other shapes are launched as launch does.
void launch_chained(const GemmProblem<__half>& p, cudaStream_t stream);

// The swap kernel whatever M (tiles of 256 rows above 128): for C that the stream-K GEMM's TMA store
// cannot take.
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
  // cluster (every tile in one wave), or, where cluster_parts is 0, the stream-K schedule: plan(shape, plan).
  int (*cluster_parts)(Shape shape);
  void (*plan)(Shape shape, stream_k::Plan& plan);
};
const std::vector<SwappedTile>& swapped_tiles();

}  // namespace worklog::swap_ab
