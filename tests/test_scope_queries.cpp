// Profiler::call_count, total_time and stats answer from the call-tree nodes of one name,
// without a snapshot: they must give exactly what the snapshot's profile says.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "model/profile_builder.hpp"
#include "nnprof/nnprof.hpp"
#include "record/session.hpp"

namespace {

// Recursion of `name` (the same scope nested in itself) `depth` levels deep.
void recurse(nnprof::Profiler& p, int depth) {
  p.start("recursive");
  p.add_flops(10.0, 4);
  if (depth > 1) recurse(p, depth - 1);
  p.stop("recursive");
}

void work(nnprof::Profiler& p, int thread) {
  for (int i = 0; i < 20 + thread * 7; ++i) {
    p.start("step");
    {
      NNPROF_SCOPE_IN(p, "leaf");  // a static site and a run-time name with one name
      p.add_flops(3.0 * i, 8);
    }
    p.start("leaf");
    p.record_alloc("leaf", 64);
    p.stop("leaf");
    recurse(p, 1 + (i + thread) % 5);
    p.stop("step");
  }
  // "leaf" also outside "step": a second path of the same name.
  p.start("leaf");
  recurse(p, 3);
  p.stop("leaf");
  p.start("open");  // never closed: not in the statistics
}

void record_on_threads(nnprof::Profiler& p) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) threads.emplace_back([&p, t] { work(p, t); });
  for (auto& t : threads) t.join();
  work(p, 3);
  p.stop("open");
  p.add_items("step", 12);
}

void expect_same_stats(const nnprof::ScopeStats& a, const nnprof::ScopeStats& b, const std::string& name) {
  SCOPED_TRACE(name);
  EXPECT_EQ(a.total_ns, b.total_ns);
  EXPECT_EQ(a.self_ns, b.self_ns);
  EXPECT_EQ(a.time, b.time);
  EXPECT_EQ(a.thread_count, b.thread_count);
  EXPECT_EQ(a.memory, b.memory);
  EXPECT_EQ(a.heap, b.heap);
  EXPECT_EQ(a.items, b.items);
  EXPECT_EQ(a.flops, b.flops);
  EXPECT_EQ(a.bytes, b.bytes);
}

const std::vector<std::string> kNames{"step", "leaf", "recursive", "open", "absent"};

TEST(ScopeQueries, EqualTheSnapshotsStatisticsExactly) {
  nnprof::Profiler profiler;
  record_on_threads(profiler);
  nnprof::detail::Session& session = *profiler.core().session;
  const nnprof::detail::RawSnapshot full_raw = session.snapshot(false);
  const nnprof::Profile full = nnprof::model::build_profile(full_raw);
  for (const std::string& name : kNames) {
    SCOPED_TRACE(name);
    const nnprof::ScopeStats* expected = full.find_scope(name);
    // One calibration for both: a later snapshot refines ns per tick over a longer session.
    nnprof::detail::RawSnapshot part_raw = session.scope_snapshot(name);
    part_raw.now = full_raw.now;
    const nnprof::Profile part = nnprof::model::build_profile(part_raw);
    const nnprof::ScopeStats* got = part.find_scope(name);
    ASSERT_EQ(got != nullptr, expected != nullptr);
    const nnprof::detail::Session::ScopeTotals totals = session.scope_totals(name);
    const nnprof::ClockCalibration cal =
        nnprof::model::session_calibration(totals.start, full_raw.now, totals.nominal_ns_per_tick);
    if (expected == nullptr) {
      EXPECT_EQ(totals.calls, 0u);
      EXPECT_EQ(totals.inclusive_ticks, 0u);
      EXPECT_FALSE(profiler.stats(name).has_value());
      EXPECT_EQ(profiler.call_count(name), 0u);
      EXPECT_EQ(profiler.total_time(name).count(), 0);
      continue;
    }
    expect_same_stats(*got, *expected, name);
    EXPECT_EQ(totals.calls, expected->time.count);
    EXPECT_EQ(cal.to_ns(totals.inclusive_ticks), expected->total_ns);
  }
  // The scenario really has what the comparison is about.
  const nnprof::ScopeStats* rec = full.find_scope("recursive");
  ASSERT_NE(rec, nullptr);
  EXPECT_LT(rec->total_ns, rec->time.sum_ns) << "recursive calls are counted once in inclusive time";
  EXPECT_EQ(rec->thread_count, 4u);
  EXPECT_GT(rec->flops, 0.0);
  EXPECT_EQ(full.find_scope("step")->items, 12u);
  EXPECT_GT(full.find_scope("leaf")->memory.alloc_bytes, 0u);
}

TEST(ScopeQueries, PublicAnswersMatchASnapshot) {
  nnprof::Profiler profiler;
  record_on_threads(profiler);
  const nnprof::Profile p = profiler.snapshot();
  for (const std::string& name : kNames) {
    SCOPED_TRACE(name);
    const nnprof::ScopeStats* s = p.find_scope(name);
    EXPECT_EQ(profiler.call_count(name), s ? s->time.count : 0u);
    // Each answer calibrates ticks at its own moment: nanoseconds agree to the calibration's
    // drift between two reads, counts exactly.
    const double expected_total = s ? static_cast<double>(s->total_ns) : 0.0;
    EXPECT_NEAR(static_cast<double>(profiler.total_time(name).count()), expected_total,
                1e-4 * expected_total + 2.0);
    const auto stats = profiler.stats(name);
    ASSERT_EQ(stats.has_value(), s != nullptr);
    if (s == nullptr) continue;
    EXPECT_EQ(stats->time.count, s->time.count);
    EXPECT_EQ(stats->thread_count, s->thread_count);
    EXPECT_EQ(stats->flops, s->flops);
    EXPECT_EQ(stats->bytes, s->bytes);
    EXPECT_EQ(stats->memory, s->memory);
    EXPECT_EQ(stats->items, s->items);
    EXPECT_NEAR(static_cast<double>(stats->total_ns), expected_total, 1e-4 * expected_total + 2.0);
  }
}

}  // namespace
