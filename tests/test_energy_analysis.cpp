// Energy per scope and per step (analysis/energy) and carbon (analysis/carbon, nnprof/system.hpp)
// on hand-built profiles whose joules are worked out by hand in each test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "analysis/carbon.hpp"
#include "analysis/energy.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/system.hpp"

namespace nnprof {
namespace {

constexpr std::uint64_t kSecond = 1'000'000'000;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

StringId intern(Profile& p, const std::string& s) {
  for (StringId i = 0; i < p.strings.size(); ++i)
    if (p.strings[i] == s) return i;
  p.strings.push_back(s);
  return static_cast<StringId>(p.strings.size() - 1);
}

// Samples at 0, 1, 2, 3, 4 s; a domain's power track gives the mean W over the second ending there.
Profile monitored(std::vector<double> package_watts) {
  Profile p;
  p.threads.push_back(ThreadInfo{0, 100, "main", false, 0, 0});
  p.system.monitored = true;
  p.system.interval_ms = 1000;
  for (std::uint64_t i = 0; i < package_watts.size(); ++i) p.system.sample_ns.push_back(i * kSecond);
  p.system.tracks.push_back({"energy.package-0.power", "W", std::move(package_watts)});
  EnergyDomain d;
  d.name = "package-0";
  d.kind = "cpu";
  d.method = EnergyMethod::Rapl;
  d.track = "energy.package-0.power";
  d.uncertainty = 0.05;
  p.system.energy.push_back(d);
  return p;
}

void add_domain(Profile& p, const std::string& name, const std::string& kind, EnergyMethod method,
                std::vector<double> watts, double uncertainty = 0.0) {
  const std::string track = "energy." + name + ".power";
  p.system.tracks.push_back({track, "W", std::move(watts)});
  EnergyDomain d;
  d.name = name;
  d.kind = kind;
  d.method = method;
  d.track = track;
  d.uncertainty = uncertainty;
  p.system.energy.push_back(d);
}

void add_span(Profile& p, const std::string& name, std::uint32_t depth, double start_s, double end_s,
              std::uint32_t thread = 0) {
  Span s;
  s.thread = thread;
  s.name = intern(p, name);
  s.depth = depth;
  s.start_ns = static_cast<std::uint64_t>(start_s * 1e9);
  s.end_ns = static_cast<std::uint64_t>(end_s * 1e9);
  p.spans.push_back(s);
}

ScopeStats& add_scope(Profile& p, const std::string& name, std::uint64_t calls, std::uint64_t items = 0) {
  ScopeStats s;
  s.name = intern(p, name);
  s.time.count = calls;
  s.items = items;
  p.scopes.push_back(s);
  return p.scopes.back();
}

const analysis::ScopeEnergy& scope_energy(const Profile& p, const analysis::EnergyAttribution& e, const std::string& name) {
  for (const analysis::ScopeEnergy& s : e.scopes)
    if (p.str(s.name) == name) return s;
  static const analysis::ScopeEnergy none{};
  ADD_FAILURE() << "no energy for scope " << name;
  return none;
}

TEST(EnergyAttribution, SpanCutsThePowerTimelineAtItsBoundaries) {
  // 10 W over (0,1], 20 W over (1,2], 30 W over (2,3], 40 W over (3,4].
  Profile p = monitored({kNaN, 10, 20, 30, 40});
  // [0.5, 2.25]: 0.5 s × 10 W + 1 s × 20 W + 0.25 s × 30 W = 5 + 20 + 7.5 = 32.5 J.
  add_span(p, "step", 1, 0.5, 2.25);
  add_scope(p, "step", 1);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_EQ(e.basis, analysis::EnergyBasis::Spans);
  EXPECT_DOUBLE_EQ(e.total_joules, 100.0);
  EXPECT_DOUBLE_EQ(e.attributed_joules, 32.5);
  const analysis::ScopeEnergy& step = scope_energy(p, e, "step");
  EXPECT_DOUBLE_EQ(step.joules, 32.5);
  EXPECT_DOUBLE_EQ(step.share, 0.325);
  EXPECT_DOUBLE_EQ(step.seconds, 1.75);
  EXPECT_DOUBLE_EQ(step.mean_watts, 32.5 / 1.75);
  EXPECT_TRUE(step.measured);
}

TEST(EnergyAttribution, SpansOutsideTheMonitoredTimeAndUnreadIntervalsGetNothing) {
  Profile p = monitored({kNaN, 10, kNaN, 30, 40});
  // Before the first sample nothing, (1,2] not read: only (0,1] at 10 W counts.
  p.system.sample_ns = {1 * kSecond, 2 * kSecond, 3 * kSecond, 4 * kSecond, 5 * kSecond};
  add_span(p, "early", 1, 0.0, 3.0);
  // After the last sample (5 s): only (4.5, 5] at 40 W = 20 J.
  add_span(p, "late", 1, 4.5, 9.0);
  add_scope(p, "early", 1);
  add_scope(p, "late", 1);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "early").joules, 10.0);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "late").joules, 20.0);
  EXPECT_DOUBLE_EQ(e.total_joules, 80.0);
}

