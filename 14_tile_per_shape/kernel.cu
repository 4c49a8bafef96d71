// Step 14 (Hopper) — a tile for every shape: a menu of kernels, and a model that picks one.
//
// Change from 13: the Hopper kernel is a family. Steps 09 to 13 run one block tile, 128 × 256 (12:
// its swapped widths); a library runs many, and picks one per shape.
//   - 11's kernel (stream_k_kernel.cuh, a template over its configuration) with other tiles: 64 or
//     128 rows (one 64-row consumer warpgroup per wgmma_m, one or two of them), 64 to 256 columns
//     (the wgmma's n, a multiple of 64: one 64-column TMA box of B each), clusters of one or two
//     blocks, and as many pipeline stages as shared memory holds for that tile. The schedule is 11's
//     too (schedule.cuh), so every entry splits the tiles of its own last wave by 11's rule.
//   - The menu: a list of instantiations, each one line (menu_items below), each a variant of the step.
//   - The choice: a model predicts each entry's time on the shape from the work of its busiest
//     cluster under 11's plan (slices: whole waves, then its part of a split last wave; segments: a
//     pipeline fill and a write-back each; a fixup; slices whose rows start off a 128-byte line), each
//     term at a price that a calibration measured for that entry on this GPU (calibration.inc, written
//     by the calibrate tool beside this file from shapes of the entry's own waves, never a shape of the
//     corpus). It runs the cheapest.
//   - Best of menu (a variant): time every entry on the shape, in the process, and run the fastest:
//     the bound the model is judged against.
//   - Few columns: one column, or a few columns of few rows (a dot product, a matrix times a vector),
//     leave most tiles' columns empty and most SMs idle: a pass over A with K split over the GPU.
//   - Tiny K: with K ≤ 32 an element of C is one or two mma.sync k-steps, and the time is C's write:
//     a kernel of its own holds B's columns in registers and stores C by whole lines, any alignment.
//   - Small problems (every side ≤ small_max): 08's kernel with 32 × 32 tiles, one plain launch.
//   - Every other shape goes where the earlier steps answer it: few rows (M ≤ few_rows) to 12's
//     swapped family, whose widths follow M; rows TMA cannot describe to 13's padding.

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "08_mma_ldmatrix/mma_ldmatrix.hpp"
#include "11_stream_k/schedule.cuh"
#include "11_stream_k/stream_k_kernel.cuh"
#include "12_swap_ab/swap_ab.hpp"
#include "13_pad_unaligned/pad_unaligned.hpp"
#include "14_tile_per_shape/tile_per_shape.hpp"
#include "device_buffer.hpp"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "step.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;
using stream_k::Decomposition;
using stream_k::Schedule;

// ---- Configuration ------------------------------------------------------------------------------
// The knobs every entry of the menu shares, one a line; an entry (Tile) adds its tile and cluster.
struct Common {
  static constexpr int block_tile_k = 64;        // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int max_stages = 8;           // stages as fit in 227 KiB, no more: deeper gains nothing (README.md)
  static constexpr int group_rows = 8;           // grouped tile order: tile rows per group, as in 07 to 11
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few (11)
  static constexpr int c_buffers = 2;            // staging buffers per consumer: one fills while one drains
  static constexpr Decomposition decomposition = Decomposition::hybrid;  // 11's rule, on each entry's own waves
  static constexpr int split_k = 1;                                      // (Decomposition::split_k only)
  static constexpr int fixup_slices = 16;      // 11's estimate of what splitting costs a unit, in k-slices
  static constexpr int fixup_alone_units = 2;  // a tile split among this many units or fewer: fixed up by one (11)
};

