#include "model/profile_builder.hpp"

#include <algorithm>
#include <map>
#include <utility>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>

#include "model/duration_accumulator.hpp"
#include "model/flow_builder.hpp"
#include "model/gpu_builder.hpp"
#include "model/system_builder.hpp"
#include "model/metric_builder.hpp"

namespace nnprof::model {

namespace {

using detail::RawNode;
using detail::RawSnapshot;
using detail::RawThread;

constexpr std::uint64_t kMinCalibrationNs = 20'000'000;  // below this, the process-wide rate is better

struct StringTable {
  std::vector<std::string>& strings;
  std::unordered_map<std::string, StringId> ids;
  StringId operator()(std::string_view s) {
    auto [it, inserted] = ids.try_emplace(std::string(s), static_cast<StringId>(strings.size()));
    if (inserted) strings.emplace_back(s);
    return it->second;
  }
};

HeapAttribution to_heap(const detail::RawNodeHeap& h) {
  return HeapAttribution{h.alloc_bytes,    h.alloc_count,     h.free_bytes, h.free_count,
                         h.retained_bytes, h.retained_blocks, h.peak_live};
}

void add_heap(HeapAttribution& into, const HeapAttribution& h) {
  into.alloc_bytes += h.alloc_bytes;
  into.alloc_count += h.alloc_count;
  into.free_bytes += h.free_bytes;
  into.free_count += h.free_count;
  into.retained_bytes += h.retained_bytes;
  into.retained_blocks += h.retained_blocks;
  into.peak_live_bytes += h.peak_live_bytes;  // per-thread peaks summed: an upper bound across threads
}

struct NodeAccumulator {
  DurationAccumulator time;
  std::uint64_t self_ticks = 0;
  MemoryAttribution memory;
  HeapAttribution heap;
  double flops = 0.0;
  std::uint64_t bytes = 0;
  std::uint32_t last_thread = kNone;
  std::uint32_t thread_count = 0;
  void add(const RawNode& r, std::uint32_t thread) {
    if (r.count > 0) {
      const double n = static_cast<double>(r.count);
      const double dev_mean = static_cast<double>(r.sum_dev) / n;
      const double m2 = r.sum_dev_sq - static_cast<double>(r.sum_dev) * dev_mean;
      time.add(r.count, r.total, r.min, r.max, static_cast<double>(r.shift) + dev_mean, m2, r.buckets);
    }
    self_ticks += r.self;
    memory.alloc_bytes += r.alloc_bytes;
    memory.alloc_count += r.alloc_count;
    memory.free_bytes += r.free_bytes;
    memory.free_count += r.free_count;
    add_heap(heap, to_heap(r.heap));
    flops += r.flops;
    bytes += r.bytes_moved;
    if (last_thread != thread) {
      last_thread = thread;
      ++thread_count;
    }
  }
};

void add_memory(MemoryAttribution& into, const MemoryAttribution& m) {
  into.alloc_bytes += m.alloc_bytes;
  into.alloc_count += m.alloc_count;
  into.free_bytes += m.free_bytes;
  into.free_count += m.free_count;
}

std::string thread_label(const ThreadInfo& t) {
  return t.name.empty() ? fmt::format("tid {}", t.os_tid) : fmt::format("'{}' (tid {})", t.name, t.os_tid);
}

double mib(std::uint64_t bytes) { return static_cast<double>(bytes) / (1024.0 * 1024.0); }

class Builder {
 public:
  explicit Builder(const RawSnapshot& raw) : raw_(raw), strings_{profile_.strings, {}} {}

  Profile build() {
    calibrate();
    metadata();
    threads();
    merge_trees();
    scope_stats();
    records();
    span_args();
    flows();
    gpu();
    build_system(profile_, raw_.system, cal_.monotonic_origin_ns);
    memory();
    symbolize();
    heap();
    cpu();
    completeness();
    diagnostics();
    build_metrics(raw_, cal_, [this](std::string_view s) { return strings_(s); }, profile_);
    return std::move(profile_);
  }

 private:
  void calibrate() {
    ClockCalibration c = session_calibration(raw_.start, raw_.now, raw_.nominal_ns_per_tick);
    c.unix_origin_ns = raw_.unix_start_ns;
    profile_.meta.clock = c;
    cal_ = c;
  }

  void metadata() {
    const detail::RawHost& h = raw_.host;
    Metadata& m = profile_.meta;
    m.nnprof_version = NNPROF_VERSION_STRING;
    m.hostname = h.hostname;
    m.os = h.os;
    m.cpu_model = h.cpu_model;
    m.logical_cpus = h.logical_cpus;
    m.compiler = h.compiler;
    m.command_line = h.command_line;
    m.pid = h.pid;
    profile_.annotations = raw_.annotations;
    m.duration_ns = raw_.now.monotonic_ns - raw_.start.monotonic_ns;
  }

  void threads() {
    for (const RawThread& t : raw_.threads) {
      ThreadInfo info{t.index, t.os_tid, t.name, t.exited, 0, 0};
      std::uint64_t top_ticks = 0;
      for (std::size_t i = 1; i < t.nodes.size(); ++i) {
        const RawNode& n = t.nodes[i];
        if (internal(n) || (n.parent != 0 && internal(t.nodes[n.parent]))) continue;
        info.scopes_recorded += n.count;
        if (n.depth == 1) top_ticks += n.total;
      }
      info.top_level_ns = cal_.to_ns(top_ticks);
      profile_.threads.push_back(std::move(info));
    }
  }

