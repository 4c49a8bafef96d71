// time_interleaved(): the CUDA-event timing shared by the steps, cuBLAS and the tools, in one of two
// modes (cli.hpp: TimingMode); and the two measurements of the GPU that a timed row carries: its SM
// clock and its DRAM read rate.
//
// What a timed run measures: the GPU's time, from the start of the run's first kernel to the end of
// its last, as the GPU stamps them (kernel_timestamps.hpp: CUPTI, what Nsight Compute reports as a
// kernel's duration); where CUPTI cannot be had, the interval between two CUDA events around the run,
// which also holds the launch of its first kernel (about a microsecond). Before each run, the GPU gets
// a cover: a kernel that holds it for longer than the host takes to launch the run, and in cold mode
// a read of a buffer three times the size of L2, which evicts the operands and holds the GPU too.
// While the cover runs, the host enqueues the run: a library call's host work (cuBLAS's heuristics,
// several microseconds) then happens while the GPU is busy, so that it is not counted as the
// kernel's, and the run's kernels follow each other as fast as the GPU starts them. Each timed run
// also records how long the host took to enqueue it; a run whose enqueue outlasted its cover is
// counted (Timings::uncovered), never silently kept.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <vector>

#include "cli.hpp"         // TimingMode
#include "percentile.hpp"  // Spread

namespace worklog {

// A timed comparison's medians and what the GPU did meanwhile.
struct Timings {
  std::vector<double> ms;      // each run's median over the timed rounds, in the order of the runs
  std::vector<Spread> spread;  // each run's 10th and 90th percentiles over the same rounds, in ms
  int rounds = 0;              // timed rounds (each run once per round)
  // What measured them: the kernels' own timestamps (CUPTI), or CUDA events around each run.
  enum class Timer { kernels, events } timer = Timer::events;
  // The SM clock (measure_sm_clock_mhz), just before the first timed round and just after the last.
  double sm_mhz_before = 0, sm_mhz_after = 0;
  int uncovered = 0;  // timed runs whose host enqueue took longer than the GPU work covering it
  // A fall of more than this fraction of the clock during the timed rounds (throttling, power
  // capping) is flagged: the rows then compare runs made at different speeds.
  static constexpr double clock_fall_tolerance = 0.02;
  bool clock_fell() const { return sm_mhz_after < sm_mhz_before * (1.0 - clock_fall_tolerance); }
};

// Times the runs in alternation: `warmup` untimed rounds, then `iters` rounds, each run once per round,
// each timed run preceded by its cover (above) in `mode`. Runs that are compared (a step and cuBLAS)
// share the GPU's clock and power state, which drift over a few hundred milliseconds of heavy work;
// timing one after the other let that drift favour one side (seen on an H100 at 8192³: cuBLAS at
// 1.47 ms in some processes, 1.75 ms in others). Every run enqueues its work on the default stream.
Timings time_interleaved(const std::vector<std::function<void()>>& runs, int warmup, int iters, TimingMode mode);

const char* timer_name(Timings::Timer timer);  // "kernels", "events"

// The medians alone.
inline std::vector<double> median_ms_interleaved(const std::vector<std::function<void()>>& runs, int warmup, int iters,
                                                 TimingMode mode) {
  return time_interleaved(runs, warmup, iters, mode).ms;
}
inline double median_ms(const std::function<void()>& run, int warmup, int iters, TimingMode mode) {
  return time_interleaved({run}, warmup, iters, mode).ms[0];
}

// The SM clock of the current device now, in MHz: the SM's cycle counter (clock64) over the GPU's
// global nanosecond timer, read by one thread between two ticks of that timer 100 µs apart.
double measure_sm_clock_mhz();

// The DRAM read rate of the current device, in bytes per second: a kernel that only reads `bytes`
// (every SM, 16-byte loads, several in flight per thread), the median of `reps` timed reads after
// untimed ones that bring the clocks up. Nothing else runs between the reads (no copy, whose writes a read would
// drain). Throws Failure (exit_does_not_fit) when the buffer cannot be allocated.
double measure_dram_read_rate(std::size_t bytes, int reps);
// What --dram-fraction reads: 4 GiB, many times L2.
inline constexpr std::size_t dram_read_bytes = std::size_t(4) << 30;

}  // namespace worklog