// One entry of the menu: rows × cols block tiles, cluster blocks stacked vertically sharing B. 11's
// Layout (stream_k_kernel.cuh) derives the rest and checks each knob.
template <int rows, int cols, int cluster>
struct Tile : Common {
  static constexpr int block_tile_m = rows;     // 64 per consumer warpgroup
  static constexpr int block_tile_n = cols;     // the wgmma's n
  static constexpr int cluster_size = cluster;  // blocks on vertically adjacent tiles share each B slice
  // As many stages as fit beside the C staging buffers (at most max_stages), and every register the
  // producer leaves to the consumers (at most 232).
  static constexpr int stages = stream_k::stages_that_fit(rows, cols, Common::c_buffers, Common::max_stages);
  static constexpr int consumer_registers = stream_k::consumer_registers_left(rows, Common::producer_registers);
};

static_assert(tile_per_shape::few_rows <= swap_ab::max_m, "few_rows must not exceed what 12's swap takes");

// ---- Launch -----------------------------------------------------------------------------------------

// Bytes of workspace: the entry's partials and flags on the TMA path (11's), else 13's padded copies.
template <class Tile>
std::size_t workspace_bytes(Shape shape, Strides strides) {
  return stream_k::tma_strides_possible(shape, strides) ? stream_k::tma_workspace_bytes<Tile>(shape)
                                                        : pad_unaligned::workspace_bytes(shape, strides);
}

// One entry on any problem: 11's kernel with the entry's tile; rows TMA cannot describe go to 13
// (which pads them for 12 and 11).
template <class Tile>
void launch_tile(const GemmProblem<__half>& p, cudaStream_t stream) {
  if (!stream_k::tma_path_possible(p)) return pad_unaligned::launch(p, stream);
  stream_k::launch_tma<Tile>(p, stream, "14_tile_per_shape");
}

// ---- The menu ---------------------------------------------------------------------------------------
// Each entry one line of menu_items, below, with why it is there (README.md measures them).
using tile_per_shape::Entry;
using tile_per_shape::Work;
// The work of an entry's busiest cluster under its plan (tile_per_shape.hpp: Work). Worker w walks
// its unit, if any, then the whole tiles w, w + workers, … (11's Walk).
Work busiest_cluster(const stream_k::Plan& plan, Strides strides) {
  Work work{};
  // LAB BEGIN busiest_cluster
  const Schedule& schedule = plan.schedule;
  const long long whole_per_worker = ceil_div(schedule.tiles - schedule.sk_tiles, plan.workers);
  const long long units_per_worker = schedule.units > 0 ? ceil_div(schedule.units, plan.workers) : 0;
  const long long unit_slices = schedule.units > 0 ? schedule.q + (schedule.rem > 0 ? 1 : 0) : 0;
  const long long unit_segments = schedule.split > 0 ? 1 : 2;  // an even deal may cross one tile boundary
  const long long slices = whole_per_worker * schedule.k_tiles + units_per_worker * unit_slices;
  const bool off_lines = strides.lda % 64 != 0 || strides.ldb % 64 != 0;  // 64 halves: a 128-byte line
  work = {slices, whole_per_worker + units_per_worker * unit_segments, schedule.units > 0, off_lines ? slices : 0};
  // LAB END
  return work;
}

