// Step 13 (Hopper) — any alignment at full speed: pad once, or read in place.
//
// Adds to 12: operands whose rows TMA cannot describe are copied once into the workspace with their
// leading dimension rounded up to 8 and handed to 12's launcher; an unaligned C is written by the
// swap kernel or staged and copied out; few rows of A with an unaligned B are read in place.
// Why it helps: one extra column no longer sends a problem to a kernel a fraction as fast.
//
// Run: build/bin/13_pad_unaligned --m 4097 --n 4097 --k 4097
// The lesson (the idea, its arithmetic, the measurements): README.md beside this file.

#include <algorithm>
#include <type_traits>

#include "13_pad_unaligned/pad_unaligned.hpp"
#include "async_copy.cuh"
#include "general_gemm.hpp"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "sm90/stream_k_schedule.cuh"  // epochs: the in-place kernel's counters hold the launch's
#include "sm90/swap_gemm.hpp"
#include "step.hpp"
#include "tensor_map.hpp"

namespace worklog {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
// The knobs of the decision and of the two new kernels; README.md derives the first two.
struct PadConfig {
  static constexpr int in_place_max_m = 32;  // B's rows unaligned and M up to this: read in place (README.md: measured)
  static constexpr int direct_c_max_k = 4096;   // C's rows unaligned, M > 12's swap: to this K the swap kernel writes C
  static constexpr int copy_threads = 256;      // threads per block of the copy kernels
  static constexpr int copy_blocks_per_sm = 8;  // blocks per SM of the copy kernels (a grid-stride loop does the rest)
  static constexpr int in_place_tile_n = 128;   // columns of C per in-place block: 32 per warp, 4 warps
  static constexpr int in_place_tile_k = 32;    // k rows per stage: two k-steps of 16
  static constexpr int in_place_stages = 6;     // stages of the in-place pipeline: 5 slices of B in flight
  static constexpr int in_place_max_split = 16;  // parts in k per column tile, at most
};

constexpr int halves_per_chunk = 8;             // one 16-byte chunk: what TMA, cp.async and the copy's stores move
constexpr std::size_t scratch_alignment = 256;  // every buffer in the workspace starts on this boundary

static_assert(PadConfig::in_place_max_m >= 0 && PadConfig::in_place_max_m <= 128,
              "in_place_max_m must be at most 128: the widest in-place tile (with_in_place_width)");
static_assert(PadConfig::in_place_max_m <= swap_ab::max_m,
              "in_place_max_m must not exceed swap_ab::max_m: above it the padded path is 11's");
static_assert(PadConfig::direct_c_max_k >= 0, "direct_c_max_k must be at least 0 (0: C always staged when unaligned)");
static_assert(PadConfig::copy_threads % 32 == 0, "copy_threads must be whole warps");
static_assert(PadConfig::in_place_tile_n == 4 * 32, "in_place_tile_n must be 128: 4 warps of 32 columns (2 mma m16)");
static_assert(PadConfig::in_place_tile_k == 32, "in_place_tile_k must be 32: two k-steps of the m16n8k16 mma");
static_assert(PadConfig::in_place_stages >= 2, "in_place_stages must be at least 2: copies overlap products");
static_assert(PadConfig::in_place_max_split >= 1, "in_place_max_split must be at least 1 (1: no split in k)");

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

// ---- In place: few rows of A, B's rows unaligned -----------------------------------------------------
// 12's swap (Cᵀ = Bᵀ·Aᵀ) on mma.sync, tiles staged by cp.async from the aligned 16-byte chunks that
// cover each row: a row begins `shift` halves (0 … 7) into its shared row, so fragments are read two
// bytes at a time (ldmatrix needs 16-byte rows). A block takes 128 columns × all M rows (M ≤ width)
// over one part of K; the block that finishes a column tile's last part adds the parts in k order.

template <int width>
struct InPlaceLayout : PadConfig {
  static constexpr int threads = 128;       // 4 warps, each 32 columns of C: two 16-row blocks of Bᵀ
  static constexpr int pieces = width / 8;  // mma n8 pieces of the M side
  static constexpr int b_chunks = in_place_tile_n / halves_per_chunk + 1;  // a row of 128 halves at any shift
  static constexpr int b_pitch = b_chunks * halves_per_chunk;              // halves per staged row of B
  static constexpr int a_chunks = in_place_tile_k / halves_per_chunk + 1;  // a row of A's 32 k at any shift
  static constexpr int a_pitch = a_chunks * halves_per_chunk;
  static constexpr int b_stage_halves = in_place_tile_k * b_pitch, a_stage_halves = width * a_pitch;
  static constexpr int stage_halves = b_stage_halves + a_stage_halves;
  static constexpr int shared_bytes = in_place_stages * stage_halves * 2;
  static constexpr int chunks_per_stage = in_place_tile_k * b_chunks + width * a_chunks;
  static constexpr int partial_float4s = 2 * pieces * threads;  // per (column tile, part): width × 128 floats
  // What shared memory lets reside on an SM: 1 KiB more than a block's maximum, and 1 KiB reserved per block.
  static constexpr int blocks_per_sm = (max_shared_bytes_per_block + 1024) / (shared_bytes + 1024);

