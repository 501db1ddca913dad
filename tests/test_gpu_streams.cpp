// Stream, device, peer-to-peer and device-memory views of a GPU profile (nnprof::stream_report,
// nnprof::gpu_memory_report) and CudaTimer's statistics, on GPU profiles built by hand so that
// every interval, byte and sample is known exactly. No GPU is needed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "analysis/gpu_streams.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {
namespace {

constexpr std::uint64_t kUs = 1'000;

// A traced GPU profile, filled op by op.
struct GpuProfileBuilder {
  Profile p;

  GpuProfileBuilder() {
    p.gpu.summary.traced = true;
    p.meta.duration_ns = 1'000 * kUs;
  }
  StringId intern(const std::string& s) {
    p.strings.push_back(s);
    return static_cast<StringId>(p.strings.size() - 1);
  }
  void device(std::uint32_t id, const std::string& name) {
    GpuDevice d;
    d.id = id;
    d.name = name;
    p.gpu.devices.push_back(d);
  }
  std::uint32_t stream(std::uint32_t device, std::uint32_t id) {
    GpuStream s;
    s.device = device;
    s.stream = id;
    p.gpu.streams.push_back(s);
    return static_cast<std::uint32_t>(p.gpu.streams.size() - 1);
  }
  void kernel(std::uint32_t stream, std::uint64_t start, std::uint64_t end) {
    GpuOp op;
    op.kind = GpuOpKind::Kernel;
    op.stream = stream;
    op.start_ns = start;
    op.end_ns = end;
    op.detail = static_cast<std::uint32_t>(p.gpu.kernels.size());
    p.gpu.kernels.push_back(GpuKernel{});
    p.gpu.ops.push_back(op);
  }
  void copy(std::uint32_t stream, std::uint64_t start, std::uint64_t end, const GpuMemcpy& m) {
    GpuOp op;
    op.kind = GpuOpKind::Memcpy;
    op.stream = stream;
    op.start_ns = start;
    op.end_ns = end;
    op.detail = static_cast<std::uint32_t>(p.gpu.memcpys.size());
    p.gpu.memcpys.push_back(m);
    p.gpu.ops.push_back(op);
  }
  void counter(std::uint32_t device, const std::string& name, std::vector<std::pair<std::uint64_t, double>> points) {
    p.gpu.counters.push_back(GpuCounter{device, name, name == "nvml_memory_used" ? "bytes" : "percent", std::move(points)});
    p.gpu.summary.nvml = true;
  }
  void memory(std::uint64_t time, std::uint32_t device, bool alloc, std::uint64_t address, std::uint64_t bytes,
              std::uint32_t node = 0) {
    GpuMemoryEvent e;
    e.time_ns = time;
    e.device = device;
    e.alloc = alloc;
    e.address = address;
    e.bytes = bytes;
    e.launch.node = node;
    p.gpu.memory_events.push_back(e);
  }
};

GpuMemcpy copy_of(MemcpyKind kind, std::uint64_t bytes, std::uint32_t src_device = 0, std::uint32_t dst_device = 0) {
  GpuMemcpy m;
  m.kind = kind;
  m.bytes = bytes;
  m.src_device = src_device;
  m.dst_device = dst_device;
  return m;
}

// Device 0 ("Test GPU"): stream index 0 (CUPTI id 7) and index 1 (id 3); device 1 ("Idle GPU"):
// stream index 2 (id 1) with no work, only NVML samples. In microseconds:
//
//   stream 7:  kernels [0,100) and [50,150) (overlapping), copy [260,270), kernel [300,400)
//   stream 3:  kernels [100,250) and [380,500)
Profile two_streams() {
  GpuProfileBuilder b;
  b.device(0, "Test GPU");
  b.device(1, "Idle GPU");
  const std::uint32_t s7 = b.stream(0, 7);
  const std::uint32_t s3 = b.stream(0, 3);
  b.stream(1, 1);
  b.kernel(s7, 0, 100 * kUs);
  b.kernel(s7, 50 * kUs, 150 * kUs);
  b.copy(s7, 260 * kUs, 270 * kUs, copy_of(MemcpyKind::HtoD, 1 << 20));
  b.kernel(s7, 300 * kUs, 400 * kUs);
  b.kernel(s3, 100 * kUs, 250 * kUs);
  b.kernel(s3, 380 * kUs, 500 * kUs);
  b.counter(1, "nvml_gpu_utilization", {{0, 10.0}, {100, 20.0}, {200, 60.0}});
  b.counter(1, "nvml_memory_utilization", {{0, 5.0}, {100, 15.0}});
  b.counter(1, "nvml_memory_used", {{0, 1e9}, {100, 3e9}, {200, 2e9}});
  return b.p;
}

TEST(GpuStreams, IntervalUnionMergesOverlappingAndTouchingIntervals) {
  using analysis::Interval;
  EXPECT_EQ(analysis::interval_union({{5, 10}, {0, 3}, {3, 4}, {8, 12}, {20, 20}, {15, 18}}),
            (std::vector<Interval>{{0, 4}, {5, 12}, {15, 18}}));
  EXPECT_EQ(analysis::total_length({{0, 4}, {5, 12}, {15, 18}}), 14u);
  // Three tracks: [0,10) [5,15) [8,20): two or more busy over [5,15), all three over [8,10).
  const std::vector<std::vector<Interval>> tracks{{{0, 10}}, {{5, 15}}, {{8, 20}}};
  EXPECT_EQ(analysis::covered_by(tracks, 1), 20u);
  EXPECT_EQ(analysis::covered_by(tracks, 2), 10u);
  EXPECT_EQ(analysis::covered_by(tracks, 3), 2u);
}

TEST(GpuStreams, PerStreamBusyIdleGapsAndEfficiency) {
  const StreamReport r = stream_report(two_streams(), 60 * kUs);
  EXPECT_EQ(r.gap_threshold_ns, 60 * kUs);
  ASSERT_EQ(r.streams.size(), 3u);
  // By device, then CUPTI stream id.
  EXPECT_EQ(r.streams[0].stream_id, 3u);
  EXPECT_EQ(r.streams[0].stream, 1u);
  EXPECT_EQ(r.streams[1].stream_id, 7u);
  EXPECT_EQ(r.streams[2].device, 1u);

  // Stream 7: busy [0,150) [260,270) [300,400): the overlapping kernels count once.
  const StreamStats& s7 = r.streams[1];
  EXPECT_EQ(s7.ops, 4u);
  EXPECT_EQ(s7.kernels, 3u);
  EXPECT_EQ(s7.first_ns, 0u);
  EXPECT_EQ(s7.last_ns, 400 * kUs);
  EXPECT_EQ(s7.busy_ns, 260 * kUs);
  EXPECT_EQ(s7.idle_ns, 140 * kUs);
  EXPECT_EQ(s7.idle_gaps, 1u);  // 110 µs, not 30 µs
  EXPECT_EQ(s7.longest_gap_ns, 110 * kUs);
  EXPECT_DOUBLE_EQ(s7.efficiency, 0.65);

  const StreamStats& s3 = r.streams[0];
  EXPECT_EQ(s3.ops, 2u);
  EXPECT_EQ(s3.first_ns, 100 * kUs);
  EXPECT_EQ(s3.last_ns, 500 * kUs);
  EXPECT_EQ(s3.busy_ns, 270 * kUs);
  EXPECT_EQ(s3.idle_ns, 130 * kUs);
  EXPECT_EQ(s3.idle_gaps, 1u);
  EXPECT_EQ(s3.longest_gap_ns, 130 * kUs);
  EXPECT_DOUBLE_EQ(s3.efficiency, 270.0 / 400.0);

  // A stream with no work: all zero.
  EXPECT_EQ(r.streams[2].ops, 0u);
  EXPECT_EQ(r.streams[2].busy_ns, 0u);
  EXPECT_EQ(r.streams[2].efficiency, 0.0);

  // A higher threshold: no gap of stream 7 passes it.
  EXPECT_EQ(stream_report(two_streams(), 110 * kUs).streams[1].idle_gaps, 0u);
  EXPECT_EQ(stream_report(two_streams(), 109 * kUs).streams[1].idle_gaps, 1u);
}

TEST(GpuStreams, PerDeviceBusyKernelBusyOverlapAndNvml) {
  const StreamReport r = stream_report(two_streams());
  EXPECT_EQ(r.gap_threshold_ns, 20 * kUs);
  ASSERT_EQ(r.devices.size(), 2u);
  const DeviceStats& d0 = r.devices[0];
  EXPECT_EQ(d0.device, 0u);
  EXPECT_EQ(d0.name, "Test GPU");
  EXPECT_EQ(d0.kernels, 5u);
  // All ops: [0,250) [260,270) [300,500).
  EXPECT_EQ(d0.busy_ns, 460 * kUs);
  // Kernels only: [0,250) [300,500).
  EXPECT_EQ(d0.kernel_busy_ns, 450 * kUs);
  EXPECT_EQ(d0.active_ns, 500 * kUs);
  EXPECT_DOUBLE_EQ(d0.kernel_busy_fraction, 0.45);
  // Streams 7 and 3 both busy over [100,150) and [380,400); the overlap inside stream 7
  // ([50,100)) is one stream, not two.
  EXPECT_EQ(d0.overlap_ns, 70 * kUs);
  EXPECT_EQ(d0.memcpy_bytes, 1u << 20);
  EXPECT_EQ(d0.nvml_gpu_utilization_mean, -1.0);
  EXPECT_EQ(d0.nvml_gpu_utilization_max, -1.0);
  EXPECT_EQ(d0.nvml_memory_utilization_mean, -1.0);
  EXPECT_EQ(d0.nvml_memory_used_max, 0u);

  const DeviceStats& d1 = r.devices[1];
  EXPECT_EQ(d1.device, 1u);
  EXPECT_EQ(d1.name, "Idle GPU");
  EXPECT_EQ(d1.busy_ns, 0u);
  EXPECT_EQ(d1.active_ns, 0u);
  EXPECT_EQ(d1.overlap_ns, 0u);
  EXPECT_DOUBLE_EQ(d1.nvml_gpu_utilization_mean, 30.0);
  EXPECT_DOUBLE_EQ(d1.nvml_gpu_utilization_max, 60.0);
  EXPECT_DOUBLE_EQ(d1.nvml_memory_utilization_mean, 10.0);
  EXPECT_EQ(d1.nvml_memory_used_max, 3'000'000'000u);
  EXPECT_TRUE(r.peers.empty());
}

TEST(GpuStreams, OverlapOfThreeStreamsIsTimeWithTwoOrMoreBusy) {
  GpuProfileBuilder b;
  b.device(0, "GPU");
  const std::uint32_t s1 = b.stream(0, 1);
  const std::uint32_t s2 = b.stream(0, 2);
  const std::uint32_t s3 = b.stream(0, 3);
  b.kernel(s1, 0, 100 * kUs);
  b.kernel(s2, 50 * kUs, 150 * kUs);
  b.kernel(s3, 80 * kUs, 200 * kUs);
  const DeviceStats d = stream_report(b.p).devices.at(0);
  // Two or more busy over [50,150).
  EXPECT_EQ(d.overlap_ns, 100 * kUs);
  EXPECT_EQ(d.busy_ns, 200 * kUs);
  EXPECT_EQ(d.kernels, 3u);
}

TEST(GpuStreams, PeerToPeerBandwidthPerDirection) {
  GpuProfileBuilder b;
  b.device(0, "A");
  b.device(1, "B");
  const std::uint32_t s0 = b.stream(0, 1);
  const std::uint32_t s1 = b.stream(1, 1);
  b.copy(s0, 0, 100 * kUs, copy_of(MemcpyKind::PtoP, 1'000'000, 0, 1));
  b.copy(s0, 200 * kUs, 300 * kUs, copy_of(MemcpyKind::PtoP, 1'000'000, 0, 1));
  b.copy(s1, 0, 100 * kUs, copy_of(MemcpyKind::PtoP, 4'000'000, 1, 0));
  b.copy(s1, 400 * kUs, 500 * kUs, copy_of(MemcpyKind::HtoD, 9'000'000));  // not peer-to-peer
  const StreamReport r = stream_report(b.p);
  ASSERT_EQ(r.peers.size(), 2u);
  EXPECT_EQ(r.peers[0].src_device, 0u);
  EXPECT_EQ(r.peers[0].dst_device, 1u);
  EXPECT_EQ(r.peers[0].copies, 2u);
  EXPECT_EQ(r.peers[0].bytes, 2'000'000u);
  EXPECT_EQ(r.peers[0].busy_ns, 200 * kUs);
  EXPECT_DOUBLE_EQ(r.peers[0].gbytes_per_s, 10.0);  // 2 MB in 200 µs
  EXPECT_EQ(r.peers[1].src_device, 1u);
  EXPECT_EQ(r.peers[1].dst_device, 0u);
  EXPECT_EQ(r.peers[1].copies, 1u);
  EXPECT_DOUBLE_EQ(r.peers[1].gbytes_per_s, 40.0);  // 4 MB in 100 µs
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].memcpy_bytes, 2'000'000u);
  EXPECT_EQ(r.devices[1].memcpy_bytes, 13'000'000u);
  EXPECT_EQ(r.devices[0].kernels, 0u);
}

