// The GPU part of the reports' GPU tests (test_gpu_reports, test_report_sections_resources),
// added by hand to a profile whose scopes include "forward", so that every kernel time, byte and
// allocation is known exactly. No GPU is needed.
#pragma once

#include <cstdint>

#include "nnprof/profile.hpp"

namespace nnprof::testing::report_gpu {

inline constexpr std::uint64_t kUs = 1'000;
inline constexpr std::uint64_t kMiB = 1ULL << 20;

inline GpuOp op(GpuOpKind kind, std::uint32_t stream, StringId name, std::uint64_t start, std::uint64_t end,
         std::uint32_t detail, std::uint32_t node) {
  GpuOp o;
  o.kind = kind;
  o.stream = stream;
  o.name = name;
  o.start_ns = start;
  o.end_ns = end;
  o.detail = detail;
  o.launch.node = node;
  return o;
}

inline GpuKernel kernel(std::int32_t grid_x, std::uint32_t registers, double occupancy) {
  GpuKernel k;
  k.grid[0] = grid_x;
  k.grid[1] = k.grid[2] = 1;
  k.block[0] = 256;
  k.block[1] = k.block[2] = 1;
  k.registers_per_thread = registers;
  k.occupancy = occupancy;
  return k;
}

inline GpuMemoryEvent memory_event(std::uint64_t time, bool alloc, std::uint64_t address, std::uint64_t bytes,
                            std::uint32_t node) {
  GpuMemoryEvent e;
  e.time_ns = time;
  e.alloc = alloc;
  e.address = address;
  e.bytes = bytes;
  e.launch.node = node;
  return e;
}

// One device ("Test GPU"), stream index 0 (CUPTI id 7, the default stream) and index 1 (id 13).
// In microseconds of a 1 ms session:
//
//   stream 7:   gemm_kernel [0,100) [200,400) [500,800)   (grid 128, 128, 64; block 256)
//   stream 13:  HtoD copy of 1 MiB from pageable memory [10,20), relu_kernel [100,150)
//
// Kernel time 650 µs, copy time 10 µs: GPU time 660 µs. Device memory, all allocated in
// "forward": 4 MiB at 1 µs (never freed), 2 MiB at 2 µs, freed at 3 µs: peak 6 MiB at 2 µs.
// NVML: 1.5 GB in use at its highest (2.5 µs), 60% / 80% GPU utilisation.
// `forward` is the call-tree node of the scope "forward", which launched all of it.
inline void add_report_gpu(Profile& p, std::uint32_t forward) {
  const auto intern = [&p](const char* s) {
    p.strings.emplace_back(s);
    return static_cast<StringId>(p.strings.size() - 1);
  };
  const StringId gemm = intern("gemm_kernel");
  const StringId relu = intern("relu_kernel");
  const StringId htod = intern("Memcpy HtoD");

  GpuProfile& g = p.gpu;
  GpuSummary& s = g.summary;
  s.traced = true;
  s.status = "CUPTI is tracing kernels, copies, memsets and device memory.";
  s.clock_source = "monotonic-callback";
  s.cupti_version = 26;
  s.driver_version = 13000;
  s.nvml = true;

  GpuDevice d;
  d.id = 0;
  d.name = "Test GPU";
  d.sms = 80;
  d.memory_bytes = 16ULL << 30;
  d.cc_major = 8;
  g.devices.push_back(d);
  g.streams.push_back(GpuStream{0, 1, 7, 0, true});
  g.streams.push_back(GpuStream{0, 1, 13, 0, false});

  g.kernels = {kernel(128, 32, 0.5), kernel(128, 32, 0.5), kernel(64, 40, 0.25), kernel(32, 16, -1.0)};
  GpuMemcpy copy;
  copy.kind = MemcpyKind::HtoD;
  copy.src = GpuMemoryKind::Pageable;
  copy.dst = GpuMemoryKind::Device;
  copy.bytes = kMiB;
  g.memcpys.push_back(copy);
  g.ops = {op(GpuOpKind::Kernel, 0, gemm, 0, 100 * kUs, 0, forward),
           op(GpuOpKind::Kernel, 0, gemm, 200 * kUs, 400 * kUs, 1, forward),
           op(GpuOpKind::Kernel, 0, gemm, 500 * kUs, 800 * kUs, 2, forward),
           op(GpuOpKind::Memcpy, 1, htod, 10 * kUs, 20 * kUs, 0, forward),
           op(GpuOpKind::Kernel, 1, relu, 100 * kUs, 150 * kUs, 3, forward)};

  g.memory_events = {memory_event(1 * kUs, true, 0x1000, 4 * kMiB, forward),
                     memory_event(2 * kUs, true, 0x2000, 2 * kMiB, forward),
                     memory_event(3 * kUs, false, 0x2000, 2 * kMiB, forward)};
  g.counters.push_back(GpuCounter{0, "nvml_memory_used", "bytes", {{0, 1e9}, {2'500, 1.5e9}, {5'000, 1.2e9}}});
  g.counters.push_back(GpuCounter{0, "nvml_gpu_utilization", "percent", {{0, 40.0}, {1'000, 80.0}}});

  GpuScopeStats fwd;
  fwd.name = p.find_scope("forward")->name;
  fwd.kernels = 4;
  fwd.kernel_ns = 650 * kUs;
  fwd.memcpys = 1;
  fwd.memcpy_ns = 10 * kUs;
  fwd.memcpy_bytes = kMiB;
  fwd.alloc_bytes = 6 * kMiB;
  fwd.alloc_count = 2;
  fwd.free_bytes = 2 * kMiB;
  g.scopes.push_back(fwd);
}


}  // namespace nnprof::testing::report_gpu