  bool internal(const RawNode& n) const { return n.site == raw_.internal_site; }

  void merge_trees() {
    accumulators_.emplace_back();
    profile_.call_tree.push_back(CallTreeNode{});  // root
    std::unordered_map<std::uint64_t, std::uint32_t> child_of;  // (merged parent, name) -> merged node
    local_to_merged_.resize(raw_.threads.size());
    for (const RawThread& t : raw_.threads) {
      auto& map = local_to_merged_[t.index];
      map.assign(t.nodes.size(), kNone);
      if (!t.nodes.empty()) {
        map[0] = 0;
        add_heap(profile_.call_tree[0].heap, to_heap(t.nodes[0].heap));  // allocations outside any scope
        profile_.call_tree[0].flops += t.nodes[0].flops;                  // and work
        profile_.call_tree[0].bytes += t.nodes[0].bytes_moved;
      }
      for (std::size_t i = 1; i < t.nodes.size(); ++i) {
        const RawNode& n = t.nodes[i];
        const std::uint32_t parent = n.parent < i ? map[n.parent] : kNone;
        if (parent == kNone || internal(n)) continue;  // excluded with all its descendants
        const StringId name = strings_(n.site->name);
        const std::uint64_t key = (std::uint64_t{parent} << 32) | name;
        auto [it, inserted] = child_of.try_emplace(key, static_cast<std::uint32_t>(profile_.call_tree.size()));
        if (inserted) {
          CallTreeNode node;
          node.id = it->second;
          node.parent = parent;
          node.name = name;
          node.depth = profile_.call_tree[parent].depth + 1;
          profile_.call_tree.push_back(std::move(node));
          profile_.call_tree[parent].children.push_back(it->second);
          accumulators_.emplace_back();
        }
        map[i] = it->second;
        accumulators_[it->second].add(n, t.index);
      }
    }
    const double k = cal_.ns_per_tick;
    for (std::size_t i = 1; i < profile_.call_tree.size(); ++i) {
      CallTreeNode& node = profile_.call_tree[i];
      const NodeAccumulator& a = accumulators_[i];
      node.time = a.time.to_stats(k);
      node.self_ns = cal_.to_ns(a.self_ticks);
      node.thread_count = a.thread_count;
      node.memory = a.memory;
      node.heap = a.heap;
      node.flops = a.flops;
      node.bytes = a.bytes;
    }
    for (CallTreeNode& node : profile_.call_tree) {
      std::sort(node.children.begin(), node.children.end(), [&](std::uint32_t a, std::uint32_t b) {
        const auto& x = profile_.call_tree[a];
        const auto& y = profile_.call_tree[b];
        if (x.time.sum_ns != y.time.sum_ns) return x.time.sum_ns > y.time.sum_ns;
        return profile_.strings[x.name] < profile_.strings[y.name];
      });
    }
  }

  void scope_stats() {
    struct PerName {
      DurationAccumulator time;
      std::uint64_t total_ticks = 0, self_ticks = 0;
      MemoryAttribution memory;
      HeapAttribution heap;
      double flops = 0.0;
      std::uint64_t bytes = 0;
      std::unordered_set<std::uint32_t> threads;
    };
    std::unordered_map<StringId, PerName> by_name;
    const auto& tree = profile_.call_tree;
    // Work declared in each node's subtree; a child's id is always above its parent's.
    std::vector<double> subtree_flops(tree.size());
    std::vector<std::uint64_t> subtree_bytes(tree.size());
    for (std::size_t i = tree.size(); i-- > 1;) {
      subtree_flops[i] += tree[i].flops;
      subtree_bytes[i] += tree[i].bytes;
      subtree_flops[tree[i].parent] += subtree_flops[i];
      subtree_bytes[tree[i].parent] += subtree_bytes[i];
    }
    for (std::size_t i = 1; i < tree.size(); ++i) {
      const CallTreeNode& node = tree[i];
      PerName& p = by_name[node.name];
      const NodeAccumulator& a = accumulators_[i];
      p.time.merge(a.time);
      p.self_ticks += a.self_ticks;
      add_memory(p.memory, a.memory);
      add_heap(p.heap, a.heap);
      // Inclusive time counts a recursive call only at its outermost level.
      bool nested = false;
      for (std::uint32_t up = node.parent; up != 0 && up != kNone; up = tree[up].parent)
        if (tree[up].name == node.name) {
          nested = true;
          break;
        }
      if (!nested) {
        p.total_ticks += a.time.sum_ticks();
        p.flops += subtree_flops[i];
        p.bytes += subtree_bytes[i];
      }
    }
    // Distinct threads per name, from the per-thread trees.
    for (const RawThread& t : raw_.threads) {
      const auto& map = local_to_merged_[t.index];
      for (std::size_t i = 1; i < t.nodes.size(); ++i)
        if (map[i] != kNone && t.nodes[i].count > 0) by_name[tree[map[i]].name].threads.insert(t.index);
    }
    std::unordered_map<std::string_view, std::uint64_t> items;
    for (const auto& c : raw_.counters)
      if (c.items > 0) items[c.name] += c.items;
    const double k = cal_.ns_per_tick;
    for (auto& [name, p] : by_name) {
      if (p.time.count() == 0) continue;  // only ever seen open: nothing to report yet
      ScopeStats s;
      s.name = name;
      s.time = p.time.to_stats(k);
      s.total_ns = cal_.to_ns(p.total_ticks);
      s.self_ns = cal_.to_ns(p.self_ticks);
      s.thread_count = static_cast<std::uint32_t>(p.threads.size());
      s.memory = p.memory;
      s.heap = p.heap;
      s.flops = p.flops;
      s.bytes = p.bytes;
      if (auto it = items.find(profile_.strings[name]); it != items.end()) s.items = it->second;
      profile_.scopes.push_back(s);
    }
    std::sort(profile_.scopes.begin(), profile_.scopes.end(), [&](const ScopeStats& a, const ScopeStats& b) {
      if (a.total_ns != b.total_ns) return a.total_ns > b.total_ns;
      return profile_.strings[a.name] < profile_.strings[b.name];
    });
  }