TEST(GpuStreams, UntracedProfileHasEmptyViews) {
  Profile p = two_streams();
  p.gpu.summary.traced = false;
  const StreamReport r = stream_report(p, 5 * kUs);
  EXPECT_EQ(r.gap_threshold_ns, 5 * kUs);
  EXPECT_TRUE(r.streams.empty());
  EXPECT_TRUE(r.devices.empty());
  EXPECT_TRUE(r.peers.empty());
  const GpuMemoryReport m = gpu_memory_report(p);
  EXPECT_TRUE(m.devices.empty());
  EXPECT_TRUE(m.timeline.empty());
}

// Device 0: +1000 (node 1), +3000 (node 2), -1000, a release of memory never seen allocated,
// +500 (node 2). Device 1, at the same address as device 0's first block: +7000 (node 1),
// -7000, +200 (node 3). NVML: device 0 peaks at 9000 bytes at 25 (first of two equal
// samples), device 1 at 5000 at 16, below what the allocations held then.
Profile memory_replay() {
  GpuProfileBuilder b;
  b.device(0, "A");
  b.device(1, "B");
  b.memory(10, 0, true, 0x100, 1000, 1);
  b.memory(15, 1, true, 0x100, 7000, 1);
  b.memory(20, 0, true, 0x200, 3000, 2);
  b.memory(30, 0, false, 0x100, 1000);
  b.memory(40, 0, false, 0x999, 64);
  b.memory(50, 0, true, 0x300, 500, 2);
  b.memory(60, 1, false, 0x100, 7000);
  b.memory(70, 1, true, 0x400, 200, 3);
  b.counter(0, "nvml_memory_used", {{5, 2000.0}, {25, 9000.0}, {45, 9000.0}, {55, 8000.0}});
  b.counter(1, "nvml_memory_used", {{16, 5000.0}});
  return b.p;
}

