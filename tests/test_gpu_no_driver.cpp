// GPU collection where it cannot run: a machine without the NVIDIA driver, or a libnnprof built
// without CUDA. The status says why in a sentence, CudaProfiler never throws and leaves the
// profile usable, CudaTimer refuses with nnprof::Error, and the GPU demo and `nnprof demo --gpu`
// exit with their documented statuses. On a machine with a driver every test skips: the `gpu`
// tests (tests/gpu) cover it there.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>

#include "nnprof/error.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace {

namespace fs = std::filesystem;

// Without CUDA at build time nothing is loaded at all; with it, this is what a missing
// libcuda.so.1 gives.
#if NNPROF_TEST_CUDA_ENABLED
constexpr nnprof::GpuStatusCode kExpected = nnprof::GpuStatusCode::NoDriver;
#else
constexpr nnprof::GpuStatusCode kExpected = nnprof::GpuStatusCode::NotBuilt;
#endif

#define SKIP_WITH_DRIVER()                                                                                  \
  do {                                                                                                      \
    if (const nnprof::GpuStatus s = nnprof::gpu_available(); s.code != kExpected) {                        \
      GTEST_SKIP() << "a CUDA driver is present (" << nnprof::to_string(s.code) << ": " << s.message        \
                   << "); this test covers machines without one";                                          \
    }                                                                                                       \
  } while (false)

struct CommandResult {
  int status = -1;
  std::string output;
};

/// Runs `cmd` through the shell; `output` holds what it wrote to the streams the command
/// redirects into the pipe.
CommandResult run(const std::string& cmd) {
  CommandResult r;
  FILE* pipe = popen(cmd.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buf{};
  while (std::fgets(buf.data(), buf.size(), pipe) != nullptr) r.output += buf.data();
  const int raw = pclose(pipe);
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  return r;
}

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name) : path(fs::temp_directory_path() / (name + std::to_string(getpid()))) {
    fs::remove_all(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

TEST(GpuNoDriver, StatusSaysWhy) {
  SKIP_WITH_DRIVER();
  const nnprof::GpuStatus status = nnprof::gpu_available();
  EXPECT_EQ(status.code, kExpected);
  EXPECT_FALSE(status.tracing());
  EXPECT_NE(status.message.find("GPU collection disabled"), std::string::npos) << status.message;
#if NNPROF_TEST_CUDA_ENABLED
  EXPECT_NE(status.message.find("no CUDA driver found"), std::string::npos) << status.message;
#endif
  EXPECT_STRNE(nnprof::to_string(status.code), "");
  // Asked again, the same answer: the probe is cached, not retried per call.
  EXPECT_EQ(nnprof::gpu_available().message, status.message);
}

TEST(GpuNoDriver, CudaProfilerReportsTheSameStatusAndTheProfileStaysUsable) {
  SKIP_WITH_DRIVER();
  const nnprof::GpuStatus status = nnprof::gpu_available();
  nnprof::Profiler profiler;
  {
    std::unique_ptr<nnprof::CudaProfiler> gpu;
    ASSERT_NO_THROW(gpu = std::make_unique<nnprof::CudaProfiler>(profiler));
    EXPECT_EQ(gpu->status().code, status.code);
    EXPECT_EQ(gpu->status().message, status.message);
    EXPECT_FALSE(gpu->active());
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      NNPROF_SCOPE_IN(profiler, "matmul");
    }
    gpu->stop();
    EXPECT_EQ(gpu->stats().records, 0u);
    EXPECT_EQ(gpu->status().code, status.code) << "stop() on a collector that never ran changes nothing";
  }
  { nnprof::CudaCorrelation tag(42); }  // a no-op without CUPTI, never an error

  const nnprof::Profile profile = profiler.snapshot();
  ASSERT_NE(profile.find_scope("forward"), nullptr);
  ASSERT_NE(profile.find_scope("matmul"), nullptr);
  EXPECT_EQ(profile.find_scope("matmul")->time.count, 1u);
  EXPECT_FALSE(profile.gpu.summary.traced);
  EXPECT_TRUE(profile.gpu.ops.empty());
  EXPECT_TRUE(profile.gpu.devices.empty());
  EXPECT_TRUE(nnprof::stream_report(profile).streams.empty());
  EXPECT_TRUE(nnprof::gpu_memory_report(profile).devices.empty());

  TempDir dir("nnprof-gpu-no-driver-");
  fs::create_directories(dir.path);
  const std::string file = (dir.path / "cpu-only.nnprof").string();
  profile.save(file);
  const nnprof::Profile loaded = nnprof::Profile::load(file);
  EXPECT_FALSE(loaded.gpu.summary.traced);
  EXPECT_NE(loaded.find_scope("matmul"), nullptr);
}

TEST(GpuNoDriver, CudaTimerThrowsWithTheReason) {
  SKIP_WITH_DRIVER();
  try {
    nnprof::CudaTimer timer;
    FAIL() << "CudaTimer constructed without a driver";
  } catch (const nnprof::Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("CudaTimer"), std::string::npos) << what;
    EXPECT_NE(what.find("GPU collection disabled"), std::string::npos) << what;
  }
}

TEST(GpuNoDriver, GpuDemoExitsWithNoGpuStatus) {
  SKIP_WITH_DRIVER();
#ifndef NNPROF_GPU_DEMO_PATH
  GTEST_SKIP() << "built without the GPU demo (no nvcc at build time)";
#else
  TempDir dir("nnprof-gpu-demo-no-driver-");
  // stderr alone into the pipe: the status message belongs there.
  const CommandResult r = run(std::string(NNPROF_GPU_DEMO_PATH) + " --out " + dir.path.string() + " 2>&1 >/dev/null");
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find(nnprof::gpu_available().message), std::string::npos) << r.output;
  EXPECT_FALSE(fs::exists(dir.path / "profile.nnprof"));
#endif
}

TEST(GpuNoDriver, CliDemoGpuPassesTheDemosStatusThrough) {
  SKIP_WITH_DRIVER();
#ifndef NNPROF_CLI_PATH
  GTEST_SKIP() << "built without the nnprof CLI";
#else
  TempDir dir("nnprof-cli-demo-gpu-");
  const CommandResult r = run(std::string(NNPROF_CLI_PATH) + " demo --gpu --iterations 2 --size 256 --out " + dir.path.string() +
                    " 2>&1");
#ifdef NNPROF_GPU_DEMO_PATH
  EXPECT_EQ(r.status, 3) << r.output;
  EXPECT_NE(r.output.find("GPU collection disabled"), std::string::npos) << r.output;
#else
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("built without the GPU demo (no CUDA toolkit found at build time)"), std::string::npos)
      << r.output;
#endif
  // The GPU demo's options belong to --gpu, and --gpu refuses the CPU demo's.
  const CommandResult cpu_only = run(std::string(NNPROF_CLI_PATH) + " demo --iterations 3 2>&1");
  EXPECT_EQ(cpu_only.status, 2) << cpu_only.output;
  EXPECT_NE(cpu_only.output.find("--iterations applies to --gpu only"), std::string::npos) << cpu_only.output;
  const CommandResult mixed = run(std::string(NNPROF_CLI_PATH) + " demo --gpu --workload training 2>&1");
  EXPECT_EQ(mixed.status, 2) << mixed.output;
  EXPECT_NE(mixed.output.find("--workload does not apply to --gpu"), std::string::npos) << mixed.output;
#endif
}

}  // namespace
