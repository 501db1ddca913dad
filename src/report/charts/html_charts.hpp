// The SVG charts of the HTML report: the span timeline and memory in use over time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/cpu_profile.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report::html {

/// Most metric charts one page draws; the metrics table lists every metric.
inline constexpr std::size_t kMetricChartLimit = 50;

/// Above this many spans the timeline merges spans narrower than a pixel instead of
/// drawing each one: a browser stays responsive with a few tens of thousands of elements.
inline constexpr std::size_t kTimelineSpanLimit = 20'000;
/// Width of the timeline's time axis, in SVG pixels.
inline constexpr double kTimelineWidthPx = 1200.0;
/// Most rectangles a merged timeline draws, whatever the number of spans.
inline constexpr std::size_t kTimelineBoxBudget = 12'000;
/// Deepest nesting level drawn; deeper spans are counted, not drawn.
inline constexpr std::uint32_t kTimelineMaxDepth = 32;

/// A thread's group of lanes in the timeline, one lane per nesting level.
struct TimelineThread {
  std::uint32_t thread = 0;  ///< Profile thread id
  std::uint32_t depths = 0;  ///< lanes drawn: the deepest level, at most kTimelineMaxDepth
  std::uint64_t spans = 0;   ///< spans of this thread that are drawn
};

/// One rectangle of the timeline: a span, or consecutive narrow spans of one lane merged.
struct TimelineBox {
  std::uint32_t row = 0;    ///< index in TimelineLayout::threads
  std::uint32_t depth = 1;  ///< 1 for top-level scopes
  double x0 = 0.0;          ///< pixels from the start of the time axis
  double x1 = 0.0;
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;
  std::uint64_t busy_ns = 0;  ///< sum of the durations of the spans it stands for
  std::uint64_t spans = 1;
  std::uint32_t span = kNone;  ///< the index of the span it stands for when `spans` is 1
  StringId name = kNone;  ///< the spans' name; when `mixed`, the one with the most busy time
  bool mixed = false;     ///< the merged spans have different names
};

/// Where every span (or group of merged spans) is drawn.
struct TimelineLayout {
  std::uint64_t t0_ns = 0;  ///< time at the left edge: the first span's start
  std::uint64_t t1_ns = 0;  ///< time at the right edge: the last span's end
  std::vector<TimelineThread> threads;
  std::vector<TimelineBox> boxes;
  bool merged = false;    ///< more than kTimelineSpanLimit spans: narrow ones merged
  double merge_px = 0.0;  ///< when merged: spans narrower than this many pixels were merged
  std::uint64_t spans_drawn = 0;
  std::uint64_t spans_too_deep = 0;
};

/// Lays out the spans of `profile`: one lane group per thread, one lane per depth. With more
/// than kTimelineSpanLimit spans, the spans of a lane narrower than `merge_px` that start in
/// the same column of `merge_px` pixels become one box, `merge_px` doubling from 1 until at
/// most kTimelineBoxBudget boxes remain; wider spans keep a box each.
[[nodiscard]] TimelineLayout layout_timeline(const Profile& profile);

/// Appends the timeline of `layout` as an inline <svg> (no external references).
void write_timeline_svg(const Profile& profile, const TimelineLayout& layout, std::string& out);

/// Appends the chart of memory in use over time (the running sum of memory_events) as an
/// inline <svg>, or a note saying that no memory was recorded.
void write_memory_chart(const Profile& profile, std::string& out);

/// Appends the chart of the heap timeline (heap in use, RSS and VmHWM over time, with the
/// heap peak marked) as an inline <svg>, or a note saying that no sample was taken. Its
/// line styles are kHeapChartStyle.
void write_heap_chart(const Profile& profile, std::string& out);

/// Appends the chart of one metric as an inline <svg>: counters and gauges as a step line over
/// time, histograms as the distribution of their points (40 bins, p50 and p99 marked); a note
/// when no point was kept.
void write_metric_chart(const Profile& profile, const MetricSeries& metric, std::string& out);

/// The CSS each chart needs in the page (Picture::style), beside the page's general styles
/// (tables, cards, notes). Each is complete for its chart, so a page holds only the styles of
/// the charts it draws.
/// The span timeline (write_timeline_svg).
extern const std::string_view kTimelineStyle;
/// Memory in use over time (write_memory_chart) and the metric charts (write_metric_chart).
extern const std::string_view kMemoryChartStyle;
/// The heap timeline (write_heap_chart): kMemoryChartStyle and the RSS and VmHWM lines.
extern const std::string_view kHeapChartStyle;
/// Horizontal bars of the top GPU kernels (class "kbars", rows "kb" with "kn", "kt", "kv").
extern const std::string_view kKernelBarsStyle;

/// Nodes of a flame tree narrower than this fraction of the root are left out of the page
/// (counted in a note): they would be under a pixel wide until zoomed far in.
inline constexpr double kFlameMinFraction = 1.0 / 5000.0;

/// Appends an interactive icicle graph of `tree` (root at the top, each node as wide as its
/// samples): a search box, a reset button and the container kFlameScript draws into, whose
/// data-nodes attribute holds the nodes as JSON ([name, module, parent, samples, self samples,
/// ns, is scope], parents first); click zooms, hover shows details.
void write_flame_graph(const analysis::FlameTree& tree, std::string& out);

/// The script that draws write_flame_graph's data (no external references).
extern const std::string_view kFlameScript;
/// Its styles.
extern const std::string_view kFlameStyle;

}  // namespace nnprof::report::html
