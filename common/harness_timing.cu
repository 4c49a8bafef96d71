// The timing of harness_timing.hpp: the covers, the clock probe and the DRAM read.
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "harness_timing.hpp"
#include "kernel_timestamps.hpp"
#include "kernel_utils.cuh"  // WORKLOG_CHECK_LAUNCH
#include "nvtx_range.hpp"

namespace worklog {

namespace {

// ---- Configuration ------------------------------------------------------------------------------
constexpr int flush_l2_multiple = 3;       // the cold cover reads 3 × L2, so that it evicts the operands
constexpr int read_threads = 512;          // per block of the read kernel
constexpr int read_blocks_per_sm = 4;      // 2048 threads per SM, the most it holds
constexpr int loads_in_flight = 4;         // 16-byte loads per thread before the first use
constexpr double min_hold_us = 10;         // the hold kernel's least duration
constexpr double default_hold_us = 50;     // without a warm-up to measure the host's enqueue time
constexpr double max_hold_us = 2000;       // a host that needs longer shows in Timings::uncovered
constexpr double clock_window_ns = 100e3;  // the clock probe's interval of the global timer
constexpr int dram_warmup_reads = 5;       // untimed reads before the DRAM rate's timed ones

__device__ __forceinline__ long long global_timer_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Reads `count` float4s, `loads_in_flight` at a time per thread, and adds them up. The sum is
// written only when it is not zero, which it always is (the buffers read hold zeros), but the
// compiler cannot know it, so no load is dropped and nothing is written.
__global__ void __launch_bounds__(read_threads)
    timing_read_kernel(const float4* __restrict__ src, long long count, float* sink) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  float sum = 0.0f;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count; i += loads_in_flight * stride) {
    float4 v[loads_in_flight];
#pragma unroll
    for (int j = 0; j < loads_in_flight; ++j)
      v[j] = i + j * stride < count ? src[i + j * stride] : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
#pragma unroll
    for (int j = 0; j < loads_in_flight; ++j) sum += v[j].x + v[j].y + v[j].z + v[j].w;
  }
  if (sum != 0.0f) *sink = sum;
}

// One thread holds the GPU for `ns` nanoseconds of the global timer.
__global__ void timing_hold_kernel(long long ns) {
  const long long start = global_timer_ns();
  while (global_timer_ns() - start < ns) {
  }
}

// out[0]: nanoseconds of the global timer between two of its ticks at least window_ns apart;
// out[1]: SM cycles meanwhile. Waiting for a tick at both ends makes the timer's granularity drop out.
__global__ void timing_clock_kernel(long long window_ns, long long* out) {
  const long long before = global_timer_ns();
  long long start;
  while ((start = global_timer_ns()) == before) {
  }
  const long long start_cycles = clock64();
  long long end;
  while ((end = global_timer_ns()) < start + window_ns) {
  }
  const long long end_cycles = clock64();
  out[0] = end - start;
  out[1] = end_cycles - start_cycles;
}

int blocks_for_reads() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms * read_blocks_per_sm;
}

// A buffer of zeros to read, and where the read kernel's sum would go.
struct ReadBuffer {
  DeviceBuffer<float4> data;
  DeviceBuffer<float> sink;
  explicit ReadBuffer(std::size_t bytes) : data(bytes / sizeof(float4)), sink(1) {
    CUDA_CHECK(cudaMemset(data.data(), 0, data.size() * sizeof(float4)));
  }
  void read(cudaStream_t stream = 0) const {
    timing_read_kernel<<<blocks_for_reads(), read_threads, 0, stream>>>(data.data(), (long long)data.size(),
                                                                        sink.data());
    WORKLOG_CHECK_LAUNCH();
  }
};

// The cold cover's buffer of the current device, allocated at its first use and kept for the process.
const ReadBuffer& flush_buffer() {
  static std::map<int, std::unique_ptr<ReadBuffer>> buffers;
  int device = 0, l2_bytes = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  auto found = buffers.find(device);
  if (found == buffers.end()) {
    CUDA_CHECK(cudaDeviceGetAttribute(&l2_bytes, cudaDevAttrL2CacheSize, device));
    const std::size_t bytes = std::max<std::size_t>(std::size_t(flush_l2_multiple) * l2_bytes, 1 << 20);
    found = buffers.emplace(device, std::make_unique<ReadBuffer>(bytes)).first;
  }
  return *found->second;
}

// What runs before each timed run: the hold, then (cold) the flush.
void cover(TimingMode mode, double hold_us) {
  const NvtxRange range(mode == TimingMode::cold ? "cover: hold, flush L2" : "cover: hold");
  timing_hold_kernel<<<1, 1>>>((long long)(hold_us * 1e3));
  WORKLOG_CHECK_LAUNCH();
  if (mode == TimingMode::cold) flush_buffer().read();
}

