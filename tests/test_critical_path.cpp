// Flows (nnprof/flow.hpp) and the critical path over the span graph (nnprof/critical_path.hpp).
#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/chrome_trace.hpp"
#include "io/json_report.hpp"
#include "io/profile_reports.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/nnprof.hpp"

namespace {

using nnprof::CriticalPath;
using nnprof::CriticalPathStep;
using nnprof::CriticalStepKind;
using nnprof::Flow;
using nnprof::FlowKind;
using nnprof::kNone;
using nnprof::Profile;

// A profile built by hand: a known span graph with two threads and two flows.
//
//   main   |step 0..100 [submit 10..12, flow_begin at 11] .. [wait 20..90, wait begun 20, ended 90] ..|
//   worker         |task 14..80, flow_end at 15, flow_done at 79|
//
// The worker finishes (79) after main began waiting (20): the path runs through the worker.
struct Hand {
  Profile p;
  std::uint32_t step = 1, submit = 2, wait = 3, task = 4;

  Hand(std::uint64_t done_at = 79, std::uint64_t wait_begin = 20) {
    p.strings = {"step", "submit", "wait", "task"};
    p.threads.push_back({0, 100, "main", false, 3, 100});
    p.threads.push_back({1, 101, "worker", false, 1, 66});
    p.call_tree.resize(5);
    auto node = [&](std::uint32_t id, std::uint32_t parent, nnprof::StringId name) {
      auto& n = p.call_tree[id];
      n.id = id;
      n.parent = parent;
      n.name = name;
      n.depth = p.call_tree[parent].depth + 1;
      p.call_tree[parent].children.push_back(id);
    };
    p.call_tree[0].parent = kNone;
    node(step, 0, 0);
    node(submit, step, 1);
    node(wait, step, 2);
    node(task, 0, 3);
    auto span = [&](std::uint32_t thread, std::uint32_t n, std::uint64_t a, std::uint64_t b) {
      p.spans.push_back({thread, p.call_tree[n].name, n, p.call_tree[n].depth, a, b});
    };
    span(0, step, 0, 100);    // span 0
    span(0, submit, 10, 12);  // span 1
    span(0, wait, 20, 90);    // span 2
    span(1, task, 14, 80);    // span 3
    Flow handoff;
    handoff.id = 7;
    handoff.kind = FlowKind::Handoff;
    handoff.out = {0, 11, submit, 1};
    handoff.in = {1, 15, task, 3};
    Flow completion;
    completion.id = 7;
    completion.kind = FlowKind::Completion;
    completion.out = {1, done_at, task, 3};
    completion.in = {0, 90, wait, 2};
    completion.wait_begin_ns = wait_begin;
    p.flows = {handoff, completion};
    p.meta.duration_ns = 100;
  }
};

struct Expected {
  CriticalStepKind kind;
  std::uint32_t thread;
  std::string name;  // scope name; empty otherwise
  std::uint64_t start, end;
};

void expect_steps(const Profile& p, const CriticalPath& path, const std::vector<Expected>& want) {
  ASSERT_EQ(path.steps.size(), want.size());
  std::uint64_t total = 0;
  double shares = 0.0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE("step " + std::to_string(i));
    const CriticalPathStep& s = path.steps[i];
    EXPECT_EQ(s.kind, want[i].kind);
    EXPECT_EQ(s.thread, want[i].thread);
    EXPECT_EQ(s.kind == CriticalStepKind::Scope ? p.str(s.name) : "", want[i].name);
    EXPECT_EQ(s.start_ns, want[i].start);
    EXPECT_EQ(s.end_ns, want[i].end);
    EXPECT_DOUBLE_EQ(s.share, static_cast<double>(want[i].end - want[i].start) / path.duration_ns());
    total += s.duration_ns();
    shares += s.share;
  }
  EXPECT_EQ(total, path.duration_ns());  // no gap, no overlap
  EXPECT_NEAR(shares, 1.0, 1e-12);
}

