#include "analysis/distributed.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/torch_collectives.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/error.hpp"

namespace nnprof::analysis {
namespace {

using Interval = std::pair<std::uint64_t, std::uint64_t>;

/// A span that carries the collective arguments (nnprof::collective_arg).
struct CollectiveSpan {
  std::uint32_t span = kNone;
  std::string operation;
  std::string group;
  std::int64_t seq = 0;
  std::uint64_t bytes = 0;
  std::uint32_t group_size = 0;
  bool nonblocking = false;
};

/// A span that marks where a nonblocking collective completed on its rank (the
/// collective_arg::kCompleted* arguments), inside the wait or test call that completed it.
struct CompletionSpan {
  std::uint32_t span = kNone;
  std::string group;
  std::int64_t seq = 0;
  std::uint64_t blocked_ns = 0;
};

/// The collective spans and the completion spans of a profile, in one pass over its arguments.
struct CollectiveSpans {
  std::vector<CollectiveSpan> collectives;
  std::vector<CompletionSpan> completions;
};

CollectiveSpans collective_spans(const Profile& p) {
  CollectiveSpans out;
  for (std::size_t i = 0; i < p.span_args.size();) {
    const std::uint32_t span = p.span_args[i].span;
    CollectiveSpan c;
    c.span = span;
    bool has_operation = false, has_group = false, has_seq = false;
    CompletionSpan done;
    done.span = span;
    bool has_completed_group = false, has_completed_seq = false;
    for (; i < p.span_args.size() && p.span_args[i].span == span; ++i) {
      const SpanArg& a = p.span_args[i];
      const bool text = a.type == SpanArg::Type::String;
      const bool integer = a.type == SpanArg::Type::Int;
      if (a.key == collective_arg::kOperation && text) {
        c.operation = a.string_value;
        has_operation = true;
      } else if (a.key == collective_arg::kGroup && text) {
        c.group = a.string_value;
        has_group = true;
      } else if (a.key == collective_arg::kSequence && integer) {
        c.seq = a.int_value;
        has_seq = true;
      } else if (a.key == collective_arg::kBytes && integer && a.int_value > 0) {
        c.bytes = static_cast<std::uint64_t>(a.int_value);
      } else if (a.key == collective_arg::kGroupSize && integer && a.int_value > 0) {
        c.group_size = static_cast<std::uint32_t>(a.int_value);
      } else if (a.key == collective_arg::kNonblocking && integer) {
        c.nonblocking = a.int_value != 0;
      } else if (a.key == collective_arg::kCompletedGroup && text) {
        done.group = a.string_value;
        has_completed_group = true;
      } else if (a.key == collective_arg::kCompletedSequence && integer) {
        done.seq = a.int_value;
        has_completed_seq = true;
      } else if (a.key == collective_arg::kBlocked && integer && a.int_value > 0) {
        done.blocked_ns = static_cast<std::uint64_t>(a.int_value);
      }
    }
    if (span >= p.spans.size()) continue;
    if (has_operation && has_group && has_seq)
      out.collectives.push_back(std::move(c));
    else if (has_completed_group && has_completed_seq)
      out.completions.push_back(std::move(done));
  }
  return out;
}

/// For each span, the span directly enclosing it on its thread (kNone for a top-level one).
std::vector<std::uint32_t> parents_of(const Profile& p) {
  std::vector<std::uint32_t> parent(p.spans.size(), kNone);
  std::vector<std::uint32_t> open;
  std::uint32_t thread = kNone;
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    if (s.thread != thread) {
      open.clear();
      thread = s.thread;
    }
    while (!open.empty() && (p.spans[open.back()].end_ns <= s.start_ns || p.spans[open.back()].depth >= s.depth))
      open.pop_back();
    if (!open.empty()) parent[i] = open.back();
    open.push_back(i);
  }
  return parent;
}

std::uint32_t rank_of(const Profile& p, std::uint32_t thread) {
  return thread < p.threads.size() ? p.threads[thread].rank : 0;
}

/// A step scope's name without a trailing "#<digits>" (PyTorch names its steps
/// "ProfilerStep#12"), so that every step of a run has one key.
std::string_view step_key(std::string_view name) {
  const std::size_t hash = name.rfind('#');
  if (hash == std::string_view::npos || hash + 1 == name.size()) return name;
  for (std::size_t i = hash + 1; i < name.size(); ++i)
    if (name[i] < '0' || name[i] > '9') return name;
  return name.substr(0, hash);
}

/// Total length of a set of intervals (sorted here), overlaps counted once.
std::vector<Interval> union_of(std::vector<Interval> intervals) {
  std::ranges::sort(intervals);
  std::vector<Interval> out;
  for (const Interval& i : intervals) {
    if (i.second <= i.first) continue;
    if (!out.empty() && i.first <= out.back().second)
      out.back().second = std::max(out.back().second, i.second);
    else
      out.push_back(i);
  }
  return out;
}
std::uint64_t length_of(const std::vector<Interval>& merged) {
  std::uint64_t total = 0;
  for (const Interval& i : merged) total += i.second - i.first;
  return total;
}
/// Length of the intersection of two unions (each sorted, disjoint).
std::uint64_t overlap_of(const std::vector<Interval>& a, const std::vector<Interval>& b) {
  std::uint64_t total = 0;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::uint64_t lo = std::max(a[i].first, b[j].first);
    const std::uint64_t hi = std::min(a[i].second, b[j].second);
    if (hi > lo) total += hi - lo;
    if (a[i].second < b[j].second) ++i; else ++j;
  }
  return total;
}

