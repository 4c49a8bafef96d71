// The whole program behind each step executable: parse the command line, pick the device, check
// the step against cuBLAS, time both, print and append the CSV row.
#pragma once

#include "cli.hpp"
#include "step.hpp"

namespace worklog {

// Runs `step` (a step or one of its variants) with these options; returns the exit code
// (exit_codes.hpp).
template <class Input>
int run_step(const Options& options, const Step<Input>& step);
// main() of a step executable (step_main.cpp): run_step() on the registered step called `name`.
int run_registered_step(const char* name, int argc, char** argv);

}  // namespace worklog
