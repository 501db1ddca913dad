#include "analysis/critical_path.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof {

namespace {

// A stretch of one thread's time in one innermost span (kNone: between top-level spans).
struct Piece {
  std::uint64_t start = 0, end = 0;
  std::uint32_t span = kNone;
};

// What the walk needs of one thread, built the first time the walk reaches it.
struct ThreadTimeline {
  bool built = false;
  std::vector<Piece> pieces;               // in time order, no gaps from the first span to the last
  std::vector<std::uint64_t> ends;         // every span's end, sorted
  std::vector<std::uint32_t> incoming;     // flows received on this thread, by their `in` time
  std::size_t cursor = 0;                  // incoming flows from here on are behind the walk
};

class Walker {
 public:
  explicit Walker(const Profile& p) : p_(p), threads_(p.threads.size()) {
    for (std::uint32_t i = 0; i < p.flows.size(); ++i) {
      const Flow& f = p.flows[i];
      if (f.in.thread < threads_.size() && f.out.thread < threads_.size()) threads_[f.in.thread].incoming.push_back(i);
    }
    for (ThreadTimeline& t : threads_) {
      std::stable_sort(t.incoming.begin(), t.incoming.end(),
                       [&](std::uint32_t a, std::uint32_t b) { return p.flows[a].in.time_ns < p.flows[b].in.time_ns; });
      t.cursor = t.incoming.size();
    }
  }

  CriticalPath walk(std::uint32_t thread, std::uint64_t from, std::uint64_t to, StringId root) {
    CriticalPath path;
    path.root = root;
    path.end_ns = to;
    std::uint32_t T = thread;
    std::uint64_t t = to;
    for (;;) {
      ThreadTimeline& tl = timeline(T);
      std::uint32_t found = kNone;
      while (tl.cursor > 0) {
        const std::uint32_t i = tl.incoming[tl.cursor - 1];
        const Flow& f = p_.flows[i];
        if (f.in.time_ns > t) {  // later than the walk: never relevant again
          --tl.cursor;
          continue;
        }
        if (f.in.time_ns < from) break;
        --tl.cursor;
        if (f.out.time_ns >= from && critical(f)) {
          found = i;
          break;
        }
      }
      if (found == kNone) {
        const std::uint64_t begin = tl.pieces.empty() ? t : std::max(from, std::min(t, tl.pieces.front().start));
        emit_thread(T, begin, t);
        path.start_ns = begin;
        break;
      }
      const Flow& f = p_.flows[found];
      emit_thread(T, f.in.time_ns, t);
      emit(CriticalPathStep{CriticalStepKind::Handoff, f.in.thread, kNone, 0, kNone, found, f.out.time_ns,
                            f.in.time_ns, 0.0});
      ++path.flows_followed;
      T = f.out.thread;
      t = f.out.time_ns;
    }
    std::reverse(steps_.begin(), steps_.end());
    path.steps = std::move(steps_);
    finish(path);
    return path;
  }

 private:
  ThreadTimeline& timeline(std::uint32_t thread) {
    ThreadTimeline& tl = threads_[thread];
    if (tl.built) return tl;
    tl.built = true;
    const auto first = std::lower_bound(p_.spans.begin(), p_.spans.end(), thread,
                                        [](const Span& s, std::uint32_t t) { return s.thread < t; });
    struct Open {
      std::uint32_t span;
      std::uint64_t end;  // clamped to the parent's, should spans ever overlap without nesting
    };
    std::vector<Open> open;
    std::uint64_t cur = 0;
    bool started = false;
    auto piece = [&](std::uint64_t a, std::uint64_t b, std::uint32_t span) {
      if (b > a) tl.pieces.push_back(Piece{a, b, span});
    };
    for (auto it = first; it != p_.spans.end() && it->thread == thread; ++it) {
      const auto index = static_cast<std::uint32_t>(it - p_.spans.begin());
      tl.ends.push_back(it->end_ns);
      while (!open.empty() && open.back().end <= it->start_ns) {
        piece(cur, open.back().end, open.back().span);
        cur = std::max(cur, open.back().end);
        open.pop_back();
      }
      if (!started) {
        cur = it->start_ns;
        started = true;
      }
      if (open.empty())
        piece(cur, it->start_ns, kNone);
      else
        piece(cur, it->start_ns, open.back().span);
      cur = std::max(cur, it->start_ns);
      const std::uint64_t end = open.empty() ? it->end_ns : std::min(it->end_ns, open.back().end);
      open.push_back(Open{index, std::max(end, it->start_ns)});
    }
    while (!open.empty()) {
      piece(cur, open.back().end, open.back().span);
      cur = std::max(cur, open.back().end);
      open.pop_back();
    }
    std::sort(tl.ends.begin(), tl.ends.end());
    return tl;
  }

