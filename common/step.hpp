// What every step hands to the harness: one launcher signature for all of them, parameterized by
// the input type (float for steps 01-04, __half for the tensor-core steps 05 onwards). C and the
// scalars are FP32 in every step.
//
// A step registers itself at the end of its kernel.cu with one statement that names every field:
//     WORKLOG_REGISTER_STEP(Step<__half>{"07_async_pipeline", launch}
//                               .adds("cp.async pipeline, tiles shared in smem")
//                               .reuses_tile(block_tile_m, block_tile_n)
//                               .needs_compute_capability(80)
//                               .variant("stages2", "2 pipeline stages", launch_stages2))
// A step that needs scratch memory in device memory (11's partial tiles and flags) says how much
// for a shape with .needs_workspace(bytes_for_shape); the harness allocates it once per shape,
// zeroed, outside the timed region, and hands it to every launch in GemmProblem::workspace. A launch
// may leave anything there: the next one, on other operands, must not depend on it.
// and nothing else in the repository names it but its line in the top CMakeLists.txt: the step's
// executable, the GPU tests and the worklog driver all find it through the registry below.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "gemm_math.hpp"  // Shape

namespace worklog {

// C = alpha·A·B + beta·C with row-major A (M×K), B (K×N) and C (M×N), each with its leading
// dimension in elements (lda ≥ K, ldb ≥ N, ldc ≥ N; gemm_math.hpp: Strides): element (r, c) of A
// is a[r·lda + c]. Only the M×N elements of C are written; with beta == 0, C is not read (BLAS
// semantics). make_problem() fills in a packed problem.
template <class Input>
struct GemmProblem {
  int m, n, k;
  float alpha, beta;
  const Input* a;
  int lda;
  const Input* b;
  int ldb;
  float* c;
  int ldc;
  // The step's scratch memory (Step::needs_workspace): workspace_bytes of device memory, zeroed when
  // allocated; what a launch leaves there must not matter to the next (the back-to-back tests).
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
};

// A problem on these operands, packed where `strides` says 0 (the default: all packed).
template <class Input>
GemmProblem<Input> make_problem(Shape s, float alpha, float beta, const Input* a, const Input* b, float* c,
                                Strides strides = {}) {
  const Strides r = resolve_strides(s, strides);
  return {s.m, s.n, s.k, alpha, beta, a, r.lda, b, r.ldb, c, r.ldc};
}

// The shape and strides of a problem: what a step's workspace may depend on.
template <class Input>
Shape shape_of(const GemmProblem<Input>& p) {
  return {p.m, p.n, p.k};
}
template <class Input>
Strides strides_of(const GemmProblem<Input>& p) {
  return {p.lda, p.ldb, p.ldc};
}

template <class Input>
using Launcher = void (*)(const GemmProblem<Input>& problem, cudaStream_t stream);

// Bytes of workspace a step needs for a shape with these leading dimensions (on the current device).
using WorkspaceSize = std::size_t (*)(Shape shape, Strides strides);

// A step, or one of its variants (the same kernel with one knob changed or one technique left out,
// so that the README can measure each technique: `--variant NAME` runs one, the step's GPU tests
// test them all). Built with the named setters below, each returning the step, so that a
// registration reads as a list of named fields.
template <class Input>
struct Step {
  std::string name;  // the directory and executable name, "07_async_pipeline"; a variant: "07_async_pipeline/k64"
  Launcher<Input> launch = nullptr;
  std::string description;  // what the step adds, for the result table
  // Tile of C over which one fetch of A and B from global memory is shared: used by
  // modeled_global_bytes() for the roofline, and explained in the step's README.
  int reuse_rows = 1, reuse_cols = 1;
  int min_compute_capability = 0;     // e.g. 70 for WMMA; 0 when any CUDA GPU will do
  int max_compute_capability = 0;     // e.g. 90 for sm_90a-only code; 0 when there is no upper limit
  WorkspaceSize workspace = nullptr;  // nullptr: no workspace
  // The problems the step's own kernel takes, where it hands the others to the general kernel
  // (nullptr: it takes every problem, or does not say): what a report of routes asks without a GPU.
  bool (*own_path)(const GemmProblem<Input>&) = nullptr;
  std::vector<Step> variants;  // named "<step>/<variant>"; empty for a variant itself

  Step(std::string step_name, Launcher<Input> launcher) : name(std::move(step_name)), launch(launcher) {}

