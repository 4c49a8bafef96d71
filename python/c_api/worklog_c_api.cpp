// The C ABI of worklog_c_api.h over the steps' registry (common/step.hpp). Each function checks its
// arguments before it touches a step or the GPU, so that a refusal says what is wrong with the call
// on any machine; the GPU is asked only once the call is well formed.
#include "worklog_c_api.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <exception>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/cuda_check.hpp"
#include "common/device_select.hpp"
#include "common/exit_codes.hpp"
#include "common/failure.hpp"
#include "common/precision_traits.hpp"
#include "common/step.hpp"

namespace worklog {
namespace {

// Per thread, so that two threads that fail at once each read their own reason.
thread_local std::string last_error;

// The steps' code keeps caches of its own (kernel attributes set once, 15's device properties) that
// were written for one thread, the harness's; ctypes releases Python's lock during a call, so two
// Python threads could enter at once. One lock over every call that reaches a step keeps them apart
// (a launch only enqueues work, so holding it is short).
std::mutex step_mutex;

[[noreturn]] void refuse(int code, std::string message) { throw Failure{code, std::move(message)}; }

// Runs one call of the ABI: its status, and the reason of any failure kept for worklog_last_error().
template <class F>
int guarded(F&& body) {
  try {
    body();
    return exit_ok;
  } catch (const Failure& f) {
    last_error = f.message;
    return f.exit_code;
  } catch (const CudaError& e) {
    last_error = e.what();
    const bool no_image = e.code == cudaErrorNoKernelImageForDevice || e.code == cudaErrorUnsupportedPtxVersion;
    return no_image ? exit_unsupported_gpu : exit_cuda_error;
  } catch (const std::exception& e) {
    last_error = e.what();
    return exit_cuda_error;
  } catch (...) {
    last_error = "an unknown C++ exception inside the library";
    return exit_cuda_error;
  }
}

template <class T>
void require_pointer(const T* pointer, const char* what) {
  if (pointer == nullptr) refuse(exit_bad_argument, std::string(what) + " is a null pointer");
}

// The registered steps sorted by name: the registry's own order is that of static initialization,
// which means nothing, while the names begin with the step's number.
const std::vector<const RegisteredStep*>& sorted_steps() {
  static const std::vector<const RegisteredStep*> steps = [] {
    std::vector<const RegisteredStep*> all;
    for (const RegisteredStep& step : step_registry()) all.push_back(&step);
    std::sort(all.begin(), all.end(),
              [](const RegisteredStep* x, const RegisteredStep* y) { return x->name() < y->name(); });
    return all;
  }();
  return steps;
}

// A step or one of its variants, as "<step>" or "<step>/<variant>" names it.
struct Named {
  const RegisteredStep* step;
  std::string variant;  // empty: the step itself
  std::string name;     // as the caller wrote it, for messages
};

Named lookup(const char* name, bool allow_variant = true) {
  require_pointer(name, "the step's name");
  const std::string full = name;
  const auto slash = full.find('/');
  const std::string step_name = full.substr(0, slash);
  const RegisteredStep* step = find_step(step_name);
  if (step == nullptr)
    refuse(exit_bad_argument, "no step called '" + step_name + "' in this library (it has " +
                                  std::to_string(sorted_steps().size()) + " steps: worklog_step_name lists them)");
  if (slash == std::string::npos) return {step, "", full};
  if (!allow_variant) refuse(exit_bad_argument, "'" + full + "' names a variant; give the step's name alone");
  const std::string variant = full.substr(slash + 1);
  if (variant.empty() || !step->has_variant(variant)) {
    std::string known;
    for (const std::string& v : step->variant_names()) known += (known.empty() ? "" : ", ") + v;
    refuse(exit_bad_argument, "step " + step_name + " has no variant '" + variant +
                                  "' (its variants: " + (known.empty() ? std::string("none") : known) + ")");
  }
  return {step, variant, full};
}

// The input type of a Step<Input>, for the visitors below.
template <class S>
struct input_type;
template <class Input>
struct input_type<Step<Input>> {
  using type = Input;
};
template <class S>
using input_of = typename input_type<std::decay_t<S>>::type;

// The problem's sizes as the steps take them (int), refused where they do not fit or make no matrix.
struct Sizes {
  Shape shape;
  Strides strides;
};

// Largest element span of an operand the library lets through: the steps index operands with the
// int sizes of GemmProblem, and no test runs one past 2^31 - 1 elements, so beyond that an answer
// could be wrong without anyone having seen it.
constexpr std::uint64_t largest_span = std::uint64_t(INT_MAX);

Sizes sizes_of(int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb, int64_t ldc) {
  const auto dimension = [](int64_t value, const char* what) {
    if (value < 1 || value > INT_MAX)
      refuse(exit_bad_argument, std::string(what) + " = " + std::to_string(value) + " is outside 1 to " +
                                    std::to_string(INT_MAX) + " (an empty problem launches nothing)");
    return int(value);
  };
  const Shape s{dimension(m, "M"), dimension(n, "N"), dimension(k, "K")};
  const auto leading = [](int64_t ld, int row, const char* what, const char* row_name) {
    if (ld < row || ld > INT_MAX)
      refuse(exit_bad_argument, std::string(what) + " = " + std::to_string(ld) + " must be at least " + row_name +
                                    " (" + std::to_string(row) + ") and at most " + std::to_string(INT_MAX));
    return int(ld);
  };
  const Strides t{leading(lda, s.k, "lda", "K"), leading(ldb, s.n, "ldb", "N"), leading(ldc, s.n, "ldc", "N")};
  const auto span = [](int rows, int cols, int ld, const char* what) {
    if (strided_elements(rows, cols, ld) > largest_span)
      refuse(exit_bad_argument, std::string(what) + " spans " + std::to_string(strided_elements(rows, cols, ld)) +
                                    " elements, over the 2^31 - 1 that the steps index and are tested at");
  };
  span(s.m, s.k, t.lda, "A");
  span(s.k, s.n, t.ldb, "B");
  span(s.m, s.n, t.ldc, "C");
  return {s, t};
}

// The device's properties, read once: cudaGetDeviceProperties takes long enough to matter per launch.
const cudaDeviceProp& device_properties(int device) {
  static std::map<int, cudaDeviceProp> known;
  auto found = known.find(device);
  if (found == known.end()) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    found = known.emplace(device, prop).first;
  }
  return found->second;
}

// Makes `device` current after checking that it exists: no device at all is the steps' own
// refusal, with their words (device_select.cpp, no_device.cpp).
void use_device(int device) {
  int count = 0;
  if (const auto none = no_cuda_device(&count)) throw *none;
  if (device < 0 || device >= count)
    refuse(exit_bad_argument, "CUDA device " + std::to_string(device) + " does not exist: " + std::to_string(count) +
                                  " CUDA device(s), numbered from 0");
  CUDA_CHECK(cudaSetDevice(device));
}

// The steps (or variants) launched on each device so far: those may be captured into a graph.
std::set<std::pair<std::string, int>> launched;

}  // namespace
}  // namespace worklog

