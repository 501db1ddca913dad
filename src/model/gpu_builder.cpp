#include "model/gpu_builder.hpp"

#include <algorithm>
#include <map>
#include <string_view>
#include <tuple>
#include <unordered_map>

#include <fmt/format.h>

#include "model/span_lookup.hpp"

namespace nnprof::model {

namespace {

class GpuBuilder {
 public:
  GpuBuilder(Profile& p, const detail::RawGpu& raw, std::vector<GpuLaunchEvent> launches, std::uint64_t origin,
             const std::function<StringId(std::string_view)>& intern)
      : p_(p), g_(p.gpu), raw_(raw), origin_(origin), intern_(intern) {
    for (const GpuLaunchEvent& e : launches) launch_by_correlation_.emplace(e.correlation_id, e);
    for (const ThreadInfo& t : p.threads) thread_by_tid_.emplace(t.os_tid, t.id);
  }

  std::vector<Diagnostic> build() {
    summary();
    g_.devices = raw_.devices;
    streams();
    api_calls();
    ops();
    syncs();
    memory();
    counters();
    spans_of_launches();
    scope_stats();
    return diagnostics();
  }

 private:
  std::uint64_t session_ns(std::uint64_t monotonic) const { return monotonic > origin_ ? monotonic - origin_ : 0; }

  StringId intern(std::string_view s) { return intern_(s); }

  std::uint32_t thread_of(std::int64_t tid) const {
    auto it = thread_by_tid_.find(tid);
    return it == thread_by_tid_.end() ? kNone : it->second;
  }

  void summary() {
    GpuSummary& s = g_.summary;
    s.traced = true;
    s.status = raw_.status;
    s.clock_source = raw_.clock_source;
    s.cupti_version = raw_.cupti_version;
    s.driver_version = raw_.driver_version;
    s.clock_offset_ns = raw_.clock_offset_ns;
    s.clock_slope = raw_.clock_slope;
    s.clock_uncertainty_ns = raw_.clock_uncertainty_ns;
    s.records_dropped = raw_.dropped;
    s.records_refused = raw_.refused;
    s.records_incomplete = raw_.incomplete;
    s.records_untimed = raw_.untimed;
    s.nvml = !raw_.counters.empty();
  }

  // Streams: every (context, stream) that ran work, with the priority and default flag CUPTI
  // reported for it; numbered by device, context, stream.
  void streams() {
    std::map<std::uint32_t, std::uint32_t> device_of_context;
    for (const detail::RawGpuOp& op : raw_.ops) device_of_context.emplace(op.context, op.device);
    for (const GpuStream& s : raw_.streams)
      if (s.device != kNone) device_of_context.emplace(s.context, s.device);
    std::map<std::pair<std::uint32_t, std::uint32_t>, GpuStream> found;  // (context, stream)
    auto add = [&](std::uint32_t context, std::uint32_t stream) {
      GpuStream& s = found[{context, stream}];
      s.context = context;
      s.stream = stream;
      auto d = device_of_context.find(context);
      s.device = d != device_of_context.end() ? d->second : 0;
    };
    for (const detail::RawGpuOp& op : raw_.ops) add(op.context, op.stream);
    for (const detail::RawGpuSync& s : raw_.syncs)
      if (s.stream != kNone) add(s.context, s.stream);
    for (const GpuStream& r : raw_.streams) {
      auto it = found.find({r.context, r.stream});
      if (it == found.end()) continue;  // a stream that never ran work is no track
      it->second.priority = r.priority;
      it->second.is_default = it->second.is_default || r.is_default;
    }
    std::vector<GpuStream> list;
    for (auto& [key, s] : found) list.push_back(s);
    std::sort(list.begin(), list.end(), [](const GpuStream& a, const GpuStream& b) {
      return std::tie(a.device, a.context, a.stream) < std::tie(b.device, b.context, b.stream);
    });
    for (std::size_t i = 0; i < list.size(); ++i)
      stream_index_[{list[i].context, list[i].stream}] = static_cast<std::uint32_t>(i);
    g_.streams = std::move(list);
  }

