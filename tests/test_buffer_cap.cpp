#include <gtest/gtest.h>

#include <thread>

#include "nnprof/nnprof.hpp"

namespace {

constexpr std::size_t kCap = std::size_t{1} << 20;  // 16 chunks of 64 KiB
constexpr std::uint64_t kScopes = 200000;           // 4.8 MB of spans: far beyond the cap

nnprof::Profile record(nnprof::BufferPolicy policy) {
  nnprof::ProfilerOptions o;
  o.memory_cap_bytes = kCap;
  o.policy = policy;
  nnprof::Profiler profiler(o);
  { NNPROF_SCOPE_IN(profiler, "oldest"); }  // the first span of the session
  for (std::uint64_t i = 0; i < kScopes; ++i) {
    NNPROF_SCOPE_IN(profiler, "step");
    if (i % 2000 == 0) std::this_thread::yield();  // let the drainer run on a busy machine
  }
  return profiler.snapshot();
}

TEST(BufferCap, KeepFirstDropsLaterSpansAndCountsThem) {
  const auto p = record(nnprof::BufferPolicy::KeepFirst);
  const auto& c = p.completeness;
  EXPECT_EQ(p.find_scope("step")->time.count, kScopes) << "statistics stay complete";
  EXPECT_EQ(c.scopes_recorded, kScopes + 1);
  EXPECT_GT(c.spans_dropped, 0u);
  EXPECT_EQ(c.spans_kept + c.spans_dropped, kScopes + 1) << "every span is either kept or counted as dropped";
  ASSERT_FALSE(p.spans.empty());
  EXPECT_EQ(p.str(p.spans.front().name), "oldest") << "keep-first keeps the first span";
  EXPECT_LE(c.spans_kept * 24, kCap);
  EXPECT_EQ(c.spans_overwritten, 0u);
  EXPECT_EQ(c.buffer_policy, "keep-first");
  // The kept spans are the first ones: nothing kept starts after a gap left by dropping.
  bool found = false;
  for (const auto& d : p.diagnostics) found = found || d.kind == nnprof::DiagnosticKind::SpansDropped;
  EXPECT_TRUE(found);
}

TEST(BufferCap, FlightRecorderKeepsTheMostRecentSpans) {
  const auto p = record(nnprof::BufferPolicy::FlightRecorder);
  const auto& c = p.completeness;
  EXPECT_EQ(p.find_scope("step")->time.count, kScopes);
  EXPECT_EQ(p.find_scope("oldest")->time.count, 1u) << "statistics stay complete";
  EXPECT_GT(c.spans_overwritten, 0u);
  EXPECT_EQ(c.spans_kept + c.spans_overwritten + c.spans_dropped, kScopes + 1);
  EXPECT_LE(c.spans_kept * 24, kCap);
  ASSERT_FALSE(p.spans.empty());
  // The oldest span was overwritten; what is kept is the end of the run.
  for (const auto& span : p.spans) ASSERT_NE(p.str(span.name), "oldest");
  EXPECT_EQ(c.buffer_policy, "flight-recorder");
}

}  // namespace
