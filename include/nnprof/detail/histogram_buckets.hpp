// Log-linear duration buckets shared by the hot path (which counts into them) and the model
// (which turns them into percentiles): values below 16 are exact, above that each power of
// two is split into 16 equal buckets, so any bucket is at most 1/16 of its lower bound wide.
#pragma once

#include <bit>
#include <cstdint>

namespace nnprof::detail {

inline constexpr unsigned kHistogramSubBuckets = 16;
inline constexpr unsigned kHistogramRows = 45;  // row 44 covers [2^47, 2^48); larger values clamp into it

struct BucketIndex {
  unsigned row;
  unsigned sub;
};

constexpr BucketIndex histogram_bucket(std::uint64_t v) noexcept {
  if (v < kHistogramSubBuckets) return {0, static_cast<unsigned>(v)};
  const unsigned e = 63u - static_cast<unsigned>(std::countl_zero(v));  // >= 4
  const unsigned row = e - 3u;
  if (row >= kHistogramRows) return {kHistogramRows - 1, kHistogramSubBuckets - 1};
  return {row, static_cast<unsigned>((v >> (e - 4u)) & (kHistogramSubBuckets - 1))};
}

/// Smallest value that falls into bucket (row, sub).
constexpr std::uint64_t histogram_bucket_lower(unsigned row, unsigned sub) noexcept {
  if (row == 0) return sub;
  return static_cast<std::uint64_t>(kHistogramSubBuckets + sub) << (row - 1);
}

/// Number of distinct values in bucket (row, sub).
constexpr std::uint64_t histogram_bucket_width(unsigned row) noexcept {
  return row == 0 ? 1 : std::uint64_t{1} << (row - 1);
}

}  // namespace nnprof::detail