using namespace worklog;

extern "C" {

int worklog_api_version(void) { return WORKLOG_C_API_VERSION; }

const char* worklog_last_error(void) { return last_error.c_str(); }

int worklog_step_count(int* count) {
  return guarded([&] {
    require_pointer(count, "count");
    *count = int(sorted_steps().size());
  });
}

int worklog_step_name(int index, const char** name) {
  return guarded([&] {
    require_pointer(name, "name");
    const auto& steps = sorted_steps();
    if (index < 0 || index >= int(steps.size()))
      refuse(exit_bad_argument,
             "step index " + std::to_string(index) + " is outside 0 to " + std::to_string(int(steps.size()) - 1));
    *name = steps[std::size_t(index)]->name().c_str();
  });
}

int worklog_variant_count(const char* step, int* count) {
  return guarded([&] {
    require_pointer(count, "count");
    *count = int(lookup(step, false).step->variant_names().size());
  });
}

int worklog_variant_name(const char* step, int index, const char** name) {
  return guarded([&] {
    require_pointer(name, "name");
    const RegisteredStep* found = lookup(step, false).step;
    const int count = int(found->variant_names().size());
    if (index < 0 || index >= count)
      refuse(exit_bad_argument, "variant index " + std::to_string(index) + " of " + found->name() +
                                    " is outside 0 to " + std::to_string(count - 1));
    // The variant's own Step keeps its full name alive as long as the library; its part after the
    // step's name is a suffix of that string.
    found->visit(found->variant_names()[std::size_t(index)],
                 [&](const auto& v) { *name = v.name.c_str() + v.name.find('/') + 1; });
  });
}

int worklog_step_precision(const char* step, int* precision) {
  return guarded([&] {
    require_pointer(precision, "precision");
    *precision = lookup(step).step->fp32 ? WORKLOG_FP32 : WORKLOG_FP16;
  });
}

int worklog_step_description(const char* step, const char** description) {
  return guarded([&] {
    require_pointer(description, "description");
    const Named s = lookup(step);
    s.step->visit(s.variant, [&](const auto& v) { *description = v.description.c_str(); });
  });
}

int worklog_step_compute_capability(const char* step, int* lowest, int* highest) {
  return guarded([&] {
    require_pointer(lowest, "lowest");
    require_pointer(highest, "highest");
    const Named s = lookup(step);
    s.step->visit(s.variant, [&](const auto& v) {
      *lowest = v.min_compute_capability;
      *highest = v.max_compute_capability;
    });
  });
}

int worklog_error_scale(const char* step, int64_t k, double* scale) {
  return guarded([&] {
    require_pointer(scale, "scale");
    if (k < 0) refuse(exit_bad_argument, "K = " + std::to_string(k) + " is negative");
    const Named s = lookup(step);
    s.step->visit(s.variant, [&](const auto& v) {
      using Input = input_of<decltype(v)>;
      *scale = exact_reference_scale(k, accumulation_unit_roundoff<Input>());
    });
  });
}

int worklog_check_device(int device) {
  return guarded([&] { use_device(device); });
}

int worklog_workspace_bytes(const char* step, int device, int64_t m, int64_t n, int64_t k, int64_t lda, int64_t ldb,
                            int64_t ldc, size_t* bytes) {
  return guarded([&] {
    require_pointer(bytes, "bytes");
    const Named s = lookup(step);
    const Sizes z = sizes_of(m, n, k, lda, ldb, ldc);
    const std::lock_guard<std::mutex> lock(step_mutex);
    s.step->visit(s.variant, [&](const auto& v) {
      if (v.workspace == nullptr) {  // nothing to ask the device: this answer needs no GPU
        *bytes = 0;
        return;
      }
      use_device(device);
      *bytes = v.workspace_bytes(z.shape, z.strides);
    });
  });
}

int worklog_gemm(const char* step, int device, int64_t m, int64_t n, int64_t k, float alpha, const void* a, int64_t lda,
                 const void* b, int64_t ldb, float beta, float* c, int64_t ldc, void* workspace, size_t workspace_bytes,
                 void* stream) {
  return guarded([&] {
    const Named s = lookup(step);
    const Sizes z = sizes_of(m, n, k, lda, ldb, ldc);
    require_pointer(a, "A");
    require_pointer(b, "B");
    require_pointer(c, "C");
    const std::lock_guard<std::mutex> lock(step_mutex);
    use_device(device);
    const cudaStream_t on = static_cast<cudaStream_t>(stream);
    s.step->visit(s.variant, [&](const auto& v) {
      using Input = input_of<decltype(v)>;
      if (const auto refusal = unsupported_gpu(v, device_properties(device))) throw *refusal;
      const std::size_t needed = v.workspace_bytes(z.shape, z.strides);
      if (needed > 0 && workspace == nullptr)
        refuse(exit_bad_argument, s.name + " needs a workspace of " + std::to_string(needed) +
                                      " bytes for this problem, and none was given");
      if (workspace_bytes < needed)
        refuse(exit_bad_argument, "the workspace holds " + std::to_string(workspace_bytes) + " bytes; " + s.name +
                                      " needs " + std::to_string(needed) + " for this problem");
      cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
      CUDA_CHECK(cudaStreamIsCapturing(on, &capture));
      const auto key = std::make_pair(s.name, device);
      if (capture != cudaStreamCaptureStatusNone && launched.count(key) == 0)
        refuse(exit_bad_argument, s.name +
                                      " has not run on this device yet: its first launch sets up what a CUDA graph "
                                      "capture forbids (its watchdog's mailbox); run it once before capturing");
      GemmProblem<Input> p =
          make_problem(z.shape, alpha, beta, static_cast<const Input*>(a), static_cast<const Input*>(b), c, z.strides);
      p.workspace = workspace;
      p.workspace_bytes = workspace_bytes;
      v.launch(p, on);
      // A launch with a bad configuration fails at once; leave nothing behind for the caller's next call.
      CUDA_CHECK(cudaGetLastError());
      launched.insert(key);
    });
  });
}

}  // extern "C"
