#include "io/metrics_png.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "report/format.hpp"
#include "report/metric_values.hpp"
#include "io/metrics_json.hpp"
#include "io/output_file.hpp"
#include "report/utf8.hpp"
#include "nnprof/error.hpp"

#if defined(NNPROF_SANITIZE_ADDRESS)
// fontconfig, which cairo's text drawing loads, keeps its configuration for the life of the
// process by design, which LeakSanitizer reports at exit from every sanitized program that drew
// a chart (the CLI, the tests). LeakSanitizer's documented hook for suppressions, in sanitizer
// builds only. Exported: the sanitizer runtime looks it up dynamically, and nnprof is built
// with hidden visibility.
extern "C" __attribute__((visibility("default"), used)) const char* __lsan_default_suppressions() {
  return "leak:libfontconfig.so\n";
}
#endif

namespace nnprof::io {

using report::capped_name;
using report::format_count;
using report::format_duration;
using report::plain_text;
using report::utf8_sequence_length;

namespace {

// Margins of a panel's plot, in pixels; the left one grows to fit the value-axis labels.
constexpr double kOuterPad = 12.0, kLabelGap = 6.0, kMinLeft = 48.0, kRight = 20.0, kTop = 46.0, kBottom = 40.0;

struct Font {
  double size;
  bool bold;
};
constexpr Font kTitleFont{13.0, true};
constexpr Font kStatsFont{11.5, false};  // a title's second line
constexpr Font kLabelFont{10.5, false};
constexpr Font kNoteFont{12.0, false};

struct SurfaceDeleter {
  void operator()(cairo_surface_t* s) const noexcept { cairo_surface_destroy(s); }
};
struct ContextDeleter {
  void operator()(cairo_t* c) const noexcept { cairo_destroy(c); }
};

// One panel's plotting area in pixels.
struct Area {
  double x0, y0, x1, y1;
  [[nodiscard]] double w() const { return x1 - x0; }
  [[nodiscard]] double h() const { return y1 - y0; }
};

void select_font(cairo_t* cr, Font font) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         font.bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, font.size);
}

// How far `s` advances the pen: the width the text takes.
double text_width(cairo_t* cr, const std::string& s, Font font) {
  select_font(cr, font);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, s.c_str(), &ext);
  return ext.x_advance;
}

// `align`: 0 puts the text's start at x, 1 its end, 0.5 its middle.
void text(cairo_t* cr, double x, double y, const std::string& s, Font font, double align = 0.0) {
  const double width = text_width(cr, s, font);
  cairo_move_to(cr, x - align * width, y);
  cairo_show_text(cr, s.c_str());
}

// `s` when it fits in `limit` pixels, otherwise its longest prefix (whole code points) that
// fits with "…" after it.
std::string fit_text(cairo_t* cr, const std::string& s, Font font, double limit) {
  if (text_width(cr, s, font) <= limit) return s;
  std::vector<std::size_t> ends;  // byte offsets after each code point
  for (std::size_t at = 0; at < s.size();) {
    at += std::max<std::size_t>(1, utf8_sequence_length(std::string_view(s).substr(at)));
    ends.push_back(std::min(at, s.size()));
  }
  std::size_t lo = 0, hi = ends.size();  // the answer keeps lo code points; hi does not fit
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    if (text_width(cr, s.substr(0, ends[mid - 1]) + "…", font) <= limit) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return (lo == 0 ? std::string() : s.substr(0, ends[lo - 1])) + "…";
}

void frame(cairo_t* cr, const Area& a) {
  cairo_set_source_rgb(cr, 0.6, 0.63, 0.68);
  cairo_set_line_width(cr, 1.0);
  cairo_rectangle(cr, a.x0 + 0.5, a.y0 + 0.5, a.w(), a.h());
  cairo_stroke(cr);
}

