#include "kernel_timestamps.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdlib>
#include <mutex>

#if __has_include(<cupti.h>)
#include <cupti.h>
#define WORKLOG_HAVE_CUPTI 1
#else
#define WORKLOG_HAVE_CUPTI 0  // a toolkit without CUPTI's headers: the events time everything
#endif

namespace worklog {

#if WORKLOG_HAVE_CUPTI

namespace {

// The activity record of a kernel in the layout of the CUPTI headers this is built with, which the
// libcupti of the same toolkit writes.
#if CUPTI_API_VERSION >= 130000
using KernelRecord = CUpti_ActivityKernel10;
#else
using KernelRecord = CUpti_ActivityKernel9;
#endif

constexpr std::size_t buffer_bytes = 4 << 20;  // one activity buffer: tens of thousands of kernels

// The records delivered so far, filled by CUPTI's thread.
std::mutex recorded_mutex;
std::vector<KernelSpan> recorded;

}  // namespace

struct KernelTimestamps::Library {
  CUptiResult (*enable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*disable)(CUpti_ActivityKind) = nullptr;
  CUptiResult (*flush_all)(uint32_t) = nullptr;
  CUptiResult (*next_record)(uint8_t*, size_t, CUpti_Activity**) = nullptr;
  CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) = nullptr;
};

namespace {

const KernelTimestamps::Library* library = nullptr;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  *buffer = static_cast<uint8_t*>(std::aligned_alloc(8, buffer_bytes));
  *size = *buffer ? buffer_bytes : 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid_bytes) {
  CUpti_Activity* record = nullptr;
  {
    std::lock_guard<std::mutex> lock(recorded_mutex);
    while (library->next_record(buffer, valid_bytes, &record) == CUPTI_SUCCESS)
      if (record->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
        const auto* kernel = reinterpret_cast<const KernelRecord*>(record);
        recorded.push_back({kernel->start, kernel->end, kernel->name ? kernel->name : ""});
      }
  }
  std::free(buffer);
}

// libcupti, from the loader's path or the CUDA Toolkit's usual places.
const KernelTimestamps::Library* load() {
  void* handle = nullptr;
  for (const char* name :
       {"libcupti.so", "libcupti.so.13", "libcupti.so.12", "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
        "/usr/local/cuda/lib64/libcupti.so", "/usr/local/cuda/targets/x86_64-linux/lib/libcupti.so"})
    if ((handle = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
  if (!handle) return nullptr;
  static KernelTimestamps::Library l;
  l.enable = reinterpret_cast<decltype(l.enable)>(dlsym(handle, "cuptiActivityEnable"));
  l.disable = reinterpret_cast<decltype(l.disable)>(dlsym(handle, "cuptiActivityDisable"));
  l.flush_all = reinterpret_cast<decltype(l.flush_all)>(dlsym(handle, "cuptiActivityFlushAll"));
  l.next_record = reinterpret_cast<decltype(l.next_record)>(dlsym(handle, "cuptiActivityGetNextRecord"));
  l.register_callbacks =
      reinterpret_cast<decltype(l.register_callbacks)>(dlsym(handle, "cuptiActivityRegisterCallbacks"));
  if (!l.enable || !l.disable || !l.flush_all || !l.next_record || !l.register_callbacks) return nullptr;
  library = &l;  // before the callbacks can run
  if (l.register_callbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) return library = nullptr;
  return &l;
}

}  // namespace

KernelTimestamps* KernelTimestamps::get() {
  static KernelTimestamps* timestamps = [] {
    const Library* l = load();
    return l ? new KernelTimestamps(l) : nullptr;
  }();
  return timestamps;
}

bool KernelTimestamps::start() {
  {
    std::lock_guard<std::mutex> lock(recorded_mutex);
    recorded.clear();
  }
  return library_->enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) == CUPTI_SUCCESS;
}

std::vector<KernelSpan> KernelTimestamps::stop() {
  library_->flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  library_->disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  std::vector<KernelSpan> spans;
  {
    std::lock_guard<std::mutex> lock(recorded_mutex);
    spans.swap(recorded);
  }
  std::sort(spans.begin(), spans.end(),
            [](const KernelSpan& a, const KernelSpan& b) { return a.start_ns < b.start_ns; });
  return spans;
}

#else

struct KernelTimestamps::Library {};
KernelTimestamps* KernelTimestamps::get() { return nullptr; }
bool KernelTimestamps::start() { return false; }
std::vector<KernelSpan> KernelTimestamps::stop() { return {}; }

#endif

}  // namespace worklog