TEST(CriticalPath, KnownDagGoesThroughTheWorkerThatEndedTheWait) {
  const Hand h;
  const CriticalPath path = nnprof::critical_path(h.p);
  EXPECT_EQ(path.start_ns, 0u);
  EXPECT_EQ(path.end_ns, 100u);
  EXPECT_EQ(path.flows_followed, 2u);
  EXPECT_EQ(path.threads, 2u);
  using enum CriticalStepKind;
  expect_steps(h.p, path,
               {{Scope, 0, "step", 0, 10},
                {Scope, 0, "submit", 10, 11},
                {Handoff, 1, "", 11, 15},
                {Scope, 1, "task", 15, 79},
                {Handoff, 0, "", 79, 90},
                {Scope, 0, "step", 90, 100}});
  // The wait (20..90) is not on the path: the worker's task is, in its place.
  ASSERT_GE(path.by_scope.size(), 3u);
  EXPECT_EQ(path.by_scope[0].kind, Scope);
  EXPECT_EQ(h.p.str(path.by_scope[0].name), "task");
  EXPECT_EQ(path.by_scope[0].duration_ns, 64u);
  EXPECT_DOUBLE_EQ(path.by_scope[0].share, 0.64);
  EXPECT_EQ(h.p.str(path.by_scope[1].name), "step");
  EXPECT_EQ(path.by_scope[1].duration_ns, 20u);
  EXPECT_EQ(path.by_scope[1].steps, 2u);
  EXPECT_EQ(path.by_scope[2].kind, Handoff);
  EXPECT_EQ(path.by_scope[2].duration_ns, 15u);
  EXPECT_EQ(path.by_scope[2].steps, 2u);
  EXPECT_EQ(path.by_scope[2].threads, 2u);
  for (const auto& e : path.by_scope) {
    EXPECT_NE(e.kind == Scope ? h.p.str(e.name) : "", "wait");
  }
}

TEST(CriticalPath, WorkDoneBeforeTheWaitBeganLeavesThePathOnTheWaitingThread) {
  const Hand h(/*done_at=*/18, /*wait_begin=*/20);  // the task was done before main waited
  const CriticalPath path = nnprof::critical_path(h.p);
  EXPECT_EQ(path.flows_followed, 0u);
  EXPECT_EQ(path.threads, 1u);
  using enum CriticalStepKind;
  expect_steps(h.p, path,
               {{Scope, 0, "step", 0, 10},
                {Scope, 0, "submit", 10, 12},
                {Scope, 0, "step", 12, 20},
                {Scope, 0, "wait", 20, 90},
                {Scope, 0, "step", 90, 100}});
}

TEST(CriticalPath, WithoutAMarkedWaitTheLastScopeBeforeTheWaitEndsIsWhenTheThreadWasReady) {
  Hand h(79, Flow::kNoWaitMarked);
  // No wait begin: main's last span before the end of its wait ended at 12 (submit), and
  // the worker finished at 79, after it: the wait was on the worker.
  h.p.spans.erase(h.p.spans.begin() + 2);  // no "wait" scope either
  h.p.flows[1].in = {0, 90, h.step, 0};
  h.p.flows[0].in.span = 2;
  h.p.flows[1].out.span = 2;
  const CriticalPath path = nnprof::critical_path(h.p);
  EXPECT_EQ(path.flows_followed, 2u);
  ASSERT_EQ(path.steps.size(), 6u);
  EXPECT_EQ(h.p.str(path.steps[3].name), "task");
  EXPECT_EQ(path.steps[3].duration_ns(), 64u);
}

