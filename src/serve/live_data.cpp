#include "serve/live_data.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "analysis/call_tree.hpp"
#include "io/collapsed_stacks.hpp"
#include "render/sentence_markup.hpp"
#include "report/report_data.hpp"
#include "report/utf8.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/error.hpp"
#include "nnprof/trends.hpp"

namespace nnprof::serve {

using nlohmann::json;

namespace {

constexpr double kNs = 1e-9;

// JSON has no NaN: a value not read is null.
json number(double v) { return std::isfinite(v) ? json(v) : json(nullptr); }

// Indices 0..n-1 thinned to at most `limit`, always keeping the last (the newest value).
std::vector<std::size_t> thinned(std::size_t n, std::size_t limit) {
  std::vector<std::size_t> keep;
  if (n == 0) return keep;
  const std::size_t step = n <= limit ? 1 : (n + limit - 1) / limit;
  for (std::size_t i = (n - 1) % step; i < n; i += step) keep.push_back(i);
  return keep;
}

json scope_row(const Profile& p, const ScopeStats& s) {
  return json{{"name", report::valid_utf8(p.str(s.name))},
              {"calls", s.time.count},
              {"total_s", static_cast<double>(s.total_ns) * kNs},
              {"self_s", static_cast<double>(s.self_ns) * kNs},
              {"mean_s", s.time.mean_ns * kNs},
              {"p95_s", static_cast<double>(s.time.p95_ns) * kNs},
              {"max_s", static_cast<double>(s.time.max_ns) * kNs},
              {"threads", s.thread_count},
              {"items", s.items}};
}

json memory_json(const Profile& p, const LiveFrameOptions& o) {
  json m{{"tracked", p.heap.tracked},
         {"live_bytes", p.heap.current_bytes},
         {"peak_bytes", p.heap.peak_bytes},
         {"allocations", p.heap.alloc_count},
         {"counters_bytes", p.memory.current_bytes},
         {"counters_peak_bytes", p.memory.peak_bytes}};
  json t = json::array(), heap = json::array(), rss = json::array();
  for (const std::size_t i : thinned(p.heap_samples.size(), o.chart_points)) {
    const HeapSample& s = p.heap_samples[i];
    t.push_back(static_cast<double>(s.time_ns) * kNs);
    heap.push_back(s.heap_bytes);
    rss.push_back(s.rss_bytes);
  }
  m["t"] = std::move(t);
  m["heap"] = std::move(heap);
  m["rss"] = std::move(rss);
  return m;
}

json system_json(const Profile& p, const LiveFrameOptions& o) {
  json s{{"monitored", p.system.monitored}};
  const std::vector<std::size_t> keep = thinned(p.system.sample_ns.size(), o.chart_points);
  json t = json::array();
  for (const std::size_t i : keep) t.push_back(static_cast<double>(p.system.sample_ns[i]) * kNs);
  json tracks = json::array();
  for (const SystemTrack& track : p.system.tracks) {
    json values = json::array();
    for (const std::size_t i : keep) values.push_back(i < track.values.size() ? number(track.values[i]) : json(nullptr));
    tracks.push_back(json{{"name", track.name}, {"unit", track.unit}, {"values", std::move(values)}});
  }
  s["t"] = std::move(t);
  s["tracks"] = std::move(tracks);
  json energy = json::array();
  for (const EnergyDomain& d : p.system.energy)
    energy.push_back(json{{"domain", d.name}, {"method", to_string(d.method)}, {"joules", d.joules}});
  s["energy"] = std::move(energy);
  return s;
}

const char* kind_name(MetricKind kind) {
  switch (kind) {
    case MetricKind::Counter: return "counter";
    case MetricKind::Gauge: return "gauge";
    case MetricKind::Histogram: return "histogram";
  }
  return "counter";
}

json metric_json(const Profile& p, const MetricSeries& m, std::size_t points) {
  json j{{"name", report::valid_utf8(p.str(m.name))},
         {"kind", kind_name(m.kind)},
         {"unit", m.unit},
         {"count", m.summary.count},
         {"sum", number(m.summary.sum)},
         {"last", number(m.summary.last)},
         {"mean", number(m.summary.mean)},
         {"p50", number(m.summary.p50)},
         {"p99", number(m.summary.p99)}};
  if (points != 0) {
    json t = json::array(), v = json::array();
    for (const std::size_t i : thinned(m.points.size(), points)) {
      t.push_back(static_cast<double>(m.points[i].time_ns) * kNs);
      v.push_back(number(m.points[i].value));
    }
    j["t"] = std::move(t);
    j["v"] = std::move(v);
  }
  return j;
}

// The flame graph as a nested tree {n: name, v: value, c: [children]}, children largest first,
// cut to `limit` nodes by dropping the smallest subtrees (their time stays in the parent).
struct FlameNode {
  std::string name;
  std::uint64_t value = 0;
  std::map<std::string, std::size_t> child_index;
  std::vector<std::size_t> children;
};

json flame_json(const Profile& window, std::size_t limit) {
  std::vector<FlameNode> nodes(1);
  nodes[0].name = "all";
  if (window.cpu_samples.empty()) return json{{"n", "all"}, {"v", 0}, {"c", json::array()}};
  for (const io::FoldedStack& stack : io::fold_cpu_samples(window)) {
    std::size_t at = 0;
    nodes[0].value += stack.value;
    for (const io::FoldedFrame& frame : stack.frames) {
      const std::string text = io::collapsed_frame_text(frame);
      const auto found = nodes[at].child_index.find(text);
      std::size_t child = 0;
      if (found == nodes[at].child_index.end()) {
        child = nodes.size();
        nodes[at].child_index.emplace(text, child);
        nodes[at].children.push_back(child);
        nodes.push_back(FlameNode{text, 0, {}, {}});
      } else {
        child = found->second;
      }
      nodes[child].value += stack.value;
      at = child;
    }
  }
  // Keep the `limit` largest nodes: a node's value never exceeds its parent's, so the kept set
  // is closed under parents when ties are broken by creation order (parents come first).
  std::vector<std::size_t> order(nodes.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return nodes[a].value > nodes[b].value; });
  std::vector<bool> kept(nodes.size(), false);
  for (std::size_t i = 0; i < order.size() && i < limit; ++i) kept[order[i]] = true;
  kept[0] = true;
  const auto build = [&](const auto& self, std::size_t index) -> json {
    const FlameNode& node = nodes[index];
    json children = json::array();
    std::vector<std::size_t> sorted = node.children;
    std::sort(sorted.begin(), sorted.end(), [&](std::size_t a, std::size_t b) { return nodes[a].value > nodes[b].value; });
    for (const std::size_t c : sorted)
      if (kept[c]) children.push_back(self(self, c));
    return json{{"n", node.name}, {"v", node.value}, {"c", std::move(children)}};
  };
  return build(build, 0);
}

}  // namespace