double elapsed_ms(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  return ms;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// The clock probe's two numbers, enqueued now and read later.
struct ClockProbe {
  DeviceBuffer<long long> out{2};
  void enqueue() const {
    timing_clock_kernel<<<1, 1>>>((long long)clock_window_ns, out.data());
    WORKLOG_CHECK_LAUNCH();
  }
  double mhz() const {
    long long v[2];
    CUDA_CHECK(cudaMemcpy(v, out.data(), sizeof v, cudaMemcpyDeviceToHost));
    return v[0] > 0 ? 1e3 * double(v[1]) / double(v[0]) : 0.0;
  }
};

using Clock = std::chrono::steady_clock;
double microseconds_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace

Timings time_interleaved(const std::vector<std::function<void()>>& runs, int warmup, int iters, TimingMode mode) {
  // Warm-up rounds, each run behind its cover as in the timed rounds; the host's enqueue time of the
  // last round sizes the hold (twice the slowest run's, so that the host stays ahead of the GPU).
  // The kernels' timestamps are recorded from the last warm-up round on, so that what CUPTI does at
  // its first launches weighs on that round's host time, which sizes the hold, and not on the first
  // timed run's; run_times_ms takes the runs after the first clock probe only.
  KernelTimestamps* timestamps = KernelTimestamps::get();
  bool recording = false;
  double hold_us = default_hold_us;
  std::optional<NvtxRange> warmup_range;
  if (warmup > 0) warmup_range.emplace("warm-up: " + std::to_string(warmup) + " round(s)");
  for (int i = 0; i < warmup; ++i) {
    if (i == warmup - 1 && timestamps) recording = timestamps->start();
    double slowest_us = 0;
    for (const auto& run : runs) {
      cover(mode, hold_us);
      const Clock::time_point start = Clock::now();
      run();
      slowest_us = std::max(slowest_us, microseconds_since(start));
    }
    hold_us = std::clamp(2.0 * slowest_us, min_hold_us, max_hold_us);
  }
  warmup_range.reset();
  const std::size_t count = runs.size();
  // Three events per timed run: before its cover, then around the run itself.
  std::vector<cudaEvent_t> events(3 * count * std::size_t(iters));
  for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  auto event = [&](int i, std::size_t r, int which) { return events[3 * (i * count + r) + which]; };
  std::vector<double> host_us(count * std::size_t(iters));
  ClockProbe before, after;
  if (warmup == 0 && timestamps) recording = timestamps->start();
  before.enqueue();
  for (int i = 0; i < iters; ++i) {
    // Each run of the round enqueued inside it: nsys projects the range over their kernels.
    const NvtxRange round("timed round " + std::to_string(i + 1) + "/" + std::to_string(iters));
    for (std::size_t r = 0; r < count; ++r) {
      CUDA_CHECK(cudaEventRecord(event(i, r, 0)));
      cover(mode, hold_us);
      CUDA_CHECK(cudaEventRecord(event(i, r, 1)));
      const Clock::time_point start = Clock::now();
      runs[r]();
      host_us[i * count + r] = microseconds_since(start);
      CUDA_CHECK(cudaEventRecord(event(i, r, 2)));
    }
  }
  after.enqueue();
  CUDA_CHECK(cudaDeviceSynchronize());
  const std::vector<double> gpu_ms =
      recording ? run_times_ms(timestamps->stop(), count * std::size_t(iters)) : std::vector<double>{};
  Timings t;
  t.rounds = iters;
  t.timer = gpu_ms.empty() ? Timings::Timer::events : Timings::Timer::kernels;
  t.sm_mhz_before = before.mhz();
  t.sm_mhz_after = after.mhz();
  for (std::size_t r = 0; r < count; ++r) {
    std::vector<double> ms(iters);
    for (int i = 0; i < iters; ++i) {
      ms[i] = gpu_ms.empty() ? elapsed_ms(event(i, r, 1), event(i, r, 2)) : gpu_ms[i * count + r];
      const double cover_us = 1e3 * elapsed_ms(event(i, r, 0), event(i, r, 1));
      t.uncovered += host_us[i * count + r] > cover_us;
    }
    t.ms.push_back(median(ms));
    t.spread.push_back(spread_of(ms));
  }
  for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
  return t;
}

const char* timer_name(Timings::Timer timer) { return timer == Timings::Timer::kernels ? "kernels" : "events"; }

double measure_sm_clock_mhz() {
  ClockProbe probe;
  probe.enqueue();
  CUDA_CHECK(cudaDeviceSynchronize());
  return probe.mhz();
}

double measure_dram_read_rate(std::size_t bytes, int reps) {
  const ReadBuffer buffer(bytes);
  // Untimed reads first: the first touch of the pages, the kernel's load, and the clocks, which an
  // idle GPU has lowered and which rise over the first milliseconds of work (a process that measured
  // right after it started, with one untimed read, got a lower rate than one that had worked).
  for (int i = 0; i < dram_warmup_reads; ++i) buffer.read();
  std::vector<cudaEvent_t> events(2 * std::size_t(reps));
  for (auto& e : events) CUDA_CHECK(cudaEventCreate(&e));
  for (int i = 0; i < reps; ++i) {
    CUDA_CHECK(cudaEventRecord(events[2 * i]));
    buffer.read();
    CUDA_CHECK(cudaEventRecord(events[2 * i + 1]));
  }
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<double> ms(reps);
  for (int i = 0; i < reps; ++i) ms[i] = elapsed_ms(events[2 * i], events[2 * i + 1]);
  for (auto& e : events) CUDA_CHECK(cudaEventDestroy(e));
  return double(buffer.data.size() * sizeof(float4)) / (median(ms) * 1e-3);
}

}  // namespace worklog
