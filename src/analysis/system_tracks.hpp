// Summaries of the system monitor's counter tracks and energy domains, for the report's
// "System and energy" section and the JSON report: one row per track, one per domain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/profile.hpp"
#include "nnprof/session_metrics.hpp"

namespace nnprof::analysis {

/// One counter track over the samples where it was read (NaN values left out).
struct TrackSummary {
  std::string name;
  std::string unit;
  std::size_t samples = 0;  ///< values read; min .. last are NaN when 0
  double min = 0.0;
  double mean = 0.0;
  double p95 = 0.0;         ///< nearest rank over the values read
  double max = 0.0;
  double last = 0.0;        ///< the last value read

  bool operator==(const TrackSummary&) const = default;
};

/// One energy domain and the power it drew on average.
struct DomainSummary {
  const EnergyDomain* domain = nullptr;
  double mean_watts = 0.0;  ///< joules over the monitored time; 0 without one
  bool counted = true;      ///< counts towards the run's energy (not psys, which holds the others)
  bool measured = true;     ///< its method is rapl or nvml_*; false: modelled
};

/// Every track of `system`, in its order (by name).
[[nodiscard]] std::vector<TrackSummary> summarize_tracks(const SystemProfile& system);
/// Every energy domain of `system`, in its order (measured first, then modelled).
[[nodiscard]] std::vector<DomainSummary> summarize_domains(const SystemProfile& system);
/// The machine over [begin_ns, end_ns] (on the clock of system.sample_ns): what
/// Profiler::profile's regions report. Sample i's values cover (t[i-1], t[i]]; each is weighted
/// by its overlap with the window. `domains` holds each energy domain with its joules over the
/// window (the carbon of the window is nnprof::carbon_estimate of those).
struct WindowSystem {
  RegionSystem figures;  ///< carbon fields left at 0: the caller adds them
  std::vector<EnergyDomain> domains;
};
[[nodiscard]] WindowSystem system_between(const SystemProfile& system, std::uint64_t begin_ns, std::uint64_t end_ns);

/// From the first sample to the last, in seconds; 0 with fewer than two samples.
[[nodiscard]] double monitored_seconds(const SystemProfile& system) noexcept;

}  // namespace nnprof::analysis
