#include "device_select.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "cli.hpp"  // exit codes
#include "cuda_check.hpp"
#include "no_device.hpp"

namespace worklog {

std::optional<Failure> no_cuda_device(int* device_count) {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  cudaGetLastError();  // a failed count is not a sticky error, but leave nothing behind
  if (device_count) *device_count = status == cudaSuccess ? count : 0;
  if (status == cudaSuccess && count > 0) return std::nullopt;
  int driver = 0, runtime = 0;
  cudaDriverGetVersion(&driver);  // 0 when no driver library can be loaded
  cudaRuntimeGetVersion(&runtime);
  const DeviceCount kind = status == cudaSuccess || status == cudaErrorNoDevice ? DeviceCount::none
                           : status == cudaErrorInsufficientDriver              ? DeviceCount::insufficient_driver
                                                                                : DeviceCount::other_error;
  return Failure{exit_no_device, no_device_reason(kind, driver, runtime, cudaGetErrorString(status),
                                                  std::getenv("CUDA_VISIBLE_DEVICES"))};
}

std::string program_name(int argc, char** argv, const char* fallback) {
  if (argc < 1 || !argv[0]) return fallback;
  const char* slash = std::strrchr(argv[0], '/');
  return slash ? slash + 1 : argv[0];
}

std::optional<int> refuse_without_device(const std::string& program) {
  const auto none = no_cuda_device();
  if (!none) return std::nullopt;
  std::fprintf(stderr, "%s: error: %s\n", program.c_str(), none->message.c_str());
  return none->exit_code;
}

cudaDeviceProp select_device(int index) {
  int count = 0;
  if (const auto none = no_cuda_device(&count)) throw *none;
  if (index >= count)
    throw Failure{exit_bad_argument, "--device " + std::to_string(index) + " does not exist: " + std::to_string(count) +
                                         " CUDA device(s), numbered from 0"};
  CUDA_CHECK(cudaSetDevice(index));
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, index));
  return prop;
}

void require_device_memory(Shape shape, int input_bytes, bool check, Strides strides) {
  // Headroom for cuBLAS's workspace and the context's own allocations.
  constexpr std::uint64_t headroom = 256ull << 20;
  std::size_t free_bytes = 0, total_bytes = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));
  const auto needed = device_bytes_needed(shape, input_bytes, check, strides);
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
  return Failure{exit_unsupported_gpu,
                 step.name + " needs compute capability " + needed + "; " + prop.name + " is " + dotted(cc)};
}

// The two input types the worklog uses.
template std::optional<Failure> unsupported_gpu(const Step<float>&, const cudaDeviceProp&);
template std::optional<Failure> unsupported_gpu(const Step<__half>&, const cudaDeviceProp&);

}  // namespace worklog
