// The calibration of a menu: the price of each entry on this GPU, for a model like 15's
// (common/sm90/tile_per_shape.cu). A step's calibrate tool (calibrate_15.cu, calibrate_16.cu) calls
// calibrate_main with its menu. For each
// entry it times a few shapes made to fill the entry's own resident clusters (one wave at K = 128,
// one, two and three at K = 512 and 4096, a wave and a half at K = 2048 and 4096, whose last half
// 11's rule splits in two, a third and a quarter of a wave, whose tiles it splits in three and four,
// and two with rows of A and B off 128-byte lines), takes the busiest cluster's work on each (its
// slices, segments, fixup, shared fixup and slices off lines: the model's terms) and fits the six
// prices by least squares. None of these shapes is a shape of the corpus: the model is judged on
// shapes it was not fitted to.
//
// Usage: <step>_calibrate [--help] [--out FILE] [--iters N] [--explain MxNxK]... Prints one line per
// entry (its fit and the worst relative error on its own shapes); with --out, rewrites FILE (the
// step's common/sm90/tile_prices_<step>.csv) with this GPU's rows replaced. --explain: each entry's terms, predicted
// and measured time on the shapes given, and the model's pick (the READMEs' tables). Exit codes as every program of the
// worklog (common/exit_codes.hpp): 0, 2 (bad argument), 4 (not compute capability 9.0), 5 (CUDA error), 77 (no usable
// CUDA device).
#pragma once

#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "cuda_check.hpp"
#include "device_buffer.hpp"
#include "device_select.hpp"  // program_name(), refuse_without_device()
#include "exit_codes.hpp"
#include "harness_timing.hpp"
#include "sm90/tile_per_shape.hpp"
#include "tool_cli.hpp"

