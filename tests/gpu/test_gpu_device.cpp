// The GPU collector on a real GPU (ctest label `gpu`): runs nnprof-gpu-demo, loads the profile it
// writes and checks what CUPTI traced against what the demo issued, which the demo counts as it
// issues it and stores in the profile's "gpu_demo.*" annotations. Every test skips, with the
// reason, where GPU collection cannot run (no driver, no device, no CUPTI).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>

#include "nnprof/gpu.hpp"
#include "nnprof/profile.hpp"

#ifndef NNPROF_GPU_DEMO_PATH
#error "the test target defines NNPROF_GPU_DEMO_PATH (the nnprof-gpu-demo executable)"
#endif

namespace {

namespace fs = std::filesystem;

// A few steps are enough for every check and keep the run short; the SGEMM keeps its default
// size so that cuBLAS picks the kernels it would for a real layer.
constexpr int kIterations = 5;
constexpr int kTimedRuns = 10;
constexpr const char* kDemoKernels[] = {"vec_add", "gelu", "relu", "reduce_sum"};

struct DemoRun {
  int status = -1;
  std::string output;  // stdout and stderr
  fs::path dir;
  nnprof::Profile profile;
  std::string load_error;
};

/// The demo's output directory, removed when the test program ends.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("nnprof-gpu-device-test-" + std::to_string(getpid()));
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

/// One run of the demo shared by every test (it takes seconds: context creation, cuBLAS).
const DemoRun& demo_run() {
  static TempDir temp;
  static const DemoRun run = [] {
    DemoRun r;
    r.dir = temp.path;
    const std::string cmd = std::string(NNPROF_GPU_DEMO_PATH) + " --out " + r.dir.string() + " --iterations " +
                            std::to_string(kIterations) + " --timed-runs " + std::to_string(kTimedRuns) + " 2>&1";
    if (FILE* pipe = popen(cmd.c_str(), "r"); pipe != nullptr) {
      std::array<char, 4096> buf{};
      while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
      const int raw = pclose(pipe);
      r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
    }
    if (r.status == 0) {
      try {
        r.profile = nnprof::Profile::load((r.dir / "profile.nnprof").string());
      } catch (const std::exception& e) {
        r.load_error = e.what();
      }
    }
    return r;
  }();
  return run;
}

/// Skips the test without a usable GPU; otherwise fails it unless the demo ran and its profile
/// loaded.
#define REQUIRE_GPU_PROFILE()                                                                        \
  do {                                                                                               \
    if (const nnprof::GpuStatus status = nnprof::gpu_available(); !status.tracing()) {               \
      GTEST_SKIP() << status.message;                                                                \
    }                                                                                                \
    const DemoRun& run = demo_run();                                                                 \
    ASSERT_EQ(run.status, 0) << "nnprof-gpu-demo failed:\n" << run.output;                           \
    ASSERT_TRUE(run.load_error.empty()) << run.load_error;                                           \
    ASSERT_TRUE(run.profile.gpu.summary.traced) << run.profile.gpu.summary.status << "\n" << run.output; \
  } while (false)

std::uint64_t annotation(const nnprof::Profile& p, const std::string& key) {
  const auto it = p.annotations.find(key);
  if (it == p.annotations.end()) {
    ADD_FAILURE() << "the demo's profile has no annotation " << key;
    return 0;
  }
  return std::stoull(it->second);
}

double annotation_double(const nnprof::Profile& p, const std::string& key) {
  const auto it = p.annotations.find(key);
  if (it == p.annotations.end()) {
    ADD_FAILURE() << "the demo's profile has no annotation " << key;
    return 0.0;
  }
  return std::stod(it->second);
}

/// Which of the demo's kernels `name` is ("vec_add(float const*, ...)" is vec_add), or "".
std::string demo_kernel(std::string_view name) {
  for (const char* k : kDemoKernels)
    if (name.starts_with(std::string(k) + "(")) return k;
  return {};
}

bool ends_with_scope(const std::string& path, std::string_view scope) {
  return path == scope || path.ends_with(" > " + std::string(scope));
}

/// Launched inside a "gemm" scope: work cuBLAS issues, whose count and kind are cuBLAS's choice.
bool in_gemm(const nnprof::Profile& p, const nnprof::GpuOp& op) {
  const std::string path = p.node_path(op.launch.node);
  return ends_with_scope(path, "gemm") || path.find(" > gemm > ") != std::string::npos;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

TEST(GpuDevice, DemoTracedCompletely) {
  REQUIRE_GPU_PROFILE();
  const DemoRun& run = demo_run();
  const nnprof::GpuSummary& s = run.profile.gpu.summary;
  EXPECT_EQ(s.records_dropped, 0u);
  EXPECT_EQ(s.records_refused, 0u);
  EXPECT_EQ(s.records_incomplete, 0u);
  EXPECT_EQ(s.records_untimed, 0u);
  EXPECT_FALSE(run.profile.gpu.devices.empty());
  EXPECT_EQ(annotation(run.profile, "gpu_demo.iterations"), static_cast<std::uint64_t>(kIterations));
  for (const char* file : {"report.txt", "report.md", "report.json", "report.html", "report.csv", "trace.json"})
    EXPECT_TRUE(fs::exists(run.dir / file)) << file;
}

TEST(GpuDevice, ExactKernelCountsPerDemangledName) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  std::map<std::string, std::uint64_t> counts;
  bool vec_add_signature = false;
  for (const nnprof::GpuOp& op : p.gpu.ops) {
    if (op.kind != nnprof::GpuOpKind::Kernel) continue;
    const std::string& name = p.str(op.name);
    if (const std::string k = demo_kernel(name); !k.empty()) ++counts[k];
    vec_add_signature |= name == "vec_add(float const*, float const*, float*, int)";
  }
  for (const char* k : kDemoKernels)
    EXPECT_EQ(counts[k], annotation(p, std::string("gpu_demo.expected.kernels.") + k)) << k;
  EXPECT_GT(counts["vec_add"], 0u);
  EXPECT_TRUE(vec_add_signature) << "vec_add's demangled name has its parameter list";
}

TEST(GpuDevice, CublasGemmKernelsAttributedToGemmScope) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  std::uint64_t in_scope = 0;
  bool named_gemm = false;
  for (const nnprof::GpuOp& op : p.gpu.ops) {
    if (op.kind != nnprof::GpuOpKind::Kernel || !demo_kernel(p.str(op.name)).empty()) continue;
    if (!ends_with_scope(p.node_path(op.launch.node), "gemm")) continue;
    ++in_scope;
    named_gemm |= lower(p.str(op.name)).find("gemm") != std::string::npos;
  }
  // Each cublasSgemm launches one kernel or more (a split-K reduction adds one).
  EXPECT_GE(in_scope, annotation(p, "gpu_demo.expected.sgemm_calls"));
  EXPECT_TRUE(named_gemm) << "no kernel named like a GEMM was launched in a gemm scope";
  // GPU time per scope name: the gemm scope paid for GPU work.
  const auto gemm = std::find_if(p.gpu.scopes.begin(), p.gpu.scopes.end(),
                                 [&](const nnprof::GpuScopeStats& s) { return p.str(s.name) == "gemm"; });
  ASSERT_NE(gemm, p.gpu.scopes.end());
  EXPECT_GE(gemm->kernels, annotation(p, "gpu_demo.expected.sgemm_calls"));
  EXPECT_GT(gemm->kernel_ns, 0u);
}