template <class T>
Work work_on_this_gpu(Shape shape, Strides strides) {
  return busiest_cluster(stream_k::plan_shape<T>(shape.m, shape.n, shape.k, stream_k::resident_clusters<T>()), strides);
}
// An entry's name, its variant's: menu_<rows>x<cols>_c<cluster>, made from the tile itself so that
// no list spells it again (calibration.inc prices entries by it).
template <int rows, int cols, int cluster>
const char* entry_name() {
  static const std::string name =
      "menu_" + std::to_string(rows) + "x" + std::to_string(cols) + "_c" + std::to_string(cluster);
  return name.c_str();
}
template <int rows, int cols, int cluster>
Entry item(const char* description) {
  using T = Tile<rows, cols, cluster>;
  return {entry_name<rows, cols, cluster>(),
          description,
          rows,
          cols,
          cluster,
          T::stages,
          launch_tile<T>,
          workspace_bytes<T>,
          stream_k::resident_clusters<T>,
          work_on_this_gpu<T>};
}
// The menu, written once: the registration below makes each entry a variant of the step, with its
// description, so that `--variant menu_128x256_c2` runs it and `--list-variants` lists it.
const std::vector<Entry>& menu_items() {
  static const std::vector<Entry> menu = {
      // 11's tile: the most reuse, for the large squares
      item<128, 256, 2>("128 × 256 tiles in clusters of 2 sharing B: 11's"),
      // twice the workers: a finer last wave
      item<128, 256, 1>("128 × 256 tiles, no cluster: twice the workers"),
      // three boxes of B: N in multiples of 192
      item<128, 192, 1>("128 × 192 tiles (three boxes of B), no cluster"),
      // half 11's tile: twice the tiles on mid-size shapes
      item<128, 128, 2>("128 × 128 tiles in clusters of 2"),
      item<128, 128, 1>("128 × 128 tiles, no cluster"),
      // few columns (N ≤ 64: early convolution layers)
      item<128, 64, 1>("128 × 64 tiles, no cluster: few columns"),
      // a quarter of 11's cluster tile: small squares, more tiles
      item<64, 256, 2>("64 × 256 tiles (one consumer) in clusters of 2"),
      // a quarter of 11's block tile: mid-size squares
      item<64, 128, 1>("64 × 128 tiles (one consumer), no cluster"),
      // the smallest: the most tiles
      item<64, 64, 1>("64 × 64 tiles (one consumer), no cluster: the most tiles"),
  };
  return menu;
}

// ---- The model ------------------------------------------------------------------------------------
// The price of each entry on a GPU, measured by the calibrate tool (README.md: the calibration).
using tile_per_shape::Calibration;
const std::vector<Calibration> calibration{
#include "14_tile_per_shape/calibration.inc"
};
const tile_per_shape::Model model_14{menu_items, &calibration};  // the menu above, at these prices

// The device the launch runs on: its name and multiprocessors, read once per device.
const cudaDeviceProp& device_properties() {
  static std::map<int, cudaDeviceProp> known;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  auto found = known.find(device);
  if (found == known.end()) {
    cudaDeviceProp properties{};
    CUDA_CHECK(cudaGetDeviceProperties(&properties, device));
    found = known.emplace(device, properties).first;
  }
  return found->second;
}

// The costs of an entry on this GPU: its own calibration, else (a GPU never calibrated) the first
// GPU's of the table, the ratios between entries being what the choice needs; none: not priced.
const tile_per_shape::Costs* costs_of(const Entry& e, const std::vector<Calibration>& prices) {
  const cudaDeviceProp& gpu = device_properties();
  const Calibration* fallback = nullptr;
  for (const Calibration& c : prices) {
    if (std::strcmp(c.entry, e.name) != 0) continue;
    if (std::strcmp(c.gpu, gpu.name) == 0 && c.sms == gpu.multiProcessorCount) return &c.costs;
    if (!fallback) fallback = &c;
  }
  return fallback ? &fallback->costs : nullptr;
}

// The entry the model picks for a TMA-describable shape: the cheapest priced one (the first on a
// tie); 11's tile when nothing is priced. A function of the shape, the strides' alignment and the GPU
// alone: the same problem runs the same kernel in every run, so results are the same bits. The pick
// is kept per shape: a launch of a few microseconds must not wait for nine plans on the host.
std::size_t choose(Shape shape, Strides strides, const tile_per_shape::Model& model) {
  static std::map<std::tuple<const void*, int, int, int, int, bool, bool>, std::size_t> picks;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(static_cast<const void*>(&model), device, shape.m, shape.n, shape.k,
                                   strides.lda % 64 == 0, strides.ldb % 64 == 0);
  if (auto found = picks.find(key); found != picks.end()) return found->second;
  const std::vector<Entry>& menu = model.entries();
  std::size_t best = 0;
  [[maybe_unused]] double best_us = -1.0;  // none priced yet (maybe unused: a student copy blanks the loop body)
  for (std::size_t i = 0; i < menu.size(); ++i) {
    const tile_per_shape::Costs* c = costs_of(menu[i], *model.prices);
    if (!c) continue;
    // LAB BEGIN choose [hard]
    const double us = tile_per_shape::predict_us(*c, menu[i].work(shape, strides));
    if (best_us < 0.0 || us < best_us) {
      best = i;
      best_us = us;
    }
    // LAB END
  }
  picks.emplace(key, best);
  return best;
}

