#include "io/metrics_png.hpp"

#include <cairo.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <ostream>
#include <vector>

#include <fmt/format.h>

#include "io/metric_table.hpp"
#include "io/metrics_json.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"

#if defined(__SANITIZE_ADDRESS__)
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

namespace {

constexpr double kLeft = 90.0, kRight = 20.0, kTop = 46.0, kBottom = 40.0;

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

void text(cairo_t* cr, double x, double y, const std::string& s, double size, bool bold = false, double align = 0.0) {
  cairo_select_font_face(cr, "DejaVu Sans", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
  cairo_text_extents_t ext;
  cairo_text_extents(cr, s.c_str(), &ext);
  cairo_move_to(cr, x - align * ext.x_advance, y);
  cairo_show_text(cr, s.c_str());
}

void frame(cairo_t* cr, const Area& a) {
  cairo_set_source_rgb(cr, 0.6, 0.63, 0.68);
  cairo_set_line_width(cr, 1.0);
  cairo_rectangle(cr, a.x0 + 0.5, a.y0 + 0.5, a.w(), a.h());
  cairo_stroke(cr);
}

// Axis labels: value range on the left, `left`/`right` under the plot.
void labels(cairo_t* cr, const Area& a, const std::string& low, const std::string& high, const std::string& left,
            const std::string& right) {
  cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
  text(cr, a.x0 - 6, a.y0 + 10, high, 10.5, false, 1.0);
  text(cr, a.x0 - 6, a.y1, low, 10.5, false, 1.0);
  text(cr, a.x0, a.y1 + 15, left, 10.5);
  text(cr, a.x1, a.y1 + 15, right, 10.5, false, 1.0);
}

// Counters and gauges: the value over time, each pixel column folded to its min and max.
void draw_series(cairo_t* cr, const MetricSeries& m, const Area& a, std::uint64_t end_ns) {
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
  const double end = static_cast<double>(std::max<std::uint64_t>(end_ns, 1));
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
  labels(cr, a, format_metric_value(lo, m.unit), format_metric_value(hi, m.unit), "0 s", format_duration(end_ns));
}

// Histograms: the distribution of the points kept, in 40 bins between min and max.
void draw_distribution(cairo_t* cr, const MetricSeries& m, const Area& a) {
  double lo = m.points.front().value, hi = lo;
  for (const MetricPoint& p : m.points) {
    lo = std::min(lo, p.value);
    hi = std::max(hi, p.value);
  }
  constexpr int kBins = 40;
  const double width = hi > lo ? (hi - lo) / kBins : 1.0;
  std::vector<std::uint64_t> bins(kBins, 0);
  for (const MetricPoint& p : m.points)
    ++bins[static_cast<std::size_t>(std::clamp(static_cast<int>((p.value - lo) / width), 0, kBins - 1))];
  const std::uint64_t top = *std::max_element(bins.begin(), bins.end());
  const double bw = a.w() / kBins;
  cairo_set_source_rgb(cr, 0.15, 0.39, 0.92);
  for (int b = 0; b < kBins; ++b) {
    if (bins[static_cast<std::size_t>(b)] == 0) continue;
    const double h = a.h() * static_cast<double>(bins[static_cast<std::size_t>(b)]) / static_cast<double>(top);
    cairo_rectangle(cr, a.x0 + b * bw + 1, a.y1 - h, bw - 2, h);
  }
  cairo_fill(cr);
  // The median and p99 as vertical marks.
  const auto xv = [&](double v) { return a.x0 + (hi > lo ? a.w() * (v - lo) / (hi - lo) : a.w() / 2); };
  cairo_set_source_rgb(cr, 0.85, 0.28, 0.06);
  cairo_set_line_width(cr, 1.2);
  for (const double v : {m.summary.p50, m.summary.p99}) {
    cairo_move_to(cr, xv(v), a.y0);
    cairo_line_to(cr, xv(v), a.y1);
  }
  cairo_stroke(cr);
  labels(cr, a, "0", format_count(top), format_metric_value(lo, m.unit), format_metric_value(hi, m.unit));
}

std::string panel_title(const Profile& profile, const MetricSeries& m) {
  const MetricSummary& s = m.summary;
  const auto v = [&](double x) { return format_metric_value(x, m.unit); };
  std::string t = fmt::format("{} ({}): n={}", profile.str(m.name), metric_kind_name(m.kind), format_count(s.count));
  if (m.kind == MetricKind::Counter) t += ", total " + v(s.last);
  if (m.kind == MetricKind::Gauge) t += ", last " + v(s.last);
  t += fmt::format(", mean {}, min {}, max {}", v(s.mean), v(s.min), v(s.max));
  if (s.percentile_points > 0 && m.kind != MetricKind::Counter)
    t += fmt::format(", p50 {}, p99 {}", v(s.p50), v(s.p99));
  return t;
}

cairo_status_t write_to_stream(void* closure, const unsigned char* data, unsigned int length) {
  auto* out = static_cast<std::ostream*>(closure);
  out->write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(length));
  return *out ? CAIRO_STATUS_SUCCESS : CAIRO_STATUS_WRITE_ERROR;
}

}  // namespace

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
  const std::uint64_t end_ns = profile.meta.duration_ns;
  for (std::size_t i = 0; i < panels; ++i) {
    const MetricSeries& m = profile.metrics[i];
    const double top = static_cast<double>(i) * kMetricPngPanelHeight;
    const Area a{kLeft, top + kTop, kMetricPngWidth - kRight, top + kMetricPngPanelHeight - kBottom};
    cairo_set_source_rgb(cr, 0.07, 0.09, 0.15);
    text(cr, 12, top + 24, panel_title(profile, m), 13, true);
    frame(cr, a);
    if (m.points.empty()) {
      cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
      text(cr, a.x0 + a.w() / 2, a.y0 + a.h() / 2, "no points kept (statistics-only session or buffer cap)", 12, false,
           0.5);
    } else if (m.kind == MetricKind::Histogram) {
      draw_distribution(cr, m, a);
    } else {
      std::uint64_t last = end_ns;
      for (const MetricPoint& p : m.points) last = std::max(last, p.time_ns);
      draw_series(cr, m, a, last);
    }
  }
  if (more) {
    cairo_set_source_rgb(cr, 0.29, 0.33, 0.39);
    text(cr, 12, height - 10.0,
         fmt::format("{} more metrics are not drawn (a PNG holds {}): see save_metrics or the HTML report",
                     profile.metrics.size() - panels, kMetricPngMaxPanels),
         12);
  }
  cairo_surface_flush(surface.get());
  write_file_atomically(path, [&](std::ostream& out) {
    const cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), write_to_stream, &out);
    if (st != CAIRO_STATUS_SUCCESS)
      throw Error(fmt::format("cannot write '{}': cairo failed to encode the PNG ({})", path, cairo_status_to_string(st)));
  });
}

}  // namespace nnprof::io