TEST(GpuDevice, MemcpyAndMemsetBytesPerKind) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  std::map<std::string, std::uint64_t> count, bytes;
  std::uint64_t memsets = 0, memset_bytes = 0, other_copies = 0;
  for (const nnprof::GpuOp& op : p.gpu.ops) {
    if (op.kind == nnprof::GpuOpKind::Kernel || in_gemm(p, op)) continue;
    if (op.kind == nnprof::GpuOpKind::Memset) {
      ASSERT_LT(op.detail, p.gpu.memsets.size());
      ++memsets;
      memset_bytes += p.gpu.memsets[op.detail].bytes;
      continue;
    }
    ASSERT_LT(op.detail, p.gpu.memcpys.size());
    const nnprof::GpuMemcpy& c = p.gpu.memcpys[op.detail];
    const char* kind = c.kind == nnprof::MemcpyKind::HtoD ? "HtoD" : c.kind == nnprof::MemcpyKind::DtoH ? "DtoH" : nullptr;
    if (kind == nullptr) {
      ++other_copies;
      continue;
    }
    const std::string key = std::string(kind) + "." + (c.pageable() ? "pageable" : "pinned");
    ++count[key];
    bytes[key] += c.bytes;
    // The demo's pageable host-to-device copies are its synchronous cudaMemcpy calls, its pinned
    // copies cudaMemcpyAsync calls. (Its pageable DtoH copies are cudaMemcpyAsync calls that the
    // driver runs synchronously; which of the two CUPTI says is not checked.)
    if (key == "HtoD.pageable") {
      EXPECT_FALSE(c.async) << key;
    }
    if (!c.pageable()) {
      EXPECT_TRUE(c.async) << key;
    }
    if (!c.pageable()) {
      EXPECT_TRUE(c.src == nnprof::GpuMemoryKind::Pinned || c.dst == nnprof::GpuMemoryKind::Pinned) << key;
    }
  }
  for (const char* key : {"HtoD.pinned", "HtoD.pageable", "DtoH.pinned", "DtoH.pageable"}) {
    EXPECT_EQ(count[key], annotation(p, std::string("gpu_demo.expected.memcpy.") + key + ".count")) << key;
    EXPECT_EQ(bytes[key], annotation(p, std::string("gpu_demo.expected.memcpy.") + key + ".bytes")) << key;
  }
  EXPECT_EQ(other_copies, 0u) << "the demo issues host-to-device and device-to-host copies only";
  EXPECT_EQ(memsets, annotation(p, "gpu_demo.expected.memset.count"));
  EXPECT_EQ(memset_bytes, annotation(p, "gpu_demo.expected.memset.bytes"));
}