TEST(GpuMemory, ReplayPeaksCountsAndTimeline) {
  const GpuMemoryReport r = gpu_memory_report(memory_replay());
  ASSERT_EQ(r.devices.size(), 2u);
  const GpuDeviceMemory& d0 = r.devices[0];
  EXPECT_EQ(d0.device, 0u);
  EXPECT_EQ(d0.peak_bytes, 4000u);
  EXPECT_EQ(d0.peak_time_ns, 20u);
  EXPECT_EQ(d0.live_bytes, 3500u);
  EXPECT_EQ(d0.alloc_count, 3u);
  EXPECT_EQ(d0.free_count, 1u);  // the untracked release is not one of them
  const GpuDeviceMemory& d1 = r.devices[1];
  EXPECT_EQ(d1.peak_bytes, 7000u);
  EXPECT_EQ(d1.peak_time_ns, 15u);
  EXPECT_EQ(d1.live_bytes, 200u);
  EXPECT_EQ(d1.alloc_count, 2u);
  EXPECT_EQ(d1.free_count, 1u);

  const std::vector<std::tuple<std::uint64_t, std::uint32_t, std::uint64_t>> expected{
      {10, 0, 1000}, {15, 1, 7000}, {20, 0, 4000}, {30, 0, 3000},
      {40, 0, 3000}, {50, 0, 3500}, {60, 1, 0},    {70, 1, 200}};
  ASSERT_EQ(r.timeline.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    EXPECT_EQ(r.timeline[i].time_ns, std::get<0>(expected[i])) << i;
    EXPECT_EQ(r.timeline[i].device, std::get<1>(expected[i])) << i;
    EXPECT_EQ(r.timeline[i].allocated_bytes, std::get<2>(expected[i])) << i;
  }
  EXPECT_EQ(r.untracked_frees, 1u);
}

