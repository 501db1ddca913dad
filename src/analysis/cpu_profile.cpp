#include "analysis/cpu_profile.hpp"

#include <algorithm>
#include <array>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

namespace nnprof::analysis {
namespace {

constexpr std::uint32_t kNoFunction = kNone;

std::string_view base_name(std::string_view path) {
  const std::size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Where an unsymbolized frame is in its module: the offset when the collector knew it (the same
// in every run, what addr2line takes), else the run's address.
std::uint64_t offset_in_module(const StackFrame& f) { return f.module_offset != 0 ? f.module_offset : f.address; }

void add(SampleCount& count, const CpuSample& sample) {
  ++count.samples;
  count.ns += sample.weight_ns;
}

// Frames grouped into functions, once per analysis: frame index -> function index.
class FunctionTable {
 public:
  explicit FunctionTable(const Profile& profile) : profile_(profile), of_frame_(profile.frames.size()) {
    std::map<std::tuple<StringId, StringId, std::uint64_t>, std::uint32_t> index;
    for (std::size_t i = 0; i < profile.frames.size(); ++i) {
      const StackFrame& f = profile.frames[i];
      const bool symbolized = f.function != kNone && f.function < profile.strings.size();
      const StringId module = f.module < profile.strings.size() ? f.module : kNone;
      // Unsymbolized frames of a known module are one function per address (as perf and
      // pprof show them); without a module they are all "[unknown]".
      const auto key = symbolized         ? std::tuple{f.function, module, std::uint64_t{0}}
                       : module != kNone ? std::tuple{kNone, module, offset_in_module(f)}
                                         : std::tuple{kNone, kNone, std::uint64_t{0}};
      auto [it, fresh] = index.try_emplace(key, static_cast<std::uint32_t>(functions_.size()));
      if (fresh) {
        CpuFunction fn;
        fn.function = symbolized ? f.function : kNone;
        fn.module_id = module;
        if (module != kNone) fn.module = std::string(base_name(profile.str(module)));
        if (symbolized) {
          fn.name = profile.str(f.function);
        } else if (module != kNone) {
          fn.address = f.address;
          fn.name = fmt::format("{}+{:#x}", fn.module, offset_in_module(f));
        } else {
          fn.name = "[unknown]";
        }
        functions_.push_back(std::move(fn));
      }
      of_frame_[i] = it->second;
    }
  }

  [[nodiscard]] std::uint32_t of_frame(std::uint32_t frame) {
    if (frame < of_frame_.size()) return of_frame_[frame];
    if (unknown_ == kNoFunction) {  // a dangling frame index: only a malformed profile has one
      unknown_ = static_cast<std::uint32_t>(functions_.size());
      CpuFunction fn;
      fn.name = "[unknown]";
      functions_.push_back(std::move(fn));
    }
    return unknown_;
  }

  /// The functions of a sample's stack, innermost first; empty without a stack.
  void stack_of(const CpuSample& sample, std::vector<std::uint32_t>& out) {
    out.clear();
    if (sample.stack >= profile_.stacks.size()) return;
    for (const std::uint32_t frame : profile_.stacks[sample.stack].frames) out.push_back(of_frame(frame));
  }

  [[nodiscard]] std::vector<CpuFunction>& functions() { return functions_; }
  [[nodiscard]] const CpuFunction& at(std::uint32_t fn) const { return functions_[fn]; }
  [[nodiscard]] std::size_t size() const { return functions_.size(); }

 private:
  const Profile& profile_;
  std::vector<std::uint32_t> of_frame_;
  std::vector<CpuFunction> functions_;
  std::uint32_t unknown_ = kNoFunction;
};

// Which samples pass a filter: the scope filter as the set of nodes at or below the scope.
class SampleFilter {
 public:
  SampleFilter(const Profile& profile, const CpuFilter& filter) : filter_(filter) {
    if (filter.scope == 0) return;
    in_scope_.assign(profile.call_tree.size(), false);
    if (filter.scope >= profile.call_tree.size()) return;
    std::vector<std::uint32_t> todo{filter.scope};
    while (!todo.empty()) {
      const std::uint32_t node = todo.back();
      todo.pop_back();
      if (node >= in_scope_.size() || in_scope_[node]) continue;  // `visited` also stops a cycle
      in_scope_[node] = true;
      for (const std::uint32_t child : profile.call_tree[node].children) todo.push_back(child);
    }
  }

  [[nodiscard]] bool passes(const CpuSample& s) const {
    if (filter_.thread != kNone && s.thread != filter_.thread) return false;
    if (filter_.scope == 0) return true;
    return s.node < in_scope_.size() && in_scope_[s.node];
  }

 private:
  CpuFilter filter_;
  std::vector<bool> in_scope_;
};

// Calls `visit(fn)` once for every distinct function of `stack` (stacks are short: a linear
// search over what came before beats a hash set).
template <class Visit>
void for_each_distinct(const std::vector<std::uint32_t>& stack, Visit visit) {
  for (std::size_t i = 0; i < stack.size(); ++i) {
    if (std::find(stack.begin(), stack.begin() + static_cast<std::ptrdiff_t>(i), stack[i]) !=
        stack.begin() + static_cast<std::ptrdiff_t>(i)) {
      continue;
    }
    visit(stack[i]);
  }
}

bool hotter(const CpuFunction& a, const CpuFunction& b) {
  if (a.self.samples != b.self.samples) return a.self.samples > b.self.samples;
  if (a.total.samples != b.total.samples) return a.total.samples > b.total.samples;
  return a.name < b.name;
}

// Self and total of every function over the samples that `keep` accepts; the functions that
// ran, hottest first, with shares of `whole` samples.
template <class Keep>
std::vector<CpuFunction> count_functions(const Profile& profile, FunctionTable& table, Keep keep) {
  std::vector<SampleCount> self(table.size());
  std::vector<SampleCount> total(table.size());
  std::uint64_t whole = 0;
  std::vector<std::uint32_t> stack;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep(sample)) continue;
    ++whole;
    table.stack_of(sample, stack);
    if (stack.empty()) continue;
    if (table.size() > self.size()) {
      self.resize(table.size());
      total.resize(table.size());
    }
    add(self[stack.front()], sample);
    for_each_distinct(stack, [&](std::uint32_t fn) { add(total[fn], sample); });
  }
  std::vector<CpuFunction> out;
  for (std::uint32_t fn = 0; fn < total.size(); ++fn) {
    if (total[fn].samples == 0) continue;
    CpuFunction f = table.at(fn);
    f.self = self[fn];
    f.total = total[fn];
    f.self_share = share_of(f.self.samples, whole);
    f.total_share = share_of(f.total.samples, whole);
    out.push_back(std::move(f));
  }
  std::sort(out.begin(), out.end(), hotter);
  return out;
}

std::vector<CpuEdge> edges(std::map<std::string, SampleCount>& counts, std::uint64_t total) {
  std::vector<CpuEdge> out;
  for (auto& [name, count] : counts) out.push_back({name, count, share_of(count.samples, total)});
  std::stable_sort(out.begin(), out.end(),
                   [](const CpuEdge& a, const CpuEdge& b) { return a.weight.samples > b.weight.samples; });
  return out;
}

// The hot lines of the samples that `keep` accepts and whose innermost function `want` takes.
template <class Keep, class Want>
std::vector<CpuLine> count_lines(const Profile& profile, FunctionTable& table, Keep keep, Want want) {
  std::map<std::tuple<std::uint32_t, StringId, std::uint32_t>, SampleCount> lines;
  std::uint64_t whole = 0;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep(sample)) continue;
    ++whole;
    if (sample.stack >= profile.stacks.size() || profile.stacks[sample.stack].frames.empty()) continue;
    const std::uint32_t frame = profile.stacks[sample.stack].frames.front();
    if (frame >= profile.frames.size()) continue;
    const StackFrame& f = profile.frames[frame];
    if (f.file >= profile.strings.size() || f.line == 0) continue;
    const std::uint32_t fn = table.of_frame(frame);
    if (!want(table.at(fn))) continue;
    add(lines[{fn, f.file, f.line}], sample);
  }
  std::vector<CpuLine> out;
  for (const auto& [key, count] : lines) {
    const auto& [fn, file, line] = key;
    out.push_back({table.at(fn).name, profile.str(file), line, count, share_of(count.samples, whole)});
  }
  std::sort(out.begin(), out.end(), [](const CpuLine& a, const CpuLine& b) {
    if (a.self.samples != b.self.samples) return a.self.samples > b.self.samples;
    if (a.file != b.file) return a.file < b.file;
    if (a.line != b.line) return a.line < b.line;
    return a.function < b.function;
  });
  return out;
}

