// Turns a session's raw snapshot (ticks, per-thread trees) into a Profile.
#pragma once

#include "nnprof/profile.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::model {

/// Calibrates the clock over the session, merges the per-thread call trees by name path,
/// computes per-name statistics, converts spans and memory events to nanoseconds, and
/// states the profile's completeness and diagnostics.
Profile build_profile(const detail::RawSnapshot& raw);

}  // namespace nnprof::model
