#include "io/metrics_json.hpp"

#include <ostream>

namespace nnprof::io {


nlohmann::json metric_json(const Profile& profile, const MetricSeries& metric, bool with_points) {
  const MetricSummary& s = metric.summary;
  nlohmann::json summary = {
      {"count", s.count}, {"sum", s.sum}, {"min", s.min},   {"max", s.max},
      {"mean", s.mean},   {"stddev", s.stddev},
      {"last", s.last},   {"points_dropped", s.points_dropped}, {"percentile_points", s.percentile_points},
  };
  // Percentiles only where there were points to compute them from: 0 would read as a value.
  if (s.percentile_points > 0) {
    summary["p50"] = s.p50;
    summary["p90"] = s.p90;
    summary["p95"] = s.p95;
    summary["p99"] = s.p99;
  }
  nlohmann::json j = {{"name", profile.str(metric.name)},
                      {"kind", model::metric_kind_name(metric.kind)},
                      {"unit", metric.unit},
                      {"summary", std::move(summary)}};
  if (with_points) {
    nlohmann::json points = nlohmann::json::array();
    for (const MetricPoint& p : metric.points) points.push_back(nlohmann::json::array({p.time_ns, p.value}));
    j["points"] = std::move(points);
  }
  return j;
}

nlohmann::json metrics_json(const Profile& profile, bool with_points) {
  nlohmann::json all = nlohmann::json::array();
  for (const MetricSeries& m : profile.metrics) all.push_back(metric_json(profile, m, with_points));
  return all;
}

void write_metrics_json(const Profile& profile, std::ostream& out) {
  const nlohmann::json doc = {{"schema", "nnprof-metrics"},
                              {"schema_version", 1},
                              {"nnprof_version", profile.meta.nnprof_version},
                              {"duration_ns", profile.meta.duration_ns},
                              {"metrics", metrics_json(profile)}};
  out << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
}

}  // namespace nnprof::io
