// The exit codes of every program of the worklog: the step executables, the drivers of plots/
// (run_worklog.py, ncu_profile.py) and the lab kit (lab/lab.py). This header is their one
// definition: the C++ programs include it, and the Python tools read it (common/exit_codes.py
// parses the enum below), so a code means the same thing everywhere. host_tests checks that the
// parser and this header agree, and the Python tests check that no tool defines a code of its own.
#pragma once

namespace worklog {

// One enumerator a line, `name = value,` then a comment: common/exit_codes.py reads this form.
enum ExitCode : int {
  exit_ok = 0,                 // done
  exit_check_failed = 1,       // a check failed: a step's result, a driver's step, the lab kit's markers or leaks
  exit_bad_argument = 2,       // malformed command line, unknown --device or --variant, unwritable output file
  exit_does_not_fit = 3,       // the matrices need more device memory than is free
  exit_unsupported_gpu = 4,    // the GPU lacks what the step needs (tensor cores, Hopper)
  exit_cuda_error = 5,         // a CUDA or cuBLAS call failed at run time (a kernel's watchdog trap included)
  exit_tool_missing = 6,       // a tool the driver needs is not installed (ncu for the profile)
  exit_no_counter_access = 7,  // ncu may not read the GPU's performance counters (ERR_NVGPUCTRPERM)
  exit_cannot_grade = 8,       // lab.py grade: this machine cannot grade (build or test tools missing)
  exit_no_device = 77,         // no CUDA device (77 is what CTest is told means "skipped")
};

}  // namespace worklog
