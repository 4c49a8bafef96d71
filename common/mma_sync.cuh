// The warp-level tensor-core instructions below WMMA, one PTX instruction per wrapper: ldmatrix
// (shared memory → fragment registers) and mma.sync m16n8k16 (FP16 inputs, FP32 accumulators).
// Used by step 08 and its mma.sync microbenchmark. The register layouts are drawn in
// 08_mma_ldmatrix/README.md.
#pragma once

#include <cuda_runtime.h>

namespace worklog::mma_sync {

// ldmatrix.x4: the warp loads four 8 × 8 matrices of 16-bit elements from shared memory. Lanes
// 8j … 8j+7 give the shared addresses of the 8 rows (16 bytes each, 16-byte aligned) of matrix j;
// afterwards register j of lane l holds elements (l / 4, 2·(l % 4)) and (l / 4, 2·(l % 4) + 1) of
// matrix j: row l / 4, two neighbouring columns. Every row address is read by exactly one lane.
__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], unsigned shared_row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_row_address));
#else
  __trap();
#endif
}

// The same with each matrix transposed on the way: register j of lane l holds elements
// (2·(l % 4), l / 4) and (2·(l % 4) + 1, l / 4) of matrix j as stored: one column, two neighbouring
// rows. This turns a row-major (k-major) tile of B into the column-wise fragment mma.sync wants.
__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4], unsigned shared_row_address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 750
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_row_address));
#else
  __trap();
#endif
}

// d += a · b for one 16 × 8 × 16 piece, on the whole warp: a is 16 × 16 (4 registers of two FP16
// each per lane: "row" = A is read along its rows), b is 16 × 8 (2 registers: "col" = B is read
// along its columns), d is 16 × 8 in FP32 (4 floats per lane). Accumulation in FP32.
// Not volatile: it only reads and writes registers, so the compiler may schedule it freely.
__device__ __forceinline__ void mma_m16n8k16(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#else
  __trap();
#endif
}

}  // namespace worklog::mma_sync
