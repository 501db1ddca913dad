// The JSON report, parsed back with nlohmann-json and checked value by value.
#include "io/json_report.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "cpu_profile_fixture.hpp"
#include "sample_profiles.hpp"
#include "io/exporter_registry.hpp"
#include "nnprof/nnprof.hpp"
#include "report/report_data.hpp"

namespace nnprof {
namespace {

using nlohmann::json;
using testing::kMiB;
using testing::kMs;
using testing::kUs;

std::string text_of(const Profile& profile) {
  std::ostringstream out;
  io::write_json_report(profile, out);
  return out.str();
}

json json_of(const Profile& profile) { return json::parse(text_of(profile)); }

std::string text_of(const report::ReportData& data) {
  std::ostringstream out;
  io::write_json_report(data, out);
  return out.str();
}

// Parsed keeping the order of keys in the file (json sorts them).
nlohmann::ordered_json ordered_of(const Profile& profile) {
  return nlohmann::ordered_json::parse(text_of(profile));
}

std::vector<std::string> keys(const nlohmann::ordered_json& object) {
  std::vector<std::string> result;
  for (const auto& [key, value] : object.items()) result.push_back(key);
  return result;
}

TEST(JsonReport, TopLevelShape) {
  const std::string text = text_of(testing::export_profile());
  // Keys keep the documented order in the file, for a person reading it.
  EXPECT_TRUE(text.starts_with("{\n  \"schema\": \"nnprof-report\",\n  \"schema_version\": 1,\n"));
  EXPECT_TRUE(text.ends_with("}\n"));
  const json j = json::parse(text);
  ASSERT_TRUE(j.is_object());
  EXPECT_EQ(j.size(), 12u);
  EXPECT_EQ(j["schema"], "nnprof-report");
  EXPECT_EQ(j["schema_version"], 1);
  for (const char* key : {"metadata", "timing", "memory", "throughput", "completeness"}) {
    EXPECT_TRUE(j[key].is_object()) << key;
  }
  for (const char* key : {"call_tree", "threads", "diagnostics"}) EXPECT_TRUE(j[key].is_array()) << key;
}

TEST(JsonReport, AnnotationsFollowTheMetadataWhenThereAreAny) {
  Profile p = testing::export_profile();
  EXPECT_FALSE(json_of(p).contains("annotations")) << "a profile without annotations reads as before";
  p.annotations = {{"git_commit", "8d2e793"}, {"batch_size", "32"}, {"note", "bad \xff utf8 \"quoted\""}};
  const auto ordered = ordered_of(p);
  const std::vector<std::string> top = keys(ordered);
  ASSERT_GE(top.size(), 4u);
  EXPECT_EQ(top[2], "metadata");
  EXPECT_EQ(top[3], "annotations");
  EXPECT_EQ(keys(ordered["annotations"]), (std::vector<std::string>{"batch_size", "git_commit", "note"}));
  EXPECT_EQ(ordered["annotations"]["git_commit"], "8d2e793");
  EXPECT_EQ(ordered["annotations"]["batch_size"], "32") << "values are strings, as given";
  EXPECT_EQ(ordered["annotations"]["note"], "bad \xef\xbf\xbd utf8 \"quoted\"");
}

TEST(JsonReport, Metadata) {
  const json m = json_of(testing::export_profile())["metadata"];
  EXPECT_EQ(m["nnprof_version"], "0.1.0");
  EXPECT_EQ(m["hostname"], "testhost");
  EXPECT_EQ(m["os"], "Linux 6.1.0");
  EXPECT_EQ(m["cpu_model"], "Test CPU @ 3.0GHz");
  EXPECT_EQ(m["logical_cpus"], 8);
  EXPECT_EQ(m["compiler"], "GCC 12.2.0");
  EXPECT_EQ(m["command_line"], "./train --epochs 1 | tee log.txt");
  EXPECT_EQ(m["pid"], 4242);
  EXPECT_EQ(m["duration_ns"], 250 * kMs);
  EXPECT_EQ(m["instrumented_ns"], 100 * kMs);
  const json& c = m["clock"];
  EXPECT_EQ(c["source"], "tsc");
  EXPECT_EQ(c["ns_per_tick"].get<double>(), 0.25);
  EXPECT_EQ(c["tick_origin"], 1000);
  EXPECT_EQ(c["monotonic_origin_ns"], 2'000'000);
  // Beyond 2^53: must survive as an exact integer, not pass through a double.
  EXPECT_EQ(c["unix_origin_ns"].get<std::int64_t>(), 1'700'000'000'000'000'000);
  EXPECT_EQ(c["relative_error"].get<double>(), 1e-6);
}

TEST(JsonReport, TimingPerScopeInProfileOrder) {
  const auto ordered = ordered_of(testing::export_profile())["timing"];
  EXPECT_EQ(keys(ordered), (std::vector<std::string>{"train_step", "forward", "matmul", "backward",
                                                     testing::kWeirdName}));
  EXPECT_EQ(keys(ordered["matmul"]),
            (std::vector<std::string>{"count", "total_ns", "self_ns", "mean_ns", "std_ns", "min_ns",
                                      "max_ns", "p50_ns", "p95_ns", "p99_ns", "threads", "items",
                                      "items_per_second", "memory"}));
  const json t = json_of(testing::export_profile())["timing"];
  const json& matmul = t["matmul"];
  EXPECT_EQ(matmul["count"], 1000);
  EXPECT_EQ(matmul["total_ns"], 40 * kMs);
  EXPECT_EQ(matmul["self_ns"], 40 * kMs);
  EXPECT_EQ(matmul["mean_ns"].get<double>(), 40e3);
  EXPECT_EQ(matmul["std_ns"].get<double>(), 2500.0);
  EXPECT_EQ(matmul["min_ns"], 35 * kUs);
  EXPECT_EQ(matmul["max_ns"], 90 * kUs);
  EXPECT_EQ(matmul["p50_ns"], 39 * kUs);
  EXPECT_EQ(matmul["p95_ns"], 52 * kUs);
  EXPECT_EQ(matmul["p99_ns"], 80 * kUs);
  EXPECT_EQ(matmul["threads"], 2);
  EXPECT_EQ(matmul["items"], 2000);
  EXPECT_EQ(matmul["items_per_second"].get<double>(), 50'000.0);
  EXPECT_EQ(matmul["memory"], (json{{"alloc_bytes", 12 * kMiB},
                                    {"alloc_count", 300},
                                    {"free_bytes", 6 * kMiB},
                                    {"free_count", 150}}));

  const json& weird = t[testing::kWeirdName];
  EXPECT_EQ(weird["count"], 10);
  EXPECT_EQ(weird["total_ns"], 5 * kMs);
  EXPECT_EQ(weird["std_ns"].get<double>(), 75'500.25);
  EXPECT_EQ(weird["items"], 0);
  EXPECT_EQ(weird["items_per_second"].get<double>(), 0.0);
  EXPECT_EQ(weird["memory"]["alloc_bytes"], 4 * kMiB);
  EXPECT_EQ(t["train_step"]["items_per_second"].get<double>(), 3200.0);
}

TEST(JsonReport, MemoryAndThroughput) {
  const json j = json_of(testing::export_profile());
  const json& m = j["memory"];
  EXPECT_EQ(m["current_bytes"], 4 * kMiB + 1536);
  EXPECT_EQ(m["peak_bytes"], 7 * kMiB);
  EXPECT_EQ(m["peak_time_ns"], 42 * kMs);
  const auto ordered = ordered_of(testing::export_profile());
  EXPECT_EQ(keys(ordered["memory"]["counters"]), (std::vector<std::string>{"activations", "weights"}));
  EXPECT_EQ(m["counters"]["activations"], (json{{"current_bytes", 1536},
                                                 {"peak_bytes", 3 * kMiB},
                                                 {"alloc_bytes", 12 * kMiB},
                                                 {"freed_bytes", 12 * kMiB - 1536},
                                                 {"alloc_count", 300},
                                                 {"free_count", 299}}));
  EXPECT_EQ(m["counters"]["weights"]["freed_bytes"], 0);

  // Only scopes that reported items.
  const json& t = j["throughput"];
  EXPECT_EQ(keys(ordered["throughput"]), (std::vector<std::string>{"train_step", "matmul"}));
  EXPECT_EQ(t["train_step"]["items"], 320);
  EXPECT_EQ(t["train_step"]["total_ns"], 100 * kMs);
  EXPECT_EQ(t["train_step"]["items_per_second"].get<double>(), 3200.0);
  EXPECT_EQ(t["matmul"]["items_per_second"].get<double>(), 50'000.0);
}

TEST(JsonReport, NoHeapKeysWithoutHeapTracking) {
  const json j = json_of(testing::export_profile());
  EXPECT_FALSE(j.contains("heap"));
  EXPECT_TRUE(j["bottlenecks"].is_array());  // every profile has the list, of whatever kinds apply
  EXPECT_FALSE(j["timing"]["matmul"].contains("heap"));
  EXPECT_FALSE(j["call_tree"][0].contains("heap"));
}

TEST(JsonReport, HeapSummaryPeakRssAndVerdict) {
  const auto ordered = ordered_of(testing::heap_profile());
  EXPECT_EQ(keys(ordered), (std::vector<std::string>{"schema", "schema_version", "metadata", "timing", "memory", "heap",
                                                     "bottlenecks", "recommendations", "throughput", "call_tree", "threads",
                                                     "completeness", "diagnostics"}));
  const json j = json_of(testing::heap_profile());
  const json& h = j["heap"];
  EXPECT_EQ(h["source"], "in-process");
  EXPECT_EQ(h["alloc_bytes"], 171'056'128);
  EXPECT_EQ(h["alloc_count"], 185);
  EXPECT_EQ(h["free_bytes"], 152'174'592);
  EXPECT_EQ(h["free_count"], 169);
  EXPECT_EQ(h["current_bytes"], 18'881'536);
  EXPECT_EQ(h["current_blocks"], 16);
  EXPECT_EQ(h["peak"], (json{{"bytes", 22 * kMiB + 4096},
                             {"time_ns", 948'500 * kUs},
                             {"thread", 0},
                             {"scope_path", "train_step > forward > matmul"},
                             {"resolution_bytes", 0}}));
  EXPECT_EQ(h["leaked_bytes"], 10 * kMiB + 3072);
  EXPECT_EQ(h["leaked_blocks"], 13);
  EXPECT_EQ(h["reachable_blocks"], 3);
  EXPECT_EQ(h["untracked_frees"], 1);
  EXPECT_EQ(h["rss"], (json{{"initial_bytes", 48 * kMiB}, {"peak_bytes", 59 * kMiB}, {"final_bytes", 57 * kMiB}}));
  const json& v = h["leak_verdict"];
  EXPECT_EQ(v["memory_leak_detected"], true);
  EXPECT_EQ(v["unfreed_bytes"], 10 * kMiB + 3072);
  EXPECT_EQ(v["unfreed_unreachable"], true);
  EXPECT_EQ(v["heap_growth"]["steady"], true);
  EXPECT_EQ(v["heap_growth"]["samples"], 25);
  EXPECT_EQ(v["heap_growth"]["from_ns"], 500 * kMs);
  EXPECT_EQ(v["heap_growth"]["to_ns"], 980 * kMs);
  EXPECT_NEAR(v["heap_growth"]["bytes_per_second"].get<double>(), 125.0 / 13.0 * kMiB, 1e-3);
  EXPECT_EQ(v["explanation"],
            "Memory leak detected: 13 blocks (10.0 MiB) were unreachable at the end; heap in use grew steadily over "
            "the second half of the run (500 ms to 980 ms): by 4.62 MiB, 9.62 MiB/s; RSS grew steadily too: by 4.62 "
            "MiB, 9.62 MiB/s.");
  ASSERT_EQ(h["timeline"].size(), 50u);
  EXPECT_EQ(h["timeline"][49], (json{{"time_ns", 980 * kMs},
                                     {"heap_bytes", 17'829'888},
                                     {"rss_bytes", 59'768'832},
                                     {"rss_peak_bytes", 61'865'984}}));
}

TEST(JsonReport, HeapTopAllocatorsLeaksAndPerScopeHeap) {
  const json j = json_of(testing::heap_profile());
  const json& top = j["heap"]["top_allocators"];
  ASSERT_EQ(top.size(), 6u);
  EXPECT_EQ(top[0]["scope"], "load_batch");
  EXPECT_EQ(top[0]["alloc_bytes"], 80 * kMiB + 3072);
  EXPECT_EQ(top[0]["alloc_count"], 13);
  EXPECT_EQ(top[0]["bytes_per_call"], (80 * kMiB + 3072) / 10);
  EXPECT_EQ(top[0]["retained_bytes"], 8 * kMiB + 3072);
  EXPECT_EQ(top[0]["retained_blocks"], 4);
  EXPECT_EQ(top[0]["peak_live_bytes"], 16 * kMiB + 3072);
  EXPECT_NEAR(top[0]["share"].get<double>(), 0.49041886, 1e-8);
  EXPECT_EQ(top[5]["scope"], "train_step");
  const json& leaks = j["heap"]["leaks"];
  ASSERT_EQ(leaks.size(), 4u);
  EXPECT_EQ(leaks[0]["scope_path"], "train_step > optimizer_step");
  EXPECT_EQ(leaks[0]["reachable"], false);
  EXPECT_EQ(leaks[0]["blocks"], 10);
  EXPECT_EQ(leaks[0]["bytes"], 10 * kMiB);
  const json history = {{"address", 0x401a2c},
                        {"function", "History::append(Tensor const&)"},
                        {"file", "src/optim/history.cpp"},
                        {"line", 42},
                        {"module", "./train"}};
  EXPECT_EQ(leaks[0]["caller"], history);
  ASSERT_EQ(leaks[0]["stack"].size(), 3u);
  EXPECT_EQ(leaks[0]["stack"][0], history);
  EXPECT_EQ(leaks[0]["stack"][2]["function"], "main");
  // An unsymbolized frame: nulls, line 0.
  EXPECT_EQ(leaks[1]["stack"][2], (json{{"address", 0x7f3a1c2b4d10},
                                        {"function", nullptr},
                                        {"file", nullptr},
                                        {"line", 0},
                                        {"module", "libc.so.6"}}));
  EXPECT_EQ(leaks[2]["scope_path"], nullptr) << "allocated outside any scope";
  EXPECT_EQ(leaks[2]["stack"], nullptr) << "no stack sampled";
  EXPECT_EQ(j["timing"]["load_batch"]["heap"], (json{{"alloc_bytes", 80 * kMiB + 3072},
                                                     {"alloc_count", 13},
                                                     {"free_bytes", 0},
                                                     {"free_count", 0},
                                                     {"retained_bytes", 8 * kMiB + 3072},
                                                     {"retained_blocks", 4},
                                                     {"peak_live_bytes", 16 * kMiB + 3072}}));
  EXPECT_EQ(j["call_tree"][0]["name"], "train_step");
  EXPECT_EQ(j["call_tree"][0]["heap"]["free_bytes"], 640 * 1024 + 72 * kMiB);
}

// The bottlenecks of `kinds` only, in the report's order.
json only_kinds(const json& all, std::initializer_list<const char*> kinds) {
  json out = json::array();
  for (const json& b : all)
    for (const char* k : kinds)
      if (b["kind"] == k) out.push_back(b);
  return out;
}

TEST(JsonReport, Bottlenecks) {
  const json b = only_kinds(json_of(testing::heap_profile())["bottlenecks"], {"memory_hotspot", "memory_leak"});
  ASSERT_EQ(b.size(), 3u);
  EXPECT_EQ(b[0]["kind"], "memory_hotspot");
  EXPECT_EQ(b[0]["severity"], "high");
  EXPECT_EQ(b[0]["scope"], "load_batch");
  EXPECT_NEAR(b[0]["value"].get<double>(), 0.7272767, 1e-6);
  EXPECT_EQ(b[0]["threshold"].get<double>(), 0.3);
  EXPECT_EQ(b[0]["description"],
            "load_batch held up to 16.0 MiB live at once, 72.7% of the 22.0 MiB heap peak (threshold 30.0%).");
  EXPECT_EQ(b[2]["kind"], "memory_leak");
  EXPECT_EQ(b[2]["severity"], "medium");
  EXPECT_EQ(b[2]["scope"], "optimizer_step");
  EXPECT_EQ(b[2]["threshold"].get<double>(), 0.05);
  EXPECT_EQ(b[2]["suggestion"],
            "Free the blocks allocated at History::append(Tensor const&) (src/optim/history.cpp:42) in train_step > "
            "optimizer_step (10.0 MiB in 10 blocks), or give them an owner that frees them (a std::unique_ptr, a "
            "container, an RAII wrapper).");
}

// ---- CPU samples ---------------------------------------------------------------------

TEST(JsonReport, NoCpuKeyWithoutSampling) {
  const json j = json_of(testing::export_profile());
  EXPECT_FALSE(j.contains("cpu"));
}

TEST(JsonReport, CpuSummaryAndFunctions) {
  const auto ordered = ordered_of(testing::cpu_profile());
  EXPECT_EQ(keys(ordered), (std::vector<std::string>{"schema", "schema_version", "metadata", "timing", "memory", "cpu",
                                                     "bottlenecks", "recommendations", "throughput", "call_tree", "threads",
                                                     "completeness", "diagnostics"}));
  const json c = json_of(testing::cpu_profile())["cpu"];
  EXPECT_EQ(c["mode"], "cpu");
  EXPECT_EQ(c["mechanism"], "perf_event");
  EXPECT_EQ(c["unwinder"], "libunwind");
  EXPECT_EQ(c["requested_hz"], 1000.0);
  EXPECT_EQ(c["period_ns"], 1'000'000);
  EXPECT_EQ(c["samples"], 14);
  EXPECT_EQ(c["sampled_ns"], 16 * kMs);
  EXPECT_EQ(c["samples_dropped"], 3);
  EXPECT_EQ(c["truncated_stacks"], 1);
  EXPECT_EQ(c["samples_without_stack"], 1);
  EXPECT_EQ(c["threads_sampled"], 2);
  ASSERT_EQ(c["functions"].size(), 8u);
  const json& matmul = c["functions"][0];
  EXPECT_EQ(matmul["name"], "matmul");
  EXPECT_EQ(matmul["module"], "train");
  EXPECT_TRUE(matmul["address"].is_null());
  EXPECT_EQ(matmul["self_samples"], 4);
  EXPECT_EQ(matmul["self_ns"], 6 * kMs);
  EXPECT_DOUBLE_EQ(matmul["self_share"].get<double>(), 4.0 / 14.0);
  EXPECT_EQ(matmul["total_samples"], 9);
  EXPECT_EQ(matmul["total_ns"], 11 * kMs);
  EXPECT_EQ(c["functions"][2]["name"], "recurse");
  EXPECT_EQ(c["functions"][2]["total_samples"], 2);  // recursion counted once per sample
  EXPECT_EQ(c["functions"][4]["name"], "libfoo.so+0x7000");
  EXPECT_EQ(c["functions"][4]["address"], 0x7000);
  EXPECT_TRUE(c["functions"][3]["module"].is_null());  // [unknown]
}

TEST(JsonReport, CpuCallGraphHotLinesAndScopes) {
  const json c = json_of(testing::cpu_profile())["cpu"];
  ASSERT_EQ(c["call_graph"].size(), 6u);  // every function with self samples (at most 10)
  const json& matmul = c["call_graph"][0];
  EXPECT_EQ(matmul["function"], "matmul");
  EXPECT_EQ(matmul["callers"], json::parse(R"([{"function":"run_step","samples":9,"ns":11000000,"share":1.0}])"));
  ASSERT_EQ(matmul["callees"].size(), 2u);
  EXPECT_EQ(matmul["callees"][0]["function"], "dot");
  EXPECT_EQ(matmul["callees"][0]["samples"], 4);
  ASSERT_EQ(c["hot_lines"].size(), 3u);
  EXPECT_EQ(c["hot_lines"][0]["file"], "model.cpp");
  EXPECT_EQ(c["hot_lines"][0]["line"], 31);
  EXPECT_EQ(c["hot_lines"][0]["function"], "matmul");
  EXPECT_EQ(c["hot_lines"][0]["samples"], 4);
  EXPECT_EQ(c["hot_lines"][0]["ns"], 6 * kMs);
  ASSERT_EQ(c["scopes"].size(), 4u);
  EXPECT_EQ(c["scopes"][1]["scope_path"], "train_step > forward");
  EXPECT_EQ(c["scopes"][1]["samples"], 9);
  EXPECT_EQ(c["scopes"][1]["ns"], 11 * kMs);
  EXPECT_EQ(c["scopes"][1]["top_functions"][0]["name"], "matmul");
  EXPECT_DOUBLE_EQ(c["scopes"][1]["top_functions"][0]["self_share"].get<double>(), 4.0 / 9.0);
  EXPECT_TRUE(c["scopes"][2]["scope_path"].is_null());  // outside any scope
  EXPECT_EQ(c["scopes"][2]["samples"], 2);
}

TEST(JsonReport, CpuHotspotInBottlenecks) {
  Profile p = testing::cpu_profile();
  // 20 more samples in matmul: 24 of 34 samples, past 40%.
  for (int i = 0; i < 20; ++i) p.cpu_samples.push_back({100'000'000, 0, testing::kStackMatmul, 2, 1'000'000});
  const json b = only_kinds(json_of(p)["bottlenecks"], {"cpu_hotspot"});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0]["kind"], "cpu_hotspot");
  EXPECT_EQ(b[0]["severity"], "medium");
  EXPECT_TRUE(b[0]["scope"].is_null());
  EXPECT_DOUBLE_EQ(b[0]["value"].get<double>(), 24.0 / 34.0);
  EXPECT_EQ(b[0]["threshold"], 0.4);
  EXPECT_EQ(b[0]["description"],
            "matmul (train) was running in 70.6% of the 34 CPU samples (26.0 ms of its own; threshold 40.0%).");
  // Without a hotspot there is none.
  EXPECT_EQ(only_kinds(json_of(testing::cpu_profile())["bottlenecks"], {"cpu_hotspot"}), json::array());
}

TEST(JsonReport, CallTreeIsNested) {
  const json tree = json_of(testing::export_profile())["call_tree"];
  ASSERT_EQ(tree.size(), 1u);
  const json& train = tree[0];
  EXPECT_EQ(keys(ordered_of(testing::export_profile())["call_tree"][0]), (std::vector<std::string>{"name", "count", "total_ns", "self_ns", "mean_ns", "std_ns", "min_ns",
                                                   "max_ns", "threads", "flops", "bytes", "memory", "children"}));
  EXPECT_EQ(train["name"], "train_step");
  EXPECT_EQ(train["count"], 10);
  EXPECT_EQ(train["total_ns"], 100 * kMs);
  EXPECT_EQ(train["self_ns"], 5 * kMs);
  EXPECT_EQ(train["mean_ns"].get<double>(), 10e6);
  EXPECT_EQ(train["min_ns"], 9 * kMs);
  EXPECT_EQ(train["max_ns"], 12 * kMs);
  // Children in the profile's order (node ids 5, 4, 2).
  const json& children = train["children"];
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(children[0]["name"], testing::kWeirdName);
  EXPECT_EQ(children[0]["memory"]["alloc_bytes"], 4 * kMiB);
  EXPECT_EQ(children[1]["name"], "backward");
  EXPECT_TRUE(children[1]["children"].empty());
  EXPECT_EQ(children[2]["name"], "forward");
  ASSERT_EQ(children[2]["children"].size(), 1u);
  const json& matmul = children[2]["children"][0];
  EXPECT_EQ(matmul["name"], "matmul");
  EXPECT_EQ(matmul["count"], 1000);
  EXPECT_EQ(matmul["self_ns"], 40 * kMs);
  EXPECT_EQ(matmul["threads"], 2);
  EXPECT_TRUE(matmul["children"].is_array());
  EXPECT_TRUE(matmul["children"].empty());
}

TEST(JsonReport, ThreadsCompletenessDiagnostics) {
  const json j = json_of(testing::export_profile());
  EXPECT_EQ(j["threads"], (json::parse(R"([
    {"id": 0, "os_tid": 1001, "name": "main", "exited": false, "scopes_recorded": 1040,
     "top_level_ns": 100000000},
    {"id": 1, "os_tid": 1002, "name": "worker", "exited": true, "scopes_recorded": 0,
     "top_level_ns": 0}])")));
  EXPECT_EQ(j["completeness"], json::parse(R"({
    "scopes_recorded": 1040, "spans_enabled": true, "spans_kept": 1000, "spans_dropped": 40,
    "spans_overwritten": 0, "events_dropped": 0, "buffer_policy": "keep-first",
    "memory_cap_bytes": 67108864, "hot_path_allocations": 2, "overhead_per_scope_ns": 20.0,
    "overhead_total_ns": 20800})"));
  const json& d = j["diagnostics"];
  ASSERT_EQ(d.size(), 2u);
  EXPECT_EQ(d[0]["kind"], "spans_dropped");
  EXPECT_EQ(d[0]["severity"], "warning");
  EXPECT_TRUE(d[0]["thread"].is_null());
  EXPECT_TRUE(d[0]["name"].is_null());
  EXPECT_EQ(d[0]["count"], 40);
  EXPECT_EQ(d[0]["message"], "40 spans were dropped after the memory cap of 64.0 MiB was reached.");
  EXPECT_EQ(d[1], (json{{"kind", "unclosed_scope"},
                        {"severity", "info"},
                        {"thread", 1},
                        {"name", testing::kWeirdName},
                        {"count", 1},
                        {"message", "A scope was still open when the profile was taken."}}));
}

TEST(JsonReport, EmptyProfileIsValidWithEmptyCollections) {
  const json j = json_of(Profile{});
  EXPECT_EQ(j["schema"], "nnprof-report");
  EXPECT_TRUE(j["timing"].empty());
  EXPECT_TRUE(j["throughput"].empty());
  EXPECT_TRUE(j["memory"]["counters"].empty());
  EXPECT_TRUE(j["call_tree"].empty());
  EXPECT_TRUE(j["threads"].empty());
  EXPECT_TRUE(j["diagnostics"].empty());
  EXPECT_EQ(j["metadata"]["instrumented_ns"], 0);
}

TEST(JsonReport, InvalidUtf8IsReplacedNotThrown) {
  Profile p = testing::export_profile();
  p.strings[testing::kBackward] = "back\xffward";
  const json j = json_of(p);
  EXPECT_TRUE(j["timing"].contains("back\xEF\xBF\xBDward"));
}

TEST(JsonReport, DeepTreeKeepsEveryLevel) {
  // 255 levels, the deepest the recorder supports, and a cycle back to a node already
  // written (a malformed file) that must not loop.
  Profile p;
  p.strings = {"level"};
  std::vector<CallTreeNode> nodes(1);
  constexpr std::uint32_t kDepth = 255;
  for (std::uint32_t id = 1; id <= kDepth; ++id) {
    nodes[id - 1].children = {id};
    CallTreeNode n;
    n.id = id;
    n.parent = id - 1;
    n.name = 0;
    n.depth = id;
    n.time.count = 1;
    n.time.sum_ns = kDepth + 1 - id;
    nodes.push_back(n);
  }
  nodes.back().children = {1};
  p.call_tree = std::move(nodes);
  const json j = json_of(p);
  const json* node = &j["call_tree"];
  std::uint32_t depth = 0;
  while (!node->empty()) {
    ASSERT_EQ(node->size(), 1u);
    node = &(*node)[0];
    ++depth;
    EXPECT_EQ((*node)["total_ns"], kDepth + 1 - depth);
    node = &(*node)["children"];
  }
  EXPECT_EQ(depth, kDepth);
}

TEST(JsonReport, RegisteredByNameAndExtension) {
  const io::Exporter* e = io::find_exporter("json");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name(), "json");
  EXPECT_EQ(e->extension(), ".json");
  EXPECT_EQ(io::find_exporter("JSON"), e);
  EXPECT_EQ(io::find_exporter_for_path("out/run.json"), e);
  std::ostringstream out;
  e->write(testing::export_profile(), out);
  EXPECT_EQ(out.str(), text_of(testing::export_profile()));
}

TEST(JsonReport, ReachableThroughReportFormat) {
  std::ostringstream out;
  Report(testing::export_profile()).write(out, ReportFormat::Json);
  EXPECT_EQ(out.str(), text_of(testing::export_profile()));
}

TEST(JsonReport, RecordedProfile) {
  using namespace std::chrono_literals;
  Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "step");
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      for (int i = 0; i < 2; ++i) {
        NNPROF_SCOPE_IN(profiler, "layer");
        std::this_thread::sleep_for(1ms);
      }
    }
    profiler.record_alloc("activations", 4096);
    profiler.add_items("step", 64);
  }
  const Profile p = profiler.snapshot();
  std::ostringstream out;
  io::find_exporter("json")->write(p, out);
  const json j = json::parse(out.str());

  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["timing"].size(), p.scopes.size());
  for (const ScopeStats& s : p.scopes) {
    const json& t = j["timing"][p.str(s.name)];
    EXPECT_EQ(t["count"], s.time.count);
    EXPECT_EQ(t["total_ns"], s.total_ns);
    EXPECT_EQ(t["self_ns"], s.self_ns);
  }
  EXPECT_EQ(j["timing"]["layer"]["count"], 2);
  EXPECT_GE(j["timing"]["layer"]["total_ns"].get<std::uint64_t>(), 2'000'000u);
  EXPECT_EQ(j["throughput"]["step"]["items"], 64);
  EXPECT_EQ(j["memory"]["counters"]["activations"]["alloc_bytes"], 4096);
  EXPECT_EQ(j["memory"]["peak_bytes"], 4096);