TEST(CriticalPath, WorkQueuedBehindEarlierWorkFollowsTheWorkersOwnSequence) {
  Hand h;
  // The worker ran an earlier task until 14, and was handed this one at 11: it was busy, so
  // the path stays on the worker before the task instead of jumping to the submission.
  h.p.spans.insert(h.p.spans.begin() + 3, nnprof::Span{1, 3, h.task, 1, 2, 14});
  h.p.spans[4].start_ns = 14;
  h.p.flows[0].in = {1, 15, h.task, 4};
  h.p.flows[1].out.span = 4;
  const CriticalPath path = nnprof::critical_path(h.p);
  EXPECT_EQ(path.flows_followed, 1u);
  EXPECT_EQ(path.start_ns, 2u);
  using enum CriticalStepKind;
  expect_steps(h.p, path,
               {{Scope, 1, "task", 2, 14},  // the earlier task
                {Scope, 1, "task", 14, 79},
                {Handoff, 0, "", 79, 90},
                {Scope, 0, "step", 90, 100}});
  EXPECT_NE(path.steps[0].span, path.steps[1].span);
}

TEST(CriticalPath, OfANamedRootCoversItsSpansOnly) {
  const Hand h;
  const CriticalPath path = nnprof::critical_path(h.p, "task");
  EXPECT_EQ(h.p.str(path.root), "task");
  EXPECT_EQ(path.start_ns, 14u);
  EXPECT_EQ(path.end_ns, 80u);
  EXPECT_EQ(path.flows_followed, 0u);  // the submission (11) is before the root began
  using enum CriticalStepKind;
  expect_steps(h.p, path, {{Scope, 1, "task", 14, 80}});
  try {
    (void)nnprof::critical_path(h.p, "no such scope");
    FAIL() << "expected nnprof::Error";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no span of a scope named 'no such scope'"), std::string::npos) << e.what();
  }
  EXPECT_TRUE(nnprof::critical_path(Profile{}).empty());
}

// ---- recorded with real threads ------------------------------------------------------