// ---- Best of menu ---------------------------------------------------------------------------------
// The bound the model is judged by: every entry timed on the shape, in this process, on the problem's
// own A and B into a scratch C (beta 0: C itself is written once, by the launch that counts), the
// fastest kept for the shape. Not part of the step's answer: timings differ between runs, so two runs
// may pick different entries (and split K differently: other bits).
std::size_t fastest_entry(const GemmProblem<__half>& p, cudaStream_t stream, const tile_per_shape::Model& model) {
  static std::map<std::tuple<const void*, int, int, int, int, int, int, int>, std::size_t> picks;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const auto key = std::make_tuple(static_cast<const void*>(&model), device, p.m, p.n, p.k, p.lda, p.ldb, p.ldc);
  if (auto found = picks.find(key); found != picks.end()) return found->second;
  const std::vector<Entry>& menu = model.entries();
  DeviceBuffer<float> scratch(std::size_t(p.m) * p.ldc);
  // The timings' problem: C in the scratch buffer, beta 0 (C is not read); A, B and the workspace the launch's.
  GemmProblem<__half> q = make_problem(shape_of(p), p.alpha, 0.0f, p.a, p.b, scratch.data(), strides_of(p));
  q.workspace = p.workspace;
  q.workspace_bytes = p.workspace_bytes;
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  // Rounds over the whole menu, each entry's best round kept: a drift of the clock over the rounds
  // touches every entry alike.
  constexpr int rounds = 3, launches = 5;
  std::vector<float> best_ms(menu.size(), -1.0f);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < menu.size(); ++i) {
      if (menu[i].workspace(shape_of(p), strides_of(p)) > p.workspace_bytes) continue;
      menu[i].launch(q, stream);  // warm: the entry's first launch sets up its kernel
      CUDA_CHECK(cudaEventRecord(start, stream));
      for (int r = 0; r < launches; ++r) menu[i].launch(q, stream);
      CUDA_CHECK(cudaEventRecord(stop, stream));
      CUDA_CHECK(cudaEventSynchronize(stop));
      float ms = 0.0f;
      CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
      if (best_ms[i] < 0.0f || ms < best_ms[i]) best_ms[i] = ms;
    }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::size_t best = 0;
  for (std::size_t i = 1; i < menu.size(); ++i)
    if (best_ms[i] >= 0.0f && (best_ms[best] < 0.0f || best_ms[i] < best_ms[best])) best = i;
  picks.emplace(key, best);
  return best;
}

// ---- Few columns: one pass over A, K split over the GPU --------------------------------------------
// With N ≤ thin_max_n every tile of the menu is mostly columns that do not exist, and with M and N
// both small (a dot product, a GEMV by a few vectors) there are too few tiles to keep the SMs busy
// however small the tile. The work is then a pass over A (M × K) and B's few columns: a block takes
// one row of A and one part of K, its threads stride over that part (A's row read once, B's few
// columns from L2), and add up N sums. Enough parts in K for every SM to have blocks; the block that
// finishes a row's last part adds the parts' sums in the order of k (11's epochs: nothing to reset),
// so the result is the same bits in every run. Any alignment: the loads are scalar.
struct Thin {
  static constexpr int max_n = 8;                      // columns of C at most: one sum per column in each thread
  static constexpr int threads = 256;                  // per block, striding over the block's part of K
  static constexpr int blocks_per_sm = 8;              // blocks the parts aim for: enough loads in flight per SM
  static constexpr int min_part_k = 512;               // elements of K per part at least: two a thread, worth the sums
  static constexpr long long max_rows_by_cols = 2048;  // M·N at most, for 2 to 8 columns (thin())
};
static_assert(Thin::threads % 32 == 0 && Thin::threads / 32 <= 32, "Thin::threads must be whole warps, at most 32");

