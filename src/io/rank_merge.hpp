// `nnprof merge rank*.nnprof -o job.nnprof`: the profiles of a distributed job's ranks joined
// into one profile on rank 0's clock, one rank at a time (nnprof/distributed_analysis.hpp).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "nnprof/distributed_analysis.hpp"

namespace nnprof::io {

/// Reads one input; Profile::load by default. Tests give their own, to hand the merge profiles
/// whose ranks the store of their build does not keep.
using ProfileLoader = std::function<Profile(const std::string& path)>;

/// See nnprof::merge_rank_profiles.
RankMergeResult merge_rank_profiles(const std::vector<std::string>& inputs, const std::string& output,
                                    const RankMergeOptions& options, const ProfileLoader& load = {});

/// `inputs` in natural order ("rank2" before "rank10"): the order the merge reads them, so that
/// rank 0 usually comes first and threads follow the ranks.
std::vector<std::string> natural_order(std::vector<std::string> inputs);

}  // namespace nnprof::io
