// The padding transform (step 14's idea; its README teaches it): operands whose rows TMA cannot
// describe are copied once into the workspace with their leading dimension rounded up to 8, and the
// padded problem goes to a launcher that needs TMA (the swap GEMM, or a later step's own); an
// unaligned C is written by the swap kernel's stores or staged in a padded C and copied out; few rows
// of A with B unaligned go to the in-place route (in_place_rows.hpp). Templates over the
// configuration (PadConfig names each knob); pad_unaligned.cu compiles them once for the later steps.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "async_copy.cuh"
#include "general_gemm.hpp"
#include "kernel_utils.cuh"
#include "sm90/in_place_rows.hpp"
#include "sm90/swap_gemm.hpp"
#include "step.hpp"
#include "tensor_map.hpp"

namespace worklog::pad_unaligned {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// The knobs of the decision and of the copy kernels; 14's README derives the first two.
struct PadConfig {
  static constexpr int in_place_max_m =
      32;  // B's rows unaligned and M up to this: read in place (14's README: measured)
  static constexpr int direct_c_max_k = 4096;   // C's rows unaligned, M > 13's swap: to this K the swap kernel writes C
  static constexpr int copy_threads = 256;      // threads per block of the copy kernels
  static constexpr int copy_blocks_per_sm = 8;  // blocks per SM of the copy kernels (a grid-stride loop does the rest)
};

constexpr int halves_per_chunk = 8;             // one 16-byte chunk: what TMA, cp.async and the copy's stores move
constexpr std::size_t scratch_alignment = 256;  // every buffer in the workspace starts on this boundary

static_assert(PadConfig::in_place_max_m >= 0 && PadConfig::in_place_max_m <= in_place_rows::max_m,
              "in_place_max_m must be at most in_place_rows::max_m: the widest in-place tile");
static_assert(PadConfig::in_place_max_m <= swap_ab::max_m,
              "in_place_max_m must not exceed swap_ab::max_m: above it the padded path is 11's");
static_assert(PadConfig::direct_c_max_k >= 0, "direct_c_max_k must be at least 0 (0: C always staged when unaligned)");
static_assert(PadConfig::copy_threads % 32 == 0, "copy_threads must be whole warps");

long long round_up_8(long long x) { return ceil_div(x, halves_per_chunk) * halves_per_chunk; }
std::size_t round_up_scratch(std::size_t bytes) {
  return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

// ---- The copy into a padded operand -------------------------------------------------------------------

// The 8 halves at `source` (2-byte aligned, not 16) from the two aligned 16-byte chunks that hold
// them: words q … q + 4 of the 8 (q = the source's offset in words), each output word the funnel of
// two neighbours, shifted by 16 bits when the source sits in the middle of a word.
__device__ __forceinline__ uint4 load_8_halves_unaligned(const __half* source) {
  const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(source);
  const uint4* window = reinterpret_cast<const uint4*>(address & ~std::uintptr_t(15));
  const uint4 lo = __ldg(window), hi = __ldg(window + 1);
  const unsigned w[8] = {lo.x, lo.y, lo.z, lo.w, hi.x, hi.y, hi.z, hi.w};
  const int q = int(address & 15) / 4;
  const unsigned shift = (address & 2) ? 16 : 0;
  unsigned out[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    unsigned low = w[i], high = w[i + 1];
#pragma unroll
    for (int j = 1; j < 4; ++j)  // registers, not a local array: every index is a constant
      if (q == j) {
        low = w[i + j];
        high = w[i + j + 1];
      }
    out[i] = __funnelshift_r(low, high, shift);
  }
  return make_uint4(out[0], out[1], out[2], out[3]);
}

// Copies a rows × cols FP16 matrix at any 2-byte-aligned address, rows `ld` halves apart, into the one
// at `padded` (16-byte aligned, rows ld_out halves apart: a multiple of 8, zeros past cols). One 16-byte
// chunk of the destination per thread and turn: a store fed by one aligned load, or two and funnel
// shifts, or element by element at a row's end. Bound by DRAM: it reads the source once, writes it once.
__global__ void __launch_bounds__(PadConfig::copy_threads)
    pad_copy(const __half* __restrict__ source, long long rows, long long cols, long long ld,
             __half* __restrict__ padded, long long ld_out) {
  const long long chunks_per_row = ld_out / halves_per_chunk, chunks = rows * chunks_per_row;
  const std::uintptr_t begin = reinterpret_cast<std::uintptr_t>(source),
                       end = reinterpret_cast<std::uintptr_t>(source + strided_elements(rows, cols, ld));
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < chunks;
       i += (long long)gridDim.x * blockDim.x) {
    const long long row = i / chunks_per_row, col = i % chunks_per_row * halves_per_chunk;
    uint4 chunk = make_uint4(0, 0, 0, 0);  // +0.0 in every half
    // LAB BEGIN pad_copy
    if (col < cols) {
      const __half* from = source + row * ld + col;
      const std::uintptr_t address = reinterpret_cast<std::uintptr_t>(from), window = address & ~std::uintptr_t(15);
      if (col + halves_per_chunk <= cols && address == window) {
        chunk = __ldg(reinterpret_cast<const uint4*>(from));
      } else if (col + halves_per_chunk <= cols && window >= begin && window + 32 <= end) {
        chunk = load_8_halves_unaligned(from);
      } else {  // the row's last chunk, or one whose aligned window leaves the matrix
        chunk = async_copy::masked_8_halves(from, 0, int(min(cols - col, (long long)halves_per_chunk)));
      }
    }
    // LAB END
    *reinterpret_cast<uint4*>(padded + row * ld_out + col) = chunk;
  }
}

// C = padded + beta·C on C's m × n (padded: alpha·A·B, ld_padded floats a row; beta 0: C is not read).
__global__ void __launch_bounds__(PadConfig::copy_threads)
    unpad_c(const float* __restrict__ padded, long long ld_padded, float* c, long long ldc, int m, int n, float beta) {
  const long long elements = (long long)m * n;
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < elements;
       i += (long long)gridDim.x * blockDim.x) {
    const long long row = i / n, col = i % n;
    const float value = padded[row * ld_padded + col];
    float* const out = c + row * ldc + col;
    *out = beta == 0.0f ? value : value + beta * *out;
  }
}

