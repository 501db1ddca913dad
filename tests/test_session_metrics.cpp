// Profiler::profile (nnprof/session_metrics.hpp): wall, CPU, user and system time, CPU
// utilisation, RSS and FLOP/s of a region, kept when the region throws.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <time.h>

#include <chrono>
#include <cstring>
#include <regex>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "nnprof/nnprof.hpp"

namespace {

std::uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000 + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Burns `ns` of this thread's CPU time, however loaded the machine is.
double burn_cpu(std::uint64_t ns) {
  const std::uint64_t end = thread_cpu_ns() + ns;
  volatile double x = 1.0;
  while (thread_cpu_ns() < end)
    for (int i = 0; i < 10'000; ++i) x = x * 1.0000001 + 1e-9;
  return x;
}

constexpr std::uint64_t kMs = 1'000'000;

TEST(SessionMetrics, CpuBoundRegionMeasuresWallAndCpuTime) {
  nnprof::Profiler p;
  EXPECT_FALSE(p.has_results());
  {
    auto region = p.profile("busy");
    burn_cpu(60 * kMs);
  }
  ASSERT_TRUE(p.has_results());
  const auto m = p.get_metrics("busy");
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->name, "busy");
  EXPECT_TRUE(m->completed);
  const nnprof::RegionTiming& t = m->timing;
  // getrusage counts the whole process: at least the 60 ms this thread burnt (rusage ticks
  // may lag by a few ms), and the wall time at least as long as this thread ran. How that CPU
  // time splits between user and system depends on the build (reading the thread's CPU clock
  // is a system call), and the utilisation on how loaded the machine is: neither is bounded.
  EXPECT_GE(t.cpu_ns, 50 * kMs);
  EXPECT_GT(t.user_ns, 0U);
  EXPECT_EQ(t.cpu_ns, t.user_ns + t.system_ns);
  EXPECT_GE(t.wall_ns, 60 * kMs);
  EXPECT_LT(t.wall_ns, 60'000 * kMs);
  EXPECT_GT(t.cpu_utilization, 0.0);
  EXPECT_DOUBLE_EQ(t.cpu_utilization, static_cast<double>(t.cpu_ns) / static_cast<double>(t.wall_ns));
  EXPECT_GT(t.cpu_utilization_of_machine, 0.0);
  EXPECT_LE(t.cpu_utilization_of_machine, t.cpu_utilization);
  // The region is a scope of the profiler too.
  EXPECT_EQ(p.call_count("busy"), 1U);
}

TEST(SessionMetrics, SleepingRegionUsesLittleCpu) {
  nnprof::Profiler p;
  {
    auto region = p.profile("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
  }
  const auto m = p.get_metrics();
  ASSERT_TRUE(m.has_value());
  EXPECT_GE(m->timing.wall_ns, 40 * kMs);
  EXPECT_LT(m->timing.cpu_utilization, 0.5);
}

TEST(SessionMetrics, RssRiseIsThePeakAndTheFinalDropIsSeen) {
  nnprof::Profiler p;
  constexpr std::size_t kBytes = std::size_t{96} << 20;
  {
    auto region = p.profile("allocate");
    void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(block, MAP_FAILED);
    std::memset(block, 1, kBytes);  // resident now
    munmap(block, kBytes);
  }
  const auto m = p.get_metrics("allocate");
  ASSERT_TRUE(m.has_value());
  const nnprof::RegionMemory& r = m->memory;
  EXPECT_GT(r.rss_initial_bytes, 0U);
  EXPECT_TRUE(r.rss_peak_exact) << "96 MiB more than ever before raises VmHWM";
  EXPECT_GE(r.rss_peak_bytes, r.rss_initial_bytes + kBytes - (std::size_t{8} << 20));
  EXPECT_LT(r.rss_final_bytes, r.rss_peak_bytes - (std::size_t{64} << 20));
}

TEST(SessionMetrics, FlopsPerSecondFromTheGuardAndFromScopesInside) {
  nnprof::Profiler p;
  {
    auto region = p.profile("train");
    region.add_flops(3e9);
    {
      NNPROF_SCOPE_IN(p, "matmul");
      p.add_flops(1e9);  // declared in a scope inside the region
    }
    p.add_flops(5e8);  // in the region's own scope
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const auto m = p.get_metrics("train");
  ASSERT_TRUE(m.has_value());
  EXPECT_DOUBLE_EQ(m->compute.flops, 4.5e9);
  EXPECT_DOUBLE_EQ(m->compute.flops_per_second, 4.5e9 * 1e9 / static_cast<double>(m->timing.wall_ns));
  // A second region of the same name counts only its own FLOPs.
  {
    auto region = p.profile("train");
    p.add_flops(2e9);
  }
  EXPECT_DOUBLE_EQ(p.get_metrics("train")->compute.flops, 2e9);
}

TEST(SessionMetrics, ResultsAreKeptWhenTheRegionThrows) {
  nnprof::Profiler p;
  try {
    auto region = p.profile("failing");
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    throw std::runtime_error("boom");
  } catch (const std::runtime_error&) {
  }
  ASSERT_TRUE(p.has_results());
  const auto m = p.get_metrics("failing");
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->completed);
  EXPECT_GE(m->timing.wall_ns, 5 * kMs);
  EXPECT_NE(m->summary().find("ended by an exception"), std::string::npos);
  // A region ended normally while an exception is in flight elsewhere is still complete.
  try {
    auto outer = p.profile("outer");
    throw std::runtime_error("x");
  } catch (const std::runtime_error&) {
    auto inside_handler = p.profile("handler");
  }
  EXPECT_TRUE(p.get_metrics("handler")->completed);
  EXPECT_FALSE(p.get_metrics("outer")->completed);
}

TEST(SessionMetrics, TimingBreakdownSumsRegionsByName) {
  nnprof::Profiler p;
  for (int i = 0; i < 2; ++i) {
    auto r = p.profile("data_loading");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  {
    auto r = p.profile("training");
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
  }
  const auto rows = p.get_timing_breakdown();
  ASSERT_EQ(rows.size(), 2U);
  EXPECT_EQ(rows[0].name, "data_loading");
  EXPECT_EQ(rows[0].count, 2U);
  EXPECT_GE(rows[0].wall_ns, 20 * kMs);
  EXPECT_EQ(rows[1].name, "training");
  EXPECT_EQ(rows[1].count, 1U);
  EXPECT_GE(rows[1].wall_ns, 30 * kMs);
  EXPECT_NEAR(rows[0].share + rows[1].share, 1.0, 1e-12);
  EXPECT_DOUBLE_EQ(rows[1].share, static_cast<double>(rows[1].wall_ns) /
                                      static_cast<double>(rows[0].wall_ns + rows[1].wall_ns));
  EXPECT_FALSE(p.get_metrics("never").has_value());
}

TEST(SessionMetrics, StopEndsTheRegionOnce) {
  nnprof::Profiler p;
  nnprof::RegionMetrics first;
  {
    auto r = p.profile("step");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const nnprof::RegionMetrics so_far = r.current();
    EXPECT_GE(so_far.timing.wall_ns, 2 * kMs);
    first = r.stop();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(r.stop(), first);
  }
  EXPECT_EQ(p.get_timing_breakdown().at(0).count, 1U) << "the destructor adds nothing after stop()";
  EXPECT_EQ(*p.get_metrics("step"), first);
}

TEST(SessionMetrics, SummaryIsOneLineWithUnitsAndJsonHasEveryField) {
  nnprof::Profiler p;
  {
    auto r = p.profile("training_loop");
    r.add_flops(2e9);
    burn_cpu(20 * kMs);
  }
  const nnprof::RegionMetrics m = *p.get_metrics("training_loop");
  const std::string line = m.summary();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  const std::regex shape(
      R"(^training_loop: wall [0-9.]+ (ms|s), CPU [0-9.]+ (µs|ms|s) \(user [0-9.]+ (ns|µs|ms|s), system [0-9.]+ (ns|µs|ms|s)\), )"
      R"(CPU utilisation [0-9]+% \([0-9.]+ cores, [0-9.<]+% of [0-9]+ CPUs\), )"
      R"(RSS [0-9.]+ (KiB|MiB|GiB) -> peak (>= )?[0-9.]+ (KiB|MiB|GiB) -> [0-9.]+ (KiB|MiB|GiB), [0-9.]+ GFLOP/s \(2 GFLOP\)$)");
  EXPECT_TRUE(std::regex_search(line, shape)) << line;

  const auto j = nlohmann::json::parse(m.to_json());
  EXPECT_EQ(j["name"], "training_loop");
  EXPECT_EQ(j["completed"], true);
  EXPECT_EQ(j["timing"]["wall_ns"].get<std::uint64_t>(), m.timing.wall_ns);
  EXPECT_EQ(j["timing"]["cpu_ns"].get<std::uint64_t>(), m.timing.cpu_ns);
  EXPECT_EQ(j["timing"]["user_ns"].get<std::uint64_t>(), m.timing.user_ns);
  EXPECT_EQ(j["timing"]["system_ns"].get<std::uint64_t>(), m.timing.system_ns);
  EXPECT_DOUBLE_EQ(j["timing"]["cpu_utilization"].get<double>(), m.timing.cpu_utilization);
  EXPECT_EQ(j["memory"]["rss_peak_bytes"].get<std::uint64_t>(), m.memory.rss_peak_bytes);
  EXPECT_EQ(j["memory"]["rss_peak_exact"].get<bool>(), m.memory.rss_peak_exact);
  EXPECT_DOUBLE_EQ(j["compute"]["flops"].get<double>(), 2e9);
  EXPECT_DOUBLE_EQ(j["compute"]["flops_per_second"].get<double>(), m.compute.flops_per_second);
}

}  // namespace
