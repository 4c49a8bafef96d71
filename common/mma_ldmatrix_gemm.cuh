// The mma.sync kernel (step 08's idea; its README teaches it): a cp.async pipeline of swizzled
// shared-memory tiles feeding mma.sync.m16n8k16 through ldmatrix, fragments double-buffered in
// registers, C written straight from the accumulators. A template over its configuration (block and
// warp tiles, stages, group_rows, swizzled, fragment_sets; Layout checks each knob by name), for any
// shape, stride and alignment: step 08 runs it, and the general kernel (general_gemm.cu) with it.
#pragma once

#include <cstdint>

#include "async_copy.cuh"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "step.hpp"
#include "swizzle.hpp"

namespace worklog::mma_ldmatrix {

using namespace mma_sync;

constexpr int chunk_halves = 8;  // one 16-byte chunk: a cp.async, an ldmatrix row
constexpr int mma_m = 16, mma_n = 8, mma_k = 16;

constexpr bool power_of_two(int x) { return x > 0 && (x & (x - 1)) == 0; }

// The shared memory of one configuration: `stages` buffers, each the A tile (block_tile_m rows of
// block_tile_k halves) followed by the B tile (block_tile_k rows of block_tile_n halves), both
// dense and swizzled (or, in the variant `padded`, with 07's 16 bytes of padding after each row).
template <class Config>
struct Layout : Config {
  using Config::block_tile_m, Config::block_tile_n, Config::block_tile_k, Config::warp_tile_m, Config::warp_tile_n,
      Config::stages;
  static_assert(warp_tile_m % mma_m == 0, "warp_tile_m must be a multiple of 16 (the m of m16n8k16)");
  static_assert(warp_tile_n % (2 * mma_n) == 0,
                "warp_tile_n must be a multiple of 16 (one ldmatrix.x4.trans loads 16 columns of B: two n8 fragments)");
  static_assert(block_tile_m % warp_tile_m == 0, "block_tile_m must be a multiple of warp_tile_m");
  static_assert(block_tile_n % warp_tile_n == 0, "block_tile_n must be a multiple of warp_tile_n");
  static_assert(block_tile_k % (2 * mma_k) == 0,
                "block_tile_k must be a multiple of 32: two k-steps of 16 alternate between two fragment sets");
  static_assert(stages >= 2, "stages must be at least 2: one slice in flight while another is multiplied");
  static_assert(Config::fragment_sets == 1 || Config::fragment_sets == 2,
                "fragment_sets must be 2 (register double buffering) or 1 (each k-step loaded, then multiplied)");

  static constexpr int warps_n = block_tile_n / warp_tile_n;
  static constexpr int warps = (block_tile_m / warp_tile_m) * warps_n;
  static constexpr int threads = warps * 32;
  static_assert(warps <= 32, "block_tile / warp_tile must give at most 32 warps");

  static constexpr int a_chunks_per_row = block_tile_k / chunk_halves;
  static constexpr int b_chunks_per_row = block_tile_n / chunk_halves;
  static_assert(power_of_two(a_chunks_per_row),
                "block_tile_k / 8 must be a power of two (the swizzle XORs chunk indices)");
  static_assert(power_of_two(b_chunks_per_row),
                "block_tile_n / 8 must be a power of two (the swizzle XORs chunk indices)");
  static constexpr int row_padding = Config::swizzled ? 0 : chunk_halves;  // halves after each shared row
  static constexpr int a_pitch = block_tile_k + row_padding;  // halves from one shared row of A to the next
  static constexpr int b_pitch = block_tile_n + row_padding;
  static constexpr int a_row_bytes = a_pitch * 2;
  static constexpr int b_row_bytes = b_pitch * 2;
  static constexpr int a_tile_bytes = block_tile_m * a_row_bytes;
  static constexpr int stage_bytes = a_tile_bytes + block_tile_k * b_row_bytes;
  static constexpr int shared_bytes = stages * stage_bytes;
  static_assert(shared_bytes <= max_shared_bytes_per_block,
                "stages * (A tile + B tile) exceeds the 227 KiB of shared memory a block may have (sm_90): "
                "lower stages, block_tile_k or the block tile");
  // Where logical chunk `chunk` of row `row` is stored in that row: swizzled, or in place when padded.
  __device__ static int chunk_slot(int row, int chunk, int chunks_per_row) {
    // LAB BEGIN physical_chunk [hard]
    return Config::swizzled ? swizzled_chunk(row, chunk, chunks_per_row) : chunk;
    // LAB END
  }

