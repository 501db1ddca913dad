// Run comparison: the Mann-Whitney U test against published reference values, the
// per-scope verdicts of nnprof::compare on profiles built by hand, and its writers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/statistics/mann_whitney.hpp"
#include "analysis/statistics/welch.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/compare.hpp"
#include "nnprof/error.hpp"
#include "report/comparison.hpp"

namespace {

using nnprof::analysis::statistics::mann_whitney_exact_cdf;
using nnprof::analysis::statistics::mann_whitney_u;
using nnprof::analysis::statistics::MannWhitneyMethod;

// ---- Mann-Whitney U: reference values computed by others ---------------------------

// SciPy's documentation of scipy.stats.mannwhitneyu, "Examples" (the age-of-diabetes-onset
// example of Conover, Practical Nonparametric Statistics): U1 = 17, exact two-sided
// p = 0.1111111111111111, asymptotic p = 0.11134688653314041.
// https://docs.scipy.org/doc/scipy/reference/generated/scipy.stats.mannwhitneyu.html
TEST(MannWhitney, ScipyDocumentationExample) {
  const std::vector<double> males = {19, 22, 16, 29, 24};
  const std::vector<double> females = {20, 11, 17, 12};
  const auto exact = mann_whitney_u(males, females);  // Auto: small and no ties, so exact
  EXPECT_TRUE(exact.exact);
  EXPECT_DOUBLE_EQ(exact.u1, 17.0);
  EXPECT_DOUBLE_EQ(exact.u2, 3.0);
  EXPECT_NEAR(exact.p_value, 0.1111111111111111, 1e-12);
  const auto asymptotic = mann_whitney_u(males, females, MannWhitneyMethod::Asymptotic);
  EXPECT_FALSE(asymptotic.exact);
  EXPECT_NEAR(asymptotic.p_value, 0.11134688653314041, 1e-9);
}

// ClickHouse's documentation of mannWhitneyUTest: samples (10, 11, 12) and (1, 2, 3),
// alternative 'greater', continuity correction on: (9, 0.04042779918503192). The two-sided
// p-value is twice the one-sided one.
// https://clickhouse.com/docs/sql-reference/aggregate-functions/reference/mannwhitneyutest
TEST(MannWhitney, ClickHouseDocumentationExample) {
  const std::vector<double> x = {10, 11, 12};
  const std::vector<double> y = {1, 2, 3};
  const auto r = mann_whitney_u(x, y, MannWhitneyMethod::Asymptotic);
  EXPECT_DOUBLE_EQ(r.u1, 9.0);
  EXPECT_NEAR(r.p_value, 2 * 0.04042779918503192, 1e-12);
  EXPECT_DOUBLE_EQ(r.prob_y_greater(), 0.0);  // every y below every x
}

// DolphinDB's documentation of mannWhitneyUTest(5 1 4 3 5, 2 4 7 -1 0 4): U = 11 (the
// smaller of U1 and U2), two-sided p = 0.518023 with continuity correction; the pooled
// sample has ties (5, 5 and 4, 4, 4), so the tie correction is exercised.
// https://docs.dolphindb.cn/zh/funcs/m/mannWhitneyUTest.html
TEST(MannWhitney, DolphinDbDocumentationExampleWithTies) {
  const std::vector<double> x = {5, 1, 4, 3, 5};
  const std::vector<double> y = {2, 4, 7, -1, 0, 4};
  const auto r = mann_whitney_u(x, y);  // ties: Auto falls back to the approximation
  EXPECT_TRUE(r.ties);
  EXPECT_FALSE(r.exact);
  EXPECT_DOUBLE_EQ(std::min(r.u1, r.u2), 11.0);
  EXPECT_NEAR(r.p_value, 0.518023, 2e-6);
}

// NAG Library example program for g08amc (nag_mann_whitney), 16 and 23 values with many
// ties: test statistic 86.0000, normal statistic -2.8039, approximate one-tail probability
// 0.0025 (so about 0.0050 two-sided).
// https://support.nag.com/numeric/nl/nagdoc_27cpp/examples/baseresults/g08amce.r.html
TEST(MannWhitney, NagExampleWithTies) {
  const std::vector<double> group1 = {13, 6, 12, 7, 12, 7, 10, 7, 10, 7, 16, 7, 10, 8, 9, 8};
  const std::vector<double> group2 = {17, 6, 10, 8,  15, 8,  15, 10, 15, 10, 14, 10,
                                      14, 11, 14, 11, 13, 12, 13, 12, 13, 12, 12};
  const auto r = mann_whitney_u(group1, group2);
  EXPECT_DOUBLE_EQ(r.u1, 86.0);
  EXPECT_NEAR(std::fabs(r.z), 2.8039, 5e-5);
  EXPECT_NEAR(r.p_value, 2 * 0.0025, 1e-4);
  EXPECT_GT(r.prob_y_greater(), 0.5);  // group 2 tends to be larger
}

// Critical values of U for a two-tailed test at alpha = 0.05 with n1 = n2 = n, from the
// standard table printed in statistics textbooks (e.g. Siegel & Castellan, Nonparametric
// Statistics for the Behavioral Sciences, Table J; also Zar, Biostatistical Analysis, Table
// B.11): U <= critical is significant, critical + 1 is not. Checks the exact distribution.
TEST(MannWhitney, ExactDistributionMatchesTheCriticalValueTable) {
  const std::vector<std::pair<std::size_t, double>> table = {{5, 2},  {6, 5},   {7, 8},   {8, 13},
                                                             {9, 17}, {10, 23}, {15, 64}, {20, 127}};
  for (const auto& [n, critical] : table) {
    EXPECT_LE(2 * mann_whitney_exact_cdf(n, n, critical), 0.05) << "n = " << n;
    EXPECT_GT(2 * mann_whitney_exact_cdf(n, n, critical + 1), 0.05) << "n = " << n;
  }
  // Every arrangement counted once: P(U <= n1 n2) = 1 and the distribution is symmetric.
  EXPECT_DOUBLE_EQ(mann_whitney_exact_cdf(7, 4, 28), 1.0);
  EXPECT_NEAR(mann_whitney_exact_cdf(7, 4, 13), 1.0 - mann_whitney_exact_cdf(7, 4, 14), 1e-12);
}

TEST(MannWhitney, EdgeCases) {
  const std::vector<double> empty;
  const std::vector<double> some = {1, 2, 3};
  EXPECT_DOUBLE_EQ(mann_whitney_u(empty, some).p_value, 1.0);
  const std::vector<double> same(30, 5.0);
  const auto r = mann_whitney_u(same, same);  // every value tied: no evidence at all
  EXPECT_DOUBLE_EQ(r.p_value, 1.0);
  EXPECT_DOUBLE_EQ(r.prob_y_greater(), 0.5);
  // Separated samples beyond the exact range: the approximation gives a tiny p.
  std::vector<double> low, high;
  for (int i = 0; i < 40; ++i) {
    low.push_back(i);
    high.push_back(100 + i);
  }
  const auto sep = mann_whitney_u(low, high);
  EXPECT_FALSE(sep.exact);
  EXPECT_LT(sep.p_value, 1e-10);
  EXPECT_DOUBLE_EQ(sep.prob_y_greater(), 1.0);
}

// Welch's t for two summaries, checked by hand: means 10 and 12, sd 2 and 3, n 50 and 40:
// se = sqrt(4/50 + 9/40) = 0.55227, t = 3.6214, df = 0.305^2 / (0.08^2/49 + 0.225^2/39) = 67.4.
TEST(Welch, StatisticAndDegreesOfFreedom) {
  const auto w = nnprof::analysis::statistics::welch_test(50, 10.0, 2.0, 40, 12.0, 3.0);
  EXPECT_NEAR(w.t, 2.0 / std::sqrt(0.305), 1e-9);
  EXPECT_NEAR(w.df, 0.305 * 0.305 / (0.08 * 0.08 / 49 + 0.225 * 0.225 / 39), 1e-9);
  EXPECT_NEAR(w.p_value, std::erfc(w.t / std::sqrt(2.0)), 1e-12);
  const auto constant = nnprof::analysis::statistics::welch_test(10, 5.0, 0.0, 10, 5.0, 0.0);
  EXPECT_DOUBLE_EQ(constant.p_value, 1.0);
}

// ---- compare on profiles built by hand ---------------------------------------------

using nnprof::Comparison;
using nnprof::CompareOptions;
using nnprof::CompareTest;
using nnprof::Profile;
using nnprof::ScopeChange;
using nnprof::Verdict;

struct ScopeCalls {
  std::string name;
  std::vector<std::uint64_t> durations;
};

// `n` durations of about `mean_ns`, each off by up to +-`jitter` (a fraction), from a
// seeded generator whose output the C++ standard fixes (mt19937_64), so every run of the
// test sees the same numbers.
std::vector<std::uint64_t> calls(std::size_t n, double mean_ns, double jitter, std::uint64_t seed) {
  std::mt19937_64 engine(seed);
  std::vector<std::uint64_t> d;
  for (std::size_t i = 0; i < n; ++i) {
    const double u = static_cast<double>(engine() >> 11) * 0x1.0p-53;  // [0, 1)
    d.push_back(static_cast<std::uint64_t>(std::llround(mean_ns * (1.0 + jitter * (2.0 * u - 1.0)))));
  }
  return d;
}

// A one-thread profile whose top-level scopes ran one after another with the given
// durations; statistics as the model builder computes them; spans kept for the first
// `spans_per_scope` calls of each scope (all by default).
Profile make_profile(const std::vector<ScopeCalls>& scopes, std::size_t spans_per_scope = SIZE_MAX) {
  Profile p;
  p.meta.hostname = "testhost";
  p.threads.push_back({0, 1, "main", false, 0, 0});
  p.call_tree.push_back({});
  std::uint64_t now = 0;
  for (const ScopeCalls& s : scopes) {
    const auto name = static_cast<nnprof::StringId>(p.strings.size());
    p.strings.push_back(s.name);
    const auto node = static_cast<std::uint32_t>(p.call_tree.size());
    nnprof::DurationStats t;
    t.count = s.durations.size();
    double sum = 0;
    for (const std::uint64_t d : s.durations) sum += static_cast<double>(d);
    t.sum_ns = static_cast<std::uint64_t>(sum);
    t.min_ns = *std::min_element(s.durations.begin(), s.durations.end());
    t.max_ns = *std::max_element(s.durations.begin(), s.durations.end());
    t.mean_ns = sum / static_cast<double>(t.count);
    double m2 = 0;
    for (const std::uint64_t d : s.durations) m2 += (static_cast<double>(d) - t.mean_ns) * (static_cast<double>(d) - t.mean_ns);
    t.stddev_ns = t.count > 1 ? std::sqrt(m2 / static_cast<double>(t.count - 1)) : 0.0;
    std::vector<std::uint64_t> sorted = s.durations;
    std::sort(sorted.begin(), sorted.end());
    t.p50_ns = sorted[sorted.size() / 2];
    t.p95_ns = sorted[sorted.size() * 95 / 100];
    t.p99_ns = sorted[sorted.size() * 99 / 100];
    nnprof::CallTreeNode n;
    n.id = node;
    n.parent = 0;
    n.name = name;
    n.depth = 1;
    n.time = t;
    n.self_ns = t.sum_ns;
    n.thread_count = 1;
    p.call_tree.push_back(n);
    p.call_tree[0].children.push_back(node);
    nnprof::ScopeStats st;
    st.name = name;
    st.total_ns = t.sum_ns;
    st.self_ns = t.sum_ns;
    st.time = t;
    st.thread_count = 1;
    p.scopes.push_back(st);
    for (std::size_t i = 0; i < s.durations.size(); ++i) {
      if (i < spans_per_scope) p.spans.push_back({0, name, node, 1, now, now + s.durations[i]});
      now += s.durations[i];
    }
    p.completeness.scopes_recorded += t.count;
    p.threads[0].scopes_recorded += t.count;
    p.threads[0].top_level_ns += t.sum_ns;
  }
  p.meta.duration_ns = now + 1000;
  p.completeness.spans_kept = p.spans.size();
  p.completeness.spans_dropped = p.completeness.scopes_recorded - p.spans.size();
  p.completeness.spans_enabled = spans_per_scope > 0;
  p.completeness.buffer_policy = "keep-first";
  std::sort(p.scopes.begin(), p.scopes.end(),
            [](const nnprof::ScopeStats& a, const nnprof::ScopeStats& b) { return a.total_ns > b.total_ns; });
  std::sort(p.spans.begin(), p.spans.end(),
            [](const nnprof::Span& a, const nnprof::Span& b) { return a.start_ns < b.start_ns; });
  return p;
}

const ScopeChange& scope(const Comparison& c, const std::string& name) {
  for (const ScopeChange& s : c.scopes)
    if (s.name == name) return s;
  throw std::runtime_error("no scope " + name);
}

constexpr double kMs = 1e6;

TEST(Compare, ATwiceSlowerScopeIsARegressionWithRatioTwo) {
  const Profile a = make_profile({{"matmul", calls(30, 1 * kMs, 0.10, 1)}, {"softmax", calls(30, 0.2 * kMs, 0.10, 2)}});
  const Profile b = make_profile({{"matmul", calls(30, 2 * kMs, 0.10, 3)}, {"softmax", calls(30, 0.2 * kMs, 0.10, 4)}});
  const Comparison c = nnprof::compare(a, b);

  const ScopeChange& m = scope(c, "matmul");
  EXPECT_EQ(m.verdict, Verdict::Regressed);
  EXPECT_EQ(m.test, CompareTest::MannWhitney);
  EXPECT_NEAR(m.ratio, 2.0, 0.05);
  EXPECT_NEAR(m.change, 1.0, 0.05);
  EXPECT_LT(m.p_value, 1e-9);  // 30 against 30 with no overlap
  EXPECT_DOUBLE_EQ(m.prob_b_slower, 1.0);
  EXPECT_NEAR(static_cast<double>(m.total_delta_ns), 30 * kMs, 0.05 * 30 * kMs);
  EXPECT_TRUE(m.note.empty()) << m.note;

  EXPECT_EQ(scope(c, "softmax").verdict, Verdict::Stable);
  EXPECT_EQ(c.verdict, Verdict::Regressed);
  EXPECT_EQ(c.regressed, 1u);
  EXPECT_EQ(c.stable, 1u);
  ASSERT_EQ(c.top_regressions().size(), 1u);
  EXPECT_EQ(c.top_regressions()[0]->name, "matmul");
  EXPECT_TRUE(c.top_improvements().empty());
  ASSERT_NE(c.worst_regression(), nullptr);
  EXPECT_EQ(c.worst_regression()->name, "matmul");
  EXPECT_EQ(c.scopes.front().name, "matmul");  // largest change of total time first
  // Geometric mean over the two judged scopes: sqrt(2 x ~1).
  EXPECT_EQ(c.geomean_scopes, 2u);
  EXPECT_NEAR(c.geomean_ratio, std::sqrt(m.ratio * scope(c, "softmax").ratio), 1e-12);
  // Runtime is the session wall time: B ran about (60 + 6) ms against (30 + 6) ms.
  EXPECT_EQ(c.runtime_basis, "session wall time");
  EXPECT_NEAR(c.speedup, static_cast<double>(a.meta.duration_ns) / static_cast<double>(b.meta.duration_ns), 1e-12);
  EXPECT_LT(c.speedup, 0.6);
}

TEST(Compare, RunsFromTheSameDistributionAreStable) {
  // Same distribution, different draws; 20 pairs so that one lucky seed cannot pass the test.
  // The jitter (+-5%, sd 2.9%) keeps the standard error of the difference of means at 0.6%
  // (step) and 1.2% (load), far below the 5% that a change must reach: even the 1 in 20
  // pairs whose rank test is significant by chance stays Stable. (With +-20% jitter and 50
  // calls, a 5% difference of means happens by chance about 3% of the time: then only a
  // larger min_change or more calls protect against a false alarm.)
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const Profile a = make_profile({{"step", calls(50, 3 * kMs, 0.05, 100 + seed)}, {"load", calls(12, 1 * kMs, 0.05, 200 + seed)}});
    const Profile b = make_profile({{"step", calls(50, 3 * kMs, 0.05, 300 + seed)}, {"load", calls(12, 1 * kMs, 0.05, 400 + seed)}});
    const Comparison c = nnprof::compare(a, b);
    EXPECT_EQ(c.verdict, Verdict::Stable) << "seed " << seed;
    for (const char* name : {"step", "load"}) {
      const ScopeChange& s = scope(c, name);
      EXPECT_EQ(s.verdict, Verdict::Stable) << name << " seed " << seed << " ratio " << s.ratio << " p " << s.p_value;
      EXPECT_EQ(s.test, CompareTest::MannWhitney);
    }
    EXPECT_NEAR(c.geomean_ratio, 1.0, 0.03);
  }
  // The same run against itself: nothing to see, p = 1.
  const Profile a = make_profile({{"step", calls(50, 3 * kMs, 0.2, 7)}});
  const Comparison self = nnprof::compare(a, a);
  EXPECT_DOUBLE_EQ(scope(self, "step").p_value, 1.0);
  EXPECT_DOUBLE_EQ(scope(self, "step").ratio, 1.0);
  EXPECT_EQ(self.verdict, Verdict::Stable);
}

