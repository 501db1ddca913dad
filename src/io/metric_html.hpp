// The Metrics section of the HTML report: the summary table and a chart per metric.
#pragma once

#include <cstddef>
#include <string>

#include "nnprof/profile.hpp"

namespace nnprof::io::html {

/// Most metric charts one page draws; the table lists every metric.
inline constexpr std::size_t kMetricChartLimit = 50;

/// Appends <section id="metrics"> (nothing when the profile has no metric).
void write_metrics_section(const Profile& profile, std::string& out);

}  // namespace nnprof::io::html