// The grid of a copy kernel: enough blocks for every chunk, at most copy_blocks_per_sm per SM.
unsigned copy_grid(long long work) {
  static const int sms = multiprocessor_count();
  const long long blocks = ceil_div(work, PadConfig::copy_threads);
  return unsigned(std::max<long long>(1, std::min<long long>(blocks, (long long)sms * PadConfig::copy_blocks_per_sm)));
}

void launch_pad_copy(const __half* source, long long rows, long long cols, long long ld, __half* padded,
                     long long ld_out, cudaStream_t stream) {
  pad_copy<<<copy_grid(rows * ld_out / halves_per_chunk), PadConfig::copy_threads, 0, stream>>>(source, rows, cols, ld,
                                                                                                padded, ld_out);
  WORKLOG_CHECK_LAUNCH();
}

// ---- The decision ---------------------------------------------------------------------------------------

enum class Route {  // which path a problem takes
  swap_step,        // 13's launcher on the operands (their padded copies where unaligned): swap kernel, or 12 above
  in_place,         // M ≤ in_place_max_m, B's rows unaligned: the in-place kernel reads A and B where they are
  swap_direct_c,    // M above 13's swap, C's rows unaligned, K ≤ direct_c_max_k: 13's swap kernel writes C
  staged_c,         // M above 13's swap, C's rows unaligned, K larger: 12 into a padded C, then copied out
};

struct Padding {
  Route route = Route::swap_step;
  bool pad_a = false, pad_b = false, stage_c = false;
  long long k8 = 0, n8 = 0;  // K and N rounded up to a multiple of 8: the padded copies' leading dimensions
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;    // the padded A (M × K8), B (K × N8), C (M × N8 FP32)
  std::size_t rest_offset = 0, rest_bytes = 0, total = 0;  // the workspace of the path it hands over to; all
};

// The route and the copies, before any buffer is sized. a_ok, b_ok: TMA can describe A's and B's rows
// where they are (base and leading dimension 16-byte aligned); c_ok: so can 11's TMA store C's (and
// its rows end on a 16-byte chunk: N a multiple of 4).
// EXCERPT BEGIN decide_padding
template <class Pad>
Padding decide_padding(Shape s, bool a_ok, bool b_ok, bool c_ok) {
  Padding d;
  d.k8 = round_up_8(s.k);
  d.n8 = round_up_8(s.n);
  // LAB BEGIN decide_padding
  if (!b_ok && s.m <= Pad::in_place_max_m) {
    d.route = Route::in_place;
  } else {
    d.pad_a = !a_ok;
    d.pad_b = !b_ok;
    if (s.m > swap_ab::max_m && !c_ok) d.route = s.k <= Pad::direct_c_max_k ? Route::swap_direct_c : Route::staged_c;
    d.stage_c = d.route == Route::staged_c;
    d.pad_b = d.pad_b || (d.stage_c && d.n8 != s.n);
  }
  // LAB END
  return d;
}
// EXCERPT END decide_padding

// The decision, then its buffers, in this order, each on a 256-byte boundary; then the workspace of the
// path it hands over to.
// solve_workspace: the workspace of the launcher that solves the padded problem (13's for this step).
template <class Pad>
Padding plan_padding(Shape s, Strides strides, bool a_ok, bool b_ok, bool c_ok, WorkspaceSize solve_workspace) {
  Padding d = decide_padding<Pad>(s, a_ok, b_ok, c_ok);
  std::size_t offset = 0;
  auto reserve = [&](bool needed, std::size_t bytes) {
    const std::size_t at = offset;
    if (needed) offset += round_up_scratch(bytes);
    return at;
  };
  d.a_offset = reserve(d.pad_a, std::size_t(s.m) * d.k8 * sizeof(__half));
  d.b_offset = reserve(d.pad_b, std::size_t(s.k) * d.n8 * sizeof(__half));
  d.c_offset = reserve(d.stage_c, std::size_t(s.m) * d.n8 * sizeof(float));
  d.rest_offset = offset;
  const Strides handed = {d.pad_a ? int(d.k8) : strides.lda, d.pad_b ? int(d.n8) : strides.ldb,
                          d.stage_c ? int(d.n8) : strides.ldc};
  d.rest_bytes = d.route == Route::in_place        ? in_place_rows::workspace_bytes(s)
                 : d.route == Route::swap_direct_c ? swap_ab::swapped_workspace_bytes(s, handed)
                 : d.route == Route::staged_c      ? solve_workspace(Shape{s.m, int(d.n8), s.k}, handed)
                                                   : solve_workspace(s, handed);
  d.total = d.rest_offset + d.rest_bytes;
  return d;
}

