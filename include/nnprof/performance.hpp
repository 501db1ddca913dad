// Performance analysis beyond one profile's report: the roofline verdict of every operation in
// one call, and several separately recorded profiles (compute, memory, data loading) analysed
// together into one list of recommendations and one HTML report.
//
//   for (const nnprof::RooflineVerdict& v : nnprof::roofline_verdicts(profile))
//     std::cout << v.operation << ": " << v.limitation << " bound (" << v.utilization * 100 << "% of peak)\n";
//
//   auto analysis = nnprof::PerformanceAnalysis()
//                       .add_profile(compute_profile, "compute")
//                       .add_profile(memory_profile, "memory")
//                       .analyze();
//   analysis.generate_report("profiling_report.html");
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nnprof/analysis.hpp"
#include "nnprof/config.hpp"
#include "nnprof/memory_profiler.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/sampling_profiler.hpp"

namespace nnprof {

/// Where one operation (a scope with declared FLOPs and bytes) sits under this machine's roofs.
struct RooflineVerdict {
  std::string operation;     ///< the scope's name
  std::string limitation;    ///< "memory" (below the ridge point) or "compute" (above it)
  /// Attained FLOP/s over the attainable roof at its intensity, as a fraction (1 = on the
  /// roof; above 1 when its data came from cache: the memory roof is main memory's).
  double utilization = 0.0;
  double intensity = 0.0;          ///< FLOPs per byte
  double attained_flops = 0.0;     ///< FLOP/s
  double attainable_flops = 0.0;   ///< FLOP/s: min(peak, intensity x bandwidth)
  bool one_core = true;            ///< against the one-core roofs (else the whole machine's)
  double time_share = 0.0;         ///< of the instrumented time, 0..1

  bool operator==(const RooflineVerdict&) const = default;
};

/// Every operation of `profile` with a place on the roofline, longest first: scopes with
/// declared FLOPs and bytes, doing most of that work themselves (a wrapper is judged through
/// the scopes inside it), when the machine's peaks are known (`nnprof machine`, or
/// machine_peaks()). Empty otherwise. The verdicts are those of the reports' compute section.
NNPROF_API std::vector<RooflineVerdict> roofline_verdicts(const Profile& profile);

/// What the analysis found in one of its profiles.
struct ProfileAnalysis {
  std::string label;                            ///< as given to add_profile, or "profile N"
  std::uint64_t duration_ns = 0;                ///< the profile's session length
  std::vector<Bottleneck> bottlenecks;          ///< analyze_bottlenecks, most severe first
  std::vector<Recommendation> recommendations;  ///< recommend(), priority 1..n within this profile
  std::vector<RooflineVerdict> roofline;        ///< roofline_verdicts
  std::vector<FunctionStats> hot_functions;     ///< function_stats, at most 10; empty without CPU samples
  MemoryReport memory;                          ///< memory_report (without its profile); zero without heap tracking
};

/// Several profiles of one workload, each recorded on its own (one with CPU sampling, one with
/// heap tracking, one of the data loader), analysed together.
class NNPROF_API PerformanceAnalysis {
 public:
  /// Adds a profile; `label` names it in the results and the report ("profile N" when empty).
  PerformanceAnalysis& add_profile(Profile profile, std::string label = {});
  /// Analyses every profile added so far. Throws nnprof::Error when none was added.
  PerformanceAnalysis& analyze();

  /// Per profile, in the order added; empty before analyze().
  [[nodiscard]] const std::vector<ProfileAnalysis>& results() const noexcept { return results_; }
  /// The recommendations of every profile in one order of action, priority 1..n: the largest
  /// expected whole-run gain first, those whose gain is unknown ranked by half their limit (as
  /// the advisor ranks them). Each title names its profile ("compute: ...").
  [[nodiscard]] const std::vector<Recommendation>& recommendations() const noexcept { return combined_; }
  /// Writes one report of every profile, in the format `path`'s extension names (.html, .md,
  /// .txt): the combined recommendations, then each profile's report (the sections of `nnprof
  /// report`, titled with its label; the charts are in each profile's own report). The file
  /// appears complete or not at all. Throws nnprof::Error before analyze(), for another
  /// extension, or when it cannot be written.
  void generate_report(const std::string& path) const;

 private:
  std::vector<std::pair<std::string, Profile>> profiles_;
  std::vector<ProfileAnalysis> results_;
  std::vector<Recommendation> combined_;
  bool analyzed_ = false;
};

}  // namespace nnprof
