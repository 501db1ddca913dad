// The "System and energy" section and the JSON report's "system" object on a hand-built
// monitored profile: the facts it states, a modelled domain labelled modelled, carbon with its
// region and source, energy per step and per scope.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_report.hpp"
#include "report/report_data.hpp"
#include "report/sections.hpp"
#include "report_blocks.hpp"

namespace nnprof {
namespace {

using namespace report_testing;
constexpr std::uint64_t kSecond = 1'000'000'000;
const double kNaN = std::numeric_limits<double>::quiet_NaN();

// Two steps of 2 s each on the main thread; the package draws 10, 20, 30, 40 W over the four
// seconds (100 J, measured), the modelled memory 5 W throughout (20 J); psys is not added.
Profile monitored_profile() {
  Profile p;
  p.strings = {"train_step", "forward"};
  p.threads.push_back(ThreadInfo{0, 100, "main", false, 2, 4 * kSecond});
  p.spans.push_back(Span{0, 0, 1, 1, 0, 2 * kSecond});
  p.spans.push_back(Span{0, 1, 2, 2, 0, 1 * kSecond});
  p.spans.push_back(Span{0, 0, 1, 1, 2 * kSecond, 4 * kSecond});
  p.spans.push_back(Span{0, 1, 2, 2, 2 * kSecond, 3 * kSecond});
  ScopeStats step;
  step.name = 0;
  step.total_ns = 4 * kSecond;
  step.time.count = 2;
  step.items = 64;
  ScopeStats forward;
  forward.name = 1;
  forward.total_ns = 2 * kSecond;
  forward.time.count = 2;
  p.scopes = {step, forward};

  SystemProfile& s = p.system;
  s.monitored = true;
  s.interval_ms = 1000;
  s.limits.logical_cpus = 8;
  s.limits.host_memory_bytes = 16ull << 30;
  s.sample_ns = {0, kSecond, 2 * kSecond, 3 * kSecond, 4 * kSecond};
  s.sample_scope = {kNone, 1, 0, 1, 0};
  s.tracks.push_back({"energy.memory.power", "W", {kNaN, 5, 5, 5, 5}});
  s.tracks.push_back({"energy.package-0.power", "W", {kNaN, 10, 20, 30, 40}});
  s.tracks.push_back({"energy.psys.power", "W", {kNaN, 90, 90, 90, 90}});
  s.tracks.push_back({"process.cpu.user", "percent", {50, 100, 150, 100, kNaN}});
  s.tracks.push_back({"process.memory.rss", "bytes", {1048576, 2097152, 2097152, 4194304, 4194304}});
  s.energy.push_back({"package-0", "cpu", EnergyMethod::Rapl, 100.0, 0.05, "energy.package-0.power", ""});
  s.energy.push_back({"psys", "psys", EnergyMethod::Rapl, 360.0, 0.05, "energy.psys.power", ""});
  s.energy.push_back({"memory", "dram", EnergyMethod::Modelled, 20.0, 0.5, "energy.memory.power", "0.375 W per GiB"});
  s.notes.push_back("RAPL: no DRAM domain; memory energy is modelled");
  return p;
}

std::string fact(const Profile& profile, const report::Section& section, std::string_view label) {
  for (const report::Facts* facts : blocks_of<report::Facts>(section))
    for (const report::Fact& f : facts->items)
      if (f.label == label) return render::text_of(profile, f.value);
  return "<no fact " + std::string(label) + ">";
}

report::ReportLimits in_region(const char* region, double pue = 1.0) {
  report::ReportLimits limits;
  limits.carbon.region = region;
  limits.carbon.pue = pue;
  return limits;
}

TEST(SystemSection, TracksThatReadZeroThroughoutAreNamedNotTabulated) {
  Profile p = monitored_profile();
  p.system.tracks.push_back({"net.eth1.rx_bytes", "bytes/s", {kNaN, 0, 0, 0, 0}});
  const auto sections = build(report::sections::system_energy, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const std::vector<Row> tracks = rows_of(table_with_id(sections[0], "system-tracks"));
  EXPECT_EQ(tracks.size(), 5u);  // the fixture's five; not the idle interface
  for (const Row& row : tracks) EXPECT_NE(row[0], "net.eth1.rx_bytes");
  EXPECT_TRUE(says(p, sections[0], "Read 0 at every sample: net.eth1.rx_bytes."));
}

TEST(SystemSection, NotAddedWithoutAMonitor) {
  Profile p;
  p.strings = {"a"};
  EXPECT_TRUE(build(report::sections::system_energy, report::analyse(p)).empty());
}

TEST(SystemSection, StatesTracksEnergyCarbonAndSteps) {
  unsetenv("NNPROF_CARBON_REGION");
  const Profile p = monitored_profile();
  const auto sections = build(report::sections::system_energy, report::analyse(p, in_region("FR", 1.2)));
  ASSERT_EQ(sections.size(), 1u);
  const report::Section& s = sections[0];
  EXPECT_EQ(s.id, "system");
  EXPECT_EQ(s.title, "System and energy");
  EXPECT_EQ(fact(p, s, "Samples"), "5 over 4.00 s");
  EXPECT_NE(fact(p, s, "CPU basis").find("of one core"), std::string::npos);
  EXPECT_NE(fact(p, s, "CPU basis").find("8 logical CPUs"), std::string::npos);
  EXPECT_NE(fact(p, s, "Limits").find("no cgroup limits"), std::string::npos);

  const std::vector<Row> tracks = rows_of(table_with_id(s, "system-tracks"));
  ASSERT_EQ(tracks.size(), 5u);
  EXPECT_EQ(tracks[3], (Row{"process.cpu.user", "4", "50.0%", "100.0%", "150.0%", "150.0%", "100.0%"}));
  EXPECT_EQ(tracks[4][6], "4.00 MiB");

  const std::vector<Row> domains = rows_of(table_with_id(s, "system-energy"));
  ASSERT_EQ(domains.size(), 3u);
  EXPECT_EQ(domains[0][2], "rapl (measured)");
  EXPECT_EQ(domains[2][0], "memory");
  EXPECT_EQ(domains[2][2], "modelled (estimate)");
  EXPECT_NE(domains[1][6].find("not added"), std::string::npos);  // psys
  EXPECT_TRUE(says(p, s, "of which 100 J"));
  EXPECT_TRUE(says(p, s, "modelled from utilisation"));

  // 120 J = 1/30000 kWh; France 56 g/kWh; PUE 1.2: 2.24 mg; the band 0.95 × 100 + 0.5 × 20 J
  // and 1.05 × 100 + 1.5 × 20 J.
  EXPECT_EQ(fact(p, s, "Emissions"), "2.24 mg CO2e (between 1.96 mg and 2.52 mg), from energy that is partly modelled");
  EXPECT_NE(fact(p, s, "Grid intensity").find("France (FR)"), std::string::npos);
  EXPECT_EQ(fact(p, s, "Grid intensity").find("world average"), std::string::npos);
  EXPECT_NE(fact(p, s, "Intensity source").find("Ember"), std::string::npos);
  EXPECT_EQ(fact(p, s, "PUE"), "1.2");

  const std::vector<Row> steps = rows_of(table_with_id(s, "system-energy-steps"));
  ASSERT_EQ(steps.size(), 1u);
  // 100 J package + 20 J memory over both steps: 60 J per call, 1.875 J per item.
  EXPECT_EQ(steps[0][0], "train_step");
  EXPECT_EQ(steps[0][4], "60 J");
  EXPECT_EQ(steps[0][5], "1.88 J");
  EXPECT_EQ(steps[0][6], "includes modelled");

  const std::vector<Row> scopes = rows_of(table_with_id(s, "system-energy-scopes"));
  ASSERT_EQ(scopes.size(), 2u);
  EXPECT_EQ(scopes[0][0], "train_step");
  EXPECT_EQ(scopes[1][0], "forward");  // 10 + 30 J package, 10 J memory
  EXPECT_NE(scopes[1][1].find("50 J"), std::string::npos);
  EXPECT_EQ(blocks_of<report::Bullets>(s).size(), 1u);  // the monitor's notes
  // Every track here is one a reader looks at first, read at least twice: each drawn in HTML.
  const std::vector<const report::Picture*> charts = blocks_of<report::Picture>(s);
  ASSERT_EQ(charts.size(), 5u);
  const std::string chart = charts[3]->html();
  EXPECT_NE(chart.find("process.cpu.user"), std::string::npos);
  EXPECT_NE(chart.find("<svg"), std::string::npos);
}

TEST(SystemSection, NoRegionIsSaidToBeTheWorldAverage) {
  unsetenv("NNPROF_CARBON_REGION");
  const Profile p = monitored_profile();
  const auto sections = build(report::sections::system_energy, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_NE(fact(p, sections[0], "Grid intensity").find("world average, as no region was given"), std::string::npos);
  EXPECT_NE(fact(p, sections[0], "PUE").find("default"), std::string::npos);
}

TEST(SystemJson, SystemObjectCarriesMethodsBandsCarbonAndSteps) {
  unsetenv("NNPROF_CARBON_REGION");
  const Profile p = monitored_profile();
  std::ostringstream out;
  io::write_json_report(report::analyse(p, in_region("se")), out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.contains("system"));
  const nlohmann::json& s = j["system"];
  EXPECT_EQ(s["samples"], 5);
  EXPECT_EQ(s["tracks"].size(), 5u);
  EXPECT_TRUE(s["tracks"][3]["last"].is_number());
  EXPECT_EQ(s["energy"]["domains"][2]["method"], "modelled");
  EXPECT_EQ(s["energy"]["domains"][2]["measured"], false);
  EXPECT_DOUBLE_EQ(s["energy"]["domains"][0]["uncertainty"].get<double>(), 0.05);
  EXPECT_EQ(s["energy"]["domains"][1]["counted"], false);
  EXPECT_DOUBLE_EQ(s["energy"]["total_joules"].get<double>(), 120.0);
  EXPECT_EQ(s["energy"]["attribution"], "spans");
  EXPECT_DOUBLE_EQ(s["energy"]["steps"][0]["joules_per_call"].get<double>(), 60.0);
  EXPECT_EQ(s["carbon"]["region"], "SE");
  EXPECT_EQ(s["carbon"]["defaulted_region"], false);
  EXPECT_DOUBLE_EQ(s["carbon"]["grams_co2e"].get<double>(), 120.0 / 3.6e6 * 41.0);
  // A profile without a monitor has no "system" key at all.
  Profile plain;
  std::ostringstream plain_out;
  io::write_json_report(report::analyse(plain), plain_out);
  EXPECT_FALSE(nlohmann::json::parse(plain_out.str()).contains("system"));
}

}  // namespace
}  // namespace nnprof

#include "analysis/compare.hpp"
#include "report/comparison.hpp"

namespace nnprof {
namespace {

// `steps` calls of train_step of 1 s each, back to back, the package drawing `watts[i]` in
// step i (a sample at each step's end).
Profile stepping_profile(const std::vector<double>& watts) {
  Profile p;
  p.strings = {"train_step"};
  p.threads.push_back(ThreadInfo{0, 100, "main", false, watts.size(), watts.size() * kSecond});
  p.system.monitored = true;
  p.system.interval_ms = 1000;
  p.system.sample_ns.push_back(0);
  std::vector<double> track{kNaN};
  double joules = 0.0;
  for (std::size_t i = 0; i < watts.size(); ++i) {
    p.spans.push_back(Span{0, 0, 1, 1, i * kSecond, (i + 1) * kSecond});
    p.system.sample_ns.push_back((i + 1) * kSecond);
    track.push_back(watts[i]);
    joules += watts[i];
  }
  p.system.tracks.push_back({"energy.package-0.power", "W", track});
  p.system.energy.push_back({"package-0", "cpu", EnergyMethod::Rapl, joules, 0.05, "energy.package-0.power", ""});
  ScopeStats step;
  step.name = 0;
  step.total_ns = watts.size() * kSecond;
  step.time.count = watts.size();
  step.time.sum_ns = step.total_ns;
  step.time.mean_ns = 1e9;
  step.items = 32 * watts.size();
  p.scopes = {step};
  CallTreeNode root;
  CallTreeNode node;
  node.id = 1;
  node.parent = 0;
  node.name = 0;
  node.depth = 1;
  node.time = step.time;
  root.children = {1};
  p.call_tree = {root, node};
  return p;
}

TEST(SystemCompare, EnergyPerStepIsTestedLikeTime) {
  const Profile a = stepping_profile({100, 101, 99, 100, 102, 98});
  const Profile b = stepping_profile({150, 151, 149, 150, 152, 148});
  const Comparison c = analysis::compare_profiles(a, b, CompareOptions{});
  ASSERT_TRUE(c.energy_per_step.has_value());
  const EnergyPerStep& e = *c.energy_per_step;
  EXPECT_EQ(e.step, "train_step");
  EXPECT_DOUBLE_EQ(e.a_joules, 100.0);
  EXPECT_DOUBLE_EQ(e.b_joules, 150.0);
  EXPECT_DOUBLE_EQ(e.a_joules_per_item, 100.0 / 32.0);
  EXPECT_DOUBLE_EQ(e.ratio, 1.5);
  EXPECT_EQ(e.test, CompareTest::MannWhitney);
  EXPECT_EQ(e.verdict, Verdict::Regressed);
  EXPECT_EQ(e.a_calls, 6u);

  const report::Document doc = report::comparison_document(c);
  bool said = false;
  for (const report::Section& s : doc.sections)
    if (s.id == "summary") said = says(a, s, "Energy per step (train_step): B/A 1.500x, regressed");
  EXPECT_TRUE(said);
}

TEST(SystemCompare, OneValuePerRunGivesTheRatioWithoutAVerdict) {
  Profile a = stepping_profile({100, 100, 100, 100, 100, 100});
  Profile b = stepping_profile({120, 120, 120, 120, 120, 120});
  // Statistics-only runs: no spans, each sample's scope instead.
  for (Profile* p : {&a, &b}) {
    p->spans.clear();
    p->system.sample_scope.assign(p->system.sample_ns.size(), 0);
  }
  const Comparison c = analysis::compare_profiles(a, b, CompareOptions{});
  ASSERT_TRUE(c.energy_per_step.has_value());
  EXPECT_DOUBLE_EQ(c.energy_per_step->ratio, 1.2);
  EXPECT_EQ(c.energy_per_step->test, CompareTest::None);
  EXPECT_EQ(c.energy_per_step->verdict, Verdict::Unreliable);
  EXPECT_NE(c.energy_per_step->note.find("without a significance claim"), std::string::npos);
}

TEST(SystemCompare, NoEnergyComparisonWithoutMonitors) {
  Profile a = stepping_profile({100, 100, 100, 100, 100});
  a.system = SystemProfile{};
  const Comparison c = analysis::compare_profiles(a, stepping_profile({100, 100, 100, 100, 100}), CompareOptions{});
  EXPECT_FALSE(c.energy_per_step.has_value());
}

}  // namespace
}  // namespace nnprof