Profile record_pool_task(nnprof::Profiler& p) {
  std::mutex mu;
  std::condition_variable cv;
  nnprof::FlowId queued = 0;
  std::promise<void> done;
  std::future<void> finished = done.get_future();
  std::thread worker([&] {
    nnprof::set_thread_name("pool-worker");
    nnprof::FlowId id = 0;
    {
      std::unique_lock lock(mu);
      cv.wait(lock, [&] { return queued != 0; });
      id = queued;
    }
    {
      NNPROF_SCOPE_IN(p, "task");
      nnprof::FlowTask task(p, id);
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
    }
    done.set_value();
  });
  {
    NNPROF_SCOPE_IN(p, "step");
    {
      NNPROF_SCOPE_IN(p, "submit");
      const nnprof::FlowId id = nnprof::flow_begin(p);
      EXPECT_NE(id, 0u);
      EXPECT_NE(id >> 63, 0u);  // made ids are above every id a program may choose
      {
        std::lock_guard lock(mu);
        queued = id;
      }
      cv.notify_one();
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    {
      NNPROF_SCOPE_IN(p, "prepare");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    {
      NNPROF_SCOPE_IN(p, "wait");
      nnprof::FlowWait wait(p, queued);
      finished.get();
    }
    {
      NNPROF_SCOPE_IN(p, "apply");
      std::this_thread::sleep_for(std::chrono::milliseconds(3));
    }
  }
  worker.join();
  return p.snapshot();
}

std::uint64_t path_time_in(const Profile& p, const CriticalPath& path, std::string_view name) {
  std::uint64_t t = 0;
  for (const auto& s : path.steps)
    if (s.kind == CriticalStepKind::Scope && p.str(s.name) == name) t += s.duration_ns();
  return t;
}

TEST(CriticalPathRecorded, APoolTaskSubmittedAndAwaitedPutsTheWorkerOnThePath) {
  nnprof::Profiler prof;
  const Profile p = record_pool_task(prof);
  ASSERT_EQ(p.flows.size(), 2u);
  const Flow& handoff = p.flows[0];
  const Flow& completion = p.flows[1];
  EXPECT_EQ(handoff.kind, FlowKind::Handoff);
  EXPECT_EQ(completion.kind, FlowKind::Completion);
  EXPECT_EQ(handoff.id, completion.id);
  EXPECT_NE(handoff.out.thread, handoff.in.thread);
  ASSERT_NE(handoff.out.span, kNone);
  ASSERT_NE(handoff.in.span, kNone);
  EXPECT_EQ(p.str(p.spans[handoff.out.span].name), "submit");
  EXPECT_EQ(p.str(p.spans[handoff.in.span].name), "task");
  EXPECT_EQ(p.str(p.spans[completion.out.span].name), "task");
  EXPECT_EQ(p.str(p.spans[completion.in.span].name), "wait");
  EXPECT_NE(completion.wait_begin_ns, Flow::kNoWaitMarked);
  EXPECT_LE(completion.wait_begin_ns, completion.in.time_ns);
  EXPECT_LE(handoff.out.time_ns, handoff.in.time_ns);

  const CriticalPath path = nnprof::critical_path(p);
  const nnprof::Span* step = nullptr;
  for (const nnprof::Span& s : p.spans)
    if (p.str(s.name) == "step") step = &s;
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(path.start_ns, step->start_ns);  // the path spans the whole step
  EXPECT_EQ(path.end_ns, step->end_ns);
  EXPECT_EQ(path.flows_followed, 2u);
  EXPECT_EQ(path.threads, 2u);
  // The worker's 40 ms sleep is on the path; main's wait is not (it is the worker's time).
  EXPECT_GE(path_time_in(p, path, "task"), 39'000'000u);
  // Of the wait, only what ran in its scope after the wait was over (the end of FlowWait).
  EXPECT_LT(path_time_in(p, path, "wait"), 5'000'000u);
  EXPECT_EQ(path_time_in(p, path, "prepare"), 0u);  // done while the worker ran
  EXPECT_GE(path_time_in(p, path, "apply"), 2'900'000u);
  ASSERT_FALSE(path.by_scope.empty());
  EXPECT_EQ(p.str(path.by_scope.front().name), "task");
  // Every report shows the section when flows exist.
  std::ostringstream text, md, html, json;
  nnprof::io::write_text_report(p, text);
  nnprof::io::write_markdown_report(p, md);
  nnprof::io::write_html_report(p, html);
  nnprof::io::write_json_report(p, json);
  EXPECT_NE(text.str().find("Critical path\n-------------"), std::string::npos);
  EXPECT_NE(text.str().find("[hand-over between threads]"), std::string::npos);
  EXPECT_NE(md.str().find("## Critical path"), std::string::npos);
  EXPECT_NE(html.str().find("<section id=\"critical-path\">"), std::string::npos);
  const auto j = nlohmann::json::parse(json.str());
  ASSERT_TRUE(j.contains("critical_path"));
  EXPECT_EQ(j["critical_path"]["flows_followed"], 2);
  EXPECT_EQ(j["critical_path"]["duration_ns"].get<std::uint64_t>(), path.duration_ns());
  EXPECT_EQ(j["critical_path"]["steps"].size(), path.steps.size());
  EXPECT_EQ(j["critical_path"]["by_scope"][0]["name"], "task");
}

TEST(CriticalPathRecorded, NoFlowsNoSection) {
  nnprof::Profiler prof;
  { NNPROF_SCOPE_IN(prof, "alone"); }
  const Profile p = prof.snapshot();
  EXPECT_TRUE(p.flows.empty());
  std::ostringstream text;
  nnprof::io::write_text_report(p, text);
  EXPECT_EQ(text.str().find("Critical path"), std::string::npos);
  const auto path = nnprof::critical_path(p);
  ASSERT_EQ(path.steps.size(), 1u);
  EXPECT_EQ(p.str(path.steps[0].name), "alone");
}

std::string temp_path(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string(name) + "-" + std::to_string(getpid()) + ".nnprof"))
      .string();
}

