// The system monitor's procfs, sysfs and cgroup readers (src/collect/system/procfs_probe.hpp)
// on fake trees written by the tests: exact rates and percentages from known counters over a
// known interval, partitions and idle loop devices left out, "max" read as no limit, a counter
// that goes backwards read as unknown (NaN), never as a negative rate.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "collect/system/monitor_thread.hpp"
#include "collect/system/procfs_probe.hpp"
#include "support/test_directory.hpp"

namespace nnprof {
namespace {

using detail::system::Probe;
using detail::system::SampleSink;

constexpr std::uint64_t kStartNs = 1'000'000'000'000;
constexpr std::uint64_t kHalfSecondNs = 500'000'000;
constexpr double kTolerance = 1e-9;  // the fake counters give exact values; only rounding differs

/// What the probes set at one tick, by track.
struct RecordingSink final : SampleSink {
  std::map<std::string, double> values;
  std::map<std::string, std::string> units;
  std::vector<std::string> notes;
  void set(std::string_view track, std::string_view unit, double value) override {
    values[std::string(track)] = value;
    units[std::string(track)] = std::string(unit);
  }
  void note(std::string_view message) override { notes.emplace_back(message); }
  [[nodiscard]] bool has(const std::string& track) const { return values.count(track) != 0; }
  [[nodiscard]] double at(const std::string& track) const {
    const auto it = values.find(track);
    return it == values.end() ? std::nan("") : it->second;
  }
};

/// The counters of one fake tick; each file is written from them.
struct FakeCounters {
  std::uint64_t utime = 1000, stime = 200;
  std::uint64_t rss_kib = 204800;
  std::uint64_t io_read = 1000, io_write = 0;
  // /proc/stat "cpu": user nice system idle iowait irq softirq steal guest guest_nice
  std::vector<std::uint64_t> cpu = {100, 0, 50, 800, 50, 0, 0, 0, 10, 0};
  std::uint64_t mem_total_kib = 16'000'000, mem_available_kib = 12'000'000;
  std::uint64_t vda_sectors_read = 2000, vda_sectors_written = 100, vda_io_ticks = 1000;
  std::uint64_t loop1_sectors_read = 64;
  std::uint64_t lo_rx = 1000, lo_tx = 1000, eth0_rx = 5000, eth0_tx = 7000;
  std::uint64_t cpu_some = 1'000'000, memory_some = 500, memory_full = 0, io_some = 0, io_full = 0;
  std::uint64_t cgroup_memory_current = 268'435'456, cgroup_usage_usec = 1'000'000;
};

class SystemProcfs : public testing::TestDirectory {
 protected:
  SystemProcfs() : TestDirectory("system_procfs") {}

  void SetUp() override {
    TestDirectory::SetUp();
    options_.proc_root = path("proc");
    options_.sys_root = path("sys");
    options_.interval_ms = 500;
    // A cgroup v2 host with the process in /job.slice/train, limited to 1 GiB and two cores.
    write("proc/self/cgroup", "0::/job.slice/train\n");
    write("sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory pids\n");
    write("sys/fs/cgroup/job.slice/train/memory.max", "1073741824\n");
    write("sys/fs/cgroup/job.slice/train/cpu.max", "200000 100000\n");
    // Whole devices have a directory in /sys/block; vda1 (a partition) has none.
    std::filesystem::create_directories(dir_ / "sys/block/vda");
    std::filesystem::create_directories(dir_ / "sys/block/loop0");
    std::filesystem::create_directories(dir_ / "sys/block/loop1");
    write_counters(counters_);
  }

  void write(const std::string& relative, const std::string& text) {
    const std::filesystem::path file = dir_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text;
  }