TEST(GpuDevice, TwoStreamsOverlap) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  const nnprof::StreamReport r = nnprof::stream_report(p);
  int busy_streams = 0;
  bool kernels_and_copies_apart = false;
  for (const nnprof::StreamStats& s : r.streams) {
    ASSERT_LT(s.stream, p.gpu.streams.size());
    if (p.gpu.streams[s.stream].is_default || s.ops == 0) continue;
    ++busy_streams;
    EXPECT_GT(s.busy_ns, 0u);
    EXPECT_LE(s.busy_ns, s.last_ns - s.first_ns);
    kernels_and_copies_apart |= s.kernels == 0;  // the copy stream runs copies only
  }
  EXPECT_GE(busy_streams, 2) << "the compute and the copy stream";
  EXPECT_TRUE(kernels_and_copies_apart);
  ASSERT_FALSE(r.devices.empty());
  EXPECT_GT(r.devices.front().overlap_ns, 0u) << "the prefetch copy runs while the compute stream's kernels do";
}

TEST(GpuDevice, LaunchesPrecedeWorkAndSynchronisedScopesContainIt) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  // What the clock mapping may be off by (0 where CUPTI takes nnprof's own clock).
  const std::uint64_t slack = p.gpu.summary.clock_uncertainty_ns;
  std::uint64_t checked = 0;
  for (const nnprof::GpuOp& op : p.gpu.ops) {
    const std::string name = p.str(op.name);
    if (op.launch.thread == nnprof::kNone) {
      // cuBLAS may launch through paths nnprof does not see; the demo's own launches it must.
      EXPECT_TRUE(demo_kernel(name).empty()) << name << " has no launch";
      continue;
    }
    EXPECT_LE(op.launch.time_ns, op.start_ns + slack) << name << " started before its launch";
    EXPECT_LE(op.start_ns, op.end_ns) << name;
    // Every top-level scope of the demo waits for the GPU work it issued, so that work lies
    // inside the scope's span.
    const nnprof::Span* top = nullptr;
    for (const nnprof::Span& s : p.spans)
      if (s.thread == op.launch.thread && s.depth == 1 && s.start_ns <= op.launch.time_ns && op.launch.time_ns <= s.end_ns)
        top = &s;
    ASSERT_NE(top, nullptr) << name << " launched outside every top-level scope";
    EXPECT_GE(op.start_ns + slack, top->start_ns) << name << " in " << p.str(top->name);
    EXPECT_LE(op.end_ns, top->end_ns + slack) << name << " outlives its synchronised scope " << p.str(top->name);
    ++checked;
  }
  EXPECT_GT(checked, 0u);
}

TEST(GpuDevice, CudaTimerAgreesWithHostClock) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  EXPECT_EQ(annotation(p, "gpu_demo.timer.runs"), static_cast<std::uint64_t>(kTimedRuns));
  const double gpu_ms = annotation_double(p, "gpu_demo.timer.mean_ms");
  const double host_ms = annotation_double(p, "gpu_demo.host.mean_ms");
  EXPECT_GT(gpu_ms, 0.0);
  // The host's interval holds the GPU's plus the launch and event-wait latencies.
  EXPECT_LE(std::fabs(gpu_ms - host_ms), 0.1 * host_ms + 0.050)
      << "CudaTimer " << gpu_ms << " ms, steady_clock " << host_ms << " ms";
}

TEST(GpuDevice, MemoryPeakAndTheOneLeak) {
  REQUIRE_GPU_PROFILE();
  const nnprof::Profile& p = demo_run().profile;
  const nnprof::GpuMemoryReport m = nnprof::gpu_memory_report(p);
  ASSERT_EQ(m.devices.size(), 1u) << "the demo uses device 0 only";
  const nnprof::GpuDeviceMemory& d = m.devices.front();
  const std::uint64_t leak = annotation(p, "gpu_demo.expected.leak_bytes");
  EXPECT_EQ(d.peak_bytes, annotation(p, "gpu_demo.expected.peak_bytes"));
  EXPECT_EQ(d.alloc_count, annotation(p, "gpu_demo.expected.alloc_count"));
  EXPECT_EQ(d.free_count + 1, d.alloc_count);
  EXPECT_EQ(d.live_bytes, leak);
  EXPECT_EQ(m.untracked_frees, 0u);
  ASSERT_EQ(m.leaks.size(), 1u);
  EXPECT_EQ(m.leaks.front().bytes, leak);
  EXPECT_EQ(m.leaks.front().blocks, 1u);
  EXPECT_EQ(p.node_path(m.leaks.front().node), p.annotations.at("gpu_demo.expected.leak_scope"));
  if (d.nvml_used_max > 0) {
    EXPECT_GE(d.nvml_used_max, d.peak_bytes) << "NVML sees at least the demo's allocations";
  }
}

}  // namespace
