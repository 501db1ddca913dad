// RAPL through a powercap tree built by the test, and the energy model on profiles built by
// hand: exact joules, which zones become domains, and what is said when nothing can be read.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>

#include "collect/system/energy_model.hpp"
#include "collect/system/rapl_probe.hpp"
#include "recording_sink.hpp"
#include "test_directory.hpp"

namespace nnprof {
namespace {

using detail::system::add_modelled_energy;
using detail::system::make_rapl_probe;
using testing::RecordingSink;

constexpr std::uint64_t kSecond = 1'000'000'000;
// What Intel packages report as max_energy_range_uj (2^32 units of 61 µJ).
constexpr std::uint64_t kMaxRangeUj = 262143328850;

class RaplProbeTest : public testing::TestDirectory {
 protected:
  RaplProbeTest() : TestDirectory("rapl") {}

  std::filesystem::path powercap() const { return dir_ / "class" / "powercap"; }

  void write(const std::filesystem::path& file, const std::string& text) {
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file) << text << "\n";
  }
  void zone(const std::string& entry, const std::string& name, std::uint64_t energy_uj) {
    write(powercap() / entry / "name", name);
    write(powercap() / entry / "energy_uj", std::to_string(energy_uj));
    write(powercap() / entry / "max_energy_range_uj", std::to_string(kMaxRangeUj));
  }
  void counter(const std::string& entry, std::uint64_t energy_uj) {
    write(powercap() / entry / "energy_uj", std::to_string(energy_uj));
  }
  SystemOptions options() const {
    SystemOptions o;
    o.sys_root = dir_.string();
    return o;
  }
};

// One package with core, uncore and DRAM subzones, a psys zone, and the MMIO copy of the
// package counter, as on a recent Intel server; the package counter wraps once.
TEST_F(RaplProbeTest, PackageWrapsDramAndPsysAreSeparateCoreAndMmioAreNotCounted) {
  std::filesystem::create_directories(powercap() / "intel-rapl");  // the control type: no counter
  zone("intel-rapl:0", "package-0", kMaxRangeUj - 328850);
  zone("intel-rapl:0:0", "core", 1000);
  zone("intel-rapl:0:1", "uncore", 1000);
  zone("intel-rapl:0:2", "dram", 100);
  zone("intel-rapl:1", "psys", 0);
  zone("intel-rapl-mmio:0", "package-0", 0);

  std::unique_ptr<detail::system::Probe> probe = make_rapl_probe(options());
  RecordingSink sink;
  probe->sample(0, sink);
  EXPECT_TRUE(sink.values.empty()) << "the first sample only primes the counters";

  counter("intel-rapl:0", 1'000'000);  // wrapped: 328850 + 1000000 µJ
  counter("intel-rapl:0:0", 900'000);
  counter("intel-rapl:0:2", 2'000'100);
  counter("intel-rapl:1", 10'000'000);
  counter("intel-rapl-mmio:0", 99'000'000);
  sink.next_tick();
  probe->sample(1 * kSecond, sink);
  EXPECT_DOUBLE_EQ(sink.values.at("energy.package-0.power"), 1.32885);
  EXPECT_DOUBLE_EQ(sink.values.at("energy.dram-0.power"), 2.0);
  EXPECT_DOUBLE_EQ(sink.values.at("energy.psys.power"), 10.0);
  EXPECT_EQ(sink.units.at("energy.package-0.power"), "W");

  counter("intel-rapl:0", 5'000'000);
  counter("intel-rapl:0:2", 3'000'100);
  counter("intel-rapl:1", 30'000'000);
  sink.next_tick();
  probe->sample(3 * kSecond, sink);
  EXPECT_DOUBLE_EQ(sink.values.at("energy.package-0.power"), 2.0);
  EXPECT_EQ(sink.values.size(), 3u) << "no track for core, uncore or the MMIO package";

  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  ASSERT_EQ(energy.size(), 3u);
  EXPECT_EQ(energy[0].name, "package-0");
  EXPECT_EQ(energy[1].name, "dram-0");
  EXPECT_EQ(energy[2].name, "psys");

  const EnergyDomain& package = energy[0];
  EXPECT_EQ(package.kind, "cpu");
  EXPECT_EQ(package.method, EnergyMethod::Rapl);
  EXPECT_DOUBLE_EQ(package.joules, 5.32885);
  EXPECT_DOUBLE_EQ(package.uncertainty, 0.05);
  EXPECT_EQ(package.track, "energy.package-0.power");
  EXPECT_EQ(package.note, "counter wrapped 1 time");

  EXPECT_EQ(energy[1].kind, "dram");
  EXPECT_DOUBLE_EQ(energy[1].joules, 3.0);
  EXPECT_EQ(energy[1].note, "");

  EXPECT_EQ(energy[2].kind, "psys");
  EXPECT_DOUBLE_EQ(energy[2].joules, 30.0);
  EXPECT_NE(energy[2].note.find("overlaps the other domains"), std::string::npos) << energy[2].note;
  EXPECT_TRUE(sink.notes.empty());
}

// Some AMD and older Intel servers put DRAM at the top level, beside the package.
TEST_F(RaplProbeTest, TopLevelDramZoneIsADramDomain) {
  zone("intel-rapl:0", "package-0", 0);
  zone("intel-rapl:1", "dram", 0);
  std::unique_ptr<detail::system::Probe> probe = make_rapl_probe(options());
  RecordingSink sink;
  probe->sample(0, sink);
  counter("intel-rapl:0", 7'000'000);
  counter("intel-rapl:1", 500'000);
  probe->sample(2 * kSecond, sink);
  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  ASSERT_EQ(energy.size(), 2u);
  EXPECT_EQ(energy[1].name, "dram-1");
  EXPECT_EQ(energy[1].kind, "dram");
  EXPECT_DOUBLE_EQ(energy[1].joules, 0.5);
  EXPECT_DOUBLE_EQ(sink.values.at("energy.package-0.power"), 3.5);
}

TEST_F(RaplProbeTest, AbsentPowercapIsSaidOnceAndGivesNoDomain) {
  std::unique_ptr<detail::system::Probe> probe = make_rapl_probe(options());
  RecordingSink sink;
  probe->sample(0, sink);
  probe->sample(kSecond, sink);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_EQ(sink.notes[0], "no RAPL: " + powercap().string() + " is absent (VM or container); CPU energy is modelled");
  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  EXPECT_TRUE(energy.empty());
}

TEST_F(RaplProbeTest, CounterThatCannotBeReadGivesANoteAndNoDomain) {
  zone("intel-rapl:0", "package-0", 0);
  std::filesystem::remove(powercap() / "intel-rapl:0" / "energy_uj");
  std::unique_ptr<detail::system::Probe> probe = make_rapl_probe(options());
  RecordingSink sink;
  probe->sample(0, sink);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_NE(sink.notes[0].find("RAPL: cannot read"), std::string::npos) << sink.notes[0];
  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  EXPECT_TRUE(energy.empty());
}

// Linux 5.10+ makes energy_uj 0400 root: the note says so and how to fix it. Root reads any
// file whatever its mode, so the case can only be made as another user.
TEST_F(RaplProbeTest, CounterReadableByRootOnlyIsExplained) {
  if (geteuid() == 0) GTEST_SKIP() << "running as root: file modes do not deny reads";
  zone("intel-rapl:0", "package-0", 0);
  std::filesystem::permissions(powercap() / "intel-rapl:0" / "energy_uj", std::filesystem::perms::owner_write);
  std::unique_ptr<detail::system::Probe> probe = make_rapl_probe(options());
  RecordingSink sink;
  probe->sample(0, sink);
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_EQ(sink.notes[0].rfind("RAPL energy_uj is readable by root only since Linux 5.10 (CVE-2020-8694)", 0), 0u)
      << sink.notes[0];
  EXPECT_NE(sink.notes[0].find("CPU energy is modelled"), std::string::npos);
  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  EXPECT_TRUE(energy.empty());
}

// --- The energy model -------------------------------------------------------------------------

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// Three samples at 0 s, 1 s and 3 s of a 4-CPU host: 50 % then 100 % busy; the process holds
// 1 GB, then 2 GB.
SystemProfile sampled_profile() {
  SystemProfile p;
  p.monitored = true;
  p.limits.logical_cpus = 4;
  p.sample_ns = {0, 1 * kSecond, 3 * kSecond};
  p.tracks = {SystemTrack{"process.memory.rss", "bytes", {1e9, 2e9, 2e9}},
              SystemTrack{"system.cpu.busy", "percent", {kNaN, 50.0, 100.0}}};
  return p;
}

TEST(EnergyModel, DefaultTdpIsSixWattsPerLogicalCpuWithTwentyPercentIdle) {
  SystemProfile p = sampled_profile();
  add_modelled_energy(p, SystemOptions{});
  ASSERT_EQ(p.energy.size(), 2u);

  // TDP 24 W, idle 4.8 W: 14.4 W over 1 s, then 24 W over 2 s.
  const EnergyDomain& cpu = p.energy[0];
  EXPECT_EQ(cpu.name, "cpu (modelled)");
  EXPECT_EQ(cpu.kind, "cpu");
  EXPECT_EQ(cpu.method, EnergyMethod::Modelled);
  EXPECT_DOUBLE_EQ(cpu.joules, 14.4 + 48.0);
  EXPECT_DOUBLE_EQ(cpu.uncertainty, 0.5);
  EXPECT_EQ(cpu.track, "energy.cpu-modelled.power");
  EXPECT_NE(cpu.note.find("host's CPU utilisation"), std::string::npos) << cpu.note;
  EXPECT_NE(cpu.note.find("default 6 W per logical CPU x 4 logical CPUs"), std::string::npos) << cpu.note;

  // 0.3725 W/GB: 1.5 GB on average over 1 s, then 2 GB over 2 s.
  const EnergyDomain& memory = p.energy[1];
  EXPECT_EQ(memory.name, "memory (modelled)");
  EXPECT_EQ(memory.kind, "dram");
  EXPECT_DOUBLE_EQ(memory.joules, 0.3725 * 1.5 + 0.3725 * 2.0 * 2.0);
  EXPECT_EQ(memory.track, "energy.memory-modelled.power");

  const SystemTrack* cpu_power = p.track("energy.cpu-modelled.power");
  ASSERT_NE(cpu_power, nullptr);
  EXPECT_EQ(cpu_power->unit, "W");
  ASSERT_EQ(cpu_power->values.size(), 3u);
  EXPECT_TRUE(std::isnan(cpu_power->values[0]));
  EXPECT_DOUBLE_EQ(cpu_power->values[1], 14.4);
  EXPECT_DOUBLE_EQ(cpu_power->values[2], 24.0);
  const SystemTrack* memory_power = p.track("energy.memory-modelled.power");
  ASSERT_NE(memory_power, nullptr);
  EXPECT_DOUBLE_EQ(memory_power->values[1], 0.3725 * 1.5);

  ASSERT_EQ(p.tracks.size(), 4u);
  for (std::size_t i = 1; i < p.tracks.size(); ++i) EXPECT_LT(p.tracks[i - 1].name, p.tracks[i].name);
  EXPECT_TRUE(p.notes.empty());
}

TEST(EnergyModel, GivenTdpReplacesTheDefault) {
  SystemProfile p = sampled_profile();
  SystemOptions options;
  options.cpu_tdp_watts = 65.0;
  add_modelled_energy(p, options);
  // Idle 13 W: 39 W over 1 s, then 65 W over 2 s.
  ASSERT_FALSE(p.energy.empty());
  EXPECT_DOUBLE_EQ(p.energy[0].joules, 39.0 + 130.0);
  EXPECT_NE(p.energy[0].note.find("TDP of 65 W (given by --tdp)"), std::string::npos) << p.energy[0].note;
}

TEST(EnergyModel, MeasuredDomainsAreNotModelledAgain) {
  SystemProfile p = sampled_profile();
  p.energy.push_back(EnergyDomain{"package-0", "cpu", EnergyMethod::Rapl, 10.0, 0.05, "energy.package-0.power", ""});
  add_modelled_energy(p, SystemOptions{});
  ASSERT_EQ(p.energy.size(), 2u);
  EXPECT_EQ(p.energy[1].name, "memory (modelled)");

  SystemProfile q = sampled_profile();
  q.energy.push_back(EnergyDomain{"dram-0", "dram", EnergyMethod::Rapl, 3.0, 0.05, "energy.dram-0.power", ""});
  add_modelled_energy(q, SystemOptions{});
  ASSERT_EQ(q.energy.size(), 2u);
  EXPECT_EQ(q.energy[1].name, "cpu (modelled)");
  EXPECT_EQ(q.track("energy.memory-modelled.power"), nullptr);
}

TEST(EnergyModel, SecondCallChangesNothing) {
  SystemProfile once = sampled_profile();
  add_modelled_energy(once, SystemOptions{});
  SystemProfile twice = once;
  add_modelled_energy(twice, SystemOptions{});
  // Tracks hold NaN where nothing was read, and NaN != NaN: compared value by value.
  EXPECT_EQ(once.energy, twice.energy);
  EXPECT_EQ(once.notes, twice.notes);
  ASSERT_EQ(once.tracks.size(), twice.tracks.size());
  for (std::size_t t = 0; t < once.tracks.size(); ++t) {
    EXPECT_EQ(once.tracks[t].name, twice.tracks[t].name);
    ASSERT_EQ(once.tracks[t].values.size(), twice.tracks[t].values.size());
    for (std::size_t i = 0; i < once.tracks[t].values.size(); ++i) {
      const double a = once.tracks[t].values[i], b = twice.tracks[t].values[i];
      EXPECT_TRUE(a == b || (std::isnan(a) && std::isnan(b))) << once.tracks[t].name << "[" << i << "]";
    }
  }

  SystemProfile bare;  // nothing sampled: each missing input is said once, however often asked
  bare.sample_ns = {0, kSecond};
  add_modelled_energy(bare, SystemOptions{});
  add_modelled_energy(bare, SystemOptions{});
  EXPECT_TRUE(bare.energy.empty());
  EXPECT_EQ(bare.notes.size(), 2u);
}

TEST(EnergyModel, IntervalsWithoutUtilisationAreNotPriced) {
  SystemProfile p = sampled_profile();
  p.tracks[1].values = {kNaN, kNaN, 100.0};
  add_modelled_energy(p, SystemOptions{});
  ASSERT_FALSE(p.energy.empty());
  EXPECT_DOUBLE_EQ(p.energy[0].joules, 48.0);
}

}  // namespace
}  // namespace nnprof
