#include <gtest/gtest.h>

#include <chrono>
#include <sstream>
#include <stdexcept>
#include <thread>

#include "nnprof/nnprof.hpp"

using namespace std::chrono_literals;

namespace {

const nnprof::CallTreeNode* child_named(const nnprof::Profile& p, std::uint32_t parent, std::string_view name) {
  for (std::uint32_t c : p.call_tree[parent].children)
    if (p.str(p.call_tree[c].name) == name) return &p.call_tree[c];
  return nullptr;
}

TEST(Profiler, ScopeThatSleeps20msMeasures20ms) {
  nnprof::Profiler profiler;
  profiler.start("sleep");
  std::this_thread::sleep_for(20ms);
  profiler.stop("sleep");
  const auto t = profiler.total_time("sleep");
  EXPECT_GE(t, 20ms);
  EXPECT_LT(t, 20ms + 30ms) << "sleep overshoot beyond 30 ms on a loaded 2-core machine is implausible";
  EXPECT_EQ(profiler.call_count("sleep"), 1u);
  // Each query calibrates ticks at its own moment, refined over the longer session, so two
  // queries may differ by a few ns; one answer is exactly consistent in itself.
  const auto s = profiler.stats("sleep");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->time.sum_ns, s->total_ns);
  EXPECT_NEAR(s->time.mean_ns, static_cast<double>(s->total_ns), 0.5);
  EXPECT_EQ(s->time.min_ns, s->time.max_ns);
  EXPECT_NEAR(std::chrono::duration<double>(profiler.avg_time("sleep") - t).count(), 0.0, 1e-6);
}

TEST(Profiler, NestedScopesGiveExactTreeTotalsAndSelfTimes) {
  nnprof::Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "outer");
    std::this_thread::sleep_for(10ms);
    for (int i = 0; i < 3; ++i) {
      NNPROF_SCOPE_IN(profiler, "inner");
      std::this_thread::sleep_for(5ms);
    }
  }
  const nnprof::Profile p = profiler.snapshot();
  const auto* outer = child_named(p, 0, "outer");
  ASSERT_NE(outer, nullptr);
  const auto* inner = child_named(p, outer->id, "inner");
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(outer->time.count, 1u);
  EXPECT_EQ(inner->time.count, 3u);
  EXPECT_EQ(inner->parent, outer->id);
  EXPECT_EQ(inner->depth, 2u);
  EXPECT_TRUE(inner->children.empty());
  // Self time is total minus children, exactly (up to rounding of each to whole ns).
  EXPECT_NEAR(static_cast<double>(outer->self_ns),
              static_cast<double>(outer->time.sum_ns) - static_cast<double>(inner->time.sum_ns), 2.0);
  EXPECT_NEAR(static_cast<double>(inner->self_ns), static_cast<double>(inner->time.sum_ns), 2.0);
  EXPECT_GE(inner->time.sum_ns, 15'000'000u);
  EXPECT_GE(outer->self_ns, 10'000'000u);
  EXPECT_GE(outer->time.sum_ns, 25'000'000u);
  EXPECT_LT(outer->time.sum_ns, 25'000'000u + 40'000'000u);
  // Per-call statistics of inner: three ~5 ms calls.
  EXPECT_GE(inner->time.min_ns, 5'000'000u);
  EXPECT_LE(inner->time.min_ns, inner->time.p50_ns);
  EXPECT_LE(inner->time.p50_ns, inner->time.max_ns);
  EXPECT_NEAR(inner->time.mean_ns * 3, static_cast<double>(inner->time.sum_ns), 3.0);

  // Per-name statistics agree with the tree; spans nest in time.
  const nnprof::ScopeStats* s = p.find_scope("inner");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->time.count, 3u);
  EXPECT_EQ(s->total_ns, inner->time.sum_ns);
  ASSERT_EQ(p.spans.size(), 4u);
  EXPECT_EQ(p.str(p.spans[0].name), "outer");
  for (int i = 1; i < 4; ++i) {
    EXPECT_EQ(p.str(p.spans[i].name), "inner");
    EXPECT_GE(p.spans[i].start_ns, p.spans[0].start_ns);
    EXPECT_LE(p.spans[i].end_ns, p.spans[0].end_ns);
    EXPECT_EQ(p.spans[i].depth, 2u);
  }
  EXPECT_EQ(p.instrumented_ns(), outer->time.sum_ns);
}