struct ThinPlan {
  int parts;         // parts of K per row
  long long part_k;  // elements of K per part (the last one fewer)
  std::size_t partial_bytes, counter_bytes;
};
ThinPlan plan_thin(Shape s, int sms) {
  ThinPlan plan{};
  const long long want = ceil_div((long long)sms * Thin::blocks_per_sm, s.m);  // parts per row for the GPU
  const long long most = std::max<long long>(1, s.k / Thin::min_part_k);
  plan.parts = int(std::max<long long>(1, std::min(want, most)));
  plan.part_k = ceil_div(ceil_div(s.k, plan.parts), 8) * 8;  // whole 16-byte chunks of A per part
  plan.parts = int(ceil_div(s.k, plan.part_k));
  plan.partial_bytes = plan.parts > 1 ? std::size_t(s.m) * plan.parts * Thin::max_n * sizeof(float) : 0;
  plan.counter_bytes = plan.parts > 1 ? std::size_t(s.m) * sizeof(unsigned long long) : 0;
  return plan;
}

// The sum of every thread's v, the same bits in every run: each warp's by shuffles in a fixed tree,
// then the warps' in order. Every thread of the block calls it; every thread gets the sum.
__device__ __forceinline__ float block_sum(float v, float (&scratch)[Thin::threads / 32]) {
  for (int offset = 16; offset > 0; offset /= 2) v += __shfl_down_sync(0xffffffffu, v, offset);
  if (threadIdx.x % 32 == 0) scratch[threadIdx.x / 32] = v;
  __syncthreads();
  float total = 0.0f;
  for (int w = 0; w < Thin::threads / 32; ++w) total += scratch[w];
  __syncthreads();  // scratch is free again
  return total;
}