  void write_counters(const FakeCounters& c) {
    // The command name holds spaces and parentheses, as a thread may name itself.
    write("proc/self/stat", fmt::format("4242 (train (rank 0)) R 1 4242 4242 0 -1 4194560 5000 0 0 0 {} {} 0 0 20 0 8 0 "
                                        "12345 1000000 5000\n",
                                        c.utime, c.stime));
    write("proc/self/status", fmt::format("Name:\ttrain\nVmPeak:\t  999999 kB\nVmRSS:\t  {} kB\nThreads:\t8\n", c.rss_kib));
    write("proc/self/io", fmt::format("rchar: 5000\nwchar: 6000\nsyscr: 10\nsyscw: 20\nread_bytes: {}\nwrite_bytes: {}\n"
                                      "cancelled_write_bytes: 0\n",
                                      c.io_read, c.io_write));
    std::string stat = fmt::format("cpu  {}\n", fmt::join(c.cpu, " "));
    for (int i = 0; i < 4; ++i) stat += fmt::format("cpu{} 1 0 1 1 0 0 0 0 0 0\n", i);
    stat += "intr 12345 0 0\nctxt 999\nbtime 1700000000\nprocesses 100\n";
    write("proc/stat", stat);
    write("proc/meminfo", fmt::format("MemTotal:       {} kB\nMemFree:         1000 kB\nMemAvailable:   {} kB\n"
                                      "Buffers:  10 kB\n",
                                      c.mem_total_kib, c.mem_available_kib));
    const auto disk = [](std::string_view major_minor_name, std::uint64_t reads, std::uint64_t sectors_read,
                         std::uint64_t writes, std::uint64_t sectors_written, std::uint64_t io_ticks) {
      return fmt::format("{} {} 0 {} 10 {} 0 {} 20 0 {} 30 0 0 0 0 0 0\n", major_minor_name, reads, sectors_read, writes,
                         sectors_written, io_ticks);
    };
    write("proc/diskstats", disk("   7       0 loop0", 0, 0, 0, 0, 0) + disk("   7       1 loop1", 4, c.loop1_sectors_read, 0, 0, 1) +
                                disk(" 253       0 vda", 50, c.vda_sectors_read, 5, c.vda_sectors_written, c.vda_io_ticks) +
                                disk(" 253       1 vda1", 40, c.vda_sectors_read / 2, 4, c.vda_sectors_written, c.vda_io_ticks));
    const auto net = [](std::string_view name, std::uint64_t rx, std::uint64_t tx) {
      return fmt::format("{}: {}     10    0    0    0     0          0         0 {}     12    0    0    0     0       0"
                         "          0\n",
                         name, rx, tx);
    };
    write("proc/net/dev",
          "Inter-|   Receive                                                |  Transmit\n"
          " face |bytes    packets errs drop fifo frame compressed multicast|bytes    packets errs drop fifo colls carrier "
          "compressed\n" +
              net("    lo", c.lo_rx, c.lo_tx) + net("  eth0", c.eth0_rx, c.eth0_tx));
    const auto pressure = [](std::uint64_t some, std::uint64_t full) {
      return fmt::format("some avg10=0.00 avg60=0.00 avg300=0.00 total={}\nfull avg10=0.00 avg60=0.00 avg300=0.00 total={}\n",
                         some, full);
    };
    write("proc/pressure/cpu", pressure(c.cpu_some, 0));
    write("proc/pressure/memory", pressure(c.memory_some, c.memory_full));
    write("proc/pressure/io", pressure(c.io_some, c.io_full));
    write("sys/fs/cgroup/job.slice/train/memory.current", fmt::format("{}\n", c.cgroup_memory_current));
    write("sys/fs/cgroup/job.slice/train/cpu.stat",
          fmt::format("usage_usec {}\nuser_usec 1\nsystem_usec 2\nnr_periods 0\n", c.cgroup_usage_usec));
  }

  /// Every probe read at `now_ns`, into one sink.
  static RecordingSink tick(std::vector<std::unique_ptr<Probe>>& probes, std::uint64_t now_ns) {
    RecordingSink sink;
    for (auto& probe : probes) probe->sample(now_ns, sink);
    return sink;
  }

  /// The counters of the second tick, half a second after the first.
  [[nodiscard]] static FakeCounters advanced() {
    FakeCounters c;
    c.utime += 100;  // one second of CPU in half a second: 200 % of a core at 100 ticks/s
    c.stime += 25;
    c.rss_kib = 409600;
    c.io_read += 512 * 1024;
    c.io_write += 1024 * 1024;
    c.cpu = {400, 0, 100, 1350, 150, 0, 0, 0, 20, 0};  // 1000 more ticks, 650 of them idle or iowait
    c.mem_available_kib = 8'000'000;
    c.vda_sectors_read += 2048;   // 1 MiB
    c.vda_sectors_written += 1024;  // 512 KiB
    c.vda_io_ticks += 250;        // 250 ms busy of 500
    c.loop1_sectors_read += 8;
    c.lo_rx += 100'000;
    c.lo_tx += 100'000;
    c.eth0_rx += 1024 * 1024;
    c.eth0_tx += 2048;
    c.cpu_some += 100'000;     // 0.1 s stalled of 0.5
    c.memory_some += 50'000;
    c.memory_full += 25'000;
    c.io_some += 250'000;
    c.io_full += 100'000;
    c.cgroup_memory_current = 536'870'912;
    c.cgroup_usage_usec += 500'000;  // 0.5 s of CPU in 0.5 s against 2 cores: 50 %
    return c;
  }

