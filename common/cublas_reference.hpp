// cuBLAS, the reference every step is checked and timed against.
#pragma once

#include <cublas_v2.h>

#include "step.hpp"  // GemmProblem

namespace worklog {

// One cuBLAS handle, in the default math mode (FP32 stays FP32: no TF32).
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

// cuBLAS computing exactly what a step computes: cublasGemmEx with FP32 compute (never TF32);
// FP32 inputs for float, FP16 inputs for __half; C in FP32.
template <class Input>
void cublas_gemm(cublasHandle_t handle, const GemmProblem<Input>& p);

}  // namespace worklog
