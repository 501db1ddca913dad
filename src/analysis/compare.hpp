// Run comparison (nnprof::compare): per-scope changes between two profiles judged by a
// Mann-Whitney U test on per-call durations, with Welch's test on summary statistics where
// spans were not kept. Pure functions of two Profiles.
#pragma once

#include "nnprof/compare.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// What nnprof::compare returns (it adds only the guard against counting nnprof's own
/// allocations as the program's).
Comparison compare_profiles(const Profile& a, const Profile& b, const CompareOptions& options);

}  // namespace nnprof::analysis
