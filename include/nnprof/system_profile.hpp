// What the system monitor (nnprof/system.hpp) recorded: counter tracks of the process, the
// machine, its cgroup and its GPUs sampled on one clock, and the energy each domain used, every
// figure with the method that produced it. Carbon is derived from the energy by analysis
// (nnprof::carbon_estimate), never stored as if measured.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/ids.hpp"

namespace nnprof {

/// How an energy figure was obtained. A modelled figure is never shown as a measured one.
enum class EnergyMethod : std::uint8_t {
  Rapl,        ///< Intel/AMD RAPL energy counters through /sys/class/powercap
  NvmlEnergy,  ///< NVML's total energy counter of the GPU (Volta and later)
  NvmlPower,   ///< NVML's power reading integrated over time (GPUs without the counter)
  Modelled,    ///< a model: CPU power from utilisation and a TDP, memory from W per GiB
};
/// "rapl", "nvml_energy", "nvml_power", "modelled".
[[nodiscard]] NNPROF_API const char* to_string(EnergyMethod method) noexcept;

/// One counter track: a value per monitor sample (SystemProfile::sample_ns), NaN where it was
/// not read at that sample (a device that appeared later, a read that failed once).
///
/// Names are dotted paths, units are base units (see docs/SYSTEM.md for the full list):
///   process.cpu.user / process.cpu.system       percent of one core (200 = two cores busy)
///   process.memory.rss                          bytes
///   process.io.read_bytes / process.io.write_bytes   bytes/s (storage, /proc/self/io)
///   system.cpu.busy                             percent of all logical CPUs of the host
///   system.memory.used                          percent of the host's memory
///   cgroup.memory.used                          percent of the cgroup's memory.max
///   cgroup.cpu.used                             percent of the cgroup's cpu.max quota
///   disk.<device>.read_bytes / .write_bytes     bytes/s;  disk.<device>.busy  percent
///   net.<interface>.rx_bytes / .tx_bytes        bytes/s
///   pressure.cpu.some / pressure.memory.some / pressure.memory.full / pressure.io.some /
///   pressure.io.full                            percent of time stalled over the interval
///   gpu<N>.utilization / gpu<N>.memory_utilization   percent
///   gpu<N>.memory.used                          bytes
///   gpu<N>.power                                W
///   gpu<N>.temperature                          celsius
///   gpu<N>.clock.sm / gpu<N>.clock.memory       MHz
///   energy.<domain>.power                       W (the mean over the interval ending there)
struct SystemTrack {
  std::string name;
  std::string unit;             ///< "percent", "bytes", "bytes/s", "W", "celsius", "MHz"
  std::vector<double> values;   ///< one per SystemProfile::sample_ns

  /// Equal when every value is equal or both are NaN (not read): a saved and loaded profile
  /// compares equal to the one saved.
  bool operator==(const SystemTrack& o) const noexcept {
    if (name != o.name || unit != o.unit || values.size() != o.values.size()) return false;
    for (std::size_t i = 0; i < values.size(); ++i)
      if (!(values[i] == o.values[i]) && !(std::isnan(values[i]) && std::isnan(o.values[i]))) return false;
    return true;
  }
};

/// The energy one domain used over the monitored time.
struct EnergyDomain {
  std::string name;     ///< "package-0", "dram-0", "gpu0", "cpu (modelled)", "memory (modelled)"
  std::string kind;     ///< "cpu", "dram", "gpu": what it powers (psys is never added to these)
  EnergyMethod method = EnergyMethod::Modelled;
  double joules = 0.0;  ///< over [first sample, last sample]
  /// Relative half-width of the band the true value lies in: 0.05 reads ±5 %. RAPL and NVML
  /// counters carry their documented accuracy; modelled figures a wide band (see docs/SYSTEM.md).
  double uncertainty = 0.0;
  std::string track;    ///< the SystemTrack of its power ("energy.package-0.power")
  std::string note;     ///< how it was obtained ("TDP 65 W given by --tdp", "counter wrapped twice")

  bool operator==(const EnergyDomain&) const = default;
};

/// Where the host's limits come from: a process in a container sees the host's /proc, so its
/// percentages are computed against the cgroup's limits when there are any, with the host view beside.
struct SystemLimits {
  std::uint32_t logical_cpus = 0;          ///< of the host (online CPUs)
  double cgroup_cpu_cores = 0.0;           ///< cpu.max quota / period; 0: no CPU limit
  std::uint64_t host_memory_bytes = 0;     ///< MemTotal
  std::uint64_t cgroup_memory_bytes = 0;   ///< memory.max; 0: no memory limit
  std::string cgroup;                      ///< the process's cgroup v2 path ("/" or empty: none)

  bool operator==(const SystemLimits&) const = default;
};

/// Everything the system monitor recorded during a session; monitored is false without one.
struct SystemProfile {
  bool monitored = false;
  std::uint32_t interval_ms = 0;
  SystemLimits limits;
  /// When each sample was taken, ns since the session's start, ascending.
  std::vector<std::uint64_t> sample_ns;
  /// The innermost scope open at each sample on `scope_thread` (a name, kNone: none open or
  /// no timeline), found from the timeline when the profile is built.
  std::vector<StringId> sample_scope;
  std::uint32_t scope_thread = kNone;  ///< index in Profile::threads; kNone: the first thread
  std::vector<SystemTrack> tracks;     ///< sorted by name
  std::vector<EnergyDomain> energy;    ///< measured domains first, then modelled ones
  /// What could not be read and why, once each ("RAPL: /sys/class/powercap is absent (no
  /// RAPL in this VM or container); CPU energy is modelled").
  std::vector<std::string> notes;

  /// The track named `name`, or nullptr.
  [[nodiscard]] const SystemTrack* track(const std::string& name) const noexcept {
    for (const SystemTrack& t : tracks)
      if (t.name == name) return &t;
    return nullptr;
  }

  bool operator==(const SystemProfile&) const = default;
};

}  // namespace nnprof