  static_assert(width == 8 || width == 16 || width == 32 || width == 64 || width == 128,
                "the in-place width must be 8, 16, 32, 64 or 128 (mma n8 pieces)");
  static_assert(shared_bytes <= max_shared_bytes_per_block, "in_place_stages × stage_bytes must fit in 227 KiB");
};

// Stages chunk `chunk` (16 bytes from the boundary `misalignment` halves below `base`) of the `total`
// halves at `base` into `dst`: cp.async inside them, else element by element, zeros outside.
__device__ __forceinline__ void stage_chunk(__half* dst, const __half* base, int misalignment, long long total,
                                            long long chunk) {
  const long long first = chunk * halves_per_chunk - misalignment;  // the chunk's first half, as an index of the matrix
  if (first >= 0 && first + halves_per_chunk <= total) {
    async_copy::copy_16_bytes_zero_fill(dst, base + first, 16);
  } else {  // halves e with 0 ≤ first + e < total
    *reinterpret_cast<uint4*>(dst) = async_copy::masked_8_halves(base + first, int(max(-first, 0LL)),
                                                                 int(min(total - first, (long long)halves_per_chunk)));
  }
}

// How the in-place kernel divides K: `split` parts of each column tile's k-slices (32 wide).
struct InPlacePlan {
  int col_tiles, k_tiles, split, blocks;
  std::size_t partial_bytes, counter_bytes;
  unsigned epoch;  // the launch's number (schedule.cuh), which its counters hold
};

template <int width>
__global__ void __launch_bounds__(InPlaceLayout<width>::threads, InPlaceLayout<width>::blocks_per_sm)
    in_place_gemm(const __grid_constant__ GemmProblem<__half> p, const __grid_constant__ InPlacePlan plan,
                  float4* partials, unsigned long long* counters) {
  using L = InPlaceLayout<width>;
  constexpr int tile_k = L::in_place_tile_k, stages = L::in_place_stages;
  extern __shared__ uint4 in_place_shared[];
  __half* shared = reinterpret_cast<__half*>(in_place_shared);

  const int tile = blockIdx.x % plan.col_tiles, part = blockIdx.x / plan.col_tiles;
  const long long n0 = (long long)tile * L::in_place_tile_n;
  const int kt_begin = int((long long)plan.k_tiles * part / plan.split);
  const int kt_end = int((long long)plan.k_tiles * (part + 1) / plan.split);
  const int a_mis = int(reinterpret_cast<std::uintptr_t>(p.a) % 16) / 2;  // halves past a 16-byte boundary
  const int b_mis = int(reinterpret_cast<std::uintptr_t>(p.b) % 16) / 2;
  const long long a_total = strided_elements(p.m, p.k, p.lda), b_total = strided_elements(p.k, p.n, p.ldb);
  // Where row r of the tile begins inside its staged row: its first element's offset from a 16-byte
  // boundary (mod 8, in unsigned arithmetic, which keeps the residue through any overflow).
  auto b_shift = [&](long long k_row) {
    return int((unsigned(b_mis) + unsigned(k_row) * unsigned(p.ldb) + unsigned(n0)) & 7u);
  };
  auto a_shift = [&](int m_row, long long k0) {
    return int((unsigned(a_mis) + unsigned(m_row) * unsigned(p.lda) + unsigned(k0)) & 7u);
  };

  // Copies slice kt (k rows k0 … k0 + 31) into `stage`: B's 32 rows × 128 columns, A's width rows ×
  // 32 k; rows past K (B) or M (A) as zeros, without reading. A thread copies the same chunks of every
  // slice (chunk i = thread + j·threads), found once: where each lands in the stage, its row, and its
  // 16-byte chunk of B or A in slice 0, which each slice moves on by 32·ldb halves (B) or 32 (A).
  constexpr int per_thread = int(ceil_div(L::chunks_per_stage, L::threads)), b_chunks = tile_k * L::b_chunks;
  int to[per_thread], row[per_thread];
  long long first[per_thread];
#pragma unroll
  for (int j = 0; j < per_thread; ++j) {
    const int i = threadIdx.x + j * L::threads, ia = i - b_chunks;
    const bool in_b = i < b_chunks;
    const int c = in_b ? i % L::b_chunks : ia % L::a_chunks;
    row[j] = in_b ? i / L::b_chunks : ia / L::a_chunks;
    to[j] = (in_b ? row[j] * L::b_pitch : L::b_stage_halves + row[j] * L::a_pitch) + c * halves_per_chunk;
    first[j] = (in_b ? b_mis + row[j] * p.ldb + n0 : a_mis + row[j] * p.lda) / halves_per_chunk + c;
  }
  const long long b_step = tile_k * p.ldb / halves_per_chunk, a_step = tile_k / halves_per_chunk;
  auto load = [&](int stage, int kt) {
#pragma unroll
    for (int j = 0; j < per_thread; ++j) {
      const int i = threadIdx.x + j * L::threads;
      __half* dst = shared + stage * L::stage_halves + to[j];
      if (i < b_chunks ? (long long)kt * tile_k + row[j] >= p.k : i < L::chunks_per_stage && row[j] >= p.m)
        *reinterpret_cast<uint4*>(dst) = make_uint4(0, 0, 0, 0);
      else if (i < b_chunks)
        stage_chunk(dst, p.b, b_mis, b_total, first[j] + kt * b_step);
      else if (i < L::chunks_per_stage)
        stage_chunk(dst, p.a, a_mis, a_total, first[j] + kt * a_step);
    }
  };

  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  float acc[2][L::pieces][4];
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[i][j][e] = 0.0f;

  auto pack = [](__half lo, __half hi) {
    return unsigned(__half_as_ushort(lo)) | unsigned(__half_as_ushort(hi)) << 16;
  };

  // The products of one stage: per k-step of 16, the Bᵀ fragments of the warp's two 16-column blocks
  // (mma's A: (n, k) is B[k][n], row k at its shift) and Aᵀ's of every n8 piece (mma's B: (k, m) is
  // A[m][k]); k past K reads as zero from A. Columns of B past N reach only C's columns past N.
  auto multiply = [&](int stage, int kt) {
    const long long k0 = (long long)kt * tile_k;
    const __half* bs = shared + stage * L::stage_halves;  // B's slice, then A's
    const __half* as = bs + L::b_stage_halves;
    const int k_left = p.k - k0 < tile_k ? int(p.k - k0) : tile_k;
#pragma unroll
    for (int ks = 0; ks < tile_k / 16; ++ks) {
      // The Bᵀ fragments of the warp's two blocks: rows 16ks + 2t + {0, 1, 8, 9} of the slice, each at its shift.
      unsigned a[2][4];
      int row_start[4];
#pragma unroll
      for (int h = 0; h < 4; ++h) {  // rows 16ks + 2t + {0, 1, 8, 9}
        const int r = 16 * ks + 2 * t + (h & 1) + 8 * (h >> 1);
        row_start[h] = r * L::b_pitch + b_shift(r);  // k0 · ldb ≡ 0 (mod 8): the same in every slice
      }
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const int col = warp * 32 + i * 16 + g;
        a[i][0] = pack(bs[row_start[0] + col], bs[row_start[1] + col]);
        a[i][1] = pack(bs[row_start[0] + col + 8], bs[row_start[1] + col + 8]);
        a[i][2] = pack(bs[row_start[2] + col], bs[row_start[3] + col]);
        a[i][3] = pack(bs[row_start[2] + col + 8], bs[row_start[3] + col + 8]);
      }
#pragma unroll
      for (int j = 0; j < L::pieces; ++j) {
        const int m_row = 8 * j + g;
        const __half* row = as + m_row * L::a_pitch + a_shift(m_row, 0);  // likewise
        const int kk = 16 * ks + 2 * t;
        const __half zero = __ushort_as_half(0);
        unsigned b[2];
        b[0] = pack(kk < k_left ? row[kk] : zero, kk + 1 < k_left ? row[kk + 1] : zero);
        b[1] = pack(kk + 8 < k_left ? row[kk + 8] : zero, kk + 9 < k_left ? row[kk + 9] : zero);
        // LAB BEGIN in_place_products [easy, repeats 06 08]
#pragma unroll
        for (int i = 0; i < 2; ++i) mma_sync::mma_m16n8k16(acc[i][j], a[i], b);
        // LAB END
      }
    }
  };