// The ancestors of `node` from itself up, without the root; stops on a malformed parent link.
void ancestors(const Profile& profile, std::uint32_t node, std::vector<std::uint32_t>& out) {
  out.clear();
  while (node != 0 && node < profile.call_tree.size() && out.size() <= profile.call_tree.size()) {
    out.push_back(node);
    node = profile.call_tree[node].parent;
  }
}

}  // namespace

std::string cpu_frame_function(const Profile& profile, std::uint32_t frame) {
  if (frame >= profile.frames.size()) return "[unknown]";
  const StackFrame& f = profile.frames[frame];
  if (f.function < profile.strings.size()) return profile.str(f.function);
  if (f.module < profile.strings.size()) {
    return fmt::format("{}+{:#x}", base_name(profile.str(f.module)), offset_in_module(f));
  }
  return "[unknown]";
}

SampleCount cpu_sample_total(const Profile& profile, const CpuFilter& filter) {
  const SampleFilter keep(profile, filter);
  SampleCount count;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (keep.passes(sample)) add(count, sample);
  }
  return count;
}

std::vector<CpuFunction> cpu_functions(const Profile& profile, const CpuFilter& filter) {
  if (profile.cpu_samples.empty()) return {};
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  return count_functions(profile, table, [&](const CpuSample& s) { return keep.passes(s); });
}

