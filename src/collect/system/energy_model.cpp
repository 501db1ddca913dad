#include "collect/system/energy_model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include <fmt/format.h>

namespace nnprof::detail::system {

namespace {

// The Green Algorithms calculator's default for an unknown CPU is 12 W per core ("Any",
// TDP_per_core in data/v3.0/TDP_cpu.csv of github.com/GreenAlgorithms/green-algorithms-tool;
// Lannelongue et al., "Green Algorithms: Quantifying the Carbon Footprint of Computation",
// Adv. Sci. 2021, doi:10.1002/advs.202100707). It counts physical cores; we know logical CPUs,
// and the x86 servers this runs on have two hardware threads per core, hence 6 W per logical
// CPU. On a host without SMT this halves the figure: give the TDP (--tdp) there.
constexpr double kDefaultWattsPerLogicalCpu = 6.0;

// Power at idle as a share of power at full load. Cloud Carbon Footprint's per-vCPU coefficients,
// from SPECpower_ssj2008 results (cloudcarbonfootprint.org/docs/methodology, repository
// cloud-carbon-footprint/ccf-coefficients), give min/max watts of 0.64/4.05 (Skylake),
// 0.64/3.80 (Cascade Lake), 0.71/3.54 (Broadwell) and 0.45/1.87 (EPYC Milan): 16 % to 24 %.
// CCF interpolates linearly between the two with the utilisation, as we do.
constexpr double kIdleShareOfTdp = 0.20;

// Green Algorithms' memory power, 0.3725 W per GB (memoryPower in data/v2.2/referenceValues.csv
// of the same repository, which derives it from doi:10.1145/3076113.3076117 and a measured
// Haswell-E system).
constexpr double kMemoryWattsPerGigabyte = 0.3725;

// ±50 %: TDP is a cooling specification, not a measurement: real package power at a given
// utilisation moves with frequency, turbo and the instruction mix (vector units), and the
// idle share above ranges 16-24 % across parts; the per-core default can be off by 2x for a
// given CPU. Memory power depends on DIMM count and technology more than on resident bytes.
constexpr double kCpuModelUncertainty = 0.5;
constexpr double kMemoryModelUncertainty = 0.5;

constexpr const char* kCpuDomain = "cpu (modelled)";
constexpr const char* kCpuTrack = "energy.cpu-modelled.power";
constexpr const char* kMemoryDomain = "memory (modelled)";
constexpr const char* kMemoryTrack = "energy.memory-modelled.power";

bool has_domain(const SystemProfile& p, const char* name) {
  return std::any_of(p.energy.begin(), p.energy.end(), [&](const EnergyDomain& d) { return d.name == name; });
}

bool has_measured(const SystemProfile& p, const char* kind) {
  return std::any_of(p.energy.begin(), p.energy.end(),
                     [&](const EnergyDomain& d) { return d.kind == kind && d.method != EnergyMethod::Modelled; });
}

// Once each, so that a second call adds no copy.
void add_note(SystemProfile& p, std::string note) {
  if (std::find(p.notes.begin(), p.notes.end(), note) == p.notes.end()) p.notes.push_back(std::move(note));
}

void insert_track(SystemProfile& p, SystemTrack track) {
  const auto at = std::lower_bound(p.tracks.begin(), p.tracks.end(), track.name,
                                   [](const SystemTrack& t, const std::string& name) { return t.name < name; });
  p.tracks.insert(at, std::move(track));
}

double seconds_between(const SystemProfile& p, std::size_t i) {
  return static_cast<double>(p.sample_ns[i] - p.sample_ns[i - 1]) / 1e9;
}

// Watts as notes show them: "65 W", "4.8 W".
std::string watts(double w) { return fmt::format("{:.4g} W", w); }

void add_cpu_model(SystemProfile& p, const SystemOptions& options) {
  const double tdp = options.cpu_tdp_watts > 0.0 ? options.cpu_tdp_watts
                                                 : kDefaultWattsPerLogicalCpu * static_cast<double>(p.limits.logical_cpus);
  if (tdp <= 0.0) {
    add_note(p, "CPU energy is not modelled: the host's number of logical CPUs is unknown and no TDP was given (--tdp)");
    return;
  }
  const SystemTrack* busy = p.track("system.cpu.busy");
  if (busy == nullptr || busy->values.size() != p.sample_ns.size()) {
    add_note(p, "CPU energy is not modelled: the host's CPU utilisation (system.cpu.busy) was not sampled");
    return;
  }
  const double idle = kIdleShareOfTdp * tdp;
  SystemTrack power{kCpuTrack, "W", std::vector<double>(p.sample_ns.size(), std::numeric_limits<double>::quiet_NaN())};
  double joules = 0.0;
  std::size_t intervals = 0;
  // busy[i] is the utilisation over the interval ending at sample i (a rate), so it prices
  // that interval; sample 0 ends no interval.
  for (std::size_t i = 1; i < p.sample_ns.size(); ++i) {
    if (std::isnan(busy->values[i]) || p.sample_ns[i] <= p.sample_ns[i - 1]) continue;
    const double u = std::clamp(busy->values[i] / 100.0, 0.0, 1.0);
    const double w = idle + (tdp - idle) * u;
    power.values[i] = w;
    joules += w * seconds_between(p, i);
    ++intervals;
  }
  if (intervals == 0) return;  // one sample, or none with a utilisation: no time to price
  const std::string tdp_source =
      options.cpu_tdp_watts > 0.0
          ? "given by --tdp"
          : fmt::format("default {} per logical CPU x {} logical CPUs", watts(kDefaultWattsPerLogicalCpu),
                        p.limits.logical_cpus);
  std::string note = fmt::format(
      "package power modelled from the host's CPU utilisation, between {} idle and a TDP of {} ({}); the whole "
      "package like RAPL, other processes' work included",
      watts(idle), watts(tdp), tdp_source);
  insert_track(p, std::move(power));
  p.energy.push_back(
      EnergyDomain{kCpuDomain, "cpu", EnergyMethod::Modelled, joules, kCpuModelUncertainty, kCpuTrack, std::move(note)});
}

void add_memory_model(SystemProfile& p) {
  const SystemTrack* rss = p.track("process.memory.rss");
  if (rss == nullptr || rss->values.size() != p.sample_ns.size()) {
    add_note(p, "memory energy is not modelled: the process's resident memory (process.memory.rss) was not sampled");
    return;
  }
  SystemTrack power{kMemoryTrack, "W", std::vector<double>(p.sample_ns.size(), std::numeric_limits<double>::quiet_NaN())};
  double joules = 0.0;
  std::size_t intervals = 0;
  // RSS is a level read at each sample: the interval between two samples is priced at the
  // mean of its two ends (the trapezoid rule).
  for (std::size_t i = 1; i < p.sample_ns.size(); ++i) {
    const double a = rss->values[i - 1];
    const double b = rss->values[i];
    if (std::isnan(a) || std::isnan(b) || p.sample_ns[i] <= p.sample_ns[i - 1]) continue;
    const double w = kMemoryWattsPerGigabyte * ((a + b) / 2.0) / 1e9;
    power.values[i] = w;
    joules += w * seconds_between(p, i);
    ++intervals;
  }
  if (intervals == 0) return;
  std::string note = fmt::format("modelled from the process's resident memory at {} per GB; not the host's DIMMs",
                                 watts(kMemoryWattsPerGigabyte));
  insert_track(p, std::move(power));
  p.energy.push_back(EnergyDomain{kMemoryDomain, "dram", EnergyMethod::Modelled, joules, kMemoryModelUncertainty,
                                  kMemoryTrack, std::move(note)});
}

}  // namespace

void add_modelled_energy(SystemProfile& profile, const SystemOptions& options) {
  if (!has_measured(profile, "cpu") && !has_domain(profile, kCpuDomain)) add_cpu_model(profile, options);
  if (!has_measured(profile, "dram") && !has_domain(profile, kMemoryDomain)) add_memory_model(profile);
}

}  // namespace nnprof::detail::system
