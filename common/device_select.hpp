// Which GPU a run uses, and whether the run can go ahead on it: the device exists, the step
// supports its compute capability, and the matrices fit in its free memory. Each refusal is a
// Failure with its exit code (cli.hpp).
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>

#include "failure.hpp"
#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog {

// Why no CUDA device can be used here (exit_no_device, with the reason in words: no driver, a driver
// older than the runtime, no GPU; no_device.hpp), or nothing when there is one; *device_count, when
// given, is set to the number of devices.
std::optional<Failure> no_cuda_device(int* device_count = nullptr);
// For the extra programs a step ships (08's mma_peak, 13's dram_copy, 15's calibrate): their name as
// invoked (argv[0] without its folder, `fallback` without one), for their messages...
std::string program_name(int argc, char** argv, const char* fallback);
// ...and, when no CUDA device can be used, "<program>: error: <why>" on stderr and the exit code to
// return (exit_no_device); nothing when there is a device.
std::optional<int> refuse_without_device(const std::string& program);
// Which device: index, or Failure (no device: no_cuda_device(); bad index: exit_bad_argument).
cudaDeviceProp select_device(int index);
// The one-line message and exit code when this GPU is outside the step's compute capabilities,
// or nothing when it may run.
template <class Input>
std::optional<Failure> unsupported_gpu(const Step<Input>& step, const cudaDeviceProp& prop);
// Refuses (Failure, exit_does_not_fit) a problem whose buffers (with these leading dimensions) do not
// fit in free device memory.
void require_device_memory(Shape shape, int input_bytes, bool check, Strides strides = {});

}  // namespace worklog
