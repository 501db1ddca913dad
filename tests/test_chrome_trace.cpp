#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/chrome_trace.hpp"
#include "io/exporter_registry.hpp"
#include "nnprof/nnprof.hpp"
#include "cpu_profile_fixture.hpp"
#include "sample_profiles.hpp"

namespace {

nlohmann::json trace_of(const nnprof::Profile& p) {
  std::ostringstream out;
  nnprof::io::write_chrome_trace(p, out);
  return nlohmann::json::parse(out.str());  // throws, failing the test, if not valid JSON
}

TEST(ChromeTrace, ParsesAndCarriesEveryThreadSpanAndCounter) {
  const auto p = nnprof::testing::rich_profile();
  const auto j = trace_of(p);
  ASSERT_TRUE(j.contains("traceEvents"));
  EXPECT_EQ(j["displayTimeUnit"], "ns");
  EXPECT_EQ(j["otherData"]["host"], "host-1");
  std::map<std::string, int> phases;
  std::map<std::int64_t, std::string> thread_names;
  std::vector<nlohmann::json> complete;
  for (const auto& e : j["traceEvents"]) {
    phases[e["ph"].get<std::string>()]++;
    EXPECT_EQ(e["pid"], 4242);
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[e["tid"]] = e["args"]["name"];
    if (e["ph"] == "X") complete.push_back(e);
  }
  EXPECT_EQ(thread_names.at(1001), "main");
  EXPECT_EQ(thread_names.at(1002), "loader-0");
  ASSERT_EQ(complete.size(), p.spans.size());
  // Microsecond timestamps carry the exact nanoseconds.
  EXPECT_EQ(complete[1]["name"], "forward");
  EXPECT_DOUBLE_EQ(complete[1]["ts"].get<double>(), 1000.0);
  EXPECT_DOUBLE_EQ(complete[1]["dur"].get<double>(), 44000.0);
  EXPECT_EQ(complete[1]["tid"], 1001);
  EXPECT_EQ(complete[2]["name"], "matmul, \"fast\"");
  EXPECT_EQ(complete[6]["name"], "<script>alert(1)</script>");
  EXPECT_EQ(complete[6]["tid"], 1002);
  // Memory: one counter track per counter plus the total; values are running sums.
  EXPECT_EQ(phases["C"], 6);
  std::vector<std::int64_t> weights;
  for (const auto& e : j["traceEvents"])
    if (e["ph"] == "C" && e["name"] == "memory: weights") weights.push_back(e["args"]["bytes"]);
  EXPECT_EQ(weights, (std::vector<std::int64_t>{2048, 4096, 3072}));
}

TEST(ChromeTrace, HeapTimelineIsThreeCounterTracksAndThePeakAnInstant) {
  const auto p = nnprof::testing::heap_profile();
  const auto j = trace_of(p);
  std::map<std::string, std::vector<std::pair<double, std::uint64_t>>> tracks;
  std::vector<nlohmann::json> instants;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "C") tracks[e["name"]].emplace_back(e["ts"].get<double>(), e["args"]["bytes"].get<std::uint64_t>());
    if (e["ph"] == "i") instants.push_back(e);
  }
  ASSERT_EQ(tracks.size(), 3u);
  const auto& heap = tracks.at("heap in use");
  const auto& rss = tracks.at("RSS");
  const auto& hwm = tracks.at("RSS peak (VmHWM)");
  ASSERT_EQ(heap.size(), 50u);
  ASSERT_EQ(rss.size(), 50u);
  ASSERT_EQ(hwm.size(), 50u);
  EXPECT_EQ(heap[0], (std::pair<double, std::uint64_t>{0.0, 8 * (1u << 20) + 4096}));
  EXPECT_EQ(heap[49], (std::pair<double, std::uint64_t>{980000.0, 17'829'888}));
  EXPECT_EQ(rss[49].second, 59'768'832u);
  EXPECT_EQ(hwm[49].second, 61'865'984u);
  ASSERT_EQ(instants.size(), 1u);
  EXPECT_EQ(instants[0]["name"], "heap peak");
  EXPECT_EQ(instants[0]["s"], "t");
  EXPECT_EQ(instants[0]["tid"], 2001);
  EXPECT_DOUBLE_EQ(instants[0]["ts"].get<double>(), 948500.0);
  EXPECT_EQ(instants[0]["args"]["bytes"], 23'072'768);
  EXPECT_EQ(instants[0]["args"]["scope"], "train_step > forward > matmul");
}

