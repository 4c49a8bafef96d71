// Host side of the tensor memory accelerator: the CUtensorMap that describes a row-major matrix in
// global memory and the box (tile) that one copy moves. Used by the Hopper steps from 09 on.
//
// cuTensorMapEncodeTiled is a driver-API function. We reach it through the runtime
// (cudaGetDriverEntryPointByVersion) rather than linking libcuda: the runtime already loaded the
// driver, and the build needs no driver library, so it links on machines without one (CI).
#pragma once

#include <cuda.h>
#include <cudaTypedefs.h>  // PFN_cuTensorMapEncodeTiled
#include <cuda_runtime.h>

#include <cstdint>
#include <stdexcept>
#include <string>

#include "cuda_check.hpp"

namespace worklog {

// Whether TMA can describe a row-major matrix at `base` whose rows start `row_stride` elements of
// `element_bytes` apart: the base must be 16-byte aligned and so must the row stride in bytes. The
// row's length does not matter: what lies past it reads as zeros.
inline bool tma_describable(const void* base, long long row_stride, int element_bytes = 2) {
  return reinterpret_cast<std::uintptr_t>(base) % 16 == 0 && row_stride * element_bytes % 16 == 0;
}

// The tensor map of a rows × cols row-major matrix of `element` type (FP16 or FP32) whose rows start
// row_stride elements apart (its leading dimension), copied in boxes of box_rows × box_cols, in
// shared memory with the given swizzle. Elements outside the rows × cols read as zero and are not
// written: the gap between rows is never touched.
inline CUtensorMap make_tensor_map_2d(const void* base, CUtensorMapDataType element, int element_bytes, long long rows,
                                      long long cols, long long row_stride, int box_rows, int box_cols,
                                      CUtensorMapSwizzle swizzle) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = [] {
    void* function = nullptr;
    cudaDriverEntryPointQueryResult found{};
    CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &function, 12000, cudaEnableDefault, &found));
    if (found != cudaDriverEntryPointSuccess || !function)
      throw std::runtime_error(
          "the CUDA driver has no cuTensorMapEncodeTiled (a driver for CUDA 12 or newer is needed)");
    return reinterpret_cast<PFN_cuTensorMapEncodeTiled_v12000>(function);
  }();
  CUtensorMap map{};
  const cuuint64_t dims[2] = {cuuint64_t(cols), cuuint64_t(rows)};         // innermost (contiguous) dimension first
  const cuuint64_t strides[1] = {cuuint64_t(row_stride) * element_bytes};  // bytes from one row to the next
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

}  // namespace worklog
