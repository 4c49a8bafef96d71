#include "cli.hpp"

#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>

namespace worklog {
namespace {

[[noreturn]] void fail(const std::string& message) { throw UsageError{message}; }

// A whole-word integer in [lowest, INT_MAX]; anything else is named in the error.
int parse_int(const std::string& flag, const std::string& text, int lowest) {
  const std::string got = " (got '" + text + "')";
  const std::string wanted = lowest >= 1 ? "a positive integer" : "a non-negative integer";
  if (text.empty()) fail(flag + " expects " + wanted + got);
  errno = 0;
  char* end = nullptr;
  const long long value = std::strtoll(text.c_str(), &end, 10);
  if (*end != '\0' || end == text.c_str()) fail(flag + " expects " + wanted + got);
  if (errno == ERANGE || value > INT_MAX) fail(flag + " must be at most " + std::to_string(INT_MAX) + got);
  if (value < lowest) fail(flag + " must be at least " + std::to_string(lowest) + got);
  return int(value);
}

float parse_float(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') fail(flag + " expects a number (got '" + text + "')");
  if (errno == ERANGE || !std::isfinite(value) || std::fabs(value) > 3.4e38)
    fail(flag + " must be a finite FP32 value (got '" + text + "')");
  return float(value);
}

std::uint64_t parse_seed(const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long value = std::strtoull(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text[0] == '-')
    fail("--seed expects a non-negative integer (got '" + text + "')");
  if (errno == ERANGE) fail("--seed must fit in 64 bits (got '" + text + "')");
  return value;
}

// A positive number of milliseconds.
double parse_ms(const std::string& flag, const std::string& text) {
  errno = 0;
  char* end = nullptr;
  const double value = std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0') fail(flag + " expects a number of milliseconds (got '" + text + "')");
  if (errno == ERANGE || !std::isfinite(value) || value <= 0)
    fail(flag + " must be positive and finite (got '" + text + "')");
  return value;
}

// One of two words, as the value it names; anything else is named in the error ("expects 'a' or 'b'").
template <class Value>
Value parse_choice(const std::string& flag, const std::string& text, const char* first, Value first_value,
                   const char* second, Value second_value) {
  if (text == first) return first_value;
  if (text == second) return second_value;
  fail(flag + " expects '" + first + "' or '" + second + "' (got '" + text + "')");
}

}  // namespace

void check_strides(Shape shape, Strides strides, const std::string& where) {
  if (const char* problem = strides_problem(shape, strides)) {
    const Strides r = resolve_strides(shape, strides);
    fail(where + problem + " (lda " + std::to_string(r.lda) + ", ldb " + std::to_string(r.ldb) + ", ldc " +
         std::to_string(r.ldc) + " for " + std::to_string(shape.m) + "x" + std::to_string(shape.n) + "x" +
         std::to_string(shape.k) + ")");
  }
}

Options parse_options(const std::vector<std::string>& args) {
  Options o;
  using Setter = std::function<void(const std::string& flag, const std::string& value)>;
  bool shape_given = false;  // --m, --n or --k: not with --shapes
  const std::map<std::string, Setter> valued = {
      {"--m",
       [&](auto& f, auto& v) {
         o.shape.m = parse_int(f, v, 1);
         shape_given = true;
       }},
      {"--n",
       [&](auto& f, auto& v) {
         o.shape.n = parse_int(f, v, 1);
         shape_given = true;
       }},
      {"--k",
       [&](auto& f, auto& v) {
         o.shape.k = parse_int(f, v, 1);
         shape_given = true;
       }},
      {"--lda", [&](auto& f, auto& v) { o.strides.lda = parse_int(f, v, 1); }},
      {"--ldb", [&](auto& f, auto& v) { o.strides.ldb = parse_int(f, v, 1); }},
      {"--ldc", [&](auto& f, auto& v) { o.strides.ldc = parse_int(f, v, 1); }},
      {"--alpha", [&](auto& f, auto& v) { o.alpha = parse_float(f, v); }},
      {"--beta", [&](auto& f, auto& v) { o.beta = parse_float(f, v); }},
      {"--warmup", [&](auto& f, auto& v) { o.warmup = parse_int(f, v, 0); }},
      {"--iters", [&](auto& f, auto& v) { o.iters = parse_int(f, v, 1); }},
      {"--seed", [&](auto&, auto& v) { o.seed = parse_seed(v); }},
      {"--device", [&](auto& f, auto& v) { o.device = parse_int(f, v, 0); }},
      {"--variant",
       [&](auto& f, auto& v) {
         if (v.empty()) fail(f + " expects a variant name");
         o.variant = v;
       }},
      {"--initial-c",
       [&](auto& f, auto& v) { o.initial_c = parse_choice(f, v, "random", InitialC::random, "nan", InitialC::nan); }},
      {"--csv",
       [&](auto& f, auto& v) {
         if (v.empty()) fail(f + " expects a file name");
         o.csv_path = v;
       }},
      {"--shapes",
       [&](auto& f, auto& v) {
         if (v.empty()) fail(f + " expects a file name");
         o.shapes_path = v;
       }},
      {"--time-cap", [&](auto& f, auto& v) { o.time_cap_ms = parse_ms(f, v); }},
      {"--profile-launches", [&](auto& f, auto& v) { o.profile_launches = parse_int(f, v, 1); }},
      {"--timing",
       [&](auto& f, auto& v) { o.timing = parse_choice(f, v, "cold", TimingMode::cold, "warm", TimingMode::warm); }},
      {"--profile",
       [&](auto& f, auto& v) {
         o.profile = parse_choice(f, v, "step", ProfileTarget::step, "cublas", ProfileTarget::cublas);
       }},
  };
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& word = args[i];
    if (word == "--help" || word == "-h") {
      o.help = true;
      continue;
    }
    if (word == "--list-variants") {
      o.list_variants = true;
      continue;
    }
    if (word == "--no-check") {
      o.check = false;
      continue;
    }
    if (word == "--dram-fraction") {
      o.dram_fraction = true;
      continue;
    }
    if (word == "--no-cublas") {
      o.check = false;
      o.cublas = false;
      continue;
    }
    const std::size_t eq = word.find('=');
    const std::string flag = word.substr(0, eq);
    const auto it = valued.find(flag);
    if (it == valued.end()) fail("unknown argument '" + word + "' (see --help)");
    std::string value;
    if (eq != std::string::npos) {
      value = word.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) fail(flag + " needs a value");
      value = args[++i];
    }
    it->second(flag, value);
  }
  // NaN times a non-zero beta is NaN everywhere, in cuBLAS's result too: nothing left to check.
  if (o.initial_c == InitialC::nan && o.beta != 0.0f) fail("--initial-c nan needs --beta 0");
  if (!o.shapes_path.empty() && shape_given) fail("--shapes cannot be combined with --m, --n or --k");
  // With --shapes, each shape of the file is checked against the strides when the file is read.
  if (o.shapes_path.empty()) check_strides(o.shape, o.strides, "");
  if (o.profile != ProfileTarget::none) {
    if (!o.shapes_path.empty()) fail("--profile cannot be combined with --shapes (a profile run launches one shape)");
    // A profile run launches once and measures nothing itself: a CSV row would have no numbers.
    if (!o.csv_path.empty()) fail("--profile cannot be combined with --csv (a profile run times nothing)");
    if (o.profile == ProfileTarget::cublas && !o.cublas) fail("--profile cublas cannot be combined with --no-cublas");
    if (o.dram_fraction) fail("--profile cannot be combined with --dram-fraction (a profile run times nothing)");
    o.check = false;
  }
  return o;
}