  static constexpr int a_copies = block_tile_m * a_chunks_per_row / threads;  // 16-byte copies per thread per slice
  static constexpr int b_copies = block_tile_k * b_chunks_per_row / threads;
  static_assert(
      a_copies >= 1 && a_copies * threads == block_tile_m * a_chunks_per_row,
      "block_tile_m * block_tile_k / 8 (16-byte chunks of the A tile) must be a multiple of the thread count");
  static_assert(
      b_copies >= 1 && b_copies * threads == block_tile_k * b_chunks_per_row,
      "block_tile_k * block_tile_n / 8 (16-byte chunks of the B tile) must be a multiple of the thread count");
  static_assert(threads % a_chunks_per_row == 0 && threads % b_chunks_per_row == 0,
                "the thread count must be a multiple of block_tile_k / 8 and of block_tile_n / 8 "
                "(each thread copies one chunk column of each tile)");
};

// One k-step's operands for a warp tile, in mma.sync's register layout (08's README): an A fragment
// (16 × 16, four registers of two halves) per 16 rows, a B fragment (16 × 8, two registers) per 8
// columns.
template <int fragments_m, int fragments_n>
struct Fragments {
  unsigned a[fragments_m][4];
  unsigned b[fragments_n][2];
};

// aligned: A's and B's rows start on 16-byte boundaries, tiles move by cp.async; otherwise by
// element-wise loads (async_copy.cuh).
template <class Config, bool aligned>
__global__ void __launch_bounds__(Layout<Config>::threads) mma_ldmatrix_gemm(GemmProblem<__half> p) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 800
  // Not reached: the harness refuses GPUs below sm_80 (exit code 4) before launching. The knobs that
  // only the body below reads are named here too, so that this pass does not call them unused.
  (void)Config::group_rows;
  __trap();
#else
  using L = Layout<Config>;
  constexpr int block_tile_m = L::block_tile_m, block_tile_n = L::block_tile_n, block_tile_k = L::block_tile_k;
  constexpr int warp_tile_m = L::warp_tile_m, warp_tile_n = L::warp_tile_n, stages = L::stages;
  constexpr int fragments_m = warp_tile_m / mma_m;  // A fragments (16 rows each) per warp tile
  constexpr int fragments_n = warp_tile_n / mma_n;  // B fragments (8 columns each) per warp tile
  constexpr int k_steps = block_tile_k / mma_k;     // mma k-steps per slice
  extern __shared__ __align__(128) unsigned char shared[];
  const unsigned shared_base = shared_address(shared);

  const TileOrigin block = grouped_block_tile_origin(p.m, p.n, block_tile_m, block_tile_n, L::group_rows);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int warp_row = (warp / L::warps_n) * warp_tile_m;  // this warp's tile, inside the block tile
  const int warp_col = (warp % L::warps_n) * warp_tile_n;
  // How much of the block tile lies inside the matrices: its rows inside A, its columns inside B.
  const int rows_in = int(min(p.m - block.row, (long long)block_tile_m));
  const int cols_in = int(min(p.n - block.col, (long long)block_tile_n));
  const __half* const a_panel = p.a + block.row * p.lda;  // the block's rows of A
  const __half* const b_panel = p.b + block.col;          // and its columns of B

