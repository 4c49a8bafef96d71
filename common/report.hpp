// What a step run reports: the result line on stdout and the row appended to the --csv file
// (whose columns plots/results_csv.py reads).
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <string>

#include "cli.hpp"        // Options
#include "gemm_data.hpp"  // CheckResult

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
  CheckResult check;
  bool checked;
};

void append_csv(std::FILE* csv, const RunInfo& info, const char* step, const char* adds, const char* precision,
                const Options& o, const Measurement& r);
// The result line on stdout, after the line of column names when `header` (a --shapes run prints
// that once).
void print_result(const char* step, const char* precision, const Options& o, const Measurement& r, bool header);

}  // namespace worklog