  void api_calls() {
    std::vector<const detail::RawGpuApiCall*> sorted;
    for (const detail::RawGpuApiCall& c : raw_.api_calls) sorted.push_back(&c);
    std::stable_sort(sorted.begin(), sorted.end(), [](const auto* a, const auto* b) { return a->start < b->start; });
    std::unordered_map<std::uint32_t, std::pair<std::uint8_t, std::uint64_t>> external;
    for (const detail::RawExternalCorrelation& e : raw_.external) external[e.correlation_id] = {e.kind, e.id};
    for (const detail::RawGpuApiCall* c : sorted) {
      GpuApiCall a;
      a.os_tid = c->os_tid;
      a.thread = thread_of(c->os_tid);
      a.name = intern(c->name);
      a.driver = c->driver;
      a.cbid = c->cbid;
      a.correlation_id = c->correlation_id;
      a.return_value = c->return_value;
      a.start_ns = session_ns(c->start);
      a.end_ns = std::max(a.start_ns, session_ns(c->end));
      if (auto l = launch_by_correlation_.find(c->correlation_id); l != launch_by_correlation_.end()) a.node = l->second.node;
      if (auto e = external.find(c->correlation_id); e != external.end()) {
        a.external_kind = e->second.first;
        a.external_id = e->second.second;
      }
      const auto index = static_cast<std::uint32_t>(g_.api_calls.size());
      // Runtime and driver calls have ids of their own; a runtime call wins where both claim one.
      auto [it, inserted] = api_by_correlation_.try_emplace(a.correlation_id, index);
      if (!inserted && !a.driver) it->second = index;
      g_.api_calls.push_back(a);
    }
  }

  // The launch of the work with this correlation id: the launch record when nnprof saw the
  // call, else the traced API call's thread (a thread nnprof knows) with its scope found by
  // time (spans_of_launches). Work with neither is counted as unmatched.
  GpuLaunch attach(std::uint32_t correlation) {
    GpuLaunch l;
    const auto api = api_by_correlation_.find(correlation);
    if (api != api_by_correlation_.end()) l.api = api->second;
    if (auto it = launch_by_correlation_.find(correlation); it != launch_by_correlation_.end()) {
      l.thread = it->second.thread;
      l.time_ns = it->second.time_ns;
      l.node = it->second.node;
    } else if (api != api_by_correlation_.end()) {
      l.thread = g_.api_calls[api->second].thread;
      l.time_ns = g_.api_calls[api->second].start_ns;
    }
    if (l.thread == kNone) ++g_.summary.unmatched_correlations;
    return l;
  }

  void ops() {
    g_.kernels = raw_.kernels;
    g_.memcpys = raw_.memcpys;
    g_.memsets = raw_.memsets;
    g_.ops.reserve(raw_.ops.size());
    for (const detail::RawGpuOp& r : raw_.ops) {
      GpuOp op;
      op.kind = r.kind;
      op.stream = stream_index_.at({r.context, r.stream});
      std::string name = r.name;
      if (r.kind == GpuOpKind::Memcpy && r.detail < raw_.memcpys.size())
        name = fmt::format("Memcpy {}", to_string(raw_.memcpys[r.detail].kind));
      else if (r.kind == GpuOpKind::Memset)
        name = "Memset";
      op.name = intern(name);
      op.start_ns = session_ns(r.start);
      op.end_ns = std::max(op.start_ns, session_ns(r.end));
      op.correlation_id = r.correlation_id;
      op.launch = attach(r.correlation_id);
      op.detail = r.detail;
      g_.ops.push_back(op);
    }
    std::stable_sort(g_.ops.begin(), g_.ops.end(), [](const GpuOp& a, const GpuOp& b) {
      return std::tie(a.stream, a.start_ns) < std::tie(b.stream, b.start_ns);
    });
  }

