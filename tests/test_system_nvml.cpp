// The NVML probe against the stub library (tests/support/nvml_stub.cpp): the tracks of every
// device, exact joules from the energy counter and from integrated power, and that the loader
// takes NNPROF_NVML_LIBRARY. NVML is loaded once per process, so the variable is set before
// main (a test executable of its own).
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>

#include "collect/gpu/cuda_loader.hpp"
#include "collect/system/nvml_probe.hpp"
#include "recording_sink.hpp"

namespace nnprof {
namespace {

const bool stub_selected = [] { return setenv("NNPROF_NVML_LIBRARY", NVML_STUB_PATH, 1) == 0; }();

using detail::system::make_nvml_probe;
using testing::RecordingSink;

constexpr std::uint64_t kSecond = 1'000'000'000;

TEST(NvmlProbe, LoaderTakesTheLibraryNamedByTheEnvironment) {
  ASSERT_TRUE(stub_selected);
  const detail::Loaded<detail::NvmlApi> loaded = detail::load_nvml();
  ASSERT_NE(loaded.api, nullptr) << loaded.error;
  EXPECT_NE(loaded.api->get_total_energy, nullptr);
  EXPECT_NE(loaded.api->get_clock_info, nullptr);
}

// One test for the whole sequence: the stub's counters advance per call for the life of the
// process, so the exact figures hold for the first probe that reads them.
TEST(NvmlProbe, TracksAndEnergyOfBothDevices) {
  std::unique_ptr<detail::system::Probe> probe = make_nvml_probe(SystemOptions{});
  ASSERT_NE(probe, nullptr);
  RecordingSink sink;

  probe->sample(0, sink);  // device 0 counter 5,000,000 mJ; device 1 power 100 W
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.utilization"), 40.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.memory_utilization"), 20.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.memory.used"), 1024.0 * 1024.0 * 1024.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.power"), 250.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.temperature"), 60.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.clock.sm"), 1400.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu0.clock.memory"), 2600.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu1.temperature"), 61.0);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu1.power"), 100.0);
  EXPECT_EQ(sink.values.count("energy.gpu0.power"), 0u) << "the first sample only primes";
  EXPECT_EQ(sink.units.at("gpu0.memory.used"), "bytes");
  EXPECT_EQ(sink.units.at("gpu0.utilization"), "percent");
  EXPECT_EQ(sink.units.at("gpu0.temperature"), "celsius");
  EXPECT_EQ(sink.units.at("gpu0.clock.sm"), "MHz");

  sink.next_tick();
  probe->sample(1 * kSecond, sink);  // counter +1000 mJ; power 150 W
  EXPECT_DOUBLE_EQ(sink.values.at("energy.gpu0.power"), 1.0);    // 1 J over 1 s
  EXPECT_DOUBLE_EQ(sink.values.at("energy.gpu1.power"), 125.0);  // (100 + 150) / 2

  sink.next_tick();
  probe->sample(3 * kSecond, sink);  // counter +1000 mJ; power 200 W
  EXPECT_DOUBLE_EQ(sink.values.at("energy.gpu0.power"), 0.5);    // 1 J over 2 s
  EXPECT_DOUBLE_EQ(sink.values.at("energy.gpu1.power"), 175.0);
  EXPECT_EQ(sink.units.at("energy.gpu1.power"), "W");

  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  ASSERT_EQ(energy.size(), 2u);

  EXPECT_EQ(energy[0].name, "gpu0");
  EXPECT_EQ(energy[0].kind, "gpu");
  EXPECT_EQ(energy[0].method, EnergyMethod::NvmlEnergy);
  EXPECT_DOUBLE_EQ(energy[0].joules, 2.0);
  EXPECT_DOUBLE_EQ(energy[0].uncertainty, 0.05);
  EXPECT_EQ(energy[0].track, "energy.gpu0.power");
  EXPECT_EQ(energy[0].note, "NNPROF Stub GPU 0");

  EXPECT_EQ(energy[1].name, "gpu1");
  EXPECT_EQ(energy[1].method, EnergyMethod::NvmlPower);
  EXPECT_DOUBLE_EQ(energy[1].joules, 125.0 * 1.0 + 175.0 * 2.0);
  EXPECT_DOUBLE_EQ(energy[1].uncertainty, 0.10);
  EXPECT_EQ(energy[1].track, "energy.gpu1.power");
  EXPECT_EQ(energy[1].note.rfind("NNPROF Stub GPU 1; no energy counter", 0), 0u) << energy[1].note;

  EXPECT_TRUE(sink.notes.empty());
}

// codecarbon#1316: a GPU NVML cannot measure must not read as 0 J.
TEST(NvmlProbe, GpuWithNeitherCounterNorPowerGetsANoteAndNoDomain) {
  setenv("NNPROF_NVML_STUB_NO_POWER", "1", 1);
  std::unique_ptr<detail::system::Probe> probe = make_nvml_probe(SystemOptions{});
  ASSERT_NE(probe, nullptr);
  RecordingSink sink;
  probe->sample(0, sink);
  probe->sample(kSecond, sink);
  unsetenv("NNPROF_NVML_STUB_NO_POWER");
  EXPECT_EQ(sink.values.count("gpu1.power"), 0u);
  EXPECT_EQ(sink.values.count("energy.gpu1.power"), 0u);
  EXPECT_DOUBLE_EQ(sink.values.at("gpu1.temperature"), 61.0) << "its other readings still come";
  ASSERT_EQ(sink.notes.size(), 1u);
  EXPECT_EQ(sink.notes[0], "gpu1 (NNPROF Stub GPU 1): NVML reads neither its energy counter nor its power: no energy figure for it");
  std::vector<EnergyDomain> energy;
  probe->energy(energy);
  ASSERT_EQ(energy.size(), 1u);
  EXPECT_EQ(energy[0].name, "gpu0");
}

TEST(NvmlProbe, NoProbeWhenGpusAreNotAskedFor) {
  SystemOptions options;
  options.gpus = false;
  EXPECT_EQ(make_nvml_probe(options), nullptr);
}

}  // namespace
}  // namespace nnprof