  // Stage 1, load tiles: start the copies of K-slice `slice` into pipeline buffer `stage`. Copies
  // go in row-major order: copy e moves chunk e % chunks_per_row of row e / chunks_per_row, so a
  // warp reads whole rows (512 contiguous bytes of B), to its swizzled place in the row. The thread
  // count is a multiple of chunks_per_row, so a thread's copies j = 0, 1, … all move the same
  // chunk column, of rows first_row + j·rows_per_pass.
  constexpr int a_rows_per_pass = L::threads / L::a_chunks_per_row;
  constexpr int b_rows_per_pass = L::threads / L::b_chunks_per_row;
  const int a_first_row = threadIdx.x / L::a_chunks_per_row, a_chunk = threadIdx.x % L::a_chunks_per_row;
  const int b_first_row = threadIdx.x / L::b_chunks_per_row, b_chunk = threadIdx.x % L::b_chunks_per_row;
  const __half* const a_src = a_panel + a_first_row * (long long)p.lda + a_chunk * chunk_halves;
  const __half* const b_src = b_panel + b_first_row * (long long)p.ldb + b_chunk * chunk_halves;
  auto load_slice = [&](int slice, int stage) {
    const long long k0 = (long long)slice * block_tile_k;
    const int k_in = int(min(p.k - k0, (long long)block_tile_k));  // k of this slice inside A and B
    __half* const a_tile = reinterpret_cast<__half*>(shared + stage * L::stage_bytes);
    __half* const b_tile = reinterpret_cast<__half*>(shared + stage * L::stage_bytes + L::a_tile_bytes);
#pragma unroll
    for (int j = 0; j < L::a_copies; ++j) {
      const int row = a_first_row + j * a_rows_per_pass;
      async_copy::copy_chunk<aligned>(
          a_tile + row * L::a_pitch + L::chunk_slot(row, a_chunk, L::a_chunks_per_row) * chunk_halves,
          a_src + j * a_rows_per_pass * (long long)p.lda + k0, row < rows_in ? k_in - a_chunk * chunk_halves : 0, p.a);
    }
#pragma unroll
    for (int j = 0; j < L::b_copies; ++j) {
      const int row = b_first_row + j * b_rows_per_pass;
      async_copy::copy_chunk<aligned>(
          b_tile + row * L::b_pitch + L::chunk_slot(row, b_chunk, L::b_chunks_per_row) * chunk_halves,
          b_src + (k0 + j * b_rows_per_pass) * p.ldb, row < k_in ? cols_in - b_chunk * chunk_halves : 0, p.b);
    }
  };

  // Where this lane points ldmatrix, as byte offsets inside a pipeline buffer. For an x4 load,
  // lane l gives the address of row l % 16 of the 16 × 16 piece, left half (chunk 0) for lanes
  // 0-15 and right half (chunk 1) for lanes 16-31:
  //   A piece (rows = m, chunks along k): matrices 0-3 = rows 0-7/k 0-7, rows 8-15/k 0-7,
  //     rows 0-7/k 8-15, rows 8-15/k 8-15 = registers a0a1, a2a3, a4a5, a6a7 of the A fragment;
  //   B piece (rows = k, chunks along n), transposed: matrices 0-3 = k 0-7/n 0-7, k 8-15/n 0-7,
  //     k 0-7/n 8-15, k 8-15/n 8-15 = registers b0b1, b2b3 of B fragment j, then of fragment j+1.
  // The swizzle depends on the row only through row % 8 (swizzle.hpp), so pieces 16 rows further
  // down have the same chunk order: their offsets differ by a constant (padded rows: trivially).
  // LAB BEGIN ldmatrix_offsets [hard]
  unsigned a_offset[k_steps];           // A piece of rows warp_row …+15, k-step s
  unsigned b_offset[warp_tile_n / 16];  // B piece of k-step 0, columns warp_col + 16·jj …+15
  {
    const int row_in_piece = lane % 16, chunk_in_piece = lane / 16;
#pragma unroll
    for (int s = 0; s < k_steps; ++s) {
      const int row = warp_row + row_in_piece;
      a_offset[s] =
          row * L::a_row_bytes + L::chunk_slot(row, 2 * s + chunk_in_piece, L::a_chunks_per_row) * swizzle_chunk_bytes;
    }
#pragma unroll
    for (int jj = 0; jj < warp_tile_n / 16; ++jj) {
      const int chunk = (warp_col + 16 * jj) / chunk_halves + chunk_in_piece;
      b_offset[jj] =
          row_in_piece * L::b_row_bytes + L::chunk_slot(row_in_piece, chunk, L::b_chunks_per_row) * swizzle_chunk_bytes;
    }
  }
  // LAB END

