// The verification and timing harness shared by every step, parameterized by the input type
// (float: steps 01-04, FP32 throughout; __half: steps 05-06, FP16 inputs, FP32 accumulate and C).
//
// A step's main() is one call: run_step(argc, argv, the step). The pieces it is made of are
// public so that the GPU tests drive the same code.
#pragma once

#include <cublas_v2.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "cli.hpp"
#include "gemm_math.hpp"
#include "harness_timing.hpp"  // median_ms(): the median of CUDA-event timings
#include "step.hpp"

namespace worklog {

// A failure with its documented exit code (cli.hpp) and a one-line message.
struct Failure {
  int exit_code;
  std::string message;
};

// Owns one cudaMalloc'd array. An allocation that fails is a Failure with exit_does_not_fit.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count);
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer();
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

class CublasHandle {
 public:
  CublasHandle();
  ~CublasHandle();
  CublasHandle(const CublasHandle&) = delete;
  CublasHandle& operator=(const CublasHandle&) = delete;
  cublasHandle_t get() const { return handle_; }

 private:
  cublasHandle_t handle_ = nullptr;
};

template <class Input> constexpr const char* precision_name();
template <> constexpr const char* precision_name<float>() { return "fp32"; }
template <> constexpr const char* precision_name<__half>() { return "fp16"; }

// Unit roundoff of the FP32 accumulation that each precision's kernels (and cuBLAS) perform.
template <class Input> constexpr double accumulation_unit_roundoff();
template <> constexpr double accumulation_unit_roundoff<float>() { return fp32_unit_roundoff; }
template <> constexpr double accumulation_unit_roundoff<__half>() { return tensor_core_fp32_unit_roundoff; }

// cuBLAS computing exactly what a step computes: cublasGemmEx with FP32 compute (never TF32);
// FP32 inputs for float, FP16 inputs for __half; C in FP32.
template <class Input>
void cublas_gemm(cublasHandle_t handle, const GemmProblem<Input>& p);

struct CheckResult {
  bool pass = false;
  std::uint64_t bad_count = 0;
  double max_abs_err = 0;  // max over elements of |C − C_ref| (Inf when an element is NaN/Inf)
  double err_over_tol = 0;  // max over elements of |C − C_ref| / tolerance
  long long first_bad_row = -1, first_bad_col = -1;  // smallest linear index that failed
  float expected = 0, obtained = 0;                  // at that element
};

// The device data of one GEMM: seeded random A and B, the initial C (random, or NaN to prove that
// beta == 0 does not read it), the step's output C, and with the reference on, cuBLAS's result
// and the bound matrix |A|·|B| from which each element's tolerance follows (gemm_math.hpp).
template <class Input>
class GemmData {
 public:
  GemmData(Shape shape, std::uint64_t seed, InitialC initial_c, bool with_reference);
  Shape shape() const { return shape_; }
  // The problem a step solves: C = alpha·A·B + beta·C on output(), which reset_output() sets to
  // the initial C.
  GemmProblem<Input> problem(float alpha, float beta) const;
  void reset_output();
  float* output() const { return c_.data(); }
  // cuBLAS on the same inputs, into its own copy of the initial C.
  void compute_reference(cublasHandle_t handle, float alpha, float beta);
  // Compares output() with the reference element by element, on the GPU.
  CheckResult check(float alpha, float beta) const;
  // cuBLAS's buffer, reused as its output while it is timed (after the check).
  GemmProblem<Input> reference_problem(float alpha, float beta) const;

  // Host copies, for the CPU reference in the tests (FP16 values widened exactly to float).
  std::vector<float> host_a() const;
  std::vector<float> host_b() const;
  std::vector<float> host_initial_c() const;
  std::vector<float> host_output() const;

 private:
  Shape shape_;
  DeviceBuffer<Input> a_, b_;
  DeviceBuffer<float> c_initial_, c_, c_reference_, bound_;
};

// The whole program behind each step executable: parse the command line, pick the device, check
// the step against cuBLAS, time both, print and append the CSV row. Returns the exit code.
template <class Input>
int run_step(int argc, char** argv, const Step<Input>& step);
// main() of a step executable (step_main.cpp): run_step() on the registered step called `name`.
int run_registered_step(const char* name, int argc, char** argv);
// The one-line message and exit code when this GPU is outside the step's compute capabilities,
// or nothing when it may run.
template <class Input>
std::optional<Failure> unsupported_gpu(const Step<Input>& step, const cudaDeviceProp& prop);

// Which device: index, or Failure (no device: exit_no_device; bad index: exit_bad_argument).
cudaDeviceProp select_device(int index);
// Refuses (Failure, exit_does_not_fit) a problem whose buffers do not fit in free device memory.
void require_device_memory(Shape shape, int input_bytes, bool check);

}  // namespace worklog