  // The pipeline: stages − 1 slices in flight while one is multiplied (07's, with cp.async groups).
  // LAB BEGIN in_place_pipeline [hard, repeats 07]
#pragma unroll 1
  for (int s = 0; s < stages - 1; ++s) {
    if (kt_begin + s < kt_end) load(s, kt_begin + s);
    async_copy::commit_group();
  }
#pragma unroll 1
  for (int kt = kt_begin; kt < kt_end; ++kt) {
    async_copy::wait_group<stages - 2>();
    __syncthreads();  // slice kt is in, and every warp is done with the stage the next load overwrites
    const int next = kt + stages - 1;
    if (next < kt_end) load((next - kt_begin) % stages, next);
    async_copy::commit_group();
    multiply((kt - kt_begin) % stages, kt);
  }
  async_copy::wait_group<0>();
  // LAB END

  // Element (i, j, e) of the accumulators is C[8j + 2t + (e & 1)][n0 + 32·warp + 16i + g + 8·(e >> 1)].
  auto store = [&](int i, int j, const float(&v)[4]) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const long long row = 8 * j + 2 * t + (e & 1), col = n0 + warp * 32 + i * 16 + g + 8 * (e >> 1);
      const bool inside_c = col < p.n && row < p.m;
      if (inside_c) store_c(&p.c[row * p.ldc + col], v[e], p.alpha, p.beta);
    }
  };
  if (plan.split == 1) {
#pragma unroll
    for (int i = 0; i < 2; ++i)
#pragma unroll
      for (int j = 0; j < L::pieces; ++j) store(i, j, acc[i][j]);
    return;
  }
  // Split in k: this part's sums to the workspace (float4 (i·pieces + j)·128 + thread); the last to
  // finish adds every part in the order of k and writes C.
  float4* mine = partials + ((long long)tile * plan.split + part) * L::partial_float4s;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j)
      __stcg(mine + (i * L::pieces + j) * L::threads + threadIdx.x,
             make_float4(acc[i][j][0], acc[i][j][1], acc[i][j][2], acc[i][j][3]));
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = stream_k::last_part_in(counters + tile, plan.epoch, plan.split);
  __syncthreads();
  if (!last) return;
  __threadfence();
  const float4* parts = partials + (long long)tile * plan.split * L::partial_float4s;
