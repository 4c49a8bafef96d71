// The spread of a timed figure: the 10th and 90th percentiles of its timed rounds, which the harness
// writes beside each median (report.cpp: ms_p10, ms_p90, cublas_ms_p10, cublas_ms_p90), so that a
// CSV row shows how far the figure moved from round to round. The 10th and 90th rather than the
// minimum and maximum: one round disturbed by the rest of the machine moves the extremes, not them.
// Host-only and header-only, so that the host tests check the arithmetic without a GPU.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <stdexcept>
#include <vector>

namespace worklog {

// The p-quantile of `values` (p from 0 to 1), interpolated linearly between the two closest ranks:
// rank (n - 1)·p of the sorted values, the definition NumPy's percentile and R's type 7 use, so that
// the 0.5 quantile of an even count is the mean of the middle two, as the harness's median takes it.
// Throws std::invalid_argument for no values or a p outside [0, 1] (a caller's mistake, not a user's).
inline double quantile(std::vector<double> values, double p) {
  if (values.empty()) throw std::invalid_argument("quantile of no values");
  if (!(p >= 0.0 && p <= 1.0)) throw std::invalid_argument("quantile: p must be between 0 and 1");
  std::sort(values.begin(), values.end());
  const double rank = double(values.size() - 1) * p;
  const std::size_t below = std::size_t(std::floor(rank));
  const std::size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (rank - double(below)) * (values[above] - values[below]);
}

// The 10th and 90th percentiles of one run's timed rounds, in ms.
struct Spread {
  double p10 = 0, p90 = 0;
};

inline Spread spread_of(const std::vector<double>& values) { return {quantile(values, 0.1), quantile(values, 0.9)}; }

}  // namespace worklog
