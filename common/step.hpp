// What every step hands to the harness: one launcher signature for all of them, parameterized by
// the input type (float for steps 01-04, __half for the tensor-core steps 05 onwards). C and the
// scalars are FP32 in every step.
//
// A step registers itself at the end of its kernel.cu with one line,
//     WORKLOG_REGISTER_STEP(__half, {"07_async_pipeline", "what it adds", launch, 128, 128, 80})
// and nothing else in the repository names it but its line in the top CMakeLists.txt: the step's
// executable, the GPU tests and the worklog driver all find it through the registry below.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <string>
#include <type_traits>
#include <vector>

namespace worklog {

// C = alpha·A·B + beta·C with row-major, densely packed A (M×K), B (K×N) and C (M×N): the leading
// dimensions are K, N and N. With beta == 0, C is not read (BLAS semantics).
template <class Input>
struct GemmProblem {
  int m, n, k;
  float alpha, beta;
  const Input* a;
  const Input* b;
  float* c;
};

template <class Input>
using Launcher = void (*)(const GemmProblem<Input>& problem, cudaStream_t stream);

template <class Input>
struct Step {
  const char* name;   // the directory and executable name, e.g. "01_naive"
  const char* adds;   // what the step adds, for the result table
  Launcher<Input> launch;
  // Tile of C over which one fetch of A and B from global memory is shared: used by
  // modeled_global_bytes() for the roofline, and explained in the step's README.
  int reuse_rows, reuse_cols;
  int min_compute_capability;      // e.g. 70 for WMMA; 0 when any CUDA GPU will do
  int max_compute_capability = 0;  // e.g. 90 for sm_90a-only code; 0 when there is no upper limit
};

// One registered step, of either input type (exactly one of the two pointers is set).
struct RegisteredStep {
  const Step<float>* fp32 = nullptr;
  const Step<__half>* fp16 = nullptr;
  const char* name() const { return fp32 ? fp32->name : fp16->name; }
};

// Every step linked into this program, in the order their objects were initialized (not
// meaningful: look steps up by name).
std::vector<RegisteredStep>& step_registry();
// The registered step called `name`, or nullptr.
const RegisteredStep* find_step(const std::string& name);

template <class Input>
struct StepRegistration {
  explicit StepRegistration(const Step<Input>& step) {
    RegisteredStep entry;
    if constexpr (std::is_same_v<Input, float>) entry.fp32 = &step;
    else entry.fp16 = &step;
    step_registry().push_back(entry);
  }
};

}  // namespace worklog

// Defines a Step and adds it to the registry when the program starts. A kernel.cu registers its step
// once, under the directory's name, and may register variants of it named "<step>/<variant>" (the
// techniques of the step measured one at a time: `--variant <variant>` runs one, and the GPU tests of
// the step test them all).
#define WORKLOG_REGISTER_STEP(InputType, ...) \
  WORKLOG_REGISTER_STEP_AT(InputType, __LINE__, __VA_ARGS__)
#define WORKLOG_REGISTER_STEP_AT(InputType, line, ...) WORKLOG_REGISTER_STEP_NAMED(InputType, line, __VA_ARGS__)
#define WORKLOG_REGISTER_STEP_NAMED(InputType, line, ...)                                  \
  namespace {                                                                              \
  const ::worklog::Step<InputType> registered_step_##line = __VA_ARGS__;                   \
  const ::worklog::StepRegistration<InputType> registered_entry_##line{registered_step_##line}; \
  }
