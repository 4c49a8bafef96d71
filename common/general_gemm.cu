// The general kernel (general_gemm.hpp): C = alpha·A·B + beta·C for any shape, any strides, any
// alignment: the mma.sync kernel (mma_ldmatrix_gemm.cuh) at step 08's configurations, compiled once
// here for the Hopper steps, which hand it what TMA cannot describe (rows or bases off 16 bytes) and,
// with 32 × 32 tiles, small problems.
#include "general_gemm.hpp"
#include "mma_ldmatrix_gemm.cuh"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// 08's: one knob a line (08's README measures the choices).
struct Config {
  static constexpr int block_tile_m = 128;  // rows of C per block: 2 warp tiles high
  static constexpr int block_tile_n = 256;  // columns of C per block: 4 warp tiles wide, 8 warps in all
  static constexpr int block_tile_k = 64;   // K per stage: 48 KiB a stage, half the barriers of slices of 32
  static constexpr int warp_tile_m = 64;    // a warp's rows: 4 A fragments of 16
  static constexpr int warp_tile_n = 64;    // a warp's columns: 8 B fragments; 128 accumulator floats per thread
  static constexpr int stages = 4;          // pipeline buffers: 192 KiB of shared memory, 3 slices in flight
  static constexpr int group_rows = 8;      // grouped block order: tile rows per group (1 = row-major)
  static constexpr bool swizzled = true;    // chunks XOR-swizzled in dense rows
  static constexpr int fragment_sets = 2;   // fragments of k-step s+1 load while s multiplies
};
// The element-wise path (rows not 16-byte aligned) keeps slices of 32: with 64 its loads spill
// registers (ptxas reports spill stores).
struct UnalignedConfig : Config {
  static constexpr int block_tile_k = 32;
};
// Small problems (every side a few hundred): 32 × 32 blocks of four 16 × 16 warps, so that a 512² C
// is 256 blocks rather than 8; 32 KiB of shared memory (no opt-in, several blocks an SM). Its slices
// of 64 serve the element-wise path too (two copies of each operand a thread: no spill).
struct SmallTile : Config {
  static constexpr int block_tile_m = 32, block_tile_n = 32;  // 4 warps: one block's work is short
  static constexpr int warp_tile_m = 16, warp_tile_n = 16;    // 1 A and 2 B fragments a k-step
  static constexpr int block_tile_k = 64;                     // 8 KiB a stage, half the barriers of 32
  static constexpr int stages = 4;                            // 3 slices in flight: K of a few hundred is ~8 slices
};

// ---- Launch -----------------------------------------------------------------------------------------

}  // namespace

void general::launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  mma_ldmatrix::launch<Config, UnalignedConfig>(p, stream);
}
void general::launch_small_tile(const GemmProblem<__half>& p, cudaStream_t stream) {
  mma_ldmatrix::launch<SmallTile, SmallTile>(p, stream);
}

}  // namespace worklog
