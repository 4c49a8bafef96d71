// The command line shared by every step executable, and the exit codes they return.
// Host-only: parsing needs no GPU, so bad arguments are reported (and tested) on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "exit_codes.hpp"  // ExitCode, documented in README.md and --help
#include "gemm_math.hpp"

namespace worklog {

// What C holds before the product: random values, or NaN everywhere (with beta = 0 a correct
// kernel never reads C, so no NaN may reach the result).
enum class InitialC { random, nan };

// --profile: what runs, once, between cudaProfilerStart and cudaProfilerStop (for
// `ncu --profile-from-start off`, which then sees that one kernel and nothing else).
enum class ProfileTarget { none, step, cublas };

// --timing: the state of the caches in which each timed run starts (harness_timing.hpp). cold: L2 is
// flushed before every timed run, as a model meets a layer's weights (read from DRAM once per
// token); warm: the operands stay in L2 from the run before, as when one GEMM runs over and over.
enum class TimingMode { cold, warm };
const char* timing_mode_name(TimingMode mode);  // "cold", "warm"

struct Options {
  Shape shape{4096, 4096, 4096};
  Strides strides;  // --lda, --ldb, --ldc; 0: packed (K, N, N)
  float alpha = 1.0f;
  float beta = 0.0f;
  InitialC initial_c = InitialC::random;
  int warmup = 5;
  int iters = 20;
  std::uint64_t seed = 2024;
  bool check = true;
  bool cublas = true;    // false: no cuBLAS at all (no check, no baseline), for the sanitizer runs
  std::string csv_path;  // empty: no CSV row
  int device = 0;
  std::string variant;  // empty: the step itself; else one of its registered variants (step.hpp)
  // --shapes: run every shape of this file (read_shape_file) in one process instead of `shape`,
  // each checked, timed and reported as a run of its own.
  std::string shapes_path;
  // --time-cap: when > 0, fewer timed rounds than `iters` where the rounds would take longer than
  // this many milliseconds (at least one round; one more, untimed by the median, measures a round).
  double time_cap_ms = 0;
  TimingMode timing = TimingMode::cold;  // --timing
  // --dram-fraction: measure this GPU's DRAM read rate once in the process (a read of 4 GiB) and
  // report each run's least bytes (A and B read once, C written once) as a fraction of it.
  bool dram_fraction = false;
  ProfileTarget profile = ProfileTarget::none;  // not none: no check, no timing, no CSV row
  int profile_launches = 1;                     // --profile-launches: launches in the profiled range
  bool help = false;
  // --list-variants: print the step's registration as JSON (step.hpp: registration_json) and exit,
  // touching no GPU, so that the tooling and CI can ask a built step what it registered.
  bool list_variants = false;
};

// Thrown for a bad command line; what() is the one-line message, without the program name.
struct UsageError {
  std::string message;
};

// Parses argv[1..argc-1]. Flags take their value as the next word or after '=' (--m 512, --m=512).
// Throws UsageError on anything malformed.
Options parse_options(const std::vector<std::string>& args);

std::string usage_text(const std::string& program);

// `text` as a JSON string, quotes included (--list-variants prints the registration as JSON): quotes,
// backslashes and control characters escaped; other bytes, UTF-8 such as the sources' "×", as they
// are, which JSON allows.
std::string json_quoted(const std::string& text);

// Throws UsageError, "<where>--lda must be at least K (…)", when the strides do not fit the shape.
void check_strides(Shape shape, Strides strides, const std::string& where);

// The shapes of a --shapes file: one MxNxK a line (e.g. 4096x4096x4097); blank lines and text after
// '#' are ignored. `name` names the file in the messages. Throws UsageError, "<name>:<line>: …",
// for a malformed line, or "<name>: no shapes listed" for none.
std::vector<Shape> parse_shape_list(const std::string& text, const std::string& name);
// The same, read from the file at `path`; a file that cannot be read is a UsageError too.
std::vector<Shape> read_shape_file(const std::string& path);

}  // namespace worklog
