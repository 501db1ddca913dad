// The durations of kept spans reach their nodes' histograms (the percentiles) when the
// session keeps their chunk (on the drainer, or when a thread that ended is retired), not on
// the hot path; a snapshot counts those of the chunk still being filled. Spans that are not
// kept are counted at exit. Whatever the moment and the policy, every closed scope must be in
// its node's histogram exactly once.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string_view>
#include <thread>
#include <vector>

#include "nnprof/detail/histogram_buckets.hpp"
#include "nnprof/nnprof.hpp"
#include "record/session.hpp"

namespace {

using nnprof::detail::RawSnapshot;

/// Spins for `n` clock ticks' worth of work so that durations differ from call to call.
void spin(std::uint64_t n) {
  volatile std::uint64_t x = 0;
  for (std::uint64_t i = 0; i < n; ++i) x = x + i;
}

RawSnapshot raw_snapshot(nnprof::Profiler& p) { return p.core().session->snapshot(false); }

/// The sum of the histogram buckets of every node named `name`, and the sum of their counts.
struct Tally {
  std::uint64_t in_histograms = 0;
  std::uint64_t calls = 0;
};
Tally tally(const RawSnapshot& raw, std::string_view name) {
  Tally t;
  for (const auto& thread : raw.threads)
    for (const auto& node : thread.nodes) {
      if (node.site == nullptr || std::string_view(node.site->name) != name) continue;
      t.calls += node.count;
      for (const auto& [bucket, count] : node.buckets) t.in_histograms += count;
    }
  return t;
}

void expect_every_call_in_its_histogram(nnprof::Profiler& p, std::string_view name, std::uint64_t calls) {
  const Tally t = tally(raw_snapshot(p), name);
  EXPECT_EQ(t.calls, calls) << name;
  EXPECT_EQ(t.in_histograms, calls) << name << ": each closed scope once in its histogram";
}

/// The percentile the model reports against the one of the kept spans' own durations: equal
/// within the histogram's resolution (a bucket is at most 1/16 of its lower bound wide).
void expect_percentiles_of_the_spans(const nnprof::Profile& p, std::string_view name) {
  const nnprof::ScopeStats* s = p.find_scope(name);
  ASSERT_NE(s, nullptr);
  std::vector<std::uint64_t> d;
  for (const nnprof::Span& span : p.spans)
    if (p.str(span.name) == name) d.push_back(span.end_ns - span.start_ns);
  ASSERT_EQ(d.size(), s->time.count) << "every span kept";
  std::sort(d.begin(), d.end());
  for (const auto& [q, got] : {std::pair{0.50, s->time.p50_ns}, {0.95, s->time.p95_ns}, {0.99, s->time.p99_ns}}) {
    const auto rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(d.size())));
    const double want = static_cast<double>(d[std::max<std::size_t>(rank, 1) - 1]);
    EXPECT_NEAR(static_cast<double>(got), want, want / 8 + 2) << name << " p" << q * 100;
  }
}

TEST(SpanHistograms, ScopesOfAChunkStillBeingFilledAreCountedBySnapshots) {
  nnprof::Profiler p;
  for (int i = 0; i < 500; ++i) {
    NNPROF_SCOPE_IN(p, "unfolded");
    spin(static_cast<std::uint64_t>(i % 50) * 20);
  }
  expect_every_call_in_its_histogram(p, "unfolded", 500);
  expect_every_call_in_its_histogram(p, "unfolded", 500);  // a snapshot changes nothing
  expect_percentiles_of_the_spans(p.snapshot(), "unfolded");
}

TEST(SpanHistograms, ChunksHandedOffAndTheOneBeingFilledAddUp) {
  // Nested scopes over many chunks (2,730 records each), ending part-way through one.
  nnprof::Profiler p;
  constexpr int kOuter = 9001;
  for (int i = 0; i < kOuter; ++i) {
    NNPROF_SCOPE_IN(p, "outer");
    spin(static_cast<std::uint64_t>(i % 7) * 30);
    { NNPROF_SCOPE_IN(p, "inner"); spin(static_cast<std::uint64_t>(i % 13) * 10); }
  }
  expect_every_call_in_its_histogram(p, "outer", kOuter);
  expect_every_call_in_its_histogram(p, "inner", kOuter);
  const nnprof::Profile profile = p.snapshot();
  expect_percentiles_of_the_spans(profile, "outer");
  expect_percentiles_of_the_spans(profile, "inner");
}

TEST(SpanHistograms, AThreadThatEndedHasItsLastChunkCounted) {
  nnprof::Profiler p;
  std::thread([&] {
    for (int i = 0; i < 4000; ++i) {
      NNPROF_SCOPE_IN(p, "worker");
      spin(static_cast<std::uint64_t>(i % 11) * 15);
    }
  }).join();
  expect_every_call_in_its_histogram(p, "worker", 4000);
  // Once more after the session has retired the thread (a drain pass may have done it by now).
  expect_every_call_in_its_histogram(p, "worker", 4000);
  expect_percentiles_of_the_spans(p.snapshot(), "worker");
}

