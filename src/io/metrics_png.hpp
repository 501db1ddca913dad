// The metrics of a profile drawn into a PNG with cairo: one panel per metric.
#pragma once

#include <string>

#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Most panels one PNG holds; further metrics are named in a line at the bottom.
inline constexpr std::size_t kMetricPngMaxPanels = 24;
inline constexpr int kMetricPngWidth = 1000;
inline constexpr int kMetricPngPanelHeight = 240;

/// Draws every metric of `profile` (counters and gauges as a line over time, histograms as a
/// distribution of their points, each titled with its summary) and writes the PNG to `path`
/// atomically. Throws nnprof::Error when there is no metric or the file cannot be written.
void write_metrics_png(const Profile& profile, const std::string& path);

}  // namespace nnprof::io