  SystemOptions options_;
  FakeCounters counters_;
};

double clock_ticks_per_second() { return static_cast<double>(sysconf(_SC_CLK_TCK)); }

TEST(SystemProcfsParse, ProcessStatCountsFieldsFromTheLastParenthesis) {
  const auto ticks = detail::system::parse_process_stat(
      "77 (a) b (c)) S 1 77 77 0 -1 4194560 100 0 0 0 321 123 0 0 20 0 1 0 5 6 7\n");
  ASSERT_TRUE(ticks);
  EXPECT_EQ(ticks->user, 321u);
  EXPECT_EQ(ticks->system, 123u);
  EXPECT_FALSE(detail::system::parse_process_stat("77 (truncated) S 1 2"));
}

TEST(SystemProcfsParse, CgroupFiles) {
  using namespace detail::system;
  EXPECT_EQ(parse_cgroup_limit("max\n"), std::uint64_t{0});
  EXPECT_EQ(parse_cgroup_limit("1048576\n"), std::uint64_t{1048576});
  EXPECT_EQ(parse_cpu_max("max 100000\n"), 0.0);
  EXPECT_EQ(parse_cpu_max("150000 100000\n"), 1.5);
  EXPECT_FALSE(parse_cpu_max("garbage"));
  EXPECT_EQ(parse_cpu_stat_usage_usec("usage_usec 42\nuser_usec 40\n"), std::uint64_t{42});
  EXPECT_EQ(parse_cgroup_v2_path("12:pids:/x\n0::/user.slice/session-1.scope\n"), "/user.slice/session-1.scope");
  EXPECT_FALSE(parse_cgroup_v2_path("4:memory:/docker/abc\n"));
  EXPECT_EQ(parse_cgroup_v1_path("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/def\n", "cpuacct"), "/docker/def");
  EXPECT_EQ(parse_cgroup_v1_path("4:memory:/docker/abc\n3:cpu,cpuacct:/docker/def\n", "cpu"), "/docker/def");
  EXPECT_FALSE(parse_cgroup_v1_path("0::/\n", "memory"));
}

TEST(SystemProcfsParse, PressureWithoutFullLine) {
  const auto totals = detail::system::parse_pressure("some avg10=1.00 avg60=0.50 avg300=0.10 total=123456\n");
  ASSERT_TRUE(totals);
  EXPECT_EQ(totals->some_us, std::uint64_t{123456});
  EXPECT_FALSE(totals->full_us);
}

TEST_F(SystemProcfs, LimitsFromTheHostAndTheCgroup) {
  const SystemLimits limits = detail::system::read_system_limits(options_);
  EXPECT_EQ(limits.logical_cpus, 4u);  // the cpuN lines of the fake /proc/stat
  EXPECT_EQ(limits.host_memory_bytes, 16'000'000ull * 1024);
  EXPECT_EQ(limits.cgroup, "/job.slice/train");
  EXPECT_EQ(limits.cgroup_memory_bytes, 1073741824ull);
  EXPECT_DOUBLE_EQ(limits.cgroup_cpu_cores, 2.0);
}

TEST_F(SystemProcfs, FirstTickPrimesRatesAndSetsGauges) {
  auto probes = detail::system::make_procfs_probes(options_);
  const RecordingSink first = tick(probes, kStartNs);
  // Gauges are read at once; rates need a second reading.
  EXPECT_DOUBLE_EQ(first.at("process.memory.rss"), 204800.0 * 1024);
  EXPECT_DOUBLE_EQ(first.at("system.memory.used"), 25.0);
  EXPECT_DOUBLE_EQ(first.at("cgroup.memory.used"), 25.0);
  for (const char* rate : {"process.cpu.user", "process.io.write_bytes", "system.cpu.busy", "cgroup.cpu.used",
                           "disk.vda.read_bytes", "net.lo.tx_bytes", "pressure.io.some"})
    EXPECT_FALSE(first.has(rate)) << rate;
  EXPECT_TRUE(first.notes.empty()) << first.notes.front();
}

TEST_F(SystemProcfs, ExactRatesOverAKnownInterval) {
  auto probes = detail::system::make_procfs_probes(options_);
  (void)tick(probes, kStartNs);
  write_counters(advanced());
  const RecordingSink s = tick(probes, kStartNs + kHalfSecondNs);

  // 100 user and 25 system ticks in 0.5 s.
  EXPECT_NEAR(s.at("process.cpu.user"), 100.0 / clock_ticks_per_second() / 0.5 * 100.0, kTolerance);
  EXPECT_NEAR(s.at("process.cpu.system"), 25.0 / clock_ticks_per_second() / 0.5 * 100.0, kTolerance);
  EXPECT_EQ(s.units.at("process.cpu.user"), "percent");
  EXPECT_DOUBLE_EQ(s.at("process.memory.rss"), 409600.0 * 1024);
  EXPECT_EQ(s.units.at("process.memory.rss"), "bytes");
  EXPECT_NEAR(s.at("process.io.read_bytes"), 1024.0 * 1024, kTolerance);
  EXPECT_NEAR(s.at("process.io.write_bytes"), 2.0 * 1024 * 1024, kTolerance);
  EXPECT_EQ(s.units.at("process.io.write_bytes"), "bytes/s");

  // (1000 - 650) / 1000 ticks busy; guest ticks are already in user, not counted twice.
  EXPECT_NEAR(s.at("system.cpu.busy"), 35.0, kTolerance);
  EXPECT_NEAR(s.at("system.memory.used"), 50.0, kTolerance);
  EXPECT_NEAR(s.at("cgroup.memory.used"), 50.0, kTolerance);
  EXPECT_NEAR(s.at("cgroup.cpu.used"), 50.0, kTolerance);

  EXPECT_NEAR(s.at("disk.vda.read_bytes"), 2.0 * 1024 * 1024, kTolerance);
  EXPECT_NEAR(s.at("disk.vda.write_bytes"), 1024.0 * 1024, kTolerance);
  EXPECT_NEAR(s.at("disk.vda.busy"), 50.0, kTolerance);
  EXPECT_EQ(s.units.at("disk.vda.busy"), "percent");
  // loop1 did I/O, so it is a disk; idle loop0 and the partition vda1 are not.
  EXPECT_NEAR(s.at("disk.loop1.read_bytes"), 8.0 * 512 / 0.5, kTolerance);
  EXPECT_FALSE(s.has("disk.loop0.read_bytes"));
  EXPECT_FALSE(s.has("disk.vda1.read_bytes"));

  EXPECT_NEAR(s.at("net.lo.rx_bytes"), 200'000.0, kTolerance);
  EXPECT_NEAR(s.at("net.lo.tx_bytes"), 200'000.0, kTolerance);
  EXPECT_NEAR(s.at("net.eth0.rx_bytes"), 2.0 * 1024 * 1024, kTolerance);
  EXPECT_NEAR(s.at("net.eth0.tx_bytes"), 4096.0, kTolerance);

  EXPECT_NEAR(s.at("pressure.cpu.some"), 20.0, kTolerance);
  EXPECT_FALSE(s.has("pressure.cpu.full"));
  EXPECT_NEAR(s.at("pressure.memory.some"), 10.0, kTolerance);
  EXPECT_NEAR(s.at("pressure.memory.full"), 5.0, kTolerance);
  EXPECT_NEAR(s.at("pressure.io.some"), 50.0, kTolerance);
  EXPECT_NEAR(s.at("pressure.io.full"), 20.0, kTolerance);
  EXPECT_TRUE(s.notes.empty()) << s.notes.front();
}

TEST_F(SystemProcfs, MaxMeansNoLimitAndNoCgroupTracks) {
  write("sys/fs/cgroup/job.slice/train/memory.max", "max\n");
  write("sys/fs/cgroup/job.slice/train/cpu.max", "max 100000\n");
  const SystemLimits limits = detail::system::read_system_limits(options_);
  EXPECT_EQ(limits.cgroup_memory_bytes, 0u);
  EXPECT_EQ(limits.cgroup_cpu_cores, 0.0);
  EXPECT_EQ(limits.cgroup, "/job.slice/train");

  auto probes = detail::system::make_procfs_probes(options_);
  (void)tick(probes, kStartNs);
  write_counters(advanced());
  const RecordingSink s = tick(probes, kStartNs + kHalfSecondNs);
  EXPECT_FALSE(s.has("cgroup.memory.used"));
  EXPECT_FALSE(s.has("cgroup.cpu.used"));
  EXPECT_TRUE(s.has("system.cpu.busy"));
}

TEST_F(SystemProcfs, CgroupV1Limits) {
  // Docker on a cgroup v1 host without a cgroup namespace: the host's paths in
  // /proc/self/cgroup, the container's own cgroups mounted at each controller's root.
  std::filesystem::remove(dir_ / "sys/fs/cgroup/cgroup.controllers");
  write("proc/self/cgroup", "5:memory:/docker/abc\n3:cpu,cpuacct:/docker/abc\n0::/\n");
  write("sys/fs/cgroup/memory/memory.limit_in_bytes", "536870912\n");
  write("sys/fs/cgroup/memory/memory.usage_in_bytes", "134217728\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "50000\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  write("sys/fs/cgroup/cpuacct/cpuacct.usage", "1000000000\n");

  const SystemLimits limits = detail::system::read_system_limits(options_);
  EXPECT_EQ(limits.cgroup, "/docker/abc");
  EXPECT_EQ(limits.cgroup_memory_bytes, 536870912ull);
  EXPECT_DOUBLE_EQ(limits.cgroup_cpu_cores, 0.5);

  auto probes = detail::system::make_procfs_probes(options_);
  const RecordingSink first = tick(probes, kStartNs);
  EXPECT_NEAR(first.at("cgroup.memory.used"), 25.0, kTolerance);
  // 62.5 ms of CPU (ns in v1) in 0.5 s: an eighth of a core, a quarter of the 0.5-core quota.
  write("sys/fs/cgroup/cpuacct/cpuacct.usage", "1062500000\n");
  const RecordingSink second = tick(probes, kStartNs + kHalfSecondNs);
  EXPECT_NEAR(second.at("cgroup.cpu.used"), 25.0, kTolerance);
}

TEST_F(SystemProcfs, CgroupV1WithoutLimitIsNoLimit) {
  std::filesystem::remove(dir_ / "sys/fs/cgroup/cgroup.controllers");
  write("proc/self/cgroup", "5:memory:/\n3:cpu,cpuacct:/\n");
  write("sys/fs/cgroup/memory/memory.limit_in_bytes", "9223372036854771712\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_quota_us", "-1\n");
  write("sys/fs/cgroup/cpu/cpu.cfs_period_us", "100000\n");
  const SystemLimits limits = detail::system::read_system_limits(options_);
  EXPECT_EQ(limits.cgroup_memory_bytes, 0u);
  EXPECT_EQ(limits.cgroup_cpu_cores, 0.0);
}

TEST_F(SystemProcfs, CounterGoingBackwardsIsUnknownNotNegative) {
  auto probes = detail::system::make_procfs_probes(options_);
  (void)tick(probes, kStartNs);
  FakeCounters later = advanced();
  write_counters(later);
  (void)tick(probes, kStartNs + kHalfSecondNs);
  // Counters reset (a device re-attached, an interface re-created, a counter wrapped).
  FakeCounters reset = later;
  reset.utime = 3;
  reset.io_write = 10;
  reset.vda_sectors_read = 1;
  reset.vda_io_ticks = 1;
  reset.eth0_rx = 100;
  reset.memory_some = 7;
  reset.cgroup_usage_usec = 1;
  reset.cpu = {1, 0, 1, 1, 1, 0, 0, 0, 0, 0};
  write_counters(reset);
  const RecordingSink s = tick(probes, kStartNs + 2 * kHalfSecondNs);
  for (const char* track : {"process.cpu.user", "process.io.write_bytes", "disk.vda.read_bytes", "disk.vda.busy",
                            "net.eth0.rx_bytes", "pressure.memory.some", "cgroup.cpu.used", "system.cpu.busy"})
    EXPECT_FALSE(s.has(track)) << track << " = " << s.at(track);
  for (const auto& [track, value] : s.values) EXPECT_GE(value, 0.0) << track;
  // Counters that kept rising still give their rates at that tick.
  EXPECT_NEAR(s.at("process.cpu.system"), 0.0, kTolerance);
  EXPECT_NEAR(s.at("net.eth0.tx_bytes"), 0.0, kTolerance);

  // From the reset values on, rates are read again.
  reset.utime += 50;
  write_counters(reset);
  const RecordingSink after = tick(probes, kStartNs + 3 * kHalfSecondNs);
  EXPECT_NEAR(after.at("process.cpu.user"), 50.0 / clock_ticks_per_second() / 0.5 * 100.0, kTolerance);
}

TEST_F(SystemProcfs, MissingFilesAreNotedOnce) {
  std::filesystem::remove_all(dir_ / "proc/pressure");
  std::filesystem::remove(dir_ / "proc/self/io");
  auto probes = detail::system::make_procfs_probes(options_);
  std::vector<std::string> notes;
  for (int i = 0; i < 3; ++i) {
    const RecordingSink s = tick(probes, kStartNs + static_cast<std::uint64_t>(i) * kHalfSecondNs);
    notes.insert(notes.end(), s.notes.begin(), s.notes.end());
    EXPECT_FALSE(s.has("process.io.read_bytes"));
    EXPECT_FALSE(s.has("pressure.cpu.some"));
    EXPECT_TRUE(s.has("process.memory.rss"));
  }
  ASSERT_EQ(notes.size(), 2u);
  EXPECT_NE(notes[0].find("/self/io is not readable"), std::string::npos) << notes[0];
  EXPECT_NE(notes[1].find("/pressure is absent"), std::string::npos) << notes[1];
}

TEST_F(SystemProcfs, MonitorColumnsBackFillNaNAndSortTracks) {
  detail::SystemMonitorThread monitor(options_, detail::system::make_procfs_probes(options_));
  monitor.sample_now();
  write_counters(advanced());
  monitor.sample_now();
  // An interface that appears at the third sample: its rates start at the fourth.
  FakeCounters third = advanced();
  third.cpu_some = 0;  // backwards: pressure.cpu.some is NaN at this sample
  write_counters(third);
  write("proc/net/dev", "Inter-|\n face |\n    lo: 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0\n"
                        "  wg0: 10 0 0 0 0 0 0 0 20 0 0 0 0 0 0 0\n");
  monitor.sample_now();
  write("proc/net/dev", "Inter-|\n face |\n    lo: 1 0 0 0 0 0 0 0 1 0 0 0 0 0 0 0\n"
                        "  wg0: 1010 0 0 0 0 0 0 0 20 0 0 0 0 0 0 0\n");
  monitor.sample_now();

  detail::RawSystem raw;
  monitor.snapshot_system(raw);
  const SystemProfile& p = raw.data;
  EXPECT_TRUE(p.monitored);
  EXPECT_EQ(p.interval_ms, 500u);
  EXPECT_EQ(p.limits.logical_cpus, 4u);
  ASSERT_EQ(p.sample_ns.size(), 4u);
  EXPECT_TRUE(std::is_sorted(p.sample_ns.begin(), p.sample_ns.end()));
  for (std::size_t i = 1; i < p.tracks.size(); ++i) EXPECT_LT(p.tracks[i - 1].name, p.tracks[i].name);
  for (const SystemTrack& t : p.tracks) EXPECT_EQ(t.values.size(), p.sample_ns.size()) << t.name;

  const SystemTrack* wg0 = p.track("net.wg0.rx_bytes");
  ASSERT_NE(wg0, nullptr);
  EXPECT_TRUE(std::isnan(wg0->values[0]) && std::isnan(wg0->values[1]) && std::isnan(wg0->values[2]));
  EXPECT_GT(wg0->values[3], 0.0);
  // eth0 disappeared at the third sample: NaN from there on.
  const SystemTrack* eth0 = p.track("net.eth0.rx_bytes");
  ASSERT_NE(eth0, nullptr);
  EXPECT_TRUE(std::isnan(eth0->values[0]));
  EXPECT_GT(eth0->values[1], 0.0);
  EXPECT_TRUE(std::isnan(eth0->values[2]) && std::isnan(eth0->values[3]));
  const SystemTrack* cpu_some = p.track("pressure.cpu.some");
  ASSERT_NE(cpu_some, nullptr);
  EXPECT_GT(cpu_some->values[1], 0.0);
  EXPECT_TRUE(std::isnan(cpu_some->values[2]));
  const SystemTrack* rss = p.track("process.memory.rss");
  ASSERT_NE(rss, nullptr);
  EXPECT_EQ(rss->unit, "bytes");
  EXPECT_DOUBLE_EQ(rss->values[0], 204800.0 * 1024);
  EXPECT_TRUE(p.notes.empty());
}

}  // namespace
}  // namespace nnprof