#pragma unroll
  for (int i = 0; i < 2; ++i)
#pragma unroll
    for (int j = 0; j < L::pieces; ++j) {
      float sum[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      for (int s = 0; s < plan.split; ++s) {
        const float4 v =
            __ldcg(parts + (long long)s * L::partial_float4s + (i * L::pieces + j) * L::threads + threadIdx.x);
        sum[0] += v.x;
        sum[1] += v.y;
        sum[2] += v.z;
        sum[3] += v.w;
      }
      store(i, j, sum);
    }
}

// Calls f with the in-place width for M: the narrowest of 8 … 128 that holds M rows.
template <class F>
decltype(auto) with_in_place_width(int m, F&& f) {
  if (m <= 8) return f(std::integral_constant<int, 8>{});
  if (m <= 16) return f(std::integral_constant<int, 16>{});
  if (m <= 32) return f(std::integral_constant<int, 32>{});
  if (m <= 64) return f(std::integral_constant<int, 64>{});
  return f(std::integral_constant<int, 128>{});
}

// The parts in k (1 … in_place_max_split, each at least one slice) that finish soonest: a block takes
// its slices plus the pipeline's fill, blocks past the resident ones wait for a later wave, so the
// split minimizes waves × (slices + stages − 1), the fewest parts on a tie. The workspace: partials
// of width × 128 floats per (column tile, part), one counter per column tile.
template <int width>
InPlacePlan plan_in_place(Shape s) {
  using L = InPlaceLayout<width>;
  const int resident = resident_blocks<in_place_gemm<width>>(L::threads, L::shared_bytes);
  InPlacePlan plan{};
  plan.col_tiles = int(ceil_div(s.n, L::in_place_tile_n));
  plan.k_tiles = int(std::max<long long>(1, ceil_div(s.k, L::in_place_tile_k)));
  long long best = -1;
  for (int split = 1; split <= std::min(plan.k_tiles, L::in_place_max_split); ++split) {
    const long long waves = ceil_div((long long)plan.col_tiles * split, resident);
    const long long time = waves * (ceil_div(plan.k_tiles, split) + L::in_place_stages - 1);
    if (best < 0 || time < best) best = time, plan.split = split;
  }
  if ((long long)plan.col_tiles * plan.split > 2147483647LL) throw std::length_error("too many in-place blocks");
  plan.blocks = plan.col_tiles * plan.split;
  plan.partial_bytes = plan.split > 1 ? std::size_t(plan.blocks) * L::partial_float4s * sizeof(float4) : std::size_t(0);
  plan.counter_bytes = plan.split > 1 ? std::size_t(plan.col_tiles) * sizeof(unsigned long long) : std::size_t(0);
  return plan;
}

