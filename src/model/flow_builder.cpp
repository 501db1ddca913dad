#include "model/flow_builder.hpp"

#include "model/span_lookup.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace nnprof::model {

namespace {

using detail::RecordKind;

std::string thread_label(const Profile& p, std::uint32_t thread) {
  if (thread >= p.threads.size()) return fmt::format("#{}", thread);
  const ThreadInfo& t = p.threads[thread];
  return t.name.empty() ? fmt::format("tid {}", t.os_tid) : fmt::format("'{}' (tid {})", t.name, t.os_tid);
}

// Ids flow_begin() made have the top bit set and read better in hex.
std::string id_text(std::uint64_t id) {
  return id >> 63 ? fmt::format("{:#x}", id) : fmt::format("{}", id);
}

std::string duration_text(std::uint64_t ns) {
  if (ns < 10'000) return fmt::format("{} ns", ns);
  if (ns < 10'000'000) return fmt::format("{:.1f} us", static_cast<double>(ns) / 1e3);
  return fmt::format("{:.1f} ms", static_cast<double>(ns) / 1e6);
}

FlowEndpoint endpoint(const FlowEvent& e) { return FlowEndpoint{e.thread, e.time_ns, e.node, kNone}; }

/// Gives every endpoint the innermost span of its thread open at its time.
void find_spans(Profile& p) {
  std::vector<FlowEndpoint*> ends;
  ends.reserve(2 * p.flows.size());
  for (Flow& f : p.flows) {
    ends.push_back(&f.out);
    ends.push_back(&f.in);
  }
  assign_innermost_spans(p.spans, std::move(ends));
}

// Unpaired events of one kind on one thread, for one diagnostic.
struct Unpaired {
  std::uint64_t count = 0;
  std::uint64_t first_id = 0;
  std::uint32_t other_thread = kNone;  // backwards flows: the thread of the end
  std::uint64_t worst_ns = 0;          // backwards flows: the largest gap
};

}  // namespace

std::vector<Diagnostic> build_flows(Profile& p, std::vector<FlowEvent> events, std::uint64_t lost) {
  std::vector<Diagnostic> out;
  std::stable_sort(events.begin(), events.end(),
                   [](const FlowEvent& a, const FlowEvent& b) { return a.time_ns < b.time_ns; });

  // Events by id and kind of flow, in time order.
  struct Group {
    std::vector<const FlowEvent*> outs, ins;
  };
  std::unordered_map<std::uint64_t, Group> handoff, completion;
  std::map<std::pair<std::uint64_t, std::uint32_t>, std::vector<const FlowEvent*>> wait_begins;  // (id, thread)
  for (const FlowEvent& e : events) {
    switch (e.kind) {
      case RecordKind::FlowBegin: handoff[e.id].outs.push_back(&e); break;
      case RecordKind::FlowEnd: handoff[e.id].ins.push_back(&e); break;
      case RecordKind::FlowDone: completion[e.id].outs.push_back(&e); break;
      case RecordKind::FlowWaitEnd: completion[e.id].ins.push_back(&e); break;
      case RecordKind::FlowWaitBegin: wait_begins[{e.id, e.thread}].push_back(&e); break;
      default: break;
    }
  }

  std::map<std::uint32_t, Unpaired> ends_alone[2], begins_alone, backwards;  // by thread
  auto note = [](Unpaired& u, std::uint64_t id) {
    if (u.count++ == 0) u.first_id = id;
  };
  for (const FlowKind kind : {FlowKind::Handoff, FlowKind::Completion}) {
    auto& groups = kind == FlowKind::Handoff ? handoff : completion;
    for (auto& [id, g] : groups) {
      // Each end takes the latest unpaired beginning before it (a stack over time): an id
      // used again pairs with its own round even when one end of an earlier round is missing.
      std::vector<const FlowEvent*> stack, lone_ins;
      std::vector<std::pair<const FlowEvent*, const FlowEvent*>> pairs;
      std::size_t o = 0;
      for (const FlowEvent* in : g.ins) {
        while (o < g.outs.size() && g.outs[o]->time_ns <= in->time_ns) stack.push_back(g.outs[o++]);
        if (stack.empty()) {
          lone_ins.push_back(in);
        } else {
          pairs.emplace_back(stack.back(), in);
          stack.pop_back();
        }
      }
      while (o < g.outs.size()) stack.push_back(g.outs[o++]);
      std::sort(stack.begin(), stack.end(),
                [](const FlowEvent* a, const FlowEvent* b) { return a->time_ns < b->time_ns; });
      // An end before every beginning of its id: a beginning recorded after the work was
      // queued. Paired in time order, kept, and said.
      std::size_t s = 0;
      for (const FlowEvent* in : lone_ins) {
        if (s < stack.size() && stack[s]->time_ns > in->time_ns) {
          const FlowEvent* b = stack[s++];
          pairs.emplace_back(b, in);
          Unpaired& u = backwards[b->thread];
          note(u, id);
          u.other_thread = in->thread;
          u.worst_ns = std::max(u.worst_ns, b->time_ns - in->time_ns);
        } else {
          note(ends_alone[kind == FlowKind::Handoff ? 0 : 1][in->thread], id);
        }
      }
      if (kind == FlowKind::Handoff)
        for (; s < stack.size(); ++s) note(begins_alone[stack[s]->thread], id);
      // Unawaited flow_done is normal (FlowTask always marks it); nothing to say.

      for (const auto& [b, e] : pairs) {
        Flow f;
        f.id = id;
        f.kind = kind;
        f.out = endpoint(*b);
        f.in = endpoint(*e);
        if (kind == FlowKind::Completion) {
          auto it = wait_begins.find({id, e->thread});
          if (it != wait_begins.end()) {
            // The latest wait begun before this wait ended.
            const FlowEvent* w = nullptr;
            for (const FlowEvent* x : it->second)
              if (x->time_ns <= e->time_ns) w = x;
            if (w != nullptr) f.wait_begin_ns = w->time_ns;
          }
        }
        p.flows.push_back(f);
      }
    }
  }
  std::sort(p.flows.begin(), p.flows.end(), [](const Flow& a, const Flow& b) {
    return std::tie(a.in.time_ns, a.in.thread, a.id, a.kind) < std::tie(b.in.time_ns, b.in.thread, b.id, b.kind);
  });
  find_spans(p);

  const std::string lost_note =
      lost > 0 ? fmt::format(" ({} flow records were lost to the buffer cap, which may be why)", lost) : "";
  if (lost > 0)
    out.push_back(Diagnostic{DiagnosticKind::FlowsDropped, Severity::Warning, kNone, kNone, lost,
                             fmt::format("{} flow records were dropped or overwritten when the span buffers reached "
                                         "their memory cap; some dependencies between threads are missing from the "
                                         "critical path. Raise the cap (ProfilerOptions::memory_cap_bytes, "
                                         "NNPROF_MEMORY_CAP_MB).",
                                         lost)});
  for (const auto& [thread, u] : ends_alone[0])
    out.push_back(Diagnostic{
        DiagnosticKind::FlowUnmatched, Severity::Warning, thread, kNone, u.count,
        fmt::format("flow_end was called {} time(s) on thread {} with an id no flow_begin had given (first: {}){}; "
                    "those dependencies are left out of the critical path. Call flow_begin() on the submitting "
                    "thread before the work is queued and pass the id it returns to flow_end.",
                    u.count, thread_label(p, thread), id_text(u.first_id), lost_note)});
  for (const auto& [thread, u] : ends_alone[1])
    out.push_back(Diagnostic{
        DiagnosticKind::FlowUnmatched, Severity::Warning, thread, kNone, u.count,
        fmt::format("flow_wait_end was called {} time(s) on thread {} for an id whose work never called flow_done "
                    "(first: {}){}; those waits are left out of the critical path. Mark the end of the work with "
                    "flow_done(id) or a FlowTask on the thread that does it.",
                    u.count, thread_label(p, thread), id_text(u.first_id), lost_note)});
  for (const auto& [thread, u] : begins_alone)
    out.push_back(Diagnostic{
        DiagnosticKind::FlowUnmatched, Severity::Info, thread, kNone, u.count,
        fmt::format("{} flow(s) begun on thread {} (first id: {}) never reached a flow_end: the work had not "
                    "started when the profile was taken, or the thread that ran it did not call flow_end(id).",
                    u.count, thread_label(p, thread), id_text(u.first_id))});
  for (const auto& [thread, u] : backwards)
    out.push_back(Diagnostic{
        DiagnosticKind::FlowUnmatched, Severity::Warning, thread, kNone, u.count,
        fmt::format("flow_begin was called {} time(s) on thread {} after its flow_end had already run on thread {} "
                    "(first id: {}, up to {} later): the dependency points backwards in time and the critical path "
                    "ignores it. Call flow_begin before the work is queued.",
                    u.count, thread_label(p, thread), thread_label(p, u.other_thread), id_text(u.first_id),
                    duration_text(u.worst_ns))});
  return out;
}

}  // namespace nnprof::model
