// The operator table: operator calls (spans with "op_scope") grouped by (operator, input
// shapes). A training step of a real model makes hundreds of thousands of operator calls, so
// everything here is a few linear passes: arguments are read once (they are sorted by span),
// shape strings are interned as views into the profile, and groups are found by a 64-bit key
// of (name id, shapes id), never by building a string per call.
#include "analysis/operators.hpp"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

namespace nnprof {
namespace {

// A span's length; 0 for one that ends before it starts (a damaged file), rather than 2^64 - 1.
std::uint64_t length_of(const Span& s) { return s.end_ns > s.start_ns ? s.end_ns - s.start_ns : 0; }

OperatorScope scope_named(std::string_view value) {
  if (value == "function") return OperatorScope::Function;
  if (value == "backward") return OperatorScope::Backward;
  if (value == "user") return OperatorScope::User;
  if (value == "torchscript") return OperatorScope::TorchScript;
  return OperatorScope::Other;
}

// Dense ids for the distinct texts of an argument; 0 stands for "not given". The views point
// into the profile's span arguments, which outlive the analysis.
class Interner {
 public:
  std::uint32_t id(std::string_view text) {
    if (text.empty()) return 0;
    const auto [it, added] = ids_.try_emplace(text, static_cast<std::uint32_t>(texts_.size()));
    if (added) texts_.push_back(text);
    return it->second;
  }
  [[nodiscard]] std::string_view text(std::uint32_t id) const { return texts_[id]; }

