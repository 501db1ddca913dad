#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <vector>

#include "model/duration_accumulator.hpp"
#include "nnprof/detail/histogram_buckets.hpp"

namespace {

using nnprof::detail::histogram_bucket;
using nnprof::detail::histogram_bucket_lower;
using nnprof::detail::histogram_bucket_width;
using nnprof::detail::kHistogramRows;
using nnprof::detail::kHistogramSubBuckets;

TEST(HistogramBuckets, SmallValuesAreExact) {
  for (std::uint64_t v = 0; v < 16; ++v) {
    const auto b = histogram_bucket(v);
    EXPECT_EQ(b.row, 0u);
    EXPECT_EQ(b.sub, v);
    EXPECT_EQ(histogram_bucket_lower(b.row, b.sub), v);
  }
}

TEST(HistogramBuckets, EveryValueFallsInsideItsBucket) {
  std::mt19937_64 rng(42);
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t v = rng() >> (rng() % 64);
    const auto b = histogram_bucket(v);
    ASSERT_LT(b.row, kHistogramRows);
    ASSERT_LT(b.sub, kHistogramSubBuckets);
    if (v >= (std::uint64_t{1} << 48)) continue;  // clamped into the last bucket
    const std::uint64_t lo = histogram_bucket_lower(b.row, b.sub);
    ASSERT_GE(v, lo);
    ASSERT_LT(v, lo + histogram_bucket_width(b.row));
    // Relative width bound: 1/16 of the lower edge.
    if (b.row > 0) {
      ASSERT_LE(histogram_bucket_width(b.row) * 16, lo);
    }
  }
}

TEST(HistogramBuckets, BucketsAreContiguousAndOrdered) {
  std::uint64_t expected = 0;
  for (unsigned row = 0; row < kHistogramRows; ++row)
    for (unsigned sub = 0; sub < kHistogramSubBuckets; ++sub) {
      ASSERT_EQ(histogram_bucket_lower(row, sub), expected) << row << "/" << sub;
      expected += histogram_bucket_width(row);
    }
}

// Feeds values into the accumulator as the hot path would: shifted moments and buckets.
nnprof::model::DurationAccumulator accumulate(const std::vector<std::uint64_t>& values) {
  std::map<std::uint32_t, std::uint64_t> buckets;
  std::uint64_t sum = 0;
  for (auto v : values) {
    const auto b = histogram_bucket(v);
    ++buckets[b.row * kHistogramSubBuckets + b.sub];
    sum += v;
  }
  const double n = static_cast<double>(values.size());
  const double mean = static_cast<double>(sum) / n;
  double m2 = 0;
  for (auto v : values) m2 += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  nnprof::model::DurationAccumulator acc;
  acc.add(values.size(), sum, *std::min_element(values.begin(), values.end()),
          *std::max_element(values.begin(), values.end()), mean, m2, {buckets.begin(), buckets.end()});
  return acc;
}

TEST(DurationAccumulator, PercentilesMatchASortedReferenceWithinBucketWidth) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> dist(10.0, 1.5);  // long-tailed, like real durations
  std::vector<std::uint64_t> values(100000);
  for (auto& v : values) v = static_cast<std::uint64_t>(dist(rng)) + 1;
  const auto acc = accumulate(values);
  std::vector<std::uint64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  for (double q : {0.5, 0.9, 0.95, 0.99, 0.999}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(sorted.size())));
    const double exact = static_cast<double>(sorted[rank - 1]);
    const double estimate = static_cast<double>(acc.quantile_ticks(q));
    EXPECT_NEAR(estimate / exact, 1.0, 1.0 / 32 + 1e-9) << "q=" << q;
  }
  EXPECT_EQ(acc.quantile_ticks(1.0), sorted.back());
}

TEST(DurationAccumulator, MergingGroupsGivesTheStatisticsOfTheWhole) {
  std::vector<std::uint64_t> a = {100, 200, 300, 400}, b = {1000, 1100, 900};
  std::vector<std::uint64_t> all = a;
  all.insert(all.end(), b.begin(), b.end());
  auto merged = accumulate(a);
  merged.merge(accumulate(b));
  const auto whole = accumulate(all);
  const auto s1 = merged.to_stats(1.0), s2 = whole.to_stats(1.0);
  EXPECT_EQ(s1.count, 7u);
  EXPECT_EQ(s1.sum_ns, 4000u);
  EXPECT_EQ(s1.min_ns, 100u);
  EXPECT_EQ(s1.max_ns, 1100u);
  EXPECT_NEAR(s1.mean_ns, 4000.0 / 7, 1e-9);
  EXPECT_NEAR(s1.stddev_ns, s2.stddev_ns, 1e-9);
  // Sample standard deviation of {100,200,300,400,1000,1100,900}: 416.0...(computed by hand)
  double mean = 4000.0 / 7, m2 = 0;
  for (auto v : all) m2 += (static_cast<double>(v) - mean) * (static_cast<double>(v) - mean);
  EXPECT_NEAR(s1.stddev_ns, std::sqrt(m2 / 6), 1e-9);
  EXPECT_EQ(s1.p50_ns, s2.p50_ns);
}

TEST(DurationAccumulator, ConvertsTicksToNanoseconds) {
  const auto acc = accumulate({1000, 3000});
  const auto s = acc.to_stats(0.5);
  EXPECT_EQ(s.sum_ns, 2000u);
  EXPECT_EQ(s.min_ns, 500u);
  EXPECT_EQ(s.max_ns, 1500u);
  EXPECT_DOUBLE_EQ(s.mean_ns, 1000.0);
}

TEST(DurationAccumulator, SingleValueHasExactPercentilesAndZeroDeviation) {
  const auto s = accumulate({123456}).to_stats(1.0);
  EXPECT_EQ(s.p50_ns, 123456u);
  EXPECT_EQ(s.p99_ns, 123456u);
  EXPECT_EQ(s.stddev_ns, 0.0);
}

}  // namespace
