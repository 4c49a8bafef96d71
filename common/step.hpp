// What every step hands to the harness: one launcher signature for all of them, parameterized by
// the input type (float for steps 01-04, __half for the tensor-core steps 05-06). C and the
// scalars are FP32 in every step.
#pragma once

#include <cuda_runtime.h>

namespace worklog {

// C = alpha·A·B + beta·C with row-major, densely packed A (M×K), B (K×N) and C (M×N): the leading
// dimensions are K, N and N. With beta == 0, C is not read (BLAS semantics).
template <class Input>
struct GemmProblem {
  int m, n, k;
  float alpha, beta;
  const Input* a;
  const Input* b;
  float* c;
};

template <class Input>
using Launcher = void (*)(const GemmProblem<Input>& problem, cudaStream_t stream);

template <class Input>
struct Step {
  const char* name;   // the directory and executable name, e.g. "01_naive"
  const char* adds;   // what the step adds, for the result table
  Launcher<Input> launch;
  // Tile of C over which one fetch of A and B from global memory is shared: used by
  // modeled_global_bytes() for the roofline, and explained in the step's README.
  int reuse_rows, reuse_cols;
  int min_compute_capability;  // e.g. 70 for WMMA; 0 when any CUDA GPU will do
};

}  // namespace worklog