CpuCallers cpu_callers(const Profile& profile, const std::string& function, const CpuFilter& filter) {
  CpuCallers out;
  out.function = function;
  if (profile.cpu_samples.empty()) return out;
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  std::map<std::string, SampleCount> callers;
  std::map<std::string, SampleCount> callees;
  std::vector<std::uint32_t> stack;
  std::vector<std::string_view> seen_callers;
  std::vector<std::string_view> seen_callees;
  auto once = [](std::vector<std::string_view>& seen, std::string_view name) {
    if (std::find(seen.begin(), seen.end(), name) != seen.end()) return false;
    seen.push_back(name);
    return true;
  };
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep.passes(sample)) continue;
    table.stack_of(sample, stack);
    seen_callers.clear();
    seen_callees.clear();
    bool in_stack = false;
    bool outermost = false;
    for (std::size_t i = 0; i < stack.size(); ++i) {
      if (table.at(stack[i]).name != function) continue;
      in_stack = true;
      if (i > 0) {
        const std::string& callee = table.at(stack[i - 1]).name;
        if (callee != function && once(seen_callees, callee)) add(callees[callee], sample);
      }
      if (i + 1 < stack.size()) {
        const std::string& caller = table.at(stack[i + 1]).name;
        if (caller != function && once(seen_callers, caller)) add(callers[caller], sample);
      } else {
        outermost = true;
      }
    }
    if (!in_stack) continue;
    add(out.total, sample);
    if (table.at(stack.front()).name == function) add(out.self, sample);
    if (outermost) add(out.outermost, sample);
  }
  out.callers = edges(callers, out.total.samples);
  out.callees = edges(callees, out.total.samples);
  return out;
}

std::vector<CpuLine> cpu_hot_lines(const Profile& profile, std::size_t n, const CpuFilter& filter) {
  if (profile.cpu_samples.empty()) return {};
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  std::vector<CpuLine> lines = count_lines(
      profile, table, [&](const CpuSample& s) { return keep.passes(s); }, [](const CpuFunction&) { return true; });
  if (lines.size() > n) lines.resize(n);
  return lines;
}

std::vector<CpuLine> cpu_function_lines(const Profile& profile, const std::string& function,
                                        const CpuFilter& filter) {
  if (profile.cpu_samples.empty()) return {};
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  return count_lines(
      profile, table, [&](const CpuSample& s) { return keep.passes(s); },
      [&](const CpuFunction& fn) { return fn.name == function; });
}

