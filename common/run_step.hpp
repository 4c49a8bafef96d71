// The whole program behind each step executable: parse the command line, pick the device, check
// the step against cuBLAS, time both, print and append the CSV row.
#pragma once

#include "step.hpp"

namespace worklog {

// Runs `step` with this command line; returns the exit code (cli.hpp).
template <class Input>
int run_step(int argc, char** argv, const Step<Input>& step);
// main() of a step executable (step_main.cpp): run_step() on the registered step called `name`.
int run_registered_step(const char* name, int argc, char** argv);

}  // namespace worklog