  void records() {
    counter_index_.assign(raw_.counters.size(), kNone);
    for (std::size_t i = 0; i < raw_.counters.size(); ++i) {
      const auto& c = raw_.counters[i];
      if (c.alloc_count + c.free_count == 0) continue;
      counter_index_[i] = static_cast<std::uint32_t>(profile_.memory_counters.size());
      profile_.memory_counters.push_back(MemoryCounter{strings_(c.name), c.current, c.peak, c.alloc_bytes,
                                                       c.freed_bytes, c.alloc_count, c.free_count, c.largest_alloc});
    }
    for (const RawThread& t : raw_.threads) {
      const auto& map = local_to_merged_[t.index];
      for (const detail::Record& r : t.records) {
        if (r.kind == detail::RecordKind::Span) {
          // A node created after the snapshot read this thread's tree is not mapped yet.
          if (r.ref >= map.size() || map[r.ref] == kNone) continue;
          const CallTreeNode& node = profile_.call_tree[map[r.ref]];
          profile_.spans.push_back(Span{t.index, node.name, node.id, node.depth, cal_.since_origin_ns(r.t0),
                                        cal_.since_origin_ns(r.t1)});
        } else if (r.kind == detail::RecordKind::GpuLaunch) {
          gpu_launches_.push_back(GpuLaunchEvent{t.index, cal_.since_origin_ns(r.t0), merged_node(t.index, r.ref),
                                                 detail::gpu_launch_correlation(r.t1)});
        } else if (detail::is_flow(r.kind)) {
          flow_events_.push_back(FlowEvent{t.index, r.kind, cal_.since_origin_ns(r.t0), merged_node(t.index, r.ref), r.t1});
        } else if ((r.kind == detail::RecordKind::MemoryAlloc || r.kind == detail::RecordKind::MemoryFree) &&
                   r.ref < counter_index_.size() && counter_index_[r.ref] != kNone) {
          const auto bytes = static_cast<std::int64_t>(r.t1);
          profile_.memory_events.push_back(MemoryEvent{cal_.since_origin_ns(r.t0), t.index, counter_index_[r.ref],
                                                       r.kind == detail::RecordKind::MemoryAlloc ? bytes : -bytes});
        }
      }
    }
    std::sort(profile_.spans.begin(), profile_.spans.end(), [](const Span& a, const Span& b) {
      if (a.thread != b.thread) return a.thread < b.thread;
      if (a.start_ns != b.start_ns) return a.start_ns < b.start_ns;
      return a.depth < b.depth;
    });
    std::stable_sort(profile_.memory_events.begin(), profile_.memory_events.end(),
                     [](const MemoryEvent& a, const MemoryEvent& b) { return a.time_ns < b.time_ns; });
  }

