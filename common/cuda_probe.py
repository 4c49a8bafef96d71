#!/usr/bin/env python3
"""Is there a CUDA device to run on? Asked of the NVIDIA driver library (libcuda) through ctypes,
so that nothing has to be built first. Python standard library only.

    python3 common/cuda_probe.py [--runtime 13.0]

prints the GPUs, one a line, and exits 0; or prints why there is none, in one line on stderr, and
exits with exit_no_device (77). --runtime is the CUDA version the programs are built with: a driver
older than that is reported too. CMake runs this at configure time for the worklog and profile
presets (CMakeLists.txt: WORKLOG_REQUIRE_GPU), and lab/lab.py grade before it builds anything.

The reasons are worded as the step executables word them (common/no_device.cpp):
  no NVIDIA driver found (libcuda cannot be loaded)
  the NVIDIA driver is too old for this program: it supports CUDA up to X, and the program was ...
  no CUDA device found (the NVIDIA driver is loaded but reports no GPU)
  no CUDA device found (the NVIDIA driver is loaded; CUDA_VISIBLE_DEVICES='...' may hide the GPUs)
  no usable CUDA device (the NVIDIA driver is loaded but does not start: cuInit error N)
"""
import argparse
import ctypes
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import exit_codes  # noqa: E402  (common/exit_codes.py, beside this file)

CUDA_ERROR_NO_DEVICE = 100  # the driver API's CUresult for "no CUDA-capable device is detected"
DRIVER_LIBRARY = "libcuda.so.1"


def version_text(version):
    """'13.0' for 13000, as cudaDriverGetVersion and cuDriverGetVersion count."""
    return f"{version // 1000}.{version % 1000 // 10}"


def parse_version(text):
    """13000 for '13.0' (or '13.0.88'); ValueError otherwise."""
    parts = text.strip().split(".")
    if len(parts) < 2 or not all(p.isdigit() for p in parts):
        raise ValueError(f"not a CUDA version: {text!r} (expected major.minor, e.g. 13.0)")
    return int(parts[0]) * 1000 + int(parts[1]) * 10


def too_old(driver_version, runtime_version):
    """The words for a driver older than the runtime; CUDA runs on any driver of the runtime's
    major version or newer (minor version compatibility)."""
    if driver_version // 1000 >= runtime_version // 1000:
        return None
    return (f"the NVIDIA driver is too old for this program: it supports CUDA up to {version_text(driver_version)}, "
            f"and the program was built with CUDA {version_text(runtime_version)}; install a driver for CUDA "
            f"{version_text(runtime_version)} or newer, or build with a CUDA Toolkit the driver supports")


def probe(runtime_version=None, library=DRIVER_LIBRARY):
    """([GPU names], reason): the CUDA devices the driver shows (CUDA_VISIBLE_DEVICES applies), and
    when there are none, why, in one line; reason is '' when there are some."""
    try:
        driver = ctypes.CDLL(library)
    except OSError:
        return [], "no NVIDIA driver found (libcuda cannot be loaded)"
    version = ctypes.c_int(0)
    if runtime_version and driver.cuDriverGetVersion(ctypes.byref(version)) == 0:
        reason = too_old(version.value, runtime_version)
        if reason:
            return [], reason
    status = driver.cuInit(0)
    count = ctypes.c_int(0)
    if status == 0 and driver.cuDeviceGetCount(ctypes.byref(count)) != 0:
        count.value = 0
    if status not in (0, CUDA_ERROR_NO_DEVICE):
        return [], f"no usable CUDA device (the NVIDIA driver is loaded but does not start: cuInit error {status})"
    if count.value == 0:
        visible = os.environ.get("CUDA_VISIBLE_DEVICES")
        if visible is not None:
            return [], (f"no CUDA device found (the NVIDIA driver is loaded; CUDA_VISIBLE_DEVICES='{visible}' "
                        "may hide the GPUs)")
        return [], "no CUDA device found (the NVIDIA driver is loaded but reports no GPU)"
    names = []
    for index in range(count.value):
        device, name = ctypes.c_int(0), ctypes.create_string_buffer(256)
        if driver.cuDeviceGet(ctypes.byref(device), index) == 0 and driver.cuDeviceGetName(name, 256, device) == 0:
            names.append(name.value.decode("utf-8", "replace"))
        else:
            names.append("unknown GPU")
    return names, ""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runtime", type=parse_version, help="the CUDA version the programs are built with (13.0)")
    args = parser.parse_args(argv)
    names, reason = probe(args.runtime)
    if not names:
        print(reason, file=sys.stderr)
        return exit_codes.EXIT_NO_DEVICE
    for index, name in enumerate(names):
        print(f"GPU {index}: {name}")
    return exit_codes.EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