// vector_a (N = 1 only): A's rows start on 16 bytes and K is a multiple of 8, so each thread loads 8
// halves of A at a time (16-byte loads keep enough bytes in flight for DRAM); vector_b: B is one
// contiguous column (ldb = 1), loaded alike. Otherwise each element by itself: consecutive threads
// read consecutive k, so B's rows too are read in order (with 16-byte loads of A a thread would take
// 8 rows of B, and a warp's load would touch 32 lines).
template <bool vector_a, bool vector_b>
__global__ void __launch_bounds__(Thin::threads)
    thin_gemm(const __grid_constant__ GemmProblem<__half> p, long long part_k, float* partials,
              unsigned long long* counters, unsigned epoch) {
  // Rows along y, then z (a grid's y holds at most 65535); parts of K along x.
  const long long row = (long long)blockIdx.z * gridDim.y + blockIdx.y;
  const int part = blockIdx.x, parts = gridDim.x;
  if (row >= p.m) return;  // the last z-slab's spare rows: the whole block, before any barrier
  const long long k0 = part * part_k, k1 = k0 + part_k < p.k ? k0 + part_k : p.k;
  const __half* a = p.a + (long long)row * p.lda;
  float sum[Thin::max_n] = {};
  if constexpr (vector_a) {
    for (long long k = k0 + 8 * threadIdx.x; k < k1; k += 8 * Thin::threads) {
      const uint4 a_chunk = *reinterpret_cast<const uint4*>(a + k);
      const __half* x = reinterpret_cast<const __half*>(&a_chunk);
      if constexpr (vector_b) {
        const uint4 b_chunk = *reinterpret_cast<const uint4*>(p.b + k);
        const __half* y = reinterpret_cast<const __half*>(&b_chunk);
#pragma unroll
        for (int i = 0; i < 8; ++i) sum[0] += __half2float(x[i]) * __half2float(y[i]);
      } else {
#pragma unroll
        for (int i = 0; i < 8; ++i) {
          const __half* b = p.b + (k + i) * p.ldb;
#pragma unroll
          for (int j = 0; j < Thin::max_n; ++j)
            if (j < p.n) sum[j] += __half2float(x[i]) * __half2float(b[j]);
        }
      }
    }
  } else {
    for (long long k = k0 + threadIdx.x; k < k1; k += Thin::threads) {
      const float x = __half2float(a[k]);
      const __half* b = p.b + k * p.ldb;
#pragma unroll
      for (int j = 0; j < Thin::max_n; ++j)
        if (j < p.n) sum[j] += x * __half2float(b[j]);
    }
  }
  // The block's sum of each column, in a fixed order (block_sum): thread 0 holds it.
  __shared__ float scratch[Thin::threads / 32];
  float total[Thin::max_n];
#pragma unroll
  for (int j = 0; j < Thin::max_n; ++j) total[j] = j < p.n ? block_sum(sum[j], scratch) : 0.0f;
  auto store = [&](int j, float value) {
    float* c = p.c + row * p.ldc + j;
    *c = p.beta != 0.0f ? p.alpha * value + p.beta * *c : p.alpha * value;
  };
  if (parts == 1) {
    if (threadIdx.x == 0)
      for (int j = 0; j < p.n; ++j) store(j, total[j]);
    return;
  }
  float* mine = partials + (row * parts + part) * Thin::max_n;
  if (threadIdx.x == 0)
    for (int j = 0; j < p.n; ++j) __stcg(mine + j, total[j]);
  __threadfence();
  __syncthreads();
  __shared__ bool last;
  if (threadIdx.x == 0) last = stream_k::last_part_in(counters + row, epoch, parts);
  __syncthreads();
  if (!last) return;
  __threadfence();
  // The last block adds the parts: thread t parts t, t + threads, … in order, then block_sum.
  for (int j = 0; j < p.n; ++j) {
    float v = 0.0f;
    for (int q = threadIdx.x; q < parts; q += Thin::threads)
      v += __ldcg(partials + (row * parts + q) * Thin::max_n + j);
    v = block_sum(v, scratch);
    if (threadIdx.x == 0) store(j, v);
  }
}

int multiprocessors() { return device_properties().multiProcessorCount; }

// The shapes the pass over A takes: one column, or few columns of few rows. With many rows and 2 to
// 8 columns a thread's scalar loads of A keep too few bytes in flight, and 12's and 13's tiles, wasteful
// as they are, run faster (README.md: measured).
bool thin(Shape s) { return s.n == 1 || (s.n <= Thin::max_n && (long long)s.m * s.n <= Thin::max_rows_by_cols); }

std::size_t thin_workspace_bytes(Shape shape) {
  const ThinPlan plan = plan_thin(shape, multiprocessors());
  return plan.partial_bytes + plan.counter_bytes;
}

void launch_thin(const GemmProblem<__half>& p, cudaStream_t stream) {
  const ThinPlan plan = plan_thin(shape_of(p), multiprocessors());
  float* partials = nullptr;
  unsigned long long* counters = nullptr;
  unsigned epoch = 0;
  if (plan.parts > 1) {
    if (!p.workspace || p.workspace_bytes < plan.partial_bytes + plan.counter_bytes)
      throw std::runtime_error("14_tile_per_shape: the few-columns path needs " +
                               std::to_string(plan.partial_bytes + plan.counter_bytes) + " bytes of workspace");
    partials = static_cast<float*>(p.workspace);
    counters = reinterpret_cast<unsigned long long*>(static_cast<unsigned char*>(p.workspace) + plan.partial_bytes);
    epoch = stream_k::next_epoch();
  }
  const unsigned rows_y = unsigned(std::min(p.m, 65535));
  const dim3 grid(unsigned(plan.parts), rows_y, unsigned(ceil_div(p.m, rows_y)));
  const bool vector_a = p.n == 1 && is_aligned(p.a, 16) && p.lda % 8 == 0 && p.k % 8 == 0;
  const bool vector_b = vector_a && p.n == 1 && p.ldb == 1 && is_aligned(p.b, 16);
  if (vector_b)
    thin_gemm<true, true><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  else if (vector_a)
    thin_gemm<true, false><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  else
    thin_gemm<false, false><<<grid, Thin::threads, 0, stream>>>(p, plan.part_k, partials, counters, epoch);
  WORKLOG_CHECK_LAUNCH();
}