  // EXCERPT BEGIN fragments_and_products
  // Stage 2a, fragments: k-step s of the slice in buffer `stage`, from shared memory into f.
  using WarpFragments = Fragments<fragments_m, fragments_n>;
  auto load_fragments = [&](WarpFragments& f, int stage, int s) {
    const unsigned a_tile = shared_base + stage * L::stage_bytes;
    const unsigned b_tile = a_tile + L::a_tile_bytes;
    // LAB BEGIN load_fragments
#pragma unroll
    for (int i = 0; i < fragments_m; ++i) ldmatrix_x4(f.a[i], a_tile + a_offset[s] + i * mma_m * L::a_row_bytes);
#pragma unroll
    for (int jj = 0; jj < warp_tile_n / 16; ++jj) {
      unsigned r[4];
      ldmatrix_x4_trans(r, b_tile + b_offset[jj] + s * mma_k * L::b_row_bytes);
      f.b[2 * jj][0] = r[0], f.b[2 * jj][1] = r[1];
      f.b[2 * jj + 1][0] = r[2], f.b[2 * jj + 1][1] = r[3];
    }
    // LAB END
  };

  // Stage 2b, compute: every (A fragment, B fragment) pair into its 16 × 8 accumulator. Odd rows
  // run right to left (serpentine), so consecutive mma share an operand at the turn.
  float acc[fragments_m][fragments_n][4] = {};
  auto multiply = [&](const WarpFragments& f) {
  // LAB BEGIN products
#pragma unroll
    for (int i = 0; i < fragments_m; ++i)
#pragma unroll
      for (int jn = 0; jn < fragments_n; ++jn) {
        const int j = i % 2 ? fragments_n - 1 - jn : jn;
        mma_m16n8k16(acc[i][j], f.a[i], f.b[j]);
      }
    // LAB END
  };
  // EXCERPT END fragments_and_products

  // The pipeline: 07's ring of cp.async stages (see its kernel.cu for the counting), with the
  // k-steps of a slice unrolled so that fragments for k-step s+1 load while k-step s multiplies.
  // The barrier moves to the slice's last k-step, just before the first fragments of the next
  // slice are read; the refill of the buffer freed by the previous slice starts at k-step 0.
  //   Iteration t, k-step s:
  //     s = 0:           start slice t + stages − 1 into buffer (t − 1) mod stages, commit;
  //                      every warp finished reading that buffer before the previous barrier.
  //     s < k_steps − 1: load fragments of k-step s + 1 (same buffer).
  //     s = k_steps − 1: wait until slice t + 1 has landed (stages − 1 + t + 1 groups committed,
  //                      at most stages − 2 pending), barrier, load k-step 0 of slice t + 1.
  //     then multiply k-step s, from the register set loaded one k-step earlier.
  const int k_tiles = int(ceil_div(p.k, block_tile_k));
  // Starts the copies of a slice into its buffer and commits them as one group (an empty group past
  // the last slice, so that the count stays right).
  auto start_slice = [&](int slice) {
    // LAB BEGIN load_next_slice [hard, repeats 07]
    if (slice < k_tiles) load_slice(slice, slice % stages);
    async_copy::commit_group();
    // LAB END
  };
  // Waits until the oldest slice in flight has landed (at most stages − 2 groups pending), for
  // every thread's copies: after the barrier every warp may read it.
  auto wait_for_slice = [&]() {
    // LAB BEGIN wait_oldest_slice [hard, repeats 07]
    async_copy::wait_group<stages - 2>();
    __syncthreads();
    // LAB END
  };
#pragma unroll
  for (int t = 0; t < stages - 1; ++t) start_slice(t);
  wait_for_slice();  // slice 0 has landed

