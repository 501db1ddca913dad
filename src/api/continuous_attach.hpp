// Which ContinuousProfiler runs over which Profiler, so that a live server of that profiler
// (nnprof::LiveServer, `nnprof record --serve --continuous`) shows the windows, anomalies and
// trends found so far. Kept beside the profilers, as the live server is (api/live_attach.hpp).
#pragma once

#include <optional>

#include "nnprof/continuous_profile.hpp"

namespace nnprof {
class Profiler;

namespace detail {
/// The windows, anomalies and trends of the ContinuousProfiler running over `profiler` now, or
/// nothing when none runs. Safe against that profiler stopping at the same moment.
std::optional<ContinuousProfile> running_continuous_profile(const Profiler& profiler);
}  // namespace detail
}  // namespace nnprof