// Bytes of workspace for a shape with these strides. The pointers are not known yet: with strides TMA
// can describe, the bound is for aligned pointers (a pointer alone off 16 bytes goes to 08's kernel, as
// in 12); with any it cannot, it covers every pointer off 16 bytes too (README.md: the bound).
template <class Pad>
std::size_t padded_workspace_bytes_with(Shape s, Strides strides, WorkspaceSize solve_workspace) {
  const bool a_ok = strides.lda % halves_per_chunk == 0, b_ok = strides.ldb % halves_per_chunk == 0,
             c_ok = strides.ldc % 4 == 0 && s.n % 4 == 0;
  const std::size_t as_strides = plan_padding<Pad>(s, strides, a_ok, b_ok, c_ok, solve_workspace).total;
  if (a_ok && b_ok && c_ok) return as_strides;
  return std::max(as_strides, plan_padding<Pad>(s, strides, false, false, false, solve_workspace).total);
}
template <class Pad>
std::size_t padded_workspace_bytes(Shape s, Strides strides) {
  return padded_workspace_bytes_with<Pad>(s, strides, swap_ab::workspace_bytes);
}

// ---- Launch -----------------------------------------------------------------------------------------------

// solve: the launcher of the padded problem, which TMA can describe (13's for this step; a later step
// hands its own: pad_unaligned.hpp), and solve_workspace its workspace.
template <class Pad>
void launch_padded_with(const GemmProblem<__half>& p, cudaStream_t stream, Launcher<__half> solve,
                        WorkspaceSize solve_workspace) {
  const bool a_ok = tma_describable(p.a, p.lda), b_ok = tma_describable(p.b, p.ldb),
             c_ok = tma_describable(p.c, p.ldc, sizeof(float)) && p.n % 4 == 0;
  const Padding d = plan_padding<Pad>(shape_of(p), strides_of(p), a_ok, b_ok, c_ok, solve_workspace);
  // A workspace sized for aligned pointers holds no padded copies: such operands go to 08's kernel.
  if (d.total > (p.workspace ? p.workspace_bytes : 0)) return general::launch(p, stream);
  unsigned char* scratch = static_cast<unsigned char*>(p.workspace);
  GemmProblem<__half> q = p;  // the problem the path it hands over to solves
  q.workspace = d.rest_bytes ? scratch + d.rest_offset : nullptr;
  q.workspace_bytes = d.rest_bytes;
  if (d.route == Route::in_place) return in_place_rows::launch(q, stream);
  __half* a_padded = reinterpret_cast<__half*>(scratch + d.a_offset);
  __half* b_padded = reinterpret_cast<__half*>(scratch + d.b_offset);
  float* c_padded = reinterpret_cast<float*>(scratch + d.c_offset);
  // LAB BEGIN padded_hand_off [hard]
  if (d.pad_a) {
    launch_pad_copy(p.a, p.m, p.k, p.lda, a_padded, d.k8, stream);
    q.a = a_padded;
    q.lda = int(d.k8);
  }
  if (d.pad_b) {
    launch_pad_copy(p.b, p.k, p.n, p.ldb, b_padded, d.n8, stream);
    q.b = b_padded;
    q.ldb = int(d.n8);
  }
  if (d.stage_c) {
    q.n = int(d.n8);
    q.c = c_padded;
    q.ldc = int(d.n8);
    q.beta = 0.0f;
  }
  // LAB END
  switch (d.route) {
    case Route::swap_step:
      solve(q, stream);
      break;
    case Route::swap_direct_c:
      swap_ab::launch_swapped(q, stream);
      break;
    case Route::staged_c:
      solve(q, stream);  // M above the swap (13: 12), into the padded C
      // C = the padded C + beta·C, on C's own N columns.
      unpad_c<<<copy_grid((long long)p.m * p.n), PadConfig::copy_threads, 0, stream>>>(c_padded, d.n8, p.c, p.ldc, p.m,
                                                                                       p.n, p.beta);
      WORKLOG_CHECK_LAUNCH();
      break;
    case Route::in_place:
      break;  // launched above
  }
}

template <class Pad>
void launch_padded(const GemmProblem<__half>& p, cudaStream_t stream) {
  launch_padded_with<Pad>(p, stream, swap_ab::launch, swap_ab::workspace_bytes);
}

}  // namespace
}  // namespace worklog::pad_unaligned