  void syncs() {
    for (const detail::RawGpuSync& r : raw_.syncs) {
      GpuSync s;
      s.type = r.type;
      if (r.stream != kNone)
        if (auto it = stream_index_.find({r.context, r.stream}); it != stream_index_.end()) s.stream = it->second;
      s.correlation_id = r.correlation_id;
      s.start_ns = session_ns(r.start);
      s.end_ns = std::max(s.start_ns, session_ns(r.end));
      s.launch = attach(r.correlation_id);
      g_.syncs.push_back(s);
    }
    std::stable_sort(g_.syncs.begin(), g_.syncs.end(),
                     [](const GpuSync& a, const GpuSync& b) { return a.start_ns < b.start_ns; });
  }

  void memory() {
    for (const detail::RawGpuMemory& r : raw_.memory) {
      GpuMemoryEvent e;
      e.time_ns = session_ns(r.time);
      e.device = r.device;
      e.alloc = r.alloc;
      e.kind = r.kind;
      e.async = r.async;
      e.address = r.address;
      e.bytes = r.bytes;
      e.correlation_id = r.correlation_id;
      e.launch = attach(r.correlation_id);
      if (!r.source.empty()) e.source = intern(r.source);
      g_.memory_events.push_back(e);
    }
    std::stable_sort(g_.memory_events.begin(), g_.memory_events.end(),
                     [](const GpuMemoryEvent& a, const GpuMemoryEvent& b) { return a.time_ns < b.time_ns; });
    // Releases of blocks allocated before tracing began cannot be matched.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> live;
    for (const GpuMemoryEvent& e : g_.memory_events) {
      if (e.alloc) {
        live[{e.device, e.address}] = e.bytes;
      } else if (live.erase({e.device, e.address}) == 0) {
        ++g_.summary.untracked_frees;
      }
    }
  }

  void counters() {
    for (GpuCounter c : raw_.counters) {
      for (auto& pt : c.points) pt.first = session_ns(pt.first);
      g_.counters.push_back(std::move(c));
    }
  }

  // Launches known only by their API call's thread and time get the innermost span then, and
  // that span's node; every launch gets its span.
  void spans_of_launches() {
    std::vector<GpuLaunch*> all;
    for (GpuOp& op : g_.ops) all.push_back(&op.launch);
    for (GpuSync& s : g_.syncs) all.push_back(&s.launch);
    for (GpuMemoryEvent& e : g_.memory_events) all.push_back(&e.launch);
    assign_innermost_spans(p_.spans, all);
    for (GpuLaunch* l : all)
      if (l->node == 0 && l->span != kNone) l->node = p_.spans[l->span].node;
  }