std::string usage_text(const std::string& program) {
  return "usage: " + program + R"( [options]
Runs C = alpha*A*B + beta*C (row-major A: MxK, B: KxN, C: MxN) with this step's kernel and with
cuBLAS on the same random inputs, checks the result, and times both.
  --m M, --n N, --k K   matrix sizes, each 1..2147483647 (default 4096)
  --lda L, --ldb L, --ldc L
                        leading dimensions of A, B and C in elements (default packed: K, N, N;
                        at least that): the matrices are allocated with them, the gaps between
                        rows hold NaN (A, B) or values that must stay untouched (C)
  --alpha A, --beta B   scalars (default 1 and 0; beta 0 means C is not read)
  --warmup W            untimed runs before timing (default 5)
  --iters I             timed runs; the median is reported (default 20, at least 1)
  --seed S              seed of the random inputs (default 2024)
  --initial-c C         what C holds before the product: random (default) or nan, which
                        needs beta 0 and shows that C is never read
  --no-check            skip the comparison with cuBLAS
  --no-cublas           run no cuBLAS at all (implies --no-check): only this step's kernel runs,
                        as the compute-sanitizer tests want
  --csv FILE            append one result row to FILE (header written when FILE is new; FILE is
                        created only when the row is written); its columns bad_count,
                        first_bad_row, first_bad_col, expected, obtained are the check's verdict
                        for programs (empty when unchecked; the last four empty when it passed),
                        and the columns after them say how the row was timed
  --shapes FILE         run every shape listed in FILE (one MxNxK a line, # comments) in this
                        process, instead of --m --n --k: each is checked, timed and written to
                        --csv as a run of its own; a shape that does not fit is skipped, with a line
  --time-cap MS         time fewer rounds than --iters (at least one) when they would take more
                        than MS milliseconds, as measured by one more round first
  --timing MODE         the caches each timed run starts from: cold (default: L2 flushed before
                        every timed run, operands read from DRAM, as a model reads a layer's
                        weights once per token) or warm (operands left in L2 by the run before);
                        in both, GPU work queued before each timed run covers the host's time
                        to launch it, so only the GPU's time is measured
  --dram-fraction       measure this GPU's DRAM read rate (a read of 4 GiB) once, and report the
                        least bytes each run must move (A and B read once, C written once) over
                        its time, as a fraction of that rate (CSV: dram_fraction)
  --device D            CUDA device index (default 0)
  --variant V           run the step's variant V instead (steps that measure techniques one by
                        one register them; an unknown V lists the known ones)
  --profile WHAT        for Nsight Compute (ncu --profile-from-start off): run WHAT once, 'step'
                        (this step's kernel) or 'cublas' (cuBLAS in this step's precision),
                        between cudaProfilerStart and cudaProfilerStop, after one unprofiled
                        warm-up run; no check, no timing, no --csv
  --profile-launches N  with --profile: N launches in the profiled range, not one (default 1),
                        so that the profiler gives N samples
  --list-variants       print what this step registers, as JSON on stdout, and exit (needs no
                        GPU): its name, what it adds, its precision, and each --variant with
                        its description
  --help                this text
exit codes: 0 ok, 1 check failed, 2 bad argument, 3 does not fit in device memory,
            4 unsupported GPU, 5 CUDA/cuBLAS error, 77 no CUDA device
)";
}

