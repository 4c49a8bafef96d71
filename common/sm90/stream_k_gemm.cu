// The library's stream-K GEMM (stream_k_gemm.hpp): stream_k_kernel.cuh at 128 × 256 block tiles in
// clusters of two, the configuration step 12 teaches (12_stream_k/kernel.cu), compiled once here for
// every step that hands problems to it.
#include "general_gemm.hpp"
#include "sm90/stream_k_gemm.hpp"
#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"

namespace worklog::stream_k {
namespace {

// One knob a line; 11's and 12's READMEs say how each value was chosen.
struct Config {
  static constexpr int block_tile_m = 128;        // rows of C per block: one 64-row consumer warpgroup per wgmma_m
  static constexpr int block_tile_n = 256;        // columns of C per block: the n of the widest wgmma, 256
  static constexpr int block_tile_k = 64;         // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int stages = 4;                // 4 × 48 KiB: three slices in flight while one is multiplied
  static constexpr int group_rows = 8;            // grouped tile order: tile rows per group
  static constexpr int producer_registers = 40;   // after setmaxnreg: the copying thread needs few...
  static constexpr int consumer_registers = 232;  // ...the consumers' 128 accumulators many (Layout checks the sum)
  static constexpr int cluster_size = 2;          // blocks on vertically adjacent tiles share each B slice
  static constexpr int c_buffers = 2;             // staging buffers per consumer: one fills while one drains
  using rule = LastWaveInParts;                   // split_k_schedule.cuh: the last wave's tiles in aligned k-parts
  static constexpr int fixup_slices = 16;         // splitting costs a unit about this many k-slices
  using fixup = SharedAbove<2>;                   // tiles split among more than 2 units share their fixup
};

}  // namespace

void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!tma_path_possible(p)) return general::launch(p, stream);
  launch_tma<Config>(p, stream, "stream_k::launch");
}

std::size_t workspace_bytes(Shape shape, Strides strides) {
  return tma_strides_possible(shape, strides) ? tma_workspace_bytes<Config>(shape) : 0;
}

int cluster_size() { return Config::cluster_size; }
int fixup_alone_units() { return Config::fixup::alone_units; }
Plan plan_on(Shape shape, int sms) { return plan_shape<Config>(shape.m, shape.n, shape.k, sms / Config::cluster_size); }

}  // namespace worklog::stream_k
