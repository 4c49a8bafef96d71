#include "device_select.hpp"

#include <cstdint>
#include <string>

#include "cli.hpp"  // exit codes
#include "cuda_check.hpp"

namespace worklog {

cudaDeviceProp select_device(int index) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess || count == 0)
    throw Failure{exit_no_device, std::string("no CUDA device found (") +
                                      (status != cudaSuccess ? cudaGetErrorString(status) : "0 devices") + ")"};
  if (index >= count)
    throw Failure{exit_bad_argument, "--device " + std::to_string(index) + " does not exist: " + std::to_string(count) +
                                         " CUDA device(s), numbered from 0"};
  CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop;
}

void require_device_memory(Shape shape, int input_bytes, bool check) {
  // Headroom for cuBLAS's workspace and the context's own allocations.
  constexpr std::uint64_t headroom = 256ull << 20;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto needed = device_bytes_needed(shape, input_bytes, check);
  const std::string size = std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" + std::to_string(shape.k);
  if (!needed || *needed > free_bytes || free_bytes - *needed < headroom)
    throw Failure{exit_does_not_fit, size + " needs " + (needed ? std::to_string(*needed) : std::string("over 2^64")) +
                                         " bytes of device memory (+256 MiB headroom), " + std::to_string(free_bytes) +
                                         " bytes are free"};
}

template <class Input>
std::optional<Failure> unsupported_gpu(const Step<Input>& step, const cudaDeviceProp& prop) {
  const int cc = prop.major * 10 + prop.minor, lowest = step.min_compute_capability,
            highest = step.max_compute_capability;
  if (cc >= lowest && (highest == 0 || cc <= highest)) return std::nullopt;
  auto dotted = [](int v) { return std::to_string(v / 10) + "." + std::to_string(v % 10); };
  const std::string needed = highest == 0        ? dotted(lowest) + " or newer"
                             : highest == lowest ? dotted(lowest) + " exactly"
                                                 : dotted(lowest) + " to " + dotted(highest);
  return Failure{exit_unsupported_gpu, step.name + " needs compute capability " + needed + "; " +
                                           prop.name + " is " + dotted(cc)};
}

// The two input types the worklog uses.
template std::optional<Failure> unsupported_gpu(const Step<float>&, const cudaDeviceProp&);
template std::optional<Failure> unsupported_gpu(const Step<__half>&, const cudaDeviceProp&);

}  // namespace worklog
