#include "report/charts/html_charts.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/function_name.hpp"
#include "report/format.hpp"
#include "report/html_escape.hpp"
#include "report/metric_values.hpp"

namespace nnprof::report::html {
namespace {

// ---- shared helpers -----------------------------------------------------------------

// A round step for about `raw` per tick: 1, 2 or 5 times a power of ten.
// Axis values are doubles; a corrupt profile can put them beyond the integer types that label
// them, where a plain cast is undefined behaviour. Saturate instead.
std::int64_t saturated_i64(double v) {
  if (!(v > -9.2e18)) return std::numeric_limits<std::int64_t>::min();
  if (!(v < 9.2e18)) return std::numeric_limits<std::int64_t>::max();
  return static_cast<std::int64_t>(v);
}
std::uint64_t saturated_u64(double v) {
  if (!(v > 0.0)) return 0;
  if (!(v < 1.8e19)) return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(v);
}

double nice_step(double raw) {
  if (!(raw > 0.0)) return 1.0;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  for (const double factor : {1.0, 2.0, 5.0}) {
    if (factor * magnitude >= raw) return factor * magnitude;
  }
  return 10.0 * magnitude;
}

// FNV-1a: a stable colour per name, the same in every report.
std::uint32_t name_hash(std::string_view name) {
  std::uint32_t hash = 2166136261U;
  for (const char c : name) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619U;
  }
  return hash;
}

// A light, saturated colour for `name` as "#rrggbb", readable under dark text.
std::string name_colour(std::string_view name) {
  const std::uint32_t hash = name_hash(name);
  const double hue = static_cast<double>(hash % 360U);
  const double saturation = 0.50 + static_cast<double>((hash >> 9) % 20U) / 100.0;
  const double lightness = 0.66 + static_cast<double>((hash >> 17) % 10U) / 100.0;
  // HSL to RGB.
  const double chroma = (1.0 - std::abs(2.0 * lightness - 1.0)) * saturation;
  const double h = hue / 60.0;
  const double x = chroma * (1.0 - std::abs(std::fmod(h, 2.0) - 1.0));
  double r = 0.0;
  double g = 0.0;
  double b = 0.0;
  if (h < 1.0) {
    r = chroma;
    g = x;
  } else if (h < 2.0) {
    r = x;
    g = chroma;
  } else if (h < 3.0) {
    g = chroma;
    b = x;
  } else if (h < 4.0) {
    g = x;
    b = chroma;
  } else if (h < 5.0) {
    r = x;
    b = chroma;
  } else {
    r = chroma;
    b = x;
  }
  const double m = lightness - chroma / 2.0;
  const auto channel = [m](double v) { return static_cast<int>(std::lround((v + m) * 255.0)); };
  return fmt::format("#{:02x}{:02x}{:02x}", channel(r), channel(g), channel(b));
}

// At most `max_chars` code points of `text`, with "…" in place of what is cut.
std::string truncate_utf8(std::string_view text, std::size_t max_chars) {
  if (display_width(text) <= max_chars) return std::string(text);
  if (max_chars == 0) return {};
  std::size_t kept = 0;
  std::size_t i = 0;
  for (; i < text.size(); ++i) {
    if ((static_cast<unsigned char>(text[i]) & 0xC0U) != 0x80U) {
      if (kept == max_chars - 1) break;
      ++kept;
    }
  }
  return std::string(text.substr(0, i)) + "…";
}

// ---- timeline layout ----------------------------------------------------------------

constexpr double kMergedMinWidthPx = 1.0;
constexpr double kSpanMinWidthPx = 0.5;

struct Lane {
  std::uint32_t row = 0;
  std::uint32_t depth = 1;
  std::vector<std::uint32_t> spans;  // indices into Profile::spans
};

class TimeScale {
 public:
  TimeScale(std::uint64_t t0, std::uint64_t t1, double width)
      : t0_(t0), px_per_ns_(width / static_cast<double>(std::max<std::uint64_t>(t1 - t0, 1))) {}
  [[nodiscard]] double x(std::uint64_t t) const {
    return t <= t0_ ? 0.0 : static_cast<double>(t - t0_) * px_per_ns_;
  }
  [[nodiscard]] double ns_per_px() const { return 1.0 / px_per_ns_; }

