#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "nnprof/nnprof.hpp"

namespace {

TEST(Threads, EightThreadsTimesHundredThousandScopesCountExactly) {
  nnprof::Profiler profiler;
  constexpr int kThreads = 8, kScopes = 100000;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&profiler, t] {
      nnprof::set_thread_name("worker-" + std::to_string(t));
      for (int i = 0; i < kScopes; ++i) {
        NNPROF_SCOPE_IN(profiler, "work");
      }
    });
  for (auto& th : threads) th.join();
  const nnprof::Profile p = profiler.snapshot();
  const auto* s = p.find_scope("work");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->time.count, 800000u);
  EXPECT_EQ(s->thread_count, 8u);
  EXPECT_EQ(p.completeness.scopes_recorded, 800000u);
  EXPECT_EQ(p.completeness.spans_kept + p.completeness.spans_dropped, 800000u);
  EXPECT_EQ(p.completeness.spans_dropped, 0u) << "19 MB of spans fit the default 256 MiB cap";
  // Eight worker threads plus the main thread (which measured the overhead).
  ASSERT_EQ(p.threads.size(), 9u);
  int named = 0;
  for (const auto& t : p.threads) {
    if (t.name.rfind("worker-", 0) == 0) {
      ++named;
      EXPECT_TRUE(t.exited);
    }
  }
  EXPECT_EQ(named, 8);
  // Spans are sorted by thread then start, and each thread's spans do not overlap.
  for (std::size_t i = 1; i < p.spans.size(); ++i) {
    const auto& a = p.spans[i - 1];
    const auto& b = p.spans[i];
    ASSERT_LE(a.thread, b.thread);
    if (a.thread == b.thread) {
      ASSERT_LE(a.end_ns, b.start_ns);
    }
  }
}

TEST(Threads, SnapshotsWhileThreadsRecordAreConsistent) {
  // A small flight recorder bounds what each snapshot copies, so that the test stays quick
  // under sanitizers while the threads record flat out.
  nnprof::ProfilerOptions options;
  options.memory_cap_bytes = std::size_t{2} << 20;
  options.policy = nnprof::BufferPolicy::FlightRecorder;
  nnprof::Profiler profiler(options);
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> done{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2; ++t)
    threads.emplace_back([&] {
      while (!stop.load(std::memory_order_relaxed)) {
        NNPROF_SCOPE_IN(profiler, "outer");
        { NNPROF_SCOPE_IN(profiler, "inner"); }
        profiler.record_alloc("buf", 64);
        profiler.record_free("buf", 64);
        done.fetch_add(1, std::memory_order_relaxed);
      }
    });
  std::uint64_t last = 0;
  for (int i = 0; i < 10; ++i) {
    const nnprof::Profile p = profiler.snapshot();
    const auto* outer = p.find_scope("outer");
    if (outer != nullptr) {
      EXPECT_GE(outer->time.count, last) << "counts never go backwards between snapshots";
      last = outer->time.count;
      const auto* inner = p.find_scope("inner");
      ASSERT_NE(inner, nullptr);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop = true;
  for (auto& th : threads) th.join();
  const nnprof::Profile p = profiler.snapshot();
  EXPECT_EQ(p.find_scope("outer")->time.count, done.load());
  EXPECT_EQ(p.find_scope("inner")->time.count, done.load());
  EXPECT_EQ(profiler.current_memory(), 0u);
}

TEST(Threads, ThreadStartedLaterIsRecordedAndOutlivedByItsData) {
  nnprof::Profiler profiler;
  { NNPROF_SCOPE_IN(profiler, "before"); }
  std::thread([&] {
    nnprof::set_thread_name("late");
    NNPROF_SCOPE_IN(profiler, "late_work");
  }).join();
  const auto p = profiler.snapshot();
  ASSERT_NE(p.find_scope("late_work"), nullptr);
  EXPECT_EQ(p.find_scope("late_work")->time.count, 1u);
  bool found = false;
  for (const auto& t : p.threads) found = found || (t.name == "late" && t.exited);
  EXPECT_TRUE(found);
}

TEST(Threads, ProfilerDestroyedWhileAThreadLivesIsSafe) {
  std::atomic<int> phase{0};
  std::thread th;
  {
    nnprof::Profiler profiler;
    th = std::thread([&] {
      { NNPROF_SCOPE_IN(profiler, "x"); }
      phase = 1;
      while (phase.load() != 2) std::this_thread::yield();
      // The profiler is gone; a new one on this thread must work from scratch.
      nnprof::Profiler again;
      { NNPROF_SCOPE_IN(again, "y"); }
      EXPECT_EQ(again.call_count("y"), 1u);
    });
    while (phase.load() != 1) std::this_thread::yield();
    EXPECT_EQ(profiler.call_count("x"), 1u);
  }
  phase = 2;
  th.join();
}

TEST(Threads, TwoProfilersOnOneThreadStaySeparate) {
  nnprof::Profiler a, b;
  for (int i = 0; i < 10; ++i) {
    NNPROF_SCOPE_IN(a, "in_a");
    NNPROF_SCOPE_IN(b, "in_b");
  }
  EXPECT_EQ(a.call_count("in_a"), 10u);
  EXPECT_EQ(a.call_count("in_b"), 0u);
  EXPECT_EQ(b.call_count("in_b"), 10u);
}

}  // namespace