namespace worklog::calibration {

// The menu a tool calibrates, and the step's own model over it.
struct Menu {
  const char* step;              // "step 15", in messages
  const char* calibration_file;  // where its prices live, for --help
  const std::vector<tile_per_shape::Entry>& (*entries)();
  std::size_t (*pick)(Shape shape, Strides strides);  // the model's pick among entries()
  const tile_per_shape::Costs* (*costs)(const tile_per_shape::Entry& entry);
};

namespace {

using worklog::Shape;
using worklog::Strides;
using worklog::tile_per_shape::Costs;
using worklog::tile_per_shape::Entry;
using worklog::tile_per_shape::Work;

// Values in [-1, 1) from a hash of the index: the tensor cores' time does not depend on them, and
// no value is zero or one everywhere.
__global__ void fill(__half* x, long long count, unsigned seed) {
  for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < count;
       i += (long long)gridDim.x * blockDim.x) {
    unsigned h = unsigned(i) * 2654435761u ^ seed;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    x[i] = __float2half(float(h & 0xffff) / 32768.0f - 1.0f);
  }
}

struct Sample {
  int m, n, k;
  Work work;
  double us;
};

// Tiles of rows × cols (a cluster tile) arranged as close to square as `tiles` allows.
void square_grid(long long tiles, int rows, int cols, int& m, int& n) {
  long long best = 1;
  double best_gap = 1e30;
  for (long long tm = 1; tm <= tiles; ++tm) {
    if (tiles % tm) continue;
    const double gap = std::fabs(double(tm) * rows - double(tiles / tm) * cols);
    if (gap < best_gap) {
      best = tm;
      best_gap = gap;
    }
  }
  m = int(best * rows);
  n = int(tiles / best * cols);
}

// The median time of `iters` launches of entry e on a shape (random operands, beta 0), in µs.
double time_entry(const Entry& e, Shape sh, Strides st, int iters) {
  using namespace worklog;
  DeviceBuffer<__half> a(std::size_t(sh.m) * st.lda), b(std::size_t(sh.k) * st.ldb);
  DeviceBuffer<float> c(std::size_t(sh.m) * st.ldc);
  fill<<<1024, 256>>>(a.data(), (long long)a.size(), 1u);
  fill<<<1024, 256>>>(b.data(), (long long)b.size(), 2u);
  CUDA_CHECK(cudaGetLastError());
  GemmProblem<__half> p = make_problem<__half>(sh, 1.0f, 0.0f, a.data(), b.data(), c.data(), st);
  DeviceBuffer<unsigned char> workspace(std::max<std::size_t>(1, e.workspace(sh, st)));
  CUDA_CHECK(cudaMemset(workspace.data(), 0, workspace.size()));
  p.workspace = workspace.data();
  p.workspace_bytes = workspace.size();
  // Warm, as the model was fitted (README.md: the calibration): the model prices work, not DRAM.
  return median_ms([&] { e.launch(p, 0); }, 3, iters, TimingMode::warm) * 1e3;
}

constexpr int prices = 6;  // Costs: launch, slice, segment, fixup, unaligned slice, shared fixup

// The model's terms of a sample: what each price is multiplied by.
void terms(const Work& w, double (&f)[prices]) {
  f[0] = 1.0;
  f[1] = double(w.slices);
  f[2] = double(w.segments);
  f[3] = w.fixup ? 1.0 : 0.0;
  f[4] = double(w.unaligned_slices);
  f[5] = w.shared_fixup ? 1.0 : 0.0;
}

// The least-squares prices: the normal equations, solved by Gaussian elimination with pivoting.
Costs fit(const std::vector<Sample>& samples) {
  double a[prices][prices] = {}, b[prices] = {};
  for (const Sample& s : samples) {
    double f[prices];
    terms(s.work, f);
    for (int i = 0; i < prices; ++i) {
      for (int j = 0; j < prices; ++j) a[i][j] += f[i] * f[j];
      b[i] += f[i] * s.us;
    }
  }
  // A term no sample has (an entry whose fixups are never shared: 13's swap kernel) is priced 0.
  for (int i = 0; i < prices; ++i)
    if (a[i][i] == 0.0) a[i][i] = 1.0;
  for (int c = 0; c < prices; ++c) {
    int pivot = c;
    for (int r = c + 1; r < prices; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    if (std::fabs(a[pivot][c]) < 1e-9) throw std::runtime_error("the calibration shapes do not determine the prices");
    for (int j = 0; j < prices; ++j) std::swap(a[c][j], a[pivot][j]);
    std::swap(b[c], b[pivot]);
    for (int r = 0; r < prices; ++r) {
      if (r == c) continue;
      const double factor = a[r][c] / a[c][c];
      for (int j = 0; j < prices; ++j) a[r][j] -= factor * a[c][j];
      b[r] -= factor * b[c];
    }
  }
  return {b[0] / a[0][0], b[1] / a[1][1], b[2] / a[2][2], b[3] / a[3][3], b[4] / a[4][4], b[5] / a[5][5]};
}

const char usage[] = R"(usage: %s [--help] [--out FILE] [--iters N] [--explain MxNxK]...
Times each entry of %s's menu on shapes that fill its resident clusters and fits the model's
six prices (launch, per k-slice, per segment, per fixup, per k-slice off lines, per fixup shared by a
tile's parts), in microseconds. Prints one line per entry;
--out FILE rewrites FILE (%s) with this GPU's rows replaced; rebuild to use them.
--iters N: timed launches per shape (median), default 15.
--explain MxNxK: instead, for each shape given, every entry's terms, the model's time, the measured
time, and the entry the model picks.
exit codes: 0 ok, 2 bad argument, 4 not compute capability 9.0, 5 CUDA error, 77 no CUDA device
)";

}  // namespace

inline int calibrate_main(int argc, char** argv, const Menu& model) {
  using namespace worklog;
  const std::string program = program_name(argc, argv, "calibrate");
  std::string out;
  int iters = 15;
  std::vector<Shape> explain;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--help" || arg == "-h") {
      std::printf(usage, program.c_str(), model.step, model.calibration_file);
      return exit_ok;
    }
    const bool has_value = i + 1 < argc;
    if (arg == "--out" && has_value) {
      out = argv[++i];
      continue;
    }
    if (arg == "--explain" && has_value) {
      Shape sh{};
      if (const auto code = tool::parse_shape(program, arg, argv[++i], sh.m, sh.n, sh.k)) return *code;
      explain.push_back(sh);
      continue;
    }
    if (arg == "--iters" && has_value) {
      if (const auto code = tool::parse_whole(program, arg, argv[++i], 1, 1000, iters)) return *code;
      continue;
    }
    return tool::unknown_argument(program, argv[i],
                                  !has_value && (arg == "--out" || arg == "--iters" || arg == "--explain"));
  }
  if (const auto refused = refuse_without_device(program)) return *refused;
  return tool::run_reporting_errors(program, [&]() -> int {
    cudaDeviceProp prop{};
    if (const auto refused = tool::refuse_unless_hopper(program, model.step, prop)) return *refused;
    if (!explain.empty()) {
      // Each entry's terms on the shape (packed operands), its predicted and measured time, the pick.
      for (const Shape& sh : explain) {
        const Strides st{sh.k, sh.n, sh.n};
        const std::size_t pick = model.pick(sh, st);
        std::printf("%dx%dx%d:\n", sh.m, sh.n, sh.k);
        // The step routes as 14 does (tile_per_shape::route_of): other routes than the menu are named.
        const tile_per_shape::Route route = tile_per_shape::route_of(sh, st, true);
        if (route != tile_per_shape::Route::menu)
          std::printf("  (%s runs this shape on its route \"%s\"; the pick marked below is the menu's)\n", model.step,
                      tile_per_shape::route_name(route));
        std::printf("  %-16s %7s %8s %6s %6s %11s %11s %7s\n", "entry", "slices", "segments", "fixup", "off",
                    "model µs", "measured µs", "error");
        const std::vector<Entry>& menu = model.entries();
        for (std::size_t i = 0; i < menu.size(); ++i) {
          const Entry& e = menu[i];
          const Work w = e.work(sh, st);
          const tile_per_shape::Costs* c = model.costs(e);
          const double predicted = c ? tile_per_shape::predict_us(*c, w) : 0.0, measured = time_entry(e, sh, st, iters);
          std::printf("  %-16s %7lld %8lld %6s %6s %11.1f %11.1f %+6.1f%%%s\n", e.name, w.slices, w.segments,
                      w.shared_fixup ? "shared"
                      : w.fixup      ? "yes"
                                     : "no",
                      w.unaligned_slices ? "yes" : "no", predicted, measured,
                      c ? 100.0 * (predicted / measured - 1.0) : 0.0, i == pick ? "  <- the model's pick" : "");
          std::fflush(stdout);
        }
      }
      return exit_ok;
    }
    std::ostringstream lines;
    for (const Entry& e : model.entries()) {
      const int workers = e.resident(), rows = e.rows * e.cluster;
      // (waves of tiles, K, rows of A and B off 128-byte lines): whole waves at three depths, a wave and
      // a half (the rule splits its half), and two shapes whose rows lie 8 halves past a line.
      const struct {
        long long tiles;
        int k;
        bool off_lines;
      } plan[] = {{workers, 128, false},
                  {workers, 512, false},
                  {workers, 4096, false},
                  {2LL * workers, 512, false},
                  {2LL * workers, 4096, false},
                  {3LL * workers, 512, false},
                  {3LL * workers, 4096, false},
                  {workers + workers / 2, 2048, false},
                  {workers + workers / 2, 4096, false},
                  {2LL * workers, 4096, true},
                  {3LL * workers, 2048, true},
                  {workers / 3, 2048, false},
                  {workers / 4, 4096, false}};
      std::vector<Sample> samples;
      for (const auto& shape : plan) {
        int m = 0, n = 0;
        square_grid(shape.tiles, rows, e.cols, m, n);
        const int k = shape.k, gap = shape.off_lines ? 8 : 0;
        const Shape sh{m, n, k};
        const Strides st{k + gap, n + gap, n};
        const double us = time_entry(e, sh, st, iters);
        samples.push_back({m, n, k, e.work(sh, st), us});
      }
      const Costs costs = fit(samples);
      double worst = 0.0;
      for (const Sample& s : samples)
        worst = std::max(worst, std::fabs(tile_per_shape::predict_us(costs, s.work) - s.us) / s.us);
      std::printf(
          "%-16s %d stages, %3d clusters: launch %6.2f µs, slice %.4f µs (+%.4f off lines), segment %6.3f µs, fixup "
          "%6.2f µs (+%.2f shared); worst fit error %.1f%%\n",
          e.name, e.stages, workers, costs.launch_us, costs.slice_us, costs.unaligned_slice_us, costs.segment_us,
          costs.fixup_us, costs.shared_fixup_us, 100.0 * worst);
      std::fflush(stdout);
      char line[512];
      std::snprintf(line, sizeof line, "%s,%d,%s,%.4f,%.6f,%.4f,%.4f,%.6f,%.4f\n", prop.name, prop.multiProcessorCount,
                    e.name, costs.launch_us, costs.slice_us, costs.segment_us, costs.fixup_us, costs.unaligned_slice_us,
                    costs.shared_fixup_us);
      lines << line;
    }
    if (!out.empty()) {
      // Keep the file's comments, its header row and other GPUs' rows; replace this GPU's.
      std::ifstream in(out);
      std::ostringstream kept;
      const std::string mine = std::string(prop.name) + "," + std::to_string(prop.multiProcessorCount) + ",";
      for (std::string line; std::getline(in, line);)
        if (line.rfind(mine, 0) != 0) kept << line << "\n";
      std::ofstream file(out);
      file << kept.str() << lines.str();
      if (!file) {
        std::fprintf(stderr, "%s: error: cannot write %s\n", program.c_str(), out.c_str());
        return exit_bad_argument;
      }
      std::printf("wrote %s\n", out.c_str());
    }
    return exit_ok;
  });
}

}  // namespace worklog::calibration