 private:
  std::uint64_t t0_;
  double px_per_ns_;
};

std::uint64_t span_end(const Span& span) { return std::max(span.end_ns, span.start_ns); }

// Threads that have spans, by id, with their deepest drawn level; the lanes of each
// (thread, depth), in start order.
std::vector<Lane> bucket_spans(const Profile& profile, TimelineLayout& layout) {
  std::vector<std::uint32_t> ids;
  for (const Span& span : profile.spans) {
    if (ids.empty() || ids.back() != span.thread) ids.push_back(span.thread);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  std::vector<Lane> lanes(ids.size() * kTimelineMaxDepth);
  for (std::size_t row = 0; row < ids.size(); ++row) {
    layout.threads.push_back({ids[row], 0, 0});
    for (std::uint32_t d = 0; d < kTimelineMaxDepth; ++d) {
      lanes[row * kTimelineMaxDepth + d].row = static_cast<std::uint32_t>(row);
      lanes[row * kTimelineMaxDepth + d].depth = d + 1;
    }
  }
  for (std::size_t i = 0; i < profile.spans.size(); ++i) {
    const Span& span = profile.spans[i];
    const std::uint32_t depth = std::max<std::uint32_t>(span.depth, 1);
    if (depth > kTimelineMaxDepth) {
      ++layout.spans_too_deep;
      continue;
    }
    const auto row =
        static_cast<std::size_t>(std::lower_bound(ids.begin(), ids.end(), span.thread) - ids.begin());
    TimelineThread& thread = layout.threads[row];
    thread.depths = std::max(thread.depths, depth);
    ++thread.spans;
    lanes[row * kTimelineMaxDepth + depth - 1].spans.push_back(static_cast<std::uint32_t>(i));
  }
  for (Lane& lane : lanes) {
    const auto by_start = [&](std::uint32_t a, std::uint32_t b) {
      return profile.spans[a].start_ns < profile.spans[b].start_ns;
    };
    if (!std::is_sorted(lane.spans.begin(), lane.spans.end(), by_start)) {
      std::stable_sort(lane.spans.begin(), lane.spans.end(), by_start);
    }
  }
  std::erase_if(lanes, [](const Lane& lane) { return lane.spans.empty(); });
  return lanes;
}

TimelineBox box_of(const Span& span, std::uint32_t index, const Lane& lane, const TimeScale& scale) {
  TimelineBox box;
  box.span = index;
  box.row = lane.row;
  box.depth = lane.depth;
  box.start_ns = span.start_ns;
  box.end_ns = span_end(span);
  box.x0 = scale.x(box.start_ns);
  box.x1 = scale.x(box.end_ns);
  box.busy_ns = box.end_ns - box.start_ns;
  box.name = span.name;
  return box;
}

// Narrow spans of one lane being merged into one box: those that start within one column
// of `min_px` pixels. The box takes the colour of the name with the most busy time in it.
class Group {
 public:
  [[nodiscard]] bool open() const { return open_; }
  [[nodiscard]] double x1() const { return box_.x1; }
  [[nodiscard]] bool accepts(const TimelineBox& box) const { return open_ && box.x0 < column_end_; }

  void start(const TimelineBox& box, double min_px) {
    box_ = box;
    column_end_ = (std::floor(box.x0 / min_px) + 1.0) * min_px;
    names_used_ = 0;
    add_name(box.name, box.busy_ns);
    open_ = true;
  }

  void absorb(const TimelineBox& box) {
    box_.x1 = std::max(box_.x1, box.x1);
    box_.end_ns = std::max(box_.end_ns, box.end_ns);
    box_.busy_ns += box.busy_ns;
    box_.spans += box.spans;
    box_.mixed = box_.mixed || box.name != box_.name;
    add_name(box.name, box.busy_ns);
  }

  TimelineBox finish() {
    open_ = false;
    const auto* top = std::max_element(names_.begin(), names_.begin() + names_used_,
                                       [](const auto& a, const auto& b) { return a.second < b.second; });
    box_.name = top->first;
    return box_;
  }

 private:
  // The first few names seen: enough to find the dominant one in a pixel column.
  void add_name(StringId name, std::uint64_t busy_ns) {
    for (std::size_t i = 0; i < names_used_; ++i) {
      if (names_[i].first == name) {
        names_[i].second += busy_ns;
        return;
      }
    }
    if (names_used_ < names_.size()) names_[names_used_++] = {name, busy_ns};
  }

  TimelineBox box_;
  double column_end_ = 0.0;
  std::array<std::pair<StringId, std::uint64_t>, 4> names_{};
  std::size_t names_used_ = 0;
  bool open_ = false;
};

// One lane: a span at least `min_px` wide that does not overlap what is already drawn stays
// on its own; narrower ones are merged per column of `min_px` pixels. A lane thus holds at
// most about 2 x width / min_px boxes.
void merge_lane(const Profile& profile, const Lane& lane, const TimeScale& scale, double min_px,
                std::vector<TimelineBox>& out) {
  Group group;
  double drawn_end = -std::numeric_limits<double>::infinity();
  const auto flush = [&] {
    if (!group.open()) return;
    drawn_end = std::max(drawn_end, group.x1());
    out.push_back(group.finish());
  };
  for (const std::uint32_t index : lane.spans) {
    const TimelineBox box = box_of(profile.spans[index], index, lane, scale);
    const double frontier = group.open() ? std::max(drawn_end, group.x1()) : drawn_end;
    if (box.x1 - box.x0 >= min_px && box.x0 >= frontier - 1e-9) {
      flush();
      out.push_back(box);
      drawn_end = box.x1;
    } else if (group.accepts(box)) {
      group.absorb(box);
    } else {
      flush();
      group.start(box, min_px);
    }
  }
  flush();
}

void layout_boxes(const Profile& profile, const std::vector<Lane>& lanes, const TimeScale& scale,
                  TimelineLayout& layout) {
  if (!layout.merged) {
    for (const Lane& lane : lanes) {
      for (const std::uint32_t index : lane.spans) {
        layout.boxes.push_back(box_of(profile.spans[index], index, lane, scale));
      }
    }
    return;
  }
  // Coarser merging until the budget holds; each pass is linear in the spans.
  for (double min_px = 1.0;; min_px *= 2.0) {
    layout.boxes.clear();
    layout.merge_px = min_px;
    for (const Lane& lane : lanes) merge_lane(profile, lane, scale, min_px, layout.boxes);
    if (layout.boxes.size() <= kTimelineBoxBudget || min_px >= kTimelineWidthPx) break;
  }
}

// ---- timeline drawing ---------------------------------------------------------------

constexpr double kPadPx = 12.0;
constexpr double kAxisPx = 26.0;
constexpr double kThreadHeaderPx = 20.0;
constexpr double kLanePx = 16.0;
constexpr double kLaneBoxPx = 14.0;
constexpr double kThreadGapPx = 10.0;
constexpr double kGapMinWidthPx = 3.0;
constexpr double kGapPx = 0.6;
constexpr double kLabelMinWidthPx = 30.0;
constexpr double kLabelCharPx = 6.0;

std::string thread_label(const Profile& profile, std::uint32_t thread) {
  if (thread >= profile.threads.size()) return fmt::format("thread {}", thread);
  const ThreadInfo& info = profile.threads[thread];
  const std::string name = info.name.empty() ? "[unnamed]" : info.name;
  return fmt::format("{} (tid {})", truncate_utf8(name, 120), info.os_tid);
}

// Top of each thread's lane group, and the total height.
std::vector<double> row_tops(const TimelineLayout& layout, double& height) {
  std::vector<double> tops;
  double y = kAxisPx;
  for (const TimelineThread& thread : layout.threads) {
    tops.push_back(y);
    y += kThreadHeaderPx + kLanePx * thread.depths + kThreadGapPx;
  }
  height = y;
  return tops;
}

void write_time_axis(const TimelineLayout& layout, double height, std::string& out) {
  const double range = static_cast<double>(layout.t1_ns - layout.t0_ns);
  const double step = std::max(1.0, nice_step(range / 8.0));
  const TimeScale scale(layout.t0_ns, layout.t1_ns, kTimelineWidthPx);
  out += "<g class=\"axis\">";
  for (double t = std::ceil(static_cast<double>(layout.t0_ns) / step) * step;
       t <= static_cast<double>(layout.t1_ns); t += step) {
    const double x = kPadPx + scale.x(saturated_u64(t));
    append(out, "<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>", x, kAxisPx - 6, height);
    // Labels at the ends are anchored inwards so that they are not cut off.
    const double offset = x - kPadPx;
    const char* anchor = offset < 24.0 ? "start" : offset > kTimelineWidthPx - 24.0 ? "end" : "middle";
    append(out, "<text x=\"{:.1f}\" y=\"14\" text-anchor=\"{}\">{}</text>", x, anchor,
           format_duration(saturated_u64(t)));
  }
  out += "</g>";
}

void write_box_title(const Profile& profile, const TimelineBox& box, std::string& out) {
  out += "<title>";
  if (box.spans == 1) {
    append_escaped(out, profile.str(box.name));
    append(out, "\n{} at {} (depth {})", format_duration(box.busy_ns), format_duration(box.start_ns),
           box.depth);
    // The program's arguments of the span (ProfileGuard::arg): an input's shape, a batch size.
    const auto by_span = [](const SpanArg& a, std::uint32_t span) { return a.span < span; };
    for (auto a = std::lower_bound(profile.span_args.begin(), profile.span_args.end(), box.span, by_span);
         a != profile.span_args.end() && a->span == box.span; ++a) {
      out += '\n';
      append_escaped(out, a->key);
      out += ": ";
      switch (a->type) {
        case SpanArg::Type::Int: append(out, "{}", a->int_value); break;
        case SpanArg::Type::Real: append(out, "{}", a->real_value); break;
        case SpanArg::Type::String: append_escaped(out, a->string_value); break;
      }
    }
  } else {
    append(out, "{} spans merged, {} ", format_count(box.spans), box.mixed ? "mostly" : "all");
    append_escaped(out, profile.str(box.name));
    append(out, "\n{} busy from {} to {} (depth {})", format_duration(box.busy_ns),
           format_duration(box.start_ns), format_duration(box.end_ns), box.depth);
  }
  out += "</title>";
}

void write_box_label(const Profile& profile, const TimelineBox& box, double x, double width, double y,
                     std::string& out) {
  if (width < kLabelMinWidthPx) return;
  const auto chars = static_cast<std::size_t>((width - 6.0) / kLabelCharPx);
  std::string label = profile.str(box.name);
  if (box.spans > 1) {
    label = box.mixed ? fmt::format("{} spans", format_count(box.spans))
                      : fmt::format("{} × {}", format_count(box.spans), label);
  }
  const std::string shown = truncate_utf8(label, chars);
  if (shown.empty()) return;
  append(out, "<text class=\"bl\" x=\"{:.1f}\" y=\"{:.0f}\">", x + 3.0, y + 10.5);
  append_escaped(out, shown);
  out += "</text>";
}

void write_box(const Profile& profile, const TimelineLayout& layout, const TimelineBox& box, double row_top,
               std::string& out) {
  const double x = kPadPx + box.x0;
  const double min_width = layout.merged ? kMergedMinWidthPx : kSpanMinWidthPx;
  // Wide boxes leave a hairline gap, so that back-to-back spans of one name read as several.
  const double span_px = box.x1 - box.x0;
  const double width = span_px >= kGapMinWidthPx ? span_px - kGapPx : std::max(span_px, min_width);
  const double y = row_top + kThreadHeaderPx + kLanePx * (box.depth - 1);
  append(out, "<rect class=\"{}\" x=\"{:.1f}\" y=\"{:.0f}\" width=\"{:.1f}\" height=\"{:.0f}\" fill=\"{}\"",
         box.spans > 1 ? "b m" : "b", x, y, width, kLaneBoxPx, name_colour(profile.str(box.name)));
  // Merged spans that leave gaps between them are drawn paler, in proportion.
  const double busy = static_cast<double>(box.busy_ns) /
                      static_cast<double>(std::max<std::uint64_t>(box.end_ns - box.start_ns, 1));
  if (box.spans > 1 && busy < 0.9) append(out, " fill-opacity=\"{:.2f}\"", 0.3 + 0.7 * busy);
  out += '>';
  write_box_title(profile, box, out);
  out += "</rect>";
  write_box_label(profile, box, x, width, y, out);
}

void write_thread_frame(const Profile& profile, const TimelineThread& thread, double top, std::string& out) {
  append(out, "<text class=\"th\" x=\"{}\" y=\"{:.0f}\">", kPadPx, top + 14.0);
  append_escaped(out, thread_label(profile, thread.thread));
  append(out, "<tspan class=\"tc\"> · {} spans</tspan></text>", format_count(thread.spans));
  for (std::uint32_t d = 0; d < thread.depths; ++d) {
    append(out, "<rect class=\"lane\" x=\"{}\" y=\"{:.0f}\" width=\"{}\" height=\"{:.0f}\"/>", kPadPx,
           top + kThreadHeaderPx + kLanePx * d, kTimelineWidthPx, kLaneBoxPx);
  }
}

}  // namespace

TimelineLayout layout_timeline(const Profile& profile) {
  TimelineLayout layout;
  if (profile.spans.empty()) return layout;
  layout.t0_ns = std::numeric_limits<std::uint64_t>::max();
  for (const Span& span : profile.spans) {
    layout.t0_ns = std::min(layout.t0_ns, span.start_ns);
    layout.t1_ns = std::max(layout.t1_ns, span_end(span));
  }
  if (layout.t1_ns <= layout.t0_ns) layout.t1_ns = layout.t0_ns + 1;
  const std::vector<Lane> lanes = bucket_spans(profile, layout);
  const TimeScale scale(layout.t0_ns, layout.t1_ns, kTimelineWidthPx);
  layout.merged = profile.spans.size() - layout.spans_too_deep > kTimelineSpanLimit;
  layout_boxes(profile, lanes, scale, layout);
  for (const TimelineThread& thread : layout.threads) layout.spans_drawn += thread.spans;
  return layout;
}

void write_timeline_svg(const Profile& profile, const TimelineLayout& layout, std::string& out) {
  double height = 0.0;
  const std::vector<double> tops = row_tops(layout, height);
  const double width = kTimelineWidthPx + 2 * kPadPx;
  append(out,
         "<svg class=\"tl\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
         "role=\"img\" aria-label=\"Timeline of scopes per thread\" data-boxes=\"{2}\" "
         "data-merged=\"{3}\">",
         width, height, layout.boxes.size(), layout.merged ? 1 : 0);
  write_time_axis(layout, height, out);
  for (std::size_t row = 0; row < layout.threads.size(); ++row) {
    write_thread_frame(profile, layout.threads[row], tops[row], out);
  }
  for (const TimelineBox& box : layout.boxes) write_box(profile, layout, box, tops[box.row], out);
  out += "</svg>";
}

// ---- memory chart -------------------------------------------------------------------

namespace {

constexpr double kChartWidthPx = 1100.0;
constexpr double kChartHeightPx = 240.0;
constexpr double kChartLeftPx = 84.0;
constexpr double kChartRightPx = 24.0;
constexpr double kChartTopPx = 22.0;
constexpr double kChartBottomPx = 48.0;

struct MemoryRange {
  std::int64_t low = 0;   // lowest running sum (never above 0)
  std::int64_t high = 0;  // highest running sum (the peak)
  std::uint64_t peak_time_ns = 0;
  std::uint64_t end_ns = 1;  // right edge of the time axis
};

// Events in time order (the model keeps them sorted; a hand-built profile may not).
std::vector<const MemoryEvent*> events_by_time(const Profile& profile) {
  std::vector<const MemoryEvent*> events;
  events.reserve(profile.memory_events.size());
  for (const MemoryEvent& e : profile.memory_events) events.push_back(&e);
  const auto by_time = [](const MemoryEvent* a, const MemoryEvent* b) { return a->time_ns < b->time_ns; };
  if (!std::is_sorted(events.begin(), events.end(), by_time)) {
    std::stable_sort(events.begin(), events.end(), by_time);
  }
  return events;
}

MemoryRange memory_range(const Profile& profile, const std::vector<const MemoryEvent*>& events) {
  MemoryRange range;
  std::int64_t level = 0;
  for (const MemoryEvent* e : events) {
    level += e->delta_bytes;
    range.low = std::min(range.low, level);
    if (level > range.high) {
      range.high = level;
      range.peak_time_ns = e->time_ns;
    }
  }
  range.end_ns = std::max({profile.meta.duration_ns, events.back()->time_ns, std::uint64_t{1}});
  return range;
}

// Tick step in bytes: a round number (or fraction: 0.5 MiB) of the binary unit of the range,
// so that ticks read "1.00 MiB", "2.00 MiB" rather than "977 KiB", "1.91 MiB".
double byte_step(double range) {
  double unit = 1.0;
  while (unit * 1024.0 <= range) unit *= 1024.0;
  return std::max(nice_step(range / 5.0 / unit) * unit, 1.0);
}

class ChartScale {
 public:
  ChartScale(double low, double high, std::uint64_t end_ns)
      : low_(low), high_(high > low ? high : low + 1.0), end_ns_(static_cast<double>(end_ns)) {}
  [[nodiscard]] double x(std::uint64_t t) const {
    return kChartLeftPx + kChartWidthPx * std::min(static_cast<double>(t) / end_ns_, 1.0);
  }
  [[nodiscard]] double y(double bytes) const {
    return kChartTopPx + kChartHeightPx * (1.0 - (bytes - low_) / (high_ - low_));
  }

