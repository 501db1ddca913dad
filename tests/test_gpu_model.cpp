// GPU work joined to the scope that launched it, through the real recording path: the launch
// records the CUPTI callback writes (record_gpu_launch) and a GpuSource handing the session
// what CUPTI would have traced. No GPU needed.
#include <gtest/gtest.h>

#include <memory>
#include <thread>

#include "collect/gpu/cupti_tracer.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/error.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/scope.hpp"
#include "record/session.hpp"

namespace nnprof {
namespace {

struct FakeGpu final : detail::GpuSource {
  detail::RawGpu raw;
  void snapshot_gpu(detail::RawGpu& out) override { out = raw; }
};

detail::RawGpuOp kernel_op(detail::RawGpu& raw, std::string name, std::uint64_t start, std::uint64_t end,
                           std::uint32_t correlation, std::uint32_t stream = 7) {
  raw.kernels.push_back(GpuKernel{});
  detail::RawGpuOp op;
  op.kind = GpuOpKind::Kernel;
  op.device = 0;
  op.context = 1;
  op.stream = stream;
  op.name = std::move(name);
  op.start = start;
  op.end = end;
  op.correlation_id = correlation;
  op.detail = static_cast<std::uint32_t>(raw.kernels.size() - 1);
  return op;
}

const CallTreeNode* node_named(const Profile& p, std::uint32_t node) {
  return node < p.call_tree.size() ? &p.call_tree[node] : nullptr;
}

TEST(GpuModel, KernelsAreAttributedToTheirLaunchingScope) {
  Profiler profiler;
  auto gpu = std::make_shared<FakeGpu>();
  gpu->raw.traced = true;
  gpu->raw.status = "test";
  gpu->raw.devices.push_back(GpuDevice{});
  detail::Session& session = *profiler.core().session;
  std::uint64_t t0 = 0, t1 = 0;
  {
    NNPROF_SCOPE_IN(profiler, "step");
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      t0 = detail::monotonic_ns();
      detail::record_gpu_launch(session, 101, CUPTI_CB_DOMAIN_RUNTIME_API, 211);
      detail::record_gpu_launch(session, 102, CUPTI_CB_DOMAIN_RUNTIME_API, 211);
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward");
      detail::record_gpu_launch(session, 103, CUPTI_CB_DOMAIN_RUNTIME_API, 211);
      t1 = detail::monotonic_ns();
    }
  }
  // Kernels run after their scopes closed (100 us later: far past any tick-to-ns rounding):
  // still attributed to where they were launched.
  gpu->raw.ops.push_back(kernel_op(gpu->raw, "gemm", t1 + 101'000, t1 + 104'000, 101));
  gpu->raw.ops.push_back(kernel_op(gpu->raw, "relu", t1 + 105'000, t1 + 106'000, 102));
  gpu->raw.ops.push_back(kernel_op(gpu->raw, "grad", t1 + 107'000, t1 + 110'000, 103));
  gpu->raw.ops.push_back(kernel_op(gpu->raw, "orphan", t1 + 111'000, t1 + 112'000, 999));
  session.set_gpu_source(gpu);
  const Profile p = profiler.snapshot();

