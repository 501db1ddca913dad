// CUPTI activity records built in the test (no GPU needed) parsed into RawGpu; buffers walked
// with a fake iterator; the clock map; the occupancy estimate.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "collect/gpu/activity_parse.hpp"
#include "collect/gpu/gpu_clock.hpp"

namespace nnprof::detail {
namespace {

ParseContext context() {
  ParseContext ctx;
  ctx.api_name = [](bool driver, std::uint32_t cbid) {
    return driver ? "cuLaunchKernel" : (cbid == 211 ? "cudaLaunchKernel" : "cudaMemcpyAsync");
  };
  return ctx;
}

template <class T>
const CUpti_Activity& as_activity(const T& r) {
  return reinterpret_cast<const CUpti_Activity&>(r);
}

TEST(GpuParse, KernelWithDemangledNameAndLaunchConfiguration) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "_Z7vec_addPKfS0_Pfi";
  k.start = 1'000'000;
  k.end = 1'250'000;
  k.deviceId = 1;
  k.contextId = 7;
  k.streamId = 13;
  k.gridX = 256, k.gridY = 2, k.gridZ = 1;
  k.blockX = 128, k.blockY = 1, k.blockZ = 1;
  k.registersPerThread = 40;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 2048;
  k.localMemoryPerThread = 16;
  k.correlationId = 42;
  ParseContext ctx = context();
  RawGpu raw;
  ASSERT_EQ(parse_record(as_activity(k), ctx, raw), ParseResult::Parsed);
  ASSERT_EQ(raw.ops.size(), 1u);
  const RawGpuOp& op = raw.ops[0];
  EXPECT_EQ(op.kind, GpuOpKind::Kernel);
  EXPECT_EQ(op.name, "vec_add(float const*, float const*, float*, int)");
  EXPECT_EQ(op.start, 1'000'000u);
  EXPECT_EQ(op.end, 1'250'000u);
  EXPECT_EQ(op.device, 1u);
  EXPECT_EQ(op.context, 7u);
  EXPECT_EQ(op.stream, 13u);
  EXPECT_EQ(op.correlation_id, 42u);
  ASSERT_EQ(op.detail, 0u);
  const GpuKernel& g = raw.kernels.at(0);
  EXPECT_EQ(g.grid[0], 256);
  EXPECT_EQ(g.grid[1], 2);
  EXPECT_EQ(g.block[0], 128);
  EXPECT_EQ(g.threads_per_block(), 128);
  EXPECT_EQ(g.registers_per_thread, 40u);
  EXPECT_EQ(g.static_shared_bytes, 1024);
  EXPECT_EQ(g.dynamic_shared_bytes, 2048);
  EXPECT_EQ(g.local_bytes_per_thread, 16u);
}

TEST(GpuParse, UntimedKernelIsCountedNotKept) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "relu";
  ParseContext ctx = context();
  RawGpu raw;
  EXPECT_EQ(parse_record(as_activity(k), ctx, raw), ParseResult::Untimed);
  EXPECT_TRUE(raw.ops.empty());
  EXPECT_EQ(demangle("relu"), "relu");  // extern "C" kernels keep their name
}

TEST(GpuParse, PageableSyncAndPinnedAsyncCopies) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 110;
  m.correlationId = 9;         // the driver call's id
  m.runtimeCorrelationId = 8;  // the runtime call's: what the launch record carries
  CUpti_ActivityMemcpy6 a = m;
  a.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  a.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  a.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  a.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  a.runtimeCorrelationId = 0;
  ParseContext ctx = context();
  RawGpu raw;
  parse_record(as_activity(m), ctx, raw);
  parse_record(as_activity(a), ctx, raw);
  ASSERT_EQ(raw.memcpys.size(), 2u);
  EXPECT_EQ(raw.memcpys[0].kind, MemcpyKind::HtoD);
  EXPECT_TRUE(raw.memcpys[0].pageable());
  EXPECT_FALSE(raw.memcpys[0].async);
  EXPECT_EQ(raw.memcpys[0].bytes, 1u << 20);
  EXPECT_EQ(raw.ops[0].correlation_id, 8u);
  EXPECT_EQ(raw.memcpys[1].kind, MemcpyKind::DtoH);
  EXPECT_EQ(raw.memcpys[1].dst, GpuMemoryKind::Pinned);
  EXPECT_FALSE(raw.memcpys[1].pageable());
  EXPECT_TRUE(raw.memcpys[1].async);
  EXPECT_EQ(raw.ops[1].correlation_id, 9u);  // no runtime id: the driver's
  EXPECT_EQ(raw.ops[1].detail, 1u);
}