// ---- Tiny K: a write of C ----------------------------------------------------------------------------
// With K ≤ TinyK::max_k an element of C is one or two mma.sync k-steps, and the time is C's write:
// M·N·4 bytes, against M·N·K·2 FLOPs. The menu's tiles stage C through shared memory, walk a pipeline
// with next to nothing in it, and on unaligned rows add 13's copies. Here a block owns a strip of
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
            store_c_streamed(p.c + row * p.ldc + col, c_stage[(warp / warps_n) * 16 + r][col - strip_col], p.alpha,
                             p.beta);
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
  const long long slots = (long long)multiprocessors() * TinyK::min_blocks_per_sm, units = stages * strips;
  const long long waves = ceil_div(units, slots * TinyK::max_band_stages);
  const int band_stages = int(std::min<long long>(TinyK::max_band_stages, ceil_div(units, slots * waves)));
  const long long blocks = strips * ceil_div(stages, band_stages);
  if (blocks > 2147483647LL) throw std::length_error("14_tile_per_shape: too many blocks for tiny K");
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

// ---- The step ---------------------------------------------------------------------------------------
// Few columns go to the pass over A above, tiny K to the write of C, small problems to 08's kernel
// with small tiles; rows TMA cannot describe to 13, few rows to 12's swapped family (its width
// follows M); every other shape to the menu's entry that the model picks (best of menu: the fastest
// measured).
using tile_per_shape::Route;
Route route_of_problem(const GemmProblem<__half>& p) {
  const bool bases_aligned = is_aligned(p.a, 16) && is_aligned(p.b, 16) && is_aligned(p.c, 16);
  return tile_per_shape::route_of(shape_of(p), strides_of(p), bases_aligned);
}

template <bool best_of_menu>
void launch_tile_per_shape(const GemmProblem<__half>& p, cudaStream_t stream) {
  switch (route_of_problem(p)) {
    case Route::pass_over_a:
      return launch_thin(p, stream);
    case Route::tiny_k:
      return launch_tiny_k(p, stream);
    case Route::small_problem:
      // A few microseconds of products, on which the menu's smallest tiles leave most SMs idle and 13
      // adds copies where rows are unaligned; 08's kernel with 32 × 32 tiles (mma_ldmatrix.hpp) is one
      // launch with no workspace and reads any alignment.
      return mma_ldmatrix::launch_small_tile(p, stream);
    case Route::padded:
      return pad_unaligned::launch(p, stream);
    case Route::few_rows:
      return swap_ab::launch(p, stream);
    case Route::menu:
      break;
  }
  const std::size_t pick =
      best_of_menu ? fastest_entry(p, stream, model_14) : choose(shape_of(p), strides_of(p), model_14);
  menu_items()[pick].launch(p, stream);
}

// The workspace of the route the shape takes (route_of, as the launch decides it). The pointers are
// not known yet: on the routes TMA can take, a launch whose operand starts off 16 bytes goes to 13
// instead, so those take the most of 13's (which covers 12's) and any entry's.
std::size_t tile_per_shape_workspace_bytes(Shape shape, Strides strides) {
  switch (tile_per_shape::route_of(shape, strides, true)) {
    case Route::pass_over_a:
      return thin_workspace_bytes(shape);
    case Route::tiny_k:
    case Route::small_problem:
      return 0;  // the write of C and 08's kernel need none
    case Route::padded:
    case Route::few_rows:
    case Route::menu:
      break;
  }
  std::size_t bytes = pad_unaligned::workspace_bytes(shape, strides);
  for (const Entry& e : menu_items()) bytes = std::max(bytes, e.workspace(shape, strides));
  return bytes;
}

}  // namespace

