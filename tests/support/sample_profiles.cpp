#include "sample_profiles.hpp"

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace nnprof::testing {

MachinePeaks synthetic_peaks(double fp32_one_core, double fp32_all, double bandwidth_one_core, double bandwidth_all,
                             std::uint32_t threads) {
  MachinePeaks p;
  p.cpu_model = "synthetic";
  p.threads = threads;
  p.isa = "avx2+fma";
  p.fp32_flops_one_core = fp32_one_core;
  p.fp32_flops = fp32_all;
  p.fp64_flops_one_core = fp32_one_core / 2;
  p.fp64_flops = fp32_all / 2;
  p.bandwidth_one_core = bandwidth_one_core;
  p.bandwidth = bandwidth_all;
  p.measured_unix = 1'800'000'000;
  return p;
}

ScopeStats scope_stats(StringId name, std::uint64_t self_ns, const DurationStats& time) {
  ScopeStats s;
  s.name = name;
  s.time = time;
  s.total_ns = time.sum_ns;
  s.self_ns = self_ns;
  s.thread_count = 1;
  return s;
}

CallTreeNode tree_node(std::uint32_t id, std::uint32_t parent, std::uint32_t depth,
                       std::vector<std::uint32_t> children, const ScopeStats& stats) {
  CallTreeNode n;
  n.id = id;
  n.parent = parent;
  n.name = stats.name;
  n.depth = depth;
  n.children = std::move(children);
  n.time = stats.time;
  n.self_ns = stats.self_ns;
  n.thread_count = stats.thread_count;
  n.memory = stats.memory;
  return n;
}

namespace {

// Statistics whose mean and percentiles follow from the count, sum and range.
DurationStats stats(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max) {
  return {count, sum, min, max,
          count ? static_cast<double>(sum) / static_cast<double>(count) : 0.0,
          count > 1 ? static_cast<double>(max - min) / 3.0 : 0.0, (min + max) / 2,
          max - (max - min) / 20, max - (max - min) / 100};
}

}  // namespace

Profile rich_profile() {
  Profile p;
  p.meta.nnprof_version = "0.1.0";
  p.meta.hostname = "host-1";
  p.meta.os = "Linux 6.1.0 x86_64";
  p.meta.cpu_model = "AMD EPYC 7B13";
  p.meta.logical_cpus = 2;
  p.meta.compiler = "g++ 12.2.0";
  p.meta.command_line = "./train --epochs 1 --name \"a,b\"";
  p.meta.pid = 4242;
  p.meta.duration_ns = 123'456'789;
  p.meta.clock = ClockCalibration{"tsc", 0.3852123456789, 987654321012345ull, 5'000'000'000ull, 1'763'000'000'000'000'000,
                                  1.25e-7};
  p.strings = {"train_step", "forward", "matmul, \"fast\"", "<script>alert(1)</script>", "weights", "décodage | µ\n2"};
  p.threads = {ThreadInfo{0, 1001, "main", false, 5, 100'000'000}, ThreadInfo{1, 1002, "loader-0", true, 1, 20'000'000}};

  CallTreeNode root;
  root.children = {1, 4};
  CallTreeNode step{1, 0, 0, 1, {2}, stats(2, 100'000'000, 40'000'000, 60'000'000), 10'000'000, 1, {}, {}};
  step.memory = MemoryAttribution{4096, 2, 1024, 1};
  CallTreeNode fwd{2, 1, 1, 2, {3}, stats(2, 90'000'000, 44'000'000, 46'000'000), 30'000'000, 1, {}, {}};
  CallTreeNode mm{3, 2, 2, 3, {}, stats(2, 60'000'000, 29'000'000, 31'000'000), 60'000'000, 1, {}, {}};
  CallTreeNode odd{4, 0, 3, 1, {}, stats(1, 20'000'000, 20'000'000, 20'000'000), 20'000'000, 1, {}, {}};
  p.call_tree = {root, step, fwd, mm, odd};

  auto scope = [&](StringId name, const CallTreeNode& n, std::uint64_t items) {
    ScopeStats s = scope_stats(name, n.self_ns, n.time);
    s.memory = n.memory;
    s.items = items;
    return s;
  };
  p.scopes = {scope(0, step, 64), scope(1, fwd, 0), scope(2, mm, 0), scope(3, odd, 7)};

  p.spans = {Span{0, 0, 1, 1, 0, 40'000'000},          Span{0, 1, 2, 2, 1'000'000, 45'000'000},
             Span{0, 2, 3, 3, 2'000'000, 31'000'000},  Span{0, 0, 1, 1, 50'000'000, 110'000'000},
             Span{0, 1, 2, 2, 51'000'000, 96'000'000}, Span{0, 2, 3, 3, 52'000'000, 81'000'000},
             Span{1, 3, 4, 1, 5'000'000, 25'000'000}};
  p.memory_counters = {MemoryCounter{4, 3072, 4096, 4096, 1024, 2, 1, 3072}};
  p.memory_events = {MemoryEvent{1'500'000, 0, 0, 2048}, MemoryEvent{51'500'000, 0, 0, 2048},
                     MemoryEvent{100'000'000, 0, 0, -1024}};
  p.memory = MemorySummary{3072, 4096, 51'500'000};
  p.completeness.scopes_recorded = 7;
  p.completeness.spans_kept = 7;
  p.completeness.spans_dropped = 3;
  p.completeness.spans_overwritten = 0;
  p.completeness.events_dropped = 1;
  p.completeness.spans_enabled = true;
  p.completeness.buffer_policy = "keep-first";
  p.completeness.memory_cap_bytes = 1 << 20;
  p.completeness.hot_path_allocations = 2;
  p.completeness.overhead_per_scope_ns = 26.375;
  p.completeness.overhead_total_ns = 185;
  p.diagnostics = {Diagnostic{DiagnosticKind::SpansDropped, Severity::Warning, kNone, kNone, 3, "3 spans were dropped."},
                   Diagnostic{DiagnosticKind::StopWithoutStart, Severity::Warning, 1, 3, 2,
                              "stop(\"<script>alert(1)</script>\") without start"}};
  p.annotations = {{"git_commit", "8d2e793"},
                   {"model.tiny.parameters", "1024"},
                   {"note <b>", "<script>alert(2)</script> & \"quoted\" | pipe"}};
  return p;
}

Profile synthetic_profile(std::uint64_t span_count, std::uint32_t threads) {
  // Per thread, iterations of: step > {forward > 4 x (layer > {matmul, gelu}), backward}.
  Profile p;
  p.meta.nnprof_version = "0.1.0";
  p.meta.hostname = "synthetic";
  p.meta.pid = 1;
  p.meta.clock.source = "tsc";
  p.strings = {"train_step", "forward", "layer", "matmul", "gelu", "backward"};
  for (std::uint32_t t = 0; t < threads; ++t)
    p.threads.push_back(ThreadInfo{t, 100 + t, "worker-" + std::to_string(t), true, 0, 0});
  // Tree: 0 root, 1 step, 2 forward, 3 layer, 4 matmul, 5 gelu, 6 backward.
  const std::vector<std::pair<std::uint32_t, StringId>> shape = {{0, 0}, {1, 1}, {2, 2}, {3, 3}, {3, 4}, {1, 5}};
  p.call_tree.push_back(CallTreeNode{});
  for (std::size_t i = 0; i < shape.size(); ++i) {
    CallTreeNode n;
    n.id = static_cast<std::uint32_t>(i + 1);
    n.parent = shape[i].first;
    n.name = shape[i].second;
    n.depth = p.call_tree[n.parent].depth + 1;
    p.call_tree[n.parent].children.push_back(n.id);
    p.call_tree.push_back(n);
  }
  constexpr std::uint64_t kSpansPerStep = 1 + 1 + 4 * 3 + 1;  // 15
  const std::uint64_t steps_per_thread = std::max<std::uint64_t>(1, span_count / kSpansPerStep / threads);
  std::vector<std::vector<std::uint64_t>> durations(p.call_tree.size());
  std::uint64_t seed = 12345;
  auto jitter = [&](std::uint64_t base) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    return base + (seed >> 33) % (base / 4 + 1);
  };
  p.spans.reserve(steps_per_thread * threads * kSpansPerStep);
  for (std::uint32_t t = 0; t < threads; ++t) {
    std::uint64_t now = 1000 * t;
    for (std::uint64_t s = 0; s < steps_per_thread; ++s) {
      const std::uint64_t step_start = now;
      const std::size_t step_index = p.spans.size();
      p.spans.push_back(Span{t, 0, 1, 1, step_start, 0});
      const std::uint64_t fwd_start = now + 100;
      const std::size_t fwd_index = p.spans.size();
      p.spans.push_back(Span{t, 1, 2, 2, fwd_start, 0});
      now = fwd_start + 50;
      for (int l = 0; l < 4; ++l) {
        const std::uint64_t layer_start = now;
        const std::uint64_t mm = jitter(20'000), ge = jitter(5'000);
        p.spans.push_back(Span{t, 2, 3, 3, layer_start, layer_start + 20 + mm + ge + 30});
        p.spans.push_back(Span{t, 3, 4, 4, layer_start + 10, layer_start + 10 + mm});
        p.spans.push_back(Span{t, 4, 5, 4, layer_start + 20 + mm, layer_start + 20 + mm + ge});
        now = layer_start + 20 + mm + ge + 40;
      }
      p.spans[fwd_index].end_ns = now;
      const std::uint64_t bwd = jitter(150'000);
      p.spans.push_back(Span{t, 5, 6, 2, now + 10, now + 10 + bwd});
      now += 10 + bwd + 100;
      p.spans[step_index].end_ns = now;
      now += 200;
    }
  }
  for (const Span& s : p.spans) durations[s.node].push_back(s.end_ns - s.start_ns);
  for (std::size_t i = 1; i < p.call_tree.size(); ++i) {
    auto& d = durations[i];
    std::sort(d.begin(), d.end());
    CallTreeNode& n = p.call_tree[i];
    n.time.count = d.size();
    for (auto v : d) n.time.sum_ns += v;
    n.time.min_ns = d.front();
    n.time.max_ns = d.back();
    n.time.mean_ns = static_cast<double>(n.time.sum_ns) / static_cast<double>(d.size());
    n.time.p50_ns = d[d.size() / 2];
    n.time.p95_ns = d[d.size() * 95 / 100];
    n.time.p99_ns = d[d.size() * 99 / 100];
    n.thread_count = threads;
  }
  for (std::size_t i = 1; i < p.call_tree.size(); ++i) {
    CallTreeNode& n = p.call_tree[i];
    std::uint64_t children = 0;
    for (auto c : n.children) children += p.call_tree[c].time.sum_ns;
    n.self_ns = n.time.sum_ns - children;
  }
  std::map<StringId, ScopeStats> by_name;
  for (std::size_t i = 1; i < p.call_tree.size(); ++i) {
    const CallTreeNode& n = p.call_tree[i];
    ScopeStats& s = by_name[n.name];
    s.name = n.name;
    s.total_ns += n.time.sum_ns;
    s.self_ns += n.self_ns;
    s.time = n.time;
    s.thread_count = threads;
  }
  for (auto& [name, s] : by_name) p.scopes.push_back(s);
  std::sort(p.scopes.begin(), p.scopes.end(), [](const ScopeStats& a, const ScopeStats& b) { return a.total_ns > b.total_ns; });
  p.completeness.scopes_recorded = p.spans.size();
  p.completeness.spans_kept = p.spans.size();
  p.completeness.buffer_policy = "keep-first";
  p.completeness.memory_cap_bytes = std::uint64_t{256} << 20;
  p.meta.duration_ns = 0;
  for (const Span& s : p.spans) p.meta.duration_ns = std::max(p.meta.duration_ns, s.end_ns);
  for (auto& t : p.threads) t.scopes_recorded = p.spans.size() / threads;
  return p;
}

Profile export_profile() {
  Profile p;
  p.meta.nnprof_version = "0.1.0";
  p.meta.hostname = "testhost";
  p.meta.os = "Linux 6.1.0";
  p.meta.cpu_model = "Test CPU @ 3.0GHz";
  p.meta.logical_cpus = 8;
  p.meta.compiler = "GCC 12.2.0";
  p.meta.command_line = "./train --epochs 1 | tee log.txt";
  p.meta.pid = 4242;
  p.meta.duration_ns = 250 * kMs;
  p.meta.clock.source = "tsc";
  p.meta.clock.ns_per_tick = 0.25;
  p.meta.clock.tick_origin = 1000;
  p.meta.clock.monotonic_origin_ns = 2'000'000;
  p.meta.clock.unix_origin_ns = 1'700'000'000'000'000'000;
  p.meta.clock.relative_error = 1e-6;
  p.strings = {"train_step", "forward", "matmul", "backward", kWeirdName, "activations", "weights"};
  p.threads = {{0, 1001, "main", false, 1040, 100 * kMs}, {1, 1002, "worker", true, 0, 0}};

  ScopeStats train = scope_stats(
      kTrain, 5 * kMs, DurationStats{10, 100 * kMs, 9 * kMs, 12 * kMs, 10e6, 1e6, 10 * kMs, 12 * kMs, 12 * kMs});
  train.items = 320;
  const ScopeStats forward =
      scope_stats(kForward, 20 * kMs,
                  DurationStats{10, 60 * kMs, 5'500 * kUs, 7 * kMs, 6e6, 5e5, 6 * kMs, 6'900 * kUs, 7 * kMs});
  ScopeStats matmul = scope_stats(
      kMatmul, 40 * kMs, DurationStats{1000, 40 * kMs, 35 * kUs, 90 * kUs, 40e3, 2500.0, 39 * kUs, 52 * kUs, 80 * kUs});
  matmul.items = 2000;
  matmul.thread_count = 2;
  matmul.memory = {12 * kMiB, 300, 6 * kMiB, 150};
  const ScopeStats backward = scope_stats(
      kBackward, 30 * kMs,
      DurationStats{10, 30 * kMs, 2'800 * kUs, 3'500 * kUs, 3e6, 2.5e5, 3 * kMs, 3'400 * kUs, 3'500 * kUs});
  ScopeStats weird = scope_stats(
      kWeird, 5 * kMs, DurationStats{10, 5 * kMs, 400 * kUs, 700 * kUs, 5e5, 75'500.25, 480 * kUs, 650 * kUs, 700 * kUs});
  weird.memory = {4 * kMiB, 100, 0, 0};
  p.scopes = {train, forward, matmul, backward, weird};  // by total time, as the model sorts them

  CallTreeNode root;
  root.children = {1};
  p.call_tree = {root,
                 // Children deliberately not in time order: reports must sort them.
                 tree_node(1, 0, 1, {5, 4, 2}, train),
                 tree_node(2, 1, 2, {3}, forward),
                 tree_node(3, 2, 3, {}, matmul),
                 tree_node(4, 1, 2, {}, backward),
                 tree_node(5, 1, 2, {}, weird)};

  MemoryCounter activations;
  activations.name = kActivations;
  activations.current_bytes = 1536;
  activations.peak_bytes = 3 * kMiB;
  activations.alloc_bytes = 12 * kMiB;
  activations.freed_bytes = 12 * kMiB - 1536;
  activations.alloc_count = 300;
  activations.free_count = 299;
  MemoryCounter weights;
  weights.name = kWeights;
  weights.current_bytes = 4 * kMiB;
  weights.peak_bytes = 4 * kMiB;
  weights.alloc_bytes = 4 * kMiB;
  weights.alloc_count = 100;
  p.memory_counters = {activations, weights};
  p.memory = {static_cast<std::int64_t>(4 * kMiB + 1536), 7 * kMiB, 42 * kMs};

  Completeness& c = p.completeness;
  c.scopes_recorded = 1040;
  c.spans_kept = 1000;
  c.spans_dropped = 40;
  c.buffer_policy = "keep-first";
  c.memory_cap_bytes = 64 * kMiB;
  c.hot_path_allocations = 2;
  c.overhead_per_scope_ns = 20.0;
  c.overhead_total_ns = 20'800;

  Diagnostic dropped;
  dropped.kind = DiagnosticKind::SpansDropped;
  dropped.severity = Severity::Warning;
  dropped.count = 40;
  dropped.message = "40 spans were dropped after the memory cap of 64.0 MiB was reached.";
  Diagnostic unclosed;
  unclosed.kind = DiagnosticKind::UnclosedScope;
  unclosed.severity = Severity::Info;
  unclosed.thread = 1;
  unclosed.name = kWeird;
  unclosed.count = 1;
  unclosed.message = "A scope was still open when the profile was taken.";
  p.diagnostics = {dropped, unclosed};
  return p;
}

namespace {

// Spans of one call of `node` on `thread`, from `start` for `duration`.
Span span_of(const Profile& p, std::uint32_t thread, std::uint32_t node, std::uint64_t start,
             std::uint64_t duration) {
  const CallTreeNode& n = p.call_tree[node];
  return Span{thread, n.name, node, n.depth, start, start + duration};
}

}  // namespace

Profile heap_profile() {
  Profile p;
  p.meta.nnprof_version = "0.1.0";
  p.meta.hostname = "testhost";
  p.meta.os = "Linux 6.1.0";
  p.meta.cpu_model = "Test CPU @ 3.0GHz";
  p.meta.logical_cpus = 8;
  p.meta.compiler = "GCC 12.2.0";
  p.meta.command_line = "./train --epochs 1";
  p.meta.pid = 4343;
  p.meta.duration_ns = 1000 * kMs;
  p.meta.clock.source = "tsc";
  p.meta.clock.ns_per_tick = 0.25;
  p.strings = {"train_step", "forward", "matmul", "backward", "optimizer_step", "load_batch",
               // 6..: frames
               "History::append(Tensor const&)", "src/optim/history.cpp", "./train",
               "Batch::Batch(unsigned long)", "src/data/batch.cpp",
               "Reader<Header>::parse(std::istream&)", "src/data/reader.cpp", "init_logging()",
               "src/log.cpp", "Optimizer::step()", "src/optim/sgd.cpp", "main", "src/train.cpp",
               "DataLoader::run()", "src/data/loader.cpp", "libc.so.6"};
  p.threads = {{0, 2001, "main", false, 60, 500 * kMs}, {1, 2002, "loader", true, 10, 100 * kMs}};

  const auto node = [](std::uint32_t id, std::uint32_t parent, StringId name, std::uint32_t depth,
                       std::vector<std::uint32_t> children, std::uint64_t count, std::uint64_t each,
                       std::uint64_t self, HeapAttribution heap) {
    CallTreeNode n;
    n.id = id;
    n.parent = parent;
    n.name = name;
    n.depth = depth;
    n.children = std::move(children);
    n.time = stats(count, count * each, each, each);
    n.self_ns = self;
    n.thread_count = 1;
    n.heap = heap;
    return n;
  };
  CallTreeNode root;
  root.children = {1, 6};
  root.heap = {4096, 2, 0, 0, 4096, 2, 4096};  // allocated outside any scope: still referenced
  p.call_tree = {
      root,
      node(1, 0, kHeapStep, 1, {4, 2, 5}, 10, 50 * kMs, 10 * kMs, {640 * 1024, 10, 640 * 1024 + 72 * kMiB, 19, 0, 0, 64 * 1024}),
      node(2, 1, kHeapForward, 2, {3}, 10, 20 * kMs, 80 * kMs, {20 * kMiB, 10, 0, 0, 0, 0, 2 * kMiB}),
      node(3, 2, kHeapMatmul, 3, {}, 40, 3 * kMs, 120 * kMs, {40 * kMiB, 40, 40 * kMiB, 40, 0, 0, kMiB}),
      node(4, 1, kHeapBackward, 2, {}, 10, 25 * kMs, 250 * kMs,
           {12 * kMiB + kMiB / 2, 100, 32 * kMiB + kMiB / 2, 110, 0, 0, 2 * kMiB}),
      node(5, 1, kHeapOptimizer, 2, {}, 10, 4 * kMs, 40 * kMs, {10 * kMiB, 10, 0, 0, 10 * kMiB, 10, 10 * kMiB}),
      node(6, 0, kHeapLoad, 1, {}, 10, 10 * kMs, 100 * kMs,
           {80 * kMiB + 3072, 13, 0, 0, 8 * kMiB + 3072, 4, 16 * kMiB + 3072}),
  };
  for (const std::uint32_t id : {1u, 4u, 2u, 3u, 6u, 5u}) {  // by total time, as the model sorts them
    const CallTreeNode& n = p.call_tree[id];
    ScopeStats s = scope_stats(n.name, n.self_ns, n.time);
    s.heap = n.heap;
    p.scopes.push_back(s);
  }

  for (std::uint64_t step = 0; step < 10; ++step) {
    const std::uint64_t t = step * 100 * kMs;
    p.spans.push_back(span_of(p, 0, 1, t, 50 * kMs));
    p.spans.push_back(span_of(p, 0, 2, t + 1 * kMs, 20 * kMs));
    for (std::uint64_t j = 0; j < 4; ++j) p.spans.push_back(span_of(p, 0, 3, t + (2 + 5 * j) * kMs, 3 * kMs));
    p.spans.push_back(span_of(p, 0, 4, t + 21 * kMs, 25 * kMs));
    p.spans.push_back(span_of(p, 0, 5, t + 46 * kMs, 4 * kMs));
  }
  for (std::uint64_t step = 0; step < 10; ++step) p.spans.push_back(span_of(p, 1, 6, (step * 100 + 50) * kMs, 10 * kMs));

  HeapSummary& h = p.heap;
  h.tracked = true;
  h.source = "in-process";
  h.alloc_bytes = 171'056'128;
  h.alloc_count = 185;
  h.free_bytes = 152'174'592;
  h.free_count = 169;
  h.current_bytes = 18'881'536;
  h.current_blocks = 16;
  h.peak_bytes = 22 * kMiB + 4096;
  h.peak_time_ns = 948'500 * kUs;
  h.peak_thread = 0;
  h.peak_node = 3;
  h.untracked_frees = 1;
  h.leaked_bytes = 10 * kMiB + 3072;
  h.leaked_blocks = 13;
  h.reachable_bytes = 8 * kMiB + 4096;
  h.reachable_blocks = 3;
  h.reachability_checked = true;
  h.stack_sample_bytes = 512 * 1024;
  h.sample_interval_ns = 20 * kMs;
  h.largest_alloc_bytes = 8 * kMiB;  // the batch

  // Within each 100 ms step: activations rise and fall (0, 1, 2, 1, 0 MiB); the optimizer's
  // history keeps 1 MiB more per step; one 8 MiB batch is always loaded.
  constexpr std::uint64_t kActivations[] = {0, 1, 2, 1, 0};
  std::uint64_t rss_peak = 0;
  for (std::uint64_t i = 0; i < 50; ++i) {
    const std::uint64_t heap = 4096 + 8 * kMiB + (i / 5) * kMiB + kActivations[i % 5] * kMiB;
    const std::uint64_t rss = 40 * kMiB + heap - 4096;
    rss_peak = std::max(rss_peak, rss);
    p.heap_samples.push_back(HeapSample{i * 20 * kMs, heap, rss, rss_peak});
  }
  h.rss_initial_bytes = p.heap_samples.front().rss_bytes;
  h.rss_peak_bytes = rss_peak;
  h.rss_final_bytes = p.heap_samples.back().rss_bytes;

  // 0..5 symbolized in ./train; 6 an address in libc without a symbol.
  p.frames = {StackFrame{0x401a2c, 6, 7, 42, 8},  StackFrame{0x402b10, 9, 10, 17, 8},
              StackFrame{0x403c44, 11, 12, 88, 8}, StackFrame{0x404d00, 13, 14, 12, 8},
              StackFrame{0x405e20, 15, 16, 97, 8}, StackFrame{0x406f00, 17, 18, 31, 8},
              StackFrame{0x407a10, 19, 20, 55, 8}, StackFrame{0x7f3a1c2b4d10, kNone, kNone, 0, 21}};
  // History::append < Optimizer::step < main; Batch::Batch < DataLoader::run < libc; and one
  // that shares main with the first (so the store shares its callsite).
  p.stacks = {CallStack{{0, 4, 5}}, CallStack{{1, 6, 7}}, CallStack{{4, 5}}};
  p.leaks = {LeakSite{5, 0, 0, false, 10, 10 * kMiB},  // largest first
             LeakSite{6, 1, 1, true, 1, 8 * kMiB},
             LeakSite{0, 3, kNone, true, 2, 4096},
             LeakSite{6, 2, kNone, false, 3, 3072}};

  Completeness& c = p.completeness;
  c.scopes_recorded = 90;
  c.spans_kept = 90;
  c.buffer_policy = "keep-first";
  c.memory_cap_bytes = 64 * kMiB;
  c.overhead_per_scope_ns = 20.0;
  c.overhead_total_ns = 1800;

  Diagnostic untracked;
  untracked.kind = DiagnosticKind::HeapTracking;
  untracked.severity = Severity::Info;
  untracked.count = 1;
  untracked.message = "1 free of a block allocated before heap tracking started was ignored.";
  p.diagnostics = {untracked};
  return p;
}

}  // namespace nnprof::testing
