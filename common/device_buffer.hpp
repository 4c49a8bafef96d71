// DeviceBuffer: owns one cudaMalloc'd array. An allocation that fails for lack of memory is a
// Failure with exit_does_not_fit, so that a problem too large for the GPU ends with that code.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <utility>

#include "cli.hpp"  // exit codes
#include "cuda_check.hpp"
#include "failure.hpp"

namespace worklog {

template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t count) : count_(count) {
    const cudaError_t status = cudaMalloc(&data_, count * sizeof(T));
    if (status == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // clear it: the process goes on to report and exit cleanly
      throw Failure{exit_does_not_fit,
                    "cudaMalloc of " + std::to_string(count * sizeof(T)) + " bytes failed: out of device memory"};
    }
    CUDA_CHECK(status);
  }
  DeviceBuffer(DeviceBuffer&& other) noexcept : data_(other.data_), count_(other.count_) { other.data_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(count_, other.count_);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() {
    if (data_) cudaFree(data_);  // no check: a destructor must not throw, and exit follows anyway
  }
  T* data() const { return data_; }
  std::size_t size() const { return count_; }

 private:
  T* data_ = nullptr;
  std::size_t count_ = 0;
};

}  // namespace worklog
