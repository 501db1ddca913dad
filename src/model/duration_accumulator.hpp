// Merges per-node duration statistics (count, moments, histogram) and turns them into
// DurationStats in nanoseconds.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::model {

class DurationAccumulator {
 public:
  /// Adds a group of `count` durations (in ticks) given as count, sum, min, max, mean and
  /// M2 (sum of squared deviations from the mean), plus their histogram buckets.
  void add(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max, double mean, double m2,
           const std::vector<std::pair<std::uint32_t, std::uint64_t>>& buckets);
  void merge(const DurationAccumulator& other);

  [[nodiscard]] std::uint64_t count() const noexcept { return count_; }
  [[nodiscard]] std::uint64_t sum_ticks() const noexcept { return sum_; }
  /// The statistics in nanoseconds, at `ns_per_tick`.
  [[nodiscard]] DurationStats to_stats(double ns_per_tick) const;
  /// The duration (ticks) at quantile q in (0, 1], by nearest rank on the histogram.
  [[nodiscard]] std::uint64_t quantile_ticks(double q) const;

 private:
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
  std::uint64_t min_ = ~std::uint64_t{0};
  std::uint64_t max_ = 0;
  double mean_ = 0.0;
  double m2_ = 0.0;
  std::map<std::uint32_t, std::uint64_t> buckets_;
};

}  // namespace nnprof::model
