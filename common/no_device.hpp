// Why a program finds no CUDA device to run on, in words a reader can act on. Host-only (no CUDA
// headers): the harness feeds it what the CUDA runtime said (device_select.cpp, no_cuda_device()),
// and host_tests checks every message on any machine. common/cuda_probe.py says the same for
// CMake's configure-time probe and the lab grader, from the driver library.
#pragma once

#include <string>

namespace worklog {

// What cudaGetDeviceCount() answered, reduced to the cases the messages tell apart.
enum class DeviceCount {
  some,                 // cudaSuccess and at least one device: nothing to explain
  none,                 // cudaSuccess with 0 devices, or cudaErrorNoDevice
  insufficient_driver,  // cudaErrorInsufficientDriver: no driver at all, or one older than the runtime
  other_error,          // anything else (the driver is there but cannot start, say)
};

// The one-line reason, or "" for DeviceCount::some. driver_version and runtime_version are
// cudaDriverGetVersion()'s and cudaRuntimeGetVersion()'s (1000·major + 10·minor; the driver's is 0
// when no driver library can be loaded); error_text is the runtime's own words for other_error;
// visible_devices is $CUDA_VISIBLE_DEVICES, or nullptr when it is not set.
std::string no_device_reason(DeviceCount count, int driver_version, int runtime_version, const std::string& error_text,
                             const char* visible_devices);

// "13.0" for 13000.
std::string cuda_version_text(int version);

}  // namespace worklog
