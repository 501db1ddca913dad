// The public analysis of a merged distributed profile (nnprof/distributed_analysis.hpp): thin
// calls into analysis/distributed.cpp.
#include "nnprof/distributed_analysis.hpp"

#include "analysis/distributed.hpp"
#include "io/rank_merge.hpp"
#include "record/internal_allocations.hpp"

namespace nnprof {

RankAnalysis analyze_ranks(const Profile& profile, const RankAnalysisOptions& options) {
  return analysis::analyze_ranks(profile, options);
}

RankCriticalPath rank_critical_path(const Profile& profile, const RankAnalysis& analysis, std::uint32_t step) {
  return analysis::rank_critical_path(profile, analysis, step);
}

RankMergeResult merge_rank_profiles(const std::vector<std::string>& inputs, const std::string& output,
                                    const RankMergeOptions& options) {
  detail::InternalAllocations internal;
  return io::merge_rank_profiles(inputs, output, options);
}

const char* to_string(RankPathKind kind) noexcept {
  switch (kind) {
    case RankPathKind::Compute: return "compute";
    case RankPathKind::Collective: return "collective";
  }
  return "compute";
}

}  // namespace nnprof