 private:
  std::unordered_map<std::string_view, std::uint32_t> ids_;
  std::vector<std::string_view> texts_{std::string_view{}};
};

// One operator call: a span with "op_scope", and what its arguments say.
struct Call {
  std::uint32_t span = 0;
  std::uint32_t shapes = 0;  // Interner ids; 0: not recorded
  std::uint32_t dtypes = 0;
  OperatorScope scope = OperatorScope::Other;
  bool has_seq = false;
  bool has_flops = false;
  std::int64_t seq = 0;
  double flops = 0.0;
  std::uint64_t bytes = 0;
  std::uint64_t child_ns = 0;  // time of the spans directly inside it on its thread
  std::uint32_t group = 0;
};

// Reads every span's arguments once; a span becomes a call when one of them is "op_scope".
std::vector<Call> read_calls(const Profile& profile, Interner& shapes, Interner& dtypes) {
  std::vector<Call> calls;
  const std::vector<SpanArg>& args = profile.span_args;
  for (std::size_t i = 0; i < args.size();) {
    const std::uint32_t span = args[i].span;
    Call call;
    call.span = span;
    bool is_operator = false;
    for (; i < args.size() && args[i].span == span; ++i) {
      const SpanArg& a = args[i];
      const std::string_view key = a.key;
      if (a.type == SpanArg::Type::String) {
        if (key == "op_scope") {
          is_operator = true;
          call.scope = scope_named(a.string_value);
        } else if (key == "input_shapes") {
          call.shapes = shapes.id(a.string_value);
        } else if (key == "input_dtypes") {
          call.dtypes = dtypes.id(a.string_value);
        }
      } else if (key == "seq" && a.type == SpanArg::Type::Int) {
        call.has_seq = true;
        call.seq = a.int_value;
      } else if (key == "flops") {
        const double flops = a.type == SpanArg::Type::Real ? a.real_value : static_cast<double>(a.int_value);
        if (flops > 0.0) {
          call.has_flops = true;
          call.flops = flops;
        }
      } else if (key == "bytes" && a.type == SpanArg::Type::Int && a.int_value > 0) {
        call.bytes = static_cast<std::uint64_t>(a.int_value);
      }
    }
    if (is_operator && span < profile.spans.size()) calls.push_back(call);
  }
  return calls;
}

// One sweep over the spans (sorted by thread, start, depth: parents first): each call's time
// in the spans directly inside it, and the time inside outermost calls. A span's parent is the
// last span one level up on its thread, if that one is still open at its start (it may not
// have been kept).
void sweep_spans(const Profile& profile, std::vector<Call>& calls, const std::vector<std::uint32_t>& call_of_span,
                 OperatorTable& table) {
  struct Open {
    std::uint32_t span = kNone;
    bool inside_operator = false;  // an operator call, or inside one
  };
  std::vector<Open> by_depth;
  std::vector<std::pair<std::uint64_t, std::uint64_t>> outermost;  // [start, end) of outermost calls
  std::uint32_t thread = kNone;
  const std::vector<Span>& spans = profile.spans;
  for (std::uint32_t i = 0; i < spans.size(); ++i) {
    const Span& s = spans[i];
    if (s.thread != thread) {
      thread = s.thread;
      by_depth.assign(by_depth.size(), Open{});
    }
    const std::size_t depth = s.depth;
    if (depth >= by_depth.size()) by_depth.resize(depth + 1);
    Open parent;
    if (depth >= 1 && by_depth[depth - 1].span != kNone && spans[by_depth[depth - 1].span].end_ns >= s.start_ns) {
      parent = by_depth[depth - 1];
    }
    const std::uint64_t duration = length_of(s);
    if (parent.span != kNone && call_of_span[parent.span] != kNone) calls[call_of_span[parent.span]].child_ns += duration;
    const bool is_call = call_of_span[i] != kNone;
    if (is_call && !parent.inside_operator) {
      table.operator_ns += duration;
      outermost.emplace_back(s.start_ns, s.start_ns + duration);
    }
    by_depth[depth] = Open{i, is_call || parent.inside_operator};
  }
  // The union over threads: wall time with at least one thread inside an operator.
  if (!std::is_sorted(outermost.begin(), outermost.end())) std::sort(outermost.begin(), outermost.end());
  std::uint64_t covered = 0, begin = 0, end = 0;
  bool any = false;
  for (const auto& [start, stop] : outermost) {
    if (!any || start > end) {
      if (any) covered += end - begin;
      begin = start;
      end = stop;
      any = true;
    } else {
      end = std::max(end, stop);
    }
  }
  if (any) covered += end - begin;
  table.covered_ns = covered;
}

void link_backward(const Profile& profile, const std::vector<Call>& calls, std::vector<OperatorGroup>& groups) {
  std::vector<analysis::NumberedCall> numbered;
  std::vector<std::uint32_t> call_of;  // numbered[i] is calls[call_of[i]]
  for (std::uint32_t k = 0; k < calls.size(); ++k) {
    const Call& c = calls[k];
    if (!c.has_seq || (c.scope != OperatorScope::Function && c.scope != OperatorScope::Backward)) continue;
    numbered.push_back(analysis::NumberedCall{c.span, c.seq, c.scope == OperatorScope::Backward});
    call_of.push_back(k);
  }
  const std::vector<std::uint32_t> forward = analysis::forward_of_backward(profile, numbered);
  for (std::size_t i = 0; i < numbered.size(); ++i) {
    if (!numbered[i].backward) continue;
    OperatorGroup& group = groups[calls[call_of[i]].group];
    if (forward[i] == kNone) {
      ++group.unlinked_calls;
      continue;
    }
    const std::uint32_t forward_group = calls[call_of[forward[i]]].group;
    auto link = std::find_if(group.forward.begin(), group.forward.end(),
                             [&](const OperatorLink& l) { return l.group == forward_group; });
    if (link == group.forward.end()) link = group.forward.insert(group.forward.end(), OperatorLink{forward_group, 0});
    ++link->calls;
  }
}

}  // namespace

namespace analysis {

std::vector<std::uint32_t> forward_of_backward(const Profile& profile, const std::vector<NumberedCall>& calls) {
  std::vector<std::uint32_t> forward(calls.size(), kNone);
  std::unordered_map<std::int64_t, std::vector<std::uint32_t>> forward_of_seq;
  bool any_backward = false;
  for (std::uint32_t i = 0; i < calls.size(); ++i) {
    if (calls[i].backward)
      any_backward = true;
    else
      forward_of_seq[calls[i].seq].push_back(i);
  }
  if (!any_backward) return forward;
  const auto span = [&](std::uint32_t i) -> const Span& { return profile.spans[calls[i].span]; };
  for (std::uint32_t i = 0; i < calls.size(); ++i) {
    if (!calls[i].backward) continue;
    const auto found = forward_of_seq.find(calls[i].seq);
    if (found == forward_of_seq.end()) continue;
    // torch numbers per forward thread, and the calls nested in a forward call share its number:
    // the latest call with the number before the backward one, then the outermost call with the
    // number that encloses it on its thread.
    std::uint32_t latest = kNone;
    for (const std::uint32_t k : found->second)
      if (span(k).start_ns <= span(i).start_ns && (latest == kNone || span(k).start_ns > span(latest).start_ns)) latest = k;
    if (latest == kNone) continue;
    std::uint32_t outermost = latest;
    for (const std::uint32_t k : found->second) {
      const Span& c = span(k);
      if (c.thread == span(latest).thread && c.start_ns <= span(latest).start_ns && c.end_ns >= span(latest).end_ns &&
          c.depth < span(outermost).depth)
        outermost = k;
    }
    forward[i] = outermost;
  }
  return forward;
}

std::vector<ForwardBackward> forward_backward_links(const Profile& profile) {
  std::vector<NumberedCall> calls;
  const std::vector<SpanArg>& args = profile.span_args;  // sorted by span
  for (std::size_t i = 0; i < args.size();) {
    const std::uint32_t span = args[i].span;
    std::optional<std::int64_t> seq;
    OperatorScope scope = OperatorScope::Other;
    for (; i < args.size() && args[i].span == span; ++i) {
      if (args[i].key == "seq" && args[i].type == SpanArg::Type::Int) seq = args[i].int_value;
      if (args[i].key == "op_scope" && args[i].type == SpanArg::Type::String) scope = scope_named(args[i].string_value);
    }
    if (seq && span < profile.spans.size() && (scope == OperatorScope::Function || scope == OperatorScope::Backward))
      calls.push_back(NumberedCall{span, *seq, scope == OperatorScope::Backward});
  }
  const std::vector<std::uint32_t> forward = forward_of_backward(profile, calls);
  std::vector<ForwardBackward> links;
  for (std::size_t i = 0; i < calls.size(); ++i)
    if (forward[i] != kNone) links.push_back(ForwardBackward{calls[forward[i]].span, calls[i].span});
  return links;
}

}  // namespace analysis

const char* to_string(OperatorScope scope) noexcept {
  switch (scope) {
    case OperatorScope::Function: return "function";
    case OperatorScope::Backward: return "backward";
    case OperatorScope::User: return "user";
    case OperatorScope::TorchScript: return "torchscript";
    case OperatorScope::Other: return "other";
  }
  return "other";
}

OperatorTable operator_table(const Profile& profile) {
  OperatorTable table;
  Interner shapes, dtypes;
  std::vector<Call> calls = read_calls(profile, shapes, dtypes);
  if (calls.empty()) return table;
  table.calls = calls.size();
  table.duration_ns = profile.meta.duration_ns;
  table.heap_tracked = profile.heap.tracked;

  std::vector<std::uint32_t> call_of_span(profile.spans.size(), kNone);
  for (std::uint32_t k = 0; k < calls.size(); ++k) call_of_span[calls[k].span] = k;
  sweep_spans(profile, calls, call_of_span, table);

  // Group by (name, shapes), in order of first call; heap figures once per call-tree node.
  std::vector<OperatorGroup> groups;
  std::vector<std::vector<std::uint32_t>> group_dtypes;
  std::vector<std::uint32_t> last_node;
  std::unordered_map<std::uint64_t, std::uint32_t> group_of_key;
  std::unordered_set<std::uint64_t> heap_nodes_seen;  // (group << 32) | node
  for (Call& c : calls) {
    const Span& span = profile.spans[c.span];
    const std::uint64_t key = (static_cast<std::uint64_t>(span.name) << 32) | c.shapes;
    const auto [found, added] = group_of_key.try_emplace(key, static_cast<std::uint32_t>(groups.size()));
    if (added) {
      OperatorGroup g;
      g.name = span.name;
      g.input_shapes = std::string(shapes.text(c.shapes));
      g.scope = c.scope;
      groups.push_back(std::move(g));
      group_dtypes.emplace_back();
      last_node.push_back(kNone);
    }
    c.group = found->second;
    OperatorGroup& g = groups[c.group];
    const std::uint64_t duration = length_of(span);
    ++g.calls;
    g.total_ns += duration;
    g.self_ns += duration - std::min(duration, c.child_ns);
    if (c.has_flops) {
      g.flops += c.flops;
      ++g.flops_calls;
    }
    g.bytes += c.bytes;
    if (c.dtypes != 0) {
      std::vector<std::uint32_t>& seen = group_dtypes[c.group];
      if (std::find(seen.begin(), seen.end(), c.dtypes) == seen.end()) seen.push_back(c.dtypes);
    }
    if (table.heap_tracked && span.node != last_node[c.group] && span.node < profile.call_tree.size()) {
      last_node[c.group] = span.node;
      if (heap_nodes_seen.insert((static_cast<std::uint64_t>(c.group) << 32) | span.node).second) {
        const CallTreeNode& node = profile.call_tree[span.node];
        g.heap_alloc_bytes += node.heap.alloc_bytes;
        g.heap_path_calls += node.time.count;
      }
    }
  }
  for (std::size_t i = 0; i < groups.size(); ++i) {
    for (const std::uint32_t id : group_dtypes[i]) groups[i].input_dtypes.emplace_back(dtypes.text(id));
  }
  link_backward(profile, calls, groups);

  // The statistics count every call of a name, also those whose span was not kept.
  std::vector<bool> counted(profile.strings.size(), false);
  for (const OperatorGroup& g : groups) {
    if (g.name < counted.size()) counted[g.name] = true;
  }
  for (const ScopeStats& scope : profile.scopes) {
    if (scope.name < counted.size() && counted[scope.name]) table.recorded_calls += scope.time.count;
  }
  table.recorded_calls = std::max(table.recorded_calls, table.calls);

  // Most self time first; ties by total time, then by first call, so the order is stable.
  std::vector<std::uint32_t> order(groups.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (groups[a].self_ns != groups[b].self_ns) return groups[a].self_ns > groups[b].self_ns;
    return groups[a].total_ns > groups[b].total_ns;
  });
  std::vector<std::uint32_t> position(groups.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) position[order[i]] = i;
  table.groups.reserve(groups.size());
  for (const std::uint32_t i : order) {
    OperatorGroup& g = groups[i];
    for (OperatorLink& link : g.forward) link.group = position[link.group];
    std::stable_sort(g.forward.begin(), g.forward.end(),
                     [](const OperatorLink& a, const OperatorLink& b) { return a.calls > b.calls; });
    table.self_ns += g.self_ns;
    table.groups.push_back(std::move(g));
  }
  return table;
}

