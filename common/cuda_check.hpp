// Every CUDA and cuBLAS call is checked; a failure becomes an exception that carries the call's
// file and line, and the harness turns it into a one-line message and exit code 5.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace worklog {

struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

inline void check_cuda(cudaError_t status, const char* file, int line) {
  if (status != cudaSuccess)
    throw CudaError(status, std::string("CUDA error at ") + file + ":" + std::to_string(line) + ": " +
                                cudaGetErrorName(status) + ": " + cudaGetErrorString(status));
}

inline void check_cublas(cublasStatus_t status, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string("cuBLAS error at ") + file + ":" + std::to_string(line) + ": " +
                             cublasGetStatusName(status) + ": " + cublasGetStatusString(status));
}

}  // namespace worklog

#define CUDA_CHECK(call) ::worklog::check_cuda((call), __FILE__, __LINE__)
#define CUBLAS_CHECK(call) ::worklog::check_cublas((call), __FILE__, __LINE__)