  // Each argument joins the span its thread wrote with the same node and start tick; one whose
  // span was not kept (memory cap, flight recorder) is counted, not guessed at.
  void span_args() {
    std::uint64_t unmatched = 0, dropped = 0;
    for (const RawThread& t : raw_.threads) {
      dropped += t.span_args_dropped;
      if (t.span_args.empty()) continue;
      const auto& map = local_to_merged_[t.index];
      // This thread's spans by (node, start), sorted for binary search: they are sorted by
      // thread, so its range is one run.
      const auto first = std::lower_bound(profile_.spans.begin(), profile_.spans.end(), t.index,
                                          [](const Span& s, std::uint32_t thread) { return s.thread < thread; });
      struct Start {
        std::uint32_t node;
        std::uint64_t start_ns;
        std::uint32_t span;
      };
      std::vector<Start> by_start;
      for (auto it = first; it != profile_.spans.end() && it->thread == t.index; ++it)
        by_start.push_back({it->node, it->start_ns, static_cast<std::uint32_t>(it - profile_.spans.begin())});
      const auto before = [](const Start& a, const Start& b) {
        return a.node != b.node ? a.node < b.node : a.start_ns < b.start_ns;
      };
      std::sort(by_start.begin(), by_start.end(), before);
      const auto text = [&](std::uint32_t id) -> const std::string& {
        static const std::string none;
        return id < t.arg_strings.size() ? t.arg_strings[id] : none;
      };
      // A span's arguments come in batches (an operator's start attaches three to five at
      // once): the span found for the previous argument is tried first.
      std::uint32_t last_node = kNone;
      std::uint64_t last_ticks = 0;
      std::uint32_t last_span = kNone;
      for (const detail::RawSpanArg& a : t.span_args) {
        std::uint32_t found = kNone;
        if (a.node == last_node && a.start_ticks == last_ticks) {
          found = last_span;
        } else {
          const bool mapped = a.node < map.size() && map[a.node] != kNone;
          const Start wanted{mapped ? map[a.node] : 0, cal_.since_origin_ns(a.start_ticks), 0};
          const auto span =
              mapped ? std::lower_bound(by_start.begin(), by_start.end(), wanted, before) : by_start.end();
          if (span != by_start.end() && span->node == wanted.node && span->start_ns == wanted.start_ns)
            found = span->span;
          last_node = a.node;
          last_ticks = a.start_ticks;
          last_span = found;
        }
        if (found == kNone) {
          ++unmatched;
          continue;
        }
        SpanArg arg;
        arg.span = found;
        arg.key = text(a.key);
        arg.type = static_cast<SpanArg::Type>(a.type);
        if (a.type == detail::ArgValue::Type::String) arg.string_value = text(a.text);
        if (a.type == detail::ArgValue::Type::Int) arg.int_value = a.integer;
        if (a.type == detail::ArgValue::Type::Real) arg.real_value = a.real;
        profile_.span_args.push_back(std::move(arg));
      }
    }
    // In span order, each span's in the order attached. A thread's arguments are mostly in
    // order already (an operator's end arguments follow its children's), and sorting the
    // SpanArgs themselves would move their strings at every step: sort (span, position)
    // keys, then move each argument once.
    if (!std::is_sorted(profile_.span_args.begin(), profile_.span_args.end(),
                        [](const SpanArg& a, const SpanArg& b) { return a.span < b.span; })) {
      // A counting sort by span (stable: each span's arguments stay in the order attached),
      // each argument moved once.
      std::vector<std::uint32_t> first(profile_.spans.size() + 1, 0);
      for (const SpanArg& a : profile_.span_args) ++first[a.span + 1];
      for (std::size_t i = 1; i < first.size(); ++i) first[i] += first[i - 1];
      std::vector<SpanArg> sorted(profile_.span_args.size());
      for (SpanArg& a : profile_.span_args) sorted[first[a.span]++] = std::move(a);
      profile_.span_args = std::move(sorted);
    }
    if (dropped + unmatched > 0)
      add(DiagnosticKind::SpanArgsDropped, Severity::Info, kNone, kNone, dropped + unmatched,
          fmt::format("{} span arguments are not in the profile: {} past the limit of {} per thread, {} whose span "
                      "was not kept (memory cap or flight recorder) or is still open.",
                      dropped + unmatched, dropped, detail::kMaxSpanArgsPerThread, unmatched));
  }

  // Dependencies between threads (nnprof/flow.hpp), once the spans are final.
  void flows() {
    std::uint64_t lost = raw_.flows_overwritten;
    for (const RawThread& t : raw_.threads) lost += t.dropped_flows;
    for (Diagnostic& d : build_flows(profile_, std::move(flow_events_), lost)) profile_.diagnostics.push_back(std::move(d));
  }

  // GPU work (src/collect/gpu), joined to its launching scopes once the spans are final.
  void gpu() {
    const auto intern = [this](std::string_view s) { return strings_(s); };
    for (Diagnostic& d : build_gpu(profile_, raw_.gpu, std::move(gpu_launches_), cal_.monotonic_origin_ns, intern))
      profile_.diagnostics.push_back(std::move(d));
  }

  void memory() {
    profile_.memory.current_bytes = raw_.memory_current;
    profile_.memory.peak_bytes = raw_.memory_peak;
    profile_.memory.peak_time_ns = raw_.memory_peak ? cal_.since_origin_ns(raw_.memory_peak_ticks) : 0;
  }

  std::uint32_t merged_node(std::uint32_t thread, std::uint32_t node) const {
    if (thread >= local_to_merged_.size()) return 0;
    const auto& map = local_to_merged_[thread];
    return node < map.size() && map[node] != kNone ? map[node] : 0;
  }

