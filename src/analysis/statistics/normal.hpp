// The standard normal distribution's upper tail, for the large-sample approximations of the
// two-sample tests. std::erfc is accurate in the far tail, where 1 - Phi(z) would cancel.
#pragma once

#include <cmath>
#include <numbers>

namespace nnprof::analysis::statistics {

/// P(Z > z) for a standard normal Z.
inline double normal_upper_tail(double z) { return 0.5 * std::erfc(z / std::numbers::sqrt2); }

/// The two-sided p-value of a standard normal statistic: P(|Z| >= |z|), at most 1.
inline double normal_two_sided_p(double z) {
  const double p = 2.0 * normal_upper_tail(std::fabs(z));
  return p < 1.0 ? p : 1.0;
}

}  // namespace nnprof::analysis::statistics
