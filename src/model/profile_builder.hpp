// Turns a session's raw snapshot (ticks, per-thread trees) into a Profile: a pure function of
// the snapshot, which carries the host facts and symbols src/collect added to it.
#pragma once

#include "nnprof/profile.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::model {

/// Calibrates the clock over the session, merges the per-thread call trees by name path,
/// computes per-name statistics, converts spans and memory events to nanoseconds, and
/// states the profile's completeness and diagnostics.
Profile build_profile(const detail::RawSnapshot& raw);

/// How the profile of a session started at `start` and snapshotted at `now` converts ticks to
/// nanoseconds (the calibration build_profile uses).
ClockCalibration session_calibration(const ClockPair& start, const ClockPair& now, double nominal_ns_per_tick);

}  // namespace nnprof::model
