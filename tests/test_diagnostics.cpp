#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

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

std::size_t count_of(const nnprof::Profile& p, nnprof::DiagnosticKind kind) {
  std::size_t n = 0;
  for (const auto& d : p.diagnostics) n += d.kind == kind ? 1 : 0;
  return n;
}

// Nesting beyond the stack (kMaxDepth) must neither close the wrong scopes nor turn the stops
// of balanced pairs into "stop without start": one diagnostic counts the scopes not recorded.
void expect_only_too_deep(const nnprof::Profile& p, std::uint64_t beyond) {
  EXPECT_EQ(count_of(p, nnprof::DiagnosticKind::TooDeep), 1u);
  const auto* d = find(p, nnprof::DiagnosticKind::TooDeep);
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, beyond);
  EXPECT_NE(d->message.find("not recorded individually"), std::string::npos) << d->message;
  for (auto kind : {nnprof::DiagnosticKind::StopWithoutStart, nnprof::DiagnosticKind::ImplicitlyClosed,
                    nnprof::DiagnosticKind::UnclosedScope, nnprof::DiagnosticKind::StopOnOtherThread})
    EXPECT_EQ(find(p, kind), nullptr) << find(p, kind)->message;
}

TEST(Diagnostics, RunawayRecursionIsCappedAndCounted) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 300; ++i) profiler.start("deep");
  for (int i = 0; i < 300; ++i) profiler.stop("deep");
  profiler.start("after");  // the stack is empty again: a top-level scope
  profiler.stop("after");
  const auto p = profiler.snapshot();
  expect_only_too_deep(p, 300u - nnprof::detail::kMaxDepth);
  EXPECT_EQ(p.find_scope("deep")->time.count, nnprof::detail::kMaxDepth);
  ASSERT_NE(p.find_scope("after"), nullptr);
  EXPECT_EQ(p.find_scope("after")->time.count, 1u);
  for (const auto& node : p.call_tree) {
    if (p.str(node.name) == "after") {
      EXPECT_EQ(node.depth, 1u) << "\"after\" opens at the top level";
    }
  }
}

TEST(Diagnostics, BalancedStartStopByNameDeeperThanTheStackGivesOneDiagnostic) {
  nnprof::Profiler profiler;
  constexpr int kDepth = 5000;
  std::vector<std::string> names;
  for (int i = 0; i < kDepth; ++i) names.push_back("level " + std::to_string(i));
  for (int round = 0; round < 2; ++round) {
    for (int i = 0; i < kDepth; ++i) profiler.start(names[static_cast<std::size_t>(i)]);
    for (int i = kDepth; i-- > 0;) profiler.stop(names[static_cast<std::size_t>(i)]);
  }
  const auto p = profiler.snapshot();
  expect_only_too_deep(p, 2u * (kDepth - nnprof::detail::kMaxDepth));
  for (std::uint32_t i = 0; i < nnprof::detail::kMaxDepth; ++i) {
    const auto* s = p.find_scope(names[i]);
    ASSERT_NE(s, nullptr) << names[i];
    EXPECT_EQ(s->time.count, 2u) << names[i];
  }
  EXPECT_EQ(p.find_scope(names[nnprof::detail::kMaxDepth]), nullptr);
  // The deeper scopes' time is inside the deepest recorded one, and each level holds the next.
  const auto* deepest = p.find_scope(names[nnprof::detail::kMaxDepth - 1]);
  const auto* above = p.find_scope(names[nnprof::detail::kMaxDepth - 2]);
  EXPECT_LE(deepest->total_ns, above->total_ns);
}

namespace {
void guarded_recursion(nnprof::Profiler& profiler, int depth) {
  NNPROF_SCOPE_IN(profiler, "guarded");
  if (depth > 1) guarded_recursion(profiler, depth - 1);
}
}  // namespace

TEST(Diagnostics, ScopeGuardsDeeperThanTheStackGiveOneDiagnostic) {
  nnprof::Profiler profiler;
  guarded_recursion(profiler, 300);
  guarded_recursion(profiler, 300);
  const auto p = profiler.snapshot();
  expect_only_too_deep(p, 2u * (300u - nnprof::detail::kMaxDepth));
  EXPECT_EQ(p.find_scope("guarded")->time.count, 2u * nnprof::detail::kMaxDepth);
}

TEST(Diagnostics, StartStopByNameBeyondTheStackInsideScopeGuards) {
  nnprof::Profiler profiler;
  // Guards fill the stack; by-name pairs continue below them, then the guards unwind.
  std::function<void(int)> nest = [&](int depth) {
    NNPROF_SCOPE_IN(profiler, "guard");
    if (depth > 1) {
      nest(depth - 1);
      return;
    }
    for (int i = 0; i < 10; ++i) profiler.start("inner " + std::to_string(i));
    for (int i = 10; i-- > 0;) profiler.stop("inner " + std::to_string(i));
  };
  nest(static_cast<int>(nnprof::detail::kMaxDepth));
  profiler.start("after");
  profiler.stop("after");
  const auto p = profiler.snapshot();
  expect_only_too_deep(p, 10u);
  EXPECT_EQ(p.find_scope("guard")->time.count, nnprof::detail::kMaxDepth);
  EXPECT_EQ(p.find_scope("after")->time.count, 1u);
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