TEST(EnergyAttribution, NestedSpansOfOneNameCountOnceAndChildrenAreInclusive) {
  Profile p = monitored({kNaN, 10, 10, 10, 10});
  // recurse [0,4] holds recurse [1,2] (same name: not counted again) and leaf [1,3].
  add_span(p, "recurse", 1, 0.0, 4.0);
  add_span(p, "recurse", 2, 1.0, 2.0);
  add_span(p, "leaf", 2, 2.0, 3.0);
  add_span(p, "leaf", 3, 1.5, 2.0);  // a leaf inside the inner recurse: its own name, counted
  std::ranges::sort(p.spans, [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  add_scope(p, "recurse", 2);
  add_scope(p, "leaf", 2);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "recurse").joules, 40.0);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "recurse").seconds, 4.0);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "leaf").joules, 15.0);
  EXPECT_DOUBLE_EQ(e.attributed_joules, 40.0);
  ASSERT_EQ(e.scopes.size(), 2u);
  EXPECT_EQ(p.str(e.scopes[0].name), "recurse");  // most joules first
}

TEST(EnergyAttribution, PsysIsLeftOutAndModelledDomainsAreSaid) {
  Profile p = monitored({kNaN, 10, 10, 10, 10});
  add_domain(p, "psys", "psys", EnergyMethod::Rapl, {kNaN, 100, 100, 100, 100});
  add_domain(p, "memory (modelled)", "dram", EnergyMethod::Modelled, {kNaN, 0, 0, 4, 4});
  add_span(p, "load", 1, 0.0, 2.0);   // only the package: measured
  add_span(p, "train", 1, 2.0, 4.0);  // package and modelled memory: includes modelled
  add_scope(p, "train", 1);
  add_scope(p, "load", 1);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_DOUBLE_EQ(e.total_joules, 48.0);  // 40 J package + 8 J memory, psys's 400 J not added
  EXPECT_FALSE(e.total_measured);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "load").joules, 20.0);
  EXPECT_TRUE(scope_energy(p, e, "load").measured);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "train").joules, 28.0);
  EXPECT_FALSE(scope_energy(p, e, "train").measured);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "train").share, 28.0 / 48.0);
}

TEST(EnergyAttribution, StepsGiveJoulesPerCallAndPerItem) {
  Profile p = monitored({kNaN, 10, 20, 30, 40});
  add_span(p, "train_step", 1, 0.0, 2.0);  // 30 J
  add_span(p, "forward", 2, 0.0, 1.0);     // 10 J
  add_span(p, "train_step", 1, 2.0, 4.0);  // 70 J
  add_span(p, "forward", 2, 2.0, 3.0);     // 30 J
  std::ranges::stable_sort(p.spans, [](const Span& a, const Span& b) { return a.start_ns < b.start_ns; });
  add_scope(p, "train_step", 2, 64);
  add_scope(p, "forward", 2);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  ASSERT_EQ(e.steps.size(), 1u);
  const analysis::StepEnergy& step = e.steps[0];
  EXPECT_EQ(p.str(step.name), "train_step");
  EXPECT_DOUBLE_EQ(step.joules, 100.0);
  EXPECT_DOUBLE_EQ(step.joules_per_call, 50.0);
  EXPECT_DOUBLE_EQ(step.joules_per_item, 100.0 / 64.0);
  EXPECT_TRUE(step.measured);
  EXPECT_EQ(analysis::main_step(e), &e.steps[0]);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "forward").joules, 40.0);
}

