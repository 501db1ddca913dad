// The GPU bottlenecks (GpuIdle, GpuLaunchBound, PageableMemcpy, LowOccupancy,
// GpuBelowRoofline) on GPU profiles built by hand: each fires on a profile made to trigger it,
// with the expected value, and stays silent just below its threshold.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/bottlenecks.hpp"
#include "analysis/gpu_findings.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {
namespace {

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kMs = 1'000'000;

bool has_text(const std::string& haystack, const std::string& needle) {
  return haystack.find(needle) != std::string::npos;
}

// A traced GPU profile, filled op by op, with a call tree whose nodes carry the given names.
struct Builder {
  Profile p;

  Builder() {
    p.gpu.summary.traced = true;
    p.meta.duration_ns = 1'000 * kUs;
    p.call_tree.push_back(CallTreeNode{});
  }
  StringId intern(const std::string& s) {
    for (std::size_t i = 0; i < p.strings.size(); ++i)
      if (p.strings[i] == s) return static_cast<StringId>(i);
    p.strings.push_back(s);
    return static_cast<StringId>(p.strings.size() - 1);
  }
  std::uint32_t node(const std::string& name, std::uint32_t parent = 0, std::uint64_t bytes = 0) {
    CallTreeNode n;
    n.id = static_cast<std::uint32_t>(p.call_tree.size());
    n.parent = parent;
    n.name = intern(name);
    n.depth = p.call_tree[parent].depth + 1;
    n.bytes = bytes;
    p.call_tree[parent].children.push_back(n.id);
    p.call_tree.push_back(n);
    return n.id;
  }
  GpuDevice& device(std::uint32_t id, const std::string& name, std::uint64_t bandwidth = 0) {
    GpuDevice d;
    d.id = id;
    d.name = name;
    d.bandwidth_bytes_per_s = bandwidth;
    p.gpu.devices.push_back(d);
    return p.gpu.devices.back();
  }
  std::uint32_t stream(std::uint32_t device, std::uint32_t id) {
    p.gpu.streams.push_back(GpuStream{device, 1, id, 0, false});
    return static_cast<std::uint32_t>(p.gpu.streams.size() - 1);
  }
  GpuOp& kernel(std::uint32_t stream, std::uint64_t start, std::uint64_t end, const std::string& name = "k",
                const GpuKernel& k = {}) {
    GpuOp op;
    op.kind = GpuOpKind::Kernel;
    op.stream = stream;
    op.name = intern(name);
    op.start_ns = start;
    op.end_ns = end;
    op.detail = static_cast<std::uint32_t>(p.gpu.kernels.size());
    p.gpu.kernels.push_back(k);
    p.gpu.ops.push_back(op);
    return p.gpu.ops.back();
  }
  GpuOp& copy(std::uint32_t stream, std::uint64_t start, std::uint64_t end, MemcpyKind kind, GpuMemoryKind src,
              GpuMemoryKind dst, bool async, std::uint64_t bytes) {
    GpuOp op;
    op.kind = GpuOpKind::Memcpy;
    op.stream = stream;
    op.name = intern("Memcpy");
    op.start_ns = start;
    op.end_ns = end;
    op.detail = static_cast<std::uint32_t>(p.gpu.memcpys.size());
    GpuMemcpy m;
    m.kind = kind;
    m.src = src;
    m.dst = dst;
    m.async = async;
    m.bytes = bytes;
    p.gpu.memcpys.push_back(m);
    p.gpu.ops.push_back(op);
    return p.gpu.ops.back();
  }
};

std::vector<Bottleneck> of_type(const Profile& p, BottleneckType type, const BottleneckThresholds& t = {}) {
  std::vector<Bottleneck> out;
  for (const Bottleneck& b : analyze_bottlenecks(p, t))
    if (b.type == type) out.push_back(b);
  return out;
}

bool any_gpu_finding(const Profile& p) {
  for (const Bottleneck& b : analyze_bottlenecks(p)) {
    switch (b.type) {
      case BottleneckType::GpuIdle:
      case BottleneckType::GpuLaunchBound:
      case BottleneckType::PageableMemcpy:
      case BottleneckType::LowOccupancy:
      case BottleneckType::GpuBelowRoofline: return true;
      default: break;
    }
  }
  return false;
}

// ---- GpuIdle --------------------------------------------------------------------------

// One device, active over [0, 1000 µs):
//   stream 1: k0 [0,300)          launched at 1 µs   from train_step
//   stream 2: k1 [400,500)        launched at 100 µs from train_step: a 100 µs gap, but the
//                                 work was queued before it began (a dependency, not the host)
//   stream 1: k2 [500+gap, 1000)  launched 5 µs before it starts from train_step > load_batch:
//                                 the GPU waited for the host for `gap`
Profile idle_profile(std::uint64_t gap) {
  Builder b;
  const std::uint32_t step = b.node("train_step");
  const std::uint32_t load = b.node("load_batch", step);
  b.device(0, "Test GPU");
  const std::uint32_t s1 = b.stream(0, 1);
  const std::uint32_t s2 = b.stream(0, 2);
  GpuOp& k0 = b.kernel(s1, 0, 300 * kUs);
  k0.launch.time_ns = 1 * kUs;
  k0.launch.node = step;
  GpuOp& k1 = b.kernel(s2, 400 * kUs, 500 * kUs);
  k1.launch.time_ns = 100 * kUs;
  k1.launch.node = step;
  GpuOp& k2 = b.kernel(s1, 500 * kUs + gap, 1'000 * kUs);
  k2.launch.time_ns = 500 * kUs + gap - 5 * kUs;
  k2.launch.node = load;
  return b.p;
}

TEST(GpuIdle, FiresWhenHostBoundGapsPassTheShareOfTheActiveWindow) {
  const auto found = of_type(idle_profile(250 * kUs), BottleneckType::GpuIdle);
  ASSERT_EQ(found.size(), 1u);
  const Bottleneck& b = found[0];
  EXPECT_STREQ(to_string(b.type), "gpu_idle");
  EXPECT_DOUBLE_EQ(b.value, 0.25);  // 250 µs of 1000 µs; the 100 µs dependency gap is not counted
  EXPECT_DOUBLE_EQ(b.threshold, 0.20);
  EXPECT_EQ(b.severity, BottleneckSeverity::Medium);
  EXPECT_EQ(b.scope, "load_batch");
  EXPECT_TRUE(has_text(b.description, "GPU 0 (Test GPU)")) << b.description;
  EXPECT_TRUE(has_text(b.description, "25.0%")) << b.description;
  EXPECT_TRUE(has_text(b.description, "train_step > load_batch")) << b.description;
  EXPECT_TRUE(has_text(b.suggestion, "CUDA Graph")) << b.suggestion;
}

TEST(GpuIdle, SilentAtTheThresholdAndForShortGaps) {
  // 200 µs is exactly 20%: not past it (counting the dependency gap would make it 30%).
  EXPECT_TRUE(of_type(idle_profile(200 * kUs), BottleneckType::GpuIdle).empty());
  BottleneckThresholds t;
  t.gpu_idle_gap_ns = 250 * kUs;  // the gap must be longer than this
  EXPECT_TRUE(of_type(idle_profile(250 * kUs), BottleneckType::GpuIdle, t).empty());
  t.gpu_idle_gap_ns = 249 * kUs;
  EXPECT_EQ(of_type(idle_profile(250 * kUs), BottleneckType::GpuIdle, t).size(), 1u);
}

TEST(GpuIdle, UnknownLaunchTimeNeverCountsAsHostBound) {
  Profile p = idle_profile(400 * kUs);
  p.gpu.ops[2].launch.time_ns = 0;
  EXPECT_TRUE(of_type(p, BottleneckType::GpuIdle).empty());
}

// ---- GpuLaunchBound -------------------------------------------------------------------

// `kernels` kernels back to back on one stream, the first `tiny` of 5 µs and the rest of
// 50 µs, each launched by a 8 µs cudaLaunchKernel from "decode".
Profile launch_profile(std::uint64_t kernels, std::uint64_t tiny) {
  Builder b;
  const std::uint32_t decode = b.node("decode");
  b.device(0, "Test GPU");
  const std::uint32_t s = b.stream(0, 1);
  std::uint64_t t = 0;
  for (std::uint64_t i = 0; i < kernels; ++i) {
    const std::uint64_t d = i < tiny ? 5 * kUs : 50 * kUs;
    GpuApiCall call;
    call.name = b.intern("cudaLaunchKernel");
    call.start_ns = t;
    call.end_ns = t + 8 * kUs;
    b.p.gpu.api_calls.push_back(call);
    GpuOp& op = b.kernel(s, t + 10 * kUs, t + 10 * kUs + d);
    op.launch.api = static_cast<std::uint32_t>(b.p.gpu.api_calls.size() - 1);
    op.launch.time_ns = t;
    op.launch.node = decode;
    t += 10 * kUs + d;
  }
  b.p.meta.duration_ns = t;
  return b.p;
}

TEST(GpuLaunchBound, FiresWhenMostOfManyKernelsAreTiny) {
  const auto found = of_type(launch_profile(1'000, 501), BottleneckType::GpuLaunchBound);
  ASSERT_EQ(found.size(), 1u);
  const Bottleneck& b = found[0];
  EXPECT_STREQ(to_string(b.type), "gpu_launch_bound");
  EXPECT_DOUBLE_EQ(b.value, 0.501);
  EXPECT_DOUBLE_EQ(b.threshold, 0.50);
  EXPECT_EQ(b.severity, BottleneckSeverity::Medium);
  EXPECT_EQ(b.scope, "decode");
  EXPECT_TRUE(has_text(b.description, "1,000 kernels")) << b.description;
  EXPECT_TRUE(has_text(b.description, "median kernel took 5")) << b.description;   // 5 µs
  EXPECT_TRUE(has_text(b.description, "launch call took 8")) << b.description;     // 8 µs
  EXPECT_TRUE(has_text(b.suggestion, "CUDA Graph")) << b.suggestion;
  // All tiny: the long ones are far below what the threshold allows.
  EXPECT_EQ(of_type(launch_profile(1'000, 1'000), BottleneckType::GpuLaunchBound).at(0).severity,
            BottleneckSeverity::High);
}

TEST(GpuLaunchBound, SilentAtHalfAndBelowTheKernelCount) {
  EXPECT_TRUE(of_type(launch_profile(1'000, 500), BottleneckType::GpuLaunchBound).empty());
  EXPECT_TRUE(of_type(launch_profile(999, 999), BottleneckType::GpuLaunchBound).empty());
}

// ---- PageableMemcpy -------------------------------------------------------------------

// One device busy over [0, 1000 µs) with a kernel on stream 1; on stream 2 a pageable copy of
// `pageable_us`, a synchronous copy from pinned memory of 30 µs, an asynchronous pinned copy
// (250 kB in 10 µs) and a synchronous device-to-device copy of 100 µs (neither counts).
Profile copy_profile(std::uint64_t pageable_us) {
  Builder b;
  const std::uint32_t load = b.node("load_batch");
  b.device(0, "Test GPU");
  const std::uint32_t s1 = b.stream(0, 1);
  const std::uint32_t s2 = b.stream(0, 2);
  b.kernel(s1, 0, 1'000 * kUs);
  b.copy(s2, 0, pageable_us * kUs, MemcpyKind::HtoD, GpuMemoryKind::Pageable, GpuMemoryKind::Device, true,
         pageable_us * 10'000)
      .launch.node = load;
  b.copy(s2, 100 * kUs, 130 * kUs, MemcpyKind::DtoH, GpuMemoryKind::Device, GpuMemoryKind::Pinned, false, 300'000)
      .launch.node = load;
  b.copy(s2, 200 * kUs, 210 * kUs, MemcpyKind::HtoD, GpuMemoryKind::Pinned, GpuMemoryKind::Device, true, 250'000);
  b.copy(s2, 300 * kUs, 400 * kUs, MemcpyKind::DtoD, GpuMemoryKind::Device, GpuMemoryKind::Device, false, 1'000'000);
  return b.p;
}

TEST(PageableMemcpy, FiresWhenSlowCopiesPassTheShareOfBusyTime) {
  const auto found = of_type(copy_profile(30), BottleneckType::PageableMemcpy);
  ASSERT_EQ(found.size(), 1u);
  const Bottleneck& b = found[0];
  EXPECT_STREQ(to_string(b.type), "gpu_pageable_memcpy");
  EXPECT_DOUBLE_EQ(b.value, 0.06);  // 30 + 30 µs of 1000 µs busy
  EXPECT_DOUBLE_EQ(b.threshold, 0.05);
  EXPECT_EQ(b.severity, BottleneckSeverity::Medium);
  EXPECT_EQ(b.scope, "load_batch");
  EXPECT_TRUE(has_text(b.description, "2 copies (1 from or to pageable memory, 1 synchronous)")) << b.description;
  EXPECT_TRUE(has_text(b.description, "10 GB/s")) << b.description;  // 600 kB in 60 µs
  EXPECT_TRUE(has_text(b.description, "25 GB/s")) << b.description;  // the pinned asynchronous copy
  EXPECT_TRUE(has_text(b.suggestion, "cudaMemcpyAsync")) << b.suggestion;
  EXPECT_TRUE(has_text(b.suggestion, "cudaMallocHost")) << b.suggestion;
}

TEST(PageableMemcpy, SilentAtTheThreshold) {
  // 20 + 30 µs is 5%: not past it (the 100 µs device-to-device copy would make it 15%).
  EXPECT_TRUE(of_type(copy_profile(20), BottleneckType::PageableMemcpy).empty());
}

// ---- LowOccupancy ---------------------------------------------------------------------

// One device with H100-like limits: `gemm_launches` launches of gemm (256 threads, 128
// registers per thread, 10 µs each) at occupancy `occupancy`, and relu (900 µs) at 0.9.
Profile occupancy_profile(double occupancy, std::uint64_t gemm_launches = 10) {
  Builder b;
  GpuDevice& d = b.device(0, "Test GPU");
  d.max_warps_per_sm = 64;
  d.max_blocks_per_sm = 32;
  d.max_registers_per_sm = 65'536;
  d.max_shared_bytes_per_sm = 228 * 1024;
  const std::uint32_t s = b.stream(0, 1);
  GpuKernel gemm;
  gemm.block[0] = 256;
  gemm.block[1] = gemm.block[2] = 1;
  gemm.registers_per_thread = 128;
  gemm.occupancy = occupancy;
  std::uint64_t t = 0;
  for (std::uint64_t i = 0; i < gemm_launches; ++i, t += 10 * kUs) b.kernel(s, t, t + 10 * kUs, "gemm", gemm);
  GpuKernel relu;
  relu.block[0] = 128;
  relu.block[1] = relu.block[2] = 1;
  relu.registers_per_thread = 16;
  relu.occupancy = 0.9;
  b.kernel(s, t, t + 900 * kUs, "relu", relu);
  return b.p;
}

TEST(LowOccupancy, FiresForAConfigurationWithEnoughKernelTime) {
  const auto found = of_type(occupancy_profile(0.125), BottleneckType::LowOccupancy);
  ASSERT_EQ(found.size(), 1u);
  const Bottleneck& b = found[0];
  EXPECT_STREQ(to_string(b.type), "gpu_low_occupancy");
  EXPECT_EQ(b.scope, "gemm");
  EXPECT_DOUBLE_EQ(b.value, 0.125);
  EXPECT_DOUBLE_EQ(b.threshold, 0.25);
  EXPECT_EQ(b.severity, BottleneckSeverity::High);  // half the threshold
  EXPECT_TRUE(has_text(b.description, "12.5%")) << b.description;
  EXPECT_TRUE(has_text(b.description, "256×1×1")) << b.description;
  EXPECT_TRUE(has_text(b.description, "10 launches")) << b.description;
  EXPECT_TRUE(has_text(b.description, "10.0%")) << b.description;  // 100 of 1000 µs of kernel time
  // 65536 registers / (128 × 256) = 2 blocks per SM, below the warp (8) and block (32) limits.
  EXPECT_TRUE(has_text(b.suggestion, "Registers limit it")) << b.suggestion;
  EXPECT_TRUE(has_text(b.suggestion, "__launch_bounds__")) << b.suggestion;
}

TEST(LowOccupancy, SilentAtTheThresholdBelowTheTimeShareOrWhenUnknown) {
  EXPECT_TRUE(of_type(occupancy_profile(0.25), BottleneckType::LowOccupancy).empty());
  EXPECT_EQ(of_type(occupancy_profile(0.24), BottleneckType::LowOccupancy).size(), 1u);
  // 4 launches: 40 of 940 µs, 4.3% of the kernel time.
  EXPECT_TRUE(of_type(occupancy_profile(0.125, 4), BottleneckType::LowOccupancy).empty());
  EXPECT_EQ(of_type(occupancy_profile(0.125, 5), BottleneckType::LowOccupancy).size(), 1u);  // 50 of 950 µs
  EXPECT_TRUE(of_type(occupancy_profile(-1.0), BottleneckType::LowOccupancy).empty());
}

// ---- GpuBelowRoofline -----------------------------------------------------------------

// Device 0 at 2 TB/s (device 1 at 4 TB/s when `second_device`, running attention's kernels):
//   layer (a wrapper: its bytes are declared in attention) > attention: 1 GB in 10 ms of kernels
//   matmul: 2.1 GB in 10 ms of kernels (210 GB/s, 10.5% of 2 TB/s)
Profile roofline_profile(bool second_device = false) {
  Builder b;
  const std::uint32_t layer = b.node("layer");
  const std::uint32_t attention = b.node("attention", layer, 1'000'000'000);
  const std::uint32_t matmul = b.node("matmul", 0, 2'100'000'000);
  b.device(0, "Test GPU", 2'000'000'000'000);
  const std::uint32_t s0 = b.stream(0, 1);
  std::uint32_t s_attention = s0;
  if (second_device) {
    b.device(1, "Fast GPU", 4'000'000'000'000);
    s_attention = b.stream(1, 1);
  }
  b.kernel(s_attention, 0, 10 * kMs).launch.node = attention;
  b.kernel(s0, 10 * kMs, 20 * kMs).launch.node = matmul;
  b.p.meta.duration_ns = 40 * kMs;
  auto scope = [&](const std::string& name, std::uint64_t bytes) {
    ScopeStats s;
    s.name = b.intern(name);
    s.total_ns = 20 * kMs;
    s.bytes = bytes;
    s.flops = static_cast<double>(bytes);
    b.p.scopes.push_back(s);
    GpuScopeStats g;
    g.name = s.name;
    g.kernels = 1;
    g.kernel_ns = 10 * kMs;
    b.p.gpu.scopes.push_back(g);
  };
  scope("layer", 1'000'000'000);
  scope("attention", 1'000'000'000);
  scope("matmul", 2'100'000'000);
  return b.p;
}

TEST(GpuBelowRoofline, FiresForAScopeFarBelowTheMemoryRoof) {
  const auto found = of_type(roofline_profile(), BottleneckType::GpuBelowRoofline);
  ASSERT_EQ(found.size(), 1u);  // not matmul (10.5%), not the wrapper layer
  const Bottleneck& b = found[0];
  EXPECT_STREQ(to_string(b.type), "gpu_below_roofline");
  EXPECT_EQ(b.scope, "attention");
  EXPECT_DOUBLE_EQ(b.value, 0.05);  // 100 GB/s of 2 TB/s
  EXPECT_DOUBLE_EQ(b.threshold, 0.10);
  EXPECT_EQ(b.severity, BottleneckSeverity::High);
  EXPECT_TRUE(has_text(b.description, "100 GB/s")) << b.description;
  EXPECT_TRUE(has_text(b.description, "2 TB/s")) << b.description;
  EXPECT_TRUE(has_text(b.suggestion, "coalesced")) << b.suggestion;
}

TEST(GpuBelowRoofline, RoofOfTheDeviceThatRanTheKernels) {
  const auto found = of_type(roofline_profile(true), BottleneckType::GpuBelowRoofline);
  ASSERT_EQ(found.size(), 1u);
  EXPECT_EQ(found[0].scope, "attention");
  EXPECT_DOUBLE_EQ(found[0].value, 0.025);  // 100 GB/s of device 1's 4 TB/s
  EXPECT_TRUE(has_text(found[0].description, "GPU 1 (Fast GPU)")) << found[0].description;
}

TEST(GpuBelowRoofline, SilentJustAboveTheFraction) {
  BottleneckThresholds t;
  t.gpu_roofline_fraction = 0.05;  // attention is at exactly 5%
  EXPECT_TRUE(of_type(roofline_profile(), BottleneckType::GpuBelowRoofline, t).empty());
  t.gpu_roofline_fraction = 0.106;  // matmul at 10.5% now passes too
  EXPECT_EQ(of_type(roofline_profile(), BottleneckType::GpuBelowRoofline, t).size(), 2u);
}

TEST(GpuBelowRoofline, AdvisorExpectsTheRoofTargetGain) {
  const auto advice = recommend(roofline_profile());
  const auto it = std::find_if(advice.begin(), advice.end(), [](const Recommendation& r) {
    return r.scope == "attention" && has_text(r.title, "memory roof");
  });
  ASSERT_NE(it, advice.end());
  EXPECT_DOUBLE_EQ(it->part_speedup, 16.0);  // 80% target over 5%
  EXPECT_DOUBLE_EQ(it->time_share, 0.25);    // 10 ms of kernels in a 40 ms run
  EXPECT_DOUBLE_EQ(it->expected_speedup, amdahl_speedup(0.25, 16.0));
}

// ---- every kind -----------------------------------------------------------------------

TEST(GpuFindings, NoneWithoutGpuTracing) {
  for (Profile p : {idle_profile(250 * kUs), launch_profile(1'000, 1'000), copy_profile(30),
                    occupancy_profile(0.125), roofline_profile()}) {
    ASSERT_TRUE(any_gpu_finding(p));
    p.gpu.summary.traced = false;
    EXPECT_FALSE(any_gpu_finding(p));
    EXPECT_TRUE(analysis::gpu_bottlenecks(p).empty());
  }
  EXPECT_FALSE(any_gpu_finding(Profile{}));
}

TEST(GpuFindings, AdvisorTurnsEachIntoARecommendation) {
  for (const Profile& p : {idle_profile(250 * kUs), launch_profile(1'000, 1'000), copy_profile(30),
                           occupancy_profile(0.125)}) {
    const auto advice = recommend(p);
    ASSERT_FALSE(advice.empty());
    EXPECT_FALSE(advice.front().steps.empty());
    EXPECT_GT(advice.front().time_share, 0.0);
  }
}

TEST(GpuFindings, NoBottleneckSentenceNamesTheGpuThresholds) {
  Builder b;
  b.device(0, "Test GPU");
  b.kernel(b.stream(0, 1), 0, 100 * kUs);
  EXPECT_FALSE(any_gpu_finding(b.p));
  const std::string text = render::text_of(b.p, analysis::no_bottlenecks(b.p));
  EXPECT_TRUE(has_text(text, "no GPU waited for the host more than 20.0%")) << text;
  const std::string cpu_only = render::text_of(Profile{}, analysis::no_bottlenecks(Profile{}));
  EXPECT_FALSE(has_text(cpu_only, "GPU")) << cpu_only;
}

}  // namespace
}  // namespace nnprof
