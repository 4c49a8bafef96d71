// The verification and timing harness shared by every step, parameterized by the input type
// (float: steps 01-04, FP32 throughout; __half: steps 05 on, FP16 inputs, FP32 accumulate and C).
// One header for the GPU tests, which drive the same pieces as the step executables:
//
//   failure.hpp           Failure: a documented exit code and a one-line message
//   device_buffer.hpp     DeviceBuffer: one cudaMalloc'd array
//   cublas_reference.hpp  CublasHandle and cublas_gemm(): the reference
//   precision_traits.hpp  per input type: its name and the accumulation's unit roundoff
//   gemm_data.hpp         GemmData: random inputs, cuBLAS's result, and the check against it
//   device_select.hpp     the device, whether the step supports it, whether the matrices fit
//   harness_timing.hpp    median_ms(): the median of CUDA-event timings
//   percentile.hpp        quantile(), Spread: the 10th and 90th percentiles beside each median
//   run_step.hpp          run_step(): the whole program behind a step executable
// (report.hpp, the result line and CSV row, and profile_run.hpp, the --profile mode, are
// run_step's alone; nvtx_range.hpp, the ranges an Nsight Systems timeline shows, harness_timing.cu's
// and run_step's.)
#pragma once

#include "cli.hpp"
#include "cublas_reference.hpp"
#include "device_buffer.hpp"
#include "device_select.hpp"
#include "failure.hpp"
#include "gemm_data.hpp"
#include "gemm_math.hpp"
#include "harness_timing.hpp"
#include "precision_traits.hpp"
#include "run_step.hpp"
#include "step.hpp"