std::string json_quoted(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

const char* timing_mode_name(TimingMode mode) { return mode == TimingMode::cold ? "cold" : "warm"; }

std::vector<Shape> parse_shape_list(const std::string& text, const std::string& name) {
  std::vector<Shape> shapes;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    const std::string where = name + ":" + std::to_string(number) + ": ";
    line = line.substr(0, line.find('#'));
    const std::size_t first = line.find_first_not_of(" \t\r"), last = line.find_last_not_of(" \t\r");
    if (first == std::string::npos) continue;
    const std::string shape = line.substr(first, last - first + 1);
    const std::size_t x1 = shape.find('x'), x2 = x1 == std::string::npos ? x1 : shape.find('x', x1 + 1);
    if (x2 == std::string::npos || shape.find('x', x2 + 1) != std::string::npos)
      fail(where + "expected MxNxK, three positive integers (got '" + shape + "')");
    shapes.push_back({parse_int(where + "M", shape.substr(0, x1), 1),
                      parse_int(where + "N", shape.substr(x1 + 1, x2 - x1 - 1), 1),
                      parse_int(where + "K", shape.substr(x2 + 1), 1)});
  }
  if (shapes.empty()) fail(name + ": no shapes listed");
  return shapes;
}

std::vector<Shape> read_shape_file(const std::string& path) {
  std::ifstream file(path);
  if (!file) fail("cannot open --shapes file '" + path + "': " + std::strerror(errno));
  std::ostringstream text;
  text << file.rdbuf();
  return parse_shape_list(text.str(), path);
}

}  // namespace worklog
