// Step 15's menu and model (step 15's idea; its README teaches them), compiled once for the steps
// that run them (14, and 15 over a larger menu): the stream-K kernel at nine block tiles and clusters
// (the menu), each entry's busiest cluster on a shape (slices, segments, fixups) priced at the prices
// measured on the GPU (tile_prices_15.csv), the cheapest run; and the routes that come first (few
// columns: pass_over_a.cuh, tiny K: tiny_k.cuh; launch_routes.cuh says their order).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "device_buffer.hpp"
#include "general_gemm.hpp"
#include "hopper.cuh"
#include "kernel_utils.cuh"
#include "mma_sync.cuh"
#include "sm90/pad_unaligned.hpp"
#include "sm90/pass_over_a.cuh"
#include "sm90/stream_k_kernel.cuh"
#include "sm90/stream_k_schedule.cuh"
#include "sm90/swap_gemm.hpp"
#include "sm90/tile_per_shape.hpp"
#include "sm90/tiny_k.cuh"
#include "step.hpp"
#include "tensor_map.hpp"
#include "watchdog.cuh"

namespace worklog {
namespace {

using namespace hopper;
using stream_k::Schedule;

// The most stages (at most `most`) of block_tile_m × block_tile_n tiles, 64-wide in k, that fit in
// shared memory beside the C staging buffers: Layout's shared_bytes, solved for the stages.
constexpr int stages_that_fit(int block_tile_m, int block_tile_n, int c_buffers, int most) {
  const int stage_bytes = (block_tile_m + block_tile_n) * swizzle_halves * 2;
  const int c_staging_bytes = block_tile_m / wgmma_m * c_buffers * wgmma_m * swizzle_bytes;
  const int fit = (max_shared_bytes_per_block - c_staging_bytes - swizzle_atom_bytes) / (stage_bytes + 16);
  return fit < most ? fit : most;
}

// The registers each consumer warpgroup's thread can take by setmaxnreg when the producer keeps
// producer_registers (what the block gets at launch, hopper.cuh, shared out in steps of 8), at most 232.
constexpr int consumer_registers_left(int block_tile_m, int producer_registers) {
  const int consumers = block_tile_m / wgmma_m, threads = warpgroup_threads * (1 + consumers);
  const int per_lane = launch_registers_per_thread(threads) * (1 + consumers);
  const int share = (per_lane - producer_registers) / consumers / 8 * 8;
  return share < 232 ? share : 232;
}

// ---- Configuration ------------------------------------------------------------------------------
// The knobs every entry of the menu shares, one a line; an entry (Tile) adds its tile and cluster.
struct Common {
  static constexpr int block_tile_k = 64;        // K per stage: one 128-byte swizzled row of A (64 FP16)
  static constexpr int max_stages = 8;           // stages as fit in 227 KiB, no more: deeper gains nothing (README.md)
  static constexpr int group_rows = 8;           // grouped tile order: tile rows per group, as in 07 to 11
  static constexpr int producer_registers = 40;  // after setmaxnreg: the copying thread needs few (11)
  static constexpr int c_buffers = 2;            // staging buffers per consumer: one fills while one drains
  using rule = stream_k::LastWaveInParts;        // 11's rule, on each entry's own waves
  static constexpr int fixup_slices = 16;        // 11's estimate of what splitting costs a unit, in k-slices
  using fixup = stream_k::SharedAbove<2>;        // tiles split among more than 2 units share their fixup (12)
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
  static constexpr int stages = stages_that_fit(rows, cols, Common::c_buffers, Common::max_stages);
  static constexpr int consumer_registers = consumer_registers_left(rows, Common::producer_registers);
};

static_assert(tile_per_shape::few_rows <= swap_ab::max_m, "few_rows must not exceed what 13's swap takes");

// ---- Launch -----------------------------------------------------------------------------------------

// Bytes of workspace: the entry's partials and flags on the TMA path (11's), else 14's padded copies.
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
  stream_k::launch_tma<Tile>(p, stream, "15_tile_per_shape");
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
  return tile_per_shape::busiest_cluster(
      stream_k::plan_shape<T>(shape.m, shape.n, shape.k, stream_k::resident_clusters<T>()), strides);
}
// The same on `resident` clusters, without the device (the route report), by the region's terms alone.
template <class T>
Work work_on_clusters(Shape shape, Strides strides, int resident) {
  return busiest_cluster(stream_k::plan_shape<T>(shape.m, shape.n, shape.k, resident), strides);
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
          work_on_this_gpu<T>,
          work_on_clusters<T>};
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
// The price of each entry on a GPU, measured by the calibrate tool (tools/calibrate_15.cu) into
// tile_prices_15.csv, which the build turns into prices_of_step(15).
using tile_per_shape::Calibration;
const tile_per_shape::Model& model_14() {  // the menu above, at these prices
  static const tile_per_shape::Model model{menu_items, &tile_per_shape::prices_of_step(15)};
  return model;
}

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
  Work work = worklog::busiest_cluster(plan, strides);
  // A split tile that its units do not fix up alone (stream_k_schedule.cuh: fixed_up_alone, more units
  // than the menu's fixup takes alone): its parts share the fixup, each waiting for all the others' flags.
  const Schedule& s = plan.schedule;
  for (long long tile = 0; s.units > 0 && tile < s.sk_tiles && !work.shared_fixup; ++tile)
    work.shared_fixup = !stream_k::fixed_up_alone(s, tile, Common::fixup::alone_units);
  return work;
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
      return "14's padding";
    case Route::few_rows:
      return "13's few rows";
    case Route::menu:
      return "the menu";
  }
  return "?";
}
// The order of the launch's decisions (launch_routes.cuh). TMA (the menu, 13's swap) needs A's and B's rows
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
const tile_per_shape::Costs* tile_per_shape::costs(const Entry& e) {
  return costs_of(e, tile_per_shape::prices_of_step(15));
}
const tile_per_shape::Model& tile_per_shape::model() { return model_14(); }
std::size_t tile_per_shape::pick(Shape shape, Strides strides) { return choose(shape, strides, model_14()); }
const tile_per_shape::Costs* tile_per_shape::Model::costs(const Entry& e) const { return costs_of(e, *prices); }
std::size_t tile_per_shape::Model::pick(Shape shape, Strides strides) const { return choose(shape, strides, *this); }
std::size_t tile_per_shape::Model::fastest(const GemmProblem<__half>& p, cudaStream_t stream) const {
  return fastest_entry(p, stream, *this);
}

// The step with every entry of the menu as a variant of its own, in the menu's order. An entry's
// tile of reuse is its cluster's: the blocks of a cluster share each slice of B, so one fetch of B

}  // namespace worklog