TEST(GpuParse, PeerCopyKeepsBothDevices) {
  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.bytes = 4096;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.deviceId = 0;
  p.start = 5;
  p.end = 9;
  ParseContext ctx = context();
  RawGpu raw;
  parse_record(as_activity(p), ctx, raw);
  ASSERT_EQ(raw.memcpys.size(), 1u);
  EXPECT_EQ(raw.memcpys[0].kind, MemcpyKind::PtoP);
  EXPECT_EQ(raw.memcpys[0].src_device, 0u);
  EXPECT_EQ(raw.memcpys[0].dst_device, 1u);
  EXPECT_EQ(raw.ops[0].kind, GpuOpKind::Memcpy);
}

TEST(GpuParse, MemsetApiCallsMemorySyncExternalAndStreams) {
  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 256;
  s.value = 7;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  s.start = 1;
  s.end = 2;
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  api.cbid = 211;
  api.threadId = 4321;
  api.correlationId = 5;
  api.start = 100;
  api.end = 180;
  CUpti_ActivityAPI drv = api;
  drv.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  drv.returnValue = 2;
  CUpti_ActivityMemory4 alloc{};
  alloc.kind = CUPTI_ACTIVITY_KIND_MEMORY2;
  alloc.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  alloc.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  alloc.address = 0x7f0000;
  alloc.bytes = 1 << 20;
  alloc.timestamp = 300;
  alloc.deviceId = 0;
  alloc.source = "cuBLAS";
  CUpti_ActivityMemory4 release = alloc;
  release.memoryOperationType = CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE;
  release.isAsync = 1;
  release.source = nullptr;
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
  sync.streamId = 13;
  sync.start = 400;
  sync.end = 900;
  CUpti_ActivitySynchronization2 ctx_sync = sync;
  ctx_sync.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  CUpti_ActivityExternalCorrelation ext{};
  ext.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
  ext.externalKind = CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2;
  ext.externalId = 77;
  ext.correlationId = 5;
  CUpti_ActivityStream stream{};
  stream.kind = CUPTI_ACTIVITY_KIND_STREAM;
  stream.contextId = 1;
  stream.streamId = 13;
  stream.priority = 2;
  CUpti_ActivityContext3 context_record{};
  context_record.kind = CUPTI_ACTIVITY_KIND_CONTEXT;
  context_record.contextId = 1;
  context_record.deviceId = 3;
  context_record.nullStreamId = 7;
  CUpti_ActivityAPI unknown{};
  unknown.kind = CUPTI_ACTIVITY_KIND_PREEMPTION;

  ParseContext ctx = context();
  RawGpu raw;
  for (const CUpti_Activity* r :
       {&as_activity(s), &as_activity(api), &as_activity(drv), &as_activity(alloc), &as_activity(release),
        &as_activity(sync), &as_activity(ctx_sync), &as_activity(ext), &as_activity(stream), &as_activity(context_record)})
    EXPECT_EQ(parse_record(*r, ctx, raw), ParseResult::Parsed);
  EXPECT_EQ(parse_record(as_activity(unknown), ctx, raw), ParseResult::Ignored);

  ASSERT_EQ(raw.memsets.size(), 1u);
  EXPECT_EQ(raw.memsets[0].bytes, 256u);
  EXPECT_EQ(raw.memsets[0].value, 7u);
  EXPECT_EQ(raw.memsets[0].memory, GpuMemoryKind::Device);
  ASSERT_EQ(raw.api_calls.size(), 2u);
  EXPECT_EQ(raw.api_calls[0].name, "cudaLaunchKernel");
  EXPECT_FALSE(raw.api_calls[0].driver);
  EXPECT_EQ(raw.api_calls[0].os_tid, 4321);
  EXPECT_EQ(raw.api_calls[0].start, 100u);
  EXPECT_EQ(raw.api_calls[0].end, 180u);
  EXPECT_TRUE(raw.api_calls[1].driver);
  EXPECT_EQ(raw.api_calls[1].return_value, 2u);
  ASSERT_EQ(raw.memory.size(), 2u);
  EXPECT_TRUE(raw.memory[0].alloc);
  EXPECT_EQ(raw.memory[0].bytes, 1u << 20);
  EXPECT_EQ(raw.memory[0].source, "cuBLAS");
  EXPECT_FALSE(raw.memory[1].alloc);
  EXPECT_TRUE(raw.memory[1].async);
  ASSERT_EQ(raw.syncs.size(), 2u);
  EXPECT_EQ(raw.syncs[0].stream, 13u);
  EXPECT_EQ(raw.syncs[1].stream, kNone);
  ASSERT_EQ(raw.external.size(), 1u);
  EXPECT_EQ(raw.external[0].id, 77u);
  EXPECT_EQ(raw.external[0].correlation_id, 5u);
  ASSERT_EQ(raw.streams.size(), 2u);
  EXPECT_EQ(raw.streams[0].priority, 2u);
  EXPECT_FALSE(raw.streams[0].is_default);
  EXPECT_EQ(raw.streams[1].device, 3u);
  EXPECT_EQ(raw.streams[1].stream, 7u);
  EXPECT_TRUE(raw.streams[1].is_default);
}