// Under the null hypothesis p is uniform: about alpha of identical-distribution pairs are
// significant, whatever the min_change filter later does with them.
TEST(Compare, FalsePositiveRateIsAboutAlpha) {
  int significant = 0;
  const int pairs = 400;
  for (int i = 0; i < pairs; ++i) {
    const auto x = calls(30, 1e6, 0.3, 1000 + 2 * i);
    const auto y = calls(30, 1e6, 0.3, 1001 + 2 * i);
    const std::vector<double> dx(x.begin(), x.end()), dy(y.begin(), y.end());
    significant += mann_whitney_u(dx, dy).p_value < 0.05;
  }
  EXPECT_GE(significant, 8);   // expected 20, sd 4.4
  EXPECT_LE(significant, 36);
}

// The seed's tester: a 95 -> 132 ns scope, which the report calls instrumentation-dominated,
// made the whole comparison REGRESSED while the run took 15% less time. The run's verdict
// answers for the run; the tiny scope keeps its own verdict but does not decide.
TEST(Compare, TheRunsVerdictFollowsTheRunNotAnInstrumentationDominatedScope) {
  Profile a = make_profile({{"forward", calls(50, 3 * kMs, 0.05, 11)}, {"layernorm", calls(200, 95, 0.05, 12)}});
  Profile b = make_profile({{"forward", calls(50, 2.55 * kMs, 0.05, 13)}, {"layernorm", calls(200, 132, 0.05, 14)}});
  a.completeness.overhead_per_scope_ns = b.completeness.overhead_per_scope_ns = 20.0;
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& tiny = scope(c, "layernorm");
  EXPECT_EQ(tiny.verdict, Verdict::Regressed);
  EXPECT_FALSE(tiny.decides);
  EXPECT_NE(tiny.note.find("does not decide the run's verdict"), std::string::npos) << tiny.note;
  EXPECT_TRUE(scope(c, "forward").decides);
  EXPECT_EQ(scope(c, "forward").verdict, Verdict::Improved);
  EXPECT_NEAR(c.runtime_change, -0.15, 0.01);
  EXPECT_NEAR(c.significant_change, -0.15, 0.01);
  EXPECT_EQ(c.verdict, Verdict::Improved);
  // A CI gate on single scopes is not tripped by a scope that measures the profiler.
  EXPECT_EQ(c.worst_regression(), nullptr);
  bool said = false;
  for (const std::string& n : c.notes) said |= n.find("too short to decide the run's verdict") != std::string::npos &&
                                              n.find("layernorm") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(Compare, TwiceFasterIsAnImprovement) {
  const Profile a = make_profile({{"attention", calls(8, 4 * kMs, 0.05, 11)}});
  const Profile b = make_profile({{"attention", calls(8, 2 * kMs, 0.05, 12)}});
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& s = scope(c, "attention");
  EXPECT_EQ(s.verdict, Verdict::Improved);
  EXPECT_NEAR(s.ratio, 0.5, 0.03);
  // 8 against 8, all of B below all of A: the exact p is 2 / C(16, 8) = 1 / 6435.
  EXPECT_NEAR(s.p_value, 2.0 / 12870.0, 1e-12);
  EXPECT_EQ(c.verdict, Verdict::Improved);
  ASSERT_EQ(c.top_improvements().size(), 1u);
  EXPECT_GT(c.speedup, 1.8);
}

TEST(Compare, TooFewCallsIsUnreliable) {
  const Profile a = make_profile({{"init", calls(1, 50 * kMs, 0, 1)}, {"epoch", calls(4, 10 * kMs, 0.1, 2)}});
  const Profile b = make_profile({{"init", calls(1, 100 * kMs, 0, 3)}, {"epoch", calls(4, 30 * kMs, 0.1, 4)}});
  const Comparison c = nnprof::compare(a, b);
  for (const char* name : {"init", "epoch"}) {
    const ScopeChange& s = scope(c, name);
    EXPECT_EQ(s.verdict, Verdict::Unreliable) << name;
    EXPECT_EQ(s.test, CompareTest::None);
    EXPECT_NE(s.note.find("too few calls"), std::string::npos) << s.note;
  }
  EXPECT_NEAR(scope(c, "epoch").ratio, 3.0, 0.3);  // the figures are still there
  EXPECT_EQ(c.verdict, Verdict::Unreliable);
  EXPECT_EQ(c.unreliable, 2u);
  EXPECT_EQ(c.geomean_scopes, 0u);
  EXPECT_TRUE(c.top_regressions().empty());
  // With a lower minimum, 4 against 4 can be judged.
  CompareOptions o;
  o.min_calls = 4;
  EXPECT_EQ(scope(nnprof::compare(a, b, o), "epoch").verdict, Verdict::Regressed);
}

TEST(Compare, SignificantButNegligibleShiftIsStable) {
  // 2,000 calls each, 1% slower with 0.5% jitter: overwhelmingly significant, not relevant.
  const Profile a = make_profile({{"gelu", calls(2000, 1 * kMs, 0.005, 5)}});
  const Profile b = make_profile({{"gelu", calls(2000, 1.01 * kMs, 0.005, 6)}});
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& s = scope(c, "gelu");
  EXPECT_LT(s.p_value, 1e-6);
  EXPECT_EQ(s.verdict, Verdict::Stable);
  CompareOptions strict;
  strict.min_change = 0.0;
  EXPECT_EQ(scope(nnprof::compare(a, b, strict), "gelu").verdict, Verdict::Regressed);
}

TEST(Compare, RankTestAndMeanDisagreeingIsStableWithAReason) {
  // A: one 5 ms warm-up call among 29 of 10 us; B: every call 12 us. The typical call got
  // slower (ranks), the mean got much faster (the outlier is gone): no verdict either way.
  std::vector<std::uint64_t> a_calls = calls(29, 10'000, 0.02, 1);
  a_calls.insert(a_calls.begin(), 5'000'000);
  const Profile a = make_profile({{"loss", a_calls}});
  const Profile b = make_profile({{"loss", calls(30, 12'000, 0.02, 2)}});
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& s = scope(c, "loss");
  EXPECT_LT(s.p_value, 1e-6);
  EXPECT_GT(s.prob_b_slower, 0.9);
  EXPECT_LT(s.change, -0.5);
  EXPECT_EQ(s.verdict, Verdict::Stable);
  EXPECT_NE(s.note.find("opposite directions"), std::string::npos) << s.note;
  std::ostringstream text;
  nnprof::write_comparison(c, text, nnprof::ReportFormat::Text);
  EXPECT_NE(text.str().find("- loss: the typical call and the mean moved in opposite directions"), std::string::npos)
      << text.str();
}

TEST(Compare, AddedAndRemovedScopesAreListed) {
  const Profile a = make_profile({{"step", calls(10, 1 * kMs, 0.1, 1)}, {"old_kernel", calls(10, 2 * kMs, 0.1, 2)}});
  const Profile b = make_profile({{"step", calls(10, 1 * kMs, 0.1, 3)},
                                  {"fused_kernel", calls(10, 1 * kMs, 0.1, 4)},
                                  {"cache_warmup", calls(1, 5 * kMs, 0, 5)}});
  const Comparison c = nnprof::compare(a, b);
  ASSERT_EQ(c.scopes.size(), 1u);
  ASSERT_EQ(c.removed.size(), 1u);
  EXPECT_EQ(c.removed[0].name, "old_kernel");
  EXPECT_EQ(c.removed[0].calls, 10u);
  ASSERT_EQ(c.added.size(), 2u);
  EXPECT_EQ(c.added[0].name, "fused_kernel");  // longest first: 10 ms before 5 ms
  EXPECT_EQ(c.added[1].name, "cache_warmup");
}

TEST(Compare, WithoutSpansWelchOnTheStatisticsIsUsedAndSaid) {
  // Statistics-only sessions: no per-call durations, but count, mean and sd of every call.
  const Profile a = make_profile({{"matmul", calls(100, 1 * kMs, 0.1, 1)}, {"rare", calls(10, 1 * kMs, 0.1, 2)}}, 0);
  const Profile b = make_profile({{"matmul", calls(100, 2 * kMs, 0.1, 3)}, {"rare", calls(10, 2 * kMs, 0.1, 4)}}, 0);
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& m = scope(c, "matmul");
  EXPECT_EQ(m.test, CompareTest::Welch);
  EXPECT_EQ(m.verdict, Verdict::Regressed);
  EXPECT_NEAR(m.ratio, 2.0, 0.05);
  EXPECT_NE(m.note.find("kept spans for 0 of 100 calls"), std::string::npos) << m.note;
  EXPECT_NE(m.note.find("Welch"), std::string::npos) << m.note;
  // 10 calls a side give Welch fewer than 30 degrees of freedom: no verdict.
  const ScopeChange& r = scope(c, "rare");
  EXPECT_EQ(r.verdict, Verdict::Unreliable);
  EXPECT_NE(r.note.find("degrees of freedom"), std::string::npos) << r.note;
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("without spans"), std::string::npos) << c.notes[0];
}

TEST(Compare, PartlyDroppedSpansAreNotTreatedAsEveryCall) {
  // Keep-first cap: A kept spans for its first 40 of 200 calls only. Those are a biased
  // subset, so the statistics of all calls are tested instead.
  const Profile a = make_profile({{"step", calls(200, 1 * kMs, 0.1, 1)}}, 40);
  const Profile b = make_profile({{"step", calls(200, 1.5 * kMs, 0.1, 2)}});
  const Comparison c = nnprof::compare(a, b);
  const ScopeChange& s = scope(c, "step");
  EXPECT_EQ(s.test, CompareTest::Welch);
  EXPECT_EQ(s.verdict, Verdict::Regressed);
  EXPECT_EQ(s.a.spans, 40u);
  EXPECT_NE(s.note.find("A kept spans for 40 of 200 calls"), std::string::npos) << s.note;
  ASSERT_FALSE(c.notes.empty());
  EXPECT_NE(c.notes[0].find("lost 160 spans"), std::string::npos) << c.notes[0];
}

TEST(Compare, BadOptionsThrow) {
  const Profile a = make_profile({{"step", calls(10, 1 * kMs, 0.1, 1)}});
  CompareOptions o;
  o.alpha = 1.5;
  EXPECT_THROW((void)nnprof::compare(a, a, o), nnprof::Error);
}

// ---- writers ------------------------------------------------------------------------

Comparison two_x_comparison() {
  const Profile a = make_profile({{"matmul", calls(30, 1 * kMs, 0.1, 1)},
                                  {"<script>alert(1)</script> | x", calls(30, 1 * kMs, 0.1, 2)},
                                  {"gone", calls(5, 1 * kMs, 0.1, 3)}});
  const Profile b = make_profile({{"matmul", calls(30, 2 * kMs, 0.1, 4)},
                                  {"<script>alert(1)</script> | x", calls(30, 1 * kMs, 0.1, 5)},
                                  {"new", calls(5, 1 * kMs, 0.1, 6)}});
  return nnprof::compare(a, b);
}

std::string written(const Comparison& c, nnprof::ReportFormat format) {
  std::ostringstream out;
  nnprof::write_comparison(c, out, format);
  return out.str();
}

// ---- the document: what every human format says ------------------------------------

using nnprof::report::Bullets;
using nnprof::report::Document;
using nnprof::report::Paragraph;
using nnprof::report::Section;
using nnprof::report::Table;

std::string plain(const nnprof::analysis::Sentence& s) { return nnprof::render::text_of(nnprof::Profile{}, s); }

const Section& section(const Document& d, std::string_view id) {
  for (const Section& s : d.sections)
    if (s.id == id) return s;
  throw std::runtime_error("no section " + std::string(id));
}

template <typename B>
std::vector<const B*> blocks(const Section& s) {
  std::vector<const B*> found;
  for (const auto& block : s.blocks)
    if (const auto* b = std::get_if<B>(&block)) found.push_back(b);
  return found;
}

// The section's only table.
const Table& table(const Section& s) {
  const auto tables = blocks<Table>(s);
  if (tables.size() != 1) throw std::runtime_error("section " + s.id + " has " + std::to_string(tables.size()) + " tables");
  return *tables[0];
}

std::vector<std::string> paragraphs(const Section& s) {
  std::vector<std::string> text;
  for (const Paragraph* p : blocks<Paragraph>(s)) text.push_back(plain(p->text));
  return text;
}

// A whole run is one measurement: a runtime that moved while no scope changed significantly is
// not a significant change, and the summary says so instead of claiming one.
TEST(Compare, ARuntimeChangeThatNoScopeAccountsForIsStableAndSaysWhy) {
  const Profile a = make_profile({{"step", calls(50, 3 * kMs, 0.05, 21)}});
  Profile b = make_profile({{"step", calls(50, 3 * kMs, 0.05, 22)}});
  b.meta.duration_ns = a.meta.duration_ns + a.meta.duration_ns / 5;  // 20% longer, outside any scope
  const Comparison c = nnprof::compare(a, b);
  EXPECT_EQ(scope(c, "step").verdict, Verdict::Stable);
  EXPECT_NEAR(c.runtime_change, 0.2, 0.01);
  EXPECT_EQ(c.verdict, Verdict::Stable);
  const std::vector<std::string> text = paragraphs(section(nnprof::report::comparison_document(c), "summary"));
  ASSERT_FALSE(text.empty());
  EXPECT_NE(text[0].find("Verdict: STABLE: the run took 20.0% more time (session wall time), but that is not "
                         "significant"),
            std::string::npos)
      << text[0];
  // The same runtime change with the scope's significant slowdown behind it is a regression.
  const Profile slower = make_profile({{"step", calls(50, 3.6 * kMs, 0.05, 23)}});
  EXPECT_EQ(nnprof::compare(a, slower).verdict, Verdict::Regressed);
}

TEST(CompareDocument, SectionsInReadingOrder) {
  const Document d = nnprof::report::comparison_document(two_x_comparison());
  EXPECT_EQ(d.title, "nnprof comparison");
  std::vector<std::string> ids;
  for (const Section& s : d.sections) ids.push_back(s.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"summary", "regressions", "improvements", "scopes", "removed", "added",
                                           "method"}));
  ASSERT_EQ(d.about.items.size(), 2u);
  EXPECT_EQ(d.about.items[0].label, "A (baseline)");
  EXPECT_EQ(d.about.items[1].label, "B");
}

TEST(CompareDocument, SummarySaysTheVerdictTotalsSpeedupAndGeomean) {
  const Comparison c = two_x_comparison();
  const Document d = nnprof::report::comparison_document(c);
  const Section& s = section(d, "summary");
  const std::vector<std::string> text = paragraphs(s);
  ASSERT_EQ(text.size(), 4u);
  // The run as a whole, with why: its runtime grew, and matmul's significant slowdown is the growth.
  EXPECT_EQ(text[0], fmt::format("Verdict: REGRESSED: the run took {:.1f}% more time (session wall time), and the "
                                 "scopes whose change is significant account for {:.1f}% of A's runtime.",
                                 c.runtime_change * 100, c.significant_change * 100));
  EXPECT_NEAR(c.runtime_change, 30.0 / 65.0, 0.03);
  EXPECT_NEAR(c.significant_change, c.runtime_change, 0.01);
  EXPECT_EQ(text[1], "Scopes: 1 regressed, 0 improved, 1 stable, 0 unreliable.");
  EXPECT_EQ(text[2], fmt::format("Speedup: {:.3f}x (B is {:.2f}x as {}; A's session wall time / B's)", c.speedup,
                                 c.speedup >= 1.0 ? c.speedup : 1.0 / c.speedup, c.speedup >= 1.0 ? "fast" : "slow"));
  EXPECT_EQ(text[3], fmt::format("Geometric mean of per-call time ratios (B/A): {:.3f}x over 2 scopes", c.geomean_ratio));
  const Table& t = table(s);
  ASSERT_GE(t.rows.size(), 3u);
  EXPECT_EQ(t.rows[0][0].text, "Runtime (session wall time)");
  EXPECT_EQ(t.rows[0][1].value, static_cast<double>(c.runtime_a_ns));
  EXPECT_EQ(t.rows[0][2].value, static_cast<double>(c.runtime_b_ns));
  EXPECT_EQ(t.rows[0][3].value, static_cast<double>(c.runtime_b_ns) - static_cast<double>(c.runtime_a_ns));
  EXPECT_EQ(t.rows[1][0].text, "Instrumented time");
  EXPECT_EQ(t.rows[2][0].text, "Scope calls");
  EXPECT_EQ(t.rows[2][1].text, "65");  // 30 + 30 + 5
  EXPECT_EQ(t.rows[2][2].text, "65");
  EXPECT_EQ(t.rows[2][3].text, "0");
  EXPECT_EQ(t.rows[2][4].text, "+0.0%");
  // No heap tracking and no memory counters: no rows that would read as zero allocations.
  EXPECT_EQ(t.rows.size(), 3u);
}

TEST(CompareDocument, ChangeTablesHoldEveryFigureWithItsRawValue) {
  const Comparison c = two_x_comparison();
  const Document d = nnprof::report::comparison_document(c);
  const ScopeChange& m = scope(c, "matmul");
  const Table& regressions = table(section(d, "regressions"));
  ASSERT_EQ(regressions.rows.size(), 1u);
  EXPECT_EQ(paragraphs(section(d, "regressions")).at(0), "By the time they added.");
  const auto& row = regressions.rows[0];
  std::vector<std::string> headers;
  for (const auto& col : regressions.columns) headers.push_back(col.header);
  EXPECT_EQ(headers, (std::vector<std::string>{"Scope", "Calls A", "Calls B", "Mean A", "Mean B", "Ratio", "Change",
                                               "Total delta", "Test", "p", "Verdict"}));
  EXPECT_EQ(row[0].text, "matmul");
  EXPECT_TRUE(row[0].name);
  EXPECT_EQ(row[1].text, "30");
  EXPECT_EQ(row[2].text, "30");
  EXPECT_EQ(row[3].value, m.a.mean_ns);
  EXPECT_EQ(row[4].value, m.b.mean_ns);
  EXPECT_EQ(row[5].text, fmt::format("{:.2f}x", m.ratio));  // about 2.00x
  EXPECT_EQ(row[5].value, m.ratio);
  EXPECT_EQ(row[6].text, fmt::format("{:+.1f}%", m.change * 100));  // about +100%
  EXPECT_EQ(row[6].value, m.change);
  EXPECT_EQ(row[7].value, static_cast<double>(m.total_delta_ns));
  EXPECT_EQ(row[8].text, "U");
  EXPECT_EQ(row[9].value, m.p_value);
  EXPECT_EQ(row[10].text, "regressed");
  EXPECT_EQ(paragraphs(section(d, "improvements")), std::vector<std::string>{"No scope improved."});
  EXPECT_TRUE(blocks<Table>(section(d, "improvements")).empty());
  // Every matched scope, largest change of total time first, with its verdict.
  const Table& all = table(section(d, "scopes"));
  ASSERT_EQ(all.rows.size(), 2u);
  EXPECT_EQ(all.rows[0][0].text, "matmul");
  EXPECT_EQ(all.rows[1][0].text, "<script>alert(1)</script> | x");
  EXPECT_EQ(all.rows[1][10].text, "stable");
  // Only in one run: name, calls, total.
  const Table& removed = table(section(d, "removed"));
  ASSERT_EQ(removed.rows.size(), 1u);
  EXPECT_EQ(removed.rows[0][0].text, "gone");
  EXPECT_EQ(removed.rows[0][1].text, "5");
  EXPECT_EQ(removed.rows[0][2].value, static_cast<double>(c.removed[0].total_ns));
  const Table& added = table(section(d, "added"));
  ASSERT_EQ(added.rows.size(), 1u);
  EXPECT_EQ(added.rows[0][0].text, "new");
}

TEST(CompareDocument, MethodStatesTheTestAndEveryScopesNote) {
  // "init" has too few calls; "loss" moved its typical call and its mean in opposite directions.
  std::vector<std::uint64_t> a_calls = calls(29, 10'000, 0.02, 1);
  a_calls.insert(a_calls.begin(), 5'000'000);
  const Profile a = make_profile({{"loss", a_calls}, {"init", calls(2, 1 * kMs, 0.1, 3)}});
  const Profile b = make_profile({{"loss", calls(30, 12'000, 0.02, 2)}, {"init", calls(2, 1 * kMs, 0.1, 4)}});
  const Document d = nnprof::report::comparison_document(nnprof::compare(a, b));
  const Section& s = section(d, "method");
  const std::vector<std::string> text = paragraphs(s);
  ASSERT_EQ(text.size(), 1u);
  EXPECT_NE(text[0].find("two-sided Mann-Whitney U test"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("alpha 0.05; a verdict needs 5 calls on each side"), std::string::npos) << text[0];
  EXPECT_NE(text[0].find("below 5.0% counts as stable"), std::string::npos) << text[0];
  const auto lists = blocks<Bullets>(s);
  ASSERT_EQ(lists.size(), 1u);
  std::vector<std::string> notes;
  for (const auto& item : lists[0]->items) notes.push_back(plain(item));
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_TRUE(notes[0].starts_with("loss: the typical call and the mean moved in opposite directions")) << notes[0];
  EXPECT_EQ(notes[1], "Too few calls for a verdict (fewer than 5 in a run): init");
}

// ---- the formats, end to end --------------------------------------------------------

TEST(CompareReport, TextSaysTheVerdictAndTheNumbers) {
  const Comparison c = two_x_comparison();
  const std::string text = written(c, nnprof::ReportFormat::Text);
  const ScopeChange& m = scope(c, "matmul");
  const std::string ratio = fmt::format("{:.2f}x", m.ratio);      // about 2.00x
  const std::string change = fmt::format("{:+.1f}%", m.change * 100);  // about +100%
  for (const std::string& expected : {std::string("Verdict: REGRESSED: the run took"),
                                     std::string("Scopes: 1 regressed, 0 improved, 1 stable, 0 unreliable."),
                                     std::string("Top 10 regressions"), std::string("matmul"), ratio, change,
                                     std::string("Runtime (session wall time)"), std::string("Speedup:"),
                                     std::string("Geometric mean"), std::string("Only in A (removed)"), std::string("gone"),
                                     std::string("Only in B (added)"), std::string("new"), std::string("Mann-Whitney")})
    EXPECT_NE(text.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << text;
  EXPECT_TRUE(text.starts_with("nnprof comparison\n=================\n")) << text;
}

TEST(CompareReport, MarkdownEscapesNamesInTables) {
  const std::string md = written(two_x_comparison(), nnprof::ReportFormat::Markdown);
  EXPECT_NE(md.find("# nnprof comparison"), std::string::npos);
  EXPECT_NE(md.find("| Scope"), std::string::npos);
  EXPECT_NE(md.find("| matmul"), std::string::npos);
  EXPECT_NE(md.find("## Top 10 regressions"), std::string::npos);
  EXPECT_NE(md.find("Verdict: REGRESSED: the run took"), std::string::npos) << md;
  EXPECT_NE(md.find("\\<script\\>"), std::string::npos) << md;
  EXPECT_EQ(md.find("<script>"), std::string::npos);
  EXPECT_NE(md.find("\\|"), std::string::npos);  // the pipe cannot split a cell
}

TEST(CompareReport, HtmlIsSelfContainedAndEscaped) {
  const std::string html = written(two_x_comparison(), nnprof::ReportFormat::Html);
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos);  // no name as markup
  // The page's own script (sortable tables) is its only one, inline.
  const std::size_t script = html.find("<script");
  ASSERT_NE(script, std::string::npos);
  EXPECT_EQ(html.find("<script", script + 1), std::string::npos);
  EXPECT_EQ(html.find("src=\"http"), std::string::npos);
  EXPECT_NE(html.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(html.find("Scopes: 1 regressed, 0 improved, 1 stable, 0 unreliable."), std::string::npos);
  EXPECT_NE(html.find("<section id=\"regressions\"><h2>Top 10 regressions</h2>"), std::string::npos);
  EXPECT_NE(html.find("<table class=\"sortable\" id=\"scopes-table\">"), std::string::npos);
  EXPECT_NE(html.find("</html>"), std::string::npos);
}

TEST(CompareReport, JsonHasEveryScopeWithItsVerdict) {
  const auto j = nlohmann::json::parse(written(two_x_comparison(), nnprof::ReportFormat::Json));
  EXPECT_EQ(j["schema"], "nnprof-comparison");
  EXPECT_EQ(j["schema_version"], 2);
  EXPECT_EQ(j["summary"]["verdict"], "regressed");
  EXPECT_EQ(j["summary"]["regressed"], 1);
  EXPECT_EQ(j["top_regressions"], nlohmann::json::array({"matmul"}));
  EXPECT_EQ(j["options"]["min_calls"], 5);
  ASSERT_EQ(j["scopes"].size(), 2u);
  const auto& m = j["scopes"][0];
  EXPECT_EQ(m["name"], "matmul");
  EXPECT_EQ(m["verdict"], "regressed");
  EXPECT_EQ(m["decides"], true);
  EXPECT_NEAR(j["summary"]["runtime_change"].get<double>(), 30.0 / 65.0, 0.03);
  EXPECT_NEAR(j["summary"]["significant_change"].get<double>(), j["summary"]["runtime_change"].get<double>(), 0.01);
  EXPECT_EQ(m["test"], "mann-whitney");
  EXPECT_NEAR(m["ratio"].get<double>(), 2.0, 0.1);
  EXPECT_EQ(m["a"]["calls"], 30);
  EXPECT_EQ(j["removed"][0]["name"], "gone");
  EXPECT_EQ(j["added"][0]["name"], "new");
  EXPECT_TRUE(j["a"]["heap"].is_null());  // no heap tracking: null, not zeros
}

TEST(CompareReport, OtherFormatsAreRefused) {
  std::ostringstream out;
  EXPECT_THROW(nnprof::write_comparison(two_x_comparison(), out, nnprof::ReportFormat::Csv), nnprof::Error);
  EXPECT_THROW(nnprof::export_comparison(two_x_comparison(), "/tmp/nnprof-compare.unknown"), nnprof::Error);
}

}  // namespace
