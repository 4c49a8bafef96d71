// 06_multiwarp_wmma: the executable. The kernel is in kernel.cu; the command line, the check against cuBLAS
// and the timing are the harness's (common/harness.hpp).
#include "harness.hpp"
#include "steps.hpp"

int main(int argc, char** argv) { return worklog::run_step(argc, argv, worklog::steps::multiwarp_wmma); }