  // Whether the receiving thread waited for `f`: its beginning came after the thread was
  // ready to go on. Ready means: when it began waiting (flow_wait_begin); otherwise when it
  // finished its previous work, the last span that ended before the work (Handoff: before
  // the span that flow_end is in) or before the wait ended (Completion).
  bool critical(const Flow& f) {
    if (f.out.thread == f.in.thread || f.out.time_ns > f.in.time_ns) return false;
    if (f.kind == FlowKind::Completion && f.wait_begin_ns != Flow::kNoWaitMarked)
      return f.out.time_ns > f.wait_begin_ns;
    std::uint64_t anchor = f.in.time_ns;
    if (f.kind == FlowKind::Handoff && f.in.span < p_.spans.size()) anchor = p_.spans[f.in.span].start_ns;
    const ThreadTimeline& tl = timeline(f.in.thread);
    const auto it = std::upper_bound(tl.ends.begin(), tl.ends.end(), anchor);
    const std::uint64_t ready = it == tl.ends.begin() ? 0 : *(it - 1);
    return f.out.time_ns > ready;
  }

  // Steps of `thread` over [a, b], latest first (the walk goes backwards).
  void emit_thread(std::uint32_t thread, std::uint64_t a, std::uint64_t b) {
    if (b <= a) return;
    const std::vector<Piece>& pieces = threads_[thread].pieces;
    const std::uint64_t last = pieces.empty() ? a : pieces.back().end;
    const std::uint64_t first = pieces.empty() ? b : pieces.front().start;
    if (b > last) emit(unscoped(thread, std::max(a, last), b));
    auto it = std::lower_bound(pieces.begin(), pieces.end(), b, [](const Piece& x, std::uint64_t v) { return x.start < v; });
    while (it != pieces.begin()) {
      --it;
      if (it->end <= a) break;
      const std::uint64_t s = std::max(a, it->start), e = std::min(b, it->end);
      if (e <= s) continue;
      if (it->span == kNone) {
        emit(unscoped(thread, s, e));
      } else {
        const Span& span = p_.spans[it->span];
        emit(CriticalPathStep{CriticalStepKind::Scope, thread, span.name, span.node, it->span, kNone, s, e, 0.0});
      }
    }
    if (a < first) emit(unscoped(thread, a, std::min(b, first)));
  }

  static CriticalPathStep unscoped(std::uint32_t thread, std::uint64_t a, std::uint64_t b) {
    return CriticalPathStep{CriticalStepKind::Unscoped, thread, kNone, 0, kNone, kNone, a, b, 0.0};
  }

  // Adds a step before the ones already emitted, merged with the previous one when it
  // continues it (the same span, or the same unscoped stretch, on the same thread).
  void emit(const CriticalPathStep& s) {
    if (s.end_ns <= s.start_ns) return;
    if (!steps_.empty()) {
      CriticalPathStep& later = steps_.back();
      if (later.kind == s.kind && later.kind != CriticalStepKind::Handoff && later.thread == s.thread &&
          later.span == s.span && later.start_ns == s.end_ns) {
        later.start_ns = s.start_ns;
        return;
      }
    }
    steps_.push_back(s);
  }