TEST(CriticalPathStore, FlowsSurviveSaveAndLoad) {
  nnprof::Profiler prof;
  const Profile p = record_pool_task(prof);
  const std::string path = temp_path("flows");
  p.save(path);
  const Profile back = Profile::load(path);
  EXPECT_EQ(back.flows, p.flows);
  EXPECT_EQ(back, p);
  // Perfetto-style columns are queryable: the slices each flow joins.
  const auto q = nnprof::query_profile(
      path, "select f.kind, o.name, i.name from flow f join slice o on o.id = f.slice_out join slice i on i.id = "
            "f.slice_in order by f.id");
  ASSERT_EQ(q.rows.size(), 2u);
  EXPECT_EQ(q.rows[0], (std::vector<std::string>{"handoff", "submit", "task"}));
  EXPECT_EQ(q.rows[1], (std::vector<std::string>{"completion", "task", "wait"}));
  std::remove(path.c_str());

  // The hand-built one too, with a flow whose wait was not marked.
  Hand h(79, Flow::kNoWaitMarked);
  h.p.call_tree[0].time = {};
  const std::string hand = temp_path("flows-hand");
  h.p.save(hand);
  EXPECT_EQ(Profile::load(hand).flows, h.p.flows);
  std::remove(hand.c_str());
}

TEST(CriticalPathStore, AFileWithoutTheFlowTableLoadsWithNoFlows) {
  nnprof::Profiler prof;
  { NNPROF_SCOPE_IN(prof, "s"); }
  const std::string path = temp_path("noflow");
  prof.snapshot().save(path);
  EXPECT_TRUE(Profile::load(path).flows.empty());
  std::remove(path.c_str());
}

TEST(CriticalPathChromeTrace, FlowsBecomeFlowEventsBoundToTheirSlices) {
  const Hand h;
  std::ostringstream out;
  nnprof::io::write_chrome_trace(h.p, out);
  const auto j = nlohmann::json::parse(out.str());
  std::vector<nlohmann::json> starts, ends;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "s") starts.push_back(e);
    if (e["ph"] == "f") ends.push_back(e);
  }
  ASSERT_EQ(starts.size(), 2u);
  ASSERT_EQ(ends.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(starts[i]["id"], ends[i]["id"]);
    EXPECT_EQ(starts[i]["cat"], ends[i]["cat"]);  // Perfetto matches v1 flows by id, cat and name
    EXPECT_EQ(starts[i]["name"], ends[i]["name"]);
    EXPECT_EQ(ends[i]["bp"], "e");
  }
  EXPECT_NE(starts[0]["id"], starts[1]["id"]);
  EXPECT_EQ(starts[0]["name"], "handoff");
  EXPECT_EQ(starts[0]["tid"], 100);
  EXPECT_DOUBLE_EQ(starts[0]["ts"].get<double>(), 0.011);  // 11 ns, in microseconds
  EXPECT_EQ(ends[0]["tid"], 101);
  EXPECT_DOUBLE_EQ(ends[0]["ts"].get<double>(), 0.015);
  EXPECT_EQ(starts[1]["name"], "completion");
  EXPECT_EQ(starts[1]["tid"], 101);
  EXPECT_EQ(ends[1]["tid"], 100);
}

// ---- misuse ---------------------------------------------------------------------------

std::vector<const nnprof::Diagnostic*> flow_diagnostics(const Profile& p) {
  std::vector<const nnprof::Diagnostic*> out;
  for (const auto& d : p.diagnostics)
    if (d.kind == nnprof::DiagnosticKind::FlowUnmatched || d.kind == nnprof::DiagnosticKind::FlowsDropped)
      out.push_back(&d);
  return out;
}

bool has_message(const Profile& p, std::string_view a, std::string_view b) {
  for (const auto* d : flow_diagnostics(p))
    if (d->message.find(a) != std::string::npos && d->message.find(b) != std::string::npos) return true;
  return false;
}