  ASSERT_EQ(j["call_tree"].size(), 1u);
  const json& step = j["call_tree"][0];
  EXPECT_EQ(step["name"], "step");
  ASSERT_EQ(step["children"].size(), 1u);
  const json& forward = step["children"][0];
  EXPECT_EQ(forward["name"], "forward");
  ASSERT_EQ(forward["children"].size(), 1u);
  EXPECT_EQ(forward["children"][0]["name"], "layer");
  EXPECT_EQ(forward["children"][0]["count"], 2);
  EXPECT_EQ(j["metadata"]["instrumented_ns"], p.instrumented_ns());
  EXPECT_EQ(j["threads"].size(), p.threads.size());
}

// The JSON report is report::analyse serialised: writing a profile writes its ReportData.
TEST(JsonReport, IsTheReportDataSerialised) {
  for (const Profile& p : {testing::export_profile(), testing::rich_profile(), testing::heap_profile(),
                           testing::cpu_profile()}) {
    EXPECT_EQ(text_of(report::analyse(p)), text_of(p));
  }
}

// Lists docs/JSON_SCHEMA.md documents as complete stay complete, however few rows the
// sections show: the sections cut ReportData's lists, the JSON does not.
TEST(JsonReport, CompleteListsIgnoreTheRowsTheSectionsShow) {
  report::ReportLimits few;
  few.cpu_functions = 1;
  few.cpu_caller_functions = 1;
  few.hot_lines = 1;
  few.cpu_scopes = 1;
  few.cpu_scope_top = 1;
  few.allocators = 1;
  const Profile cpu = testing::cpu_profile();
  const json c = json::parse(text_of(report::analyse(cpu, few)))["cpu"];
  EXPECT_EQ(c, json_of(cpu)["cpu"]);
  EXPECT_EQ(c["functions"].size(), 8u);   // every function
  EXPECT_EQ(c["call_graph"].size(), 6u);  // every function with self samples (at most 10)
  EXPECT_EQ(c["hot_lines"].size(), 3u);   // every line (at most 50)
  EXPECT_EQ(c["scopes"].size(), 4u);      // every scope path
  EXPECT_EQ(c["scopes"][1]["top_functions"].size(), 5u);
  const Profile heap = testing::heap_profile();
  const json h = json::parse(text_of(report::analyse(heap, few)))["heap"];
  EXPECT_EQ(h["top_allocators"].size(), 6u);  // every scope that allocated
  EXPECT_EQ(h, json_of(heap)["heap"]);
}

