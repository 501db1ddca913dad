// The metrics of a profile drawn into a PNG with cairo: one panel per metric.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Most panels one PNG holds; further metrics are named in a line at the bottom.
inline constexpr std::size_t kMetricPngMaxPanels = 24;
inline constexpr int kMetricPngWidth = 1000;
inline constexpr int kMetricPngPanelHeight = 240;

/// The text of one panel, as write_metrics_png draws it.
struct MetricPngPanelText {
  std::vector<std::string> title;  ///< one line, or two (name, then statistics) when one is too wide
  std::string y_low, y_high;       ///< the value axis (a histogram's: counts), bottom and top
  std::string x_left, x_right;     ///< under the plot: the time span, or a histogram's value range
};

/// Where write_metrics_png puts its text, measured with the fonts it draws with: every panel
/// shares one left margin that fits the widest value-axis label, and every title line is
/// fitted to the image's width (ellipsized with "…" where it has to be).
struct MetricPngLayout {
  double left_margin = 0;     ///< pixels from the image's left edge to the plots
  double widest_y_label = 0;  ///< extent of the widest value-axis label, in pixels
  double title_limit = 0;     ///< the widest a title line may be, in pixels
  double widest_title = 0;    ///< extent of the widest title line, in pixels
  std::vector<MetricPngPanelText> panels;
};

/// The layout of the PNG of `profile`'s metrics (its first kMetricPngMaxPanels metrics).
MetricPngLayout metrics_png_layout(const Profile& profile);

/// Draws every metric of `profile` (counters and gauges as a line over time, histograms as a
/// distribution of their points, each titled with its summary) and writes the PNG to `path`
/// atomically. Throws nnprof::Error when there is no metric or the file cannot be written.
void write_metrics_png(const Profile& profile, const std::string& path);

}  // namespace nnprof::io
