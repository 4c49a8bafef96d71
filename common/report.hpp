// What a step run reports: the result line on stdout and the row appended to the --csv file
// (whose columns plots/results_csv.py reads).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <optional>
#include <string>

#include "cli.hpp"  // Options
#include "failure.hpp"
#include "gemm_data.hpp"   // CheckResult
#include "percentile.hpp"  // Spread

namespace worklog {

// The GPU and CUDA versions of a run, and when it ran.
struct RunInfo {
  std::string gpu, compute_capability, runtime, driver, timestamp;
  int sm_count = 0;
};

RunInfo describe_run(const cudaDeviceProp& prop);

// What one run of a step measured.
struct Measurement {
  double ms, cublas_ms, global_bytes;  // cublas_ms is 0 when cuBLAS was not timed
  Spread spread, cublas_spread;        // the 10th and 90th percentiles of the rounds behind each median
  CheckResult check;
  bool checked;
  TimingMode timing;
  std::string timer;                   // "kernels" (the GPU's timestamps) or "events" (harness_timing.hpp)
  double sm_mhz_before, sm_mhz_after;  // the SM clock before and after the timed rounds
  bool clock_fell;                     // by more than Timings::clock_fall_tolerance
  int uncovered;                       // timed runs whose host enqueue outlasted their cover
  double least_bytes;                  // what the GEMM must move at least: A and B read once, C written (and read)
  double dram_read_rate;               // bytes per second (--dram-fraction), 0 when not measured
};

// Why rows could not be appended to the --csv file `path` (strerror's words), or nothing when they
// can. Checked before a run; creates nothing, so that a run which stops early (no device, a bad
// argument found later) leaves no empty file behind.
std::optional<std::string> csv_output_problem(const std::string& path);
// Appends the run's row to `path`, with the header first when the file is new or empty: the file
// is created here, once there is a row to write. Throws Failure (exit_bad_argument) when it cannot.
void append_csv(const std::string& path, const RunInfo& info, const char* step, const char* adds, const char* precision,
                const Options& o, const Measurement& r);
// The result line on stdout, after the line of column names when `header` (a --shapes run prints
// that once).
void print_result(const char* step, const char* precision, const Options& o, const Measurement& r, bool header);

}  // namespace worklog
