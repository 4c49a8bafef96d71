// CPU reference GEMM in double precision, for the tests. Row-major, as everywhere in the worklog.
#pragma once

#include <cmath>
#include <vector>

#include "gemm_math.hpp"

namespace worklog::testing {

struct HostReference {
  std::vector<double> c;      // alpha·A·B + beta·C, computed in double
  std::vector<double> bound;  // |A|·|B|, the matrix the error bound is built from
};

// Double has 29 more significand bits than FP32, so next to an FP32 result this is exact enough to
// count as the true value. With beta == 0, C is not read (it may hold NaN).
inline HostReference reference_gemm(Shape s, float alpha, const std::vector<float>& a, const std::vector<float>& b,
                                    float beta, const std::vector<float>& c) {
  HostReference r{std::vector<double>(std::size_t(s.m) * s.n), std::vector<double>(std::size_t(s.m) * s.n)};
  for (int i = 0; i < s.m; ++i)
    for (int j = 0; j < s.n; ++j) {
      double sum = 0, abs_sum = 0;
      for (int p = 0; p < s.k; ++p) {
        const double x = a[std::size_t(i) * s.k + p], y = b[std::size_t(p) * s.n + j];
        sum += x * y;
        abs_sum += std::fabs(x) * std::fabs(y);
      }
      const std::size_t at = std::size_t(i) * s.n + j;
      r.c[at] = double(alpha) * sum + (beta == 0.0f ? 0.0 : double(beta) * c[at]);
      r.bound[at] = abs_sum;
    }
  return r;
}

}  // namespace worklog::testing