TEST(EnergyAttribution, OnlyTheScopeThreadsSpansCount) {
  Profile p = monitored({kNaN, 10, 10, 10, 10});
  p.threads.push_back(ThreadInfo{1, 101, "loader", false, 0, 0});
  add_span(p, "main_work", 1, 0.0, 1.0, 0);
  add_span(p, "load", 1, 0.0, 4.0, 1);
  p.system.scope_thread = 1;
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_EQ(e.thread, 1u);
  ASSERT_EQ(e.scopes.size(), 1u);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "load").joules, 40.0);
}

TEST(EnergyAttribution, WithoutSpansEachSampleIntervalGoesToItsInnermostScope) {
  Profile p = monitored({kNaN, 10, 20, 30, 40});
  const StringId step = intern(p, "step");
  const StringId forward = intern(p, "forward");
  p.system.sample_scope = {kNone, forward, step, kNone, forward};
  // The call tree: step > forward, so samples in forward were taken inside a step.
  p.call_tree.push_back(CallTreeNode{});
  CallTreeNode n1;
  n1.id = 1;
  n1.parent = 0;
  n1.name = step;
  CallTreeNode n2;
  n2.id = 2;
  n2.parent = 1;
  n2.name = forward;
  p.call_tree.push_back(n1);
  p.call_tree.push_back(n2);
  add_scope(p, "step", 2, 8);
  add_scope(p, "forward", 2);
  const analysis::EnergyAttribution e = analysis::attribute_energy(p);
  EXPECT_EQ(e.basis, analysis::EnergyBasis::Samples);
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "forward").joules, 50.0);  // 10 + 40
  EXPECT_DOUBLE_EQ(scope_energy(p, e, "step").joules, 20.0);     // self
  EXPECT_DOUBLE_EQ(e.attributed_joules, 70.0);
  ASSERT_EQ(e.steps.size(), 1u);
  EXPECT_DOUBLE_EQ(e.steps[0].joules, 70.0);  // inclusive: step's and forward's samples
  EXPECT_DOUBLE_EQ(e.steps[0].joules_per_item, 70.0 / 8.0);
}

TEST(EnergyAttribution, NothingToAttributeWithoutPowerTracks) {
  Profile p;
  EXPECT_EQ(analysis::attribute_energy(p).basis, analysis::EnergyBasis::None);
  Profile q = monitored({kNaN, 10});
  q.system.tracks.clear();
  const analysis::EnergyAttribution e = analysis::attribute_energy(q);
  EXPECT_EQ(e.basis, analysis::EnergyBasis::None);
  EXPECT_EQ(e.domains_without_track, std::vector<std::string>{"package-0"});
}

// ---- carbon -----------------------------------------------------------------------------

SystemProfile energy_of(double measured_joules, double modelled_joules) {
  SystemProfile s;
  s.monitored = true;
  s.energy.push_back({"package-0", "cpu", EnergyMethod::Rapl, measured_joules, 0.05, "", ""});
  s.energy.push_back({"memory (modelled)", "dram", EnergyMethod::Modelled, modelled_joules, 0.5, "", ""});
  s.energy.push_back({"psys", "psys", EnergyMethod::Rapl, 1e9, 0.05, "", ""});
  return s;
}

CarbonOptions options(std::string region, double pue = 1.0, double grams_per_kwh = 0.0, std::string source = {}) {
  CarbonOptions o;
  o.region = std::move(region);
  o.pue = pue;
  o.grams_per_kwh = grams_per_kwh;
  o.source = std::move(source);
  return o;
}

class CarbonTest : public ::testing::Test {
 protected:
  void SetUp() override { unsetenv(analysis::kCarbonRegionVariable); }
  void TearDown() override { unsetenv(analysis::kCarbonRegionVariable); }
};