std::size_t in_place_workspace_bytes(Shape s) {
  return with_in_place_width(s.m, [&](auto width) {
    const InPlacePlan plan = plan_in_place<width>(s);
    return round_up_scratch(plan.partial_bytes) + plan.counter_bytes;
  });
}

void launch_in_place(const GemmProblem<__half>& p, cudaStream_t stream) {
  with_in_place_width(p.m, [&](auto width) {
    using L = InPlaceLayout<width>;
    InPlacePlan plan = plan_in_place<width>(Shape{p.m, p.n, p.k});
    float4* partials = nullptr;  // none without a split in k
    unsigned long long* counters = nullptr;
    if (plan.split > 1) {  // the workspace holds in_place_workspace_bytes (launch_padded checked its size)
      partials = static_cast<float4*>(p.workspace);
      counters = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(p.workspace) +
                                                       round_up_scratch(plan.partial_bytes));
      plan.epoch = stream_k::next_epoch();
    }
    in_place_gemm<width><<<plan.blocks, L::threads, L::shared_bytes, stream>>>(p, plan, partials, counters);
    WORKLOG_CHECK_LAUNCH();
  });
}

// ---- The decision ---------------------------------------------------------------------------------------

enum class Route {  // which path a problem takes
  step_12,          // 12's launcher on the operands (their padded copies where unaligned): swap kernel, or 11 above
  in_place,         // M ≤ in_place_max_m, B's rows unaligned: the in-place kernel reads A and B where they are
  swap_direct_c,    // M above 12's swap, C's rows unaligned, K ≤ direct_c_max_k: 12's swap kernel writes C
  staged_c,         // M above 12's swap, C's rows unaligned, K larger: 11 into a padded C, then copied out
};