TEST(SpanHistograms, SnapshotsOfAThreadStillRecordingNeverCountASpanTwice) {
  // A span is counted (count_duration) before its record is written, and a snapshot reads the
  // records before the counts: its histograms never hold more than the calls, however the
  // thread hands chunks off meanwhile. Afterwards they hold exactly the calls.
  nnprof::Profiler p;
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> calls{0};
  std::thread worker([&] {
    while (!stop.load(std::memory_order_relaxed)) {
      { NNPROF_SCOPE_IN(p, "busy"); }
      calls.fetch_add(1, std::memory_order_relaxed);
    }
  });
  for (int i = 0; i < 40; ++i) {
    const Tally t = tally(raw_snapshot(p), "busy");
    EXPECT_LE(t.in_histograms, t.calls) << "snapshot " << i;
    std::this_thread::yield();
  }
  stop = true;
  worker.join();
  expect_every_call_in_its_histogram(p, "busy", calls.load());
}

TEST(SpanHistograms, SpansDroppedPastTheCapAreCountedAtOnce) {
  nnprof::ProfilerOptions o;
  o.memory_cap_bytes = std::size_t{1} << 20;  // 16 chunks
  o.policy = nnprof::BufferPolicy::KeepFirst;
  nnprof::Profiler p(o);
  constexpr int kScopes = 100'000;  // 2.4 MB of spans
  for (int i = 0; i < kScopes; ++i) { NNPROF_SCOPE_IN(p, "capped"); }
  expect_every_call_in_its_histogram(p, "capped", kScopes);
  EXPECT_GT(p.snapshot().completeness.spans_dropped, 0u);
}

TEST(SpanHistograms, KeepFirstPastTheCapRecordsIntoScratchChunksTheSessionEmpties) {
  // Past a keep-first cap the thread goes on writing spans into two chunks the session lends
  // it beyond the cap, as below the cap (issue 21, goal 2); the session counts their durations
  // and drops their records. The first one lent fills and is handed off (the thread has 2
  // chunks to fill past the cap), so the session empties it by the snapshot at the latest:
  // spans dropped on the recording thread itself are then fewer than those dropped.
  nnprof::ProfilerOptions o;
  o.memory_cap_bytes = 4 * nnprof::detail::Chunk::kBytes;
  o.policy = nnprof::BufferPolicy::KeepFirst;
  nnprof::Profiler p(o);
  constexpr std::uint64_t kCapacity = nnprof::detail::Chunk::capacity();
  constexpr std::uint64_t kScopes = (4 + 6) * kCapacity;
  for (std::uint64_t i = 0; i < kScopes; ++i) { NNPROF_SCOPE_IN(p, "scratch"); }
  expect_every_call_in_its_histogram(p, "scratch", kScopes);
  const nnprof::Profile profile = p.snapshot();
  const auto& c = profile.completeness;
  EXPECT_EQ(c.spans_kept, 4 * kCapacity) << "every chunk the cap allows is kept, full; no scratch chunk";
  EXPECT_EQ(c.spans_kept + c.spans_dropped, kScopes);
  const nnprof::detail::ThreadState* ts = nnprof::detail::thread_state(p.core());
  ASSERT_NE(ts, nullptr);
  const std::uint64_t on_thread = ts->dropped_spans.load();
  EXPECT_LE(on_thread + kCapacity, c.spans_dropped)
      << "at least the first scratch chunk's spans were dropped by the session, not the thread";
  std::printf("past the cap: %llu spans dropped, %llu of them on the recording thread (no scratch chunk to hand)\n",
              static_cast<unsigned long long>(c.spans_dropped), static_cast<unsigned long long>(on_thread));
  for (const nnprof::Span& span : profile.spans) ASSERT_EQ(profile.str(span.name), "scratch");
}

TEST(SpanHistograms, AFlightRecorderCountsTheSpansItOverwrites) {
  nnprof::ProfilerOptions o;
  o.memory_cap_bytes = std::size_t{1} << 20;
  o.policy = nnprof::BufferPolicy::FlightRecorder;
  nnprof::Profiler p(o);
  constexpr int kScopes = 100'000;
  for (int i = 0; i < kScopes; ++i) { NNPROF_SCOPE_IN(p, "recycled"); }
  expect_every_call_in_its_histogram(p, "recycled", kScopes);
  EXPECT_GT(p.snapshot().completeness.spans_overwritten, 0u);
}

TEST(SpanHistograms, StatisticsOnlySessionsCountOnTheHotPath) {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler p(o);
  for (int i = 0; i < 3000; ++i) { NNPROF_SCOPE_IN(p, "aggregate"); }
  expect_every_call_in_its_histogram(p, "aggregate", 3000);
}

}  // namespace
