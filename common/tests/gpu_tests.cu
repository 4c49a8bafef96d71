// GPU tests: every step against cuBLAS on shapes where edge bugs hide, and against a CPU double
// reference where the shape is small. Without a CUDA device the binary exits 77, which CTest
// reports as skipped.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "harness.hpp"
#include "reference.hpp"
#include "step.hpp"
#include "test_cases.hpp"

using namespace worklog;
using namespace worklog::testing;

namespace {

// The cases, one per line: "m n k alpha beta random|nan" (the initial C), then "lda ldb ldc" when the
// operands are not packed. lab/lab.py reads this list to grade a step case by case through its
// executable, so the two never drift apart.
void print_cases() {
  for (const Case& c : test_cases()) {
    std::printf("%d %d %d %.9g %.9g %s", c.shape.m, c.shape.n, c.shape.k, c.alpha, c.beta,
                c.initial_c == InitialC::nan ? "nan" : "random");
    const Strides r = resolve_strides(c.shape, c.strides);
    if (!packed(c.shape, c.strides)) std::printf(" %d %d %d", r.lda, r.ldb, r.ldc);
    std::printf("\n");
  }
}

// Small enough for the CPU reference to be quick.
bool small(Shape s) { return double(s.m) * s.n * s.k <= 4.0e6; }

template <class Input>
void check_against_cpu(const GemmData<Input>& data, const Case& c) {
  const Shape s = c.shape;
  const auto exact = testing::reference_gemm(s, c.alpha, data.host_a(), data.host_b(), c.beta, data.host_initial_c());
  const std::vector<float> initial = data.host_initial_c(), got = data.host_output();
  const double scale = exact_reference_scale(s.k, accumulation_unit_roundoff<Input>());
  std::size_t bad = 0, first_bad = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double tolerance = element_tolerance(scale, c.alpha, c.beta, float(exact.bound[i]), initial[i]);
    if (!within_tolerance(got[i], exact.c[i], tolerance) && bad++ == 0) first_bad = i;
  }
  CHECK_MESSAGE(bad == 0, bad << " element(s) off the CPU double reference; first at (" << first_bad / s.n << ", "
                              << first_bad % s.n << "): expected " << exact.c[first_bad] << ", got " << got[first_bad]);
}

template <class Input>
void check_step(const Step<Input>& step) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (const auto refusal = unsupported_gpu(step, prop)) {  // only without --step; main() skips that case
    MESSAGE("not run: " << refusal->message);
    return;
  }
  CublasHandle cublas;
  std::uint64_t seed = 1;
  for (const Case& c : test_cases()) {
    CAPTURE(describe(c));
    // Fresh random inputs for every case, and the step's workspace for the shape (if any).
    GemmData<Input> data(c.shape, seed++, c.initial_c, true, step.workspace_bytes(c.shape, c.strides), c.strides);
    data.compute_reference(cublas.get(), c.alpha, c.beta);
    step.launch(data.problem(c.alpha, c.beta), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const CheckResult r = data.check(c.alpha, c.beta);
    CHECK_MESSAGE(r.bad_count == 0, r.bad_count << " element(s) off cuBLAS; first at (" << r.first_bad_row << ", "
                                                << r.first_bad_col << "): expected " << r.expected << ", got "
                                                << r.obtained);
    CHECK_MESSAGE(r.gap_written == 0, r.gap_written << " element(s) of C's gaps (columns N to ldc - 1) written");
    CHECK(std::isfinite(r.max_abs_err));
    if (small(c.shape)) check_against_cpu(data, c);
  }
}

// The same inputs give the same bits, run after run. Every step once more on a cheap shape; a step
// that needs a workspace (11, 12: tiles split between units, their partials added up in a fixed
// order) 20 times on each shape that splits: one whose single tile is split over every unit, a
// few rows of A whose 8 tiles of 129 slices are dealt over every unit, and the same with N and K odd
// (13: read in place, K in parts added up by the block that finishes last).
template <class Input>
void check_determinism(const Step<Input>& step) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (const auto refusal = unsupported_gpu(step, prop)) {
    MESSAGE("not run: " << refusal->message);
    return;
  }
  std::vector<Shape> shapes;
  for (const Shape split : {Shape{256, 256, 8200}, Shape{16, 1024, 8200}, Shape{16, 1025, 8199}})
    if (step.workspace_bytes(split) > 0) shapes.push_back(split);
  const int runs = shapes.empty() ? 2 : 20;
  if (shapes.empty()) shapes.push_back({129, 136, 520});
  for (const Shape& shape : shapes) {
    CAPTURE(describe({shape, 1.5f, 0.5f, InitialC::random}));
    GemmData<Input> data(shape, 3, InitialC::random, false, step.workspace_bytes(shape));
    std::vector<float> first;
    for (int run = 0; run < runs; ++run) {
      data.reset_output();
      step.launch(data.problem(1.5f, 0.5f), 0);
      CUDA_CHECK(cudaDeviceSynchronize());
      const std::vector<float> out = data.host_output();
      if (run == 0) {
        first = out;
        continue;
      }
      std::size_t differ = 0;
      for (std::size_t i = 0; i < out.size(); ++i) differ += std::memcmp(&out[i], &first[i], sizeof(float)) != 0;
      CHECK_MESSAGE(differ == 0, "run " << run << ": " << differ << " element(s) differ in their bits from run 0");
    }
  }
}