  void heap() {
    const detail::RawHeap& h = raw_.heap;
    if (!h.tracked) return;
    HeapSummary& s = profile_.heap;
    s.tracked = true;
    s.source = h.source;
    for (const RawThread& t : raw_.threads)
      for (const RawNode& n : t.nodes) {
        s.alloc_bytes += n.heap.alloc_bytes;
        s.alloc_count += n.heap.alloc_count;
        s.free_bytes += n.heap.free_bytes;
        s.free_count += n.heap.free_count;
      }
    s.current_bytes = h.current_bytes;
    s.current_blocks = h.current_blocks;
    s.peak_bytes = h.peak_bytes;
    // A node's or a name's peak adds the peaks of its threads (and a name's, of its call
    // paths), an upper bound that need not have been live at once; no part of the heap can
    // have held more than the whole heap at its peak, so that bound is clamped there.
    for (CallTreeNode& node : profile_.call_tree)
      node.heap.peak_live_bytes = std::min(node.heap.peak_live_bytes, h.peak_bytes);
    for (ScopeStats& scope : profile_.scopes) scope.heap.peak_live_bytes = std::min(scope.heap.peak_live_bytes, h.peak_bytes);
    s.peak_time_ns = h.peak_ticks != 0 ? cal_.since_origin_ns(h.peak_ticks) : 0;
    s.peak_thread = h.peak_thread < raw_.threads.size() ? h.peak_thread : kNone;
    s.peak_node = s.peak_thread != kNone ? merged_node(h.peak_thread, h.peak_node) : 0;
    s.peak_resolution_bytes = h.peak_resolution_bytes;
    s.untracked_frees = h.untracked_frees;
    s.untracked_allocs = h.untracked_allocs;
    s.largest_alloc_bytes = h.largest_alloc_bytes;
    s.leaked_bytes = h.leaked_bytes;
    s.leaked_blocks = h.leaked_blocks;
    s.reachable_bytes = h.reachable_bytes;
    s.reachable_blocks = h.reachable_blocks;
    s.reachability_checked = h.reachability_checked;
    s.stack_sample_bytes = h.stack_sample_bytes;
    s.sample_interval_ns = h.interval_ns;
    s.rss_initial_bytes = h.rss_initial;
    s.rss_peak_bytes = h.rss_peak;
    s.rss_final_bytes = h.rss_final;
    for (const detail::RawHeapSample& x : h.samples)
      profile_.heap_samples.push_back(HeapSample{cal_.since_origin_ns(x.ticks), x.heap_bytes, x.rss_bytes, x.rss_peak_bytes});
    std::sort(profile_.heap_samples.begin(), profile_.heap_samples.end(),
              [](const HeapSample& a, const HeapSample& b) { return a.time_ns < b.time_ns; });

    std::unordered_map<std::uint32_t, std::uint32_t> stack_of;  // raw id -> index in profile stacks
    for (const detail::RawLeakGroup& g : h.leaks) {
      LeakSite site;
      site.node = merged_node(g.thread, g.node);
      // The function that called malloc: the innermost of the frames at its return address.
      site.caller = g.caller != 0 ? frames_at(g.caller, true).front() : kNone;
      if (g.stack != 0 && g.stack <= h.stacks.size()) {
        auto [it, inserted] = stack_of.try_emplace(g.stack, static_cast<std::uint32_t>(profile_.stacks.size()));
        if (inserted) profile_.stacks.push_back(make_stack(h.stacks[g.stack - 1], true));
        site.stack = it->second;
      }
      site.reachable = g.reachable;
      site.blocks = g.blocks;
      site.bytes = g.bytes;
      profile_.leaks.push_back(site);
    }
    // Sites that differ only in their sampled stack show up as one row each; that is the point.
    for (const std::string& w : h.warnings)
      add(DiagnosticKind::HeapTracking, Severity::Warning, kNone, kNone, 1, "Heap tracking: " + w + ".");
  }

  // Every code address the profile refers to, with the symbols src/collect found for it: heap
  // stacks hold return addresses (looked up one byte earlier, in the call instruction), CPU
  // stacks code addresses already adjusted by the sampler. An address gives one frame per
  // function inlined there, innermost first, then the function that holds the code. An
  // address without a symbol (a snapshot nobody symbolized) gives one frame without a name.
  void symbolize() {
    const detail::StackAddresses addresses = detail::stack_addresses(raw_);
    const detail::Symbol unresolved;
    for (const bool return_addresses : {true, false}) {
      const std::vector<std::uintptr_t>& list = return_addresses ? addresses.returns : addresses.code;
      const auto& table = return_addresses ? raw_.symbols.at_return_address : raw_.symbols.at_code_address;
      for (const std::uintptr_t address : list) {
        const auto found = table.find(address);
        const detail::Symbol& sym = found != table.end() ? found->second : unresolved;
        const StringId module = sym.module.empty() ? kNone : strings_(sym.module);
        auto text = [&](const std::string& v) { return v.empty() ? kNone : strings_(v); };
        std::vector<std::uint32_t>& chain = frames_of_[{address, return_addresses}];
        for (const detail::InlinedCall& in : sym.inlined) {
          chain.push_back(static_cast<std::uint32_t>(profile_.frames.size()));
          profile_.frames.push_back(
              StackFrame{address, text(in.function), text(in.file), in.line, module, sym.module_offset, true});
        }
        chain.push_back(static_cast<std::uint32_t>(profile_.frames.size()));
        profile_.frames.push_back(
            StackFrame{address, text(sym.function), text(sym.file), sym.line, module, sym.module_offset, false});
      }
    }
  }

  const std::vector<std::uint32_t>& frames_at(std::uintptr_t address, bool return_address) const {
    return frames_of_.at({address, return_address});
  }