TEST(Profiler, StartStopGuardAndMacroShareNames) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 5; ++i) {
    profiler.start("step");
    { nnprof::ProfileGuard g(profiler, "expensive_operation"); }
    { NNPROF_SCOPE_IN(profiler, "another_operation"); }
    profiler.stop("step");
  }
  EXPECT_EQ(profiler.call_count("step"), 5u);
  EXPECT_EQ(profiler.call_count("expensive_operation"), 5u);
  EXPECT_EQ(profiler.call_count("another_operation"), 5u);
  EXPECT_EQ(profiler.call_count("never"), 0u);
  EXPECT_EQ(profiler.total_time("never"), 0ns);
  const auto p = profiler.snapshot();
  const auto* step = child_named(p, 0, "step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->children.size(), 2u);
  for (const auto& d : p.diagnostics)  // empty scopes may legitimately warn about overhead
    EXPECT_EQ(d.kind, nnprof::DiagnosticKind::InstrumentationOverhead) << d.message;
}

TEST(Profiler, RecursionCountsInclusiveTimeOnce) {
  nnprof::Profiler profiler;
  auto recurse = [&](auto& self, int depth) -> void {
    NNPROF_SCOPE_IN(profiler, "recurse");
    std::this_thread::sleep_for(2ms);
    if (depth > 0) self(self, depth - 1);
  };
  recurse(recurse, 3);
  const auto p = profiler.snapshot();
  const auto* s = p.find_scope("recurse");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->time.count, 4u);
  const auto* top = child_named(p, 0, "recurse");
  ASSERT_NE(top, nullptr);
  EXPECT_EQ(s->total_ns, top->time.sum_ns) << "the outermost call already contains the nested ones";
  EXPECT_GT(s->time.sum_ns, s->total_ns);
  EXPECT_NEAR(static_cast<double>(s->self_ns), static_cast<double>(s->total_ns), 8.0);
}

TEST(Profiler, ExceptionThroughAGuardClosesTheScope) {
  nnprof::Profiler profiler;
  try {
    NNPROF_SCOPE_IN(profiler, "throws");
    std::this_thread::sleep_for(1ms);
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  EXPECT_EQ(profiler.call_count("throws"), 1u);
  EXPECT_GE(profiler.total_time("throws"), 1ms);
  const auto p = profiler.snapshot();
  for (const auto& d : p.diagnostics) EXPECT_NE(d.kind, nnprof::DiagnosticKind::UnclosedScope) << d.message;
}

TEST(Profiler, MemoryCountersTrackCurrentPeakAndScope) {
  nnprof::Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "load_weights");
    profiler.record_alloc("weights", 4 << 20);
    profiler.record_alloc("activations", 2 << 20);
  }
  EXPECT_EQ(profiler.current_memory(), 6u << 20);
  EXPECT_EQ(profiler.peak_memory(), 6u << 20);
  profiler.record_free("activations", 2 << 20);
  EXPECT_EQ(profiler.current_memory(), 4u << 20);
  EXPECT_EQ(profiler.peak_memory(), 6u << 20);
  const auto p = profiler.snapshot();
  ASSERT_EQ(p.memory_counters.size(), 2u);
  const auto& act = p.str(p.memory_counters[0].name) == "activations" ? p.memory_counters[0] : p.memory_counters[1];
  EXPECT_EQ(p.str(act.name), "activations");
  EXPECT_EQ(act.current_bytes, 0);
  EXPECT_EQ(act.peak_bytes, 2u << 20);
  EXPECT_EQ(act.alloc_count, 1u);
  EXPECT_EQ(act.free_count, 1u);
  EXPECT_EQ(p.memory.peak_bytes, 6u << 20);
  EXPECT_EQ(p.memory_events.size(), 3u);
  const auto* s = p.find_scope("load_weights");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->memory.alloc_bytes, 6u << 20);
  EXPECT_EQ(s->memory.alloc_count, 2u);
}

