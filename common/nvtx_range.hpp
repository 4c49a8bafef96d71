// NvtxRange: a named range on the host's timeline, for Nsight Systems (docs/profiling.md). The harness
// marks what it does around the kernels: each shape measured, the warm-up, each timed round, each
// cover before a timed run, the check. nsys draws the ranges on the CPU thread's row and projects each
// onto the GPU rows over the work it enqueued, so that a timeline of a step is no longer a row of
// unnamed kernels.
//
// NVTX3 is header-only (the CUDA Toolkit's nvtx3/nvToolsExt.h, CMake's CUDA::nvtx3): without a tool
// attached, a push or a pop is a call through a pointer to a function that returns at once, so the
// ranges cost the timed runs nothing that matters; they are never opened between the two clock reads
// that measure a run's enqueue (harness_timing.cu). The ranges are in a domain of their own, "worklog",
// so that nsys lists them apart from those of the libraries (cuBLAS marks none by default).
#pragma once

#include <nvtx3/nvToolsExt.h>

#include <string>

namespace worklog {

class NvtxRange {
 public:
  explicit NvtxRange(const char* name) { push(name); }
  explicit NvtxRange(const std::string& name) { push(name.c_str()); }  // the tool copies the text
  ~NvtxRange() { nvtxDomainRangePop(domain()); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;

 private:
  static nvtxDomainHandle_t domain() {
    static const nvtxDomainHandle_t handle = nvtxDomainCreateA("worklog");
    return handle;
  }
  static void push(const char* name) {
    nvtxEventAttributes_t attributes = {};
    attributes.version = NVTX_VERSION;
    attributes.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    attributes.messageType = NVTX_MESSAGE_TYPE_ASCII;
    attributes.message.ascii = name;
    nvtxDomainRangePushEx(domain(), &attributes);
  }
};

}  // namespace worklog
