// Comparing the models of one run (nnprof::compare_models): per model, the time, tokens, work
// and memory recorded under its `model:<name>` scope, then each model against the smallest.
// Pure functions of a Profile.
#pragma once

#include "nnprof/model_compare.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// What nnprof::compare_models returns. Throws nnprof::Error when no model is described.
ModelComparison compare_models(const Profile& profile);

}  // namespace nnprof::analysis
