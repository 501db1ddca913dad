#include <gtest/gtest.h>

#include <thread>

#include "nnprof/nnprof.hpp"

namespace {

const nnprof::Diagnostic* find(const nnprof::Profile& p, nnprof::DiagnosticKind kind) {
  for (const auto& d : p.diagnostics)
    if (d.kind == kind) return &d;
  return nullptr;
}

TEST(Diagnostics, StopWithoutStartIsReportedNotFatal) {
  nnprof::Profiler profiler;
  profiler.stop("never_started");
  profiler.stop("never_started");
  const auto p = profiler.snapshot();
  const auto* d = find(p, nnprof::DiagnosticKind::StopWithoutStart);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, 2u);
  EXPECT_EQ(p.str(d->name), "never_started");
  EXPECT_NE(d->message.find("never_started"), std::string::npos);
  EXPECT_EQ(d->severity, nnprof::Severity::Warning);
  EXPECT_EQ(p.find_scope("never_started"), nullptr);
}

TEST(Diagnostics, StopOnAnotherThreadNamesBothThreads) {
  nnprof::Profiler profiler;
  nnprof::set_thread_name("starter");
  profiler.start("handoff");
  std::thread([&] {
    nnprof::set_thread_name("stopper");
    profiler.stop("handoff");
  }).join();
  const auto p = profiler.snapshot();
  const auto* d = find(p, nnprof::DiagnosticKind::StopOnOtherThread);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("stopper"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("starter"), std::string::npos) << d->message;
  EXPECT_NE(find(p, nnprof::DiagnosticKind::UnclosedScope), nullptr);
  profiler.stop("handoff");  // the right thread closes it
  EXPECT_EQ(profiler.call_count("handoff"), 1u);
}

TEST(Diagnostics, StoppingAnOuterScopeClosesForgottenInnerOnes) {
  nnprof::Profiler profiler;
  profiler.start("outer");
  profiler.start("forgotten");
  profiler.stop("outer");
  const auto p = profiler.snapshot();
  EXPECT_EQ(p.find_scope("outer")->time.count, 1u);
  EXPECT_EQ(p.find_scope("forgotten")->time.count, 1u);
  const auto* d = find(p, nnprof::DiagnosticKind::ImplicitlyClosed);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(p.str(d->name), "forgotten");
}

TEST(Diagnostics, GuardClosesInnerScopesLeftOpenAndSurvivesAnExplicitStop) {
  nnprof::Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "guarded");
    profiler.start("left_open");
  }
  {
    NNPROF_SCOPE_IN(profiler, "stopped_early");
    profiler.stop("stopped_early");  // closes the guard's scope; the guard then does nothing
    NNPROF_SCOPE_IN(profiler, "reuses_slot");
  }
  const auto p = profiler.snapshot();
  EXPECT_EQ(p.find_scope("guarded")->time.count, 1u);
  EXPECT_EQ(p.find_scope("left_open")->time.count, 1u);
  EXPECT_EQ(p.find_scope("stopped_early")->time.count, 1u);
  EXPECT_EQ(p.find_scope("reuses_slot")->time.count, 1u);
  EXPECT_EQ(find(p, nnprof::DiagnosticKind::UnclosedScope), nullptr);
}

TEST(Diagnostics, UnclosedScopesAreListedAndExcludedFromStatistics) {
  nnprof::Profiler profiler;
  profiler.start("still_running");
  const auto p = profiler.snapshot();
  const auto* d = find(p, nnprof::DiagnosticKind::UnclosedScope);
  ASSERT_NE(d, nullptr);
  EXPECT_NE(d->message.find("still_running"), std::string::npos);
  EXPECT_EQ(p.find_scope("still_running"), nullptr);
  profiler.stop("still_running");
}

TEST(Diagnostics, RunawayRecursionIsCappedAndCounted) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 300; ++i) profiler.start("deep");
  for (int i = 0; i < 300; ++i) profiler.stop("deep");
  const auto p = profiler.snapshot();
  const auto* d = find(p, nnprof::DiagnosticKind::TooDeep);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, 300u - 255u);
  EXPECT_EQ(p.find_scope("deep")->time.count, 255u);
  const auto* stray = find(p, nnprof::DiagnosticKind::StopWithoutStart);
  ASSERT_NE(stray, nullptr) << "stops beyond the recorded depth have nothing to close";
  EXPECT_EQ(stray->count, 300u - 255u);
}

TEST(Diagnostics, FreeingMoreThanAllocatedIsReported) {
  nnprof::Profiler profiler;
  profiler.record_alloc("buf", 100);
  profiler.record_free("buf", 150);
  const auto p = profiler.snapshot();
  EXPECT_NE(find(p, nnprof::DiagnosticKind::NegativeMemory), nullptr);
}

TEST(Diagnostics, CleanRunHasNoDiagnostics) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 10; ++i) {
    profiler.start("a");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // long enough that overhead is negligible
    profiler.stop("a");
  }
  const auto p = profiler.snapshot();
  EXPECT_TRUE(p.diagnostics.empty());
}

}  // namespace

namespace {

TEST(Diagnostics, ThreadExitingWithAnOpenScopeIsAWarning) {
  nnprof::Profiler profiler;
  std::thread([&] {
    nnprof::set_thread_name("leaver");
    profiler.start("never_stopped");
  }).join();
  const auto p = profiler.snapshot();
  const auto* d = find(p, nnprof::DiagnosticKind::UnclosedScope);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->severity, nnprof::Severity::Warning);
  EXPECT_NE(d->message.find("leaver"), std::string::npos) << d->message;
  EXPECT_NE(d->message.find("exited"), std::string::npos) << d->message;
}

}  // namespace
