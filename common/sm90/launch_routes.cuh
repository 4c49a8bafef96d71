// The launch of a step that routes as 14 does (tile_per_shape::route_of), over the menu and prices of
// a model: 15's, or a later step's larger menu (15). Each problem's route is decided once, and the
// launch and its workspace read the same route:
//   - few columns, tiny K and small problems go to their own kernels (15's and 08's);
//   - rows TMA cannot describe are padded by 14's transform (pad_unaligned.hpp: launch_with), and the
//     padded problem comes back here, to the menu (13 itself hands it on to 12 and then 11's one tile);
//   - few rows go to 13's family (its width follows M), every other shape to the entry the model
//     picks (best of menu: the fastest measured in the process).
// The workspace is the route's: the picked entry's, or 14's copies plus what the padded problem's
// route needs; not the most of every route.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>

#include "gemm_math.hpp"
#include "general_gemm.hpp"
#include "kernel_utils.cuh"  // is_aligned
#include "sm90/pad_unaligned.hpp"
#include "sm90/swap_gemm.hpp"
#include "sm90/tile_per_shape.hpp"
#include "step.hpp"
#include "tensor_map.hpp"

namespace worklog::tile_per_shape {

template <const Model& (*model)(), bool best_of_menu>
struct Routes {
  // A problem whose A, B and C TMA can describe (11's conditions, or 14's padded copies).
  static void launch_aligned(const GemmProblem<__half>& p, cudaStream_t stream) {
    if (p.m <= few_rows) return swap_ab::launch(p, stream);
    const Model& m = model();
    const std::size_t pick = best_of_menu ? m.fastest(p, stream) : m.pick(shape_of(p), strides_of(p));
    m.entries()[pick].launch(p, stream);
  }
  static std::size_t aligned_workspace_bytes(Shape shape, Strides strides) {
    if (shape.m <= few_rows) return swap_ab::workspace_bytes(shape, strides);
    const Model& m = model();
    if (!best_of_menu) return m.entries()[m.pick(shape, strides)].workspace(shape, strides);
    std::size_t most = 0;  // best of menu may run any entry
    for (const Entry& e : m.entries()) most = std::max(most, e.workspace(shape, strides));
    return most;
  }

  static void launch(const GemmProblem<__half>& p, cudaStream_t stream) {
    const bool bases_aligned = is_aligned(p.a, 16) && is_aligned(p.b, 16) && is_aligned(p.c, 16);
    switch (route_of(shape_of(p), strides_of(p), bases_aligned)) {
      case Route::pass_over_a:
        return launch_pass_over_a(p, stream);
      case Route::tiny_k:
        return launch_tiny_k(p, stream);
      case Route::small_problem:
        // A few microseconds of products, on which the menu's smallest tiles leave most SMs idle and
        // 13 adds copies where rows are unaligned; 08.s kernel with 32 × 32 tiles (general_gemm.hpp)
        // is one launch with no workspace and reads any alignment.
        return general::launch_small_tile(p, stream);
      case Route::padded:
        return pad_unaligned::launch_with(p, stream, launch_aligned, aligned_workspace_bytes);
      case Route::few_rows:
      case Route::menu:
        return launch_aligned(p, stream);
    }
  }

  // Before there are pointers: the route of operands that start on 16 bytes. A base off 16 bytes
  // alone, with strides TMA can describe, then finds too small a workspace for 14's copies and goes
  // to 08's kernel (14's rule).
  static std::size_t workspace_bytes(Shape shape, Strides strides) {
    switch (route_of(shape, strides, true)) {
      case Route::pass_over_a:
        return pass_over_a_workspace_bytes(shape);
      case Route::tiny_k:
      case Route::small_problem:
        return 0;  // the write of C and 08's kernel need none
      case Route::padded:
        return pad_unaligned::workspace_bytes_with(shape, strides, aligned_workspace_bytes);
      case Route::few_rows:
      case Route::menu:
        break;
    }
    return aligned_workspace_bytes(shape, strides);
  }
};

}  // namespace worklog::tile_per_shape