std::vector<PythonLineStats> cpu_python_lines(const Profile& profile, const CpuFilter& filter) {
  if (profile.cpu_samples.empty()) return {};
  const SampleFilter keep(profile, filter);
  struct Counts {
    SampleCount self;
    SampleCount total;
  };
  // By frame's function and line: a Python frame's function names its code object, so one
  // line of two functions (a lambda on a def's line) stays two rows.
  std::map<std::tuple<StringId, StringId, std::uint32_t>, Counts> lines;
  std::vector<std::tuple<StringId, StringId, std::uint32_t>> seen;  // this sample's lines, for total once each
  std::uint64_t whole = 0;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep.passes(sample)) continue;
    ++whole;
    if (sample.stack >= profile.stacks.size()) continue;
    seen.clear();
    for (const std::uint32_t frame : profile.stacks[sample.stack].frames) {
      if (frame >= profile.frames.size() || !is_python_frame(profile.frames[frame])) continue;
      const StackFrame& f = profile.frames[frame];
      const std::tuple key{f.function, f.file, f.line};
      if (std::find(seen.begin(), seen.end(), key) != seen.end()) continue;  // recursion: once per sample
      Counts& counts = lines[key];
      if (seen.empty()) add(counts.self, sample);  // the innermost Python frame
      add(counts.total, sample);
      seen.push_back(key);
    }
  }
  const auto text = [&](StringId id) { return id < profile.strings.size() ? profile.str(id) : std::string(); };
  std::vector<PythonLineStats> out;
  for (const auto& [key, counts] : lines) {
    const auto& [function, file, line] = key;
    PythonLineStats l;
    l.function = text(function);
    l.file = text(file);
    l.line = line;
    l.self_samples = counts.self.samples;
    l.total_samples = counts.total.samples;
    l.self_time_ms = static_cast<double>(counts.self.ns) / 1e6;
    l.total_time_ms = static_cast<double>(counts.total.ns) / 1e6;
    l.self_percentage = share_of(counts.self.samples, whole) * 100.0;
    l.percentage = share_of(counts.total.samples, whole) * 100.0;
    out.push_back(std::move(l));
  }
  std::sort(out.begin(), out.end(), [](const PythonLineStats& a, const PythonLineStats& b) {
    if (a.self_samples != b.self_samples) return a.self_samples > b.self_samples;
    if (a.total_samples != b.total_samples) return a.total_samples > b.total_samples;
    if (a.file != b.file) return a.file < b.file;
    if (a.line != b.line) return a.line < b.line;
    return a.function < b.function;
  });
  return out;
}

std::vector<CpuScope> cpu_scopes(const Profile& profile, std::size_t top_n, const CpuFilter& filter) {
  if (profile.cpu_samples.empty()) return {};
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  const std::size_t nodes = std::max<std::size_t>(profile.call_tree.size(), 1);
  std::vector<SampleCount> inclusive(nodes);
  std::vector<SampleCount> self(nodes);
  // Each node's own profile: self and total per function over its samples and those below it.
  struct Counts {
    SampleCount self;
    SampleCount total;
  };
  std::vector<std::unordered_map<std::uint32_t, Counts>> functions(top_n > 0 ? nodes : 0);
  std::uint64_t whole = 0;
  std::vector<std::uint32_t> path;
  std::vector<std::uint32_t> stack;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep.passes(sample)) continue;
    ++whole;
    const std::uint32_t node = sample.node < profile.call_tree.size() ? sample.node : 0;
    add(self[node], sample);
    ancestors(profile, node, path);
    if (node == 0) path.push_back(0);  // node 0 stands for "outside any scope", not for the root
    if (top_n > 0) table.stack_of(sample, stack);
    for (const std::uint32_t n : path) {
      add(inclusive[n], sample);
      if (top_n == 0 || stack.empty()) continue;
      auto& counts = functions[n];
      add(counts[stack.front()].self, sample);
      for_each_distinct(stack, [&](std::uint32_t fn) { add(counts[fn].total, sample); });
    }
  }
  std::vector<CpuScope> out;
  for (std::uint32_t node = 0; node < nodes; ++node) {
    if (inclusive[node].samples == 0) continue;
    CpuScope scope;
    scope.node = node;
    scope.path = node == 0 ? "[outside any scope]" : profile.node_path(node);
    scope.samples = inclusive[node];
    scope.self = self[node];
    scope.share = share_of(scope.samples.samples, whole);
    if (top_n > 0) {
      for (const auto& [fn, counts] : functions[node]) {
        CpuFunction f = table.at(fn);
        f.self = counts.self;
        f.total = counts.total;
        f.self_share = share_of(f.self.samples, scope.samples.samples);
        f.total_share = share_of(f.total.samples, scope.samples.samples);
        scope.top.push_back(std::move(f));
      }
      std::sort(scope.top.begin(), scope.top.end(), hotter);
      if (scope.top.size() > top_n) scope.top.resize(top_n);
    }
    out.push_back(std::move(scope));
  }
  std::sort(out.begin(), out.end(), [](const CpuScope& a, const CpuScope& b) {
    if (a.samples.samples != b.samples.samples) return a.samples.samples > b.samples.samples;
    return a.path < b.path;
  });
  return out;
}

