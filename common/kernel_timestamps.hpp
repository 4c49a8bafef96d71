// The GPU's own start and end of each kernel, as CUPTI (the CUDA Toolkit's profiling interface)
// reports them: what Nsight Compute and Nsight Systems call a kernel's duration. CUDA events bracket
// work from the GPU's front end instead, so their interval also holds the launch of the first kernel,
// about a microsecond. libcupti is loaded at run time: a program runs the same without it.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace worklog {

struct KernelSpan {
  std::uint64_t start_ns, end_ns;  // the GPU's timestamps
  std::string name;                // the kernel's (mangled) name
};

// The kernels of harness_timing.cu's covers: the hold kernel comes first in every cover, so it opens
// the next timed run; the flush and the clock probe belong to no run, and the clock probe opens the
// timed rounds.
inline constexpr const char* run_opening_kernel = "timing_hold_kernel";
inline constexpr const char* not_a_run_kernels[] = {"timing_read_kernel", "timing_clock_kernel"};
inline constexpr const char* timed_rounds_kernel = "timing_clock_kernel";  // probes the clock before the first round

// Each timed run's time in ms from the kernels' timestamps, in the order the runs were enqueued: the
// kernels in start order from the first clock probe on (the timed rounds open with one; kernels before
// it belong to the warm-up), each run_opening_kernel opening the next run, the not_a_run_kernels left
// out; a run lasts from its first kernel's start to its last kernel's end. Empty when the spans do
// not make `runs` runs of at least one kernel each (a record lost): the caller times with events then.
inline std::vector<double> run_times_ms(const std::vector<KernelSpan>& spans, std::size_t runs) {
  const auto named = [](const KernelSpan& k, const char* name) { return k.name.find(name) != std::string::npos; };
  std::vector<std::pair<std::uint64_t, std::uint64_t>> run_spans;  // first start, last end
  bool timed = false;                                              // past the first clock probe
  for (const KernelSpan& k : spans) {
    if (named(k, timed_rounds_kernel)) timed = true;
    if (!timed) continue;
    if (named(k, run_opening_kernel)) {
      run_spans.push_back({UINT64_MAX, 0});
    } else if (!run_spans.empty() && !named(k, not_a_run_kernels[0]) && !named(k, not_a_run_kernels[1])) {
      run_spans.back().first = std::min(run_spans.back().first, k.start_ns);
      run_spans.back().second = std::max(run_spans.back().second, k.end_ns);
    }
  }
  std::vector<double> ms;
  if (run_spans.size() != runs) return ms;
  for (const auto& [start, end] : run_spans) {
    if (end < start) return {};  // a run without a kernel
    ms.push_back(double(end - start) * 1e-6);
  }
  return ms;
}

class KernelTimestamps {
 public:
  // CUPTI loaded, with its activity callbacks registered; nullptr when it cannot be (no libcupti, or a
  // profiler or sanitizer that holds it already).
  static KernelTimestamps* get();
  // Records every kernel launched from now on; false when CUPTI refuses (then nothing is recorded).
  bool start();
  // The kernels launched since start(), sorted by start; call it after the GPU has finished them.
  std::vector<KernelSpan> stop();

  struct Library;  // the functions of libcupti (kernel_timestamps.cpp)

 private:
  explicit KernelTimestamps(const Library* library) : library_(library) {}
  const Library* library_;
};

}  // namespace worklog
