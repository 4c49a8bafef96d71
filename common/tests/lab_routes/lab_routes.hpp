// lab_routes: which path each Hopper step (09 to 16) takes on a shape, and which of its LAB regions
// run there, worked out on the CPU from the steps' own launch logic. The lab kit times a student's
// kernel at one shape per step (lab/rubric.json, performance.sizes); lab/tests/test_performance_shapes.py
// runs this program on those shapes and fails where a region would not run, so that no step's
// performance points come free. No GPU needed.
//
// Each step's part lives in a file of its own (step_<NN>.cu beside this one), which asks the library
// under the steps for the rules and plans a step's launch applies (common/sm90/: the stream-K plan,
// the swap kernel's widths, 14's padding decision, 15's and 16's menus), or the step's registration
// for which problems its own kernel takes (Step::own_path: 09 and 10); none includes a step's file.
// What the launchers ask the device (how many clusters or blocks fit at once)
// is taken as one worker per SM, clusters of two on pairs of SMs: 66 clusters of 11's kernel on a GPU
// of 132 SMs, as 11's README counts them, and as 15's tile_model.csv, measured on an H100, confirms
// (lab/tests/test_performance_shapes.py compares). The files sit in a folder of their own: lab.py
// grade --no-gpu runs the programs of common/tests/*.cu as a step's host tests, and this program
// tests the rubric, not a student's kernel.
#pragma once

#include <cuda_fp16.h>

#include <string>
#include <utility>
#include <vector>

#include "gemm_math.hpp"
#include "step.hpp"

namespace worklog::lab_routes {

// The GPU the answers are for: its multiprocessors, and the name under which 15's calibration
// prices it ("": none, so 14 takes the first GPU of its table, as its launch does for a GPU it does
// not know). 15 asks only which entries its table prices, on any GPU.
struct Gpu {
  int sms = 132;
  std::string name;
};

// What one step does with one shape: the path it takes, each of its LAB regions by the name its
// marker gives it (`// LAB BEGIN <name>`; repeat regions too, in the order of its files) with whether
// it runs there, and facts worth printing (JSON values).
struct Route {
  std::string path;
  std::vector<std::pair<std::string, bool>> regions;
  std::vector<std::pair<std::string, std::string>> facts;

  void region(const std::string& name, bool runs) { regions.emplace_back(name, runs); }
  void fact(const std::string& name, long long value) { facts.emplace_back(name, std::to_string(value)); }
  void fact(const std::string& name, bool value) { facts.emplace_back(name, value ? "true" : "false"); }
  void fact(const std::string& name, const std::string& text) { facts.emplace_back(name, quoted(text)); }
  void fact_json(const std::string& name, const std::string& json) { facts.emplace_back(name, json); }
  static std::string quoted(const std::string& text);
};

// The problem the harness times at this shape: packed operands (lda = K, ldb = N, ldc = N) at
// addresses aligned as cudaMalloc aligns them. The pointers are never read.
GemmProblem<__half> packed_problem(Shape s);

Route route_09(Shape s, const Gpu& gpu);
Route route_10(Shape s, const Gpu& gpu);
Route route_11(Shape s, const Gpu& gpu);
Route route_12(Shape s, const Gpu& gpu);
Route route_13(Shape s, const Gpu& gpu);
Route route_14(Shape s, const Gpu& gpu);
Route route_15(Shape s, const Gpu& gpu);
Route route_16(Shape s, const Gpu& gpu);

}  // namespace worklog::lab_routes