// Operands whose pointers are one element past the start of an allocation: no row of A or B starts
// on a 16-byte boundary, whatever K and N: every step must check its pointers' alignment before a
// vector load, a wmma fragment load or a copy of 16-byte chunks. The same inputs, copied one element in, against cuBLAS
// on the originals. Shapes: aligned ones (a pointer alone unaligned), few rows, both sides of the swap, tiny K, and a C
// staged through a padded copy (14's paths).
template <class Input>
void check_offset_operands(const Step<Input>& step) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (const auto refusal = unsupported_gpu(step, prop)) {
    MESSAGE("not run: " << refusal->message);
    return;
  }
  CublasHandle cublas;
  const std::vector<Shape> shapes = {{67, 53, 64},      {16, 1024, 1032}, {300, 264, 72},
                                     {129, 1028, 2052}, {300, 280, 17},   {517, 263, 2050}};
  for (const Shape& s : shapes) {
    CAPTURE(describe({s, 1.0f, 0.5f, InitialC::random}));
    GemmData<Input> data(s, 9, InitialC::random, true, step.workspace_bytes(s));
    data.compute_reference(cublas.get(), 1.0f, 0.5f);
    GemmProblem<Input> p = data.problem(1.0f, 0.5f);
    const std::size_t a_count = strided_elements(s.m, s.k, p.lda), b_count = strided_elements(s.k, s.n, p.ldb);
    DeviceBuffer<Input> a(a_count + 1), b(b_count + 1);
    CUDA_CHECK(cudaMemcpy(a.data() + 1, p.a, a_count * sizeof(Input), cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(b.data() + 1, p.b, b_count * sizeof(Input), cudaMemcpyDeviceToDevice));
    p.a = a.data() + 1;
    p.b = b.data() + 1;
    step.launch(p, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const CheckResult r = data.check(1.0f, 0.5f);
    CHECK_MESSAGE(r.pass, r.bad_count << " element(s) off cuBLAS; first at (" << r.first_bad_row << ", "
                                      << r.first_bad_col << "): expected " << r.expected << ", got " << r.obtained);
  }
}

// Two launches in a row on one workspace: operands X, then operands Y of the same shape with another
// alpha and beta. What the first leaves in the workspace (partials, flags, counters, padded copies)
// must not reach the second: Y's C must be the bits of Y launched alone on a fresh (zeroed) workspace,
// and, unless without_reference (the sanitizer runs, which leave cuBLAS out), within the bound of
// cuBLAS's. The shapes take each path that leaves state behind: 11's parts and its fixups (shared,
// by one unit), 13's split K, 14's padded copies, its staged C and its in-place parts, strided too;
// a step without a workspace runs the protocol on one shape.
bool without_reference = false;

template <class Input>
void check_back_to_back(const Step<Input>& step) {
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (const auto refusal = unsupported_gpu(step, prop)) {
    MESSAGE("not run: " << refusal->message);
    return;
  }
  const std::vector<std::pair<Shape, Strides>> stateful = {
      {{256, 256, 8200}, {}},                  // one tile over every unit: the shared fixup (11)
      {{1536, 1280, 2176}, {}},                // tiles in 2 parts: the fixup by one unit (11)
      {{16, 1024, 8200}, {}},                  // few rows, K split over every SM (12)
      {{16, 1025, 8199}, {}},                  // B unaligned: the in-place kernel's parts in k (13)
      {{129, 1028, 2052}, {}},                 // A and B padded for the swap kernel (13)
      {{517, 263, 4100}, {}},                  // C staged through a padded copy (13)
      {{257, 33921, 24}, {}},                  // B padded, then C through shared memory (13)
      {{192, 264, 2056}, {2064, 267, 268}},    // strided: 11's parts on 08's path, 14's copies
      {{16, 1032, 4104}, {4112, 1037, 1035}},  // strided few rows: in place (13), 08 (12)
      {{1000, 1, 4096}, {}},                   // one column, K in 2 parts (15's pass over A)
      {{200, 5, 3000}, {3003, 7, 9}},          // five columns strided, K in 5 parts (15's pass over A)
  };
  std::vector<std::pair<Shape, Strides>> shapes;
  for (const auto& shape : stateful)
    if (step.workspace_bytes(shape.first, shape.second) > 0) shapes.push_back(shape);
  if (shapes.empty()) shapes.push_back({{67, 136, 264}, {}});
  std::optional<CublasHandle> cublas;
  if (!without_reference) cublas.emplace();
  for (const auto& one : shapes) {
    const Shape shape = one.first;
    const Strides strides = one.second;
    CAPTURE(describe({shape, 0.75f, -0.5f, InitialC::random, strides}));
    const std::size_t workspace = step.workspace_bytes(shape, strides);
    // Y alone, on a fresh workspace: the bits to expect.
    GemmData<Input> alone(shape, 41, InitialC::random, false, workspace, strides);
    step.launch(alone.problem(0.75f, -0.5f), 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> expected = alone.host_output();
    // X, then Y, on Y's workspace.
    GemmData<Input> x(shape, 17, InitialC::random, false, 0, strides);
    GemmData<Input> y(shape, 41, InitialC::random, !without_reference, workspace, strides);
    if (cublas) y.compute_reference(cublas->get(), 0.75f, -0.5f);
    const GemmProblem<Input> py = y.problem(0.75f, -0.5f);
    GemmProblem<Input> px = x.problem(1.5f, 0.25f);
    px.workspace = py.workspace;
    px.workspace_bytes = py.workspace_bytes;
    step.launch(px, 0);
    step.launch(py, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<float> got = y.host_output();
    std::size_t differ = 0;
    for (std::size_t i = 0; i < got.size(); ++i) differ += std::memcmp(&got[i], &expected[i], sizeof(float)) != 0;
    CHECK_MESSAGE(differ == 0, differ << " element(s) of Y after X differ in their bits from Y alone");
    if (cublas) {
      const CheckResult r = y.check(0.75f, -0.5f);
      CHECK_MESSAGE(r.pass, r.bad_count << " element(s) off cuBLAS, " << r.gap_written << " gap element(s) written");
    }
  }
}

}  // namespace

// Which step this run tests: gpu_tests --step NAME (CTest runs one step per test); without
// --step, every step linked in.
std::string selected_step;

// Calls check(step) on the selected step (every step without --step) and on each of its variants.
template <class Check>
void check_selected_steps(Check check) {
  bool any = false;
  for (const RegisteredStep& step : step_registry()) {
    if (!selected_step.empty() && step.name() != selected_step) continue;
    any = true;
    std::vector<std::string> variants{""};
    for (const std::string& v : step.variant_names()) variants.push_back(v);
    for (const std::string& variant : variants)
      step.visit(variant, [&](const auto& chosen) {
        CAPTURE(chosen.name);
        check(chosen);
      });
  }
  REQUIRE_MESSAGE(any, "no registered step is called '" << selected_step << "'");
}

TEST_CASE("step") {
  check_selected_steps([](const auto& step) { check_step(step); });
}

TEST_CASE("determinism") {
  check_selected_steps([](const auto& step) { check_determinism(step); });
}

TEST_CASE("back to back") {
  check_selected_steps([](const auto& step) { check_back_to_back(step); });
}

TEST_CASE("offset operands") {
  check_selected_steps([](const auto& step) { check_offset_operands(step); });
}

TEST_CASE("checker: the reference itself agrees with the CPU double reference") {
  CublasHandle cublas;
  const Case c{{67, 45, 129}, 0.5f, 1.5f, InitialC::random};
  GemmData<float> data(c.shape, 7, c.initial_c, true);
  data.compute_reference(cublas.get(), c.alpha, c.beta);
  cublas_gemm(cublas.get(), data.problem(c.alpha, c.beta));  // cuBLAS into the "step" output
  CUDA_CHECK(cudaDeviceSynchronize());
  CHECK(data.check(c.alpha, c.beta).pass);
  check_against_cpu(data, c);
}

TEST_CASE("checker: rejects a result with a single wrong element") {
  CublasHandle cublas;
  const Shape s{33, 47, 19};
  GemmData<float> data(s, 11, InitialC::random, true);
  data.compute_reference(cublas.get(), 1.0f, 0.5f);
  const RegisteredStep* naive = find_step("01_naive");
  REQUIRE(naive);
  naive->fp32->launch(data.problem(1.0f, 0.5f), 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  REQUIRE(data.check(1.0f, 0.5f).pass);  // the untouched result passes...

  const long long row = 5, col = 7;
  float* element = data.output() + row * s.n + col;
  float value = 0;
  CUDA_CHECK(cudaMemcpy(&value, element, sizeof value, cudaMemcpyDeviceToHost));
  auto corrupt_and_check = [&](float wrong) {
    CUDA_CHECK(cudaMemcpy(element, &wrong, sizeof wrong, cudaMemcpyHostToDevice));
    const CheckResult r = data.check(1.0f, 0.5f);
    CHECK_FALSE(r.pass);  // ...and each single corruption fails, at the right place
    CHECK(r.bad_count == 1);
    CHECK(r.first_bad_row == row);
    CHECK(r.first_bad_col == col);
    if (std::isfinite(wrong)) CHECK(r.obtained == wrong);
  };
  // 1e-3 is far above the bound at K = 19 (about 2.5e-6 · sum |a||b|, i.e. ~1e-5 here) and far
  // below the values themselves, so only the checker can notice.
  SUBCASE("off by 1e-3") { corrupt_and_check(value + 1e-3f); }
  SUBCASE("NaN") { corrupt_and_check(std::nanf("")); }
  SUBCASE("Inf") { corrupt_and_check(INFINITY); }
}

TEST_CASE("checker: rejects a write into C's gap, and a NaN taken from A's") {
  CublasHandle cublas;
  const Shape s{33, 47, 19};
  const Strides strides{23, 50, 52};  // gaps of 4, 3 and 5 elements after each row
  GemmData<float> data(s, 13, InitialC::random, true, 0, strides);
  data.compute_reference(cublas.get(), 1.0f, 0.5f);
  const RegisteredStep* naive = find_step("01_naive");
  REQUIRE(naive);
  const GemmProblem<float> p = data.problem(1.0f, 0.5f);
  naive->fp32->launch(p, 0);
  CUDA_CHECK(cudaDeviceSynchronize());
  REQUIRE(data.check(1.0f, 0.5f).pass);  // 01 honors the strides...
  SUBCASE("a gap element of C changed") {
    const float wrong = 1.0f;
    CUDA_CHECK(cudaMemcpy(data.output() + 7 * p.ldc + s.n + 2, &wrong, sizeof wrong, cudaMemcpyHostToDevice));
    const CheckResult r = data.check(1.0f, 0.5f);
    CHECK_FALSE(r.pass);  // ...and the check sees a write past N
    CHECK(r.gap_written == 1);
    CHECK(r.bad_count == 0);
  }
  SUBCASE("A read as packed") {
    // The same kernel told that A is packed reads the gaps' NaN (and misplaced rows): the check fails.
    GemmProblem<float> wrong = p;
    wrong.lda = s.k;
    data.reset_output();
    naive->fp32->launch(wrong, 0);
    CUDA_CHECK(cudaDeviceSynchronize());
    CHECK(data.check(1.0f, 0.5f).bad_count > 0);
  }
}

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--list-cases") {  // needs no GPU
      print_cases();
      return exit_ok;
    }
    if (word == "--help" || word == "-h" || word == "-?") {  // needs no GPU either: ours, then doctest's
      std::printf(
          "usage: gpu_tests [--step NAME] [--no-cublas] [--list-cases] [doctest options]\n"
          "Every step against cuBLAS (and small shapes against a CPU double reference) on odd, skinny\n"
          "and tile-multiple shapes; exit 77 (skipped, for CTest) without a CUDA device.\n"
          "  --step NAME    only this step (the test case 'step'), e.g. --test-case=step --step=01_naive\n"
          "  --no-cublas    'back to back' without cuBLAS's check (the bits of Y alone only), for the sanitizer\n"
          "  --list-cases   print the cases, one per line: M N K alpha beta random|nan [lda ldb ldc]\n");
      doctest::Context context(argc, argv);
      return context.run();
    }
  }
  if (const auto none = no_cuda_device()) {  // no driver, a driver too old, or no GPU: said in words
    std::printf("%s: GPU tests skipped\n", none->message.c_str());
    return exit_no_device;  // 77: CTest's SKIP_RETURN_CODE
  }
  // Take --step NAME (or --step=NAME) out of the arguments; doctest gets the rest.
  std::vector<char*> args;
  for (int i = 0; i < argc; ++i) {
    const std::string word = argv[i];
    if (word == "--step" && i + 1 < argc)
      selected_step = argv[++i];
    else if (word.rfind("--step=", 0) == 0)
      selected_step = word.substr(7);
    else if (word == "--no-cublas")
      without_reference = true;
    else
      args.push_back(argv[i]);
  }
  // A step this GPU cannot run is skipped (exit 77), never passed.
  if (const RegisteredStep* step = find_step(selected_step)) {
    cudaDeviceProp prop{};
    CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
    const auto refusal = step->visit("", [&](const auto& s) { return unsupported_gpu(s, prop); });
    if (refusal) {
      std::printf("%s: GPU tests skipped\n", refusal->message.c_str());
      return exit_no_device;
    }
  }
  doctest::Context context(int(args.size()), args.data());
  return context.run();
}