Profile cpu_window(const Profile& profile, std::uint64_t from_ns, std::uint64_t to_ns) {
  Profile w;
  w.meta = profile.meta;
  w.strings = profile.strings;
  w.threads = profile.threads;
  w.call_tree = profile.call_tree;
  w.frames = profile.frames;
  w.stacks = profile.stacks;
  w.cpu = profile.cpu;
  const auto first = std::lower_bound(profile.cpu_samples.begin(), profile.cpu_samples.end(), from_ns,
                                      [](const CpuSample& s, std::uint64_t t) { return s.time_ns < t; });
  for (auto it = first; it != profile.cpu_samples.end() && it->time_ns < to_ns; ++it) w.cpu_samples.push_back(*it);
  w.cpu.samples = w.cpu_samples.size();
  if (to_ns != UINT64_MAX && to_ns > from_ns) w.meta.duration_ns = to_ns - from_ns;
  return w;
}

json live_frame(const Profile& whole, const LiveFrameOptions& o, const ServerStats& server) {
  // The CPU views (flame graph, hot functions, CPU bottlenecks) cover the last window: what
  // the program does now, and a cost per frame that does not grow with the run's samples.
  // Scopes, the call tree, memory and metrics are the whole run's, as their counters are.
  const std::uint64_t from = whole.meta.duration_ns > o.window_ns ? whole.meta.duration_ns - o.window_ns : 0;
  Profile p = whole;
  std::erase_if(p.cpu_samples, [from](const CpuSample& s) { return s.time_ns < from; });
  report::ReportLimits limits;
  limits.hot_paths = o.hot_rows;
  limits.call_tree = analysis::TreeLimits{10, o.tree_rows};
  limits.cpu_functions = o.hot_rows;
  const report::ReportData data = report::analyse(p, limits);

  json frame;
  frame["meta"] = json{{"command", report::valid_utf8(p.meta.command_line)},
                       {"host", p.meta.hostname},
                       {"pid", p.meta.pid},
                       {"version", p.meta.nnprof_version},
                       {"duration_s", static_cast<double>(p.meta.duration_ns) * kNs},
                       {"sent_unix_ms", std::chrono::duration_cast<std::chrono::milliseconds>(
                                            std::chrono::system_clock::now().time_since_epoch())
                                            .count()}};
  frame["summary"] = json{{"scopes_recorded", p.completeness.scopes_recorded},
                          {"scope_names", p.scopes.size()},
                          {"threads", p.threads.size()},
                          {"cpu_samples", p.cpu.samples},
                          {"sampled", p.cpu.sampled},
                          {"heap_live_bytes", p.heap.current_bytes},
                          {"instrumented_s", static_cast<double>(data.instrumented_ns) * kNs}};
  json hot = json::array();
  for (const ScopeStats* s : data.by_total) hot.push_back(scope_row(p, *s));
  frame["hot"] = std::move(hot);

  json tree = json::array();
  for (const analysis::TreeRow& row : data.call_tree.rows) {
    if (row.node >= p.call_tree.size()) continue;
    const CallTreeNode& n = p.call_tree[row.node];
    tree.push_back(json{{"name", report::valid_utf8(p.str(n.name))},
                        {"depth", row.depth},
                        {"calls", n.time.count},
                        {"total_s", static_cast<double>(n.time.sum_ns) * kNs},
                        {"self_s", static_cast<double>(n.self_ns) * kNs}});
  }
  frame["tree"] = std::move(tree);
  frame["tree_omitted"] = data.call_tree.omitted();

  frame["memory"] = memory_json(p, o);
  frame["system"] = system_json(p, o);
  json metrics = json::array();
  for (const MetricSeries& m : p.metrics) metrics.push_back(metric_json(p, m, o.chart_points));
  frame["metrics"] = std::move(metrics);

  frame["flame"] = flame_json(p, o.flame_nodes);
  frame["flame_window_s"] = static_cast<double>(o.window_ns) * kNs;
  json functions = json::array();
  for (std::size_t i = 0; i < data.cpu.functions.size() && i < o.hot_rows; ++i) {
    const analysis::CpuFunction& f = data.cpu.functions[i];
    functions.push_back(json{{"name", report::valid_utf8(f.name)},
                             {"self", f.self.samples},
                             {"total", f.total.samples},
                             {"self_share", number(f.self_share)}});
  }
  frame["functions"] = std::move(functions);

  json bottlenecks = json::array();
  for (const analysis::Bottleneck& b : data.bottlenecks)
    bottlenecks.push_back(json{{"title", std::string(analysis::title(b.kind))},
                               {"severity", to_string(b.severity)},
                               {"description", render::text_of(p, b.description)},
                               {"suggestion", render::text_of(p, b.suggestion)}});
  frame["bottlenecks"] = std::move(bottlenecks);
  const json continuous = anomalies_json(p);
  frame["anomalies"] = continuous["anomalies"];
  frame["trends"] = continuous["trends"];
  frame["server"] = json{{"live_clients", server.live_clients},
                         {"frames", server.frames_sent},
                         {"snapshot_s", server.snapshot_seconds_total}};
  return frame;
}