TEST(Profiler, ReportedItemsGiveThroughput) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 4; ++i) {
    NNPROF_SCOPE_IN(profiler, "batch");
    std::this_thread::sleep_for(5ms);
    profiler.add_items("batch", 32);
  }
  const auto s = profiler.stats("batch");
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->items, 128u);
  EXPECT_NEAR(s->items_per_second(), 128.0 / (static_cast<double>(s->total_ns) / 1e9), 1e-6);
  EXPECT_LT(s->items_per_second(), 128.0 / 0.020 + 1e-9);
}

TEST(Profiler, DisabledRecordsNothing) {
  nnprof::Profiler profiler;
  profiler.set_enabled(false);
  EXPECT_FALSE(profiler.enabled());
  for (int i = 0; i < 1000; ++i) {
    NNPROF_SCOPE_IN(profiler, "off");
    profiler.start("off2");
    profiler.stop("off2");
    profiler.record_alloc("x", 10);
  }
  const auto p = profiler.snapshot();
  EXPECT_TRUE(p.scopes.empty());
  EXPECT_TRUE(p.spans.empty());
  EXPECT_TRUE(p.memory_counters.empty());
  EXPECT_EQ(p.completeness.scopes_recorded, 0u);
  profiler.set_enabled(true);
  { NNPROF_SCOPE_IN(profiler, "on"); }
  EXPECT_EQ(profiler.call_count("on"), 1u);
}

TEST(Profiler, StatisticsOnlyModeKeepsNoSpans) {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler profiler(o);
  for (int i = 0; i < 10000; ++i) {
    NNPROF_SCOPE_IN(profiler, "agg");
  }
  const auto p = profiler.snapshot();
  EXPECT_EQ(p.find_scope("agg")->time.count, 10000u);
  EXPECT_TRUE(p.spans.empty());
  EXPECT_FALSE(p.completeness.spans_enabled);
  EXPECT_EQ(p.completeness.spans_dropped, 0u);
}

TEST(Profiler, SnapshotStatesOverheadAndClock) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 1000; ++i) {
    NNPROF_SCOPE_IN(profiler, "tiny");
  }
  const auto p = profiler.snapshot();
  EXPECT_GT(p.completeness.overhead_per_scope_ns, 0.0);
  EXPECT_LT(p.completeness.overhead_per_scope_ns, 100'000.0);
  EXPECT_EQ(p.completeness.scopes_recorded, 1000u) << "the calibration scopes are not counted";
  EXPECT_EQ(p.find_scope("[nnprof overhead calibration]"), nullptr);
  EXPECT_NEAR(static_cast<double>(p.completeness.overhead_total_ns), p.completeness.overhead_per_scope_ns * 1000, 1.0);
  EXPECT_GT(p.meta.clock.ns_per_tick, 0.0);
  EXPECT_FALSE(p.meta.clock.source.empty());
  EXPECT_FALSE(p.meta.hostname.empty());
  EXPECT_GT(p.meta.pid, 0);
  EXPECT_EQ(p.threads.size(), 1u);
}

TEST(Profiler, SummaryPrintsTheTextReport) {
  nnprof::Profiler profiler;
  { NNPROF_SCOPE_IN(profiler, "forward_pass"); }
  std::ostringstream out;
  out << profiler.summary();
  EXPECT_NE(out.str().find("forward_pass"), std::string::npos);
  std::ostringstream out2;
  profiler.print_summary(out2);
  EXPECT_NE(out2.str().find("forward_pass"), std::string::npos);
}

TEST(GlobalProfiler, FreeFunctionsAndMacrosUseOneProfiler) {
  nnprof::start("global_operation");
  nnprof::stop("global_operation");
  nnprof::record_alloc("global_tensor", 1024);
  { NNPROF_SCOPE("uses_the_global_profiler"); }
  auto fn = [] { NNPROF_FUNCTION(); };
  fn();
  nnprof::Profiler& g = nnprof::global_profiler();
  EXPECT_EQ(&g, &nnprof::global_profiler());
  EXPECT_EQ(g.call_count("global_operation"), 1u);
  EXPECT_EQ(g.call_count("uses_the_global_profiler"), 1u);
  EXPECT_EQ(g.call_count("operator()"), 1u);
  EXPECT_GE(g.current_memory(), 1024u);
  nnprof::record_free("global_tensor", 1024);
}

}  // namespace
