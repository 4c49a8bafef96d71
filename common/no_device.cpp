#include "no_device.hpp"

namespace worklog {

std::string cuda_version_text(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

std::string no_device_reason(DeviceCount count, int driver_version, int runtime_version, const std::string& error_text,
                             const char* visible_devices) {
  if (count == DeviceCount::some) return "";
  // Without libcuda the runtime says "CUDA driver version is insufficient for CUDA runtime version",
  // which sends a reader to upgrade a driver they do not have: the driver's version, 0, tells.
  if (driver_version == 0) return "no NVIDIA driver found (libcuda cannot be loaded)";
  // The runtime runs on any driver of its major version or newer (CUDA's minor version compatibility).
  if (count == DeviceCount::insufficient_driver || driver_version / 1000 < runtime_version / 1000)
    return "the NVIDIA driver is too old for this program: it supports CUDA up to " +
           cuda_version_text(driver_version) + ", and the program was built with CUDA " +
           cuda_version_text(runtime_version) + "; install a driver for CUDA " + cuda_version_text(runtime_version) +
           " or newer, or build with a CUDA Toolkit the driver supports";
  if (count == DeviceCount::none) {
    if (visible_devices != nullptr)
      return "no CUDA device found (the NVIDIA driver is loaded; CUDA_VISIBLE_DEVICES='" +
             std::string(visible_devices) + "' may hide the GPUs)";
    return "no CUDA device found (the NVIDIA driver is loaded but reports no GPU)";
  }
  return "no usable CUDA device (the NVIDIA driver is loaded but does not start: " + error_text + ")";
}

}  // namespace worklog
