// Welch's two-sample test of means from summary statistics (count, mean, standard
// deviation): what remains when the individual values were not kept.
#pragma once

#include <cstdint>

namespace nnprof::analysis::statistics {

struct WelchResult {
  double t = 0.0;        ///< (mean2 - mean1) / standard error of the difference
  double df = 0.0;       ///< Welch-Satterthwaite degrees of freedom
  double p_value = 1.0;  ///< two-sided, from the normal approximation of Student's t
};

/// Smallest degrees of freedom at which the normal approximation of Student's t is used:
/// there the two-sided p at |t| = 2 is 0.046 instead of 0.054, a bias judged acceptable.
/// Below it the caller should not give a verdict.
inline constexpr double kWelchMinDf = 30.0;

/// Welch's t statistic for the difference of two means, its degrees of freedom, and its
/// two-sided p-value from the normal distribution (no Student-t CDF is available without a
/// new dependency; see kWelchMinDf). Needs n >= 2 on both sides. Two constant samples give
/// p = 1 when their means are equal and p = 0 otherwise.
WelchResult welch_test(std::uint64_t n1, double mean1, double sd1, std::uint64_t n2, double mean2, double sd2);

}  // namespace nnprof::analysis::statistics