  CallStack make_stack(const std::vector<std::uintptr_t>& addresses, bool return_addresses) const {
    CallStack cs;
    for (std::uintptr_t pc : addresses) {
      const auto& chain = frames_at(pc, return_addresses);
      cs.frames.insert(cs.frames.end(), chain.begin(), chain.end());
    }
    return cs;
  }

  void cpu() {
    const detail::RawCpu& c = raw_.cpu;
    if (!c.sampled) return;
    CpuProfileSummary& s = profile_.cpu;
    s.sampled = true;
    s.mode = c.mode;
    s.mechanism = c.mechanism;
    s.unwinder = c.unwinder;
    s.requested_hz = c.requested_hz;
    s.period_ns = c.period_ns;
    s.samples = c.samples.size();
    s.samples_dropped = c.dropped;
    s.truncated_stacks = c.truncated;
    s.threads_sampled = c.threads_sampled;

    // Sampled threads that never recorded a scope join the profile's threads.
    std::unordered_map<std::int64_t, std::uint32_t> thread_of;
    for (const ThreadInfo& t : profile_.threads) thread_of.try_emplace(t.os_tid, t.id);
    std::unordered_map<std::int64_t, std::string> names(c.thread_names.begin(), c.thread_names.end());
    auto thread_index = [&](std::int64_t tid) {
      auto [it, inserted] = thread_of.try_emplace(tid, static_cast<std::uint32_t>(profile_.threads.size()));
      if (inserted) {
        ThreadInfo info;
        info.id = it->second;
        info.os_tid = tid;
        if (auto n = names.find(tid); n != names.end()) info.name = n->second;
        info.exited = std::binary_search(raw_.host.exited_threads.begin(), raw_.host.exited_threads.end(), tid);
        profile_.threads.push_back(std::move(info));
      }
      return it->second;
    };

    std::unordered_map<std::uint32_t, std::uint32_t> stack_of;  // raw id -> index in profile stacks
    std::vector<std::size_t> scope_by_time;  // kernel-taken samples: their scope comes from the spans
    profile_.cpu_samples.reserve(c.samples.size());
    for (const detail::RawCpuSample& r : c.samples) {
      CpuSample x;
      x.thread = thread_index(r.tid);
      x.weight_ns = r.weight_ns;
      if (r.monotonic_ns != 0) {
        x.time_ns = r.monotonic_ns > cal_.monotonic_origin_ns ? r.monotonic_ns - cal_.monotonic_origin_ns : 0;
        scope_by_time.push_back(profile_.cpu_samples.size());
      } else {
        x.time_ns = cal_.since_origin_ns(r.ticks);
        x.node = r.node_thread < raw_.threads.size() ? merged_node(r.node_thread, r.node) : 0;
      }
      if (r.stack != 0 && r.stack <= c.stacks.size()) {
        auto [it, inserted] = stack_of.try_emplace(r.stack, static_cast<std::uint32_t>(profile_.stacks.size()));
        if (inserted) profile_.stacks.push_back(make_stack(c.stacks[r.stack - 1], false));
        x.stack = it->second;
      }
      profile_.cpu_samples.push_back(x);
    }
    scopes_from_spans(scope_by_time);
    std::stable_sort(profile_.cpu_samples.begin(), profile_.cpu_samples.end(),
                     [](const CpuSample& a, const CpuSample& b) { return a.time_ns < b.time_ns; });
    for (const std::string& w : c.warnings)
      add(DiagnosticKind::CpuSampling, Severity::Warning, kNone, kNone, 1, "CPU sampling: " + w + ".");
  }

  /// Gives each sample in `which` the innermost span of its thread open at its time: one
  /// sweep per thread over its spans (sorted by start, parents first) and its samples by time.
  void scopes_from_spans(std::vector<std::size_t> which) {
    if (which.empty()) return;
    auto& samples = profile_.cpu_samples;
    std::sort(which.begin(), which.end(), [&](std::size_t a, std::size_t b) {
      if (samples[a].thread != samples[b].thread) return samples[a].thread < samples[b].thread;
      return samples[a].time_ns < samples[b].time_ns;
    });
    const auto& spans = profile_.spans;  // sorted by thread, start, depth (records())
    std::vector<const Span*> open;
    std::size_t next = 0;
    std::uint32_t thread = kNone;
    std::uint64_t without_scope = 0;
    for (std::size_t i : which) {
      CpuSample& x = samples[i];
      if (x.thread != thread) {
        thread = x.thread;
        open.clear();
        next = static_cast<std::size_t>(
            std::lower_bound(spans.begin(), spans.end(), thread, [](const Span& s, std::uint32_t t) { return s.thread < t; }) -
            spans.begin());
      }
      for (; next < spans.size() && spans[next].thread == thread && spans[next].start_ns <= x.time_ns; ++next) {
        while (!open.empty() && open.back()->end_ns <= spans[next].start_ns) open.pop_back();
        open.push_back(&spans[next]);
      }
      while (!open.empty() && open.back()->end_ns <= x.time_ns) open.pop_back();
      x.node = open.empty() ? 0 : open.back()->node;
      without_scope += open.empty();
    }
    bool has_scopes = false;
    std::uint64_t spans_dropped = raw_.spans_overwritten;
    for (const RawThread& t : raw_.threads) {
      has_scopes = has_scopes || t.nodes.size() > 1;
      spans_dropped += t.dropped_spans;
    }
    if (has_scopes && !raw_.keep_spans)
      add(DiagnosticKind::CpuSampling, Severity::Warning, kNone, kNone, 1,
          "CPU sampling: the kernel walked the stacks of these samples, so their scope is found from the spans, which "
          "this session did not keep (ProfilerOptions::record_spans = false): no sample has a scope. Keep spans, or "
          "sample with Unwinder::Dwarf (nnprof record --unwind dwarf) to read the scope in the signal handler.");
    else if (has_scopes && without_scope > 0 && spans_dropped > 0)
      add(DiagnosticKind::CpuSampling, Severity::Info, kNone, kNone, 1,
          fmt::format("CPU sampling: {} samples taken by the kernel have no scope; some fell where spans were dropped "
                      "or overwritten (the span buffer's cap), so their scope is unknown.",
                      without_scope));
  }

