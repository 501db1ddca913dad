// The metrics of a profile as JSON: what save_metrics writes and the JSON report embeds.
#pragma once

#include <iosfwd>

#include <nlohmann/json.hpp>

#include "model/metric_builder.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {


/// One metric as {"name", "kind", "unit", "summary": {...}, "points": [[time_ns, value], ...]}.
nlohmann::json metric_json(const Profile& profile, const MetricSeries& metric, bool with_points = true);
/// Every metric of `profile`, in the profile's order (by name).
nlohmann::json metrics_json(const Profile& profile, bool with_points = true);

/// The document save_metrics writes: {"schema": "nnprof-metrics", "schema_version": 1,
/// "nnprof_version", "duration_ns", "metrics": [...]}.
void write_metrics_json(const Profile& profile, std::ostream& out);

}  // namespace nnprof::io