namespace analysis {

std::string readable_shapes(std::string_view shapes) {
  std::string out(shapes);
  constexpr std::string_view kEmptyLast = ", []]";
  while (out.size() > kEmptyLast.size() && out.ends_with(kEmptyLast)) out.erase(out.size() - kEmptyLast.size(), 4);
  return out;
}

Sentence operators_lead(const OperatorTable& table) {
  Sentence s;
  if (table.empty()) return s;
  const OperatorGroup& top = table.groups.front();
  s.scope(top.name);
  if (!top.input_shapes.empty() && top.input_shapes != "[]") s.words(" with ").code(readable_shapes(top.input_shapes));
  s.words(" takes ").share(share_of(top.self_ns, table.self_ns)).key().words(" of operator self time (");
  s.duration(top.self_ns).words(" over ").count(top.calls, "call", "calls").words(").");
  return s;
}

Sentence operators_summary(const OperatorTable& table) {
  Sentence s;
  if (table.empty()) return s;
  s.count(table.calls, "operator call", "operator calls")
      .words(" in ")
      .count(table.groups.size(), "group", "groups")
      .words(" of operator and input shapes");
  if (table.duration_ns > 0) {
    s.words("; operators ran during ").share(table.fraction_of_run()).words(" of the run's wall time (");
    s.duration(table.covered_ns).words(" of ").duration(table.duration_ns).words(", on any thread)");
  }
  s.words(".");
  return s;
}

}  // namespace analysis
}  // namespace nnprof
