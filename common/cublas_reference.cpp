#include "cublas_reference.hpp"

#include "cuda_check.hpp"

namespace worklog {

CublasHandle::CublasHandle() {
  CUBLAS_CHECK(cublasCreate(&handle_));
  // FP32 stays FP32: no TF32 tensor-core shortcut in the reference.
  CUBLAS_CHECK(cublasSetMathMode(handle_, CUBLAS_DEFAULT_MATH));
}
CublasHandle::~CublasHandle() { cublasDestroy(handle_); }

namespace {

template <class Input>
constexpr cudaDataType_t cuda_type();
template <>
constexpr cudaDataType_t cuda_type<float>() {
  return CUDA_R_32F;
}
template <>
constexpr cudaDataType_t cuda_type<__half>() {
  return CUDA_R_16F;
}

}  // namespace

template <class Input>
void cublas_gemm(cublasHandle_t handle, const GemmProblem<Input>& p) {
  // cuBLAS is column-major. A row-major M×N matrix is the column-major N×M matrix of its
  // transpose, so C = A·B row-major is Cᵀ = Bᵀ·Aᵀ column-major: swap the operands and M with N.
  // A row-major leading dimension is the column-major one of the transpose: the same numbers.
  CUBLAS_CHECK(cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &p.alpha, p.b, cuda_type<Input>(), p.ldb,
                            p.a, cuda_type<Input>(), p.lda, &p.beta, p.c, CUDA_R_32F, p.ldc, CUBLAS_COMPUTE_32F,
                            CUBLAS_GEMM_DEFAULT));
}

// The two input types the worklog uses.
template void cublas_gemm(cublasHandle_t, const GemmProblem<float>&);
template void cublas_gemm(cublasHandle_t, const GemmProblem<__half>&);

}  // namespace worklog
