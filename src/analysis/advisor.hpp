// The optimization advisor: a prioritised list of what to change, each with the measurements
// it rests on, the steps to take and the speedup of the whole run to expect (Amdahl's law
// over the part's share of the time and the gain its roofline position leaves).
#pragma once

#include <vector>

#include "analysis/sentence.hpp"
#include "nnprof/analysis.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

struct Advice {
  Sentence title;
  StringId scope = kNone;       ///< what to change; kNone for a function or the whole run
  std::string function;         ///< the function to change (CPU findings)
  StringId counter = kNone;     ///< the named memory counter to change (counter memory findings)
  Sentence evidence;
  std::vector<Sentence> steps;
  double time_share = 0.0;      ///< Amdahl's p
  double part_speedup = 0.0;    ///< Amdahl's s; 0 when unknown
  double expected_speedup = 0.0;
  double max_speedup = 1.0;
};

/// The recommendations for `profile`, the largest gain first (see nnprof::recommend).
std::vector<Advice> advise(const Profile& profile, const AdvisorOptions& options = {});

/// "expected 1.31× faster run; at most 1.8× if it took no time" (or only the limit when the
/// gain is unknown).
Sentence speedup_summary(const Advice& advice);

/// What reports say when there is nothing to recommend.
Sentence no_advice();

}  // namespace nnprof::analysis