TEST_F(CarbonTest, GramsAreKilowattHoursTimesPueTimesIntensity) {
  // 3.6 MJ measured + 3.6 MJ modelled = 2 kWh; France 56 g/kWh; PUE 1.5: 2 × 1.5 × 56 = 168 g.
  const CarbonEstimate c = carbon_estimate(energy_of(3.6e6, 3.6e6), options("fr", 1.5));
  EXPECT_EQ(c.intensity.region, "FR");
  EXPECT_EQ(c.intensity.name, "France");
  EXPECT_DOUBLE_EQ(c.intensity.grams_per_kwh, 56.0);
  EXPECT_FALSE(c.defaulted_region);
  EXPECT_DOUBLE_EQ(c.energy_joules, 7.2e6);  // psys left out
  EXPECT_DOUBLE_EQ(c.measured_joules, 3.6e6);
  EXPECT_DOUBLE_EQ(c.pue, 1.5);
  EXPECT_DOUBLE_EQ(c.grams_co2, 168.0);
  // Band: measured ±5 %, modelled ±50 %: (0.95 + 0.5) kWh and (1.05 + 1.5) kWh.
  EXPECT_DOUBLE_EQ(c.grams_low, 1.45 * 1.5 * 56.0);
  EXPECT_DOUBLE_EQ(c.grams_high, 2.55 * 1.5 * 56.0);
  EXPECT_NE(c.intensity.source.find("Ember"), std::string::npos);
  EXPECT_NE(c.intensity.source.find("2023"), std::string::npos);
}

TEST_F(CarbonTest, NoRegionIsTheWorldAverageAndSaysSo) {
  const CarbonEstimate c = carbon_estimate(energy_of(3.6e6, 0.0));
  EXPECT_TRUE(c.defaulted_region);
  EXPECT_EQ(c.intensity.region, "WORLD");
  EXPECT_DOUBLE_EQ(c.pue, 1.0);
  EXPECT_DOUBLE_EQ(c.grams_co2, c.intensity.grams_per_kwh);
}

TEST_F(CarbonTest, TheEnvironmentNamesTheRegionWhenTheOptionsDoNot) {
  setenv(analysis::kCarbonRegionVariable, "se", 1);
  const CarbonEstimate c = carbon_estimate(energy_of(3.6e6, 0.0));
  EXPECT_FALSE(c.defaulted_region);
  EXPECT_EQ(c.intensity.region, "SE");
  EXPECT_DOUBLE_EQ(c.grams_co2, 41.0);
  // The options win over the environment.
  EXPECT_EQ(carbon_estimate(energy_of(3.6e6, 0.0), options("DE")).intensity.region, "DE");
}

TEST_F(CarbonTest, AGivenIntensityOverridesTheTable) {
  const CarbonEstimate c =
      carbon_estimate(energy_of(3.6e6, 0.0), options("US", 1.0, 100.0, "provider report 2024"));
  EXPECT_DOUBLE_EQ(c.grams_co2, 100.0);
  EXPECT_EQ(c.intensity.source, "provider report 2024");
}

TEST_F(CarbonTest, UnknownRegionAndPueBelowOneAreErrors) {
  try {
    (void)carbon_estimate(energy_of(1.0, 0.0), options("XX"));
    FAIL() << "no error for an unknown region";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'XX'"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("grid_intensities()"), std::string::npos);
    EXPECT_NE(std::string(e.what()).find("WORLD"), std::string::npos);
  }
  EXPECT_THROW((void)carbon_estimate(energy_of(1.0, 0.0), options("FR", 0.9)), Error);
  setenv(analysis::kCarbonRegionVariable, "Atlantis", 1);
  EXPECT_THROW((void)carbon_estimate(energy_of(1.0, 0.0)), Error);
}

TEST_F(CarbonTest, TheTableHasOneSourceAndTheRegionsAsked) {
  const std::vector<GridIntensity>& table = grid_intensities();
  for (const char* code : {"WORLD", "US", "CN", "IN", "DE", "FR", "GB", "JP", "CA", "BR", "AU", "KR", "NL", "SE", "NO",
                           "PL", "IT", "ES", "IE", "FI", "CH", "SG", "ZA"}) {
    const GridIntensity* row = analysis::find_grid_intensity(code);
    ASSERT_NE(row, nullptr) << code;
    EXPECT_GT(row->grams_per_kwh, 0.0) << code;
  }
  for (const GridIntensity& row : table) EXPECT_EQ(row.source, table.front().source) << row.region;
}

}  // namespace
}  // namespace nnprof