/// For each span, whether it encloses a collective span on its thread: the collectives'
/// ancestors, walked up through `parent` (parents_of) until one already marked.
std::vector<bool> encloses_collective(const std::vector<std::uint32_t>& parent, const std::vector<bool>& is_collective) {
  std::vector<bool> encloses(parent.size(), false);
  for (std::uint32_t i = 0; i < parent.size(); ++i) {
    if (!is_collective[i]) continue;
    for (std::uint32_t up = parent[i]; up != kNone && !encloses[up]; up = parent[up]) encloses[up] = true;
  }
  return encloses;
}

struct StepChoice {
  StringId name = kNone;        ///< one of the names (for display)
  std::vector<bool> is_step;    ///< by StringId
};

StepChoice choose_step(const Profile& p, const RankAnalysisOptions& options, const std::vector<bool>& encloses,
                       const std::vector<bool>& is_communication) {
  StepChoice choice;
  choice.is_step.assign(p.strings.size(), false);
  if (!options.step.empty()) {
    for (std::size_t id = 0; id < p.strings.size(); ++id)
      if (p.strings[id] == options.step || step_key(p.strings[id]) == options.step) choice.is_step[id] = true;
    for (const Span& s : p.spans)
      if (s.name < choice.is_step.size() && choice.is_step[s.name]) {
        choice.name = s.name;
        break;
      }
    if (choice.name == kNone)
      throw Error(fmt::format("no span is named '{}' (or '{}#<n>'): name the scope that marks one step with --step, "
                              "or leave it out to let nnprof choose",
                              options.step, options.step));
    return choice;
  }
  // Candidates: scope names grouped by key. The step is the one on every rank that encloses
  // collectives, repeats (a step is called many times; `main` around the loop is called once)
  // and has the most time; the outermost calls of it are the steps; one that does neither is
  // none. Communication itself (a collective, a backend's work record such as gloo:all_reduce)
  // is never a step, even in a program with no scope of its own around its collectives.
  struct Candidate {
    std::vector<std::uint32_t> calls;  ///< by rank
    std::uint64_t total_ns = 0;
    bool encloses = false;
    bool communication = false;
    StringId first = kNone;
    std::string_view key;
  };
  std::vector<Candidate> candidates;
  std::vector<std::uint32_t> candidate_of(p.strings.size(), kNone);
  // Names of communication whatever their arguments: a c10d operator, a backend's work record.
  std::vector<bool> communication_name(p.strings.size(), false);
  for (std::size_t id = 0; id < p.strings.size(); ++id)
    communication_name[id] = !c10d_operation(p.strings[id]).empty() || !backend_work_operation(p.strings[id]).empty();
  {
    std::map<std::string_view, std::uint32_t> by_key;
    for (std::size_t id = 0; id < p.strings.size(); ++id) {
      const std::string_view key = step_key(p.strings[id]);
      const auto [it, added] = by_key.try_emplace(key, static_cast<std::uint32_t>(candidates.size()));
      if (added) {
        candidates.emplace_back();
        candidates.back().calls.assign(p.ranks.size(), 0);
        candidates.back().first = static_cast<StringId>(id);
        candidates.back().key = key;
      }
      candidate_of[id] = it->second;
    }
  }
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    if (s.name >= candidate_of.size()) continue;
    Candidate& c = candidates[candidate_of[s.name]];
    const std::uint32_t rank = rank_of(p, s.thread);
    if (rank < c.calls.size()) ++c.calls[rank];
    c.total_ns += s.end_ns - s.start_ns;
    c.encloses = c.encloses || encloses[i];
    c.communication = c.communication || is_communication[i] || communication_name[s.name];
  }
  const Candidate* best = nullptr;
  const auto repeats = [](const Candidate& c) { return std::ranges::all_of(c.calls, [](std::uint32_t n) { return n >= 2; }); };
  for (const Candidate& c : candidates) {
    if (c.communication || c.calls.empty() || !std::ranges::all_of(c.calls, [](std::uint32_t n) { return n > 0; }))
      continue;
    // A scope called once that encloses no collective (aten::ones before the loop) says
    // nothing about steps: without a better one, each rank's whole run is one step.
    if (!c.encloses && !repeats(c)) continue;
    if (best == nullptr ||
        std::tuple(c.encloses, repeats(c), c.total_ns) > std::tuple(best->encloses, repeats(*best), best->total_ns))
      best = &c;
  }
  if (best == nullptr) return choice;
  choice.name = best->first;
  for (std::size_t id = 0; id < p.strings.size(); ++id)
    if (candidate_of[id] == static_cast<std::uint32_t>(best - candidates.data())) choice.is_step[id] = true;
  return choice;
}

}  // namespace