// A fake cuptiActivityGetNextRecord over an array of kernel records, ending as CUPTI does.
struct FakeBuffer {
  static inline std::vector<CUpti_ActivityKernel10> records;
  static inline std::size_t next = 0;
  static inline bool end_incomplete = false;
  static CUptiResult iterate(std::uint8_t*, std::size_t, CUpti_Activity** record) {
    if (next < records.size()) {
      *record = reinterpret_cast<CUpti_Activity*>(&records[next++]);
      return CUPTI_SUCCESS;
    }
    return end_incomplete ? CUPTI_ERROR_INVALID_KIND : CUPTI_ERROR_MAX_LIMIT_REACHED;
  }
};

TEST(GpuParse, DrainCountsRecordsUntimedIncompleteAndRefused) {
  FakeBuffer::records.assign(5, CUpti_ActivityKernel10{});
  for (std::size_t i = 0; i < 5; ++i) {
    auto& k = FakeBuffer::records[i];
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = "k";
    k.start = i == 2 ? 0 : 100 * (i + 1);
    k.end = i == 2 ? 0 : 100 * (i + 1) + 10;
  }
  std::uint8_t buffer[8] = {};
  ParseContext ctx = context();
  {
    FakeBuffer::next = 0;
    FakeBuffer::end_incomplete = false;
    RawGpu raw;
    const DrainCounts c = drain_buffer(buffer, sizeof buffer, &FakeBuffer::iterate, ctx, raw);
    EXPECT_EQ(c.records, 5u);
    EXPECT_EQ(c.untimed, 1u);
    EXPECT_EQ(c.incomplete, 0u);
    EXPECT_EQ(c.refused, 0u);
    EXPECT_EQ(raw.ops.size(), 4u);
  }
  {
    FakeBuffer::next = 0;
    FakeBuffer::end_incomplete = true;
    RawGpu raw;
    const DrainCounts c = drain_buffer(buffer, sizeof buffer, &FakeBuffer::iterate, ctx, raw, 3);
    EXPECT_EQ(c.records, 3u);
    EXPECT_EQ(c.refused, 2u);
    EXPECT_EQ(c.incomplete, 1u);
    EXPECT_EQ(raw.ops.size(), 2u);  // the third parsed one had no timestamps
  }
  RawGpu raw;
  EXPECT_EQ(drain_buffer(nullptr, 0, &FakeBuffer::iterate, ctx, raw).records, 0u);
}

