// A CPU-sampled profile built by hand, so that every number of the CPU analyses and report
// sections is known exactly. Header-only: the analysis tests and every report test use it.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::testing {

/// String ids of cpu_profile().
enum CpuString : StringId {
  kCpuTrainStep, kCpuForward, kCpuBackward, kCpuMain, kCpuRunStep, kCpuMatmul, kCpuDot, kCpuMemcpy,
  kCpuRecurse, kCpuExe, kCpuLibc, kCpuFile, kCpuLibFoo,
};

/// Stack ids of cpu_profile().
enum CpuStack : std::uint32_t { kStackDot, kStackMatmul, kStackMemcpy, kStackRecurse, kStackLibFoo, kStackUnknown };

/// 14 samples on 2 threads, 16 ms of CPU time:
///
///     call tree: train_step (node 1) > forward (node 2), backward (node 3)
///     frames:    main, run_step, matmul (lines 30 and 31), dot inlined into matmul (line 42),
///                memcpy (libc, no line), recurse (lines 50, 51), libfoo.so+0x7000 (no symbol),
///                [unknown] (no symbol, no module)
///
///     thread 0 (1 ms each):  4 x main > run_step > matmul > dot(inlined)      in forward
///                            2 x main > run_step > matmul:31                  in forward
///                            1 x main > run_step > matmul:31 > memcpy         in forward
///                            2 x main > run_step > recurse > recurse > recurse in backward
///                            1 x main > run_step > libfoo.so+0x7000           in train_step
///                            1 x main > [unknown]                             outside scopes
///                            1 x no stack                                     outside scopes
///     thread 1 (2 ms each):  2 x main > run_step > matmul:31                  in forward
///
/// Self: matmul 4 (6 ms), dot 4, recurse 2, memcpy 1, libfoo.so+0x7000 1, [unknown] 1.
/// Total: main 13, run_step 12, matmul 9, dot 4, recurse 2 (once per sample), the rest 1.
inline Profile cpu_profile() {
  Profile p;
  p.meta.nnprof_version = "0.test";
  p.meta.hostname = "cpu-host";
  p.meta.pid = 4242;
  p.meta.duration_ns = 50'000'000;
  p.strings = {"train_step", "forward", "backward", "main", "run_step", "matmul", "dot", "memcpy", "recurse",
               "/usr/bin/train", "/lib/x86_64-linux-gnu/libc.so.6", "model.cpp", "/opt/lib/libfoo.so"};
  p.threads = {{0, 100, "main", false, 3, 40'000'000}, {1, 101, "worker", false, 0, 0}};

  // Call tree and per-name statistics, consistent with each other.
  auto node = [](std::uint32_t id, std::uint32_t parent, StringId name, std::uint32_t depth,
                 std::vector<std::uint32_t> children, std::uint64_t total, std::uint64_t self) {
    CallTreeNode n;
    n.id = id;
    n.parent = parent;
    n.name = name;
    n.depth = depth;
    n.children = std::move(children);
    n.time.count = 1;
    n.time.sum_ns = n.time.min_ns = n.time.max_ns = n.time.p50_ns = n.time.p95_ns = n.time.p99_ns = total;
    n.time.mean_ns = static_cast<double>(total);
    n.self_ns = self;
    n.thread_count = 1;
    return n;
  };
  p.call_tree = {node(0, kNone, kNone, 0, {1}, 0, 0), node(1, 0, kCpuTrainStep, 1, {2, 3}, 40'000'000, 5'000'000),
                 node(2, 1, kCpuForward, 2, {}, 25'000'000, 25'000'000),
                 node(3, 1, kCpuBackward, 2, {}, 10'000'000, 10'000'000)};
  for (std::uint32_t i = 1; i < p.call_tree.size(); ++i) {
    const CallTreeNode& n = p.call_tree[i];
    ScopeStats s;
    s.name = n.name;
    s.total_ns = n.time.sum_ns;
    s.self_ns = n.self_ns;
    s.time = n.time;
    s.thread_count = 1;
    p.scopes.push_back(s);
  }

  auto frame = [](std::uint64_t address, StringId function, StringId file, std::uint32_t line, StringId module,
                  bool inlined = false) { return StackFrame{address, function, file, line, module, 0, inlined}; };
  p.frames = {
      frame(0x1000, kCpuMain, kCpuFile, 10, kCpuExe),              // 0
      frame(0x1100, kCpuRunStep, kCpuFile, 20, kCpuExe),           // 1
      frame(0x1200, kCpuDot, kCpuFile, 42, kCpuExe, true),         // 2: inlined into 3
      frame(0x1200, kCpuMatmul, kCpuFile, 30, kCpuExe),            // 3
      frame(0x1210, kCpuMatmul, kCpuFile, 31, kCpuExe),            // 4
      frame(0x9000, kCpuMemcpy, kNone, 0, kCpuLibc),               // 5
      frame(0x1300, kCpuRecurse, kCpuFile, 50, kCpuExe),           // 6
      frame(0x1310, kCpuRecurse, kCpuFile, 51, kCpuExe),           // 7
      frame(0x7000, kNone, kNone, 0, kCpuLibFoo),                  // 8
      frame(0xdead, kNone, kNone, 0, kNone),                       // 9
  };
  p.stacks = {{{2, 3, 1, 0}}, {{4, 1, 0}}, {{5, 4, 1, 0}}, {{6, 7, 6, 1, 0}}, {{8, 1, 0}}, {{9, 0}}};

  std::uint64_t t = 1'000'000;
  auto sample = [&](std::uint32_t thread, std::uint32_t stack, std::uint32_t node_id, std::uint64_t weight,
                    int times) {
    for (int i = 0; i < times; ++i) {
      p.cpu_samples.push_back({t, thread, stack, node_id, weight});
      t += 1'000'000;
    }
  };
  constexpr std::uint64_t kMsWeight = 1'000'000;
  sample(0, kStackDot, 2, kMsWeight, 4);
  sample(0, kStackMatmul, 2, kMsWeight, 2);
  sample(1, kStackMatmul, 2, 2 * kMsWeight, 2);
  sample(0, kStackMemcpy, 2, kMsWeight, 1);
  sample(0, kStackRecurse, 3, kMsWeight, 2);
  sample(0, kStackLibFoo, 1, kMsWeight, 1);
  sample(0, kStackUnknown, 0, kMsWeight, 1);
  sample(0, kNone, 0, kMsWeight, 1);

  p.cpu.sampled = true;
  p.cpu.mode = "cpu";
  p.cpu.mechanism = "perf_event";
  p.cpu.unwinder = "libunwind";
  p.cpu.requested_hz = 1000.0;
  p.cpu.period_ns = 1'000'000;
  p.cpu.samples = p.cpu_samples.size();
  p.cpu.samples_dropped = 3;
  p.cpu.truncated_stacks = 1;
  p.cpu.threads_sampled = 2;

  p.completeness.scopes_recorded = 3;
  p.completeness.buffer_policy = "keep-first";
  return p;
}

}  // namespace nnprof::testing
