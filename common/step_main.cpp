// main() of every step executable: the step's kernel.cu registered exactly one step (step.hpp);
// the command line, the check against cuBLAS and the timing are the harness's (harness.hpp).
#include "harness.hpp"

int main(int argc, char** argv) { return worklog::run_registered_step(argc, argv); }