// The bounded CPU lists (call graph, hot lines, functions per scope) follow ReportLimits,
// whose defaults are the bounds the schema documents.
TEST(JsonReport, BoundedCpuListsFollowTheReportLimits) {
  const report::ReportLimits defaults;
  EXPECT_EQ(defaults.cpu_call_graph_functions, 10u);
  EXPECT_EQ(defaults.hot_lines_kept, 50u);
  EXPECT_EQ(defaults.cpu_scope_top_kept, 5u);
  report::ReportLimits limits;
  limits.cpu_caller_functions = 1;
  limits.cpu_call_graph_functions = 2;
  limits.hot_lines = 1;
  limits.hot_lines_kept = 2;
  limits.cpu_scope_top = 1;
  limits.cpu_scope_top_kept = 1;
  const Profile sampled = testing::cpu_profile();
  const json c = json::parse(text_of(report::analyse(sampled, limits)))["cpu"];
  ASSERT_EQ(c["call_graph"].size(), 2u);
  EXPECT_EQ(c["call_graph"][0]["function"], "matmul");
  ASSERT_EQ(c["hot_lines"].size(), 2u);
  EXPECT_EQ(c["hot_lines"][0]["line"], 31);
  for (const json& scope : c["scopes"]) EXPECT_EQ(scope["top_functions"].size(), 1u);
  // A shown limit above the kept one wins: the sections always have their rows.
  limits.cpu_call_graph_functions = 0;
  limits.cpu_caller_functions = 3;
  const Profile sampled_again = testing::cpu_profile();
  EXPECT_EQ(json::parse(text_of(report::analyse(sampled_again, limits)))["cpu"]["call_graph"].size(), 3u);
}

}  // namespace
}  // namespace nnprof