TEST(GpuMemory, LeaksGroupedByDeviceAndNodeLargestFirst) {
  const GpuMemoryReport r = gpu_memory_report(memory_replay());
  ASSERT_EQ(r.leaks.size(), 2u);
  EXPECT_EQ(r.leaks[0].device, 0u);
  EXPECT_EQ(r.leaks[0].node, 2u);
  EXPECT_EQ(r.leaks[0].blocks, 2u);
  EXPECT_EQ(r.leaks[0].bytes, 3500u);
  EXPECT_EQ(r.leaks[1].device, 1u);
  EXPECT_EQ(r.leaks[1].node, 3u);
  EXPECT_EQ(r.leaks[1].blocks, 1u);
  EXPECT_EQ(r.leaks[1].bytes, 200u);
}

TEST(GpuMemory, UnexplainedBytesAtNvmlMaximumClampedAtZero) {
  const GpuMemoryReport r = gpu_memory_report(memory_replay());
  // Device 0: NVML's 9000 at 25, when the allocations held 4000.
  EXPECT_EQ(r.devices[0].nvml_used_max, 9000u);
  EXPECT_EQ(r.devices[0].unexplained_bytes, 5000u);
  // Device 1: 5000 at 16 while 7000 were allocated: nothing unexplained.
  EXPECT_EQ(r.devices[1].nvml_used_max, 5000u);
  EXPECT_EQ(r.devices[1].unexplained_bytes, 0u);

  Profile without = memory_replay();
  without.gpu.counters.clear();
  const GpuMemoryReport none = gpu_memory_report(without);
  EXPECT_EQ(none.devices[0].nvml_used_max, 0u);
  EXPECT_EQ(none.devices[0].unexplained_bytes, 0u);
}