  // GPU work per scope name, inclusive: the work launched in a scope or inside it, with nested
  // calls of the same name counted once (as ScopeStats::flops).
  void scope_stats() {
    const std::size_t n = p_.call_tree.size();
    std::vector<GpuScopeStats> self(n);
    auto node_ok = [n](std::uint32_t node) { return node < n; };
    for (const GpuOp& op : g_.ops) {
      if (!node_ok(op.launch.node)) continue;
      GpuScopeStats& s = self[op.launch.node];
      const std::uint64_t d = op.duration_ns();
      switch (op.kind) {
        case GpuOpKind::Kernel:
          ++s.kernels;
          s.kernel_ns += d;
          break;
        case GpuOpKind::Memcpy:
          ++s.memcpys;
          s.memcpy_ns += d;
          if (op.detail < g_.memcpys.size()) s.memcpy_bytes += g_.memcpys[op.detail].bytes;
          break;
        case GpuOpKind::Memset:
          ++s.memsets;
          s.memset_ns += d;
          break;
      }
    }
    for (const GpuMemoryEvent& e : g_.memory_events) {
      if (!node_ok(e.launch.node)) continue;
      GpuScopeStats& s = self[e.launch.node];
      if (e.alloc) {
        s.alloc_bytes += e.bytes;
        ++s.alloc_count;
      } else {
        s.free_bytes += e.bytes;
      }
    }
    std::map<StringId, GpuScopeStats> by_name;
    std::vector<StringId> seen;
    for (std::uint32_t node = 1; node < n; ++node) {
      const GpuScopeStats& s = self[node];
      if (s.kernels + s.memcpys + s.memsets + s.alloc_count == 0 && s.free_bytes == 0) continue;
      seen.clear();
      for (std::uint32_t a = node; a != 0 && a < n; a = p_.call_tree[a].parent) {
        const StringId name = p_.call_tree[a].name;
        if (name == kNone || std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
        seen.push_back(name);
        GpuScopeStats& t = by_name[name];
        t.name = name;
        t.kernels += s.kernels;
        t.kernel_ns += s.kernel_ns;
        t.memcpys += s.memcpys;
        t.memcpy_ns += s.memcpy_ns;
        t.memcpy_bytes += s.memcpy_bytes;
        t.memsets += s.memsets;
        t.memset_ns += s.memset_ns;
        t.alloc_bytes += s.alloc_bytes;
        t.alloc_count += s.alloc_count;
        t.free_bytes += s.free_bytes;
        if (p_.call_tree[a].parent == kNone) break;
      }
    }
    for (auto& [name, s] : by_name) g_.scopes.push_back(s);
    std::stable_sort(g_.scopes.begin(), g_.scopes.end(),
                     [](const GpuScopeStats& a, const GpuScopeStats& b) { return a.gpu_ns() > b.gpu_ns(); });
  }

  std::vector<Diagnostic> diagnostics() {
    std::vector<Diagnostic> out;
    auto add = [&](Severity sev, std::uint64_t count, std::string message) {
      out.push_back(Diagnostic{DiagnosticKind::GpuTracing, sev, kNone, kNone, count, std::move(message)});
    };
    const GpuSummary& s = g_.summary;
    if (s.records_dropped > 0)
      add(Severity::Warning, s.records_dropped,
          fmt::format("{} GPU activity records were dropped by CUPTI (no buffer was free in time): GPU work is "
                      "missing from the timeline; raise CudaProfilerOptions::buffer_bytes",
                      s.records_dropped));
    if (s.records_refused > 0)
      add(Severity::Warning, s.records_refused,
          fmt::format("{} GPU activity records were past the record budget and not kept; raise "
                      "CudaProfilerOptions::max_records or trace a shorter run",
                      s.records_refused));
    if (s.records_incomplete > 0)
      add(Severity::Warning, s.records_incomplete,
          fmt::format("{} GPU activity buffers ended on a record CUPTI had not finished; the records after it are "
                      "missing",
                      s.records_incomplete));
    if (s.records_untimed > 0)
      add(Severity::Info, s.records_untimed,
          fmt::format("{} kernels had no timestamps (the device had no memory left for them) and are left out of "
                      "the timeline",
                      s.records_untimed));
    if (s.unmatched_correlations > 0)
      add(Severity::Info, s.unmatched_correlations,
          fmt::format("{} pieces of GPU work could not be joined to the CUDA call that launched them (launched "
                      "before tracing started, by a thread nnprof did not see, or their launch records were "
                      "dropped at the memory cap); they are in the timeline without a scope",
                      s.unmatched_correlations));
    if (s.untracked_frees > 0)
      add(Severity::Info, s.untracked_frees,
          fmt::format("{} device memory releases were of blocks allocated before GPU tracing started; they are "
                      "left out of the GPU memory peak",
                      s.untracked_frees));
    for (const std::string& w : raw_.warnings) add(Severity::Warning, 0, w);
    return out;
  }

  Profile& p_;
  GpuProfile& g_;
  const detail::RawGpu& raw_;
  const std::uint64_t origin_;
  std::unordered_map<std::uint32_t, GpuLaunchEvent> launch_by_correlation_;
  std::unordered_map<std::int64_t, std::uint32_t> thread_by_tid_;
  const std::function<StringId(std::string_view)>& intern_;
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint32_t> stream_index_;
  std::unordered_map<std::uint32_t, std::uint32_t> api_by_correlation_;
};

}  // namespace

std::vector<Diagnostic> build_gpu(Profile& profile, const detail::RawGpu& raw, std::vector<GpuLaunchEvent> launches,
                                  std::uint64_t monotonic_origin_ns,
                                  const std::function<StringId(std::string_view)>& intern) {
  if (!raw.traced) return {};
  return GpuBuilder(profile, raw, std::move(launches), monotonic_origin_ns, intern).build();
}

}  // namespace nnprof::model