std::vector<CpuScopeName> cpu_by_scope_name(const Profile& profile) {
  std::vector<CpuScopeName> out(profile.strings.size());
  std::vector<std::uint32_t> path;
  std::vector<StringId> names;
  for (const CpuSample& sample : profile.cpu_samples) {
    ancestors(profile, sample.node, path);
    names.clear();
    for (const std::uint32_t node : path) {
      const StringId name = profile.call_tree[node].name;
      if (name >= out.size() || std::find(names.begin(), names.end(), name) != names.end()) continue;
      names.push_back(name);
      add(out[name].samples, sample);
    }
    if (!path.empty() && profile.call_tree[path.front()].name < out.size()) {
      add(out[profile.call_tree[path.front()].name].self, sample);
    }
  }
  return out;
}

FlameTree flame_tree(const Profile& profile, const CpuFilter& filter, bool include_scopes) {
  FlameTree tree;
  FlameNode root;
  root.name = "all";
  tree.nodes.push_back(std::move(root));
  if (profile.cpu_samples.empty()) return tree;
  FunctionTable table(profile);
  const SampleFilter keep(profile, filter);
  // Children are found by (parent, what): a function index, a call-tree node (scopes; the
  // tree is merged by path already, so its node id is the path) or "no stack".
  constexpr std::uint64_t kScopeTag = std::uint64_t{1} << 32;
  constexpr std::uint64_t kNoStackTag = std::uint64_t{2} << 32;
  std::unordered_map<std::uint64_t, std::uint32_t> child_of;  // (parent << 34 | what) -> node
  auto child = [&](std::uint32_t parent, std::uint64_t what, auto&& describe) {
    const std::uint64_t key = (std::uint64_t{parent} << 34) ^ what;
    auto [it, fresh] = child_of.try_emplace(key, static_cast<std::uint32_t>(tree.nodes.size()));
    if (fresh) {
      FlameNode node;
      node.parent = parent;
      node.depth = tree.nodes[parent].depth + 1;
      describe(node);
      tree.max_depth = std::max(tree.max_depth, node.depth);
      tree.nodes[parent].children.push_back(it->second);
      tree.nodes.push_back(std::move(node));
    }
    return it->second;
  };
  std::vector<std::uint32_t> stack;
  std::vector<std::uint32_t> scopes;
  for (const CpuSample& sample : profile.cpu_samples) {
    if (!keep.passes(sample)) continue;
    std::uint32_t at = 0;
    add(tree.nodes[0].total, sample);
    if (include_scopes) {
      ancestors(profile, sample.node, scopes);
      for (auto it = scopes.rbegin(); it != scopes.rend(); ++it) {
        const std::uint32_t node = *it;
        at = child(at, kScopeTag | node, [&](FlameNode& n) {
          n.name = profile.str(profile.call_tree[node].name);
          n.scope = true;
        });
        add(tree.nodes[at].total, sample);
      }
    }
    table.stack_of(sample, stack);
    if (stack.empty()) {
      at = child(at, kNoStackTag, [](FlameNode& n) { n.name = "[no stack]"; });
      add(tree.nodes[at].total, sample);
    }
    for (auto it = stack.rbegin(); it != stack.rend(); ++it) {
      const std::uint32_t fn = *it;
      at = child(at, fn, [&](FlameNode& n) {
        n.name = table.at(fn).name;
        n.module = table.at(fn).module;
      });
      add(tree.nodes[at].total, sample);
    }
    add(tree.nodes[at].self, sample);
  }
  for (FlameNode& node : tree.nodes) {
    std::sort(node.children.begin(), node.children.end(), [&](std::uint32_t a, std::uint32_t b) {
      const FlameNode& x = tree.nodes[a];
      const FlameNode& y = tree.nodes[b];
      if (x.scope != y.scope) return x.scope;  // scopes first, then functions, each by name
      return x.name != y.name ? x.name < y.name : x.module < y.module;
    });
  }
  return tree;
}

