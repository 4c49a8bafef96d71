// The GPU tests' cases, shared by gpu_tests.cu (which runs them) and routes_15.cpp (which checks,
// without a GPU, that they take every route of step 15). Host-only.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "cli.hpp"  // InitialC
#include "gemm_math.hpp"

namespace worklog::testing {

struct Case {
  Shape shape;
  float alpha, beta;
  InitialC initial_c;
  Strides strides = {};  // packed unless given
};

inline bool packed(Shape s, Strides t) {
  const Strides r = resolve_strides(s, t), p = resolve_strides(s, {});
  return r.lda == p.lda && r.ldb == p.ldb && r.ldc == p.ldc;
}

inline std::string describe(const Case& c) {
  const Strides r = resolve_strides(c.shape, c.strides);
  return std::to_string(c.shape.m) + "x" + std::to_string(c.shape.n) + "x" + std::to_string(c.shape.k) +
         (packed(c.shape, c.strides)
              ? ""
              : " lda=" + std::to_string(r.lda) + " ldb=" + std::to_string(r.ldb) + " ldc=" + std::to_string(r.ldc)) +
         " alpha=" + std::to_string(c.alpha) + " beta=" + std::to_string(c.beta) +
         (c.initial_c == InitialC::nan ? " (C filled with NaN)" : "");
}

// Every shape with three (alpha, beta) settings: plain, general, and beta = 0 over a NaN-filled C,
// which must not leak into the result.
inline std::vector<Case> test_cases() {
  const std::vector<Shape> shapes = {
      {1, 1, 1},  // a single element
      // Few columns (15's pass over A, K in parts that the last block adds up): one column in 2 parts of
      // 2048 (16-byte loads of A and of B, one contiguous column), and 5 columns in 5 parts of 600.
      {1000, 1, 4096},
      {200, 5, 3000},
      {31, 33, 17},     // smaller than every tile
      {127, 129, 67},   // odd and prime-ish sizes: partial tiles on every side
      {1, 4099, 33},    // skinny: one row
      {4097, 3, 65},    // skinny: three columns
      {65, 67, 129},    // K = 8·16 + 1: one element past a whole number of every K slice
      {128, 128, 128},  // whole tiles of every step
      {256, 256, 256},  // several whole tiles, several K slices
      {200, 136, 264},  // multiples of 8 but not of 16 or 128: WMMA direct loads next to edge tiles
      {129, 132, 260},  // N and K multiples of 4, M not: 04's 16-byte loads next to partial tiles
      // Shapes for the pipelined steps (07 on), whose K slices are 32 or 64 wide and 2 to 5 deep:
      {136, 72, 24},     // aligned, K shorter than one slice
      {96, 200, 264},    // aligned, K = 4·64 + 8: several stages, then a partial last slice
      {130, 136, 257},   // K = 4·64 + 1: the unaligned path across several stages
      {2176, 2304, 72},  // 17 × 9 tiles of 128 × 256: a full wave of 132 SMs and a partial one
      // Shapes for stream-K (11), whose units' ranges of k-slices begin and end inside tiles, K not a
      // multiple of the 64-wide slice: few tiles and long K, so that every tile is split.
      {256, 256, 8200},    // one tile of 256 × 256, 129 slices, in 66 parts
      {128, 512, 3000},    // two tiles whose lower block lies below C, 47 slices each, in 33 parts
      {300, 264, 10000},   // four partial tiles, 157 slices each, in 16 parts
      {1536, 1280, 2176},  // 30 tiles of 34 slices, in 2 parts: the fixup by one unit alone
      {4352, 2304, 2056},  // 17 × 9 tiles of 256 × 256: two whole waves of 66 clusters, 21 tiles in 3 parts
      // Shapes for few rows of A (12: M is the wgmma's n, 8 to 256 wide, K dealt over every SM), with
      // aligned and odd N and K: M on both sides of each width, one slice past a whole number of them.
      {1, 1032, 4104},    // one row, 9 tiles of 65 slices over every unit
      {7, 4096, 520},     // width 8, 7 rows of it used
      {8, 2056, 1024},    // width 8, full
      {9, 264, 8200},     // width 16: 3 tiles of 129 slices over every unit
      {25, 1032, 8200},   // width 32: 9 tiles in 14 parts; the fixup adds 2 units' partials a batch, then 1
      {16, 4096, 4096},   // a decode layer: 32 tiles of 64 slices
      {5, 6136, 264},     // width 8: 96 whole tiles of 64 columns, the last of 56 (narrow_pays, K ≤ 4096)
      {100, 1000, 3000},  // width 128, a partial last tile of columns
      {128, 520, 2056},   // width 128, full
      {129, 264, 1032},   // width 256
      {100, 1001, 3001},  // odd N and K: the path for shapes TMA cannot describe
      // Shapes for unaligned operands (13: padded into the workspace, or read in place for few rows), with
      // K and N of every residue mod 8 between them, odd M, tiny K, and M on both sides of the in-place limit.
      {32, 130, 515},     // N ≡ 2, K ≡ 3 (mod 8): few rows, read in place (its widest tile used), K in parts
      {128, 1027, 2054},  // N ≡ 3, K ≡ 6: above the in-place limit, A and B padded for the swap kernel
      {129, 1028, 2052},  // N ≡ 4, K ≡ 4: one row more, A and B padded for the swap kernel
      {33, 1029, 1031},   // N ≡ 5, K ≡ 7: one row above the in-place limit: padded
      {200, 1030, 1029},  // N ≡ 6, K ≡ 5: padded, swap kernel
      {256, 1031, 1026},  // N ≡ 7, K ≡ 2: padded, the swap kernel's widest tile
      {7, 4096, 1},       // K = 1, N aligned: A padded, B read by TMA where it is (K rows)
      {300, 280, 17},     // K ≡ 1, M above the swap: A and B padded (K8 rows of B) for 11
      {300, 259, 3},      // tiny K, N ≡ 3: C written by the swap kernel's stores at M > 256
      {517, 263, 4100},   // N ≡ 7, K ≡ 4 above the direct-C limit: 11 into a padded C, copied out
      {1, 4097, 33},      // one row, N ≡ 1: in place
      {257, 33921, 24},   // N ≡ 1, 2 × 266 tiles of 256 × 128 (over 4 a block on 132 SMs): the swap kernel
                          // writes C through shared memory, a last tile row of one row, a last column of one
      // Shapes for tiny K (15's write of C: B's fragments in registers, A's rows staged, C by lines):
      // few columns in a 64-wide strip over many stages of rows, and K at the limit in 256-wide strips.
      {3001, 40, 27},   // 47 stages of 64 rows, the last of 57; K = 27: a second k-step of 11, then zeros
      {520, 1000, 32},  // K = 32, the most in registers; 4 strips of 256, the last of 232 columns
      {1100, 96, 20},   // rows of C on 128-byte lines (ldc 96): each warp stores its own piece; 96 of 128 columns
      // Shapes for small problems (14: every side ≤ 512, 08's kernel in 32 × 32 tiles, one launch):
      {512, 504, 512},  // M and K at the bound, N no multiple of 32: cp.async, a last column of tiles in part
      {255, 257, 129},  // every side odd: the element-wise copies, tiles cut on both edges and in K
  };
  // Operands with leading dimensions past their rows (the gaps hold NaN in A and B, values C must keep):
  // strides that keep 16-byte rows (the fast paths, now with rows whose length is no multiple of 8:
  // the last chunk of a row read in part, odd N in the epilogues) and strides that do not (the
  // correct paths: 08's element-wise copies, 14's copies and in-place kernel, C staged or direct).
  const std::vector<std::pair<Shape, Strides>> strided = {
      {{127, 129, 67}, {69, 131, 130}},         // unaligned strides, partial tiles everywhere
      {{127, 129, 67}, {72, 136, 132}},         // aligned strides, K and N odd
      {{136, 264, 200}, {201, 265, 267}},       // aligned shape, unaligned strides: every fast path refused
      {{130, 136, 257}, {264, 144, 140}},       // K ≡ 1 (mod 8) with aligned strides: cp.async and TMA take it
      {{4097, 3, 65}, {72, 8, 8}},              // N = 3 on the TMA path: the last column alone
      {{200, 137, 264}, {264, 144, 144}},       // odd N, aligned strides: the staged epilogue's last column
      {{256, 256, 8200}, {8208, 264, 260}},     // one tile split over every unit, strided
      {{16, 1032, 4104}, {4112, 1037, 1035}},   // few rows, B's rows unaligned by stride: 13 reads in place
      {{129, 1028, 2052}, {2056, 1032, 1030}},  // C's rows unaligned by stride: the swap kernel writes C
      {{517, 263, 4100}, {4104, 264, 266}},     // C unaligned above the direct-C limit: staged C
      {{1, 4099, 33}, {41, 4105, 4103}},        // one row, B unaligned: in place
      {{300, 280, 17}, {19, 283, 284}},         // K ≡ 1, everything unaligned: A and B padded for 11
      {{257, 33921, 24}, {24, 33928, 33921}},   // B aligned by stride, C's rows not: C through shared memory
                                                // with no copy (13), and in 13's swap_all
      {{3001, 40, 27}, {29, 41, 43}},           // tiny K, every stride odd (15's write of C)
      {{1000, 1, 4096}, {4104, 3, 5}},          // one column strided: 16-byte loads of A, B's elements one by one
      {{200, 5, 3000}, {3003, 7, 9}},           // 5 columns, every stride odd: the pass over A's scalar loads
      {{100, 1000, 3000}, {3008, 1008, 1004}},  // few rows, aligned strides past each row: 13's swap kernel (15's too)
      {{257, 33921, 24},
       {24, 33928, 33923}},  // ldc past N: the swap kernel writes C through shared memory (13, swap_all)
  };
  std::vector<Case> cases;
  auto add = [&](Shape s, Strides t) {
    cases.push_back({s, 1.0f, 0.0f, InitialC::random, t});
    cases.push_back({s, 0.75f, -0.5f, InitialC::random, t});
    cases.push_back({s, -1.25f, 0.0f, InitialC::nan, t});
  };
  for (const Shape& s : shapes) add(s, {});
  for (const auto& one : strided) add(one.first, one.second);
  return cases;
}

}  // namespace worklog::testing