 private:
  double low_;
  double high_;
  double end_ns_;
};

// The step line, folding the events of each pixel column into one vertical stroke.
std::string step_path(const std::vector<const MemoryEvent*>& events, const ChartScale& scale,
                      std::uint64_t end_ns) {
  std::string path = fmt::format("M{:.1f},{:.1f}", scale.x(0), scale.y(0.0));
  std::int64_t level = 0;
  std::size_t i = 0;
  while (i < events.size()) {
    const double x = scale.x(events[i]->time_ns);
    const auto column = static_cast<long long>(std::floor(x));
    std::int64_t low = std::numeric_limits<std::int64_t>::max();
    std::int64_t high = std::numeric_limits<std::int64_t>::min();
    for (; i < events.size() && static_cast<long long>(std::floor(scale.x(events[i]->time_ns))) == column;
         ++i) {
      level += events[i]->delta_bytes;
      low = std::min(low, level);
      high = std::max(high, level);
    }
    append(path, "H{:.1f}", x);
    if (low != high) {
      append(path, "V{:.1f}V{:.1f}", scale.y(static_cast<double>(low)), scale.y(static_cast<double>(high)));
    }
    append(path, "V{:.1f}", scale.y(static_cast<double>(level)));
  }
  append(path, "H{:.1f}", scale.x(end_ns));
  return path;
}

void write_memory_axes(std::uint64_t end_ns, double low, double high, double step, const ChartScale& scale,
                       std::string& out) {
  out += "<g class=\"axis\">";
  for (double v = low; v <= high + step / 2; v += step) {
    const double y = scale.y(v);
    append(out, "<line x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\"/>", kChartLeftPx, y,
           kChartLeftPx + kChartWidthPx, y);
    append(out, "<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kChartLeftPx - 6, y + 3.5,
           format_bytes(saturated_i64(v)));
  }
  const double tstep = std::max(1.0, nice_step(static_cast<double>(end_ns) / 8.0));
  const double bottom = kChartTopPx + kChartHeightPx;
  for (double t = 0; t <= static_cast<double>(end_ns); t += tstep) {
    const double x = scale.x(saturated_u64(t));
    append(out, "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>", x, bottom, bottom + 5);
    append(out, "<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>", x, bottom + 17,
           format_duration(saturated_u64(t)));
  }
  out += "</g>";
  append(out, "<line class=\"base\" x1=\"{0:.0f}\" y1=\"{1:.1f}\" x2=\"{2:.0f}\" y2=\"{1:.1f}\"/>",
         kChartLeftPx, scale.y(0.0), kChartLeftPx + kChartWidthPx);
  append(out,
         "<text class=\"at\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">time since the session "
         "start</text>",
         kChartLeftPx + kChartWidthPx / 2, bottom + 38);
  append(out,
         "<text class=\"at\" transform=\"translate(14 {:.0f}) rotate(-90)\" text-anchor=\"middle\">"
         "memory in use (bytes)</text>",
         kChartTopPx + kChartHeightPx / 2);
}

// A dashed line at the peak and a dot at its time, labelled "<what> <bytes> at <time>".
void write_peak_marker(std::string_view what, std::int64_t bytes, std::uint64_t time_ns, const ChartScale& scale,
                       std::string& out) {
  const double x = scale.x(time_ns);
  const double y = scale.y(static_cast<double>(bytes));
  const bool right_half = x > kChartLeftPx + kChartWidthPx * 0.7;
  append(out, "<line class=\"pk\" x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\"/>", kChartLeftPx, y,
         kChartLeftPx + kChartWidthPx, y);
  append(out,
         "<circle class=\"pk\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\"><title>{} {} at {}</title></circle>", x, y,
         what, format_bytes(bytes), format_duration(time_ns));
  append(out, "<text class=\"pkl\" x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"{}\">{} {} at {}</text>",
         right_half ? x - 8 : x + 8, std::max(y - 8, kChartTopPx - 6), right_half ? "end" : "start", what,
         format_bytes(bytes), format_duration(time_ns));
}

// The opening <svg> of a memory chart and its axes.
void open_memory_svg(std::string_view label, std::uint64_t end_ns, double low, double high, double step,
                     const ChartScale& scale, std::string& out) {
  append(
      out,
      "<svg class=\"mem\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
      "aria-label=\"{2}\">",
      kChartLeftPx + kChartWidthPx + kChartRightPx, kChartTopPx + kChartHeightPx + kChartBottomPx, label);
  write_memory_axes(end_ns, low, high, step, scale, out);
}

}  // namespace

void write_memory_chart(const Profile& profile, std::string& out) {
  if (profile.memory_events.empty()) {
    out += profile.memory_counters.empty()
               ? "<p class=\"note info\" id=\"no-memory\">No memory counters were recorded: report "
                 "allocations with <code>record_alloc</code>/<code>record_free</code> to see memory "
                 "over time.</p>"
               : "<p class=\"note\" id=\"no-memory\">Memory counters were recorded but no memory "
                 "events were kept, so there is no timeline (see Completeness).</p>";
    return;
  }
  const std::vector<const MemoryEvent*> events = events_by_time(profile);
  const MemoryRange range = memory_range(profile, events);
  const double step = byte_step(static_cast<double>(range.high - range.low));
  const double low = std::floor(static_cast<double>(range.low) / step) * step;
  const double high = std::max(std::ceil(static_cast<double>(range.high) / step) * step, step);
  const ChartScale scale(low, high, range.end_ns);
  const std::string line = step_path(events, scale, range.end_ns);
  open_memory_svg("Memory in use over time", range.end_ns, low, high, step, scale, out);
  append(out, "<path class=\"area\" d=\"{}V{:.1f}H{:.1f}Z\"/>", line, scale.y(0.0), scale.x(0));
  append(out, "<path class=\"line\" d=\"{}\"/>", line);
  write_peak_marker("peak", range.high, range.peak_time_ns, scale, out);
  out += "</svg>";
}

// ---- heap chart ---------------------------------------------------------------------

namespace {

// A line through one series of the heap timeline. Samples that fall in one pixel column
// become one vertical stroke (first, lowest, highest, last), so that a long run at a short
// interval draws at most a few commands per column.
std::string sample_path(const std::vector<HeapSample>& samples, std::uint64_t HeapSample::*series,
                        const ChartScale& scale) {
  std::string path;
  std::size_t i = 0;
  while (i < samples.size()) {
    const double x = scale.x(samples[i].time_ns);
    const auto column = static_cast<long long>(std::floor(x));
    const std::uint64_t first = samples[i].*series;
    std::uint64_t low = first;
    std::uint64_t high = first;
    std::uint64_t last = first;
    for (; i < samples.size() && static_cast<long long>(std::floor(scale.x(samples[i].time_ns))) == column; ++i) {
      last = samples[i].*series;
      low = std::min(low, last);
      high = std::max(high, last);
    }
    append(path, "{}{:.1f},{:.1f}", path.empty() ? "M" : "L", x, scale.y(static_cast<double>(first)));
    if (low != high) {
      append(path, "V{:.1f}V{:.1f}V{:.1f}", scale.y(static_cast<double>(low)), scale.y(static_cast<double>(high)),
             scale.y(static_cast<double>(last)));
    }
  }
  return path;
}

struct HeapLine {
  std::uint64_t HeapSample::*series;
  std::string_view label;
  std::string_view css;  // class of the path; the style is in the page's heap CSS
};

constexpr HeapLine kHeapLines[] = {{&HeapSample::heap_bytes, "heap in use", "line"},
                                   {&HeapSample::rss_bytes, "RSS", "rss"},
                                   {&HeapSample::rss_peak_bytes, "RSS peak (VmHWM)", "hwm"}};

void write_heap_legend(std::string& out) {
  double x = kChartLeftPx + 8;
  for (const HeapLine& line : kHeapLines) {
    append(out, "<line class=\"{}\" x1=\"{:.0f}\" y1=\"10\" x2=\"{:.0f}\" y2=\"10\"/>", line.css, x, x + 18);
    append(out, "<text x=\"{:.0f}\" y=\"14\">{}</text>", x + 23, line.label);
    x += 36 + 6.5 * static_cast<double>(line.label.size());
  }
}

}  // namespace

void write_heap_chart(const Profile& profile, std::string& out) {
  const std::vector<HeapSample>& samples = profile.heap_samples;
  if (samples.empty()) {
    out += "<p class=\"note\" id=\"no-heap-timeline\">No memory timeline was sampled: the session ended before "
           "the first sample.</p>";
    return;
  }
  std::uint64_t top = profile.heap.peak_bytes;
  for (const HeapSample& s : samples) top = std::max({top, s.heap_bytes, s.rss_bytes, s.rss_peak_bytes});
  const std::uint64_t end_ns = std::max({profile.meta.duration_ns, samples.back().time_ns, std::uint64_t{1}});
  const double step = byte_step(static_cast<double>(top));
  const double high = std::max(std::ceil(static_cast<double>(top) / step) * step, step);
  const ChartScale scale(0.0, high, end_ns);
  open_memory_svg("Heap in use and RSS over time", end_ns, 0.0, high, step, scale, out);
  const std::string heap = sample_path(samples, &HeapSample::heap_bytes, scale);
  append(out, "<path class=\"area\" d=\"{}V{:.1f}H{:.1f}Z\"/>", heap, scale.y(0.0),
         scale.x(samples.front().time_ns));
  for (const HeapLine& line : kHeapLines) {
    append(out, "<path class=\"{}\" d=\"{}\"><title>{}</title></path>", line.css,
           line.series == &HeapSample::heap_bytes ? heap : sample_path(samples, line.series, scale), line.label);
  }
  write_heap_legend(out);
  if (profile.heap.peak_bytes > 0) {
    write_peak_marker("heap peak", static_cast<std::int64_t>(profile.heap.peak_bytes), profile.heap.peak_time_ns,
                      scale, out);
  }
  out += "</svg>";
}

// ---- flame graph ----------------------------------------------------------------------

void write_flame_graph(const analysis::FlameTree& tree, std::string& out) {
  if (tree.nodes.empty() || tree.nodes[0].total.samples == 0) {
    out += "<p class=\"note\" id=\"no-flame\">No sample to draw.</p>";
    return;
  }
  const double root = static_cast<double>(tree.nodes[0].total.samples);
  // Kept nodes get new, dense indices; a parent always comes before its children, so one
  // pass keeps every node whose parent was kept and that is wide enough.
  std::vector<std::uint32_t> index(tree.nodes.size(), kNone);
  nlohmann::json nodes = nlohmann::json::array();
  std::uint64_t left_out = 0;
  for (std::uint32_t i = 0; i < tree.nodes.size(); ++i) {
    const analysis::FlameNode& n = tree.nodes[i];
    const bool parent_kept = i == 0 || (n.parent < i && index[n.parent] != kNone);
    if (!parent_kept) continue;
    if (i != 0 && static_cast<double>(n.total.samples) < kFlameMinFraction * root) {
      ++left_out;
      continue;
    }
    index[i] = static_cast<std::uint32_t>(nodes.size());
    // Last, the name a box shows: a function's signature as a reader names it (the details
    // line keeps the full signature).
    const bool signature = i != 0 && !n.scope && n.name.find('(') != std::string::npos;
    nodes.push_back({n.name, n.module, i == 0 ? -1 : static_cast<std::int64_t>(index[n.parent]), n.total.samples,
                     n.self.samples, n.total.ns, n.scope ? 1 : 0,
                     signature ? analysis::readable_function(n.name) : n.name});
  }
  // In an attribute, HTML-escaped: the page keeps a single <script> element, and no name can
  // end an element early.
  const std::string data = nodes.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  out += "<div class=\"flame\" id=\"flame\"><div class=\"flame-bar\">"
         "<input type=\"search\" id=\"flame-search\" placeholder=\"Search functions\" aria-label=\"Search functions\">"
         "<button type=\"button\" id=\"flame-reset\">Reset zoom</button>"
         "<span class=\"muted\" id=\"flame-match\"></span></div>"
         "<div class=\"flame-info\" id=\"flame-info\">Hover over a frame for details; click to zoom in.</div>"
         "<div class=\"flame-canvas\" id=\"flame-canvas\" data-nodes=\"";
  append_escaped(out, data);
  out += "\"></div>";
  if (left_out > 0) {
    append(out, "<p class=\"muted\" id=\"flame-left-out\">{} left out: each narrower than {:.2g}% of the samples.</p>",
           format_count(left_out, "frame", "frames"), 100.0 * kFlameMinFraction);
  }
  out += "</div>";
}

// The chart styles, one constant per chart: a page carries the styles of the pictures it shows
// (Picture::style), the page shell (render/html.cpp) only its own.
const std::string_view kTimelineStyle = R"CSS(
.tl{display:block;max-width:100%;height:auto}
.tl text{font:10.5px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#4b5563}
.tl .axis line{stroke:#e6e9ee;stroke-width:1}
.tl .th{font-size:12px;font-weight:600;fill:#1c2330}
.tl .tc{font-weight:400;fill:#6b7280}
.tl .lane{fill:#f7f8fa}
.tl rect.b:hover{stroke:#1c2330;stroke-width:1}
.tl .bl{font-size:10px;fill:#1c2330;pointer-events:none}
)CSS";

namespace {

constexpr char kMemoryRules[] = R"CSS(
.mem{display:block;max-width:100%;height:auto}
.mem text{font:10.5px system-ui,-apple-system,"Segoe UI",Roboto,Arial,sans-serif;fill:#4b5563}
.mem .axis line{stroke:#e6e9ee;stroke-width:1}
.mem .line{fill:none;stroke:var(--accent);stroke-width:1.6}
.mem .area{fill:var(--accent);fill-opacity:.12;stroke:none}
.mem .base{stroke:#9aa3af;stroke-width:1}
.mem .at{font-size:11.5px;fill:#374151;font-weight:600}
.mem line.pk{stroke:#d9480f;stroke-dasharray:4 3;stroke-width:1}
.mem circle.pk{fill:#d9480f;stroke:#fff;stroke-width:1.5}
.mem .pkl{fill:#b13a0a;font-weight:600;font-size:11.5px}
)CSS";

constexpr char kHeapChartLines[] = R"CSS(.mem .rss{fill:none;stroke:#7c3aed;stroke-width:1.4}
.mem .hwm{fill:none;stroke:#7c3aed;stroke-width:1;stroke-dasharray:3 3;opacity:.7}
)CSS";

// Two literals as one, at compile time: the heap chart's style is the memory chart's and its
// own lines, each written once.
template <std::size_t A, std::size_t B>
constexpr std::array<char, A + B - 1> joined(const char (&a)[A], const char (&b)[B]) {
  std::array<char, A + B - 1> out{};
  for (std::size_t i = 0; i + 1 < A; ++i) out[i] = a[i];
  for (std::size_t i = 0; i < B; ++i) out[A - 1 + i] = b[i];
  return out;
}

constexpr auto kHeapRules = joined(kMemoryRules, kHeapChartLines);

}  // namespace

const std::string_view kMemoryChartStyle{kMemoryRules, sizeof kMemoryRules - 1};

const std::string_view kHeapChartStyle{kHeapRules.data(), kHeapRules.size() - 1};

const std::string_view kKernelBarsStyle = R"CSS(
.kbars{margin:4px 0 14px}
.kb{display:flex;align-items:center;gap:10px;margin:3px 0;font-size:12.5px;font-variant-numeric:tabular-nums}
.kb .kn{width:340px;flex:none;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;
font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
.kb .kt{flex:1;height:12px;background:var(--accent-soft);border-radius:3px;overflow:hidden}
.kb .kt i{display:block;height:100%;background:var(--accent)}
.kb .kv{width:170px;flex:none;text-align:right}
)CSS";

const std::string_view kFlameStyle = R"CSS(
.flame-bar{display:flex;gap:10px;align-items:center;margin:6px 0}
.flame-info{font-size:12.5px;color:var(--muted);min-height:18px;margin:4px 0;white-space:nowrap;overflow:hidden;text-overflow:ellipsis}
.flame-canvas{position:relative;width:100%;overflow:hidden;border:1px solid var(--line);border-radius:6px;background:#fff}
.flame-canvas .fr{position:absolute;height:17px;box-sizing:border-box;border-right:1px solid #fff;border-bottom:1px solid #fff;
font:11px/17px ui-monospace,SFMono-Regular,Menlo,monospace;padding:0 3px;overflow:hidden;white-space:nowrap;cursor:pointer;color:#1f2937}
.flame-canvas .fr:hover{filter:brightness(.92)}
.flame-canvas .fr.above{opacity:.55}
.flame-canvas .fr.match{background:#e879f9 !important}
)CSS";

const std::string_view kFlameScript = R"JS(
(function () {
  'use strict';
  var doc = document, box = doc.getElementById('flame-canvas');
  if (!box) return;
  var nodes = JSON.parse(box.getAttribute('data-nodes'));  // [name, module, parent, samples, self, ns, scope, label]
  var kids = nodes.map(function () { return []; });
  nodes.forEach(function (n, i) { if (i > 0) kids[n[2]].push(i); });
  var info = doc.getElementById('flame-info');
  var search = doc.getElementById('flame-search'), match = doc.getElementById('flame-match');
  var all = nodes[0][3], zoom = 0, term = '', rowH = 18;
  function label(i) { var n = nodes[i]; return (n[6] ? '[scope] ' : '') + n[0] + (n[1] ? ' (' + n[1] + ')' : ''); }
  function pct(v) { return (100 * v / all).toFixed(1) + '%'; }
  function ms(ns) { return ns >= 1e9 ? (ns / 1e9).toFixed(2) + ' s' : (ns / 1e6).toFixed(2) + ' ms'; }
  function details(i) {
    var n = nodes[i];
    return label(i) + ': ' + n[3] + ' samples (' + pct(n[3]) + ', ' + ms(n[5]) + '), ' + n[4] + ' self (' + pct(n[4]) + ')';
  }
  function color(i) {
    var n = nodes[i], h = 0;
    if (i === 0) return '#d1d5db';
    if (n[6]) return 'hsl(210,70%,80%)';
    for (var k = 0; k < n[0].length; k++) h = (h * 31 + n[0].charCodeAt(k)) >>> 0;
    return 'hsl(' + (8 + h % 42) + ',' + (75 + h % 20) + '%,' + (62 + h % 14) + '%)';
  }
  function matches(i) { return term !== '' && nodes[i][0].toLowerCase().indexOf(term) >= 0; }
  function add(frag, i, x, w, depth, above) {
    var el = doc.createElement('div');
    el.className = 'fr' + (above ? ' above' : '') + (matches(i) ? ' match' : '');
    el.style.left = x + 'px';
    el.style.width = Math.max(w, 1) + 'px';
    el.style.top = depth * rowH + 'px';
    el.style.background = color(i);
    el.setAttribute('data-i', i);
    el.title = details(i);
    if (w > 28) el.textContent = (nodes[i][6] ? '[scope] ' : '') + nodes[i][7];
    frag.appendChild(el);
  }
  function draw() {
    var W = box.clientWidth || 1000, frag = doc.createDocumentFragment(), path = [], deepest = 0;
    for (var a = zoom; a > 0; a = nodes[a][2]) path.unshift(nodes[a][2]);
    path.forEach(function (a, d) { add(frag, a, 0, W, d, true); });
    var todo = [[zoom, 0, W, path.length]];
    while (todo.length) {
      var t = todo.pop(), i = t[0], x = t[1], w = t[2], d = t[3];
      add(frag, i, x, w, d, false);
      deepest = Math.max(deepest, d);
      var cx = x;
      kids[i].forEach(function (c) {
        var cw = w * nodes[c][3] / nodes[i][3];
        if (cw >= 0.5) todo.push([c, cx, cw, d + 1]);
        cx += cw;
      });
    }
    box.textContent = '';
    box.appendChild(frag);
    box.style.height = (deepest + 1) * rowH + 'px';
    if (term === '') { match.textContent = ''; return; }
    // Samples under a match, each counted once however many matching frames its stack has.
    var under = nodes.map(function () { return false; }), sum = 0;
    nodes.forEach(function (n, i) {
      var inside = i > 0 && under[n[2]];
      if (matches(i) && !inside) sum += n[3];
      under[i] = inside || matches(i);
    });
    match.textContent = 'Matched: ' + pct(sum) + ' of the samples';
  }
  box.addEventListener('click', function (e) {
    var i = e.target.getAttribute && e.target.getAttribute('data-i');
    if (i !== null && i !== undefined) { zoom = Number(i); draw(); }
  });
  box.addEventListener('mouseover', function (e) {
    var i = e.target.getAttribute && e.target.getAttribute('data-i');
    if (i !== null && i !== undefined) info.textContent = details(Number(i));
  });
  doc.getElementById('flame-reset').addEventListener('click', function () { zoom = 0; draw(); });
  search.addEventListener('input', function () { term = search.value.trim().toLowerCase(); draw(); });
  window.addEventListener('resize', draw);
  draw();
})();
)JS";

// ---- metric charts --------------------------------------------------------------------

namespace {

// Value ticks: about five round steps from `low` to `high`.
void write_value_axis(double low, double high, const std::function<double(double)>& y,
                      const std::function<std::string(double)>& label, std::string& out) {
  const double step = nice_step((high - low) / 5.0);
  out += "<g class=\"axis\">";
  for (double v = std::ceil(low / step) * step; v <= high + step / 2; v += step) {
    append(out, "<line x1=\"{:.0f}\" y1=\"{:.1f}\" x2=\"{:.0f}\" y2=\"{:.1f}\"/>", kChartLeftPx, y(v),
           kChartLeftPx + kChartWidthPx, y(v));
    append(out, "<text x=\"{:.0f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kChartLeftPx - 6, y(v) + 3.5,
           escape(label(v)));
  }
  out += "</g>";
}

void open_metric_svg(const std::string& label, std::string& out) {
  append(out,
         "<svg class=\"mem metric\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" "
         "role=\"img\" aria-label=\"{2}\">",
         kChartLeftPx + kChartWidthPx + kChartRightPx, kChartTopPx + kChartHeightPx + kChartBottomPx, escape(label));
}

void write_bottom_label(const std::string& text, std::string& out) {
  append(out, "<text class=\"at\" x=\"{:.0f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>",
         kChartLeftPx + kChartWidthPx / 2, kChartTopPx + kChartHeightPx + 38, escape(text));
}

// Counters and gauges: the value as a step line over time, each pixel column folded to one stroke.
void write_metric_series(const Profile& profile, const MetricSeries& m, std::string& out) {
  double low = m.points.front().value, high = low;
  std::uint64_t end_ns = std::max<std::uint64_t>(profile.meta.duration_ns, 1);
  for (const MetricPoint& p : m.points) {
    low = std::min(low, p.value);
    high = std::max(high, p.value);
    end_ns = std::max(end_ns, p.time_ns);
  }
  if (m.kind == MetricKind::Counter) low = std::min(low, 0.0);
  if (high == low) high = low + std::max(1.0, std::fabs(low) * 0.1);
  const ChartScale scale(low, high, end_ns);
  open_metric_svg(fmt::format("{} over time", profile.str(m.name)), out);
  write_value_axis(low, high, [&](double v) { return scale.y(v); },
                   [&](double v) { return report::format_metric_value(v, m.unit); }, out);
  const double bottom = kChartTopPx + kChartHeightPx;
  const double tstep = std::max(1.0, nice_step(static_cast<double>(end_ns) / 8.0));
  out += "<g class=\"axis\">";
  for (double t = 0; t <= static_cast<double>(end_ns); t += tstep) {
    const double x = scale.x(saturated_u64(t));
    append(out, "<line x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>", x, bottom, bottom + 5);
    append(out, "<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>", x, bottom + 17,
           format_duration(saturated_u64(t)));
  }
  out += "</g>";
  std::string path = fmt::format("M{:.1f},{:.1f}", scale.x(m.points.front().time_ns), scale.y(m.points.front().value));
  std::size_t i = 0;
  while (i < m.points.size()) {
    const double x = scale.x(m.points[i].time_ns);
    const auto column = static_cast<long long>(std::floor(x));
    double cmin = m.points[i].value, cmax = cmin, last = cmin;
    for (; i < m.points.size() && static_cast<long long>(std::floor(scale.x(m.points[i].time_ns))) == column; ++i) {
      cmin = std::min(cmin, m.points[i].value);
      cmax = std::max(cmax, m.points[i].value);
      last = m.points[i].value;
    }
    append(path, "H{:.1f}", x);
    if (cmin != cmax) append(path, "V{:.1f}V{:.1f}", scale.y(cmin), scale.y(cmax));
    append(path, "V{:.1f}", scale.y(last));
  }
  append(out, "<path class=\"line\" d=\"{}\"/>", path);
  write_bottom_label("time since the session start", out);
  out += "</svg>";
}

// Histograms: the distribution of the points kept, 40 bins from min to max, with p50 and p99 marked.
void write_metric_distribution(const Profile& profile, const MetricSeries& m, std::string& out) {
  double low = m.points.front().value, high = low;
  for (const MetricPoint& p : m.points) {
    low = std::min(low, p.value);
    high = std::max(high, p.value);
  }
  constexpr int kBins = 40;
  const double width = high > low ? (high - low) / kBins : 1.0;
  std::vector<std::uint64_t> bins(kBins, 0);
  for (const MetricPoint& p : m.points)
    ++bins[static_cast<std::size_t>(std::clamp(static_cast<int>((p.value - low) / width), 0, kBins - 1))];
  const double top = static_cast<double>(*std::max_element(bins.begin(), bins.end()));
  const auto y = [&](double count) { return kChartTopPx + kChartHeightPx * (1.0 - count / top); };
  const auto x = [&](double v) {
    return kChartLeftPx + (high > low ? kChartWidthPx * (v - low) / (high - low) : kChartWidthPx / 2);
  };
  open_metric_svg(fmt::format("distribution of {}", profile.str(m.name)), out);
  write_value_axis(0.0, top, y, [](double v) { return format_count(static_cast<std::uint64_t>(std::llround(v))); }, out);
  const double bw = kChartWidthPx / kBins;
  for (int b = 0; b < kBins; ++b) {
    const auto n = bins[static_cast<std::size_t>(b)];
    if (n == 0) continue;
    const double lo = low + b * width;
    append(out,
           "<rect class=\"area\" style=\"fill-opacity:.7\" x=\"{:.1f}\" y=\"{:.1f}\" width=\"{:.1f}\" height=\"{:.1f}\"><title>{} to {}: {}"
           "</title></rect>",
           kChartLeftPx + b * bw + 0.5, y(static_cast<double>(n)), bw - 1.0, kChartTopPx + kChartHeightPx - y(static_cast<double>(n)),
           escape(report::format_metric_value(lo, m.unit)), escape(report::format_metric_value(lo + width, m.unit)), format_count(n));
  }
  for (const auto& [what, v] : {std::pair<const char*, double>{"p50", m.summary.p50}, {"p99", m.summary.p99}}) {
    append(out, "<line class=\"pk\" x1=\"{0:.1f}\" y1=\"{1:.0f}\" x2=\"{0:.1f}\" y2=\"{2:.0f}\"/>", x(v), kChartTopPx,
           kChartTopPx + kChartHeightPx);
    append(out, "<text class=\"pkl\" x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"start\">{} {}</text>", x(v) + 4,
           kChartTopPx - 6, what, escape(report::format_metric_value(v, m.unit)));
  }
  const double bottom = kChartTopPx + kChartHeightPx;
  out += "<g class=\"axis\">";
  for (const double v : {low, (low + high) / 2, high})
    append(out, "<text x=\"{:.1f}\" y=\"{:.0f}\" text-anchor=\"middle\">{}</text>", x(v), bottom + 17,
           escape(report::format_metric_value(v, m.unit)));
  out += "</g>";
  write_bottom_label(fmt::format("value ({} observations kept)", format_count(m.points.size())), out);
  out += "</svg>";
}

}  // namespace

void write_metric_chart(const Profile& profile, const MetricSeries& metric, std::string& out) {
  if (metric.points.empty()) {
    out += "<p class=\"note\">No point of this metric was kept (statistics-only session or buffer cap): its "
           "statistics are in the table above.</p>";
    return;
  }
  if (metric.kind == MetricKind::Histogram)
    write_metric_distribution(profile, metric, out);
  else
    write_metric_series(profile, metric, out);
}

}  // namespace nnprof::report::html