TEST(FlowMisuse, EndsWithoutBeginningsBecomeDiagnosticsNotCrashes) {
  nnprof::Profiler prof;
  {
    NNPROF_SCOPE_IN(prof, "worker");
    nnprof::flow_end(prof, 12345);       // no flow_begin gave that id
    nnprof::flow_end(prof, 12345);
    nnprof::flow_wait_end(prof, 999);    // no flow_done for it
    nnprof::flow_begin(prof, 5);         // never ended
    nnprof::flow_end(prof, 0);           // 0 is "no flow": ignored
    nnprof::flow_done(prof, 31);         // done and never awaited: fine
  }
  const Profile p = prof.snapshot();
  EXPECT_TRUE(p.flows.empty());
  const auto diags = flow_diagnostics(p);
  ASSERT_EQ(diags.size(), 3u);
  EXPECT_TRUE(has_message(p, "flow_end was called 2 time(s)", "(first: 12345)"));
  EXPECT_TRUE(has_message(p, "flow_end was called", "Call flow_begin() on the submitting thread"));
  EXPECT_TRUE(has_message(p, "flow_wait_end was called 1 time(s)", "flow_done(id) or a FlowTask"));
  EXPECT_TRUE(has_message(p, "1 flow(s) begun", "(first id: 5) never reached a flow_end"));
  for (const auto* d : diags) EXPECT_EQ(d->thread, 0u);
  EXPECT_FALSE(nnprof::critical_path(p).empty());  // the path still stands, on one thread
}

TEST(FlowMisuse, ABeginningAfterItsEndIsKeptAndSaidButNotFollowed) {
  nnprof::Profiler prof;
  std::thread worker([&] {
    NNPROF_SCOPE_IN(prof, "task");
    nnprof::flow_end(prof, 77);
  });
  worker.join();
  {
    NNPROF_SCOPE_IN(prof, "submit");
    nnprof::flow_begin(prof, 77);  // too late: the work already ran
  }
  const Profile p = prof.snapshot();
  ASSERT_EQ(p.flows.size(), 1u);
  EXPECT_GT(p.flows[0].out.time_ns, p.flows[0].in.time_ns);
  EXPECT_TRUE(has_message(p, "after its flow_end had already run", "Call flow_begin before the work is queued"));
  EXPECT_EQ(nnprof::critical_path(p).flows_followed, 0u);
}

TEST(FlowMisuse, NothingIsRecordedWhenDisabledOrWithoutSpans) {
  nnprof::Profiler off;
  off.set_enabled(false);
  EXPECT_EQ(nnprof::flow_begin(off), 0u);
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler stats(o);
  EXPECT_EQ(nnprof::flow_begin(stats), 0u);
  nnprof::flow_end(stats, 3);
  EXPECT_TRUE(stats.snapshot().flows.empty());
  EXPECT_TRUE(flow_diagnostics(stats.snapshot()).empty());
}

TEST(FlowMisuse, AnIdUsedAgainPairsEachEndWithItsOwnRound) {
  nnprof::Profiler prof;
  std::vector<std::thread> rounds;
  for (int round = 0; round < 3; ++round) {
    NNPROF_SCOPE_IN(prof, "round");
    nnprof::flow_begin(prof, 1);
    std::thread t([&] {
      NNPROF_SCOPE_IN(prof, "work");
      if (round != 1) nnprof::flow_end(prof, 1);  // round 1's worker forgets its flow_end
    });
    t.join();
  }
  const Profile p = prof.snapshot();
  ASSERT_EQ(p.flows.size(), 2u);
  for (const Flow& f : p.flows) {
    EXPECT_LT(f.out.time_ns, f.in.time_ns);
    // Each end pairs with the beginning of its own round: nothing of another round lies between.
    for (const Flow& g : p.flows)
      if (&g != &f) {
        EXPECT_FALSE(g.out.time_ns > f.out.time_ns && g.out.time_ns < f.in.time_ns);
      }
  }
  EXPECT_TRUE(has_message(p, "1 flow(s) begun", "(first id: 1)"));
}

}  // namespace
