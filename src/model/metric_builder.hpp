// Turns the metric registry's snapshot and the threads' Metric records into the profile's
// metric series: statistics, points, percentiles and what is missing.
#pragma once

#include <functional>
#include <string_view>
#include <vector>

#include "nnprof/profile.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::model {

/// "counter", "gauge" or "histogram": the kind as the store, the reports and the JSON name it.
const char* metric_kind_name(MetricKind kind) noexcept;

/// The p-quantile (0 <= p <= 1) of `sorted` (ascending, non-empty) by linear interpolation
/// between the two nearest ranks, rank = p * (n - 1): numpy's default, R's type 7.
double percentile(const std::vector<double>& sorted, double p);

/// Adds one MetricSeries per metric of `raw` to `profile.metrics` (sorted by name), and a
/// MetricsIncomplete diagnostic for each metric whose points were not all kept or whose
/// calls were ignored. `intern` gives the string id of a name.
void build_metrics(const detail::RawSnapshot& raw, const ClockCalibration& cal,
                   const std::function<StringId(std::string_view)>& intern, Profile& profile);

}  // namespace nnprof::model