// ---- summary ---------------------------------------------------------------------------

std::vector<Fact> cpu_facts(const Profile& profile) {
  const CpuProfileSummary& cpu = profile.cpu;
  std::vector<Fact> facts;
  if (!cpu.sampled) return facts;
  const bool wall = cpu.mode == "wall";
  Sentence how;
  how.words(wall ? "wall-clock time" : "CPU time").words(" of each thread, ");
  if (cpu.requested_hz > 0) how.words(fmt::format("{:g} Hz requested", cpu.requested_hz));
  if (cpu.period_ns > 0) {
    how.words(cpu.requested_hz > 0 ? " (one sample every " : "one sample every ").duration(cpu.period_ns);
    if (cpu.requested_hz > 0) how.words(")");
  }
  how.words(", by ").code(cpu.mechanism.empty() ? "unknown" : cpu.mechanism).words("; ");
  if (cpu.unwinder.empty() || cpu.unwinder == "none") {
    how.words("no call stacks (the innermost function only)");
  } else {
    how.words("call stacks by ").code(cpu.unwinder);
  }
  facts.push_back({"Sampling", std::move(how)});

  const SampleCount all = cpu_sample_total(profile);
  Sentence samples;
  samples.count(all.samples, "sample", "samples").key().words(" (").duration(all.ns)
      .words(wall ? " of wall-clock time" : " of CPU time").words(") on ")
      .count(cpu.threads_sampled, "thread", "threads");
  facts.push_back({"Samples", std::move(samples)});

  std::uint64_t without_stack = 0;
  for (const CpuSample& s : profile.cpu_samples) {
    if (s.stack >= profile.stacks.size() || profile.stacks[s.stack].frames.empty()) ++without_stack;
  }
  Sentence lost;
  if (cpu.samples_dropped == 0 && cpu.truncated_stacks == 0 && without_stack == 0) {
    lost.words("none: every sample was kept with its whole stack");
  } else {
    lost.count(cpu.samples_dropped).words(" dropped (the sample buffer was full), ")
        .count(cpu.truncated_stacks, "stack", "stacks").words(" cut at the depth limit, ")
        .count(without_stack).words(" without a stack");
  }
  facts.push_back({"Samples lost", std::move(lost)});
  return facts;
}

// ---- findings --------------------------------------------------------------------------

namespace {

bool contains_any(std::string_view name, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return name.find(p) != std::string_view::npos; });
}

bool is_allocator(std::string_view name) {
  static constexpr std::array<std::string_view, 9> kExact = {"malloc", "free", "calloc", "realloc", "cfree",
                                                             "_int_malloc", "_int_free", "posix_memalign",
                                                             "aligned_alloc"};
  return std::find(kExact.begin(), kExact.end(), name) != kExact.end() ||
         name.starts_with("operator new") || name.starts_with("operator delete") ||
         contains_any(name, {"malloc_consolidate", "_int_realloc", "tcmalloc::", "je_malloc", "je_free"});
}