const std::vector<tile_per_shape::Entry>& tile_per_shape::menu() { return menu_items(); }
void tile_per_shape::launch_pass_over_a(const GemmProblem<__half>& p, cudaStream_t stream) {
  worklog::launch_thin(p, stream);
}
std::size_t tile_per_shape::pass_over_a_workspace_bytes(Shape shape) { return worklog::thin_workspace_bytes(shape); }
void tile_per_shape::launch_tiny_k(const GemmProblem<__half>& p, cudaStream_t stream) {
  worklog::launch_tiny_k(p, stream);
}
tile_per_shape::Work tile_per_shape::busiest_cluster(const stream_k::Plan& plan, Strides strides) {
  return worklog::busiest_cluster(plan, strides);
}
const char* tile_per_shape::route_name(Route route) {
  switch (route) {
    case Route::pass_over_a:
      return "pass over A";
    case Route::tiny_k:
      return "tiny K";
    case Route::small_problem:
      return "small problem";
    case Route::padded:
      return "13's padding";
    case Route::few_rows:
      return "12's few rows";
    case Route::menu:
      return "the menu";
  }
  return "?";
}
// The order of launch_tile_per_shape's decisions. TMA (the menu, 12's swap) needs A's and B's rows
// and bases on 16 bytes, and the menu's TMA store of C needs C's too, with whole 16-byte chunks a row
// (stream_k::tma_path_possible): what it cannot describe goes to 13.
tile_per_shape::Route tile_per_shape::route_of(Shape shape, Strides strides, bool bases_aligned) {
  if (thin(shape)) return Route::pass_over_a;
  if (tiny_k(shape)) return Route::tiny_k;
  if (small_problem(shape)) return Route::small_problem;
  if (!bases_aligned || !stream_k::tma_strides_possible(shape, strides)) return Route::padded;
  if (shape.m <= few_rows) return Route::few_rows;
  return Route::menu;
}
const tile_per_shape::Costs* tile_per_shape::costs(const Entry& e) { return costs_of(e, calibration); }
std::size_t tile_per_shape::pick(Shape shape, Strides strides) { return choose(shape, strides, model_14); }
const tile_per_shape::Costs* tile_per_shape::Model::costs(const Entry& e) const { return costs_of(e, *prices); }
std::size_t tile_per_shape::Model::pick(Shape shape, Strides strides) const { return choose(shape, strides, *this); }
std::size_t tile_per_shape::Model::fastest(const GemmProblem<__half>& p, cudaStream_t stream) const {
  return fastest_entry(p, stream, *this);
}

// The step with every entry of the menu as a variant of its own, in the menu's order. An entry's
// tile of reuse is its cluster's: the blocks of a cluster share each slice of B, so one fetch of B
// serves rows · cluster rows of C.
Step<__half> with_menu(Step<__half> step) {
  for (const Entry& e : menu_items())
    step = std::move(step).variant(e.name, e.description, e.launch, e.workspace, e.rows * e.cluster, e.cols);
  return step;
}

// The step, best of menu, and each entry of the menu (with_menu). wgmma and setmaxnreg exist on
// sm_90a alone: compute capability 9.0.
WORKLOG_REGISTER_STEP(with_menu(
    Step<__half>{"14_tile_per_shape", launch_tile_per_shape<false>}
        .adds("a menu of block tiles and clusters; a model of waves, slices and fixups picks one per shape")
        .reuses_tile(256, 256)
        .needs_compute_capability(90, 90)
        .needs_workspace(tile_per_shape_workspace_bytes)
        .variant("best_of_menu", "every entry timed on the shape in the process, the fastest run: the model's bound",
                 launch_tile_per_shape<true>, tile_per_shape_workspace_bytes)))

}  // namespace worklog
