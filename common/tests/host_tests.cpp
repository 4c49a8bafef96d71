// Host tests: everything that needs no GPU. They run on CI.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include <array>
#include <climits>
#include <cmath>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "cli.hpp"
#include "exit_codes.hpp"
#include "gemm_math.hpp"
#include "kernel_timestamps.hpp"
#include "no_device.hpp"
#include "percentile.hpp"
#include "reference.hpp"
#include "swizzle.hpp"

using namespace worklog;

namespace {

std::string usage_error(const std::vector<std::string>& args) {
  try {
    parse_options(args);
  } catch (const UsageError& e) {
    return e.message;
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("command line: defaults") {
  const Options o = parse_options({});
  CHECK(o.shape.m == 4096);
  CHECK(o.shape.n == 4096);
  CHECK(o.shape.k == 4096);
  CHECK(o.alpha == 1.0f);
  CHECK(o.beta == 0.0f);
  CHECK(o.check);
  CHECK(o.cublas);
  CHECK(o.iters >= 1);
  CHECK(o.csv_path.empty());
  CHECK(o.device == 0);
  CHECK(o.initial_c == InitialC::random);
  CHECK(o.timing == TimingMode::cold);  // the GPU's time, the operands from DRAM
  CHECK_FALSE(o.dram_fraction);
  CHECK_FALSE(o.help);
  CHECK_FALSE(o.list_variants);
}

TEST_CASE("command line: every flag, both spellings") {
  const Options o = parse_options({"--m",
                                   "127",
                                   "--n=129",
                                   "--k",
                                   "67",
                                   "--alpha",
                                   "-0.75",
                                   "--beta=2.5e-1",
                                   "--warmup",
                                   "0",
                                   "--iters",
                                   "3",
                                   "--seed",
                                   "18446744073709551615",
                                   "--csv",
                                   "out.csv",
                                   "--device",
                                   "1",
                                   "--variant=grouped",
                                   "--no-check"});
  CHECK(o.shape.m == 127);
  CHECK(o.shape.n == 129);
  CHECK(o.shape.k == 67);
  CHECK(o.alpha == -0.75f);
  CHECK(o.beta == 0.25f);
  CHECK(o.warmup == 0);
  CHECK(o.iters == 3);
  CHECK(o.seed == 18446744073709551615ull);
  CHECK(o.csv_path == "out.csv");
  CHECK(o.device == 1);
  CHECK(o.variant == "grouped");
  CHECK_FALSE(o.check);
  CHECK(o.cublas);
  CHECK(parse_options({"--help"}).help);
  CHECK(parse_options({"-h"}).help);
  CHECK(parse_options({"--list-variants"}).list_variants);
  CHECK_FALSE(parse_options({"--list-variants"}).help);
  CHECK(parse_options({"--m", "2147483647"}).shape.m == INT_MAX);
  const Options no_cublas = parse_options({"--no-cublas"});
  CHECK_FALSE(no_cublas.cublas);
  CHECK_FALSE(no_cublas.check);
  // A NaN-filled C, for the beta = 0 cases that prove C is not read (lab/lab.py grades them one by one).
  CHECK(parse_options({"--initial-c", "nan"}).initial_c == InitialC::nan);
  CHECK(parse_options({"--initial-c=random"}).initial_c == InitialC::random);
  CHECK(parse_options({"--initial-c", "nan", "--beta", "0", "--alpha", "-1.25"}).initial_c == InitialC::nan);
  CHECK(parse_options({}).profile == ProfileTarget::none);
  const Options profile_step = parse_options({"--profile", "step"});
  CHECK(profile_step.profile == ProfileTarget::step);
  CHECK_FALSE(profile_step.check);  // a profile run checks nothing
  CHECK(profile_step.cublas);
  CHECK(parse_options({"--profile=cublas"}).profile == ProfileTarget::cublas);
  CHECK(parse_options({"--profile", "step", "--no-cublas"}).profile == ProfileTarget::step);
}

// Each way a command line can be wrong, with the exact one-line message (the executables prefix
// it with "<step>: error: " and exit with code 2; common/tests/cli_errors.cmake checks that).
TEST_CASE("command line: bad input") {
  struct Row {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Row> rows = {
      {{"--bogus"}, "unknown argument '--bogus' (see --help)"},
      {{"extra"}, "unknown argument 'extra' (see --help)"},
      {{"--m"}, "--m needs a value"},
      {{"--m", "abc"}, "--m expects a positive integer (got 'abc')"},
      {{"--m", "12x"}, "--m expects a positive integer (got '12x')"},
      {{"--m="}, "--m expects a positive integer (got '')"},
      {{"--n", "1.5"}, "--n expects a positive integer (got '1.5')"},
      {{"--k", "0"}, "--k must be at least 1 (got '0')"},
      {{"--m", "-5"}, "--m must be at least 1 (got '-5')"},
      {{"--n", "2147483648"}, "--n must be at most 2147483647 (got '2147483648')"},
      {{"--k", "99999999999999999999999"}, "--k must be at most 2147483647 (got '99999999999999999999999')"},
      {{"--iters", "0"}, "--iters must be at least 1 (got '0')"},
      {{"--warmup", "-1"}, "--warmup must be at least 0 (got '-1')"},
      {{"--warmup", "many"}, "--warmup expects a non-negative integer (got 'many')"},
      {{"--alpha", "x"}, "--alpha expects a number (got 'x')"},
      {{"--beta", "nan"}, "--beta must be a finite FP32 value (got 'nan')"},
      {{"--alpha", "1e39"}, "--alpha must be a finite FP32 value (got '1e39')"},
      {{"--seed", "-1"}, "--seed expects a non-negative integer (got '-1')"},
      {{"--seed", "99999999999999999999"}, "--seed must fit in 64 bits (got '99999999999999999999')"},
      {{"--device", "-1"}, "--device must be at least 0 (got '-1')"},
      {{"--csv"}, "--csv needs a value"},
      {{"--csv="}, "--csv expects a file name"},
      {{"--initial-c", "zero"}, "--initial-c expects 'random' or 'nan' (got 'zero')"},
      {{"--initial-c"}, "--initial-c needs a value"},
      {{"--initial-c", "nan", "--beta", "0.5"}, "--initial-c nan needs --beta 0"},
      {{"--beta=-1", "--initial-c=nan"}, "--initial-c nan needs --beta 0"},
      {{"--profile"}, "--profile needs a value"},
      {{"--profile", "kernel"}, "--profile expects 'step' or 'cublas' (got 'kernel')"},
      {{"--profile", "step", "--csv", "x.csv"},
       "--profile cannot be combined with --csv (a profile run times nothing)"},
      {{"--no-cublas", "--profile", "cublas"}, "--profile cublas cannot be combined with --no-cublas"},
      {{"--shapes"}, "--shapes needs a value"},
      {{"--shapes="}, "--shapes expects a file name"},
      {{"--shapes", "s.txt", "--m", "64"}, "--shapes cannot be combined with --m, --n or --k"},
      {{"--k=8", "--shapes=s.txt"}, "--shapes cannot be combined with --m, --n or --k"},
      {{"--shapes", "s.txt", "--profile", "step"},
       "--profile cannot be combined with --shapes (a profile run launches one shape)"},
      {{"--time-cap", "0"}, "--time-cap must be positive and finite (got '0')"},
      {{"--time-cap", "-5"}, "--time-cap must be positive and finite (got '-5')"},
      {{"--time-cap", "inf"}, "--time-cap must be positive and finite (got 'inf')"},
      {{"--time-cap", "soon"}, "--time-cap expects a number of milliseconds (got 'soon')"},
      {{"--timing", "hot"}, "--timing expects 'cold' or 'warm' (got 'hot')"},
      {{"--timing"}, "--timing needs a value"},
      {{"--profile", "step", "--dram-fraction"},
       "--profile cannot be combined with --dram-fraction (a profile run times nothing)"},
      {{"--lda", "0"}, "--lda must be at least 1 (got '0')"},
      {{"--ldb", "wide"}, "--ldb expects a positive integer (got 'wide')"},
      {{"--ldc"}, "--ldc needs a value"},
      {{"--m", "64", "--k", "64", "--lda", "63"},
       "--lda must be at least K (lda 63, ldb 4096, ldc 4096 for 64x4096x64)"},
      {{"--n", "10", "--ldb", "9"}, "--ldb must be at least N (lda 4096, ldb 9, ldc 10 for 4096x10x4096)"},
      {{"--n=10", "--ldc=9"}, "--ldc must be at least N (lda 4096, ldb 10, ldc 9 for 4096x10x4096)"},
  };
  for (const Row& row : rows) {
    CAPTURE(row.message);
    CHECK(usage_error(row.args) == row.message);
  }
}

TEST_CASE("command line: --shapes and --time-cap") {
  const Options o = parse_options({"--shapes", "corpus.txt", "--time-cap", "250", "--iters", "10"});
  CHECK(o.shapes_path == "corpus.txt");
  CHECK(o.time_cap_ms == 250.0);
  CHECK(o.iters == 10);
  CHECK(parse_options({"--time-cap=0.5"}).time_cap_ms == 0.5);
  CHECK(parse_options({}).shapes_path.empty());
  CHECK(parse_options({}).time_cap_ms == 0.0);  // no cap: --iters rounds
}

namespace {

std::string shape_list_error(const std::string& text) {
  try {
    parse_shape_list(text, "s.txt");
  } catch (const UsageError& e) {
    return e.message;
  }
  return "(accepted)";
}

}  // namespace

TEST_CASE("shape list: one MxNxK a line, comments and blank lines ignored") {
  const std::vector<Shape> shapes =
      parse_shape_list("# the corpus\n4096x4096x4097\n\n  1x128256x4096   # LM head\r\n31x33x17\n", "s.txt");
  REQUIRE(shapes.size() == 3);
  CHECK((shapes[0].m == 4096 && shapes[0].n == 4096 && shapes[0].k == 4097));
  CHECK((shapes[1].m == 1 && shapes[1].n == 128256 && shapes[1].k == 4096));
  CHECK((shapes[2].m == 31 && shapes[2].n == 33 && shapes[2].k == 17));
}

TEST_CASE("shape list: bad lines are named by file and line") {
  CHECK(shape_list_error("64x64x64\n4096x4096\n") ==
        "s.txt:2: expected MxNxK, three positive integers (got '4096x4096')");
  CHECK(shape_list_error("1x2x3x4") == "s.txt:1: expected MxNxK, three positive integers (got '1x2x3x4')");
  CHECK(shape_list_error("# c\n\n8x8xabc") == "s.txt:3: K expects a positive integer (got 'abc')");
  CHECK(shape_list_error("8x0x8") == "s.txt:1: N must be at least 1 (got '0')");
  CHECK(shape_list_error("3000000000x8x8") == "s.txt:1: M must be at most 2147483647 (got '3000000000')");
  CHECK(shape_list_error("x8x8") == "s.txt:1: M expects a positive integer (got '')");
  CHECK(shape_list_error("# nothing but comments\n\n") == "s.txt: no shapes listed");
  try {
    read_shape_file("/nonexistent-dir/shapes.txt");
    FAIL("a missing file was read");
  } catch (const UsageError& e) {
    CHECK(e.message == "cannot open --shapes file '/nonexistent-dir/shapes.txt': No such file or directory");
  }
}

TEST_CASE("command line: --timing and --dram-fraction") {
  CHECK(parse_options({"--timing", "warm"}).timing == TimingMode::warm);
  CHECK(parse_options({"--timing=cold"}).timing == TimingMode::cold);
  CHECK(parse_options({"--dram-fraction"}).dram_fraction);
  CHECK(std::string(timing_mode_name(TimingMode::cold)) == "cold");
  CHECK(std::string(timing_mode_name(TimingMode::warm)) == "warm");
}

TEST_CASE("kernel timestamps: each run from its first kernel's start to its last kernel's end") {
  // A warm-up run before the first clock probe, left out; then two runs: a cover (hold, flush), then
  // one kernel; a cover, then two kernels with a gap between them (counted); the clock probes belong
  // to no run. Names as CUPTI reports them.
  const std::vector<KernelSpan> spans = {
      {0, 10000, "_ZN7worklog12_GLOBAL__N_118timing_hold_kernelEx"},  // the last warm-up round: no run
      {10000, 12000, "swap_ab_gemm"},
      {20000, 100000, "_ZN7worklog12_GLOBAL__N_119timing_clock_kernelExPx"},
      {200000, 250000, "_ZN7worklog12_GLOBAL__N_118timing_hold_kernelEx"},
      {250500, 290000, "_ZN7worklog12_GLOBAL__N_118timing_read_kernelEPK6float4xPf"},
      {291000, 296000, "swap_ab_gemm"},
      {300000, 350000, "_ZN7worklog12_GLOBAL__N_118timing_hold_kernelEx"},
      {351000, 353000, "nvjet_sm90_hss_gemm"},
      {354000, 355500, "splitKreduce_kernel"},
      {400000, 500000, "_ZN7worklog12_GLOBAL__N_119timing_clock_kernelExPx"},
  };
  const std::vector<double> ms = run_times_ms(spans, 2);
  REQUIRE(ms.size() == 2);
  CHECK(ms[0] == doctest::Approx(0.005));
  CHECK(ms[1] == doctest::Approx(0.0045));
  CHECK(run_times_ms(spans, 3).empty());  // a run missing: the events time them instead
  std::vector<KernelSpan> empty_run = spans;
  empty_run.erase(empty_run.begin() + 5);  // the first timed cover is followed by no kernel of a run
  CHECK(run_times_ms(empty_run, 2).empty());
}

TEST_CASE("usage text names every flag and the exit codes") {
  const std::string text = usage_text("01_naive");
  for (const char* flag : {"--m",
                           "--n",
                           "--k",
                           "--lda",
                           "--ldb",
                           "--ldc",
                           "--alpha",
                           "--beta",
                           "--warmup",
                           "--iters",
                           "--seed",
                           "--no-check",
                           "--no-cublas",
                           "--csv",
                           "--device",
                           "--initial-c",
                           "--profile",
                           "--shapes",
                           "--time-cap",
                           "--help",
                           "--list-variants",
                           "77 no CUDA device",
                           "--timing",
                           "cold",
                           "warm",
                           "--dram-fraction",
                           "--profile-launches"})
    CHECK(text.find(flag) != std::string::npos);
}

TEST_CASE("JSON strings: what --list-variants prints parses as the text it quotes") {
  CHECK(json_quoted("plain") == "\"plain\"");
  CHECK(json_quoted("") == "\"\"");
  CHECK(json_quoted("say \"hi\"") == "\"say \\\"hi\\\"\"");
  CHECK(json_quoted("a\\b") == "\"a\\\\b\"");
  CHECK(json_quoted("tab\there\nnext") == "\"tab\\u0009here\\u000anext\"");
  CHECK(json_quoted("128 × 256") == "\"128 × 256\"");  // UTF-8 as it is
}

TEST_CASE("exit codes: one value each, as --help and CTest know them") {
  // The step executables' codes, each listed by --help as "<value> <meaning>".
  const std::string text = usage_text("01_naive");
  const std::vector<std::pair<ExitCode, const char*>> step_codes = {{exit_ok, "0 ok"},
                                                                    {exit_check_failed, "1 check failed"},
                                                                    {exit_bad_argument, "2 bad argument"},
                                                                    {exit_does_not_fit, "3 does not fit"},
                                                                    {exit_unsupported_gpu, "4 unsupported GPU"},
                                                                    {exit_cuda_error, "5 CUDA/cuBLAS error"},
                                                                    {exit_no_device, "77 no CUDA device"}};
  for (const auto& [code, listed] : step_codes) {
    CAPTURE(listed);
    CHECK(text.find(listed) != std::string::npos);
    CHECK(std::to_string(int(code)) == std::string(listed).substr(0, std::string(listed).find(' ')));
  }
  // The drivers' and the lab kit's own codes come after the steps' and never reuse one.
  const std::set<int> all = {
      exit_ok,         exit_check_failed, exit_bad_argument,      exit_does_not_fit, exit_unsupported_gpu,
      exit_cuda_error, exit_tool_missing, exit_no_counter_access, exit_cannot_grade, exit_no_device};
  CHECK(all.size() == 10);
  CHECK(exit_no_device == 77);  // CTest's SKIP_RETURN_CODE for the GPU tests (common/tests/CMakeLists.txt)
}

TEST_CASE("no device: the reason in words a reader can act on") {
  // No libcuda: the runtime calls that an insufficient driver, and the driver version is 0.
  CHECK(no_device_reason(DeviceCount::insufficient_driver, 0, 13000, "CUDA driver version is insufficient", nullptr) ==
        "no NVIDIA driver found (libcuda cannot be loaded)");
  CHECK(no_device_reason(DeviceCount::insufficient_driver, 12040, 13000, "x", nullptr) ==
        "the NVIDIA driver is too old for this program: it supports CUDA up to 12.4, and the program was built "
        "with CUDA 13.0; install a driver for CUDA 13.0 or newer, or build with a CUDA Toolkit the driver supports");
  CHECK(no_device_reason(DeviceCount::none, 13000, 13000, "x", nullptr) ==
        "no CUDA device found (the NVIDIA driver is loaded but reports no GPU)");
  CHECK(no_device_reason(DeviceCount::none, 13000, 13000, "x", "") ==
        "no CUDA device found (the NVIDIA driver is loaded; CUDA_VISIBLE_DEVICES='' may hide the GPUs)");
  CHECK(no_device_reason(DeviceCount::other_error, 13000, 13000, "initialization error", nullptr) ==
        "no usable CUDA device (the NVIDIA driver is loaded but does not start: initialization error)");
  CHECK(no_device_reason(DeviceCount::some, 13000, 13000, "", nullptr).empty());
  CHECK(cuda_version_text(12080) == "12.8");
  // Nothing sends a reader without a driver to upgrade one.
  for (DeviceCount count : {DeviceCount::none, DeviceCount::insufficient_driver, DeviceCount::other_error})
    CHECK(no_device_reason(count, 0, 13000, "CUDA driver version is insufficient for CUDA runtime version", nullptr)
              .find("insufficient") == std::string::npos);
}

TEST_CASE("ceil_div does not overflow") {
  CHECK(ceil_div(0, 32) == 0);
  CHECK(ceil_div(1, 32) == 1);
  CHECK(ceil_div(64, 32) == 2);
  CHECK(ceil_div(65, 32) == 3);
  CHECK(ceil_div(INT_MAX, 128) == 16777216);
}

TEST_CASE("FLOP and byte counts") {
  CHECK(gemm_flops({4096, 4096, 4096}) == 137438953472.0);
  CHECK(gemm_flops({127, 129, 67}) == 2.0 * 127 * 129 * 67);
  const Shape s{4096, 4096, 4096};
  const double mnk = 4096.0 * 4096 * 4096, mn = 4096.0 * 4096;
  // No reuse: every FMA fetches two FP32 operands, 8 bytes per 2 FLOP.
  CHECK(modeled_global_bytes(s, 4, 1, 1, false) == 8 * mnk + 4 * mn);
  // 128 × 128 tiles: A is read N/128 times, B M/128 times; beta != 0 reads C too.
  CHECK(modeled_global_bytes(s, 4, 128, 128, true) == 4 * (2 * mnk / 128) + 8 * mn);
  CHECK(modeled_global_bytes(s, 2, 64, 32, false) == 2 * (mnk / 32 + mnk / 64) + 4 * mn);
  // Partial tiles count as whole ones.
  CHECK(modeled_global_bytes({1, 129, 1}, 4, 1, 128, false) == 4.0 * (1 * 2 + 129 * 1) + 4 * 129);
}

TEST_CASE("leading dimensions: packed by default, at least the row, the allocation they take") {
  const Shape s{3, 5, 7};
  const Strides packed = resolve_strides(s, {});
  CHECK(packed.lda == 7);
  CHECK(packed.ldb == 5);
  CHECK(packed.ldc == 5);
  const Strides given = resolve_strides(s, {9, 0, 8});  // 0: packed
  CHECK(given.lda == 9);
  CHECK(given.ldb == 5);
  CHECK(given.ldc == 8);
  CHECK(strides_problem(s, {}) == nullptr);
  CHECK(strides_problem(s, {7, 5, 5}) == nullptr);
  CHECK(std::string(strides_problem(s, {6, 0, 0})) == "--lda must be at least K");
  CHECK(std::string(strides_problem(s, {0, 4, 0})) == "--ldb must be at least N");
  CHECK(std::string(strides_problem(s, {0, 0, 4})) == "--ldc must be at least N");
  // The last row takes only its own elements: (rows − 1)·ld + cols.
  CHECK(strided_elements(3, 7, 9) == 2 * 9 + 7);
  CHECK(strided_elements(1, 7, 100) == 7);
  CHECK(strided_elements(0, 7, 9) == 0);
  // The strides on the command line, and into the memory a run needs (rows × ld bounds each matrix).
  const Options o = parse_options({"--m", "3", "--n", "5", "--k", "7", "--lda=9", "--ldc", "8"});
  CHECK(o.strides.lda == 9);
  CHECK(o.strides.ldb == 0);
  CHECK(o.strides.ldc == 8);
  CHECK(*device_bytes_needed(s, 2, false, o.strides) == 2 * (3 * 9 + 7 * 5) + 4 * 2 * (3 * 8));
  CHECK(*device_bytes_needed(s, 2, true, o.strides) == 2 * 2 * (3 * 9 + 7 * 5) + 4 * 3 * (3 * 8) + 4 * 15);
  // INT_MAX rows of INT_MAX: 2^62 elements, 2^65 bytes of A and |A| in FP32: more than 64 bits count.
  CHECK_FALSE(device_bytes_needed({INT_MAX, 1, 1}, 4, true, {INT_MAX, 0, 0}).has_value());
}

TEST_CASE("device memory needed, with overflow") {
  // FP32, check on: A, B and |A|, |B|; C, its initial value, cuBLAS's C and the bound matrix.
  CHECK(*device_bytes_needed({2, 3, 4}, 4, true) == 2 * 4 * (8 + 12) + 4 * 4 * 6);
  CHECK(*device_bytes_needed({2, 3, 4}, 2, false) == 2 * (8 + 12) + 2 * 4 * 6);
  CHECK(*device_bytes_needed({4096, 4096, 4096}, 4, true) == 8ull * 4096 * 4096 * 4);  // 8 matrices of 64 MiB
  CHECK_FALSE(device_bytes_needed({INT_MAX, INT_MAX, INT_MAX}, 4, true).has_value());
}

TEST_CASE("error bound: grows with K and the unit roundoff") {
  const double u = fp32_unit_roundoff;
  CHECK(u == std::ldexp(1.0, -24));
  CHECK(gamma_n(10, u) == doctest::Approx(10 * u / (1 - 10 * u)));
  CHECK(comparison_scale(4096, u) > comparison_scale(64, u));
  CHECK(comparison_scale(64, u) > comparison_scale(1, u));
  CHECK(comparison_scale(1000, tensor_core_fp32_unit_roundoff) > comparison_scale(1000, u));
  // Two results may differ by twice one result's bound (plus the bound matrix's own rounding).
  CHECK(comparison_scale(100, u) == doctest::Approx(2 * exact_reference_scale(100, u)).epsilon(1e-4));
  CHECK(comparison_scale(100, u) > 2 * exact_reference_scale(100, u));
  // The size of it: K = 4096 in FP32 allows about 4.9e-4 of sum |a||b|.
  CHECK(comparison_scale(4096, u) == doctest::Approx(2 * 4098 * u).epsilon(1e-3));
  // Once K·u reaches 1 the bound says nothing.
  CHECK(std::isinf(gamma_n(1 << 24, u)));
}

TEST_CASE("per-element tolerance and test") {
  const double scale = 1e-6;
  CHECK(element_tolerance(scale, 2.0f, 0.0f, 10.0f, 5.0f) == doctest::Approx(2e-5));
  CHECK(element_tolerance(scale, 2.0f, -0.5f, 10.0f, 4.0f) == doctest::Approx(2.2e-5));
  // beta == 0: C was not read, so a NaN there does not poison the tolerance.
  CHECK(element_tolerance(scale, 1.0f, 0.0f, 10.0f, std::nanf("")) == doctest::Approx(1e-5));
  CHECK(within_tolerance(1.0, 1.0, 0.0));
  CHECK(within_tolerance(1.0 + 1e-6, 1.0, 2e-6));
  CHECK_FALSE(within_tolerance(1.0 + 3e-6, 1.0, 2e-6));
  CHECK_FALSE(within_tolerance(1.0 - 3e-6, 1.0, 2e-6));
  const double inf = std::numeric_limits<double>::infinity();
  CHECK_FALSE(within_tolerance(std::nan(""), 1.0, 1e9));
  CHECK_FALSE(within_tolerance(inf, 1.0, inf));
  CHECK_FALSE(within_tolerance(-inf, 1.0, inf));
  CHECK_FALSE(within_tolerance(1.0, std::nan(""), 1e9));
}

TEST_CASE("CPU double reference GEMM") {
  // A = [1 2 3; 4 5 6] (2×3), B = [1 -1; 0 2; -2 0.5] (3×2): A·B = [-5 4.5; -8 9].
  const std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {1, -1, 0, 2, -2, 0.5f}, c = {1, 2, 3, 4};
  const auto r = testing::reference_gemm({2, 2, 3}, 2.0f, a, b, -1.0f, c);
  CHECK(r.c == std::vector<double>{-11, 7, -19, 14});
  CHECK(r.bound == std::vector<double>{7, 6.5, 16, 17});
  // beta == 0: C is not read.
  const std::vector<float> nan_c(4, std::nanf(""));
  const auto r0 = testing::reference_gemm({2, 2, 3}, 1.0f, a, b, 0.0f, nan_c);
  CHECK(r0.c == std::vector<double>{-5, 4.5, -8, 9});
}

TEST_CASE("grouped tile order visits every tile once") {
  for (const auto& [tiles_m, tiles_n, group] :
       std::vector<std::array<int, 3>>{{1, 1, 8}, {7, 5, 8}, {17, 9, 8}, {64, 32, 16}, {3, 40, 2}}) {
    CAPTURE(tiles_m);
    CAPTURE(tiles_n);
    CAPTURE(group);
    std::vector<int> seen(std::size_t(tiles_m) * tiles_n, 0);
    for (long long t = 0; t < (long long)tiles_m * tiles_n; ++t) {
      const TileIndex tile = grouped_tile(t, tiles_m, tiles_n, group);
      REQUIRE(tile.row >= 0);
      REQUIRE(tile.row < tiles_m);
      REQUIRE(tile.col >= 0);
      REQUIRE(tile.col < tiles_n);
      ++seen[std::size_t(tile.row) * tiles_n + tile.col];
    }
    for (int count : seen) CHECK(count == 1);
  }
  // Inside a group, consecutive tiles go down a column first: tiles 0..7 share column 0.
  CHECK(grouped_tile(7, 64, 32, 8).col == 0);
  CHECK(grouped_tile(7, 64, 32, 8).row == 7);
  CHECK(grouped_tile(8, 64, 32, 8).col == 1);
}

TEST_CASE("grouped tile order: the picture in kernel_utils.cuh") {
  // 5 × 3 tiles in groups of 2 rows; expected[row][col] is the block that computes the tile.
  const int expected[5][3] = {{0, 2, 4}, {1, 3, 5}, {6, 8, 10}, {7, 9, 11}, {12, 13, 14}};
  for (int block = 0; block < 15; ++block) {
    const TileIndex t = grouped_tile(block, 5, 3, 2);
    CHECK(expected[t.row][t.col] == block);
  }
  // group_rows = 1 is row-major order, the order of block_tile_origin.
  for (int block = 0; block < 12; ++block) {
    CHECK(grouped_tile(block, 4, 3, 1).row == block / 3);
    CHECK(grouped_tile(block, 4, 3, 1).col == block % 3);
  }
}

// Step 08's shared-memory swizzle (swizzle.hpp), for every row width it can meet: A tiles of 16 to
// 64 halves (2 to 8 chunks) and B tiles of 64 to 256 halves (8 to 32 chunks).
TEST_CASE("swizzle: a permutation of each row's chunks, conflict-free ldmatrix and cp.async") {
  for (const int chunks : {2, 4, 8, 16, 32}) {
    CAPTURE(chunks);
    for (int row = 0; row < 64; ++row) {
      CAPTURE(row);
      std::set<int> physical;
      for (int c = 0; c < chunks; ++c) {
        const int p = swizzled_chunk(row, c, chunks);
        CHECK(p >= 0);
        CHECK(p < chunks);
        physical.insert(p);
      }
      CHECK(physical.size() == std::size_t(chunks));  // a permutation of the row's chunks
      // It depends on the row only through row % 8: step 08 computes one lane's ldmatrix offsets
      // once and reaches fragments 16 rows further down by a constant.
      for (int c = 0; c < chunks; ++c) CHECK(swizzled_chunk(row + 8, c, chunks) == swizzled_chunk(row, c, chunks));
    }
    // ldmatrix: one phase reads logical chunk c of 8 consecutive rows (a fragment's rows start at a
    // multiple of 8): 8 different bank groups.
    for (int first_row = 0; first_row < 64; first_row += 8)
      for (int c = 0; c < chunks; ++c) {
        std::set<int> groups;
        for (int r = first_row; r < first_row + 8; ++r) groups.insert(swizzled_bank_group(r, c, chunks));
        CHECK_MESSAGE(groups.size() == 8u, "ldmatrix rows " << first_row << "..+7, chunk " << c);
      }
    // cp.async: 8 consecutive threads copy 8 consecutive chunks of the tile in row-major order.
    for (int first = 0; first < 64 * chunks; first += 8) {
      std::set<int> groups;
      for (int e = first; e < first + 8; ++e) groups.insert(swizzled_bank_group(e / chunks, e % chunks, chunks));
      CHECK_MESSAGE(groups.size() == 8u, "copies " << first << "..+7");
    }
  }
  // Without the swizzle (physical = logical) ldmatrix would conflict: rows of 128 bytes all start in
  // bank group 0, so a chunk column lies in one group.
  std::set<int> unswizzled;
  for (int r = 0; r < 8; ++r) unswizzled.insert((r * 8 + 3) % swizzle_bank_groups);
  CHECK(unswizzled.size() == 1u);
}

TEST_CASE("quantile: linear between the closest ranks, the median of an even count the mean of the middle two") {
  // Sorted: 1 2 3 4 5 6 7 8 9 10 11; rank (n - 1)·p falls on a value at p = 0, 0.1, 0.5, 0.9, 1.
  const std::vector<double> eleven = {11, 3, 7, 1, 9, 5, 2, 10, 4, 8, 6};
  CHECK(quantile(eleven, 0.0) == 1);
  CHECK(quantile(eleven, 0.1) == 2);
  CHECK(quantile(eleven, 0.5) == 6);
  CHECK(quantile(eleven, 0.9) == 10);
  CHECK(quantile(eleven, 1.0) == 11);
  // Twenty rounds, the harness's default: rank 1.9 for p10 (between the 2nd and 3rd smallest), 17.1
  // for p90, 9.5 for the median, which is the mean of the 10th and 11th, as the harness's median().
  std::vector<double> twenty;
  for (int i = 20; i >= 1; --i) twenty.push_back(0.1 * i);
  CHECK(quantile(twenty, 0.1) == doctest::Approx(0.29));
  CHECK(quantile(twenty, 0.9) == doctest::Approx(1.81));
  CHECK(quantile(twenty, 0.5) == doctest::Approx(0.5 * (1.0 + 1.1)));
  const Spread spread = spread_of(twenty);
  CHECK(spread.p10 == doctest::Approx(0.29));
  CHECK(spread.p90 == doctest::Approx(1.81));
  // One round (a --time-cap that fits only one): every quantile is that round; two: a straight line.
  CHECK(spread_of({0.25}).p10 == 0.25);
  CHECK(spread_of({0.25}).p90 == 0.25);
  CHECK(quantile({1.0, 3.0}, 0.1) == doctest::Approx(1.2));
  CHECK(quantile({1.0, 3.0}, 0.9) == doctest::Approx(2.8));
  // The input is taken by value: the caller's order is kept.
  CHECK(eleven.front() == 11);
}

TEST_CASE("quantile refuses no values and a p outside [0, 1]") {
  CHECK_THROWS_AS(quantile({}, 0.5), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0}, -0.1), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0}, 1.5), std::invalid_argument);
  CHECK_THROWS_AS(quantile({1.0}, std::nan("")), std::invalid_argument);
}