json scopes_json(const Profile& p) {
  json scopes = json::array();
  for (const ScopeStats& s : p.scopes) scopes.push_back(scope_row(p, s));
  return json{{"duration_s", static_cast<double>(p.meta.duration_ns) * kNs}, {"scopes", std::move(scopes)}};
}

json metrics_json(const Profile& p) {
  json metrics = json::array();
  for (const MetricSeries& m : p.metrics) metrics.push_back(metric_json(p, m, 0));
  return json{{"metrics", std::move(metrics)}};
}

json anomalies_json(const Profile& p) {
  json anomalies = json::array();
  for (const Anomaly& a : p.continuous.anomalies)
    anomalies.push_back(json{{"kind", to_string(a.kind)},
                             {"metric", a.metric},
                             {"unit", a.unit},
                             {"window", a.window},
                             {"window_start_s", static_cast<double>(a.window_start_ns) * kNs},
                             {"before", number(a.before)},
                             {"after", number(a.after)},
                             {"magnitude", number(a.magnitude)},
                             {"worse", a.worse},
                             {"description", a.description}});
  json trends = json::array();
  for (const Trend& t : p.continuous.trends)
    trends.push_back(json{{"metric", t.metric},
                          {"unit", t.unit},
                          {"slope_per_hour", number(t.slope_per_hour)},
                          {"relative_slope_per_hour", number(t.relative_slope_per_hour)},
                          {"significant", t.significant},
                          {"windows", t.windows}});
  return json{{"enabled", p.continuous.enabled}, {"anomalies", std::move(anomalies)}, {"trends", std::move(trends)}};
}

}  // namespace nnprof::serve