bool has_ranks(const Profile& profile) noexcept { return profile.ranks.size() >= 2; }

RankAnalysis analyze_ranks(const Profile& p, const RankAnalysisOptions& options) {
  if (p.ranks.empty())
    throw Error("this profile holds no ranks of a distributed job: merge the ranks' profiles first "
                "(`nnprof merge rank*.nnprof -o job.nnprof`)");
  RankAnalysis result;
  const std::size_t ranks = p.ranks.size();
  for (const RankInfo& r : p.ranks) result.clock_residual_ns = std::max(result.clock_residual_ns, r.clock.residual_ns);

  // Collectives, matched by (group, seq); one arrival per rank (the earliest, should a rank
  // record the same call twice, through MPI and through PyTorch).
  const CollectiveSpans found = collective_spans(p);
  const std::vector<CollectiveSpan>& spans = found.collectives;
  // Each span's enclosing span on its thread: for the calls that completed nonblocking collectives
  // and for what encloses communication.
  const std::vector<std::uint32_t> parent = parents_of(p);
  // Collective spans, and the wait and test calls that completed nonblocking ones (with their
  // completion spans): time in them is communication, and what encloses them is no computation.
  std::vector<bool> is_communication(p.spans.size(), false);
  std::map<std::pair<std::string, std::int64_t>, std::uint32_t> index;
  for (const CollectiveSpan& c : spans) {
    is_communication[c.span] = true;
    const auto [it, added] = index.try_emplace({c.group, c.seq}, static_cast<std::uint32_t>(result.collectives.size()));
    if (added) {
      CollectiveCall call;
      call.operation = c.operation;
      call.group = c.group;
      call.seq = c.seq;
      result.collectives.push_back(std::move(call));
    }
    CollectiveCall& call = result.collectives[it->second];
    call.bytes = std::max(call.bytes, c.bytes);
    call.group_size = std::max(call.group_size, c.group_size);
    const Span& s = p.spans[c.span];
    const std::uint32_t rank = rank_of(p, s.thread);
    // A blocking collective holds the rank for its whole span; a nonblocking one only in the
    // waits and tests that complete it (blocked_ns, set from its completion below).
    CollectiveArrival arrival{rank, c.span, s.start_ns, s.end_ns, 0, c.nonblocking, c.nonblocking ? 0 : s.end_ns - s.start_ns};
    call.nonblocking = call.nonblocking || c.nonblocking;
    const auto same = std::ranges::find(call.arrivals, rank, &CollectiveArrival::rank);
    if (same == call.arrivals.end())
      call.arrivals.push_back(arrival);
    else if (s.start_ns < same->arrival_ns)
      *same = arrival;
  }
  std::vector<std::uint64_t> spreads;
  std::map<std::tuple<std::uint32_t, std::uint32_t, std::string, std::string>, RankWait> waits;
  std::vector<std::uint64_t> caused(ranks, 0), waited(ranks, 0);
  for (CollectiveCall& call : result.collectives) {
    std::ranges::sort(call.arrivals, {}, &CollectiveArrival::rank);
    call.first_arrival_ns = call.arrivals.front().arrival_ns;
    for (const CollectiveArrival& a : call.arrivals) {
      call.first_arrival_ns = std::min(call.first_arrival_ns, a.arrival_ns);
      if (call.last_rank == kNone || a.arrival_ns > call.last_arrival_ns) {
        call.last_arrival_ns = a.arrival_ns;
        call.last_rank = a.rank;
      }
    }
    if (call.group_size > call.arrivals.size()) ++result.incomplete_collectives;
    spreads.push_back(call.spread_ns());
    for (CollectiveArrival& a : call.arrivals) a.wait_ns = a.nonblocking ? 0 : call.last_arrival_ns - a.arrival_ns;
  }

  // torch.distributed: a c10d operator's span (c10d::allreduce_) covers only the enqueue of the
  // work; the collective runs as the backend's own record (gloo:all_reduce, on a gloo worker
  // thread) and has ended on this rank when that record ends. A process group starts its works
  // in the order they were enqueued, so on each rank the n-th c10d call of an operation is
  // paired with the first record of that operation that started after it and is not taken yet.
  // The pair's end is the collective's end (for the critical path and the communication time),
  // and the worker's record is communication, not computation. (An NCCL record ends when its
  // kernel is enqueued on the GPU, so there the end stays about the operator's own; the GPU
  // collector's kernels would tell when it ran.)
  {
    struct RankOperations {
      std::vector<TimedOperation> calls, works;
      std::vector<CollectiveArrival*> arrivals;  // of calls
      std::vector<std::uint32_t> work_spans;     // of works
    };
    std::map<std::uint32_t, RankOperations> by_rank;
    for (CollectiveCall& call : result.collectives)
      for (CollectiveArrival& a : call.arrivals) {
        if (a.nonblocking || a.span >= p.spans.size()) continue;
        const Span& s = p.spans[a.span];
        std::string operation = s.name < p.strings.size() ? c10d_operation(p.strings[s.name]) : std::string();
        if (operation.empty()) continue;
        RankOperations& r = by_rank[a.rank];
        r.calls.push_back({s.start_ns, std::move(operation)});
        r.arrivals.push_back(&a);
      }
    if (!by_rank.empty()) {
      std::vector<std::string> work_of(p.strings.size());  // "" for a name that is no work record
      for (std::size_t i = 0; i < p.strings.size(); ++i) work_of[i] = backend_work_operation(p.strings[i]);
      for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
        const Span& s = p.spans[i];
        if (s.name >= work_of.size() || work_of[s.name].empty()) continue;
        const auto r = by_rank.find(rank_of(p, s.thread));
        if (r == by_rank.end()) continue;
        r->second.works.push_back({s.start_ns, work_of[s.name]});
        r->second.work_spans.push_back(i);
      }
      for (auto& [rank, r] : by_rank) {
        const std::vector<std::uint32_t> pair = pair_backend_works(r.calls, r.works);
        for (std::size_t k = 0; k < pair.size(); ++k) {
          if (pair[k] == kNone) continue;
          const std::uint32_t work = r.work_spans[pair[k]];
          is_communication[work] = true;
          CollectiveArrival& arrival = *r.arrivals[k];
          arrival.end_ns = std::max(arrival.end_ns, p.spans[work].end_ns);
          arrival.blocked_ns = arrival.end_ns - arrival.arrival_ns;
        }
      }
    }
  }

  // Nonblocking collectives: the end is the completion, and the wait only the time the rank was
  // blocked in the calls that completed it. That time is taken as one stretch ending at the
  // completion ([completion - blocked, completion], exact for a wait and for a test polled in a
  // tight loop), and only its part before the last arrival is waiting. One wait or test may
  // complete several collectives (MPI_Waitall): each moment of it is waiting for the one that
  // would be released first among those still pending, so that no moment counts twice.
  {
    struct Completed {
      std::uint32_t call;
      std::uint32_t arrival;
      std::uint64_t start_ns;  // of the blocked stretch
      std::uint64_t end_ns;    // the completion
    };
    std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<Completed>> by_completing_call;  // (rank, call span)
    for (const CompletionSpan& done : found.completions) {
      const Span& s = p.spans[done.span];
      is_communication[done.span] = true;
      const std::uint32_t completing = parent[done.span];
      if (completing != kNone) is_communication[completing] = true;
      const auto it = index.find({done.group, done.seq});
      if (it == index.end()) continue;
      CollectiveCall& call = result.collectives[it->second];
      const std::uint32_t rank = rank_of(p, s.thread);
      const auto a = std::ranges::find(call.arrivals, rank, &CollectiveArrival::rank);
      if (a == call.arrivals.end() || !a->nonblocking || s.start_ns < a->arrival_ns) continue;
      a->end_ns = s.start_ns;
      a->blocked_ns = std::min(done.blocked_ns, a->end_ns - a->arrival_ns);
      by_completing_call[{rank, completing == kNone ? done.span : completing}].push_back(
          {it->second, static_cast<std::uint32_t>(a - call.arrivals.begin()), a->end_ns - a->blocked_ns, a->end_ns});
    }
    for (auto& [key, completed] : by_completing_call) {
      std::ranges::sort(completed, [&](const Completed& x, const Completed& y) {
        return result.collectives[x.call].last_arrival_ns < result.collectives[y.call].last_arrival_ns;
      });
      std::uint64_t attributed_until = 0;  // the moments up to here are some earlier collective's
      for (const Completed& c : completed) {
        CollectiveCall& call = result.collectives[c.call];
        const std::uint64_t from = std::max(c.start_ns, attributed_until);
        const std::uint64_t until = std::min(c.end_ns, call.last_arrival_ns);
        if (until > from) {
          call.arrivals[c.arrival].wait_ns = until - from;
          attributed_until = until;
        }
      }
    }
  }

  for (CollectiveCall& call : result.collectives) {
    for (CollectiveArrival& a : call.arrivals) {
      if (a.wait_ns == 0 || a.rank == call.last_rank || a.rank >= ranks) continue;
      RankWait& w = waits[{a.rank, call.last_rank, call.operation, call.group}];
      w.waiter = a.rank;
      w.waited_for = call.last_rank;
      w.operation = call.operation;
      w.group = call.group;
      ++w.calls;
      w.total_ns += a.wait_ns;
      w.max_ns = std::max(w.max_ns, a.wait_ns);
      waited[a.rank] += a.wait_ns;
      if (call.last_rank < ranks) caused[call.last_rank] += a.wait_ns;
    }
  }
  std::ranges::sort(result.collectives, {}, &CollectiveCall::first_arrival_ns);
  if (!spreads.empty()) {
    std::ranges::nth_element(spreads, spreads.begin() + static_cast<std::ptrdiff_t>(spreads.size() / 2));
    result.median_spread_ns = spreads[spreads.size() / 2];
  }
  for (auto& [key, w] : waits) result.waits.push_back(std::move(w));
  std::ranges::sort(result.waits, [](const RankWait& a, const RankWait& b) {
    return std::tie(b.total_ns, a.waiter, a.waited_for) < std::tie(a.total_ns, b.waiter, b.waited_for);
  });

  // Steps per rank, and each rank's communication, computation and their overlap.
  const std::vector<bool> encloses = encloses_collective(parent, is_communication);
  const StepChoice step = choose_step(p, options, encloses, is_communication);
  result.step_name = step.name;
  result.ranks.resize(ranks);
  std::vector<std::vector<Interval>> communication(ranks), computation(ranks);
  std::vector<std::uint32_t> step_depth(ranks, ~0u);
  std::vector<std::pair<std::uint64_t, std::uint64_t>> extent(ranks, {~std::uint64_t{0}, 0});
  for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    const std::uint32_t rank = rank_of(p, s.thread);
    if (rank >= ranks) continue;
    extent[rank] = {std::min(extent[rank].first, s.start_ns), std::max(extent[rank].second, s.end_ns)};
    if (is_communication[i])
      communication[rank].emplace_back(s.start_ns, s.end_ns);
    else if (!encloses[i])
      computation[rank].emplace_back(s.start_ns, s.end_ns);
    if (step.name != kNone && s.name < step.is_step.size() && step.is_step[s.name])
      step_depth[rank] = std::min(step_depth[rank], s.depth);
  }
  // A nonblocking collective is in flight from its call to its completion: communication that
  // the computation between them overlaps.
  for (const CollectiveCall& call : result.collectives)
    for (const CollectiveArrival& a : call.arrivals)
      if (a.nonblocking && a.rank < ranks) communication[a.rank].emplace_back(a.arrival_ns, a.end_ns);
  for (std::uint32_t r = 0; r < ranks; ++r) {
    RankSummary& summary = result.ranks[r];
    summary.rank = r;
    const std::vector<Interval> comm = union_of(std::move(communication[r]));
    const std::vector<Interval> comp = union_of(std::move(computation[r]));
    summary.communication_ns = length_of(comm);
    summary.computation_ns = length_of(comp);
    summary.overlap_ns = overlap_of(comm, comp);
    summary.wait_ns = waited[r];
    summary.caused_wait_ns = caused[r];
  }
  for (const Span& s : p.spans) {
    const std::uint32_t rank = rank_of(p, s.thread);
    if (rank >= ranks || step.name == kNone || s.name >= step.is_step.size() || !step.is_step[s.name] ||
        s.depth != step_depth[rank])
      continue;
    result.ranks[rank].steps.push_back(RankStep{s.start_ns, s.end_ns, 0});
  }
  for (std::uint32_t r = 0; r < ranks; ++r) {
    std::vector<RankStep>& steps = result.ranks[r].steps;
    if (step.name == kNone && extent[r].second > extent[r].first) steps.push_back({extent[r].first, extent[r].second, 0});
    std::ranges::sort(steps, {}, &RankStep::start_ns);
  }
  // Each wait counts in the step of its rank that it began in: at the arrival for a blocking
  // collective, where the rank began to be blocked for a nonblocking one (a collective started
  // in one step may be waited for in the next).
  for (const CollectiveCall& call : result.collectives)
    for (const CollectiveArrival& a : call.arrivals) {
      if (a.rank >= ranks || a.wait_ns == 0) continue;
      const std::uint64_t began =
          a.nonblocking ? std::max(a.arrival_ns, a.end_ns - std::min(a.blocked_ns, a.end_ns)) : a.arrival_ns;
      std::vector<RankStep>& steps = result.ranks[a.rank].steps;
      auto it = std::ranges::upper_bound(steps, began, {}, &RankStep::start_ns);
      if (it == steps.begin()) continue;
      --it;
      if (began < it->end_ns) it->wait_ns += std::min(a.wait_ns, it->end_ns - it->start_ns - it->wait_ns);
    }

  // Step figures and straggler scores.
  result.steps = ranks == 0 ? 0 : ~0u;
  std::uint64_t fastest_busy = 0;
  for (RankSummary& summary : result.ranks) {
    result.steps = std::min<std::uint32_t>(result.steps, static_cast<std::uint32_t>(summary.steps.size()));
    if (summary.steps.empty()) continue;
    std::uint64_t sum = 0, busy_sum = 0;
    summary.best_step_ns = summary.best_busy_ns = ~std::uint64_t{0};
    for (const RankStep& s : summary.steps) {
      sum += s.duration_ns();
      busy_sum += s.busy_ns();
      summary.best_step_ns = std::min(summary.best_step_ns, s.duration_ns());
      summary.worst_step_ns = std::max(summary.worst_step_ns, s.duration_ns());
      summary.best_busy_ns = std::min(summary.best_busy_ns, s.busy_ns());
    }
    summary.mean_step_ns = sum / summary.steps.size();
    summary.mean_busy_ns = busy_sum / summary.steps.size();
    if (fastest_busy == 0 || summary.mean_busy_ns < fastest_busy) fastest_busy = summary.mean_busy_ns;
  }
  for (RankSummary& summary : result.ranks) {
    if (summary.steps.empty()) continue;
    if (fastest_busy > 0)
      summary.straggler_vs_fastest = static_cast<double>(summary.mean_busy_ns) / static_cast<double>(fastest_busy) - 1.0;
    if (summary.best_busy_ns > 0)
      summary.straggler_vs_own_best =
          static_cast<double>(summary.mean_busy_ns) / static_cast<double>(summary.best_busy_ns) - 1.0;
  }
  // The straggler: the rank the others waited for most, when what it made them wait per
  // collective it arrived last at is more than the clocks' error.
  std::uint32_t most = kNone;
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (caused[r] > 0 && (most == kNone || caused[r] > caused[most])) most = r;
  if (most != kNone) {
    std::uint64_t last_at = 0;
    for (const CollectiveCall& call : result.collectives)
      if (call.last_rank == most && call.spread_ns() > 0) ++last_at;
    const double per_call = last_at == 0 ? 0.0 : static_cast<double>(caused[most]) / static_cast<double>(last_at);
    if (per_call > result.clock_residual_ns) result.straggler = most;
  }

  // The slowest step across ranks, and its critical path.
  if (result.steps != ~0u && result.steps > 0) {
    std::uint64_t longest = 0;
    for (std::uint32_t i = 0; i < result.steps; ++i) {
      std::uint64_t first = ~std::uint64_t{0}, last = 0;
      for (const RankSummary& s : result.ranks) {
        first = std::min(first, s.steps[i].start_ns);
        last = std::max(last, s.steps[i].end_ns);
      }
      if (last - first > longest) {
        longest = last - first;
        result.slowest_step = i;
      }
    }
    result.critical_path = analysis::rank_critical_path(p, result, result.slowest_step);
  } else {
    result.steps = 0;
  }
  return result;
}

