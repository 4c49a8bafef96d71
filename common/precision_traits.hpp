// What differs between the two input types of the worklog: the name printed and written to the
// CSV, and the unit roundoff of the FP32 accumulation that the error bound is built from.
#pragma once

#include <cuda_fp16.h>

#include "gemm_math.hpp"

namespace worklog {

template <class Input>
constexpr const char* precision_name();
template <>
constexpr const char* precision_name<float>() {
  return "fp32";
}
template <>
constexpr const char* precision_name<__half>() {
  return "fp16";
}

// Unit roundoff of the FP32 accumulation that each precision's kernels (and cuBLAS) perform.
template <class Input>
constexpr double accumulation_unit_roundoff();
template <>
constexpr double accumulation_unit_roundoff<float>() {
  return fp32_unit_roundoff;
}
template <>
constexpr double accumulation_unit_roundoff<__half>() {
  return tensor_core_fp32_unit_roundoff;
}

}  // namespace worklog
