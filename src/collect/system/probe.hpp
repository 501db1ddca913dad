// The seam between the system monitor's thread and what it reads: each probe reads one source
// (procfs, a cgroup, RAPL, NVML) at every tick and says what it could not read, once.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/system_profile.hpp"

namespace nnprof::detail::system {

/// Where a probe puts one tick's readings. Values are per track name; a track appears the first
/// time a value is set on it (earlier samples read NaN). The monitor owns the storage.
class SampleSink {
 public:
  virtual ~SampleSink() = default;
  /// Sets this tick's value of `track` (unit as in nnprof/system_profile.hpp).
  virtual void set(std::string_view track, std::string_view unit, double value) = 0;
  /// Records why something could not be read; the same text is kept once.
  virtual void note(std::string_view message) = 0;
};

class Probe {
 public:
  virtual ~Probe() = default;
  /// Reads the source at `now_ns` (CLOCK_MONOTONIC). The first call only primes rates and
  /// counters (it may set gauges). Called on the monitor thread only. Never throws.
  virtual void sample(std::uint64_t now_ns, SampleSink& sink) = 0;
  /// Appends the energy this probe measured so far (nothing for probes without energy).
  /// Called on the monitor thread or, under the monitor's lock, on a snapshotting thread.
  virtual void energy(std::vector<EnergyDomain>& out) const { (void)out; }
};

}  // namespace nnprof::detail::system
