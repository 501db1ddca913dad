// A traced GPU profile built by hand on top of rich_profile (threads "main" 1001 and "loader-0"
// 1002, spans 0-5 on main, span 6 on loader-0), so that every stored value and every trace
// event is known exactly: 2 devices, 3 streams, kernels, pageable HtoD and peer-to-peer copies,
// a memset, CUDA API calls, synchronisations, allocations and releases, NVML counters and GPU
// time per scope. Used by test_gpu_store and test_gpu_chrome_trace.
#pragma once

#include <cstdint>
#include <string>

#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"

namespace nnprof::testing {

enum GpuString : StringId {
  kGemm = 6,
  kHtoD,
  kPtoP,
  kMemsetName,
  kLaunchKernel,
  kMemcpyAsync,
  kMemsetCall,
  kMalloc,
  kCublas,
  kReduce,
};

inline Profile gpu_profile() {
  Profile p = rich_profile();
  p.strings.insert(p.strings.end(), {"gemm_kernel<float>(float const*, float const*, float*, int)", "Memcpy HtoD",
                                     "Memcpy PtoP", "Memset", "cudaLaunchKernel", "cudaMemcpyAsync", "cudaMemset",
                                     "cudaMalloc", "cuBLAS", "reduce \"sum\" kernel"});
  GpuProfile& g = p.gpu;

  GpuSummary& s = g.summary;
  s.traced = true;
  s.status = "CUPTI 13.0.1 tracing 2 devices";
  s.clock_source = "cupti-realtime-mapped";
  s.cupti_version = 130001;
  s.driver_version = 13000;
  s.clock_offset_ns = -123'456'789;
  s.clock_slope = 0.123456789;
  s.clock_uncertainty_ns = 250;
  s.records_dropped = 3;
  s.records_refused = 4;
  s.records_incomplete = 5;
  s.records_untimed = 6;
  s.unmatched_correlations = 1;
  s.untracked_frees = 1;
  s.nvml = true;

  GpuDevice h100;
  h100.id = 0;
  h100.name = "NVIDIA H100 80GB HBM3";
  h100.pci_bus_id = "00000000:18:00.0";
  h100.cc_major = 9;
  h100.cc_minor = 0;
  h100.sms = 132;
  h100.max_warps_per_sm = 64;
  h100.max_threads_per_block = 1024;
  h100.max_registers_per_sm = 65536;
  h100.max_shared_bytes_per_sm = 233472;
  h100.max_blocks_per_sm = 32;
  h100.core_clock_khz = 1'980'000;
  h100.memory_bytes = 85'520'809'984ULL;
  h100.bandwidth_bytes_per_s = 3'352'320'000'000ULL;
  GpuDevice a100 = h100;
  a100.id = 1;
  a100.name = "NVIDIA A100-SXM4-40GB";
  a100.pci_bus_id = "00000000:3B:00.0";
  a100.cc_major = 8;
  a100.sms = 108;
  a100.memory_bytes = 42'505'273'344ULL;
  g.devices = {h100, a100};
  g.streams = {GpuStream{0, 1, 7, 0, true}, GpuStream{0, 1, 13, 0, false}, GpuStream{1, 2, 21, 1, false}};

  // API calls, by start. Call 3 ran on a thread nnprof does not know.
  GpuApiCall copy_call{0, 1001, kMemcpyAsync, false, 41, 100, 0, 2, 1'100'000, 1'300'000, 0, 0};
  GpuApiCall launch_call{0, 1001, kLaunchKernel, false, 211, 101, 0, 3, 2'100'000, 2'105'000, 0xFFFF'FFFF'FFFF'FFF0ULL, 3};
  GpuApiCall memset_call{0, 1001, kMemsetCall, false, 51, 102, 2, 3, 2'500'000, 2'510'000, 0, 0};
  GpuApiCall foreign_call{kNone, 555, kLaunchKernel, true, 307, 103, 0, 0, 6'000'000, 6'010'000, 0, 0};
  GpuApiCall malloc_call{0, 1001, kMalloc, false, 20, 104, 0, 1, 50'500'000, 50'600'000, 0, 0};
  g.api_calls = {copy_call, launch_call, memset_call, foreign_call, malloc_call};

  // Ops by stream, then start; their details deliberately not in op order (kernel 1 runs first).
  g.ops = {
      GpuOp{GpuOpKind::Memcpy, 0, kHtoD, 1'200'000, 1'500'000, 100, GpuLaunch{0, 1'100'000, 2, 1, 0}, 0},
      GpuOp{GpuOpKind::Kernel, 0, kGemm, 2'200'000, 2'900'000, 101, GpuLaunch{0, 2'100'000, 3, 2, 1}, 1},
      GpuOp{GpuOpKind::Memset, 1, kMemsetName, 2'600'000, 2'620'000, 102, GpuLaunch{0, 2'500'000, 3, 2, 2}, 0},
      // Launched on loader-0 in its scope, without a traced API call.
      GpuOp{GpuOpKind::Kernel, 1, kReduce, 30'000'000, 30'500'000, 105, GpuLaunch{1, 6'000'000, 4, 6, kNone}, 0},
      // Launched by the unknown thread: no CPU end for its arrow.
      GpuOp{GpuOpKind::Memcpy, 2, kPtoP, 7'000'000, 7'250'000, 103, GpuLaunch{kNone, 6'000'000, 0, kNone, 3}, 1},
  };
  GpuKernel reduce;
  reduce.grid[0] = 128;
  reduce.grid[1] = 1;
  reduce.grid[2] = 1;
  reduce.block[0] = 256;
  reduce.block[1] = 1;
  reduce.block[2] = 1;
  reduce.registers_per_thread = 32;
  reduce.dynamic_shared_bytes = 4096;
  reduce.occupancy = 0.123456789;
  reduce.occupancy_estimated = true;
  GpuKernel gemm;
  gemm.grid[0] = 64;
  gemm.grid[1] = 32;
  gemm.grid[2] = 2;
  gemm.block[0] = 16;
  gemm.block[1] = 16;
  gemm.block[2] = 1;
  gemm.registers_per_thread = 128;
  gemm.static_shared_bytes = 49152;
  gemm.dynamic_shared_bytes = 1024;
  gemm.local_bytes_per_thread = 16;
  gemm.graph_id = 7;
  g.kernels = {reduce, gemm};
  g.memcpys = {GpuMemcpy{MemcpyKind::HtoD, GpuMemoryKind::Pageable, GpuMemoryKind::Device, false, 8 * kMiB + 3, 0, 0},
               GpuMemcpy{MemcpyKind::PtoP, GpuMemoryKind::Device, GpuMemoryKind::Device, true, 1ULL << 30, 0, 1}};
  g.memsets = {GpuMemset{4096, 0xFF, GpuMemoryKind::Device}};

  // A stream synchronisation in matmul, and a synchronisation of a type nnprof has no name for.
  g.syncs = {GpuSync{3, 1, 106, 3'000'000, 31'000'000, GpuLaunch{0, 3'000'000, 3, 2, kNone}},
             GpuSync{200, kNone, 0, 60'000'000, 61'000'000, GpuLaunch{kNone, 60'000'000, 0, kNone, kNone}}};

  g.memory_events = {
      GpuMemoryEvent{50'550'000, 0, true, GpuMemoryKind::Device, false, 0xFFFF'8000'0000'0000ULL, 16 * kMiB, 104,
                     GpuLaunch{0, 50'500'000, 1, 3, 4}, kNone},
      GpuMemoryEvent{52'000'000, 1, true, GpuMemoryKind::Managed, true, 0x7F10'0000'0000ULL, kMiB, 0,
                     GpuLaunch{0, 52'000'000, 3, 5, kNone}, kCublas},
      GpuMemoryEvent{100'000'000, 0, false, GpuMemoryKind::Device, false, 0xFFFF'8000'0000'0000ULL, 16 * kMiB, 0,
                     GpuLaunch{0, 100'000'000, 1, 3, kNone}, kNone},
      // A release of memory allocated before tracing began.
      GpuMemoryEvent{101'000'000, 1, false, GpuMemoryKind::Device, false, 0xDEAD'0000ULL, 512, 0,
                     GpuLaunch{}, kNone},
  };

  g.counters = {GpuCounter{0, "nvml_memory_used", "bytes", {{0, 1.5e9}, {100'000'000, 1'753'219'072.0}}},
                GpuCounter{0, "nvml_gpu_utilization", "percent", {{0, 0.0}, {100'000'000, 87.5}}},
                GpuCounter{1, "nvml_memory_utilization", "percent", {{50'000'000, 12.25}}}};

  GpuScopeStats step{0, 2, 1'200'000, 2, 550'000, 1'082'130'435, 1, 20'000, 16 * kMiB, 1, 16 * kMiB};
  GpuScopeStats matmul{2, 1, 700'000, 0, 0, 0, 1, 20'000, kMiB, 1, 0};
  GpuScopeStats odd{3, 1, 500'000, 0, 0, 0, 0, 0, 0, 0, 0};
  g.scopes = {step, matmul, odd};
  return p;
}

}  // namespace nnprof::testing
