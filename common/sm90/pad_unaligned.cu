// The library's padding (pad_unaligned.hpp): pad_unaligned.cuh at step 14's configuration (PadConfig),
// compiled once for the steps that pad problems for launchers of their own (14 and 15).
#include "sm90/pad_unaligned.cuh"
#include "sm90/pad_unaligned.hpp"

namespace worklog {

void pad_unaligned::launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_padded<PadConfig>(p, stream); }
std::size_t pad_unaligned::workspace_bytes(Shape s, Strides t) { return padded_workspace_bytes<PadConfig>(s, t); }
void pad_unaligned::launch_with(const GemmProblem<__half>& p, cudaStream_t stream, Launcher<__half> solve,
                                WorkspaceSize solve_workspace) {
  launch_padded_with<PadConfig>(p, stream, solve, solve_workspace);
}
std::size_t pad_unaligned::workspace_bytes_with(Shape s, Strides t, WorkspaceSize solve_workspace) {
  return padded_workspace_bytes_with<PadConfig>(s, t, solve_workspace);
}

}  // namespace worklog