  if constexpr (L::fragment_sets == 2) {
    WarpFragments fragments[2];
    load_fragments(fragments[0], 0, 0);
    for (int t = 0; t < k_tiles; ++t) {
      const int stage = t % stages;
#pragma unroll
      for (int s = 0; s < k_steps; ++s) {
        if (s == 0) start_slice(t + stages - 1);
        if (s + 1 < k_steps) {
          load_fragments(fragments[(s + 1) % 2], stage, s + 1);
        } else {
          wait_for_slice();  // slice t + 1
          if (t + 1 < k_tiles) load_fragments(fragments[(s + 1) % 2], (t + 1) % stages, 0);
        }
        multiply(fragments[s % 2]);
      }
    }
  } else {
    // The variant single_fragment_set: one set of fragment registers, so each k-step's fragments
    // are loaded and then multiplied, and the barrier closes the slice after its last products.
    WarpFragments fragments;
    for (int t = 0; t < k_tiles; ++t) {
      const int stage = t % stages;
#pragma unroll
      for (int s = 0; s < k_steps; ++s) {
        if (s == 0) start_slice(t + stages - 1);
        load_fragments(fragments, stage, s);
        multiply(fragments);
      }
      wait_for_slice();  // slice t + 1
    }
  }
  // LAB BEGIN drain [hard, repeats 07]
  async_copy::wait_group<0>();  // only empty groups remain: nothing is left in flight at exit
  // LAB END

  // Stage 3, write back, straight from the registers. Accumulator (i, j) covers rows
  // 16·i … +15 and columns 8·j … +7 of the warp tile; lane l holds rows l/4 and l/4 + 8, columns
  // 2·(l % 4) and +1. The 4 lanes of a quad thus write 8 consecutive floats, one whole 32-byte
  // sector, with alpha and beta, only inside C.
  const long long row0 = block.row + warp_row + lane / 4, col0 = block.col + warp_col + 2 * (lane % 4);
  const bool pairs = p.ldc % 2 == 0 && reinterpret_cast<std::uintptr_t>(p.c) % 8 == 0;  // 8-byte accesses allowed
  // c = alpha·acc + beta·c for two neighbouring elements, `cols_left` of which from c on lie inside
  // C: one 8-byte access when both are inside and pairs are allowed, else element by element. C is
  // not read when beta == 0.
  auto store_pair = [&](float* c, float v0, float v1, long long cols_left) {
    if (pairs && cols_left >= 2) {
      float2 out = make_float2(p.alpha * v0, p.alpha * v1);
      if (p.beta != 0.0f) {
        const float2 old = *reinterpret_cast<const float2*>(c);
        out = make_float2(p.alpha * v0 + p.beta * old.x, p.alpha * v1 + p.beta * old.y);
      }
      *reinterpret_cast<float2*>(c) = out;
    } else {
      if (cols_left >= 1) store_c(c, v0, p.alpha, p.beta);
      if (cols_left >= 2) store_c(c + 1, v1, p.alpha, p.beta);
    }
  };
#pragma unroll
  for (int i = 0; i < fragments_m; ++i)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const long long row = row0 + i * mma_m + 8 * h;
      if (row >= p.m) continue;
      float* const c_row = p.c + row * p.ldc;
#pragma unroll
      for (int j = 0; j < fragments_n; ++j) {
        const long long col = col0 + j * mma_n;
        store_pair(c_row + col, acc[i][j][2 * h], acc[i][j][2 * h + 1], p.n - col);
      }
    }
#endif
}

// ---- Launch -----------------------------------------------------------------------------------------

// cp.async where every row of A and B starts on a 16-byte boundary (the configuration Aligned);
// element-wise loads otherwise (Unaligned).
template <class Aligned, class Unaligned>
void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (async_copy::rows_16_byte_aligned(p.k, p.n, p.lda, p.ldb, p.a, p.b))
    launch_over_tiles<mma_ldmatrix_gemm<Aligned, true>>(p, Aligned::block_tile_m, Aligned::block_tile_n,
                                                        Layout<Aligned>::threads, Layout<Aligned>::shared_bytes,
                                                        stream);
  else
    launch_over_tiles<mma_ldmatrix_gemm<Unaligned, false>>(p, Unaligned::block_tile_m, Unaligned::block_tile_n,
                                                           Layout<Unaligned>::threads, Layout<Unaligned>::shared_bytes,
                                                           stream);
}

}  // namespace worklog::mma_ldmatrix
