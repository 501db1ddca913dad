// `nnprof merge rank*.nnprof -o job.nnprof`: the profiles of a distributed job's ranks joined
// into one profile on rank 0's clock, one rank at a time (nnprof/distributed_analysis.hpp).
#pragma once

#include <string>
#include <vector>

#include "nnprof/distributed_analysis.hpp"

namespace nnprof::io {

/// See nnprof::merge_rank_profiles.
RankMergeResult merge_rank_profiles(const std::vector<std::string>& inputs, const std::string& output,
                                    const RankMergeOptions& options);

/// `inputs` in natural order ("rank2" before "rank10"): the order the merge reads them, so that
/// rank 0 usually comes first and threads follow the ranks.
std::vector<std::string> natural_order(std::vector<std::string> inputs);

}  // namespace nnprof::io