  ASSERT_TRUE(p.gpu.summary.traced);
  ASSERT_EQ(p.gpu.ops.size(), 4u);
  ASSERT_EQ(p.gpu.streams.size(), 1u);
  EXPECT_EQ(p.gpu.streams[0].stream, 7u);
  const std::uint64_t origin = p.meta.clock.monotonic_origin_ns;
  for (const GpuOp& op : p.gpu.ops) {
    const std::string& name = p.str(op.name);
    if (name == "orphan") {
      EXPECT_EQ(op.launch.thread, kNone);
      EXPECT_EQ(op.launch.node, 0u);
      continue;
    }
    ASSERT_NE(op.launch.thread, kNone) << name;
    const CallTreeNode* n = node_named(p, op.launch.node);
    ASSERT_NE(n, nullptr);
    EXPECT_EQ(p.str(n->name), name == "grad" ? "backward" : "forward") << name;
    // The launch happened inside its span, before the kernel started.
    ASSERT_NE(op.launch.span, kNone);
    const Span& s = p.spans[op.launch.span];
    EXPECT_EQ(s.node, op.launch.node);
    EXPECT_LE(s.start_ns, op.launch.time_ns);
    EXPECT_GE(s.end_ns, op.launch.time_ns);
    EXPECT_LT(op.launch.time_ns, op.start_ns);
    EXPECT_GE(op.launch.time_ns + origin + 50'000, t0);  // ticks and CLOCK_MONOTONIC agree to well within 50 us
  }
  EXPECT_EQ(p.gpu.summary.unmatched_correlations, 1u);
  // Timestamps moved onto the session clock exactly.
  EXPECT_EQ(p.gpu.ops[0].start_ns, t1 + 101'000 - origin);
  EXPECT_EQ(p.gpu.ops[0].duration_ns(), 3'000u);

  // GPU time per scope name, inclusive: step holds all three launches.
  auto scope = [&](std::string_view name) -> const GpuScopeStats* {
    for (const GpuScopeStats& s : p.gpu.scopes)
      if (p.str(s.name) == name) return &s;
    return nullptr;
  };
  ASSERT_NE(scope("forward"), nullptr);
  EXPECT_EQ(scope("forward")->kernels, 2u);
  EXPECT_EQ(scope("forward")->kernel_ns, 4'000u);
  EXPECT_EQ(scope("backward")->kernel_ns, 3'000u);
  EXPECT_EQ(scope("step")->kernels, 3u);
  EXPECT_EQ(scope("step")->kernel_ns, 7'000u);
  EXPECT_EQ(p.gpu.scopes.front().name, scope("step")->name);  // most GPU time first
  bool unmatched_said = false;
  for (const Diagnostic& d : p.diagnostics)
    if (d.kind == DiagnosticKind::GpuTracing && d.count == 1) unmatched_said = true;
  EXPECT_TRUE(unmatched_said);
}

TEST(GpuModel, LaunchesFromUnknownThreadsFallBackToTheApiCallAndItsSpan) {
  Profiler profiler;
  auto gpu = std::make_shared<FakeGpu>();
  gpu->raw.traced = true;
  std::uint64_t launch = 0;
  std::int64_t tid = 0;
  {
    NNPROF_SCOPE_IN(profiler, "load");
    launch = detail::monotonic_ns();
    tid = profiler.snapshot().threads.at(0).os_tid;
  }
  // No launch record (as when spans are off): the API call names the thread and time.
  detail::RawGpuApiCall call;
  call.os_tid = tid;
  call.name = "cudaMemcpyAsync";
  call.correlation_id = 5;
  call.start = launch;
  call.end = launch + 100;
  gpu->raw.api_calls.push_back(call);
  gpu->raw.memcpys.push_back(GpuMemcpy{MemcpyKind::HtoD, GpuMemoryKind::Pinned, GpuMemoryKind::Device, true, 4096});
  detail::RawGpuOp op;
  op.kind = GpuOpKind::Memcpy;
  op.context = 1;
  op.stream = 3;
  op.start = launch + 1'000;
  op.end = launch + 2'000;
  op.correlation_id = 5;
  gpu->raw.ops.push_back(op);
  // A block allocated and another released that tracing never saw allocated.
  gpu->raw.memory.push_back(detail::RawGpuMemory{launch + 50, 0, true, false, GpuMemoryKind::Device, 0x1000, 1 << 20, 5, ""});
  gpu->raw.memory.push_back(detail::RawGpuMemory{launch + 60, 0, false, false, GpuMemoryKind::Device, 0x9000, 64, 0, ""});
  profiler.core().session->set_gpu_source(gpu);
  const Profile p = profiler.snapshot();
  ASSERT_EQ(p.gpu.ops.size(), 1u);
  const GpuOp& o = p.gpu.ops[0];
  EXPECT_EQ(p.str(o.name), "Memcpy HtoD");
  EXPECT_EQ(o.launch.thread, 0u);
  ASSERT_NE(o.launch.api, kNone);
  EXPECT_EQ(p.str(p.gpu.api_calls[o.launch.api].name), "cudaMemcpyAsync");
  ASSERT_NE(o.launch.span, kNone);
  EXPECT_EQ(p.str(p.call_tree[o.launch.node].name), "load");
  EXPECT_EQ(p.gpu.summary.unmatched_correlations, 1u);  // the release had no call
  EXPECT_EQ(p.gpu.summary.untracked_frees, 1u);
  ASSERT_EQ(p.gpu.memory_events.size(), 2u);
  EXPECT_EQ(p.str(p.call_tree[p.gpu.memory_events[0].launch.node].name), "load");
  ASSERT_FALSE(p.gpu.scopes.empty());
  EXPECT_EQ(p.gpu.scopes[0].memcpy_bytes, 4096u);
  EXPECT_EQ(p.gpu.scopes[0].alloc_bytes, 1u << 20);
}

TEST(GpuModel, NoGpuSourceMeansNoGpuPart) {
  Profiler profiler;
  { NNPROF_SCOPE_IN(profiler, "cpu only"); }
  const Profile p = profiler.snapshot();
  EXPECT_FALSE(p.gpu.summary.traced);
  EXPECT_TRUE(p.gpu.ops.empty());
  EXPECT_EQ(p.gpu, GpuProfile{});
}

TEST(GpuModel, CudaProfilerWithoutDriverSaysWhyAndProfilingGoesOn) {
  Profiler profiler;
  CudaProfiler gpu(profiler);
  if (gpu.status().tracing()) GTEST_SKIP() << "a GPU is present: " << gpu.status().message;
  EXPECT_FALSE(gpu.active());
  EXPECT_NE(gpu.status().message.find("GPU collection disabled"), std::string::npos) << gpu.status().message;
  { NNPROF_SCOPE_IN(profiler, "still recorded"); }
  gpu.stop();  // a stop without a start is harmless
  const Profile p = profiler.snapshot();
  EXPECT_NE(p.find_scope("still recorded"), nullptr);
  EXPECT_FALSE(p.gpu.summary.traced);
  EXPECT_THROW(CudaTimer timer, Error);
}

}  // namespace
}  // namespace nnprof