TEST(GpuClock, IdentityWhenCuptiUsesOurClock) {
  GpuClockMap m;
  EXPECT_TRUE(m.identity());
  EXPECT_EQ(m.to_monotonic(123'456), 123'456u);
  EXPECT_EQ(m.to_monotonic(0), 0u);
}

TEST(GpuClock, MappedFromBracketsWithOffsetAndSlope) {
  // CUPTI's clock is 1e9 ns ahead and runs 1e-4 fast.
  const ClockBracket a{1'000, 1'000'001'000 + 100, 1'200};       // midpoint 1100
  const ClockBracket b{101'001'000, 1'101'011'100, 101'001'200};  // midpoint 101'001'100
  const GpuClockMap m = map_clocks(a, b);
  EXPECT_EQ(m.source, "cupti-realtime-mapped");
  EXPECT_EQ(m.offset_ns, 1100 - (1'000'001'000 + 100));
  EXPECT_NEAR(m.slope, 101'000'000.0 / 101'010'000.0, 1e-12);
  EXPECT_EQ(m.uncertainty_ns, 100u);
  EXPECT_EQ(m.to_monotonic(a.foreign), 1100u);
  EXPECT_NEAR(static_cast<double>(m.to_monotonic(b.foreign)), 101'001'100.0, 1.0);
  // Too short a span for a slope: offset only.
  const GpuClockMap single = map_clocks(a, ClockBracket{1'500, a.foreign + 400, 1'600});
  EXPECT_EQ(single.slope, 1.0);
}

TEST(GpuClock, BracketKeepsTheTightestRound) {
  std::uint64_t mono = 0;
  int round = 0;
  // Round 3 reads the monotonic clock 1 ns apart, the others 5 ns apart.
  auto read_mono = [&] { return mono += (round == 3 ? 1 : 5); };
  auto read_foreign = [&] {
    ++round;
    return std::uint64_t{1000} * round;
  };
  const ClockBracket b = bracket_clock(read_foreign, read_mono, 5);
  EXPECT_EQ(b.foreign, 3000u);
  EXPECT_EQ(b.monotonic_after - b.monotonic_before, 1u);
}

TEST(GpuOccupancy, EstimatedFromDeviceLimits) {
  GpuDevice h100;  // compute capability 9.0 limits
  h100.max_warps_per_sm = 64;
  h100.max_blocks_per_sm = 32;
  h100.max_registers_per_sm = 65536;
  h100.max_shared_bytes_per_sm = 228 * 1024;
  GpuKernel k;
  k.block[0] = 256, k.block[1] = 1, k.block[2] = 1;
  k.registers_per_thread = 32;  // 8 warps x 1024 regs = 8192 per block: 8 blocks = 64 warps
  EXPECT_DOUBLE_EQ(estimate_occupancy(k, h100), 1.0);
  k.registers_per_thread = 128;  // 4096 per warp, 32768 per block: 2 blocks = 16 warps
  EXPECT_DOUBLE_EQ(estimate_occupancy(k, h100), 0.25);
  k.registers_per_thread = 0;
  k.dynamic_shared_bytes = 100 * 1024;  // 2 blocks fit in 228 KiB
  EXPECT_DOUBLE_EQ(estimate_occupancy(k, h100), 0.25);
  k.dynamic_shared_bytes = 0;
  k.block[0] = 32;  // 1 warp per block, 32 blocks at most: half the warps
  EXPECT_DOUBLE_EQ(estimate_occupancy(k, h100), 0.5);
  EXPECT_LT(estimate_occupancy(k, GpuDevice{}), 0.0);  // limits unknown
}

}  // namespace
}  // namespace nnprof::detail
