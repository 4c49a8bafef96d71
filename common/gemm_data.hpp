// The device data of one GEMM and the check of a step's result: seeded random inputs, cuBLAS's
// result on the same inputs, and an element-by-element comparison within the error bound
// (gemm_math.hpp).
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <vector>

#include "cli.hpp"  // InitialC
#include "device_buffer.hpp"
#include "gemm_math.hpp"
#include "step.hpp"  // GemmProblem

namespace worklog {

struct CheckResult {
  bool pass = false;
  std::uint64_t bad_count = 0;    // elements of C outside the bound
  std::uint64_t gap_written = 0;  // elements of C's gaps (columns N … ldc − 1) that the launch changed
  double max_abs_err = 0;         // max over elements of |C − C_ref| (Inf when an element is NaN/Inf)
  double err_over_tol = 0;        // max over elements of |C − C_ref| / tolerance
  long long first_bad_row = -1, first_bad_col = -1;  // smallest linear index that failed
  float expected = 0, obtained = 0;                  // at that element
};

// Seeded values uniform in [-scale, scale) into `count` packed FP16 elements: the generator of
// GemmData's inputs (independent streams of one seed, the same values whatever the GPU), for tools
// that build inputs of their own (13's chain of layers). On the default stream.
void fill_uniform(__half* x, long long count, std::uint64_t seed, std::uint64_t stream, float scale);

// Seeded random A and B, the initial C (random, or NaN to prove that beta == 0 does not read it),
// the step's output C, and with the reference on, cuBLAS's result and the bound matrix |A|·|B|
// from which each element's tolerance follows. With workspace_bytes > 0, also the step's workspace
// (Step::needs_workspace), zeroed once here and handed to the step in every problem().
// With leading dimensions past the rows (strides), each matrix is allocated with them: the gaps of A
// and B hold NaN (a kernel that takes one for data fails the check), those of C random values that
// the check requires unchanged. The values of the matrices themselves do not depend on the strides.
template <class Input>
class GemmData {
 public:
  GemmData(Shape shape, std::uint64_t seed, InitialC initial_c, bool with_reference, std::size_t workspace_bytes = 0,
           Strides strides = {});
  Shape shape() const { return shape_; }
  Strides strides() const { return strides_; }
  // The problem a step solves: C = alpha·A·B + beta·C on output(), which reset_output() sets to
  // the initial C.
  GemmProblem<Input> problem(float alpha, float beta) const;
  void reset_output();
  float* output() const { return c_.data(); }
  // cuBLAS on the same inputs, into its own copy of the initial C.
  void compute_reference(cublasHandle_t handle, float alpha, float beta);
  // Compares output() with the reference element by element, on the GPU, and C's gaps with the
  // initial C's (bit for bit).
  CheckResult check(float alpha, float beta) const;

  // Host copies, for the CPU reference in the tests (FP16 values widened exactly to float), packed:
  // M×K, K×N and M×N, without the gaps.
  std::vector<float> host_a() const;
  std::vector<float> host_b() const;
  std::vector<float> host_initial_c() const;
  std::vector<float> host_output() const;

 private:
  // The problem cuBLAS solves for the reference: the same inputs, into the reference's C.
  GemmProblem<Input> reference_problem(float alpha, float beta) const;

  Shape shape_;
  Strides strides_;  // resolved: no zeros
  DeviceBuffer<Input> a_, b_;
  DeviceBuffer<float> c_initial_, c_, c_reference_, bound_;
  DeviceBuffer<unsigned char> workspace_;
};

}  // namespace worklog