TEST(GpuMemory, UntrackedFreesTakeTheLargerOfReplayAndSummary) {
  Profile p = memory_replay();
  p.gpu.summary.untracked_frees = 5;  // the builder saw (and dropped) more than the replay sees
  EXPECT_EQ(gpu_memory_report(p).untracked_frees, 5u);
  p.gpu.summary.untracked_frees = 1;  // the same release, counted by both: not twice
  EXPECT_EQ(gpu_memory_report(p).untracked_frees, 1u);
}

TEST(GpuMemory, AllocationAtALiveAddressReplacesTheBlock) {
  GpuProfileBuilder b;
  b.memory(10, 0, true, 0x100, 100, 1);
  b.memory(20, 0, true, 0x100, 300, 4);
  const GpuMemoryReport r = gpu_memory_report(b.p);
  ASSERT_EQ(r.devices.size(), 1u);
  EXPECT_EQ(r.devices[0].live_bytes, 300u);
  EXPECT_EQ(r.devices[0].peak_bytes, 300u);
  EXPECT_EQ(r.devices[0].peak_time_ns, 20u);
  EXPECT_EQ(r.devices[0].alloc_count, 2u);
  ASSERT_EQ(r.leaks.size(), 1u);
  EXPECT_EQ(r.leaks[0].node, 4u);
  EXPECT_EQ(r.leaks[0].blocks, 1u);
  EXPECT_EQ(r.leaks[0].bytes, 300u);
}

TEST(CudaTimingStatistics, MeanSampleStdMinMaxTotal) {
  const CudaTiming t = timing_statistics("matmul", {1.0, 2.0, 3.0, 4.0});
  EXPECT_EQ(t.name, "matmul");
  EXPECT_EQ(t.count, 4u);
  EXPECT_DOUBLE_EQ(t.mean_ms, 2.5);
  // Squared deviations 2.25 + 0.25 + 0.25 + 2.25 = 5, over n - 1 = 3.
  EXPECT_DOUBLE_EQ(t.std_ms, std::sqrt(5.0 / 3.0));
  EXPECT_DOUBLE_EQ(t.min_ms, 1.0);
  EXPECT_DOUBLE_EQ(t.max_ms, 4.0);
  EXPECT_DOUBLE_EQ(t.total_ms, 10.0);

  const CudaTiming one = timing_statistics("once", {0.75});
  EXPECT_EQ(one.count, 1u);
  EXPECT_DOUBLE_EQ(one.mean_ms, 0.75);
  EXPECT_EQ(one.std_ms, 0.0);
  EXPECT_DOUBLE_EQ(one.min_ms, 0.75);
  EXPECT_DOUBLE_EQ(one.max_ms, 0.75);

  const CudaTiming none = timing_statistics("never", {});
  EXPECT_EQ(none.name, "never");
  EXPECT_EQ(none.count, 0u);
  EXPECT_EQ(none.mean_ms, 0.0);
  EXPECT_EQ(none.total_ms, 0.0);
}

TEST(GpuStatusNames, EveryCodeHasItsName) {
  EXPECT_STREQ(to_string(GpuStatusCode::Tracing), "tracing");
  EXPECT_STREQ(to_string(GpuStatusCode::Stopped), "stopped");
  EXPECT_STREQ(to_string(GpuStatusCode::NotBuilt), "not_built");
  EXPECT_STREQ(to_string(GpuStatusCode::NoDriver), "no_driver");
  EXPECT_STREQ(to_string(GpuStatusCode::NoDevice), "no_device");
  EXPECT_STREQ(to_string(GpuStatusCode::NoCupti), "no_cupti");
  EXPECT_STREQ(to_string(GpuStatusCode::CuptiError), "cupti_error");
  EXPECT_STREQ(to_string(GpuStatusCode::AlreadyRunning), "already_running");
}

}  // namespace
}  // namespace nnprof