RankCriticalPath rank_critical_path(const Profile& p, const RankAnalysis& analysis, std::uint32_t step) {
  if (step >= analysis.steps)
    throw Error(fmt::format("step {} is not in this profile: every rank has {} step{} (0 to {})", step, analysis.steps,
                            analysis.steps == 1 ? "" : "s", analysis.steps == 0 ? 0 : analysis.steps - 1));
  const std::size_t ranks = analysis.ranks.size();
  // Per rank, its arrivals at collectives (call index, arrival, end), by end.
  struct Visit {
    std::uint32_t call;
    std::uint64_t arrival_ns;
    std::uint64_t end_ns;
    std::uint64_t blocked_from_ns;  // where the rank began to be held in it: a nonblocking one's wait
    bool nonblocking;
  };
  std::vector<std::vector<Visit>> visits(ranks);
  for (std::uint32_t c = 0; c < analysis.collectives.size(); ++c)
    for (const CollectiveArrival& a : analysis.collectives[c].arrivals)
      if (a.rank < ranks) {
        const std::uint64_t blocked_from =
            a.nonblocking ? std::max(a.arrival_ns, a.end_ns - std::min(a.blocked_ns, a.end_ns)) : a.arrival_ns;
        visits[a.rank].push_back({c, a.arrival_ns, a.end_ns, blocked_from, a.nonblocking});
      }
  for (std::vector<Visit>& v : visits)
    std::ranges::sort(v, [](const Visit& a, const Visit& b) { return std::tie(a.end_ns, a.arrival_ns) < std::tie(b.end_ns, b.arrival_ns); });
  // A cursor per rank that only moves back: each collective is examined once, so the walk
  // ends even where arrivals and ends coincide.
  std::vector<std::ptrdiff_t> cursor(ranks);
  for (std::size_t r = 0; r < ranks; ++r) cursor[r] = static_cast<std::ptrdiff_t>(visits[r].size()) - 1;

  // Scopes directly under the step (or top-level ones): what a compute segment is named after.
  std::vector<std::vector<std::uint32_t>> children(ranks);
  {
    std::vector<std::uint32_t> depth(ranks, 1);
    if (analysis.step_name != kNone) {
      for (const Span& s : p.spans)
        if (s.name == analysis.step_name) depth[rank_of(p, s.thread) < ranks ? rank_of(p, s.thread) : 0] = s.depth + 1;
    }
    std::vector<bool> collective(p.spans.size(), false);
    for (const CollectiveCall& call : analysis.collectives)
      for (const CollectiveArrival& a : call.arrivals)
        if (a.span < collective.size()) collective[a.span] = true;
    for (std::uint32_t i = 0; i < p.spans.size(); ++i) {
      const std::uint32_t rank = rank_of(p, p.spans[i].thread);
      if (rank < ranks && p.spans[i].depth == depth[rank] && !collective[i]) children[rank].push_back(i);
    }
    for (std::vector<std::uint32_t>& c : children)
      std::ranges::sort(c, [&](std::uint32_t a, std::uint32_t b) { return p.spans[a].start_ns < p.spans[b].start_ns; });
  }
  const auto name_of = [&](std::uint32_t rank, std::uint64_t start, std::uint64_t end) {
    StringId best = kNone;
    std::uint64_t best_overlap = 0;
    const std::vector<std::uint32_t>& c = children[rank];
    auto it = std::ranges::lower_bound(c, start, {}, [&](std::uint32_t i) { return p.spans[i].start_ns; });
    // Scopes that began shortly before `start` may reach into it.
    for (int back = 0; back < 8 && it != c.begin(); ++back) --it;
    for (; it != c.end() && p.spans[*it].start_ns < end; ++it) {
      const Span& s = p.spans[*it];
      const std::uint64_t lo = std::max(start, s.start_ns), hi = std::min(end, s.end_ns);
      if (hi > lo && hi - lo > best_overlap) {
        best_overlap = hi - lo;
        best = s.name;
      }
    }
    return best;
  };

  RankCriticalPath path;
  path.step = step;
  std::uint32_t rank = 0;
  for (std::uint32_t r = 0; r < ranks; ++r)
    if (analysis.ranks[r].steps[step].end_ns > analysis.ranks[rank].steps[step].end_ns) rank = r;
  std::uint64_t t = analysis.ranks[rank].steps[step].end_ns;
  path.end_ns = t;
  std::vector<RankPathSegment> backwards;
  const auto compute = [&](std::uint32_t r, std::uint64_t start, std::uint64_t end) {
    if (end > start) backwards.push_back({RankPathKind::Compute, r, start, end, name_of(r, start, end), kNone});
  };
  for (;;) {
    const std::uint64_t step_start = analysis.ranks[rank].steps[step].start_ns;
    // The latest collective this rank left by t, within its step.
    std::ptrdiff_t& at = cursor[rank];
    while (at >= 0 && visits[rank][static_cast<std::size_t>(at)].end_ns > t) --at;
    if (at < 0 || visits[rank][static_cast<std::size_t>(at)].arrival_ns < step_start) {
      compute(rank, std::min(step_start, t), t);
      path.start_ns = std::min(step_start, t);
      break;
    }
    const Visit v = visits[rank][static_cast<std::size_t>(at)];
    --at;
    compute(rank, v.end_ns, t);
    const CollectiveCall& call = analysis.collectives[v.call];
    const std::uint32_t last = call.last_rank < ranks ? call.last_rank : rank;
    // The collective could not end before its last member arrived (clamped: clocks may err).
    const std::uint64_t released = std::clamp(call.last_arrival_ns, v.arrival_ns, v.end_ns);
    StringId name = kNone;
    for (const CollectiveArrival& a : call.arrivals)
      if (a.rank == rank && a.span < p.spans.size()) name = p.spans[a.span].name;
    // A nonblocking collective whose last member arrived before this rank began to wait for it
    // held nobody: the rank's own work up to its wait decided the end, so the path stays here,
    // through the blocked stretch and back into the work it overlapped.
    if (v.nonblocking && (last == rank || call.last_arrival_ns <= v.blocked_from_ns)) {
      backwards.push_back({RankPathKind::Collective, rank, v.blocked_from_ns, v.end_ns, name, v.call});
      t = v.blocked_from_ns;
      continue;
    }
    backwards.push_back({RankPathKind::Collective, rank, last == rank ? v.arrival_ns : released, v.end_ns, name, v.call});
    if (last == rank) {
      t = v.arrival_ns;
      continue;
    }
    // Continue on the last arrival, just before its own visit of this collective.
    t = released;
    rank = last;
    const auto own = std::ranges::find(visits[rank], v.call, &Visit::call);
    if (own != visits[rank].end())
      cursor[rank] = std::min(cursor[rank], own - visits[rank].begin() - 1);
  }
  path.segments.assign(backwards.rbegin(), backwards.rend());
  for (const RankPathSegment& s : path.segments)
    (s.kind == RankPathKind::Compute ? path.compute_ns : path.collective_ns) += s.duration_ns();
  return path;
}

}  // namespace nnprof::analysis