struct Padding {
  Route route = Route::step_12;
  bool pad_a = false, pad_b = false, stage_c = false;
  long long k8 = 0, n8 = 0;  // K and N rounded up to a multiple of 8: the padded copies' leading dimensions
  std::size_t a_offset = 0, b_offset = 0, c_offset = 0;    // the padded A (M × K8), B (K × N8), C (M × N8 FP32)
  std::size_t rest_offset = 0, rest_bytes = 0, total = 0;  // the workspace of the path it hands over to; all
};

// The route and the copies, before any buffer is sized. a_ok, b_ok: TMA can describe A's and B's rows
// where they are (base and leading dimension 16-byte aligned); c_ok: so can 11's TMA store C's (and
// its rows end on a 16-byte chunk: N a multiple of 4).
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

// The decision, then its buffers, in this order, each on a 256-byte boundary; then the workspace of the
// path it hands over to.
// solve_workspace: the workspace of the launcher that solves the padded problem (12's for this step).
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
  d.rest_bytes = d.route == Route::in_place        ? in_place_workspace_bytes(s)
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

// solve: the launcher of the padded problem, which TMA can describe (12's for this step; a later step
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
  if (d.route == Route::in_place) return launch_in_place(q, stream);
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
    case Route::step_12:
      solve(q, stream);
      break;
    case Route::swap_direct_c:
      swap_ab::launch_swapped(q, stream);
      break;
    case Route::staged_c:
      solve(q, stream);  // M above the swap (12: 11), into the padded C
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

// Variants, for README.md's tables: each side of the decision forced.
struct PadAlways : PadConfig {  // B padded even for few rows: the copy where the rule reads in place
  static constexpr int in_place_max_m = 0;
};
struct CStaged : PadConfig {  // C always through a padded C and 11, never the swap kernel's stores
  static constexpr int direct_c_max_k = 0;
};
struct CDirect : PadConfig {  // C always written by the swap kernel's stores when its rows are unaligned
  static constexpr int direct_c_max_k = 1 << 30;
};

}  // namespace

void pad_unaligned::launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_padded<PadConfig>(p, stream); }
std::size_t pad_unaligned::workspace_bytes(Shape s, Strides t) { return padded_workspace_bytes<PadConfig>(s, t); }
void pad_unaligned::launch_with(const GemmProblem<__half>& p, cudaStream_t stream, Launcher<__half> solve,
                                WorkspaceSize solve_workspace) {
  launch_padded_with<PadConfig>(p, stream, solve, solve_workspace);
}
std::size_t pad_unaligned::workspace_bytes_with(Shape s, Strides t, WorkspaceSize solve_workspace) {
  return padded_workspace_bytes_with<PadConfig>(s, t, solve_workspace);
}

// The reuse tile is 12's (the roofline's model sees 11's tile, to which the large squares go).
WORKLOG_REGISTER_STEP(
    Step<__half>{"13_pad_unaligned", launch_padded<PadConfig>}
        .adds("unaligned rows: operands padded once into the workspace for 12's launcher, few rows read in place")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(padded_workspace_bytes<PadConfig>)
        .variant("pad_always", "the copy for every unaligned shape, few rows of A too (no in-place kernel)",
                 launch_padded<PadAlways>, padded_workspace_bytes<PadAlways>)
        .variant("c_staged", "C with unaligned rows always through a padded C and 11", launch_padded<CStaged>,
                 padded_workspace_bytes<CStaged>)
        .variant("c_direct", "C with unaligned rows always written by the swap kernel's stores", launch_padded<CDirect>,
                 padded_workspace_bytes<CDirect>))

}  // namespace worklog
