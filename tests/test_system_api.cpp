// The public system monitor API (nnprof/system.hpp): regions of Profiler::profile gain the
// machine, energy and carbon over their time when a monitor is attached (sampled at their
// boundaries, so a region shorter than the interval is covered), and the window arithmetic
// behind it (analysis::system_between) on hand-built tracks.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "analysis/system_tracks.hpp"
#include "nnprof/nnprof.hpp"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

void spin_for(std::chrono::milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile unsigned x = 0;
  while (std::chrono::steady_clock::now() < end) x = x + 1;
}

TEST(SystemApi, ARegionShorterThanTheIntervalGetsTheMachineAndEnergyOverItsTime) {
  unsetenv("NNPROF_CARBON_REGION");
  nnprof::Profiler profiler;
  nnprof::SystemOptions options;
  options.interval_ms = 5'000;  // no tick of the thread inside the region: only its boundaries
  nnprof::SystemMonitor monitor(profiler, options);
  {
    auto region = profiler.profile("work");
    spin_for(std::chrono::milliseconds(200));
  }
  const auto m = profiler.get_metrics("work");
  ASSERT_TRUE(m.has_value());
  ASSERT_TRUE(m->system.has_value());
  const nnprof::RegionSystem& s = *m->system;
  EXPECT_GE(s.samples, 1u);
  EXPECT_GE(s.process_cpu_percent, 50.0) << "one thread spun through the region";
  EXPECT_LE(s.process_cpu_percent, 130.0);
  EXPECT_GT(s.memory_percent, 0.0);
  EXPECT_GT(s.energy_joules, 0.0);  // measured where RAPL is readable, else modelled
  EXPECT_EQ(s.carbon_region, "WORLD");
  EXPECT_GE(s.carbon_grams, s.carbon_low_grams);
  EXPECT_LE(s.carbon_grams, s.carbon_high_grams);
  EXPECT_NE(m->summary().find(", system: process CPU "), std::string::npos) << m->summary();
  const nlohmann::json j = nlohmann::json::parse(m->to_json());
  EXPECT_EQ(j["system"]["carbon_region"], "WORLD");
  EXPECT_TRUE(j["system"]["energy_joules"].is_number());
  monitor.stop();
  // The profile has the monitor's tracks too, with the boundary samples in them.
  const nnprof::Profile p = profiler.snapshot();
  ASSERT_TRUE(p.system.monitored);
  EXPECT_GE(p.system.sample_ns.size(), 3u);
}

TEST(SystemApi, ARegionWithoutAMonitorHasNoSystemFigures) {
  nnprof::Profiler profiler;
  { auto region = profiler.profile("plain"); }
  ASSERT_TRUE(profiler.get_metrics("plain").has_value());
  EXPECT_FALSE(profiler.get_metrics("plain")->system.has_value());
  EXPECT_EQ(nnprof::RegionMetrics{}.to_json().find("\"system\""), std::string::npos);
}

// A child forked while the monitor thread runs (a DataLoader worker, a subprocess helper) has no
// such thread, and may inherit its lock held: stopping or reading the monitor there must neither
// hang nor abort, and the parent's monitor goes on sampling.
TEST(SystemApi, AForkedChildCanStopAndReadTheMonitorWithoutHanging) {
  nnprof::SystemOptions options;
  options.interval_ms = 10;  // the thread holds its lock often: some forks catch it held
  nnprof::SystemMonitor monitor(options);
  for (int i = 0; i < 20; ++i) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      (void)monitor.result();
      monitor.stop();
      _exit(0);
    }
    int status = -1;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    pid_t done = 0;
    while ((done = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (done == 0) {
      kill(child, SIGKILL);
      waitpid(child, &status, 0);
      FAIL() << "fork " << i << ": the child hung in the monitor";
    }
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "fork " << i << ": status " << status;
  }
  const std::size_t before = monitor.result().sample_ns.size();
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_GT(monitor.result().sample_ns.size(), before);  // the parent's thread still samples
}

TEST(SystemApi, BadOptionsAreRefused) {
  nnprof::SystemOptions options;
  options.interval_ms = 5;
  EXPECT_THROW(nnprof::SystemMonitor{options}, nnprof::Error);
}

// Samples at 0, 1, 2, 3 s; a window [0.5 s, 2.5 s] takes half of interval 1, all of 2 and half of 3.
TEST(SystemBetween, WeighsEachIntervalByItsOverlapWithTheWindow) {
  nnprof::SystemProfile s;
  s.monitored = true;
  s.sample_ns = {0, 1'000'000'000, 2'000'000'000, 3'000'000'000};
  s.tracks = {{"disk.vda.read_bytes", "bytes/s", {kNaN, 100.0, 200.0, 400.0}},
              {"energy.package-0.power", "W", {kNaN, 10.0, 20.0, 40.0}},
              {"energy.psys.power", "W", {kNaN, 1000.0, 1000.0, 1000.0}},
              {"net.eth0.rx_bytes", "bytes/s", {kNaN, 10.0, 10.0, 10.0}},
              {"net.lo.tx_bytes", "bytes/s", {kNaN, 1e9, 1e9, 1e9}},
              {"process.cpu.system", "percent", {kNaN, 10.0, 0.0, 0.0}},
              {"process.cpu.user", "percent", {kNaN, 90.0, 50.0, kNaN}},
              {"system.memory.used", "percent", {5.0, 6.0, 9.0, 7.0}}};
  s.energy = {{"package-0", "cpu", nnprof::EnergyMethod::Rapl, 35.0, 0.05, "energy.package-0.power", ""},
              {"psys", "psys", nnprof::EnergyMethod::Rapl, 3000.0, 0.05, "energy.psys.power", ""}};
  const nnprof::analysis::WindowSystem w = nnprof::analysis::system_between(s, 500'000'000, 2'500'000'000);
  const nnprof::RegionSystem& r = w.figures;
  EXPECT_EQ(r.samples, 3u);
  EXPECT_DOUBLE_EQ(r.disk_read_bytes, 0.5 * 100.0 + 1.0 * 200.0 + 0.5 * 400.0);
  EXPECT_DOUBLE_EQ(r.network_bytes, 2.0 * 10.0);  // lo left out
  EXPECT_DOUBLE_EQ(r.energy_joules, 0.5 * 10.0 + 20.0 + 0.5 * 40.0);  // psys never added
  EXPECT_TRUE(r.energy_measured);
  // (100 x 0.5 + 50 x 1) / 1.5: the third interval has no user value, so it is left out.
  EXPECT_DOUBLE_EQ(r.process_cpu_percent, (100.0 * 0.5 + 50.0 * 1.0) / 1.5);
  EXPECT_DOUBLE_EQ(r.memory_percent, 9.0);  // the peak inside the window
  EXPECT_TRUE(std::isnan(r.host_cpu_percent));
  EXPECT_TRUE(std::isnan(r.gpu_utilization_percent));
  ASSERT_EQ(w.domains.size(), 2u);
  EXPECT_DOUBLE_EQ(w.domains[0].joules, 45.0);
  EXPECT_DOUBLE_EQ(w.domains[1].joules, 2000.0);
}

}  // namespace
