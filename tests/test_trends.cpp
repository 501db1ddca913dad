// Trends and anomalies (include/nnprof/trends.hpp) on simulated runs: 60 s windows, normal
// noise of 2-5% of the level from seeded generators, so every run of the test sees the same
// numbers. The detectors must find an injected step, leak and spike in the window where they
// start, and nothing in stationary series.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "nnprof/trends.hpp"

namespace {

using nnprof::Anomaly;
using nnprof::AnomalyKind;
using nnprof::WindowSeries;

constexpr std::uint64_t kWindowNs = 60'000'000'000ULL;  // 60 s
constexpr double kStepNs = 1e8;                         // 100 ms per training step
constexpr double kRssBytes = 2.0 * 1024 * 1024 * 1024;  // 2 GiB

/// `n` windows whose value is level(i) * (1 + noise * N(0, 1)).
WindowSeries simulate(std::string metric, std::string unit, std::size_t n, double noise, std::uint64_t seed,
                      const std::function<double(std::size_t)>& level, bool higher_is_worse = true) {
  WindowSeries s;
  s.metric = std::move(metric);
  s.unit = std::move(unit);
  s.higher_is_worse = higher_is_worse;
  std::mt19937_64 rng(seed);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (std::size_t i = 0; i < n; ++i) {
    s.window_start_ns.push_back(i * kWindowNs);
    s.values.push_back(level(i) * (1.0 + noise * normal(rng)));
  }
  return s;
}

std::size_t count_kind(const std::vector<Anomaly>& events, AnomalyKind kind) {
  std::size_t n = 0;
  for (const Anomaly& a : events) n += a.kind == kind ? 1 : 0;
  return n;
}

std::string describe(const std::vector<Anomaly>& events) {
  std::string text;
  for (const Anomaly& a : events) text += std::string(nnprof::to_string(a.kind)) + ": " + a.description + "\n";
  return text;
}

const auto kFlatStep = [](std::size_t) { return kStepNs; };
const auto kFlatRss = [](std::size_t) { return kRssBytes; };

// A simulated week (10,080 windows of 60 s): step time, RSS and throughput without any change
// give no event of any kind, and no significant trend.
TEST(Trends, StationaryWeekYieldsNothing) {
  const std::vector<WindowSeries> week = {
      simulate("step_time", "ns", 10'080, 0.03, 1, kFlatStep),
      simulate("rss", "B", 10'080, 0.02, 2, kFlatRss),
      simulate("throughput", "samples/s", 10'080, 0.05, 3, [](std::size_t) { return 640.0; }, false),
  };
  const std::vector<Anomaly> events = nnprof::detect_anomalies(week);
  EXPECT_TRUE(events.empty()) << describe(events);
  for (const WindowSeries& s : week) {
    const nnprof::Trend t = nnprof::trend(s);
    EXPECT_EQ(t.windows, 10'080U);
    EXPECT_FALSE(t.significant) << s.metric << ": slope " << t.slope_per_hour << " in [" << t.low << ", " << t.high << "]";
    EXPECT_LE(t.low, 0.0);
    EXPECT_GE(t.high, 0.0);
  }
}

// 20 seeds x 1,000 windows at 2% and 5% noise: not one event. (With textbook settings, CUSUM
// k = 0.5 and h = 12 and outliers at a Bonferroni 1% level against the neighbours' MAD alone,
// 400 such series gave 5 false level shifts and 44 false outliers; with the defaults, none.)
TEST(Trends, StationarySeriesOfManySeedsYieldNothing) {
  for (std::uint64_t seed = 100; seed < 120; ++seed) {
    const double noise = seed % 2 == 0 ? 0.02 : 0.05;
    const std::vector<Anomaly> events = nnprof::detect_anomalies(simulate("step_time", "ns", 1000, noise, seed, kFlatStep));
    EXPECT_TRUE(events.empty()) << "seed " << seed << "\n" << describe(events);
  }
}

// +20% step time from window 600 on: one level shift, at window 600. At 2% noise the step is
// 10 sigma and is located exactly; at 5% it is 4 sigma, and the first window after the step
// can fall within 2 sigma of the old level, so the estimate may be a window off (over 200
// simulated runs: 176 exact, all within 2 windows). The tolerance is 2 windows either way.
TEST(Trends, StepTimeJumpIsOneLevelShiftWhereItBegins) {
  const auto jump = [](std::size_t i) { return i >= 600 ? 1.2 * kStepNs : kStepNs; };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    for (const double noise : {0.02, 0.05}) {
      const std::vector<Anomaly> events = nnprof::detect_anomalies(simulate("step_time", "ns", 1000, noise, seed, jump));
      ASSERT_EQ(events.size(), 1U) << "seed " << seed << " noise " << noise << "\n" << describe(events);
      const Anomaly& shift = events.front();
      EXPECT_EQ(shift.kind, AnomalyKind::LevelShift);
      if (noise == 0.02) {
        EXPECT_EQ(shift.window, 600U) << "seed " << seed;
      } else {
        EXPECT_GE(shift.window, 598U) << "seed " << seed;
        EXPECT_LE(shift.window, 602U) << "seed " << seed;
      }
      EXPECT_EQ(shift.window_start_ns, shift.window * kWindowNs);
      // Medians of up to 60 windows: within 5 of their standard errors.
      const double tolerance = noise == 0.02 ? 0.02 : 0.04;
      EXPECT_NEAR(shift.before, kStepNs, tolerance * kStepNs);
      EXPECT_NEAR(shift.after, 1.2 * kStepNs, tolerance * kStepNs);
      EXPECT_NEAR(shift.magnitude, 0.2, 1.5 * tolerance);
      EXPECT_TRUE(shift.worse);
      EXPECT_GT(shift.score, 3.0);
      EXPECT_NE(shift.description.find("window " + std::to_string(shift.window)), std::string::npos) << shift.description;
      EXPECT_NE(shift.description.find(" ms to 1"), std::string::npos) << shift.description;
    }
  }
}

// The same jump on day 4 of a simulated week (window 6,000 of 10,080), and a throughput drop
// (higher is better): each one event, in its window, the drop marked worse.
TEST(Trends, JumpInAWeekAndThroughputDrop) {
  const std::vector<Anomaly> week = nnprof::detect_anomalies(
      simulate("step_time", "ns", 10'080, 0.03, 7, [](std::size_t i) { return i >= 6000 ? 1.2 * kStepNs : kStepNs; }));
  ASSERT_EQ(week.size(), 1U) << describe(week);
  EXPECT_EQ(week.front().kind, AnomalyKind::LevelShift);
  EXPECT_EQ(week.front().window, 6000U);

  const std::vector<Anomaly> drop = nnprof::detect_anomalies(simulate(
      "throughput", "samples/s", 1000, 0.03, 8, [](std::size_t i) { return i >= 300 ? 480.0 : 640.0; }, false));
  ASSERT_EQ(drop.size(), 1U) << describe(drop);
  EXPECT_EQ(drop.front().kind, AnomalyKind::LevelShift);
  EXPECT_EQ(drop.front().window, 300U);
  EXPECT_NEAR(drop.front().magnitude, -0.25, 0.03);
  EXPECT_TRUE(drop.front().worse);
  EXPECT_NE(drop.front().description.find(" fell "), std::string::npos) << drop.front().description;
}

// RSS rising by 0.1% of its level per window (6% per hour) from window 400 on, with 2% noise:
// one Growth, no level shifts (the CUSUM runs on the values less the growth line) and no
// outliers. Where growth begins is the hinge of a least-squares fit; its first windows add
// less than the noise, so it is known to a few windows (200 simulated runs: all within 6).
TEST(Trends, LeakIsOneGrowthWhereItBegins) {
  const auto leak = [](std::size_t i) { return kRssBytes * (1.0 + (i >= 400 ? 0.001 * static_cast<double>(i - 400) : 0.0)); };
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const WindowSeries rss = simulate("rss", "B", 1000, 0.02, seed, leak);
    const std::vector<Anomaly> events = nnprof::detect_anomalies(rss);
    ASSERT_EQ(events.size(), 1U) << "seed " << seed << "\n" << describe(events);
    const Anomaly& growth = events.front();
    EXPECT_EQ(growth.kind, AnomalyKind::Growth);
    EXPECT_GE(growth.window, 394U) << "seed " << seed;
    EXPECT_LE(growth.window, 406U) << "seed " << seed;
    EXPECT_NEAR(growth.before, kRssBytes, 0.03 * kRssBytes);
    EXPECT_NEAR(growth.after, 1.599 * kRssBytes, 0.05 * kRssBytes);
    EXPECT_NEAR(growth.magnitude, 0.06, 0.01);  // per hour, relative to the level where it began
    EXPECT_TRUE(growth.worse);
    EXPECT_GT(growth.score, 10.0);
    EXPECT_NE(growth.description.find("GiB"), std::string::npos) << growth.description;

    const nnprof::Trend t = nnprof::trend(rss);
    EXPECT_TRUE(t.significant);
    EXPECT_GT(t.slope_per_hour, 0.0);
  }
  // The same RSS without the leak: nothing.
  for (std::uint64_t seed = 1; seed <= 10; ++seed) {
    const std::vector<Anomaly> events = nnprof::detect_anomalies(simulate("rss", "B", 1000, 0.02, seed, kFlatRss));
    EXPECT_TRUE(events.empty()) << "seed " << seed << "\n" << describe(events);
  }
}

// A slow leak over a week: +50% over the last 6,080 windows, from window 4,000 (0.008% of the
// level per window against 2% noise). 40 simulated runs put its start within 13 windows.
TEST(Trends, SlowLeakInAWeek) {
  const auto leak = [](std::size_t i) {
    return kRssBytes * (1.0 + (i >= 4000 ? 0.5 * static_cast<double>(i - 4000) / 6080.0 : 0.0));
  };
  const std::vector<Anomaly> events = nnprof::detect_anomalies(simulate("rss", "B", 10'080, 0.02, 11, leak));
  ASSERT_EQ(events.size(), 1U) << describe(events);
  EXPECT_EQ(events.front().kind, AnomalyKind::Growth);
  EXPECT_NEAR(static_cast<double>(events.front().window), 4000.0, 20.0);
}

// One window at 3x the step time (a checkpoint): one Outlier there, no level shift. Two in a
// row are two outliers; five in a row are no outliers but a level change up and back.
TEST(Trends, SpikeIsOneOutlierAndARunIsALevelChange) {
  const auto spikes = [](std::size_t first, std::size_t count) {
    return [first, count](std::size_t i) { return i >= first && i < first + count ? 3.0 * kStepNs : kStepNs; };
  };
  const std::vector<Anomaly> one = nnprof::detect_anomalies(simulate("step_time", "ns", 1000, 0.03, 21, spikes(250, 1)));
  ASSERT_EQ(one.size(), 1U) << describe(one);
  EXPECT_EQ(one.front().kind, AnomalyKind::Outlier);
  EXPECT_EQ(one.front().window, 250U);
  EXPECT_NEAR(one.front().before, kStepNs, 0.02 * kStepNs);
  EXPECT_NEAR(one.front().after, 3.0 * kStepNs, 0.15 * kStepNs);
  EXPECT_GT(one.front().magnitude, 10.0);
  EXPECT_TRUE(one.front().worse);

  const std::vector<Anomaly> two = nnprof::detect_anomalies(simulate("step_time", "ns", 1000, 0.03, 22, spikes(250, 2)));
  ASSERT_EQ(two.size(), 2U) << describe(two);
  EXPECT_EQ(count_kind(two, AnomalyKind::Outlier), 2U);
  EXPECT_EQ(two[0].window, 250U);
  EXPECT_EQ(two[1].window, 251U);

  const std::vector<Anomaly> five = nnprof::detect_anomalies(simulate("step_time", "ns", 1000, 0.03, 23, spikes(250, 5)));
  EXPECT_EQ(count_kind(five, AnomalyKind::Outlier), 0U) << describe(five);
  ASSERT_EQ(count_kind(five, AnomalyKind::LevelShift), 2U) << describe(five);
  EXPECT_EQ(five[0].window, 250U);
  EXPECT_GT(five[0].magnitude, 1.5);
  EXPECT_EQ(five[1].window, 255U);
  EXPECT_LT(five[1].magnitude, -0.5);

  // A dip of the step time is an outlier too, but not a worse one.
  const std::vector<Anomaly> dip = nnprof::detect_anomalies(simulate(
      "step_time", "ns", 1000, 0.03, 24, [](std::size_t i) { return i == 700 ? 0.5 * kStepNs : kStepNs; }));
  ASSERT_EQ(dip.size(), 1U) << describe(dip);
  EXPECT_EQ(dip.front().window, 700U);
  EXPECT_LT(dip.front().magnitude, -10.0);
  EXPECT_FALSE(dip.front().worse);
}

// Theil-Sen on an exact line gives the slope exactly, with or without the binning of long
// series (10,080 windows are reduced to 600 bins); with noise the 95% interval holds it.
TEST(Trends, TrendSlopeOfALine) {
  const double per_window = 0.05;  // 3 units per hour
  const auto line = [per_window](std::size_t i) { return 100.0 + per_window * static_cast<double>(i); };
  for (const std::size_t n : {std::size_t{200}, std::size_t{10'080}}) {
    const nnprof::Trend exact = nnprof::trend(simulate("x", "", n, 0.0, 1, line));
    EXPECT_NEAR(exact.slope_per_hour, 3.0, 1e-9) << n;
    EXPECT_NEAR(exact.low, 3.0, 1e-9) << n;
    EXPECT_NEAR(exact.high, 3.0, 1e-9) << n;
    EXPECT_TRUE(exact.significant);
    EXPECT_EQ(exact.windows, n);
  }
  for (std::uint64_t seed = 1; seed <= 5; ++seed) {
    const nnprof::Trend noisy = nnprof::trend(simulate("x", "", 1000, 0.05, seed, line));
    EXPECT_LE(noisy.low, 3.0) << seed;
    EXPECT_GE(noisy.high, 3.0) << seed;
    EXPECT_LT(noisy.low, noisy.slope_per_hour);
    EXPECT_GT(noisy.high, noisy.slope_per_hour);
    EXPECT_TRUE(noisy.significant);
    EXPECT_NEAR(noisy.relative_slope_per_hour, noisy.slope_per_hour / 125.0, 0.01);
  }
}

// Windows without a value are skipped, and indices stay those of the series.
TEST(Trends, WindowsWithoutValueAreSkipped) {
  WindowSeries s = simulate("step_time", "ns", 1000, 0.02, 31, [](std::size_t i) { return i >= 600 ? 1.2 * kStepNs : kStepNs; });
  const double nan = std::numeric_limits<double>::quiet_NaN();
  for (std::size_t i = 0; i < s.values.size(); i += 7) s.values[i] = nan;
  for (std::size_t i = 100; i < 140; ++i) s.values[i] = nan;
  std::vector<Anomaly> events = nnprof::detect_anomalies(s);
  ASSERT_EQ(events.size(), 1U) << describe(events);
  EXPECT_EQ(events.front().window, 600U);

  // The step's own window has no value: the change is seen in the next one that has.
  s.values[600] = nan;
  events = nnprof::detect_anomalies(s);
  ASSERT_EQ(events.size(), 1U) << describe(events);
  EXPECT_EQ(events.front().window, 601U);
  EXPECT_EQ(events.front().window_start_ns, 601 * kWindowNs);

  const nnprof::Trend t = nnprof::trend(s);
  EXPECT_LT(t.windows, 1000U - 140U);
}

// Too few windows: nothing, however large the jump; a trend but not a significant one.
TEST(Trends, ShortSeriesGiveNoEvent) {
  const WindowSeries s = simulate("step_time", "ns", 7, 0.0, 1, [](std::size_t i) { return i >= 4 ? 10.0 * kStepNs : kStepNs; });
  EXPECT_TRUE(nnprof::detect_anomalies(s).empty());
  const nnprof::Trend t = nnprof::trend(s);
  EXPECT_EQ(t.windows, 7U);
  EXPECT_FALSE(t.significant);

  EXPECT_TRUE(nnprof::detect_anomalies(WindowSeries{}).empty());
  EXPECT_EQ(nnprof::trend(WindowSeries{}).windows, 0U);

  WindowSeries all_missing = simulate("rss", "B", 100, 0.0, 1, kFlatRss);
  for (double& v : all_missing.values) v = std::numeric_limits<double>::quiet_NaN();
  EXPECT_TRUE(nnprof::detect_anomalies(all_missing).empty());
}

// A constant series has MAD 0: the scale floor (0.1% of the level) keeps it finite. It gives
// nothing; a 1% blip in it is an outlier and a 10% step a level shift.
TEST(Trends, ConstantSeriesUseTheScaleFloor) {
  EXPECT_TRUE(nnprof::detect_anomalies(simulate("heap", "B", 500, 0.0, 1, kFlatRss)).empty());

  const std::vector<Anomaly> blip = nnprof::detect_anomalies(
      simulate("heap", "B", 500, 0.0, 1, [](std::size_t i) { return i == 200 ? 1.01 * kRssBytes : kRssBytes; }));
  ASSERT_EQ(blip.size(), 1U) << describe(blip);
  EXPECT_EQ(blip.front().kind, AnomalyKind::Outlier);
  EXPECT_EQ(blip.front().window, 200U);
  EXPECT_TRUE(std::isfinite(blip.front().magnitude));

  const std::vector<Anomaly> step = nnprof::detect_anomalies(
      simulate("heap", "B", 500, 0.0, 1, [](std::size_t i) { return i >= 300 ? 1.1 * kRssBytes : kRssBytes; }));
  ASSERT_EQ(step.size(), 1U) << describe(step);
  EXPECT_EQ(step.front().kind, AnomalyKind::LevelShift);
  EXPECT_EQ(step.front().window, 300U);
  EXPECT_DOUBLE_EQ(step.front().before, kRssBytes);
  EXPECT_DOUBLE_EQ(step.front().after, 1.1 * kRssBytes);

  const std::vector<Anomaly> zeros = nnprof::detect_anomalies(simulate("gpu_memory", "B", 100, 0.0, 1, [](std::size_t) { return 0.0; }));
  EXPECT_TRUE(zeros.empty());
}

// Several series: sorted by window, then strongest first.
TEST(Trends, SeveralSeriesAreSortedByWindowThenScore) {
  const std::vector<WindowSeries> series = {
      simulate("step_time", "ns", 1000, 0.03, 41, [](std::size_t i) { return i >= 600 ? 1.2 * kStepNs : kStepNs; }),
      simulate("rss", "B", 1000, 0.02, 42, [](std::size_t i) { return i == 300 ? 2.0 * kRssBytes : kRssBytes; }),
      simulate("throughput", "samples/s", 1000, 0.02, 43, [](std::size_t i) { return i >= 600 ? 533.0 : 640.0; }, false),
  };
  const std::vector<Anomaly> events = nnprof::detect_anomalies(series);
  ASSERT_EQ(events.size(), 3U) << describe(events);
  EXPECT_EQ(events[0].metric, "rss");
  EXPECT_EQ(events[0].window, 300U);
  EXPECT_EQ(events[1].window, 600U);
  EXPECT_EQ(events[2].window, 600U);
  EXPECT_GE(events[1].score, events[2].score);
  EXPECT_EQ(events[1].unit, events[1].metric == "step_time" ? "ns" : "samples/s");
}

TEST(Trends, Basics) {
  EXPECT_STREQ(nnprof::to_string(AnomalyKind::LevelShift), "level-shift");
  EXPECT_STREQ(nnprof::to_string(AnomalyKind::Outlier), "outlier");
  EXPECT_STREQ(nnprof::to_string(AnomalyKind::Growth), "growth");
  WindowSeries mismatched = simulate("x", "", 10, 0.0, 1, kFlatStep);
  mismatched.window_start_ns.pop_back();
  EXPECT_THROW((void)nnprof::detect_anomalies(mismatched), std::invalid_argument);
  EXPECT_THROW((void)nnprof::trend(mismatched), std::invalid_argument);
}

}  // namespace
