// The in-place route (in_place_rows.hpp): its kernel, the split of K, the launch.
#include <algorithm>
#include <type_traits>

#include "async_copy.cuh"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "sm90/in_place_rows.hpp"
#include "sm90/part_counter.cuh"  // last_part_in: the kernel's counters hold the launch's epoch

namespace worklog::in_place_rows {
namespace {

// ---- Configuration ------------------------------------------------------------------------------
struct InPlaceConfig {
  static constexpr int in_place_tile_n = 128;    // columns of C per block: 32 per warp, 4 warps
  static constexpr int in_place_tile_k = 32;     // k rows per stage: two k-steps of 16
  static constexpr int in_place_stages = 6;      // stages of the pipeline: 5 slices of B in flight
  static constexpr int in_place_max_split = 16;  // parts in k per column tile, at most
};

constexpr int halves_per_chunk = 8;             // one 16-byte chunk: what cp.async moves
constexpr std::size_t scratch_alignment = 256;  // the counters start on this boundary after the partials

static_assert(InPlaceConfig::in_place_tile_n == 4 * 32,
              "in_place_tile_n must be 128: 4 warps of 32 columns (2 mma m16)");
static_assert(InPlaceConfig::in_place_tile_k == 32, "in_place_tile_k must be 32: two k-steps of the m16n8k16 mma");
static_assert(InPlaceConfig::in_place_stages >= 2, "in_place_stages must be at least 2: copies overlap products");
static_assert(InPlaceConfig::in_place_max_split >= 1, "in_place_max_split must be at least 1 (1: no split in k)");

std::size_t round_up_scratch(std::size_t bytes) {
  return (bytes + scratch_alignment - 1) / scratch_alignment * scratch_alignment;
}

// ---- The kernel -----------------------------------------------------------------------------------
// A row begins `shift` halves (0 … 7) into its shared row, so fragments are read two bytes at a time
// (ldmatrix needs 16-byte rows). The block that finishes a column tile's last part adds the parts in
// k order.
template <int width>
struct InPlaceLayout : InPlaceConfig {
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

std::size_t workspace_of(Shape s) {
  return with_in_place_width(s.m, [&](auto width) {
    const InPlacePlan plan = plan_in_place<width>(s);
    return round_up_scratch(plan.partial_bytes) + plan.counter_bytes;
  });
}

void launch_on(const GemmProblem<__half>& p, cudaStream_t stream) {
  with_in_place_width(p.m, [&](auto width) {
    using L = InPlaceLayout<width>;
    InPlacePlan plan = plan_in_place<width>(Shape{p.m, p.n, p.k});
    float4* partials = nullptr;  // none without a split in k
    unsigned long long* counters = nullptr;
    if (plan.split > 1) {  // the workspace holds workspace_bytes (the caller checked its size)
      partials = static_cast<float4*>(p.workspace);
      counters = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(p.workspace) +
                                                       round_up_scratch(plan.partial_bytes));
      plan.epoch = stream_k::next_epoch();
    }
    in_place_gemm<width><<<plan.blocks, L::threads, L::shared_bytes, stream>>>(p, plan, partials, counters);
    WORKLOG_CHECK_LAUNCH();
  });
}

}  // namespace

void launch(const GemmProblem<__half>& p, cudaStream_t stream) { launch_on(p, stream); }
std::size_t workspace_bytes(Shape shape) { return workspace_of(shape); }

}  // namespace worklog::in_place_rows
