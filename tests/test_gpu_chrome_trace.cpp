// The GPU part of the Chrome trace (io/chrome_trace.cpp): a process per device, a thread per
// stream, ops and CUDA API calls as complete events with their arguments, launch arrows from
// the CPU to the GPU, and the NVML and allocated-memory counters. Parsed back with nlohmann-json.
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpu_profile_fixture.hpp"
#include "io/chrome_trace.hpp"
#include "nnprof/nnprof.hpp"

namespace {

using nlohmann::json;

constexpr std::int64_t kGpu0 = 0x7F000000;
constexpr std::int64_t kGpu1 = 0x7F000001;
constexpr std::int64_t kCpuPid = 4242;  // rich_profile's

json trace_of(const nnprof::Profile& p) {
  std::ostringstream out;
  nnprof::io::write_chrome_trace(p, out);
  return json::parse(out.str());  // throws, failing the test, if not valid JSON
}

std::vector<json> events(const json& j, const std::string& ph, const std::string& cat = "") {
  std::vector<json> out;
  for (const json& e : j["traceEvents"])
    if (e["ph"] == ph && (cat.empty() || e.value("cat", "") == cat)) out.push_back(e);
  return out;
}

const json& named(const std::vector<json>& list, const std::string& name) {
  for (const json& e : list)
    if (e["name"] == name) return e;
  static const json none;
  ADD_FAILURE() << "no event named " << name;
  return none;
}

// A trace with one thread flow (id 1) before the launches, so that their ids must follow it.
nnprof::Profile profile_with_a_thread_flow() {
  nnprof::Profile p = nnprof::testing::gpu_profile();
  nnprof::Flow f;
  f.id = 77;
  f.out = nnprof::FlowEndpoint{0, 1'500'000, 2, 1};
  f.in = nnprof::FlowEndpoint{1, 6'000'000, 4, 6};
  p.flows = {f};
  return p;
}

TEST(GpuChromeTrace, OneProcessPerDeviceAndOneThreadPerStream) {
  const json j = trace_of(nnprof::testing::gpu_profile());
  std::map<std::int64_t, std::string> processes;
  std::map<std::int64_t, std::int64_t> sort_index;
  std::map<std::pair<std::int64_t, std::int64_t>, std::string> threads;
  for (const json& e : events(j, "M")) {
    if (e["name"] == "process_name") processes[e["pid"]] = e["args"]["name"];
    if (e["name"] == "process_sort_index") sort_index[e["pid"]] = e["args"]["sort_index"];
    if (e["name"] == "thread_name") threads[{e["pid"], e["tid"]}] = e["args"]["name"];
  }
  EXPECT_EQ(processes.at(kGpu0), "GPU 0: NVIDIA H100 80GB HBM3");
  EXPECT_EQ(processes.at(kGpu1), "GPU 1: NVIDIA A100-SXM4-40GB");
  EXPECT_EQ(sort_index, (std::map<std::int64_t, std::int64_t>{{kCpuPid, 0}, {kGpu0, 1}, {kGpu1, 2}}));
  EXPECT_EQ(threads.at({kGpu0, 7}), "stream 7 (default)");
  EXPECT_EQ(threads.at({kGpu0, 13}), "stream 13");
  EXPECT_EQ(threads.at({kGpu1, 21}), "stream 21");
  EXPECT_EQ(threads.at({kCpuPid, 1001}), "main");
  EXPECT_EQ(j["otherData"]["gpu"]["status"], "CUPTI 13.0.1 tracing 2 devices");
  EXPECT_EQ(j["otherData"]["gpu"]["gpu_pid_base"], kGpu0);
}

TEST(GpuChromeTrace, OpsAreCompleteEventsWithTheirArguments) {
  const json j = trace_of(nnprof::testing::gpu_profile());
  const auto kernels = events(j, "X", "kernel");
  ASSERT_EQ(kernels.size(), 2u);
  const json& gemm = named(kernels, "gemm_kernel<float>(float const*, float const*, float*, int)");
  EXPECT_EQ(gemm["pid"], kGpu0);
  EXPECT_EQ(gemm["tid"], 7);
  EXPECT_DOUBLE_EQ(gemm["ts"].get<double>(), 2200.0);
  EXPECT_DOUBLE_EQ(gemm["dur"].get<double>(), 700.0);
  EXPECT_EQ(gemm["args"]["grid"], json({64, 32, 2}));
  EXPECT_EQ(gemm["args"]["block"], json({16, 16, 1}));
  EXPECT_EQ(gemm["args"]["registers_per_thread"], 128);
  EXPECT_EQ(gemm["args"]["shared_bytes"], 49152 + 1024);
  EXPECT_EQ(gemm["args"]["correlation_id"], 101);
  EXPECT_EQ(gemm["args"]["scope"], "train_step > forward > matmul, \"fast\"");
  EXPECT_FALSE(gemm["args"].contains("occupancy")) << "occupancy not known (< 0)";
  const json& reduce = named(kernels, "reduce \"sum\" kernel");
  EXPECT_EQ(reduce["pid"], kGpu0);
  EXPECT_EQ(reduce["tid"], 13);
  EXPECT_DOUBLE_EQ(reduce["args"]["occupancy"].get<double>(), 0.123456789);
  EXPECT_EQ(reduce["args"]["occupancy_estimated"], true);
  EXPECT_EQ(reduce["args"]["scope"], "<script>alert(1)</script>");

  const auto copies = events(j, "X", "memcpy");
  ASSERT_EQ(copies.size(), 2u);
  const json& htod = named(copies, "Memcpy HtoD");
  EXPECT_EQ(htod["args"]["kind"], "HtoD");
  EXPECT_EQ(htod["args"]["bytes"], 8 * nnprof::testing::kMiB + 3);
  EXPECT_EQ(htod["args"]["src_memory"], "pageable");
  EXPECT_EQ(htod["args"]["pageable"], true);
  EXPECT_EQ(htod["args"]["async"], false);
  EXPECT_NEAR(htod["args"]["GB/s"].get<double>(), (8.0 * 1048576 + 3) / 300'000.0, 1e-3);
  const json& peer = named(copies, "Memcpy PtoP");
  EXPECT_EQ(peer["pid"], kGpu1);
  EXPECT_EQ(peer["tid"], 21);
  EXPECT_EQ(peer["args"]["pageable"], false);
  EXPECT_EQ(peer["args"]["async"], true);
  EXPECT_EQ(peer["args"]["src_device"], 0);
  EXPECT_EQ(peer["args"]["dst_device"], 1);
  EXPECT_NEAR(peer["args"]["GB/s"].get<double>(), 1073741824.0 / 250'000.0, 1e-3);

  const auto memsets = events(j, "X", "memset");
  ASSERT_EQ(memsets.size(), 1u);
  EXPECT_EQ(memsets[0]["args"]["bytes"], 4096);
  EXPECT_EQ(memsets[0]["args"]["value"], 255);
  EXPECT_DOUBLE_EQ(memsets[0]["dur"].get<double>(), 20.0);
}

TEST(GpuChromeTrace, ApiCallsAreSlicesOnTheirCpuThread) {
  const json j = trace_of(nnprof::testing::gpu_profile());
  const auto calls = events(j, "X", "cuda_api");
  ASSERT_EQ(calls.size(), 4u) << "the call on a thread nnprof does not know has no track";
  for (const json& c : calls) {
    EXPECT_EQ(c["pid"], kCpuPid);
    EXPECT_EQ(c["tid"], 1001);
  }
  const json& copy = named(calls, "cudaMemcpyAsync");
  EXPECT_DOUBLE_EQ(copy["ts"].get<double>(), 1100.0);
  EXPECT_DOUBLE_EQ(copy["dur"].get<double>(), 200.0);
  EXPECT_EQ(copy["args"]["correlation_id"], 100);
  EXPECT_EQ(copy["args"]["driver"], false);
  const json& launch = named(calls, "cudaLaunchKernel");
  EXPECT_EQ(launch["args"]["external_id"], 0xFFFF'FFFF'FFFF'FFF0ULL);
  EXPECT_EQ(named(calls, "cudaMemset")["args"]["return_value"], 2);
}

TEST(GpuChromeTrace, LaunchArrowsGoFromTheCpuToTheOpAfterTheThreadFlows) {
  const json j = trace_of(profile_with_a_thread_flow());
  std::map<std::uint64_t, json> starts;
  std::map<std::uint64_t, json> finishes;
  for (const json& e : events(j, "s")) starts[e["id"]] = e;
  for (const json& e : events(j, "f")) finishes[e["id"]] = e;
  // Id 1: the thread flow. Ops 0-3 get 2-5; op 4 was launched by an unknown thread: no arrow.
  ASSERT_EQ(starts.size(), 5u);
  ASSERT_EQ(finishes.size(), 5u);
  EXPECT_EQ(starts.at(1)["cat"], "flow");
  const std::vector<std::tuple<std::uint64_t, std::int64_t, double, std::int64_t, std::int64_t, double>> expected = {
      // id, CPU tid, s ts (µs), GPU pid, stream tid, f ts (µs)
      {2, 1001, 1100.0, kGpu0, 7, 1200.0},    // the copy, from its cudaMemcpyAsync
      {3, 1001, 2100.0, kGpu0, 7, 2200.0},    // gemm, from its cudaLaunchKernel
      {4, 1001, 2500.0, kGpu0, 13, 2600.0},   // the memset
      {5, 1002, 6000.0, kGpu0, 13, 30000.0},  // reduce: no traced call, from its launch time in the scope
  };
  for (const auto& [id, cpu_tid, s_ts, gpu_pid, stream_tid, f_ts] : expected) {
    SCOPED_TRACE(id);
    const json& s = starts.at(id);
    const json& f = finishes.at(id);
    EXPECT_EQ(s["cat"], "gpu_launch");
    EXPECT_EQ(s["pid"], kCpuPid);
    EXPECT_EQ(s["tid"], cpu_tid);
    EXPECT_DOUBLE_EQ(s["ts"].get<double>(), s_ts);
    EXPECT_EQ(f["bp"], "e");
    EXPECT_EQ(f["pid"], gpu_pid);
    EXPECT_EQ(f["tid"], stream_tid);
    EXPECT_DOUBLE_EQ(f["ts"].get<double>(), f_ts);
  }
}

TEST(GpuChromeTrace, NvmlSeriesAndAllocatedMemoryAreCounterTracksPerDevice) {
  const json j = trace_of(nnprof::testing::gpu_profile());
  std::map<std::pair<std::int64_t, std::string>, std::vector<std::pair<double, double>>> series;
  for (const json& e : events(j, "C")) {
    ASSERT_EQ(e["args"].size(), 1u);
    series[{e["pid"], e["name"]}].emplace_back(e["ts"].get<double>(), e["args"].begin().value().get<double>());
  }
  using Points = std::vector<std::pair<double, double>>;
  EXPECT_EQ(series.at({kGpu0, "NVML memory used"}), (Points{{0.0, 1.5e9}, {100'000.0, 1'753'219'072.0}}));
  EXPECT_EQ(series.at({kGpu0, "NVML GPU utilisation"}), (Points{{0.0, 0.0}, {100'000.0, 87.5}}));
  EXPECT_EQ(series.at({kGpu1, "NVML memory utilisation"}), (Points{{50'000.0, 12.25}}));
  // Allocations minus matched releases; the release of untracked memory changes nothing.
  EXPECT_EQ(series.at({kGpu0, "GPU memory allocated"}), (Points{{50'550.0, 16.0 * 1048576}, {100'000.0, 0.0}}));
  EXPECT_EQ(series.at({kGpu1, "GPU memory allocated"}), (Points{{52'000.0, 1048576.0}, {101'000.0, 1048576.0}}));
  for (const json& e : events(j, "C")) {
    if (e["name"] == "NVML memory used") {
      EXPECT_TRUE(e["args"].contains("bytes"));
    }
  }
}

TEST(GpuChromeTrace, AProfileWithoutGpuHasNoGpuProcess) {
  const json j = trace_of(nnprof::testing::rich_profile());
  for (const json& e : j["traceEvents"]) {
    EXPECT_EQ(e["pid"], kCpuPid);
    EXPECT_NE(e["name"], "process_sort_index");
  }
  EXPECT_FALSE(j["otherData"].contains("gpu"));
}

}  // namespace
