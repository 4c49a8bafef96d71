// The command lines of the programs a step ships beside its executable (13's dram_copy and chain,
// 15's calibrate): their numbers and shapes, their refusals and their errors, worded and coded the
// same way in each (exit codes: exit_codes.hpp). Host code only.
#pragma once

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <exception>
#include <optional>
#include <string>

#include "cuda_check.hpp"
#include "exit_codes.hpp"
#include "failure.hpp"

namespace worklog::tool {

// `text` as a whole number from low to high into `out`; else the one-line error on stderr and
// exit_bad_argument to return.
template <class Integer>
std::optional<int> parse_whole(const std::string& program, const std::string& flag, const char* text, long long low,
                               long long high, Integer& out) {
  char* end = nullptr;
  const long long value = std::strtoll(text, &end, 10);
  if (*text == '\0' || *end != '\0' || value < low || value > high) {
    std::fprintf(stderr, "%s: error: %s takes a whole number from %lld to %lld, got '%s'\n", program.c_str(),
                 flag.c_str(), low, high, text);
    return exit_bad_argument;
  }
  out = Integer(value);
  return std::nullopt;
}

// `text` as MxNxK, three positive whole numbers; else the one-line error and exit_bad_argument.
template <class Integer>
std::optional<int> parse_shape(const std::string& program, const std::string& flag, const char* text, Integer& m,
                               Integer& n, Integer& k) {
  long long mm = 0, nn = 0, kk = 0;
  char tail = 0;
  if (std::sscanf(text, "%lldx%lldx%lld%c", &mm, &nn, &kk, &tail) != 3 || mm < 1 || nn < 1 || kk < 1 ||
      Integer(mm) != mm || Integer(nn) != nn || Integer(kk) != kk) {
    std::fprintf(stderr, "%s: error: %s takes MxNxK with positive whole numbers, got '%s'\n", program.c_str(),
                 flag.c_str(), text);
    return exit_bad_argument;
  }
  m = Integer(mm), n = Integer(nn), k = Integer(kk);
  return std::nullopt;
}

// The error for an argument the program does not take (value_missing: a flag it takes, last, without
// its value); returns exit_bad_argument.
inline int unknown_argument(const std::string& program, const char* argument, bool value_missing) {
  std::fprintf(stderr, "%s: error: unknown argument '%s'%s (see --help)\n", program.c_str(), argument,
               value_missing ? " without its value" : "");
  return exit_bad_argument;
}

// GPU 0 must be compute capability 9.0 (sm_90a: wgmma, setmaxnreg) for `step`'s kernels; else the
// one-line error and exit_unsupported_gpu. `prop` receives GPU 0's properties either way.
inline std::optional<int> refuse_unless_hopper(const std::string& program, const char* step, cudaDeviceProp& prop) {
  CUDA_CHECK(cudaGetDeviceProperties(&prop, 0));
  if (prop.major == 9 && prop.minor == 0) return std::nullopt;
  std::fprintf(stderr, "%s: error: %s is compute capability %d.%d; %s needs 9.0 (sm_90a)\n", program.c_str(), prop.name,
               prop.major, prop.minor, step);
  return exit_unsupported_gpu;
}

// Runs body (which returns an exit code); a CUDA error or a Failure thrown from it becomes
// "<program>: error: <what>" on stderr and its exit code (exit_cuda_error, the Failure's own), as
// does any other exception of the CUDA code (a kernel no SM can hold: exit_cuda_error).
template <class Body>
int run_reporting_errors(const std::string& program, Body&& body) {
  try {
    return body();
  } catch (const CudaError& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return exit_cuda_error;
  } catch (const Failure& f) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), f.message.c_str());
    return f.exit_code;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", program.c_str(), e.what());
    return exit_cuda_error;
  }
}

}  // namespace worklog::tool
