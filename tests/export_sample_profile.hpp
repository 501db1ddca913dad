// A profile built by hand for the exporter tests (Markdown, JSON, CSV), so that every
// expected number is known exactly. It holds a nested tree, memory counters, reported
// items, two diagnostics and a scope whose name has a comma, quotes, a pipe and a newline.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::test {

inline constexpr std::uint64_t kMs = 1'000'000;
inline constexpr std::uint64_t kUs = 1'000;
inline constexpr std::uint64_t kMiB = 1ULL << 20;

/// The awkward scope name: every character CSV and Markdown must treat specially.
inline const std::string kWeirdName = "load, \"batch\" | 1\nnext";

enum : StringId { kTrain, kForward, kMatmul, kBackward, kWeird, kActivations, kWeights };

struct TimeSpec {
  std::uint64_t count, sum, min, max;
  double mean, stddev;
  std::uint64_t p50, p95, p99;
};

inline DurationStats duration_stats(const TimeSpec& t) {
  DurationStats s;
  s.count = t.count;
  s.sum_ns = t.sum;
  s.min_ns = t.min;
  s.max_ns = t.max;
  s.mean_ns = t.mean;
  s.stddev_ns = t.stddev;
  s.p50_ns = t.p50;
  s.p95_ns = t.p95;
  s.p99_ns = t.p99;
  return s;
}

inline ScopeStats scope_stats(StringId name, std::uint64_t self, const TimeSpec& time) {
  ScopeStats s;
  s.name = name;
  s.time = duration_stats(time);
  s.total_ns = s.time.sum_ns;
  s.self_ns = self;
  s.thread_count = 1;
  return s;
}

inline CallTreeNode tree_node(std::uint32_t id, std::uint32_t parent, std::uint32_t depth,
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

// train_step (100 ms, 10 calls, 320 items)
//   forward (60 ms)
//     matmul (40 ms, 1000 calls, 2000 items, 12 MiB allocated in 300 allocations)
//   backward (30 ms)
//   kWeirdName (5 ms, 10 calls, 4 MiB allocated in 100 allocations)
// Self times: 5 + 20 + 40 + 30 + 5 = 100 ms = the instrumented time.
inline Profile export_sample_profile() {
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
      kTrain, 5 * kMs, {10, 100 * kMs, 9 * kMs, 12 * kMs, 10e6, 1e6, 10 * kMs, 12 * kMs, 12 * kMs});
  train.items = 320;
  const ScopeStats forward =
      scope_stats(kForward, 20 * kMs,
                  {10, 60 * kMs, 5'500 * kUs, 7 * kMs, 6e6, 5e5, 6 * kMs, 6'900 * kUs, 7 * kMs});
  ScopeStats matmul = scope_stats(
      kMatmul, 40 * kMs, {1000, 40 * kMs, 35 * kUs, 90 * kUs, 40e3, 2500.0, 39 * kUs, 52 * kUs, 80 * kUs});
  matmul.items = 2000;
  matmul.thread_count = 2;
  matmul.memory = {12 * kMiB, 300, 6 * kMiB, 150};
  const ScopeStats backward = scope_stats(
      kBackward, 30 * kMs,
      {10, 30 * kMs, 2'800 * kUs, 3'500 * kUs, 3e6, 2.5e5, 3 * kMs, 3'400 * kUs, 3'500 * kUs});
  ScopeStats weird = scope_stats(
      kWeird, 5 * kMs, {10, 5 * kMs, 400 * kUs, 700 * kUs, 5e5, 75'500.25, 480 * kUs, 650 * kUs, 700 * kUs});
  weird.memory = {4 * kMiB, 100, 0, 0};
  p.scopes = {train, forward, matmul, backward, weird};  // by total time, as the model sorts them

  CallTreeNode root;
  root.children = {1};
  p.call_tree = {root,
                 // Children deliberately not in time order: the Markdown report must sort them.
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

}  // namespace nnprof::test