  void completeness() {
    Completeness& c = profile_.completeness;
    for (const RawThread& t : raw_.threads) {
      const auto& map = local_to_merged_[t.index];
      for (std::size_t i = 1; i < t.nodes.size(); ++i)
        if (map[i] != kNone) c.scopes_recorded += t.nodes[i].count;
      c.spans_dropped += t.dropped_spans;
      c.events_dropped += t.dropped_events;
    }
    c.spans_kept = profile_.spans.size();
    c.spans_overwritten = raw_.spans_overwritten;
    c.events_dropped += raw_.events_overwritten;
    c.spans_enabled = raw_.keep_spans;
    c.buffer_policy = raw_.flight_recorder ? "flight-recorder" : "keep-first";
    c.memory_cap_bytes = raw_.memory_cap_bytes;
    c.hot_path_allocations = raw_.hot_path_chunks;
    c.overhead_per_scope_ns = raw_.overhead_ticks_per_scope * cal_.ns_per_tick;
    c.overhead_total_ns = static_cast<std::uint64_t>(c.overhead_per_scope_ns * static_cast<double>(c.scopes_recorded));
  }

  void add(DiagnosticKind kind, Severity sev, std::uint32_t thread, StringId name, std::uint64_t count,
           std::string message) {
    profile_.diagnostics.push_back(Diagnostic{kind, sev, thread, name, count, std::move(message)});
  }