Sentence hotspot_suggestion(const Profile& profile, const CpuFunction& fn) {
  const CpuCallers calls = cpu_callers(profile, fn.name);
  const CpuEdge* caller = calls.callers.empty() ? nullptr : &calls.callers.front();
  const std::vector<CpuLine> lines = cpu_function_lines(profile, fn.name);
  Sentence s;
  auto from_caller = [&](Sentence& t) -> Sentence& {
    if (caller == nullptr) return t;
    return t.words(" Most of its samples come through ").function(caller->function).words(" (").share(caller->share)
        .words(").");
  };
  const std::string_view name = fn.name;
  if (fn.function == kNone) {
    s.words("Its code has no symbol");
    if (!fn.module.empty()) s.words(" (in ").code(fn.module).words(")");
    s.words(": build with ").code("-g").words(" and keep the symbol table (do not strip), so that the next "
                                               "profile names the function and its lines.");
    return from_caller(s);
  }
  if (is_allocator(name)) {
    s.words("The time goes to the heap allocator: allocate less often in the code that calls it (reuse buffers "
            "across iterations, ").code("reserve").words(" containers up front, or take blocks from a pool).");
    return from_caller(s);
  }
  if (contains_any(name, {"memcpy", "memmove", "memset"})) {
    s.words("The time goes to copying memory: pass large objects by reference, move instead of copying, and "
            "avoid copying tensors or buffers that could be shared.");
    return from_caller(s);
  }
  if (contains_any(name, {"pthread_mutex", "futex", "lll_lock", "spin_lock", "std::mutex", "sched_yield"})) {
    s.words("Threads wait for a lock here: shorten the critical sections, split the lock, or give each thread "
            "its own data and combine results at the end.");
    return from_caller(s);
  }
  if (!lines.empty()) {
    s.words("Start at its hottest line, ").code(fmt::format("{}:{}", lines.front().file, lines.front().line))
        .words(" (").share(share_of(lines.front().self.samples, fn.self.samples))
        .words(" of its own samples): make that loop cheaper (fewer operations, contiguous memory, let the "
               "compiler vectorize it), or call the function less often.");
  } else {
    s.words("Make it cheaper (fewer operations, contiguous memory, vectorizable loops) or call it less often; "
            "build with ").code("-g").words(" to see which of its lines take the time.");
  }
  return from_caller(s);
}

}  // namespace

std::vector<Bottleneck> cpu_bottlenecks(const Profile& profile, const CpuFindingOptions& options) {
  std::vector<Bottleneck> out;
  if (!profile.cpu.sampled || profile.cpu_samples.size() < options.min_samples) return out;
  const SampleCount all = cpu_sample_total(profile);
  for (const CpuFunction& fn : cpu_functions(profile)) {
    if (!(fn.self_share > options.hotspot_share)) break;  // sorted by self: the rest are below
    Bottleneck b;
    b.kind = BottleneckKind::CpuHotspot;
    b.function = fn.name;
    b.severity = severity_for(fn.self_share, options.hotspot_share);
    b.value = fn.self_share;
    b.time_share = fn.self_share;
    b.threshold = options.hotspot_share;
    b.description.function(fn.name);
    if (!fn.module.empty() && fn.function != kNone) b.description.words(" (").words(fn.module).words(")");
    b.description.words(" was running in ").share(fn.self_share).key().words(" of the ")
        .count(all.samples, "CPU sample", "CPU samples").words(" (").duration(fn.self.ns)
        .words(" of its own; threshold ").share(options.hotspot_share).words(").");
    b.suggestion = hotspot_suggestion(profile, fn);
    out.push_back(std::move(b));
  }
  return out;
}

Sentence no_cpu_bottlenecks(const Profile& profile, const CpuFindingOptions& options) {
  Sentence s;
  if (profile.cpu_samples.size() < options.min_samples) {
    return s.words("Too few CPU samples to judge (").count(profile.cpu_samples.size())
        .words(", at least ").count(options.min_samples).words(" needed): sample longer or at a higher rate.");
  }
  return s.words("No function was running in more than ").share(options.hotspot_share)
      .words(" of the CPU samples: the time is spread out; look at the top functions by total.");
}

}  // namespace nnprof::analysis
