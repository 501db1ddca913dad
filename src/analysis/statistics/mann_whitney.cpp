#include "analysis/statistics/mann_whitney.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <vector>

#include "analysis/statistics/normal.hpp"

namespace nnprof::analysis::statistics {

double mann_whitney_exact_cdf(std::size_t n1, std::size_t n2, double u) {
  if (u < 0.0) return 0.0;
  const std::size_t max_u = n1 * n2;
  if (u >= static_cast<double>(max_u)) return 1.0;
  // ways[j][v]: arrangements of i values of x and j values of y whose U (x above y) is v.
  // Adding one more x as the largest value puts it above all j values of y (+j); adding a y
  // as the largest adds nothing, which gives ways(i, j, v) = ways(i-1, j, v-j) + ways(i, j-1, v).
  std::vector<std::vector<double>> ways(n2 + 1, std::vector<double>(max_u + 1, 0.0));
  for (std::size_t j = 0; j <= n2; ++j) ways[j][0] = 1.0;  // i = 0: U is 0 in one way
  for (std::size_t i = 1; i <= n1; ++i) {
    // Row j = 0 stays "U = 0 in one way"; rows j > 0 are updated in increasing j so that
    // ways[j - 1] already holds row i while ways[j] still holds row i - 1.
    for (std::size_t j = 1; j <= n2; ++j) {
      std::vector<double>& row = ways[j];
      const std::vector<double>& left = ways[j - 1];
      for (std::size_t v = i * j + 1; v-- > 0;) {
        const double with_x_last = v >= j ? row[v - j] : 0.0;
        row[v] = with_x_last + left[v];
      }
    }
  }
  const std::vector<double>& counts = ways[n2];
  double below = 0.0;
  double total = 0.0;
  const auto limit = static_cast<std::size_t>(std::floor(u));
  for (std::size_t v = 0; v <= max_u; ++v) {
    total += counts[v];
    if (v <= limit) below += counts[v];
  }
  return below / total;
}

MannWhitneyResult mann_whitney_u(std::span<const double> x, std::span<const double> y, MannWhitneyMethod method) {
  MannWhitneyResult r;
  r.n1 = x.size();
  r.n2 = y.size();
  if (r.n1 == 0 || r.n2 == 0) return r;

  // Pool the samples, sort, and give each run of equal values its mean rank (midrank).
  struct Value {
    double v;
    bool from_x;
  };
  std::vector<Value> pooled;
  pooled.reserve(r.n1 + r.n2);
  for (const double v : x) pooled.push_back({v, true});
  for (const double v : y) pooled.push_back({v, false});
  std::sort(pooled.begin(), pooled.end(), [](const Value& a, const Value& b) { return a.v < b.v; });
  const std::size_t n = pooled.size();
  double rank_sum_x = 0.0;
  double tie_term = 0.0;  // sum over runs of equal values of t^3 - t
  for (std::size_t i = 0; i < n;) {
    std::size_t end = i + 1;
    while (end < n && pooled[end].v == pooled[i].v) ++end;
    const double t = static_cast<double>(end - i);
    const double midrank = (static_cast<double>(i + 1) + static_cast<double>(end)) / 2.0;
    for (std::size_t k = i; k < end; ++k)
      if (pooled[k].from_x) rank_sum_x += midrank;
    if (end - i > 1) {
      r.ties = true;
      tie_term += t * t * t - t;
    }
    i = end;
  }
  const double n1 = static_cast<double>(r.n1);
  const double n2 = static_cast<double>(r.n2);
  r.u1 = rank_sum_x - n1 * (n1 + 1.0) / 2.0;
  r.u2 = n1 * n2 - r.u1;
  const double u_max = std::max(r.u1, r.u2);

  const bool small = r.n1 <= kMannWhitneyExactMax && r.n2 <= kMannWhitneyExactMax;
  const bool exact = !r.ties && (method == MannWhitneyMethod::Exact ||
                                 (method == MannWhitneyMethod::Auto && small));
  if (exact) {
    // Two-sided: twice the smaller tail; the null distribution is symmetric about n1 n2 / 2,
    // so P(U >= u_max) = P(U <= n1 n2 - u_max).
    r.exact = true;
    r.p_value = std::min(1.0, 2.0 * mann_whitney_exact_cdf(r.n1, r.n2, n1 * n2 - u_max));
    return r;
  }
  const double total = n1 + n2;
  const double mean = n1 * n2 / 2.0;
  const double variance = n1 * n2 / 12.0 * ((total + 1.0) - tie_term / (total * (total - 1.0)));
  if (!(variance > 0.0)) {  // every value equal: no evidence of any difference
    r.p_value = 1.0;
    return r;
  }
  r.z = (u_max - mean - 0.5) / std::sqrt(variance);
  r.p_value = std::min(1.0, 2.0 * normal_upper_tail(r.z));
  return r;
}

}  // namespace nnprof::analysis::statistics