// Axis labels: value range on the left, the horizontal range under the plot.
void labels(cairo_t* cr, const Area& a, const MetricPngPanelText& t) {
  cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
  text(cr, a.x0 - kLabelGap, a.y0 + 10, t.y_high, kLabelFont, 1.0);
  text(cr, a.x0 - kLabelGap, a.y1, t.y_low, kLabelFont, 1.0);
  text(cr, a.x0, a.y1 + 15, t.x_left, kLabelFont);
  text(cr, a.x1, a.y1 + 15, t.x_right, kLabelFont, 1.0);
}

// The value range a counter or gauge is drawn over: its points', from 0 for a counter, and
// never empty.
struct Range {
  double lo, hi;
};
Range series_range(const MetricSeries& m) {
  double lo = m.points.front().value, hi = lo;
  for (const MetricPoint& p : m.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  if (m.kind == MetricKind::Counter) lo = std::min(lo, 0.0);
  if (hi == lo) {
    hi += std::max(1.0, std::fabs(hi) * 0.05);
    lo -= hi == lo ? 1.0 : 0.0;
  }
  return {lo, hi};
}

// The time a series is drawn over: the session, or longer when a point came after it ended.
std::uint64_t series_end(const MetricSeries& m, std::uint64_t session_ns) {
  std::uint64_t end = session_ns;
  for (const MetricPoint& p : m.points) end = std::max(end, p.time_ns);
  return std::max<std::uint64_t>(end, 1);
}

// A histogram's points in 40 bins between their min and max.
struct Distribution {
  double lo, hi, width;
  std::vector<std::uint64_t> bins;
  std::uint64_t top;
};
constexpr int kBins = 40;
Distribution distribution(const MetricSeries& m) {
  Distribution d{m.points.front().value, m.points.front().value, 1.0, std::vector<std::uint64_t>(kBins, 0), 0};
  for (const MetricPoint& p : m.points) {
    d.lo = std::min(d.lo, p.value);
    d.hi = std::max(d.hi, p.value);
  }
  d.width = d.hi > d.lo ? (d.hi - d.lo) / kBins : 1.0;
  for (const MetricPoint& p : m.points)
    ++d.bins[static_cast<std::size_t>(std::clamp(static_cast<int>((p.value - d.lo) / d.width), 0, kBins - 1))];
  d.top = *std::max_element(d.bins.begin(), d.bins.end());
  return d;
}

// Counters and gauges: the value over time, each pixel column folded to its min and max.
void draw_series(cairo_t* cr, const MetricSeries& m, const Area& a, std::uint64_t end_ns) {
  const auto range = series_range(m);
  // Named, not a structured binding: clang 14 (the fuzz build) cannot capture those in a lambda.
  const double lo = range.lo;
  const double hi = range.hi;
  const double end = static_cast<double>(end_ns);
  const auto x = [&](std::uint64_t t) { return a.x0 + a.w() * std::min(static_cast<double>(t) / end, 1.0); };
  const auto y = [&](double v) { return a.y1 - a.h() * (v - lo) / (hi - lo); };
  cairo_set_source_rgb(cr, 0.15, 0.39, 0.92);
  cairo_set_line_width(cr, 1.6);
  cairo_move_to(cr, x(m.points.front().time_ns), y(m.points.front().value));
  std::size_t i = 0;
  while (i < m.points.size()) {
    const auto column = static_cast<long long>(std::floor(x(m.points[i].time_ns)));
    double cmin = m.points[i].value, cmax = cmin, clast = cmin;
    const double cx = x(m.points[i].time_ns);
    for (; i < m.points.size() && static_cast<long long>(std::floor(x(m.points[i].time_ns))) == column; ++i) {
      cmin = std::min(cmin, m.points[i].value);
      cmax = std::max(cmax, m.points[i].value);
      clast = m.points[i].value;
    }
    cairo_line_to(cr, cx, y(cmin));
    cairo_line_to(cr, cx, y(cmax));
    cairo_line_to(cr, cx, y(clast));
  }
  cairo_stroke(cr);
}

// Histograms: the distribution of the points kept, with the median and p99 marked.
void draw_distribution(cairo_t* cr, const MetricSeries& m, const Area& a) {
  const Distribution d = distribution(m);
  const double bw = a.w() / kBins;
  cairo_set_source_rgb(cr, 0.15, 0.39, 0.92);
  for (int b = 0; b < kBins; ++b) {
    const std::uint64_t n = d.bins[static_cast<std::size_t>(b)];
    if (n == 0) continue;
    const double h = a.h() * static_cast<double>(n) / static_cast<double>(d.top);
    cairo_rectangle(cr, a.x0 + b * bw + 1, a.y1 - h, bw - 2, h);
  }
  cairo_fill(cr);
  const auto xv = [&](double v) { return a.x0 + (d.hi > d.lo ? a.w() * (v - d.lo) / (d.hi - d.lo) : a.w() / 2); };
  cairo_set_source_rgb(cr, 0.85, 0.28, 0.06);
  cairo_set_line_width(cr, 1.2);
  for (const double v : {m.summary.p50, m.summary.p99}) {
    cairo_move_to(cr, xv(v), a.y0);
    cairo_line_to(cr, xv(v), a.y1);
  }
  cairo_stroke(cr);
}

// A title's two parts: the metric's name and kind, and its summary.
std::pair<std::string, std::string> title_parts(const Profile& profile, const MetricSeries& m) {
  const MetricSummary& s = m.summary;
  const auto v = [&](double x) { return report::format_metric_value(x, m.unit); };
  std::string stats = fmt::format("n={}", format_count(s.count));
  if (m.kind == MetricKind::Counter) stats += ", total " + v(s.last);
  if (m.kind == MetricKind::Gauge) stats += ", last " + v(s.last);
  stats += fmt::format(", mean {}, min {}, max {}", v(s.mean), v(s.min), v(s.max));
  if (s.percentile_points > 0 && m.kind != MetricKind::Counter)
    stats += fmt::format(", p50 {}, p99 {}", v(s.p50), v(s.p99));
  // Names reach the picture as plain text: control characters shown, not drawn as boxes,
  // and invalid UTF-8 (which stops cairo drawing) replaced.
  return {fmt::format("{} ({})", plain_text(capped_name(profile.str(m.name))), model::metric_kind_name(m.kind)), stats};
}

// The panel's text: its title fitted to `limit` pixels, its axis labels.
MetricPngPanelText panel_text(cairo_t* cr, const Profile& profile, const MetricSeries& m, double limit) {
  MetricPngPanelText t;
  const auto [name, stats] = title_parts(profile, m);
  const std::string whole = name + ": " + stats;
  if (text_width(cr, whole, kTitleFont) <= limit) {
    t.title = {whole};
  } else {
    t.title = {fit_text(cr, name, kTitleFont, limit), fit_text(cr, stats, kStatsFont, limit)};
  }
  if (m.points.empty()) return t;
  if (m.kind == MetricKind::Histogram) {
    const Distribution d = distribution(m);
    t.y_low = format_count(0);
    t.y_high = format_count(d.top);
    t.x_left = report::format_axis_value(d.lo, m.unit);
    t.x_right = report::format_axis_value(d.hi, m.unit);
  } else {
    const Range r = series_range(m);
    t.y_low = report::format_axis_value(r.lo, m.unit);
    t.y_high = report::format_axis_value(r.hi, m.unit);
    t.x_left = "0 s";
    t.x_right = format_duration(series_end(m, profile.meta.duration_ns));
  }
  return t;
}

MetricPngLayout layout(cairo_t* cr, const Profile& profile) {
  MetricPngLayout l;
  l.title_limit = kMetricPngWidth - 2 * kOuterPad;
  const std::size_t panels = std::min(profile.metrics.size(), kMetricPngMaxPanels);
  for (std::size_t i = 0; i < panels; ++i) {
    l.panels.push_back(panel_text(cr, profile, profile.metrics[i], l.title_limit));
    const MetricPngPanelText& t = l.panels.back();
    l.widest_y_label = std::max({l.widest_y_label, text_width(cr, t.y_low, kLabelFont), text_width(cr, t.y_high, kLabelFont)});
    for (std::size_t line = 0; line < t.title.size(); ++line)
      l.widest_title = std::max(l.widest_title, text_width(cr, t.title[line], line == 0 ? kTitleFont : kStatsFont));
  }
  l.left_margin = std::max(kMinLeft, std::ceil(kOuterPad + l.widest_y_label + kLabelGap));
  return l;
}

cairo_status_t write_to_stream(void* closure, const unsigned char* data, unsigned int length) {
  auto* out = static_cast<std::ostream*>(closure);
  out->write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(length));
  return *out ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

}  // namespace

