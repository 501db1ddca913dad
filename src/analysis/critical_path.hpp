// The critical path over the span graph (nnprof::critical_path), and what reports say about it.
#pragma once

#include <string>

#include "analysis/sentence.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::analysis {

/// One line on the path: how long it is, over how many threads and flows, and what holds
/// most of it.
Sentence critical_path_summary(const Profile& profile, const CriticalPath& path);

/// What a step or entry is called in a table: the scope name, "[outside any scope]" or
/// "[hand-over]".
std::string critical_step_label(const Profile& profile, CriticalStepKind kind, StringId name);

}  // namespace nnprof::analysis
