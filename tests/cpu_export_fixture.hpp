// A hand-built profile with CPU samples for the tests of the collapsed-stack, pprof and
// flame-graph exporters: two threads, a three-scope call tree, an inline chain, frames
// without symbols, a sample without a stack, and names that need escaping.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::testing {

inline StringId intern(Profile& p, const std::string& text) {
  for (std::size_t i = 0; i < p.strings.size(); ++i)
    if (p.strings[i] == text) return static_cast<StringId>(i);
  p.strings.push_back(text);
  return static_cast<StringId>(p.strings.size() - 1);
}

/// Frame indices of cpu_export_profile().
/// kDot and kMatmul are one address (dot inlined into matmul); kMatmulLoop is another
/// address in matmul, outside the inlined code.
enum FixtureFrame : std::uint32_t { kMain, kTrainStep, kDot, kMatmul, kLibcNoSymbol, kNoModule, kWeird, kMatmulLoop };
/// Call-tree nodes of cpu_export_profile().
enum FixtureNode : std::uint32_t { kRoot, kTrain, kForward, kEval };

inline constexpr std::uint64_t kPeriodNs = 1'000'000;
inline constexpr std::uint64_t kWorkerWeightNs = 2'000'000;
/// A function name with every character the formats must escape.
inline const std::string kWeirdName = "weird;name\n<T&> \"q\"";

/// Samples (innermost frame first):
///   thread 0 "main" (tid 100):   3 x main<train_step<matmul        in train > forward
///                                2 x main<train_step<matmul<dot    in train > forward (dot inlined into matmul)
///                                1 x main<train_step<libc+0x...    in train
///                                1 x main<[unknown]                outside any scope
///                                1 x no stack                      outside any scope
///   thread 1 "worker<1>" (tid 101), 2 ms each:
///                                2 x main<train_step<matmul<dot    in eval
///                                1 x main<weird name               in eval
inline Profile cpu_export_profile() {
  Profile p;
  p.strings.push_back("");
  p.meta.nnprof_version = "0.1.0";
  p.meta.command_line = "/usr/bin/app --epochs 1";
  p.meta.duration_ns = 50'000'000;
  p.meta.clock.unix_origin_ns = 1'700'000'000'000'000'000;
  const std::vector<std::pair<std::int64_t, std::string>> threads{{100, "main"}, {101, "worker<1>"}};
  for (const auto& [tid, name] : threads) {
    ThreadInfo thread;
    thread.id = static_cast<std::uint32_t>(p.threads.size());
    thread.os_tid = tid;
    thread.name = name;
    p.threads.push_back(thread);
  }

  p.call_tree.resize(4);
  const auto node = [&](std::uint32_t id, std::uint32_t parent, const std::string& name) {
    CallTreeNode& n = p.call_tree[id];
    n.id = id;
    n.parent = parent;
    n.name = intern(p, name);
    n.depth = p.call_tree[parent].depth + 1;
    n.thread_count = 1;
    p.call_tree[parent].children.push_back(id);
  };
  node(kTrain, kRoot, "train");
  node(kForward, kTrain, "forward");
  node(kEval, kRoot, "eval");

  const StringId app = intern(p, "/usr/bin/app");
  const StringId libml = intern(p, "/usr/lib/libml.so");
  const StringId libc = intern(p, "/usr/lib/x86_64-linux-gnu/libc.so.6");
  p.frames.resize(8);
  const auto frame = [&](std::uint32_t index, std::uint64_t address, StringId function, StringId file,
                         std::uint32_t line, StringId module, bool inlined, std::uint64_t module_offset = 0) {
    StackFrame& f = p.frames[index];
    f.address = address;
    f.function = function;
    f.file = file;
    f.line = line;
    f.module = module;
    f.inlined = inlined;
    f.module_offset = module_offset;
  };
  frame(kMain, 0x1000, intern(p, "main"), intern(p, "src/main.cpp"), 10, app, false);
  frame(kTrainStep, 0x1100, intern(p, "train_step"), intern(p, "src/train.cpp"), 20, app, false);
  frame(kDot, 0x2000, intern(p, "dot"), intern(p, "include/linalg.hpp"), 5, libml, true);
  frame(kMatmul, 0x2000, intern(p, "matmul"), intern(p, "src/linalg.cpp"), 40, libml, false);
  frame(kLibcNoSymbol, 0x7f0000001234, kNone, kNone, 0, libc, false, 0x29234);
  frame(kNoModule, 0xdead, kNone, kNone, 0, kNone, false);
  frame(kWeird, 0x1200, intern(p, kWeirdName), intern(p, "src/weird.cpp"), 7, app, false);
  frame(kMatmulLoop, 0x2040, intern(p, "matmul"), intern(p, "src/linalg.cpp"), 42, libml, false);

  p.stacks = {CallStack{{kMatmulLoop, kTrainStep, kMain}}, CallStack{{kDot, kMatmul, kTrainStep, kMain}},
              CallStack{{kLibcNoSymbol, kTrainStep, kMain}}, CallStack{{kNoModule, kMain}},
              CallStack{{kWeird, kMain}}};

  p.cpu.sampled = true;
  p.cpu.mode = "cpu";
  p.cpu.mechanism = "thread-cpu-timer";
  p.cpu.unwinder = "frame-pointer";
  p.cpu.requested_hz = 1000;
  p.cpu.period_ns = kPeriodNs;
  p.cpu.threads_sampled = 2;
  std::uint64_t t = 0;
  const auto sample = [&](std::uint32_t thread, std::uint32_t stack, std::uint32_t scope, int count,
                          std::uint64_t weight) {
    for (int i = 0; i < count; ++i) {
      CpuSample s;
      s.time_ns = t += 100'000;
      s.thread = thread;
      s.stack = stack;
      s.node = scope;
      s.weight_ns = weight;
      p.cpu_samples.push_back(s);
    }
  };
  sample(0, 0, kForward, 3, kPeriodNs);
  sample(0, 1, kForward, 2, kPeriodNs);
  sample(0, 2, kTrain, 1, kPeriodNs);
  sample(0, 3, kRoot, 1, kPeriodNs);
  sample(0, kNone, kRoot, 1, kPeriodNs);
  sample(1, 1, kEval, 2, kWorkerWeightNs);
  sample(1, 4, kEval, 1, kWorkerWeightNs);
  p.cpu.samples = p.cpu_samples.size();
  return p;
}

}  // namespace nnprof::testing
