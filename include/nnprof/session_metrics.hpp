// Measuring a whole region of a program: wall, CPU, user and system time, CPU utilisation,
// resident memory and FLOP/s.
//
//   {
//     auto region = profiler.profile("training_loop");   // also a scope named "training_loop"
//     train();                                           // profiler.add_flops(...) inside counts
//   }
//   if (auto m = profiler.get_metrics("training_loop")) std::cout << m->summary() << '\n';
//
// Results are kept when an exception leaves the region (RegionMetrics::completed is then
// false), so profiler.has_results() tells whether there is anything to read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "nnprof/config.hpp"

namespace nnprof {

class Profiler;

/// Time spent in a region. CPU times are the whole process's (getrusage RUSAGE_SELF): every
/// thread, including ones the region did not start.
struct RegionTiming {
  std::uint64_t wall_ns = 0;
  std::uint64_t cpu_ns = 0;     ///< user + system
  std::uint64_t user_ns = 0;
  std::uint64_t system_ns = 0;
  /// cpu_ns / wall_ns: 1.0 is one core busy all the time, 2.0 two cores.
  double cpu_utilization = 0.0;
  /// cpu_utilization divided by the CPUs this process may run on: 1.0 is every one busy.
  double cpu_utilization_of_machine = 0.0;

  bool operator==(const RegionTiming&) const = default;
};

/// The process's resident set size (VmRSS) over a region.
struct RegionMemory {
  std::uint64_t rss_initial_bytes = 0;
  std::uint64_t rss_peak_bytes = 0;
  std::uint64_t rss_final_bytes = 0;
  /// True when the process's high-water mark (VmHWM) rose during the region, so the peak is
  /// exact; false when the region stayed below an earlier peak of the process, and the peak
  /// is the larger of the initial and final RSS, a lower bound.
  bool rss_peak_exact = false;

  bool operator==(const RegionMemory&) const = default;
};

/// Work declared in a region: ProfiledRegion::add_flops, plus the FLOPs declared with
/// Profiler::add_flops while the region's scope or a scope inside it was innermost.
struct RegionCompute {
  double flops = 0.0;
  double flops_per_second = 0.0;  ///< flops / wall time; 0 without FLOPs

  bool operator==(const RegionCompute&) const = default;
};

/// The machine over a region, from the system monitor attached to the profiler
/// (nnprof::SystemMonitor): it samples at the region's start and end (at most every 10 ms), so a
/// region shorter than the monitor's interval is covered too. Rates are integrated over the
/// region; NaN where the monitor did not read the figure (no disk, no GPU).
struct RegionSystem {
  double process_cpu_percent = 0.0;  ///< of one core (200: two cores busy), mean over the region
  double host_cpu_percent = 0.0;     ///< of all logical CPUs of the host, mean
  double memory_percent = 0.0;       ///< peak, of the cgroup's limit when there is one, else of the host's memory
  double disk_read_bytes = 0.0, disk_write_bytes = 0.0;  ///< every block device, whoever did the IO
  double network_bytes = 0.0;        ///< received and sent on every interface but lo
  double gpu_utilization_percent = 0.0;  ///< mean over the GPUs NVML reads; NaN without one
  double energy_joules = 0.0;        ///< every domain but psys, over the region
  bool energy_measured = false;      ///< true: RAPL/NVML only; false: some of it is modelled
  double carbon_grams = 0.0;         ///< energy x PUE x grid intensity (NNPROF_CARBON_REGION, else the world average)
  double carbon_low_grams = 0.0, carbon_high_grams = 0.0;
  std::string carbon_region;         ///< the intensity's region code ("WORLD" when none was given)
  std::size_t samples = 0;           ///< monitor samples whose interval overlaps the region

  bool operator==(const RegionSystem&) const = default;
};

/// What a ProfiledRegion measured.
struct NNPROF_API RegionMetrics {
  std::string name;
  bool completed = true;  ///< false: an exception left the region; the figures cover it up to then
  RegionTiming timing;
  RegionMemory memory;
  RegionCompute compute;
  /// With a SystemMonitor attached to the profiler: the machine, energy and carbon over the region.
  std::optional<RegionSystem> system;

  /// One line with units: "training_loop: wall 12.3 s, CPU 23.1 s (user 22.0 s, system 1.10 s),
  /// CPU utilisation 188% (1.88 cores, 47.0% of 4 CPUs), RSS 120 MiB -> peak 512 MiB -> 130 MiB,
  /// 4.10 GFLOP/s (50.4 GFLOP)".
  [[nodiscard]] std::string summary() const;
  /// Every field as a JSON object (times in ns, sizes in bytes).
  [[nodiscard]] std::string to_json() const;

  bool operator==(const RegionMetrics&) const = default;
};

/// One row of Profiler::get_timing_breakdown().
struct RegionShare {
  std::string name;
  std::uint64_t count = 0;    ///< regions of this name that finished
  std::uint64_t wall_ns = 0;  ///< their wall time together
  double share = 0.0;         ///< of the wall time of every region in the breakdown (0..1)

  bool operator==(const RegionShare&) const = default;
};

namespace detail {
struct RegionState;
}

/// A region being measured; see Profiler::profile. Its results go to the profiler when it
/// ends (destructor or stop()).
class NNPROF_API ProfiledRegion {
 public:
  ProfiledRegion(Profiler& profiler, std::string_view name);
  ~ProfiledRegion();
  ProfiledRegion(ProfiledRegion&&) noexcept;
  ProfiledRegion& operator=(ProfiledRegion&&) = delete;
  ProfiledRegion(const ProfiledRegion&) = delete;
  ProfiledRegion& operator=(const ProfiledRegion&) = delete;

  /// Declares `flops` floating-point operations done in the region.
  void add_flops(double flops) noexcept;
  /// The region's figures so far, without ending it.
  [[nodiscard]] RegionMetrics current() const;
  /// Ends the region now and returns its figures (the destructor then does nothing); after
  /// the first call, returns the same figures again.
  RegionMetrics stop();

 private:
  std::unique_ptr<detail::RegionState> state_;
};

}  // namespace nnprof
