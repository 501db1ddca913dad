#include "collect/gpu/activity_parse.hpp"

#include <cxxabi.h>

#include <algorithm>
#include <cstdlib>
#include <memory>

namespace nnprof::detail {

std::string demangle(const char* name) {
  if (name == nullptr) return "(unnamed kernel)";
  if (name[0] != '_' || name[1] != 'Z') return name;
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> out(abi::__cxa_demangle(name, nullptr, nullptr, &status), std::free);
  return status == 0 && out ? std::string(out.get()) : std::string(name);
}

GpuMemoryKind memory_kind(std::uint32_t k) noexcept {
  return k <= static_cast<std::uint32_t>(GpuMemoryKind::ManagedStatic) ? static_cast<GpuMemoryKind>(k)
                                                                        : GpuMemoryKind::Unknown;
}

namespace {

MemcpyKind copy_kind(std::uint32_t k) noexcept {
  return k <= static_cast<std::uint32_t>(MemcpyKind::PtoP) ? static_cast<MemcpyKind>(k) : MemcpyKind::Unknown;
}

const std::string& kernel_name(ParseContext& ctx, const char* mangled) {
  const std::string key = mangled != nullptr ? mangled : "";
  auto it = ctx.demangled.find(key);
  if (it == ctx.demangled.end()) it = ctx.demangled.emplace(key, demangle(mangled)).first;
  return it->second;
}

void add_op(RawGpu& out, GpuOpKind kind, std::uint32_t device, std::uint32_t context, std::uint32_t stream,
            std::string name, std::uint64_t start, std::uint64_t end, std::uint32_t correlation, std::size_t detail,
            const ParseContext& ctx) {
  RawGpuOp op;
  op.kind = kind;
  op.device = device;
  op.context = context;
  op.stream = stream;
  op.name = std::move(name);
  op.start = ctx.clock.to_monotonic(start);
  op.end = ctx.clock.to_monotonic(end);
  op.correlation_id = correlation;
  op.detail = static_cast<std::uint32_t>(detail);
  out.ops.push_back(std::move(op));
}

ParseResult parse_kernel(const CUpti_ActivityKernel10& k, ParseContext& ctx, RawGpu& out) {
  if (k.start == 0 && k.end == 0) return ParseResult::Untimed;
  GpuKernel g;
  g.grid[0] = k.gridX, g.grid[1] = k.gridY, g.grid[2] = k.gridZ;
  g.block[0] = k.blockX, g.block[1] = k.blockY, g.block[2] = k.blockZ;
  g.registers_per_thread = k.registersPerThread;
  g.static_shared_bytes = k.staticSharedMemory;
  g.dynamic_shared_bytes = k.dynamicSharedMemory;
  g.local_bytes_per_thread = k.localMemoryPerThread;
  g.graph_id = k.graphId;
  out.kernels.push_back(g);
  add_op(out, GpuOpKind::Kernel, k.deviceId, k.contextId, k.streamId, kernel_name(ctx, k.name), k.start, k.end,
         k.correlationId, out.kernels.size() - 1, ctx);
  return ParseResult::Parsed;
}

ParseResult parse_memcpy(const CUpti_ActivityMemcpy6& m, ParseContext& ctx, RawGpu& out) {
  GpuMemcpy c;
  c.kind = copy_kind(m.copyKind);
  c.src = memory_kind(m.srcKind);
  c.dst = memory_kind(m.dstKind);
  c.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  c.bytes = m.bytes;
  c.src_device = c.dst_device = m.deviceId;
  out.memcpys.push_back(c);
  // Copies made by the runtime carry the runtime call's id apart from the driver's: the runtime
  // one is what the launching callback saw.
  const std::uint32_t correlation = m.runtimeCorrelationId != 0 ? m.runtimeCorrelationId : m.correlationId;
  add_op(out, GpuOpKind::Memcpy, m.deviceId, m.contextId, m.streamId, {}, m.start, m.end, correlation,
         out.memcpys.size() - 1, ctx);
  return ParseResult::Parsed;
}

ParseResult parse_peer_copy(const CUpti_ActivityMemcpyPtoP4& m, ParseContext& ctx, RawGpu& out) {
  GpuMemcpy c;
  c.kind = MemcpyKind::PtoP;
  c.src = memory_kind(m.srcKind);
  c.dst = memory_kind(m.dstKind);
  c.async = (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0;
  c.bytes = m.bytes;
  c.src_device = m.srcDeviceId;
  c.dst_device = m.dstDeviceId;
  out.memcpys.push_back(c);
  add_op(out, GpuOpKind::Memcpy, m.deviceId, m.contextId, m.streamId, {}, m.start, m.end, m.correlationId,
         out.memcpys.size() - 1, ctx);
  return ParseResult::Parsed;
}

ParseResult parse_memset(const CUpti_ActivityMemset4& m, ParseContext& ctx, RawGpu& out) {
  out.memsets.push_back(GpuMemset{m.bytes, m.value, memory_kind(m.memoryKind)});
  add_op(out, GpuOpKind::Memset, m.deviceId, m.contextId, m.streamId, {}, m.start, m.end, m.correlationId,
         out.memsets.size() - 1, ctx);
  return ParseResult::Parsed;
}

ParseResult parse_api(const CUpti_ActivityAPI& a, bool driver, ParseContext& ctx, RawGpu& out) {
  RawGpuApiCall c;
  c.os_tid = a.threadId;
  c.driver = driver;
  c.cbid = a.cbid;
  c.correlation_id = a.correlationId;
  c.return_value = a.returnValue;
  c.start = ctx.clock.to_monotonic(a.start);
  c.end = ctx.clock.to_monotonic(a.end);
  c.name = ctx.api_name ? ctx.api_name(driver, a.cbid) : std::string();
  if (c.name.empty()) c.name = (driver ? "driver API " : "runtime API ") + std::to_string(a.cbid);
  out.api_calls.push_back(std::move(c));
  return ParseResult::Parsed;
}

ParseResult parse_memory(const CUpti_ActivityMemory4& m, ParseContext& ctx, RawGpu& out) {
  const bool alloc = m.memoryOperationType == CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION;
  if (!alloc && m.memoryOperationType != CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) return ParseResult::Ignored;
  RawGpuMemory r;
  r.time = ctx.clock.to_monotonic(m.timestamp);
  r.device = m.deviceId;
  r.alloc = alloc;
  r.async = m.isAsync != 0;
  r.kind = memory_kind(m.memoryKind);
  r.address = m.address;
  r.bytes = m.bytes;
  r.correlation_id = m.correlationId;
  if (m.source != nullptr) r.source = m.source;
  out.memory.push_back(std::move(r));
  return ParseResult::Parsed;
}

ParseResult parse_sync(const CUpti_ActivitySynchronization2& s, ParseContext& ctx, RawGpu& out) {
  RawGpuSync r;
  r.type = static_cast<std::uint8_t>(s.type);
  r.context = s.contextId;
  r.stream = s.streamId == CUPTI_SYNCHRONIZATION_INVALID_VALUE ? kNone : s.streamId;
  r.correlation_id = s.correlationId;
  r.start = ctx.clock.to_monotonic(s.start);
  r.end = ctx.clock.to_monotonic(s.end);
  out.syncs.push_back(r);
  return ParseResult::Parsed;
}

}  // namespace

ParseResult parse_record(const CUpti_Activity& record, ParseContext& ctx, RawGpu& out) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return parse_kernel(reinterpret_cast<const CUpti_ActivityKernel10&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return parse_memcpy(reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return parse_peer_copy(reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return parse_memset(reinterpret_cast<const CUpti_ActivityMemset4&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
      return parse_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), false, ctx, out);
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return parse_api(reinterpret_cast<const CUpti_ActivityAPI&>(record), true, ctx, out);
    case CUPTI_ACTIVITY_KIND_MEMORY2:
      return parse_memory(reinterpret_cast<const CUpti_ActivityMemory4&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return parse_sync(reinterpret_cast<const CUpti_ActivitySynchronization2&>(record), ctx, out);
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
      const auto& e = reinterpret_cast<const CUpti_ActivityExternalCorrelation&>(record);
      out.external.push_back(RawExternalCorrelation{e.correlationId, static_cast<std::uint8_t>(e.externalKind), e.externalId});
      return ParseResult::Parsed;
    }
    case CUPTI_ACTIVITY_KIND_STREAM: {
      const auto& s = reinterpret_cast<const CUpti_ActivityStream&>(record);
      GpuStream g;
      g.context = s.contextId;
      g.stream = s.streamId;
      g.priority = s.priority;
      g.is_default = s.flag == CUPTI_ACTIVITY_STREAM_CREATE_FLAG_DEFAULT;
      g.device = kNone;  // the context's device: filled from the context record or the ops
      out.streams.push_back(g);
      return ParseResult::Parsed;
    }
    case CUPTI_ACTIVITY_KIND_CONTEXT: {
      // Names the context's NULL (default) stream.
      const auto& c = reinterpret_cast<const CUpti_ActivityContext3&>(record);
      GpuStream g;
      g.device = c.deviceId;
      g.context = c.contextId;
      g.stream = c.nullStreamId;
      g.is_default = true;
      out.streams.push_back(g);
      return ParseResult::Parsed;
    }
    default:
      return ParseResult::Ignored;
  }
}

DrainCounts drain_buffer(std::uint8_t* buffer, std::size_t valid_bytes, NextRecordFn next, ParseContext& ctx,
                         RawGpu& out, std::uint64_t budget) {
  DrainCounts counts;
  if (buffer == nullptr || valid_bytes == 0) return counts;
  CUpti_Activity* record = nullptr;
  for (;;) {
    const CUptiResult r = next(buffer, valid_bytes, &record);
    if (r == CUPTI_SUCCESS) {
      if (counts.records >= budget) {
        ++counts.refused;
        continue;
      }
      ++counts.records;
      if (parse_record(*record, ctx, out) == ParseResult::Untimed) ++counts.untimed;
      continue;
    }
    if (r != CUPTI_ERROR_MAX_LIMIT_REACHED) ++counts.incomplete;  // INVALID_KIND: a record CUPTI left unfinished
    break;
  }
  return counts;
}

double estimate_occupancy(const GpuKernel& k, const GpuDevice& d) noexcept {
  const std::int64_t threads = k.threads_per_block();
  if (threads <= 0 || d.max_warps_per_sm == 0 || d.max_blocks_per_sm == 0) return -1.0;
  const std::int64_t warps_per_block = (threads + 31) / 32;
  std::int64_t blocks = std::min<std::int64_t>(d.max_blocks_per_sm, d.max_warps_per_sm / warps_per_block);
  if (k.registers_per_thread > 0 && d.max_registers_per_sm > 0) {
    // Registers are allocated per warp in units of 256.
    const std::int64_t per_warp = (std::int64_t{k.registers_per_thread} * 32 + 255) / 256 * 256;
    blocks = std::min<std::int64_t>(blocks, d.max_registers_per_sm / (per_warp * warps_per_block));
  }
  const std::int64_t shared = std::int64_t{k.static_shared_bytes} + k.dynamic_shared_bytes;
  if (shared > 0 && d.max_shared_bytes_per_sm > 0)
    blocks = std::min<std::int64_t>(blocks, d.max_shared_bytes_per_sm / shared);
  if (blocks <= 0) return 0.0;
  return static_cast<double>(blocks * warps_per_block) / static_cast<double>(d.max_warps_per_sm);
}

}  // namespace nnprof::detail
