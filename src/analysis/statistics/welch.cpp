#include "analysis/statistics/welch.hpp"

#include <cmath>

#include "analysis/statistics/normal.hpp"

namespace nnprof::analysis::statistics {

WelchResult welch_test(std::uint64_t n1, double mean1, double sd1, std::uint64_t n2, double mean2, double sd2) {
  WelchResult r;
  if (n1 < 2 || n2 < 2) return r;
  const double a = sd1 * sd1 / static_cast<double>(n1);
  const double b = sd2 * sd2 / static_cast<double>(n2);
  const double se2 = a + b;
  const double diff = mean2 - mean1;
  if (!(se2 > 0.0)) {
    // Both samples constant: the means either are the same or differ without any doubt.
    r.df = static_cast<double>(n1 + n2 - 2);
    r.t = diff == 0.0 ? 0.0 : std::copysign(INFINITY, diff);
    r.p_value = diff == 0.0 ? 1.0 : 0.0;
    return r;
  }
  r.t = diff / std::sqrt(se2);
  r.df = se2 * se2 / (a * a / static_cast<double>(n1 - 1) + b * b / static_cast<double>(n2 - 1));
  r.p_value = normal_two_sided_p(r.t);
  return r;
}

}  // namespace nnprof::analysis::statistics
