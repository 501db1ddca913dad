// The one way a metric's value is written with its unit (tables, chart axes, the metrics PNG), and
// what a report says about metric points that were not kept.
#pragma once

#include <string>
#include <string_view>

#include "report/format.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report {

/// A metric value with its unit: durations for "ns" ("1.23 ms"), sizes for "bytes"
/// ("1.50 MiB"), whole numbers and anything from 1,000 up rounded to a whole number with
/// thousands separators ("1,234 tokens", "37,050 tokens/s"), others with 4 significant
/// digits ("0.3127 nats"); beyond 1e15 or below 1e-3 in scientific notation.
std::string format_metric_value(double value, std::string_view unit);

/// A value as a chart's axis labels it, short: durations and sizes as format_metric_value,
/// otherwise 3 significant digits below 1,000 ("0.5 loss", "12.3 tokens/s"), thousands
/// separators below a million ("37,050 tokens/s") and a decimal prefix above ("1.23M
/// tokens/s", "45.6G FLOP").
std::string format_axis_value(double value, std::string_view unit);

/// A sentence about metric points that were not kept, or empty when every point was.
std::string metrics_completeness_note(const Profile& profile);

}  // namespace nnprof::report