  Step adds(const char* what) && {
    description = what;
    return std::move(*this);
  }
  Step reuses_tile(int rows, int cols) && {
    reuse_rows = rows;
    reuse_cols = cols;
    return std::move(*this);
  }
  // The compute capabilities the step runs on, as major·10 + minor: `lowest` or newer, up to
  // `highest` when given (sm_90a code runs on 9.0 alone).
  Step needs_compute_capability(int lowest, int highest = 0) && {
    min_compute_capability = lowest;
    max_compute_capability = highest;
    return std::move(*this);
  }
  // The workspace the step needs for a shape (set it before the variants, which inherit it).
  Step needs_workspace(WorkspaceSize bytes_for_shape) && {
    workspace = bytes_for_shape;
    return std::move(*this);
  }
  // Which problems the step's own kernel takes (the rest go to the general kernel); set it before the
  // variants, which inherit it.
  Step takes_own_path(bool (*rule)(const GemmProblem<Input>&)) && {
    own_path = rule;
    return std::move(*this);
  }
  // A variant: its own launcher and description; the step's compute capabilities and workspace; the
  // step's reuse tile unless it names its own.
  Step variant(const char* variant_name, const char* what, Launcher<Input> launcher, int tile_rows = 0,
               int tile_cols = 0) && {
    Step v(name + "/" + variant_name, launcher);
    v.description = what;
    v.reuse_rows = tile_rows ? tile_rows : reuse_rows;
    v.reuse_cols = tile_cols ? tile_cols : reuse_cols;
    v.min_compute_capability = min_compute_capability;
    v.max_compute_capability = max_compute_capability;
    v.workspace = workspace;
    v.own_path = own_path;
    variants.push_back(std::move(v));
    return std::move(*this);
  }
  // A variant with a workspace of its own.
  Step variant(const char* variant_name, const char* what, Launcher<Input> launcher, WorkspaceSize bytes_for_shape,
               int tile_rows = 0, int tile_cols = 0) && {
    Step self = std::move(*this).variant(variant_name, what, launcher, tile_rows, tile_cols);
    self.variants.back().workspace = bytes_for_shape;
    return self;
  }
  // Bytes of workspace for `shape` with `strides` (0 when the step needs none).
  std::size_t workspace_bytes(Shape shape, Strides strides = {}) const {
    return workspace ? workspace(shape, resolve_strides(shape, strides)) : 0;
  }
  // "k64", the part of a variant's name after the step's.
  std::string variant_name() const { return name.substr(name.find('/') + 1); }
};

// One registered step, of either input type (exactly one of the two pointers is set).
struct RegisteredStep {
  const Step<float>* fp32 = nullptr;
  const Step<__half>* fp16 = nullptr;
  const std::string& name() const { return fp32 ? fp32->name : fp16->name; }
  // The step's variants' names (after the step's), in their order of registration.
  std::vector<std::string> variant_names() const;
  // The step itself (`variant` empty) or its variant of that name; false when there is none.
  bool has_variant(const std::string& variant) const;
  // Calls f(step) with the Step<float> or Step<__half> of the step itself or of its variant
  // `variant` (which must exist: has_variant).
  template <class F>
  decltype(auto) visit(const std::string& variant, F&& f) const {
    if (fp32) return f(pick(*fp32, variant));
    return f(pick(*fp16, variant));
  }

 private:
  template <class Input>
  static const Step<Input>& pick(const Step<Input>& step, const std::string& variant) {
    for (const Step<Input>& v : step.variants)
      if (v.variant_name() == variant) return v;
    return step;
  }
};

// Every step linked into this program, in the order their objects were initialized (not
// meaningful: look steps up by name).
std::vector<RegisteredStep>& step_registry();
// The registered step called `name` (a step's own name, never a variant's), or nullptr.
const RegisteredStep* find_step(const std::string& name);
// The step's registration as one JSON object, what `--list-variants` prints: its name, what it adds,
// its precision, the compute capabilities it runs on, its reuse tile, and its variants in their order
// of registration, each with its name (after the step's), description and reuse tile. The tooling
// (plots/registrations.py, docs/check_docs.py) reads this instead of the C++ source, so that a
// registration built in a loop (15's menu) is listed like one written out.
std::string registration_json(const RegisteredStep& step);

template <class Input>
struct StepRegistration {
  explicit StepRegistration(const Step<Input>& step) {
    RegisteredStep entry;
    if constexpr (std::is_same_v<Input, float>)
      entry.fp32 = &step;
    else
      entry.fp16 = &step;
    step_registry().push_back(entry);
  }
};

}  // namespace worklog

// Defines the step and adds it to the registry when the program starts. A kernel.cu registers its
// step once, under the directory's name; its variants are part of that one registration.
#define WORKLOG_REGISTER_STEP(...) WORKLOG_REGISTER_STEP_AT(__LINE__, __VA_ARGS__)
#define WORKLOG_REGISTER_STEP_AT(line, ...) WORKLOG_REGISTER_STEP_NAMED(line, __VA_ARGS__)
#define WORKLOG_REGISTER_STEP_NAMED(line, ...)                                       \
  namespace {                                                                        \
  const auto registered_step_##line = __VA_ARGS__;                                   \
  const ::worklog::StepRegistration registered_entry_##line{registered_step_##line}; \
  }