  void finish(CriticalPath& path) const {
    const double total = static_cast<double>(path.duration_ns());
    std::set<std::uint32_t> threads;
    std::map<std::pair<CriticalStepKind, StringId>, std::pair<CriticalPathScope, std::set<std::uint32_t>>> by;
    for (CriticalPathStep& s : path.steps) {
      s.share = total > 0 ? static_cast<double>(s.duration_ns()) / total : 0.0;
      threads.insert(s.thread);
      auto& [entry, on] = by[{s.kind, s.name}];
      entry.kind = s.kind;
      entry.name = s.name;
      entry.duration_ns += s.duration_ns();
      ++entry.steps;
      on.insert(s.thread);
    }
    path.threads = static_cast<std::uint32_t>(threads.size());
    for (auto& [key, value] : by) {
      CriticalPathScope e = value.first;
      e.threads = static_cast<std::uint32_t>(value.second.size());
      e.share = total > 0 ? static_cast<double>(e.duration_ns) / total : 0.0;
      path.by_scope.push_back(e);
    }
    std::stable_sort(path.by_scope.begin(), path.by_scope.end(),
                     [](const CriticalPathScope& a, const CriticalPathScope& b) { return a.duration_ns > b.duration_ns; });
  }

  const Profile& p_;
  std::vector<ThreadTimeline> threads_;
  std::vector<CriticalPathStep> steps_;  // latest first while walking
};

}  // namespace

CriticalPath critical_path(const Profile& profile, std::string_view root) {
  // Where the path ends: the last end of any span (or of the root's spans), on its thread.
  StringId root_id = kNone;
  bool any = false;
  std::uint64_t from = 0, to = 0;
  std::uint32_t thread = 0;
  for (const Span& s : profile.spans) {
    if (s.thread >= profile.threads.size()) continue;
    if (!root.empty() && profile.str(s.name) != root) continue;
    if (!any || s.start_ns < from) from = s.start_ns;
    if (!any || s.end_ns > to) {
      to = s.end_ns;
      thread = s.thread;
    }
    if (!any) root_id = s.name;
    any = true;
  }
  if (!any) {
    if (root.empty()) return CriticalPath{};
    throw Error(fmt::format("no span of a scope named '{}' is in this profile, so it has no critical path; give "
                            "the name of a scope as the report lists it{}",
                            root,
                            profile.spans.empty() ? " (this profile kept no spans: record with spans on)" : ""));
  }
  CriticalPath path = Walker(profile).walk(thread, from, to, root.empty() ? kNone : root_id);
  return path;
}

const char* to_string(CriticalStepKind kind) noexcept {
  switch (kind) {
    case CriticalStepKind::Scope: return "scope";
    case CriticalStepKind::Unscoped: return "unscoped";
    case CriticalStepKind::Handoff: return "handoff";
  }
  return "unknown";
}

namespace analysis {

std::string critical_step_label(const Profile& profile, CriticalStepKind kind, StringId name) {
  switch (kind) {
    case CriticalStepKind::Scope: return profile.str(name);
    case CriticalStepKind::Unscoped: return "[outside any scope]";
    case CriticalStepKind::Handoff: return "[hand-over between threads]";
  }
  return "[unknown]";
}

Sentence critical_path_summary(const Profile& profile, const CriticalPath& path) {
  Sentence s;
  if (path.empty()) {
    s.words("No critical path: the profile kept no spans.");
    return s;
  }
  s.words("The critical path");
  if (path.root != kNone) s.words(" of ").scope(path.root);
  s.words(" lasts ").duration(path.duration_ns()).key().words(", over ").count(path.threads, "thread", "threads");
  s.words(" and ").count(path.flows_followed, "dependency", "dependencies").words(" between threads");
  const CriticalPathScope* top = path.by_scope.empty() ? nullptr : &path.by_scope.front();
  if (top != nullptr) {
    s.words("; ");
    if (top->kind == CriticalStepKind::Scope)
      s.scope(top->name);
    else
      s.words(critical_step_label(profile, top->kind, top->name));
    s.words(" holds ").share(top->share).words(" of it");
  }
  s.words(".");
  if (profile.flows.empty() && path.threads == 1 && profile.threads.size() > 1)
    s.words(" Without flows (nnprof::flow_begin/flow_end) the path cannot cross threads.");
  return s;
}

}  // namespace analysis

}  // namespace nnprof
