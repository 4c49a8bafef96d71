// median_ms(): CUDA-event timing shared by the steps, cuBLAS and the tests.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <vector>

#include "cuda_check.hpp"

namespace worklog {

template <class Run>
double median_ms(Run&& run, int warmup, int iters) {
  for (int i = 0; i < warmup; ++i) run();
  std::vector<cudaEvent_t> events(2 * std::size_t(iters));
  for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < iters; ++i) {
    CUDA_CHECK(cudaEventRecord(events[2 * i]));
    run();
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
  }
  CUDA_CHECK(cudaEventSynchronize(events.back()));
  std::vector<double> ms(iters);
  for (int i = 0; i < iters; ++i) {
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, events[2 * i], events[2 * i + 1]));
    ms[i] = t;
  }
  for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
  std::sort(ms.begin(), ms.end());
  return iters % 2 ? ms[iters / 2] : 0.5 * (ms[iters / 2 - 1] + ms[iters / 2]);
}

}  // namespace worklog
