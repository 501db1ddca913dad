// The metrics of a profile as CSV, in the tidy form pandas and spreadsheets read directly:
// one file of points (one row per observation) and one of summaries (one row per metric).
// Two files rather than two tables in one, since a CSV reader takes one header per file.
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/profile.hpp"

namespace nnprof::io {

/// The header of the points form (without the line ending).
inline constexpr std::string_view kMetricPointsCsvHeader = "metric,kind,unit,time_ns,value,thread";

/// The header of the summary form (without the line ending).
inline constexpr std::string_view kMetricSummaryCsvHeader =
    "metric,kind,unit,count,sum,min,max,mean,stddev,p50,p90,p95,p99,percentile_points,last,points_dropped";

/// Writes one record per kept point of every metric, metrics in the profile's order (by name),
/// each metric's points in time order: metric, kind (counter, gauge, histogram), unit, time_ns
/// since the session's start, value (for a counter the running total after the increment) and
/// thread (index in Profile::threads). Points beyond the buffer cap are not in the file; the
/// summary form counts them (points_dropped). RFC 4180 as write_csv (CRLF, quoting as csv_field).
void write_metric_points_csv(const Profile& profile, std::ostream& out);

/// Writes one record per metric with its MetricSummary. The percentiles are empty fields where
/// no point was kept to compute them from (percentile_points 0): 0 would read as a value.
void write_metric_summary_csv(const Profile& profile, std::ostream& out);

}  // namespace nnprof::io
