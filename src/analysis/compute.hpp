// Declared work per scope (FLOPs and bytes moved, from add_flops or NNPROF_SCOPE_FLOPS): the
// rates it achieved and, when the machine's peaks are known, its place on the roofline.
#pragma once

#include <optional>
#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof::analysis {

/// One scope with declared work.
struct ScopeCompute {
  const ScopeStats* scope = nullptr;
  double flops_per_second = 0.0;  ///< per thread of execution: the scope's time is summed over threads
  double bytes_per_second = 0.0;
  double intensity = 0.0;         ///< FLOPs per byte; 0 when no bytes were declared
  /// Against the one-core roofs unless the scope beat them (it then ran on several cores
  /// itself) and then the whole machine's; absent without the machine's peaks, FLOPs or bytes.
  std::optional<RooflinePoint> roofline;
  bool one_core = true;  ///< which roofs `roofline` is against
  /// Share of its FLOPs declared in the scope itself rather than in scopes inside it; a
  /// wrapper (low share) is judged through its children, so that no work is counted twice.
  double own_flops_share = 1.0;
};

/// Below this own_flops_share a scope is a wrapper: no roofline finding or advice of its own.
inline constexpr double kOwnWorkShare = 0.5;

/// True when the profile carries the peaks of the machine it was recorded on.
bool machine_known(const Profile& profile);

/// Every scope with declared FLOPs or bytes, by inclusive time, longest first.
std::vector<ScopeCompute> compute_scopes(const Profile& profile);

/// FLOPs and bytes declared in the whole run, inside scopes or not.
struct WorkTotal {
  double flops = 0.0;
  std::uint64_t bytes = 0;
};
WorkTotal work_total(const Profile& profile);

/// "Rates are per thread of execution ...": how to read the compute table.
Sentence compute_note(const Profile& profile, const std::vector<ScopeCompute>& scopes);

/// What reports say when the roofline cannot be drawn because the peaks are unknown.
Sentence no_machine_hint();

/// "Machine roofs: 98.2 GFLOP/s fp32 on one core, ... ridge at 4.1 FLOP/byte."
Sentence machine_roofs(const MachinePeaks& peaks);

}  // namespace nnprof::analysis
