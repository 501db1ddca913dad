// System metrics, energy and carbon: a monitor thread samples the process, the machine, its
// cgroup, RAPL and the GPUs (NVML) every interval into counter tracks on the profile's clock.
//
//   nnprof::Profiler profiler;
//   nnprof::SystemMonitor monitor(profiler);          // into profiler's snapshots
//   ... train ...
//   nnprof::Profile p = profiler.snapshot();          // p.system: tracks and energy
//   nnprof::CarbonEstimate c = nnprof::carbon_estimate(p.system, {.region = "FR"});
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/system_profile.hpp"

namespace nnprof {

class Profiler;
namespace detail {
class SystemMonitorThread;
}

struct SystemOptions {
  std::uint32_t interval_ms = 500;  ///< between samples; at least 10
  /// The thread whose innermost open scope each sample carries, by name (ThreadInfo::name);
  /// empty: the first thread that recorded into the profiler (usually the main thread).
  std::string scope_thread;
  bool gpus = true;                 ///< sample GPUs through NVML when libnvidia-ml loads
  /// For the CPU energy model where RAPL cannot be read: the package's TDP in W. 0: the
  /// documented default per logical CPU (docs/SYSTEM.md). Ignored when RAPL is readable.
  double cpu_tdp_watts = 0.0;
  /// Roots of the files read, for tests and containers that mount the host's elsewhere.
  std::string proc_root = "/proc";
  std::string sys_root = "/sys";
};

/// Samples the system while it lives. Attached to a profiler, its tracks and energy are part of
/// every snapshot of that profiler (Profile::system); on its own, result() gives them.
class NNPROF_API SystemMonitor {
 public:
  /// Monitors into `profiler`, which must outlive this object.
  explicit SystemMonitor(Profiler& profiler, const SystemOptions& options = {});
  /// Monitors on its own; sample times count from construction.
  explicit SystemMonitor(const SystemOptions& options = {});
  ~SystemMonitor();
  SystemMonitor(const SystemMonitor&) = delete;
  SystemMonitor& operator=(const SystemMonitor&) = delete;

  /// Takes a last sample and stops the thread; results stay readable.
  void stop() noexcept;
  /// Everything sampled so far (sample_ns since construction; no scopes: there is no timeline).
  [[nodiscard]] SystemProfile result() const;

 private:
  std::shared_ptr<detail::SystemMonitorThread> thread_;
  std::uint64_t start_ns_ = 0;
};

/// Grid carbon intensity of one region, from the table shipped with nnprof.
struct GridIntensity {
  std::string region;          ///< ISO 3166 code ("FR", "US", "DE") or "WORLD"
  std::string name;            ///< "France"
  double grams_per_kwh = 0.0;  ///< g CO2-equivalent per kWh generated, as the source gives it
  std::string source;          ///< public source and year of the figure
};

struct CarbonOptions {
  /// Where the energy was used: an ISO 3166 code from the table (nnprof::grid_intensities()),
  /// "WORLD" (the default, stated as such), or empty to use NNPROF_CARBON_REGION.
  std::string region;
  double grams_per_kwh = 0.0;  ///< > 0: overrides the table (say where it comes from in `source`)
  std::string source;          ///< where an overriding intensity comes from
  double pue = 1.0;            ///< power usage effectiveness of the data centre (1.0: stated default)
};

/// Energy × PUE × grid intensity, with the band carried over from the energy figures.
struct CarbonEstimate {
  double energy_joules = 0.0;       ///< measured and modelled domains, psys excluded
  double measured_joules = 0.0;     ///< of which measured (rapl, nvml_*)
  double grams_co2 = 0.0;
  double grams_low = 0.0, grams_high = 0.0;
  double pue = 1.0;
  GridIntensity intensity;
  bool defaulted_region = false;    ///< no region was given: the world average was used
};

/// The table of grid intensities shipped with nnprof, by region code.
[[nodiscard]] NNPROF_API const std::vector<GridIntensity>& grid_intensities();
/// The carbon of `system`'s energy. Throws nnprof::Error for an unknown region or a PUE < 1.
[[nodiscard]] NNPROF_API CarbonEstimate carbon_estimate(const SystemProfile& system, const CarbonOptions& options = {});

}  // namespace nnprof
