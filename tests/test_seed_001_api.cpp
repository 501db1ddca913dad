// The API added for seed 001 (Democratising's profiling guide): CpuProfilerBuilder and
// function_stats, Recommendation::priority, analyze_critical_path and Tracer, roofline_verdicts,
// Timeline, PerformanceAnalysis, and the largest allocation in the .nnprof store.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cmath>
#include <fstream>
#include <iterator>
#include <numeric>
#include <string>
#include <thread>

#include "analysis/advisor.hpp"
#include "analysis/compute.hpp"
#include "analysis/cpu_profile.hpp"
#include "nnprof/error.hpp"
#include "nnprof/performance.hpp"
#include "nnprof/sampling_profiler.hpp"
#include "nnprof/scope.hpp"
#include "nnprof/timeline.hpp"
#include "nnprof/trace.hpp"
#include "render/sentence_markup.hpp"
#include "support/cpu_profile_fixture.hpp"
#include "support/sample_profiles.hpp"
#include "support/test_directory.hpp"

namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A CPU-bound loop that cannot be folded away, kept out of line so that it is a function of
// its own in the samples.
[[gnu::noinline]] double seed001_spin_loop(std::chrono::milliseconds how_long) {
  double x = 1.0;
  const auto until = std::chrono::steady_clock::now() + how_long;
  while (std::chrono::steady_clock::now() < until)
    for (int i = 0; i < 20000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

// ---- function_stats and the CPU builder ------------------------------------------------

TEST(FunctionStats, AreTheCpuAnalysisFunctionsInMilliseconds) {
  const nnprof::Profile p = nnprof::testing::cpu_profile();
  const std::vector<nnprof::FunctionStats> stats = nnprof::function_stats(p);
  const std::vector<nnprof::analysis::CpuFunction> functions = nnprof::analysis::cpu_functions(p);
  ASSERT_EQ(stats.size(), functions.size());
  for (std::size_t i = 0; i < stats.size(); ++i) {
    SCOPED_TRACE(stats[i].name);
    EXPECT_EQ(stats[i].name, functions[i].name) << "same order as the analysis: most self samples first";
    EXPECT_EQ(stats[i].self_samples, functions[i].self.samples);
    EXPECT_EQ(stats[i].total_samples, functions[i].total.samples);
    EXPECT_DOUBLE_EQ(stats[i].self_time_ms, static_cast<double>(functions[i].self.ns) / 1e6);
    EXPECT_DOUBLE_EQ(stats[i].total_time_ms, static_cast<double>(functions[i].total.ns) / 1e6);
    EXPECT_DOUBLE_EQ(stats[i].percentage, functions[i].total_share * 100.0);
    EXPECT_GE(stats[i].percentage, stats[i].self_percentage);
    EXPECT_LE(stats[i].percentage, 100.0);
  }
  // The fixture's numbers: main is on 13 of 14 samples; matmul holds 4 self samples (6 ms: 4 on
  // thread 0 at 1 ms, 2 on thread 1 at 2 ms... see cpu_profile_fixture.hpp).
  const auto main_fn = std::find_if(stats.begin(), stats.end(), [](const auto& f) { return f.name == "main"; });
  ASSERT_NE(main_fn, stats.end());
  EXPECT_EQ(main_fn->total_samples, 13u);
  EXPECT_NEAR(main_fn->percentage, 13.0 * 100.0 / 14.0, 1e-9);
  const double self_sum = std::accumulate(stats.begin(), stats.end(), 0.0,
                                          [](double s, const nnprof::FunctionStats& f) { return s + f.self_percentage; });
  EXPECT_LE(self_sum, 100.0 + 1e-9);
  EXPECT_GT(self_sum, 90.0) << "only the sample without a stack has no function";
}

TEST(FunctionStats, EmptyWithoutSamples) { EXPECT_TRUE(nnprof::function_stats(nnprof::Profile{}).empty()); }

TEST(CpuProfilerBuilder, RefusesRatesOutOfRangeAtBuild) {
  EXPECT_THROW((void)nnprof::CpuProfilerBuilder().sample_rate(0).build(), nnprof::Error);
  EXPECT_THROW((void)nnprof::CpuProfilerBuilder().sample_rate(20000).build(), nnprof::Error);
  EXPECT_THROW((void)nnprof::CpuProfilerBuilder().sample_rate(std::nan("")).build(), nnprof::Error);
  auto profiler = nnprof::CpuProfilerBuilder().sample_rate(500).enable_call_graph(false).build();
  EXPECT_EQ(profiler.options().hz, 500.0);
  EXPECT_FALSE(profiler.options().call_graph);
  EXPECT_FALSE(profiler.running());
  EXPECT_THROW((void)profiler.stop(), nnprof::Error) << "stop() before start()";
}

TEST(CpuProfilerBuilder, FindsTheHottestFunctionOfASpinLoop) {
  auto profiler = nnprof::CpuProfilerBuilder().sample_rate(1000).enable_call_graph(true).build();
  profiler.start();
  EXPECT_TRUE(profiler.running());
  EXPECT_THROW(profiler.start(), nnprof::Error) << "a second start while running";
  const double x = seed001_spin_loop(std::chrono::milliseconds(200));
  const nnprof::CpuReport report = profiler.stop();
  EXPECT_FALSE(profiler.running());
  EXPECT_GT(x, 0.0);
  EXPECT_GE(report.total_time_ms, 200.0);
  EXPECT_LT(report.total_time_ms, 5000.0);
  ASSERT_GE(report.samples, 20u) << "200 ms of CPU at >= 250 Hz";
  ASSERT_FALSE(report.function_stats.empty());
  EXPECT_NE(report.function_stats.front().name.find("seed001_spin_loop"), std::string::npos)
      << "hottest: " << report.function_stats.front().name;
  EXPECT_GT(report.function_stats.front().self_percentage, 50.0);
  double self_sum = 0.0;
  for (const nnprof::FunctionStats& f : report.function_stats) {
    self_sum += f.self_percentage;
    EXPECT_LE(f.percentage, 100.0 + 1e-9) << f.name;
    EXPECT_GE(f.total_time_ms, f.self_time_ms) << f.name;
  }
  EXPECT_LE(self_sum, 100.0 + 1e-9);
  EXPECT_NEAR(report.sampled_time_ms,
              static_cast<double>(nnprof::analysis::cpu_sample_total(report.profile).ns) / 1e6, 1e-9);
  EXPECT_EQ(report.function_stats, nnprof::function_stats(report.profile)) << "the report is the profile's";
}

// ---- Recommendation::priority -------------------------------------------------------------

TEST(RecommendationPriority, IsOneToNInTheAdvisorsOrder) {
  const nnprof::Profile p = nnprof::testing::rich_profile();
  const std::vector<nnprof::Recommendation> recs = nnprof::recommend(p);
  const std::vector<nnprof::analysis::Advice> advice = nnprof::analysis::advise(p, {});
  ASSERT_FALSE(recs.empty());
  ASSERT_EQ(recs.size(), advice.size());
  for (std::size_t i = 0; i < recs.size(); ++i) {
    EXPECT_EQ(recs[i].priority, i + 1);
    EXPECT_EQ(recs[i].title, nnprof::render::text_of(p, advice[i].title)) << "priority follows the advisor's order";
  }
  EXPECT_EQ(nnprof::Recommendation{}.priority, 0u) << "0: not made by recommend()";
}

// ---- critical path and Tracer -------------------------------------------------------------

TEST(AnalyzeCriticalPath, IsTheCriticalPathByScopeInMicroseconds) {
  const nnprof::Profile p = nnprof::testing::synthetic_profile(2000, 2);
  const nnprof::CriticalPath path = nnprof::critical_path(p);
  const std::vector<nnprof::CriticalPathOperation> ops = nnprof::analyze_critical_path(p);
  ASSERT_FALSE(ops.empty());
  ASSERT_EQ(ops.size(), path.by_scope.size());
  double sum = 0.0;
  for (std::size_t i = 0; i < ops.size(); ++i) {
    const nnprof::CriticalPathScope& s = path.by_scope[i];
    if (s.kind == nnprof::CriticalStepKind::Scope) {
      EXPECT_EQ(ops[i].name, p.str(s.name));
    } else {
      EXPECT_EQ(ops[i].name, std::string("[") + nnprof::to_string(s.kind) + "]");
    }
    EXPECT_DOUBLE_EQ(ops[i].duration_us, static_cast<double>(s.duration_ns) / 1e3);
    EXPECT_EQ(ops[i].steps, s.steps);
    if (i > 0) {
      EXPECT_GE(ops[i - 1].duration_us, ops[i].duration_us) << "longest first";
    }
    sum += ops[i].percentage;
  }
  EXPECT_NEAR(sum, 100.0, 1e-6) << "the steps cover the path without gaps or overlap";
  EXPECT_TRUE(nnprof::analyze_critical_path(nnprof::Profile{}).empty());
  EXPECT_THROW((void)nnprof::analyze_critical_path(p, "no_such_scope"), nnprof::Error);
}

TEST(Tracer, RecordsSpansAndTheirCriticalPath) {
  EXPECT_THROW((void)nnprof::TracerBuilder().buffer_size(0).build(), nnprof::Error);
  EXPECT_THROW((void)nnprof::TracerBuilder().sampling_rate(-1).build(), nnprof::Error);
  auto tracer = nnprof::TracerBuilder().buffer_size(1 << 20).build();
  EXPECT_THROW((void)tracer.stop(), nnprof::Error);
  tracer.start();
  {
    NNPROF_SCOPE_IN(tracer.profiler(), "forward");
    {
      NNPROF_SCOPE_IN(tracer.profiler(), "long_op");
      std::this_thread::sleep_for(std::chrono::milliseconds(6));
    }
    NNPROF_SCOPE_IN(tracer.profiler(), "short_op");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const nnprof::Trace trace = tracer.stop();
  EXPECT_EQ(trace.profile().completeness.memory_cap_bytes, 1u << 20);
  EXPECT_EQ(trace.profile().spans.size(), 3u);
  const auto ops = trace.analyze_critical_path();
  ASSERT_GE(ops.size(), 2u);
  EXPECT_EQ(ops[0].name, "long_op");
  EXPECT_GE(ops[0].duration_us, 6000.0);
  EXPECT_GT(ops[0].percentage, 50.0);
  EXPECT_EQ(ops, nnprof::analyze_critical_path(trace.profile()));
}

// ---- roofline verdicts ----------------------------------------------------------------------

TEST(RooflineVerdicts, ComeFromTheComputeAnalysis) {
  nnprof::Profiler profiler;
  profiler.start_with_flops("matmul", 1e9, 10'000'000);     // 100 FLOP/byte: above the ridge
  profiler.stop("matmul");
  profiler.start_with_flops("relu", 1e6, 8'000'000);        // 0.125 FLOP/byte: below it
  profiler.stop("relu");
  profiler.start("no_work");
  profiler.stop("no_work");
  nnprof::Profile p = profiler.snapshot();
  p.machine = nnprof::testing::synthetic_peaks(1e11, 4e11, 1e10, 2e10, 4);  // ridge at 10 FLOP/byte
  const std::vector<nnprof::RooflineVerdict> verdicts = nnprof::roofline_verdicts(p);
  ASSERT_EQ(verdicts.size(), 2u) << "no_work declared nothing";
  const auto compute = nnprof::analysis::compute_scopes(p);
  for (const nnprof::RooflineVerdict& v : verdicts) {
    SCOPED_TRACE(v.operation);
    const auto c = std::find_if(compute.begin(), compute.end(),
                                [&](const auto& s) { return p.str(s.scope->name) == v.operation; });
    ASSERT_NE(c, compute.end());
    ASSERT_TRUE(c->roofline.has_value());
    EXPECT_DOUBLE_EQ(v.utilization, c->roofline->fraction);
    EXPECT_DOUBLE_EQ(v.intensity, c->roofline->intensity);
    EXPECT_EQ(v.one_core, c->one_core);
    EXPECT_GT(v.time_share, 0.0);
    EXPECT_LE(v.time_share, 1.0);
  }
  const auto find = [&](const std::string& name) {
    return *std::find_if(verdicts.begin(), verdicts.end(), [&](const auto& v) { return v.operation == name; });
  };
  EXPECT_EQ(find("matmul").limitation, "compute");
  EXPECT_EQ(find("relu").limitation, "memory");
  EXPECT_DOUBLE_EQ(find("relu").intensity, 0.125);

  p.machine = {};
  EXPECT_TRUE(nnprof::roofline_verdicts(p).empty()) << "no roofs without the machine's peaks";
}

// ---- Timeline ----------------------------------------------------------------------------------

class TimelineTest : public nnprof::testing::TestDirectory {
 protected:
  TimelineTest() : TestDirectory("timeline") {}
};

TEST_F(TimelineTest, TracksAreCheckedAndEachSaysWhetherItRecords) {
  EXPECT_THROW((void)nnprof::TimelineBuilder().add_track("Disk"), nnprof::Error);
  EXPECT_THROW((void)nnprof::TimelineBuilder().build(), nnprof::Error) << "no track";
  EXPECT_THROW((void)nnprof::TimelineBuilder().add_track("CPU").sample_rate(0).build(), nnprof::Error);

  auto timeline = nnprof::TimelineBuilder().add_track("cpu").add_track("Memory").add_track("CPU").build();
  ASSERT_EQ(timeline.tracks().size(), 2u) << "names are case-insensitive; a track added twice is one";
  nnprof::Profiler& profiler = timeline.profiler();
  const double x = timeline.record("step", [&] {
    NNPROF_SCOPE_IN(profiler, "forward");
    profiler.record_alloc("activations", 4096);
    profiler.record_free("activations", 4096);
    return seed001_spin_loop(std::chrono::milliseconds(60));
  });
  EXPECT_GT(x, 0.0);
  EXPECT_TRUE(timeline.tracks()[0].collecting) << timeline.tracks()[0].note;
  // This test is not linked with the allocation hooks: the Memory track says why it has only counters.
  EXPECT_FALSE(timeline.tracks()[1].collecting);
  EXPECT_NE(timeline.tracks()[1].note.find("heap tracking unavailable"), std::string::npos) << timeline.tracks()[1].note;

  const nnprof::Profile p = timeline.profile();
  ASSERT_NE(p.find_scope("step"), nullptr);
  ASSERT_NE(p.find_scope("forward"), nullptr);
  EXPECT_FALSE(p.cpu_samples.empty());
  timeline.save_chrome_trace(path("t.json"));
  const std::string trace = read_file(path("t.json"));
  EXPECT_NE(trace.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(trace.find("memory: activations"), std::string::npos) << "the Memory track's counter row";
  timeline.save_flamegraph(path("f.svg"));
  EXPECT_NE(read_file(path("f.svg")).find("<svg"), std::string::npos);
}

TEST_F(TimelineTest, AFlameGraphNeedsTheCpuTrack) {
  auto timeline = nnprof::TimelineBuilder().add_track("Memory").build();
  timeline.record([] {});
  EXPECT_THROW(timeline.save_flamegraph(path("f.svg")), nnprof::Error);
  timeline.save_chrome_trace(path("t.json"));
  EXPECT_NE(read_file(path("t.json")).find("\"record\""), std::string::npos) << "record()'s own scope";
}

TEST_F(TimelineTest, RecordEndsItsScopeWhenTheWorkThrows) {
  auto timeline = nnprof::TimelineBuilder().add_track("Memory").build();
  EXPECT_THROW(timeline.record([]() -> int { throw std::runtime_error("boom"); }), std::runtime_error);
  timeline.record([] {});  // not "recording already"
  EXPECT_EQ(timeline.profile().find_scope("record")->time.count, 2u);
}

// ---- PerformanceAnalysis -----------------------------------------------------------------------

class PerformanceAnalysisTest : public nnprof::testing::TestDirectory {
 protected:
  PerformanceAnalysisTest() : TestDirectory("performance_analysis") {}
};

TEST_F(PerformanceAnalysisTest, CombinesTheRecommendationsOfEveryProfileInOneOrder) {
  nnprof::PerformanceAnalysis empty;
  EXPECT_THROW(empty.analyze(), nnprof::Error);
  EXPECT_THROW(empty.generate_report(path("r.html")), nnprof::Error) << "before analyze()";

  const nnprof::Profile rich = nnprof::testing::rich_profile();
  const nnprof::Profile cpu = nnprof::testing::cpu_profile();
  const nnprof::Profile heap = nnprof::testing::heap_profile();
  auto analysis =
      nnprof::PerformanceAnalysis().add_profile(rich, "compute").add_profile(cpu).add_profile(heap, "memory").analyze();
  ASSERT_EQ(analysis.results().size(), 3u);
  EXPECT_EQ(analysis.results()[0].label, "compute");
  EXPECT_EQ(analysis.results()[1].label, "profile 2");
  const std::vector<nnprof::Recommendation> own = nnprof::recommend(rich);
  ASSERT_EQ(analysis.results()[0].recommendations.size(), own.size());
  for (std::size_t i = 0; i < own.size(); ++i) {
    EXPECT_EQ(analysis.results()[0].recommendations[i].title, own[i].title);
    EXPECT_EQ(analysis.results()[0].recommendations[i].priority, own[i].priority);
  }
  EXPECT_EQ(analysis.results()[0].bottlenecks.size(), nnprof::analyze_bottlenecks(rich).size());
  EXPECT_FALSE(analysis.results()[1].hot_functions.empty());
  // rich_profile did not track its heap: its named counters answer (two record_alloc calls).
  EXPECT_EQ(analysis.results()[0].memory.source, "memory counters");
  EXPECT_EQ(analysis.results()[0].memory.num_allocations, 2u);
  EXPECT_EQ(analysis.results()[2].memory.source, "heap tracking");
  EXPECT_EQ(analysis.results()[2].memory.num_allocations, heap.heap.alloc_count);
  EXPECT_EQ(analysis.results()[2].memory.largest_allocation_bytes, heap.heap.largest_alloc_bytes);

  const auto& combined = analysis.recommendations();
  std::size_t expected = 0;
  for (const auto& r : analysis.results()) expected += r.recommendations.size();
  ASSERT_EQ(combined.size(), expected);
  ASSERT_FALSE(combined.empty());
  const auto rank = [](const nnprof::Recommendation& r) {
    return r.part_speedup > 0.0 ? r.expected_speedup : nnprof::amdahl_speedup(r.time_share, 2.0);
  };
  for (std::size_t i = 0; i < combined.size(); ++i) {
    EXPECT_EQ(combined[i].priority, i + 1);
    if (i > 0) {
      EXPECT_GE(rank(combined[i - 1]), rank(combined[i]));
    }
    EXPECT_TRUE(combined[i].title.starts_with("compute: ") || combined[i].title.starts_with("profile 2: ") ||
                combined[i].title.starts_with("memory: "))
        << combined[i].title;
  }

  analysis.generate_report(path("report.html"));
  const std::string html = read_file(path("report.html"));
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>"));
  EXPECT_NE(html.find("</html>"), std::string::npos);
  // The same sections as `nnprof report`, one set per profile, named after it, with unique ids.
  EXPECT_NE(html.find("<section id=\"combined-recommendations\"><h2>Recommendations, in order of action</h2>"),
            std::string::npos);
  EXPECT_NE(html.find("<section id=\"p2-hot-paths\"><h2>profile 2: Hot paths</h2>"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"p3-heap\"><h2>memory: Heap"), std::string::npos) << "the memory profile's heap";
  EXPECT_NE(html.find(combined.front().title.substr(0, 20)), std::string::npos);
  EXPECT_EQ(html.find("<script>alert"), std::string::npos) << "names are escaped";
  // Other formats by extension; one the combined report is not written in is refused.
  analysis.generate_report(path("report.md"));
  EXPECT_TRUE(read_file(path("report.md")).starts_with("# nnprof performance analysis"));
  EXPECT_THROW(analysis.generate_report(path("report.csv")), nnprof::Error);
}

// ---- largest allocation in the store -------------------------------------------------------------

class LargestAllocationStore : public nnprof::testing::TestDirectory {
 protected:
  LargestAllocationStore() : TestDirectory("largest_alloc_store") {}
};

TEST_F(LargestAllocationStore, RoundTripsAndVersion6FilesLoadWithZero) {
  nnprof::Profile original = nnprof::testing::heap_profile();
  ASSERT_GT(original.heap.largest_alloc_bytes, 0u);
  original.save(path("v7.nnprof"));
  EXPECT_EQ(nnprof::Profile::load(path("v7.nnprof")).heap.largest_alloc_bytes, original.heap.largest_alloc_bytes);
  const auto row = nnprof::query_profile(path("v7.nnprof"), "SELECT value FROM meta WHERE key = 'heap_largest_alloc_bytes'");
  ASSERT_EQ(row.rows.size(), 1u);
  EXPECT_EQ(row.rows[0][0], std::to_string(original.heap.largest_alloc_bytes));

  // A file as version 6 wrote it: no such key. It loads, with 0 (not recorded).
  original.save(path("v6.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("v6.nnprof").c_str(), &db), SQLITE_OK);
  const char* sql = "DELETE FROM meta WHERE key = 'heap_largest_alloc_bytes'; "
                    "UPDATE meta SET value = 6 WHERE key = 'schema_version'; PRAGMA user_version = 6;";
  char* error = nullptr;
  ASSERT_EQ(sqlite3_exec(db, sql, nullptr, nullptr, &error), SQLITE_OK) << (error ? error : "");
  sqlite3_close(db);
  const nnprof::Profile loaded = nnprof::Profile::load(path("v6.nnprof"));
  EXPECT_EQ(loaded.heap.largest_alloc_bytes, 0u);
  nnprof::Profile expected = original;
  expected.heap.largest_alloc_bytes = 0;
  EXPECT_TRUE(loaded == expected);

  // A version-7 file without the key is damaged.
  original.save(path("bad.nnprof"));
  ASSERT_EQ(sqlite3_open(path("bad.nnprof").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM meta WHERE key = 'heap_largest_alloc_bytes';", nullptr, nullptr, &error),
            SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)nnprof::Profile::load(path("bad.nnprof"));
    FAIL() << "a version-7 file without heap_largest_alloc_bytes loaded";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("heap_largest_alloc_bytes"), std::string::npos) << e.what();
  }
}

}  // namespace

namespace {

// The seed's memory questions, asked of a program that reports its own allocations
// (record_alloc / record_free) rather than one with heap tracking.
TEST(MemoryReport, WithoutHeapTrackingTheNamedCountersAnswer) {
  nnprof::Profiler p;
  p.record_alloc("weights", 4u << 20);
  p.record_alloc("activations", 2u << 20);
  p.record_alloc("activations", 3u << 20);
  p.record_free("activations", 2u << 20);
  const nnprof::Profile profile = p.snapshot();
  const nnprof::MemoryReport r = nnprof::memory_report(profile);
  EXPECT_EQ(r.source, "memory counters");
  EXPECT_EQ(r.num_allocations, 3u);
  EXPECT_EQ(r.num_frees, 1u);
  EXPECT_EQ(r.largest_allocation_bytes, 4u << 20);
  EXPECT_DOUBLE_EQ(r.largest_allocation_mb, 4.0);
  EXPECT_EQ(r.peak_bytes, 9u << 20);
  EXPECT_DOUBLE_EQ(r.peak_mb, 9.0);
  EXPECT_EQ(r.current_bytes, 7u << 20);
  // Each counter keeps its own largest, and the store keeps it too.
  for (const nnprof::MemoryCounter& c : profile.memory_counters)
    EXPECT_EQ(c.largest_alloc_bytes, profile.str(c.name) == "weights" ? 4u << 20 : 3u << 20) << profile.str(c.name);
  EXPECT_EQ(nnprof::memory_report(nnprof::Profile{}).source, "");
}

}  // namespace
