// What continuous profiling (nnprof::ContinuousProfiler, `nnprof record --continuous`) adds to
// a profile: the trends and anomalies nnprof found over the run's windows.
#pragma once

#include <vector>

#include "nnprof/trends.hpp"

namespace nnprof {

struct ContinuousProfile {
  bool enabled = false;             ///< false: not a continuous run; the rest is empty
  std::vector<Anomaly> anomalies;   ///< level shifts, outliers and growth, oldest first
  std::vector<Trend> trends;        ///< one per metric with enough windows

  bool operator==(const ContinuousProfile&) const = default;
};

}  // namespace nnprof
