// Step 08 — below WMMA: mma.sync, ldmatrix and a swizzled shared-memory layout.
//
// Adds to 07: the warps program the tensor cores directly (mma.sync m16n8k16, fragments loaded by
// ldmatrix.x4 from XOR-swizzled dense rows), load the next k-step's fragments while this one
// multiplies, and write C straight from the accumulators.
// Why it helps: the tensor cores no longer wait for shared memory at each slice's start, and the
// swizzle costs no padding: the inner loop is nothing but ldmatrix and mma.sync.
//
// Run: build/bin/08_mma_ldmatrix --m 4096 --n 4096 --k 4096
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include "mma_ldmatrix_gemm.cuh"
#include "step.hpp"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// One knob a line; README.md measures the choices (K slices of 64 against 32, 4 stages against 3).
// EXCERPT BEGIN config
struct Config {
  static constexpr int block_tile_m = 128;  // rows of C per block: 2 warp tiles high
  static constexpr int block_tile_n = 256;  // columns of C per block: 4 warp tiles wide, 8 warps in all
  static constexpr int block_tile_k = 64;   // K per stage: 48 KiB a stage, half the barriers of slices of 32
  static constexpr int warp_tile_m = 64;    // a warp's rows: 4 A fragments of 16
  static constexpr int warp_tile_n = 64;    // a warp's columns: 8 B fragments; 128 accumulator floats per thread
  static constexpr int stages = 4;          // pipeline buffers: 192 KiB of shared memory, 3 slices in flight
  static constexpr int group_rows = 8;      // grouped block order: tile rows per group (1 = row-major)
  static constexpr bool swizzled = true;    // chunks XOR-swizzled in dense rows; false: 07's 16-byte padding
  static constexpr int fragment_sets = 2;   // fragments of k-step s+1 load while s multiplies; 1: load, then use
};
// EXCERPT END config
// The element-wise path (rows not 16-byte aligned) keeps slices of 32: with 64 its loads spill
// registers (ptxas reports spill stores).
struct UnalignedConfig : Config {
  static constexpr int block_tile_k = 32;
};
// The tile for small problems (every side a few hundred), the variant small_tile: 32 × 32 blocks of
// four 16 × 16 warps, so that a 512² C is 256 blocks rather than 8 and each SM's share of the loads
// goes out at once; 32 KiB of shared memory (no opt-in, several blocks an SM). Its slices of 64
// serve the element-wise path too (two copies of each operand a thread: no spill).
struct SmallTile : Config {
  static constexpr int block_tile_m = 32, block_tile_n = 32;  // 4 warps: one block's work is short
  static constexpr int warp_tile_m = 16, warp_tile_n = 16;    // 1 A and 2 B fragments a k-step
  static constexpr int block_tile_k = 64;                     // 8 KiB a stage, half the barriers of 32
  static constexpr int stages = 4;                            // 3 slices in flight: K of a few hundred is ~8 slices
};

// ---- Launch -----------------------------------------------------------------------------------------

// The kernel of common/mma_ldmatrix_gemm.cuh at this step's configurations: cp.async where every
// row of A and B starts on a 16-byte boundary; element-wise loads otherwise, in UnalignedConfig
// (variants change the aligned path only; the small tile has its own).
template <class Variant, class Unaligned = UnalignedConfig>
void launch_config(const GemmProblem<__half>& p, cudaStream_t stream) {
  mma_ldmatrix::launch<Variant, Unaligned>(p, stream);
}

// Variants that change one knob (--variant NAME; README.md tabulates them, the GPU tests run them all).
struct K32 : Config {
  static constexpr int block_tile_k = 32;
};
struct Stages3 : Config {
  static constexpr int stages = 3;
};
struct RowMajor : Config {
  static constexpr int group_rows = 1;
};
// Variants that leave one technique out (README.md: what each contributes).
struct Padded : Config {
  static constexpr bool swizzled = false;
};
struct SingleFragmentSet : Config {
  static constexpr int fragment_sets = 1;
};
struct Tile128x128 : Config {  // 07's block: 4 warps, K slices of 32, 4 stages (64 KiB: two blocks per SM)
  static constexpr int block_tile_n = 128, block_tile_k = 32;
};

}  // namespace

WORKLOG_REGISTER_STEP(
    Step<__half>{"08_mma_ldmatrix", launch_config<Config>}
        .adds("mma.sync + ldmatrix, swizzled smem")
        .reuses_tile(Config::block_tile_m, Config::block_tile_n)
        .needs_compute_capability(80)
        .variant("k32", "K slices of 32, 4 stages (one barrier per 2 k-steps instead of 4)", launch_config<K32>)
        .variant("stages3", "3 pipeline stages (144 KiB)", launch_config<Stages3>)
        .variant("row_major", "row-major block order instead of grouped", launch_config<RowMajor>)
        .variant("padded", "rows padded by 16 bytes instead of swizzled", launch_config<Padded>)
        .variant("single_fragment_set", "one set of fragments: each k-step loaded, then multiplied",
                 launch_config<SingleFragmentSet>)
        .variant("tile_128x128", "07's block: 128 × 128, 4 warps, K slices of 32 (two blocks per SM)",
                 launch_config<Tile128x128>, Tile128x128::block_tile_m, Tile128x128::block_tile_n)
        .variant("small_tile", "32 × 32 blocks of 4 warps, K slices of 64, 4 stages: the tile for small problems",
                 launch_config<SmallTile, SmallTile>, SmallTile::block_tile_m, SmallTile::block_tile_n))

}  // namespace worklog
