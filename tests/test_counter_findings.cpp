// MemoryHotspot and MemoryLeak from the named memory counters (record_alloc/record_free), the
// only memory API of the axonml profiler: each triggered by a program built to trigger it and
// not by one just under the threshold, thresholds as options, every report carrying them, and
// the heap findings kept beside them when heap tracking ran too.
#include <gtest/gtest.h>

#include <algorithm>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/advisor.hpp"
#include "analysis/bottlenecks.hpp"
#include "analysis/memory_findings.hpp"
#include "io/json_report.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/report.hpp"
#include "nnprof/scope.hpp"
#include "render/sentence_markup.hpp"
#include "sample_profiles.hpp"

namespace {

using nnprof::Bottleneck;
using nnprof::BottleneckSeverity;
using nnprof::BottleneckType;
using nnprof::Profile;
using json = nlohmann::json;

std::vector<Bottleneck> of_type(const std::vector<Bottleneck>& found, BottleneckType type) {
  std::vector<Bottleneck> out;
  std::copy_if(found.begin(), found.end(), std::back_inserter(out), [&](const Bottleneck& b) { return b.type == type; });
  return out;
}

const Bottleneck* find(const std::vector<Bottleneck>& found, BottleneckType type, const std::string& name) {
  for (const Bottleneck& b : found)
    if (b.type == type && b.name == name) return &b;
  return nullptr;
}

// At the peak of 1000 bytes "big" holds 400 (40%), each of "mid", "a" and "b" 200 (20%).
Profile hotspot_program() {
  nnprof::Profiler p;
  NNPROF_SCOPE_IN(p, "step");
  p.record_alloc("big", 400);
  p.record_alloc("mid", 200);
  p.record_alloc("a", 200);
  p.record_alloc("b", 200);
  for (const char* name : {"big", "mid", "a", "b"}) p.record_free(name, name == std::string("big") ? 400 : 200);
  return p.snapshot();
}

// "leaky" keeps 100 of the 1000 bytes it allocated (10%); "tidy" 100 of 10,000 (1%).
Profile leak_program() {
  nnprof::Profiler p;
  NNPROF_SCOPE_IN(p, "step");
  for (int i = 0; i < 10; ++i) p.record_alloc("leaky", 100);
  for (int i = 0; i < 9; ++i) p.record_free("leaky", 100);
  for (int i = 0; i < 100; ++i) {
    p.record_alloc("tidy", 100);
    if (i < 99) p.record_free("tidy", 100);
  }
  return p.snapshot();
}

TEST(CounterFindings, HotspotAtFortyPercentOfThePeakNotAtTwenty) {
  const Profile profile = hotspot_program();
  ASSERT_EQ(profile.memory.peak_bytes, 1000u);
  const auto found = nnprof::analyze_bottlenecks(profile);
  const auto hotspots = of_type(found, BottleneckType::MemoryHotspot);
  ASSERT_EQ(hotspots.size(), 1u);
  const Bottleneck& big = hotspots.front();
  EXPECT_EQ(big.name, "big");
  EXPECT_EQ(big.scope, "big");  // the deprecated spelling of name
  EXPECT_DOUBLE_EQ(big.value, 0.4);
  EXPECT_DOUBLE_EQ(big.threshold, 0.3);
  EXPECT_EQ(big.severity, BottleneckSeverity::Medium);  // past 30%, under twice it
  EXPECT_EQ(big.description,
            "Memory counter big held 400 B when the memory counters together reached their peak of 1000 B, 40.0% of "
            "it (threshold 30.0%).");
  EXPECT_NE(big.suggestion.find("record_free"), std::string::npos) << big.suggestion;
  // Everything was freed: no leak.
  EXPECT_TRUE(of_type(found, BottleneckType::MemoryLeak).empty());
}

TEST(CounterFindings, HotspotIsWhatACounterHeldAtThePeakNotItsOwnPeak) {
  // "early" peaks at 900 bytes (90% of the overall peak) but is freed before "late" takes the
  // 1000-byte peak alone: lowering "early" would not lower the peak.
  nnprof::Profiler p;
  p.record_alloc("early", 900);
  p.record_free("early", 900);
  p.record_alloc("late", 1000);
  p.record_free("late", 1000);
  Profile profile = p.snapshot();
  auto found = nnprof::analyze_bottlenecks(profile);
  ASSERT_EQ(of_type(found, BottleneckType::MemoryHotspot).size(), 1u);
  EXPECT_NE(find(found, BottleneckType::MemoryHotspot, "late"), nullptr);
  EXPECT_EQ(find(found, BottleneckType::MemoryHotspot, "early"), nullptr);

  // Without the memory timeline (spans not kept), a counter's own peak is all there is: the
  // most it can have held at the peak, and the sentence says so.
  profile.memory_events.clear();
  EXPECT_FALSE(nnprof::analysis::counter_bytes_at_peak(profile).has_value());
  found = nnprof::analyze_bottlenecks(profile);
  const Bottleneck* early = find(found, BottleneckType::MemoryHotspot, "early");
  ASSERT_NE(early, nullptr);
  EXPECT_DOUBLE_EQ(early->value, 0.9);
  EXPECT_NE(early->description.find("Memory counter early peaked at 900 B, 90.0% of the 1000 B peak"), std::string::npos)
      << early->description;
  EXPECT_NE(early->description.find("the memory timeline was not kept"), std::string::npos) << early->description;
}

TEST(CounterFindings, HotspotNamesItsOwnPeakWhenHigherThanAtTheOverallPeak) {
  nnprof::Profiler p;
  p.record_alloc("cache", 800);
  p.record_free("cache", 400);
  p.record_alloc("batch", 600);  // peak 1000: cache 400 (40%), batch 600
  p.record_free("batch", 600);
  const auto found = nnprof::analyze_bottlenecks(p.snapshot());
  const Bottleneck* cache = find(found, BottleneckType::MemoryHotspot, "cache");
  ASSERT_NE(cache, nullptr);
  EXPECT_DOUBLE_EQ(cache->value, 0.4);
  EXPECT_NE(cache->description.find("held 400 B when"), std::string::npos) << cache->description;
  EXPECT_NE(cache->description.find("; its own peak was 800 B."), std::string::npos) << cache->description;
}

TEST(CounterFindings, LeakAtTenPercentOutstandingNotAtOne) {
  const auto found = nnprof::analyze_bottlenecks(leak_program());
  const auto leaks = of_type(found, BottleneckType::MemoryLeak);
  ASSERT_EQ(leaks.size(), 1u);
  const Bottleneck& leaky = leaks.front();
  EXPECT_EQ(leaky.name, "leaky");
  EXPECT_DOUBLE_EQ(leaky.value, 0.1);
  EXPECT_DOUBLE_EQ(leaky.threshold, 0.05);
  EXPECT_EQ(leaky.severity, BottleneckSeverity::High);  // twice the threshold
  EXPECT_EQ(leaky.description,
            "Memory counter leaky still held 100 B at the end, 10.0% of the 1000 B it allocated (threshold 5.0%): 10 "
            "allocations and 9 frees were recorded.");
  EXPECT_NE(leaky.suggestion.find("record_free"), std::string::npos) << leaky.suggestion;
  EXPECT_NE(leaky.suggestion.find("std::unique_ptr"), std::string::npos) << leaky.suggestion;
  // Counter findings speak of counters only: no heap tracking, no stacks, no reachability.
  EXPECT_EQ(leaky.suggestion.find("stack"), std::string::npos) << leaky.suggestion;
  EXPECT_EQ(leaky.description.find("reachab"), std::string::npos) << leaky.description;
}

TEST(CounterFindings, OneAllocationHeldToTheEndIsOnlyWorthKnowing) {
  nnprof::Profiler p;
  p.record_alloc("weights", 4 << 20);
  p.record_alloc("activations", 2 << 20);
  p.record_free("activations", 2 << 20);
  const auto found = nnprof::analyze_bottlenecks(p.snapshot());
  const Bottleneck* weights = find(found, BottleneckType::MemoryLeak, "weights");
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ(weights->severity, BottleneckSeverity::Low);
  EXPECT_NE(weights->suggestion.find("lives for the whole run by design"), std::string::npos) << weights->suggestion;
  EXPECT_EQ(find(found, BottleneckType::MemoryLeak, "activations"), nullptr);
}

TEST(CounterFindings, ThresholdsAreHonoured) {
  nnprof::BottleneckThresholds t;
  t.memory_hotspot_share = 0.15;  // now the 20% counters pass too
  auto found = nnprof::analyze_bottlenecks(hotspot_program(), t);
  EXPECT_EQ(of_type(found, BottleneckType::MemoryHotspot).size(), 4u);
  t.memory_hotspot_share = 0.45;  // and none does
  found = nnprof::analyze_bottlenecks(hotspot_program(), t);
  EXPECT_TRUE(of_type(found, BottleneckType::MemoryHotspot).empty());

  t = {};
  t.memory_leak_share = 0.005;  // the 1% counter passes
  found = nnprof::analyze_bottlenecks(leak_program(), t);
  EXPECT_NE(find(found, BottleneckType::MemoryLeak, "tidy"), nullptr);
  EXPECT_NE(find(found, BottleneckType::MemoryLeak, "leaky"), nullptr);
  t.memory_leak_share = 0.2;
  found = nnprof::analyze_bottlenecks(leak_program(), t);
  EXPECT_TRUE(of_type(found, BottleneckType::MemoryLeak).empty());
}

TEST(CounterFindings, NoCountersNoCounterFindingsAndTheNoneSentenceNamesThem) {
  nnprof::Profiler p;
  {
    NNPROF_SCOPE_IN(p, "step");
  }
  const Profile without = p.snapshot();
  EXPECT_TRUE(nnprof::analysis::counter_bottlenecks(without).empty());
  const std::string none = nnprof::render::text_of(without, nnprof::analysis::no_bottlenecks(without));
  EXPECT_EQ(none.find("memory counter"), std::string::npos) << none;

  nnprof::Profiler q;
  {
    NNPROF_SCOPE_IN(q, "step");
    q.record_alloc("x", 100);
    q.record_free("x", 100);
    q.record_alloc("y", 100);
    q.record_free("y", 100);
    q.record_alloc("z", 100);
    q.record_free("z", 100);
  }
  const Profile balanced = q.snapshot();
  // Each held all of a 100-byte peak once, one after the other: x first reached it.
  const auto found = nnprof::analysis::counter_bottlenecks(balanced);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(balanced.str(found.front().counter), "x");
  const std::string with = nnprof::render::text_of(balanced, nnprof::analysis::no_bottlenecks(balanced));
  EXPECT_NE(with.find("no memory counter held more than 30.0% of the counters' peak and none kept more than 5.0% of "
                      "what it allocated"),
            std::string::npos)
      << with;
}

TEST(CounterFindings, EveryReportCarriesThem) {
  const Profile profile = leak_program();
  // The text report: the bottleneck and the recommendation.
  const std::string text = nnprof::Report(profile).text();
  EXPECT_NE(text.find("Memory counter leaky still held 100 B at the end"), std::string::npos) << text;
  EXPECT_NE(text.find("Free what memory counter leaky keeps to the end"), std::string::npos) << text;

  // The JSON report: kind, the counter by name, no scope, the numbers.
  std::ostringstream out;
  nnprof::io::write_json_report(profile, out);
  const json j = json::parse(out.str());
  const json* leak = nullptr;
  for (const json& b : j.at("bottlenecks"))
    if (b.at("kind") == "memory_leak" && b.value("counter", "") == "leaky") leak = &b;
  ASSERT_NE(leak, nullptr) << j.at("bottlenecks").dump(2);
  EXPECT_TRUE(leak->at("scope").is_null());
  EXPECT_DOUBLE_EQ(leak->at("value").get<double>(), 0.1);
  EXPECT_DOUBLE_EQ(leak->at("threshold").get<double>(), 0.05);
  EXPECT_EQ(leak->at("time_share").get<double>(), 0.0);
  EXPECT_NE(leak->at("description").get<std::string>().find("100 B"), std::string::npos);
  bool recommended = false;
  for (const json& r : j.at("recommendations"))
    recommended = recommended || (r.value("counter", "") == "leaky" && r.at("scope").is_null());
  EXPECT_TRUE(recommended) << j.at("recommendations").dump(2);

  // Markdown and HTML render the same findings.
  for (const nnprof::ReportFormat format : {nnprof::ReportFormat::Markdown, nnprof::ReportFormat::Html}) {
    std::ostringstream doc;
    nnprof::Report(profile).write(doc, format);
    EXPECT_NE(doc.str().find("still held"), std::string::npos) << nnprof::to_string(format);
  }
}

TEST(CounterFindings, ShownWithoutScopesToo) {
  // The seed's programs record memory and nothing else: the findings must not need a scope.
  nnprof::Profiler p;
  p.record_alloc("attention_scores", 3 << 20);
  p.record_alloc("bias", 1 << 20);
  p.record_free("attention_scores", 3 << 20);
  p.record_free("bias", 1 << 20);
  const std::string text = nnprof::Report(p.snapshot()).text();
  EXPECT_NE(text.find("Memory counter attention_scores held 3.00 MiB when the memory counters together reached their "
                      "peak of 4.00 MiB, 75.0% of it (threshold 30.0%)."),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("Lower what memory counter attention_scores holds at the peak"), std::string::npos) << text;
}

TEST(CounterFindings, AdviceFitsCounters) {
  const auto advice = nnprof::recommend(leak_program());
  // "leaky" is also a hotspot (it holds most of the peak); this is its leak's recommendation.
  const auto it = std::find_if(advice.begin(), advice.end(), [](const nnprof::Recommendation& r) {
    return r.scope == "leaky" && r.title == "Free what memory counter leaky keeps to the end";
  });
  ASSERT_NE(it, advice.end());
  ASSERT_EQ(it->steps.size(), 1u);
  EXPECT_NE(it->steps.front().find("record_free"), std::string::npos);
  EXPECT_EQ(it->steps.front().find("stack"), std::string::npos);
  EXPECT_EQ(it->time_share, 0.0);  // saves memory, not time
}

TEST(CounterFindings, HeapAndCounterFindingsCoexistEachNamingItsSource) {
  Profile profile = nnprof::testing::heap_profile();
  ASSERT_TRUE(profile.memory_counters.empty());
  const auto heap_only = nnprof::analyze_bottlenecks(profile);
  // Add a counter that keeps 3 MiB of 4 MiB allocated, the whole of a 4 MiB counters' peak.
  const auto name = static_cast<nnprof::StringId>(profile.strings.size());
  profile.strings.push_back("kv_cache");
  nnprof::MemoryCounter kv;
  kv.name = name;
  kv.alloc_bytes = 4 << 20;
  kv.freed_bytes = 1 << 20;
  kv.current_bytes = 3 << 20;
  kv.peak_bytes = 4 << 20;
  kv.alloc_count = 4;
  kv.free_count = 1;
  profile.memory_counters.push_back(kv);
  profile.memory.peak_bytes = 4 << 20;
  profile.memory.current_bytes = 3 << 20;

  const auto both = nnprof::analyze_bottlenecks(profile);
  // Every heap finding is still there, unchanged ...
  for (const Bottleneck& h : heap_only)
    EXPECT_NE(std::find_if(both.begin(), both.end(),
                           [&](const Bottleneck& b) { return b.type == h.type && b.description == h.description; }),
              both.end())
        << h.description;
  // ... and the counter's two beside them, told apart by what they name.
  EXPECT_EQ(both.size(), heap_only.size() + 2);
  const Bottleneck* hot = find(both, BottleneckType::MemoryHotspot, "kv_cache");
  const Bottleneck* leak = find(both, BottleneckType::MemoryLeak, "kv_cache");
  ASSERT_NE(hot, nullptr);
  ASSERT_NE(leak, nullptr);
  EXPECT_NE(hot->description.find("Memory counter kv_cache"), std::string::npos);
  for (const Bottleneck& b : both) {
    if (b.name == "kv_cache" || (b.type != BottleneckType::MemoryHotspot && b.type != BottleneckType::MemoryLeak))
      continue;
    EXPECT_EQ(b.description.find("Memory counter"), std::string::npos) << b.description;
  }
  // The advisor keeps one recommendation for the heap's leak and one for the counter's.
  const auto advice = nnprof::recommend(profile);
  const auto leak_titles = std::count_if(advice.begin(), advice.end(), [](const nnprof::Recommendation& r) {
    return r.title.rfind("Free ", 0) == 0;
  });
  EXPECT_EQ(leak_titles, 2) << advice.size();
}

}  // namespace
