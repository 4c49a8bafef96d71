// median_ms(), median_ms_interleaved(): CUDA-event timing shared by the steps, cuBLAS and the tests.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <functional>
#include <vector>

#include "cuda_check.hpp"

namespace worklog {

// The medians of several runs timed in alternation: round after round, each run once. Runs that are
// compared (a step and cuBLAS) then share the GPU's clock and power state, which drifts over a
// few hundred milliseconds of heavy work; timing one after the other let that drift favour one
// side (seen on an H100 at 8192³: cuBLAS at 1.47 ms in some processes, 1.75 ms in others).
inline std::vector<double> median_ms_interleaved(const std::vector<std::function<void()>>& runs, int warmup,
                                                 int iters) {
  for (int i = 0; i < warmup; ++i)
    for (const auto& run : runs) run();
  const std::size_t count = runs.size();
  std::vector<cudaEvent_t> events(2 * count * std::size_t(iters));
  for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i)
    for (std::size_t r = 0; r < count; ++r) {
      CUDA_CHECK(cudaEventRecord(events[2 * (i * count + r)]));
      runs[r]();
      CUDA_CHECK(cudaEventRecord(events[2 * (i * count + r) + 1]));
    }
  CUDA_CHECK(cudaEventSynchronize(events.back()));
  std::vector<double> medians;
  for (std::size_t r = 0; r < count; ++r) {
    std::vector<double> ms(iters);
    for (int i = 0; i < iters; ++i) {
      float t = 0;
      CUDA_CHECK(cudaEventElapsedTime(&t, events[2 * (i * count + r)], events[2 * (i * count + r) + 1]));
      ms[i] = t;
    }
    std::sort(ms.begin(), ms.end());
    medians.push_back(iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]));
  }
  for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
  return medians;
}

// The median of one run's timings.
inline double median_ms(const std::function<void()>& run, int warmup, int iters) {
  return median_ms_interleaved({run}, warmup, iters)[0];
}

}  // namespace worklog
