#include "model/duration_accumulator.hpp"

#include <algorithm>
#include <cmath>

#include "nnprof/detail/histogram_buckets.hpp"

namespace nnprof::model {

void DurationAccumulator::add(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max,
                              double mean, double m2,
                              const std::vector<std::pair<std::uint32_t, std::uint64_t>>& buckets) {
  if (count == 0) return;
  // Chan et al.'s pairwise update: exact for any split of the data into groups.
  const double n_a = static_cast<double>(count_), n_b = static_cast<double>(count);
  const double n = n_a + n_b;
  const double delta = mean - mean_;
  mean_ += delta * n_b / n;
  m2_ += m2 + delta * delta * n_a * n_b / n;
  count_ += count;
  sum_ += sum;
  min_ = std::min(min_, min);
  max_ = std::max(max_, max);
  for (const auto& [bucket, c] : buckets) buckets_[bucket] += c;
}

void DurationAccumulator::merge(const DurationAccumulator& o) {
  if (o.count_ == 0) return;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> b(o.buckets_.begin(), o.buckets_.end());
  add(o.count_, o.sum_, o.min_, o.max_, o.mean_, o.m2_, b);
}

std::uint64_t DurationAccumulator::quantile_ticks(double q) const {
  if (count_ == 0) return 0;
  const auto rank = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(count_)));
  if (rank >= count_) return max_;  // the extremes are known exactly
  if (rank <= 1) return min_;
  std::uint64_t seen = 0;
  for (const auto& [bucket, c] : buckets_) {
    seen += c;
    if (seen >= std::max<std::uint64_t>(rank, 1)) {
      const unsigned row = bucket / detail::kHistogramSubBuckets;
      const unsigned sub = bucket % detail::kHistogramSubBuckets;
      const std::uint64_t lower = detail::histogram_bucket_lower(row, sub);
      const std::uint64_t mid = lower + (detail::histogram_bucket_width(row) - 1) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

DurationStats DurationAccumulator::to_stats(double ns_per_tick) const {
  DurationStats s;
  s.count = count_;
  if (count_ == 0) return s;
  auto ns = [ns_per_tick](double ticks) { return static_cast<std::uint64_t>(std::llround(ticks * ns_per_tick)); };
  s.sum_ns = ns(static_cast<double>(sum_));
  s.min_ns = ns(static_cast<double>(min_));
  s.max_ns = ns(static_cast<double>(max_));
  s.mean_ns = mean_ * ns_per_tick;
  s.stddev_ns = count_ > 1 ? std::sqrt(std::max(0.0, m2_) / static_cast<double>(count_ - 1)) * ns_per_tick : 0.0;
  s.p50_ns = ns(static_cast<double>(quantile_ticks(0.50)));
  s.p95_ns = ns(static_cast<double>(quantile_ticks(0.95)));
  s.p99_ns = ns(static_cast<double>(quantile_ticks(0.99)));
  return s;
}

}  // namespace nnprof::model
