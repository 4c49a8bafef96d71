// main() of every step executable: it runs the step registered under the executable's name
// (WORKLOG_STEP_NAME, set by add_worklog_step); the command line, the check against cuBLAS and the
// timing are the harness's (run_step.hpp).
#include "run_step.hpp"

int main(int argc, char** argv) { return worklog::run_registered_step(WORKLOG_STEP_NAME, argc, argv); }
