// Host side of the tensor memory accelerator: the CUtensorMap that describes a row-major FP16 matrix
// in global memory and the box (tile) that one copy moves. Used by the Hopper steps 09 and 10.
//
// cuTensorMapEncodeTiled is a driver-API function. We reach it through the runtime
// (cudaGetDriverEntryPointByVersion) rather than linking libcuda: the runtime already loaded the
// driver, and the build needs no driver library, so it links on machines without one (CI).
#pragma once

#include <cuda.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"
#include "step.hpp"  // GemmProblem, find_step

namespace worklog {

// Whether TMA can describe a row-major matrix at `base` with `row_elements` FP16 per row: the base
// must be 16-byte aligned and so must every row stride (row_elements a multiple of 8).
inline bool tma_describable(const void* base, long long row_elements) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && row_elements % 8 == 0;
}

// The tensor map of a rows × cols row-major matrix of `element` type (FP16 or FP32), copied in boxes of
// box_rows × box_cols, in shared memory with the given swizzle. Elements outside the matrix read as
// zero and are not written.
inline CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType element, int element_bytes,
                                      long long rows, long long cols, int box_rows, int box_cols,
                                      CUtensorMapSwizzle swizzle) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function)
      throw std::runtime_error("the CUDA driver has no cuTensorMapEncodeTiled (a driver for CUDA 12 or newer is needed)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};  // innermost (contiguous) dimension first
  const cuuint64_t strides[1] = {cuuint64_t(cols) * element_bytes};  // bytes from one row to the next
  const cuuint32_t box[2] = {cuuint32_t(box_cols), cuuint32_t(box_rows)};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUresult status = encode(&map, element, 2, const_cast<void*>(base), dims, strides, box, element_strides,
                                 CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                 CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (status != CUDA_SUCCESS)
    throw std::runtime_error("cuTensorMapEncodeTiled failed (CUresult " + std::to_string(int(status)) + ") for a " +
                             std::to_string(rows) + "x" + std::to_string(cols) + " matrix, box " +
                             std::to_string(box_rows) + "x" + std::to_string(box_cols));
  return map;
}

// The tensor maps of A (M × K) and B (K × N) that the Hopper steps copy from, in boxes of
// a_box_rows rows × 64 k (A) and b_box_rows k × 64 columns (B): 64 FP16 are one 128-byte swizzled row.
struct OperandMaps {
  CUtensorMap a, b;
};
inline OperandMaps operand_tensor_maps(const GemmProblem<__half>& p, int a_box_rows, int b_box_rows) {
  constexpr int swizzled_row_halves = 64;
  return {make_tensor_map_2d(p.a, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.m, p.k, a_box_rows, swizzled_row_halves,
                             CU_TENSOR_MAP_SWIZZLE_128B),
          make_tensor_map_2d(p.b, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, 2, p.k, p.n, b_box_rows, swizzled_row_halves,
                             CU_TENSOR_MAP_SWIZZLE_128B)};
}

// When TMA cannot describe the problem (A's or B's rows not 16-byte aligned, or C not aligned to
// `c_alignment` bytes for the epilogue's wide accesses), launches the registered step
// `fallback_step` on it instead and returns true; returns false when the TMA path may run.
inline bool launch_fallback_unless_tma(const GemmProblem<__half>& p, cudaStream_t stream, const char* fallback_step,
                                       int c_alignment) {
  if (tma_describable(p.a, p.k) && tma_describable(p.b, p.n) &&
      reinterpret_cast<std::uintptr_t>(p.c) % c_alignment == 0)
    return false;
  const RegisteredStep* fallback = find_step(fallback_step);
  if (!fallback) throw std::logic_error(std::string(fallback_step) + " is not linked in (add_worklog_step FALLBACK)");
  fallback->fp16->launch(p, stream);
  return true;
}

}  // namespace worklog