TEST(ChromeTrace, WithoutHeapTrackingNoHeapEvents) {
  std::ostringstream out;
  nnprof::io::write_chrome_trace(nnprof::testing::rich_profile(), out);
  EXPECT_EQ(out.str().find("heap"), std::string::npos);
  EXPECT_EQ(out.str().find("RSS"), std::string::npos);
}

TEST(ChromeTrace, CpuSamplesAreThreadInstantsWithTheirStack) {
  const auto p = nnprof::testing::cpu_profile();
  const auto j = trace_of(p);
  std::vector<nlohmann::json> samples;
  for (const auto& e : j["traceEvents"]) {
    if (e.value("cat", "") == "cpu_sample") samples.push_back(e);
  }
  ASSERT_EQ(samples.size(), 14u);
  const auto& first = samples[0];  // main > run_step > matmul > dot (inlined), in forward
  EXPECT_EQ(first["ph"], "i");
  EXPECT_EQ(first["s"], "t");
  EXPECT_EQ(first["tid"], 100);
  EXPECT_DOUBLE_EQ(first["ts"].get<double>(), 1000.0);
  EXPECT_EQ(first["name"], "dot");
  EXPECT_EQ(first["args"]["stack"], "dot\nmatmul\nrun_step\nmain");
  EXPECT_EQ(first["args"]["scope"], "train_step > forward");
  EXPECT_EQ(first["args"]["weight_ns"], 1'000'000);
  EXPECT_EQ(samples[6]["tid"], 101);  // the worker's samples are on its own track
  EXPECT_EQ(samples[6]["name"], "matmul");
  const auto& nostack = samples[13];
  EXPECT_EQ(nostack["name"], "[no stack]");
  EXPECT_FALSE(nostack.contains("sf"));
  EXPECT_EQ(nostack["args"]["scope"], "[outside any scope]");

  // "sf" names the leaf of the stackFrames tree; walking up the parents gives the stack.
  const auto& frames = j["stackFrames"];
  std::vector<std::string> walked;
  for (std::string id = first["sf"]; !id.empty();) {
    const auto& f = frames.at(id);
    walked.push_back(f["name"]);
    id = f.contains("parent") ? f["parent"].get<std::string>() : "";
  }
  EXPECT_EQ(walked, (std::vector<std::string>{"dot", "matmul", "run_step", "main"}));
  EXPECT_EQ(frames.at(first["sf"].get<std::string>())["category"], "train");
  // Shared callers are one node: every stack starts at main.
  std::size_t roots = 0;
  for (const auto& [id, f] : frames.items()) roots += f.contains("parent") ? 0 : 1;
  EXPECT_EQ(roots, 1u);
  EXPECT_EQ(frames.size(), 10u);  // matmul's two lines are one node, as in the flame tree
  EXPECT_EQ(j["otherData"]["cpu_sampling"]["samples"], 14);
}

TEST(ChromeTrace, WithoutCpuSamplingNoSampleEvents) {
  const auto j = trace_of(nnprof::testing::rich_profile());
  EXPECT_FALSE(j.contains("stackFrames"));
  EXPECT_FALSE(j["otherData"].contains("cpu_sampling"));
  for (const auto& e : j["traceEvents"]) EXPECT_NE(e.value("cat", ""), "cpu_sample");
}

TEST(ChromeTrace, NestedSpansNestInTime) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 3; ++i) {
    NNPROF_SCOPE_IN(profiler, "outer");
    NNPROF_SCOPE_IN(profiler, "inner");
  }
  const auto j = trace_of(profiler.snapshot());
  std::vector<std::pair<double, double>> outer, inner;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "X") continue;
    (e["name"] == "outer" ? outer : inner).emplace_back(e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>());
  }
  ASSERT_EQ(outer.size(), 3u);
  ASSERT_EQ(inner.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    EXPECT_LE(outer[i].first, inner[i].first);
    EXPECT_GE(outer[i].second, inner[i].second);
  }
}

TEST(ChromeTrace, IsRegisteredAndInvalidUtf8IsReplaced) {
  const auto* e = nnprof::io::find_exporter("chrome");
  ASSERT_NE(e, nullptr);
  auto p = nnprof::testing::rich_profile();
  p.strings[1] = std::string("bad\xff\xfe utf8");
  std::ostringstream out;
  e->write(p, out);
  EXPECT_TRUE(nlohmann::json::accept(out.str()));
}

}  // namespace
