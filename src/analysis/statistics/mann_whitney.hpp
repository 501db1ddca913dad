// The Mann-Whitney U test (Wilcoxon rank-sum test) of two independent samples: does one
// tend to give larger values than the other? It assumes no distribution, which suits
// durations (skewed, heavy right tail) where a t-test on means would be led by outliers.
#pragma once

#include <cstddef>
#include <span>

namespace nnprof::analysis::statistics {

/// How the p-value is computed.
enum class MannWhitneyMethod {
  /// Exact when both samples have at most kMannWhitneyExactMax values and no value occurs
  /// twice in the pooled sample; the normal approximation otherwise.
  Auto,
  /// The exact null distribution of U (no ties allowed: with ties this falls back to the
  /// approximation, whose tie correction is the standard one).
  Exact,
  /// Normal approximation with tie correction and continuity correction (1/2).
  Asymptotic,
};

/// Largest sample size for which Auto uses the exact distribution (its table grows as
/// n1 * n2 * (n1 * n2 / 2); the normal approximation is good beyond).
inline constexpr std::size_t kMannWhitneyExactMax = 20;

struct MannWhitneyResult {
  std::size_t n1 = 0;         ///< size of the first sample (x)
  std::size_t n2 = 0;         ///< size of the second sample (y)
  double u1 = 0.0;            ///< pairs (x_i, y_j) with x_i > y_j, ties counted 1/2 (scipy's statistic)
  double u2 = 0.0;            ///< n1 * n2 - u1: pairs with y_j > x_i, ties counted 1/2
  double p_value = 1.0;       ///< two-sided: the distributions differ (1 when a sample is empty)
  double z = 0.0;             ///< normal statistic, with continuity correction (0 when exact)
  bool exact = false;         ///< p_value is from the exact null distribution
  bool ties = false;          ///< the pooled sample holds equal values

  /// P(Y > X) + P(Y = X) / 2 estimated over all pairs: the common-language effect size of
  /// "y is larger" (0.5: no tendency; 1: every y above every x). 0.5 when a sample is empty.
  [[nodiscard]] double prob_y_greater() const noexcept {
    const double pairs = static_cast<double>(n1) * static_cast<double>(n2);
    return pairs == 0.0 ? 0.5 : u2 / pairs;
  }
};

/// The two-sided Mann-Whitney U test of `x` against `y` (any order; neither is modified).
/// Ranks with midranks for ties. An empty sample gives p = 1.
MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y,
                                 MannWhitneyMethod method = MannWhitneyMethod::Auto);

/// P(U <= u) under the null hypothesis for samples of n1 and n2 distinct values, from the
/// exact distribution (counts of the arrangements of the pooled ranks, kept in doubles: exact
/// while C(n1 + n2, n1) < 2^53, i.e. for n1 = n2 up to 27). Cost: n1 * n2 * (n1 * n2 / 2).
double mann_whitney_exact_cdf(std::size_t n1, std::size_t n2, double u);

}  // namespace nnprof::analysis::statistics
