// A route of the Hopper library, step 15's write of C (tile_per_shape.hpp: Route::tiny_k): K ≤ 32, B in registers, C
// stored by whole lines. Compiled in tile_per_shape.cu; docs/routes.md measures it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>

#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "sm90/tile_per_shape.hpp"
#include "step.hpp"

namespace worklog {
namespace {

// ---- Tiny K: a write of C ----------------------------------------------------------------------------
// With K ≤ TinyK::max_k an element of C is one or two mma.sync k-steps, and the time is C's write:
// M·N·4 bytes, against M·N·K·2 FLOPs. The menu's tiles stage C through shared memory, walk a pipeline
// with next to nothing in it, and on unaligned rows add 14's copies. Here a block owns a strip of
// columns and a band of rows: each warp holds its 32 columns of B as mma.sync fragments for the whole
// band (loaded once), A's rows are staged in shared memory (two buffers: the next stage's loads are
// in flight while this one's products are made and stored), and each warp passes its 16 × 32 pieces
// of C through shared memory, so that each store writes 32 consecutive floats of one row (straight
// from the accumulators a store covers 8 rows, 8 bytes of each: C's lines filled piecemeal).
// Any alignment: A and B are read element by element (their bytes are a small part of C's).
struct TinyK {
  static constexpr int max_k = tile_per_shape::tiny_k_max;  // 32: two k-steps of 16, B's fragments in registers
  static constexpr int threads = 256;                       // 8 warps, each 32 columns of the strip
  static constexpr int warp_cols = 32;                      // four n8 pieces of mma.sync a warp
  static constexpr int stage_rows = 64;                     // A's rows staged at once: 16-row pieces for every warp
  static constexpr int row_halves = max_k + 8;  // staged row of A: 80 bytes, ldmatrix's rows on distinct banks
  static constexpr int c_pad = 8;               // staged row of C: 8 floats more, pairs on distinct banks
  static constexpr int line_floats = 32;        // floats of a 128-byte line: what one store writes
  static constexpr int max_band_stages = 4;     // stages a block walks at most: B loaded once for 256 rows
  static constexpr int min_blocks_per_sm = 3;   // caps registers at 85: 24 warps an SM keep stores in flight
};
static_assert(TinyK::max_k % 16 == 0, "TinyK::max_k must be whole k-steps of 16");
static_assert(TinyK::row_halves % 8 == 0, "TinyK::row_halves must keep ldmatrix's rows on 16 bytes");
static_assert(TinyK::c_pad % 32 == 8 || TinyK::c_pad % 32 == 24, "TinyK::c_pad must put rows 8 banks apart");
static_assert(TinyK::threads % TinyK::max_k == 0 && TinyK::stage_rows * TinyK::max_k % TinyK::threads == 0,
              "TinyK: a stage of A must be whole rows of max_k loads for every thread");

// k16s: k-steps of 16 (1 or 2), a template parameter so that the products unroll with no predicate;
// realign: C's rows do not all start on 128-byte lines (an odd ldc: 46341), and the stores follow
// the lines rather than the warps' columns.
template <int strip_cols, int k16s, bool realign>
__global__ void __launch_bounds__(TinyK::threads, TinyK::min_blocks_per_sm)
    tiny_k_gemm(const __grid_constant__ GemmProblem<__half> p, long long strips, int band_stages) {
  using namespace mma_sync;
  constexpr int warps = TinyK::threads / 32, warps_n = strip_cols / TinyK::warp_cols, warps_m = warps / warps_n;
  static_assert(strip_cols % TinyK::warp_cols == 0 && warps % warps_n == 0, "strip_cols: whole warps of columns");
  constexpr int warp_rows = TinyK::stage_rows / warps_m;  // a warp's rows of a stage, in pieces of 16
  static_assert(warp_rows % 16 == 0, "TinyK::stage_rows must give each warp whole 16-row pieces");
  static_assert(k16s >= 1 && 16 * k16s <= TinyK::max_k, "k16s must be 1 to max_k / 16");
  constexpr int loads = TinyK::stage_rows * TinyK::max_k / TinyK::threads;  // elements of A a thread stages
  constexpr int rows_per_load = TinyK::threads / TinyK::max_k;              // rows of A a round of loads covers
  __shared__ __align__(16) __half a_stage[2][TinyK::stage_rows][TinyK::row_halves];  // one read, one filled
  // The block's rows of C from one 16-row piece of each warp: 16 · warps_m rows × the strip.
  __shared__ __align__(16) float c_stage[16 * warps_m][strip_cols + TinyK::c_pad];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const long long strip = blockIdx.x % strips, band = blockIdx.x / strips;
  const long long strip_col = strip * strip_cols,
                  strip_end = strip_col + strip_cols < p.n ? strip_col + strip_cols : p.n;
  const long long warp_col = strip_col + (warp % warps_n) * TinyK::warp_cols;  // its first column
  const int warp_row = (warp / warps_n) * warp_rows;                           // its first row of a stage
  const long long row_begin = band * band_stages * TinyK::stage_rows;
  const long long band_end = row_begin + (long long)band_stages * TinyK::stage_rows;
  const long long row_end = band_end < p.m ? band_end : p.m;
  // Stage 1: the warp's columns of B as fragments (mma_sync.cuh: lane l holds column l / 4 of a piece,
  // rows 2·(l % 4) and the next, and 8 below): zeros past K and past N.
  auto b_at = [&](int k, long long col) {
    return k < p.k && col < p.n ? p.b[(long long)k * p.ldb + col] : __half(0.0f);
  };
  unsigned b[4][k16s][2];
#pragma unroll
  for (int piece = 0; piece < 4; ++piece)
#pragma unroll
    for (int step = 0; step < k16s; ++step)
#pragma unroll
      for (int half = 0; half < 2; ++half) {
        const int k = 16 * step + 8 * half + 2 * (lane % 4);
        const long long col = warp_col + 8 * piece + lane / 4;
        const __half2 pair = __halves2half2(b_at(k, col), b_at(k + 1, col));
        b[piece][step][half] = *reinterpret_cast<const unsigned*>(&pair);
      }
  // A's rows from stage_row on: a warp loads one row's max_k halves (zeros past K or the band) into
  // registers, then stores them into a buffer of a_stage.
  __half next[loads];
  const int load_k = threadIdx.x % TinyK::max_k, load_row = threadIdx.x / TinyK::max_k;
  auto fetch = [&](long long stage_row) {
#pragma unroll
    for (int j = 0; j < loads; ++j) {
      const long long row = stage_row + load_row + j * rows_per_load;
      next[j] = row < row_end && load_k < p.k ? p.a[row * p.lda + load_k] : __half(0.0f);
    }
  };
  auto put = [&](int buffer) {
#pragma unroll
    for (int j = 0; j < loads; ++j) a_stage[buffer][load_row + j * rows_per_load][load_k] = next[j];
  };
  fetch(row_begin);
  put(0);
  __syncthreads();
  int buffer = 0;
  for (long long stage_row = row_begin; stage_row < row_end; stage_row += TinyK::stage_rows, buffer ^= 1) {
    // Stage 2: the next rows' loads go out first, to arrive while this stage's products are made.
    const bool more = stage_row + TinyK::stage_rows < row_end;
    if (more) {
      fetch(stage_row + TinyK::stage_rows);
    }
    // Stage 3: each 16-row piece of the warp's rows: A's fragments by ldmatrix, four 16 × 8 products
    // a k-step (lane l: rows l / 4 and 8 below, columns 2·(l % 4) and the next of each 8-column
    // piece), into c_stage beside the other warps' pieces; then out, each store one 128-byte line
    // of C (lane l its float l) or the part of one that lies in the strip.
#pragma unroll 1
    for (int piece_row = 0; piece_row < warp_rows; piece_row += 16) {
      float acc[4][4] = {};
#pragma unroll
      for (int step = 0; step < k16s; ++step) {
        unsigned a[4];
        const int a_row = warp_row + piece_row + lane % 16;
        ldmatrix_x4(a, shared_address(&a_stage[buffer][a_row][16 * step + 8 * (lane / 16)]));
#pragma unroll
        for (int piece = 0; piece < 4; ++piece) mma_m16n8k16(acc[piece], a, b[piece][step]);
      }
      const int c_row = (warp / warps_n) * 16 + lane / 4;  // c_stage holds warp part m's piece at rows 16m…
#pragma unroll
      for (int piece = 0; piece < 4; ++piece) {
        const int c = (warp % warps_n) * TinyK::warp_cols + 8 * piece + 2 * (lane % 4);
        *reinterpret_cast<float2*>(&c_stage[c_row][c]) = make_float2(acc[piece][0], acc[piece][1]);
        *reinterpret_cast<float2*>(&c_stage[c_row + 8][c]) = make_float2(acc[piece][2], acc[piece][3]);
      }
      if constexpr (!realign) {
        // C's rows start on lines: the warp writes its own piece, 16 rows of 32 floats, a line each.
        __syncwarp();
        const long long col = warp_col + lane;
#pragma unroll 4
        for (int r = 0; r < 16; ++r) {
          const long long row = stage_row + warp_row + piece_row + r;
          if (row < row_end && col < p.n) {
            float* const c_element = p.c + row * p.ldc + col;
            store_c_streamed(c_element, c_stage[(warp / warps_n) * 16 + r][col - strip_col], p.alpha, p.beta);
          }
        }
        __syncwarp();  // the piece is read before the next one is written
      } else {
        // Rows off lines: a warp's 32 columns would straddle two lines of C, so the block's rows go
        // out whole, a warp a row, each store the part of one line that lies in the strip.
        __syncthreads();
        for (int r = warp; r < 16 * warps_m; r += warps) {
          const long long row = stage_row + (r / 16) * warp_rows + piece_row + r % 16;
          if (row >= row_end) continue;
          float* c_row_start = p.c + row * p.ldc;
          // The strip's first column lies `skew` floats past the start of its line.
          const int skew =
              int(reinterpret_cast<std::uintptr_t>(c_row_start + strip_col) / sizeof(float) % TinyK::line_floats);
          for (long long col = strip_col - skew + lane; col < strip_end; col += TinyK::line_floats) {
            if (col < strip_col) continue;
            store_c_streamed(c_row_start + col, c_stage[r][col - strip_col], p.alpha, p.beta);
          }
        }
        __syncthreads();  // c_stage is read before the next piece is written
      }
    }
    // Stage 4: the next rows into the other buffer, which every thread finished reading before the
    // last barrier; the barrier below makes them visible and frees this one.
    if (more) put(buffer ^ 1);
    __syncthreads();
  }
}

// The shapes the write of C takes: K ≤ max_k (few columns go to the pass over A first).
bool tiny_k(Shape s) { return s.k <= TinyK::max_k; }

// The instantiation for k16s (k-steps of 16, tried from 1 up) and realign.
template <int strip_cols, int k16s = 1>
void launch_tiny_k_kernel(int want_k16s, bool realign, dim3 grid, const GemmProblem<__half>& p, long long strips,
                          int band_stages, cudaStream_t stream) {
  if constexpr (16 * k16s <= TinyK::max_k) {
    if (want_k16s != k16s)
      return launch_tiny_k_kernel<strip_cols, k16s + 1>(want_k16s, realign, grid, p, strips, band_stages, stream);
    if (realign)
      tiny_k_gemm<strip_cols, k16s, true><<<grid, TinyK::threads, 0, stream>>>(p, strips, band_stages);
    else
      tiny_k_gemm<strip_cols, k16s, false><<<grid, TinyK::threads, 0, stream>>>(p, strips, band_stages);
  }
}

void launch_tiny_k(const GemmProblem<__half>& p, cudaStream_t stream) {
  // The narrowest strip that covers N, so that few columns do not leave most warps without one.
  const int strip_cols = p.n <= 64 ? 64 : p.n <= 128 ? 128 : 256;
  const long long strips = ceil_div(p.n, strip_cols), stages = ceil_div(p.m, TinyK::stage_rows);
  // Bands of rows: as many stages a band as make whole waves of min_blocks_per_sm blocks an SM, at
  // most max_band_stages (a small problem: one stage a block, as many blocks as there are stages).
  const long long slots = (long long)multiprocessor_count() * TinyK::min_blocks_per_sm, units = stages * strips;
  const long long waves = ceil_div(units, slots * TinyK::max_band_stages);
  const int band_stages = int(std::min<long long>(TinyK::max_band_stages, ceil_div(units, slots * waves)));
  const long long blocks = strips * ceil_div(stages, band_stages);
  if (blocks > 2147483647LL) throw std::length_error("15_tile_per_shape: too many blocks for tiny K");
  const dim3 grid{unsigned(blocks)};
  const int k16s = int(ceil_div(p.k, 16));
  const bool realign = p.ldc % TinyK::line_floats != 0 || !is_aligned(p.c, 4 * TinyK::line_floats);
  if (strip_cols == 64)
    launch_tiny_k_kernel<64>(k16s, realign, grid, p, strips, band_stages, stream);
  else if (strip_cols == 128)
    launch_tiny_k_kernel<128>(k16s, realign, grid, p, strips, band_stages, stream);
  else
    launch_tiny_k_kernel<256>(k16s, realign, grid, p, strips, band_stages, stream);
  WORKLOG_CHECK_LAUNCH();
}

}  // namespace
}  // namespace worklog
