// The ranks of a merged distributed profile: collectives matched across ranks by (group, seq),
// waits and whom they were for, steps and stragglers per rank, communication overlapped with
// computation, and the critical path of a step across ranks (nnprof/distributed_analysis.hpp).
#pragma once

#include <cstdint>

#include "nnprof/distributed_analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// RankAnalysis of `profile` (see nnprof::analyze_ranks).
[[nodiscard]] RankAnalysis analyze_ranks(const Profile& profile, const RankAnalysisOptions& options);

/// The cross-rank critical path of step `step` (see nnprof::rank_critical_path).
[[nodiscard]] RankCriticalPath rank_critical_path(const Profile& profile, const RankAnalysis& analysis,
                                                  std::uint32_t step);

/// Whether `profile` is a merge of two or more ranks, which analyze_ranks needs.
[[nodiscard]] bool has_ranks(const Profile& profile) noexcept;

}  // namespace nnprof::analysis