MetricPngLayout metrics_png_layout(const Profile& profile) {
  // Text is measured on a scratch surface with the fonts the PNG is drawn with.
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(cairo_image_surface_create(CAIRO_FORMAT_RGB24, 1, 1));
  std::unique_ptr<cairo_t, ContextDeleter> context(cairo_create(surface.get()));
  return layout(context.get(), profile);
}

void write_metrics_png(const Profile& profile, const std::string& path) {
  if (profile.metrics.empty())
    throw Error(fmt::format("cannot plot metrics to '{}': the profile has no metric (record some with "
                            "nnprof::increment, set, record or measure_time first)",
                            path));
  const std::size_t panels = std::min(profile.metrics.size(), kMetricPngMaxPanels);
  const bool more = profile.metrics.size() > panels;
  const int height = static_cast<int>(panels) * kMetricPngPanelHeight + (more ? 30 : 0);
  std::unique_ptr<cairo_surface_t, SurfaceDeleter> surface(
      cairo_image_surface_create(CAIRO_FORMAT_RGB24, kMetricPngWidth, height));
  if (cairo_surface_status(surface.get()) != CAIRO_STATUS_SUCCESS)
    throw Error(fmt::format("cannot plot metrics to '{}': cairo could not create a {}x{} image ({})", path,
                            kMetricPngWidth, height, cairo_status_to_string(cairo_surface_status(surface.get()))));
  std::unique_ptr<cairo_t, ContextDeleter> context(cairo_create(surface.get()));
  cairo_t* cr = context.get();
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);
  const MetricPngLayout l = layout(cr, profile);
  for (std::size_t i = 0; i < panels; ++i) {
    const MetricSeries& m = profile.metrics[i];
    const MetricPngPanelText& t = l.panels[i];
    const double top = static_cast<double>(i) * kMetricPngPanelHeight;
    const Area a{l.left_margin, top + kTop, kMetricPngWidth - kRight, top + kMetricPngPanelHeight - kBottom};
    cairo_set_source_rgb(cr, 0.07, 0.09, 0.15);
    if (t.title.size() == 1) {
      text(cr, kOuterPad, top + 24, t.title[0], kTitleFont);
    } else {
      text(cr, kOuterPad, top + 18, t.title[0], kTitleFont);
      cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
      text(cr, kOuterPad, top + 35, t.title[1], kStatsFont);
    }
    frame(cr, a);
    if (m.points.empty()) {
      cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
      text(cr, a.x0 + a.w() / 2, a.y0 + a.h() / 2, "no points kept (statistics-only session or buffer cap)", kNoteFont,
           0.5);
      continue;
    }
    if (m.kind == MetricKind::Histogram) {
      draw_distribution(cr, m, a);
    } else {
      draw_series(cr, m, a, series_end(m, profile.meta.duration_ns));
    }
    labels(cr, a, t);
  }
  if (more) {
    cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
    text(cr, kOuterPad, height - 10.0,
         fmt::format("{} more metrics are not drawn (a PNG holds {}): see save_metrics or the HTML report",
                     profile.metrics.size() - panels, kMetricPngMaxPanels),
         kNoteFont);
  }
  cairo_surface_flush(surface.get());
  write_file_atomically(path, [&](std::ostream& out) {
    const cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), write_to_stream, &out);
    if (st != CAIRO_STATUS_SUCCESS)
      throw Error(fmt::format("cannot write '{}': cairo failed to encode the PNG ({})", path, cairo_status_to_string(st)));
  });
}

}  // namespace nnprof::io