  void diagnostics() {
    const Completeness& c = profile_.completeness;
    if (c.spans_dropped > 0) {
      const double share = c.scopes_recorded ? 100.0 * static_cast<double>(c.spans_dropped) /
                                                   static_cast<double>(c.scopes_recorded)
                                             : 0.0;
      add(DiagnosticKind::SpansDropped, Severity::Warning, kNone, kNone, c.spans_dropped,
          raw_.flight_recorder
              ? fmt::format("{} spans ({:.1f}% of closed scopes) were dropped because recording threads ran out "
                            "of free buffers faster than they were recycled. Statistics and the call tree are "
                            "complete; the timeline has gaps.",
                            c.spans_dropped, share)
              : fmt::format("{} spans ({:.1f}% of closed scopes) were dropped: the span buffers reached their "
                            "memory cap of {:.0f} MiB (policy keep-first), so the timeline ends early. "
                            "Statistics and the call tree are complete. Raise the cap "
                            "(ProfilerOptions::memory_cap_bytes, NNPROF_MEMORY_CAP_MB) or use the "
                            "flight-recorder policy to keep the most recent spans instead.",
                            c.spans_dropped, share, mib(c.memory_cap_bytes)));
    }
    if (c.spans_overwritten > 0)
      add(DiagnosticKind::SpansOverwritten, Severity::Info, kNone, kNone, c.spans_overwritten,
          fmt::format("The flight recorder overwrote the {} oldest spans to stay within {:.0f} MiB; the "
                      "timeline covers only the most recent part of the run. Statistics are complete.",
                      c.spans_overwritten, mib(c.memory_cap_bytes)));
    if (c.events_dropped > 0)
      add(DiagnosticKind::EventsDropped, Severity::Warning, kNone, kNone, c.events_dropped,
          fmt::format("{} memory events were lost to the buffer cap; the memory timeline is incomplete, "
                      "while counter totals and peaks are exact.",
                      c.events_dropped));

    // Which names are open on which thread: tells a stop on the wrong thread from a stray stop.
    std::unordered_map<std::string_view, std::uint32_t> open_on;
    for (const RawThread& t : raw_.threads)
      for (std::uint32_t idx : t.open_nodes)
        if (idx < t.nodes.size() && !internal(t.nodes[idx])) open_on.try_emplace(t.nodes[idx].site->name, t.index);

    for (const RawThread& t : raw_.threads) {
      const ThreadInfo& ti = profile_.threads[t.index];
      for (const detail::RawThreadEvent& e : t.events) {
        const std::string_view name = e.site ? e.site->name : "";
        const StringId sid = strings_(name);
        switch (e.kind) {
          case detail::ThreadEventKind::StopWithoutStart: {
            auto it = open_on.find(name);
            if (it != open_on.end() && it->second != t.index) {
              add(DiagnosticKind::StopOnOtherThread, Severity::Warning, t.index, sid, e.count,
                  fmt::format("stop(\"{}\") was called {} time(s) on thread {}, but \"{}\" was started on thread "
                              "{} and is still open there. A scope must start and stop on the same thread; "
                              "the stop was ignored.",
                              name, e.count, thread_label(ti), name, thread_label(profile_.threads[it->second])));
            } else {
              add(DiagnosticKind::StopWithoutStart, Severity::Warning, t.index, sid, e.count,
                  fmt::format("stop(\"{}\") was called {} time(s) on thread {} with no open scope of that name "
                              "and was ignored. Look for a missing start(\"{}\") or a stop called twice.",
                              name, e.count, thread_label(ti), name));
            }
            break;
          }
          case detail::ThreadEventKind::ImplicitlyClosed:
            add(DiagnosticKind::ImplicitlyClosed, Severity::Warning, t.index, sid, e.count,
                fmt::format("\"{}\" was still open {} time(s) on thread {} when an enclosing scope stopped, "
                            "and was closed at that moment. A stop(\"{}\") is probably missing.",
                            name, e.count, thread_label(ti), name));
            break;
          case detail::ThreadEventKind::NegativeMemory:
            add(DiagnosticKind::NegativeMemory, Severity::Warning, t.index, sid, e.count,
                fmt::format("record_free(\"{}\") released more bytes than were recorded as allocated ({} time(s) "
                            "on thread {}): a record_alloc is missing or the sizes differ.",
                            name, e.count, thread_label(ti)));
            break;
        }
      }
      for (std::uint32_t idx : t.open_nodes) {
        const auto& map = local_to_merged_[t.index];
        if (idx >= map.size() || map[idx] == kNone) continue;
        const CallTreeNode& node = profile_.call_tree[map[idx]];
        add(DiagnosticKind::UnclosedScope, t.exited ? Severity::Warning : Severity::Info, t.index, node.name, 1,
            t.exited ? fmt::format("\"{}\" was never stopped: thread {} exited with it open, so that call is "
                                   "not in the statistics. A stop(\"{}\") is missing on some path.",
                                   profile_.node_path(node.id), thread_label(ti), profile_.str(node.name))
                     : fmt::format("\"{}\" was still open on thread {} when this profile was taken; its current "
                                   "call is not in the statistics yet.",
                                   profile_.node_path(node.id), thread_label(ti)));
      }
      if (t.too_deep > 0)
        add(DiagnosticKind::TooDeep, Severity::Warning, t.index, kNone, t.too_deep,
            fmt::format("{} scopes on thread {} were nested deeper than {} levels and were not recorded "
                        "individually: their time is inside the deepest recorded scope (unbounded recursion?).",
                        t.too_deep, thread_label(ti), detail::kMaxDepth));
      if (t.tree_full > 0)
        add(DiagnosticKind::CallTreeFull, Severity::Warning, t.index, kNone, t.tree_full,
            fmt::format("Thread {} reached the limit of 65,536 distinct call paths; {} scopes on new paths were "
                        "not recorded. Names built at run time (with ids or sizes in them) multiply paths.",
                        thread_label(ti), t.tree_full));
    }

    const std::uint64_t instrumented = profile_.instrumented_ns();
    if (c.overhead_total_ns > 0 && instrumented > 0) {
      const double share = static_cast<double>(c.overhead_total_ns) / static_cast<double>(instrumented);
      if (share >= 0.05)
        add(DiagnosticKind::InstrumentationOverhead, Severity::Warning, kNone, kNone, c.scopes_recorded,
            fmt::format("Instrumentation cost about {:.0f} ns per scope; the {} scopes recorded add about {:.1f}% "
                        "to the instrumented time. Parents of many short scopes look slower than they are: "
                        "remove scopes from the innermost loops or use NNPROF_ENABLED=0 there.",
                        c.overhead_per_scope_ns, c.scopes_recorded, 100.0 * share));
    }
  }

  const RawSnapshot& raw_;
  Profile profile_;
  StringTable strings_;
  ClockCalibration cal_;
  std::vector<NodeAccumulator> accumulators_;
  std::vector<std::vector<std::uint32_t>> local_to_merged_;
  std::vector<std::uint32_t> counter_index_;
  std::vector<FlowEvent> flow_events_;
  std::vector<GpuLaunchEvent> gpu_launches_;
  struct AddressKeyHash {
    std::size_t operator()(const std::pair<std::uintptr_t, bool>& k) const noexcept {
      return std::hash<std::uintptr_t>{}(k.first * 2 + (k.second ? 1 : 0));
    }
  };
  std::unordered_map<std::pair<std::uintptr_t, bool>, std::vector<std::uint32_t>, AddressKeyHash> frames_of_;
};

}  // namespace

Profile build_profile(const RawSnapshot& raw) { return Builder(raw).build(); }

ClockCalibration session_calibration(const ClockPair& start, const ClockPair& now, double nominal_ns_per_tick) {
  ClockCalibration c = clock::calibrate(start, now);
  if (now.monotonic_ns - start.monotonic_ns < kMinCalibrationNs && c.source == "tsc") {
    c.ns_per_tick = nominal_ns_per_tick;
    c.relative_error = 1e-5;
  }
  return c;
}

}  // namespace nnprof::model
