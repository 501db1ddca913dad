#include "report/charts/roofline_svg.hpp"

#include <algorithm>
#include <cmath>

#include "report/format.hpp"
#include "report/html_escape.hpp"

namespace nnprof::report::html {
namespace {

constexpr double kLeft = 78, kRight = 170, kTop = 16, kBottom = 44;  // margins, px
constexpr double kWidth = 560, kHeight = 320;                        // plot area, px

struct LogAxis {
  double lo_exp = 0, hi_exp = 1;  // decades
  double px0 = 0, px1 = 1;        // pixel of lo and hi
  double operator()(double v) const {
    const double e = std::log10(std::max(v, 1e-300));
    return px0 + (e - lo_exp) / (hi_exp - lo_exp) * (px1 - px0);
  }
};

LogAxis make_axis(double lo, double hi, double px0, double px1) {
  LogAxis a;
  a.lo_exp = std::floor(std::log10(lo));
  a.hi_exp = std::ceil(std::log10(hi));
  if (a.hi_exp <= a.lo_exp) a.hi_exp = a.lo_exp + 1;
  a.px0 = px0;
  a.px1 = px1;
  return a;
}

// The roof of one set of peaks as a polyline: the memory slope up to the ridge, then flat.
void write_roof(const LogAxis& x, const LogAxis& y, double bandwidth, double peak, std::string_view cls,
                std::string& out) {
  const double x_lo = std::pow(10.0, x.lo_exp), x_hi = std::pow(10.0, x.hi_exp);
  const double ridge = peak / bandwidth;
  const double start = std::max(x_lo, std::pow(10.0, y.lo_exp) / bandwidth);  // where the slope enters the plot
  append(out, "<polyline class=\"{}\" points=\"{:.1f},{:.1f} {:.1f},{:.1f} {:.1f},{:.1f}\"/>", cls, x(start),
         y(start * bandwidth), x(ridge), y(peak), x(x_hi), y(peak));
}

}  // namespace

void write_roofline_chart(const Profile& profile, const std::vector<analysis::ScopeCompute>& scopes,
                          std::string& out) {
  if (!analysis::machine_known(profile)) return;
  std::vector<const analysis::ScopeCompute*> placed;
  for (const analysis::ScopeCompute& c : scopes)
    if (c.roofline && c.roofline->attained > 0.0) placed.push_back(&c);
  if (placed.empty()) return;
  const MachinePeaks& m = profile.machine;
  double x_lo = m.ridge_point(Precision::Fp32, true) / 10.0, x_hi = m.ridge_point(Precision::Fp32, false) * 10.0;
  double y_lo = m.fp32_flops_one_core / 100.0, y_hi = m.fp32_flops;
  for (const analysis::ScopeCompute* c : placed) {
    x_lo = std::min(x_lo, c->roofline->intensity);
    x_hi = std::max(x_hi, c->roofline->intensity);
    y_lo = std::min(y_lo, c->roofline->attained);
  }
  const LogAxis x = make_axis(x_lo, x_hi, kLeft, kLeft + kWidth);
  const LogAxis y = make_axis(y_lo, y_hi, kTop + kHeight, kTop);
  append(out,
         "<svg class=\"roofline\" width=\"{0:.0f}\" height=\"{1:.0f}\" viewBox=\"0 0 {0:.0f} {1:.0f}\" role=\"img\" "
         "aria-label=\"Roofline: FLOP/s against FLOPs per byte\">",
         kLeft + kWidth + kRight, kTop + kHeight + kBottom);
  out += "<style>.roofline .grid{stroke:#ddd}.roofline text{font:11px sans-serif;fill:#444}"
         ".roofline .roof1{fill:none;stroke:#1f77b4;stroke-width:2}"
         ".roofline .roofn{fill:none;stroke:#d62728;stroke-width:2;stroke-dasharray:6 4}"
         ".roofline circle{fill:#2ca02c;fill-opacity:.8;stroke:#145214}</style>";
  // Decade grid and labels.
  for (double e = x.lo_exp; e <= x.hi_exp; ++e) {
    const double px = x(std::pow(10.0, e));
    append(out, "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{0:.1f}\" y2=\"{2:.1f}\"/>", px, kTop,
           kTop + kHeight);
    append(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">{}</text>", px, kTop + kHeight + 14,
           format_si(std::pow(10.0, e), ""));
  }
  for (double e = y.lo_exp; e <= y.hi_exp; ++e) {
    const double py = y(std::pow(10.0, e));
    append(out, "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1:.1f}\" x2=\"{2:.1f}\" y2=\"{1:.1f}\"/>", kLeft, py,
           kLeft + kWidth);
    append(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>", kLeft - 6, py + 4,
           format_si(std::pow(10.0, e), "FLOP/s"));
  }
  append(out, "<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\">Arithmetic intensity (FLOPs per byte)</text>",
         kLeft + kWidth / 2, kTop + kHeight + 34);
  write_roof(x, y, m.bandwidth_one_core, m.fp32_flops_one_core, "roof1", out);
  write_roof(x, y, m.bandwidth, m.fp32_flops, "roofn", out);
  const double lx = kLeft + kWidth + 10;
  append(out, "<line class=\"roof1\" x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\"/>"
              "<text x=\"{3:.0f}\" y=\"{4:.0f}\">one core</text>",
         lx, kTop + 8, lx + 24, lx + 30, kTop + 12);
  append(out, "<line class=\"roofn\" x1=\"{0:.0f}\" y1=\"{1:.0f}\" x2=\"{2:.0f}\" y2=\"{1:.0f}\"/>"
              "<text x=\"{3:.0f}\" y=\"{4:.0f}\">{5} threads</text>",
         lx, kTop + 26, lx + 24, lx + 30, kTop + 30, m.threads);
  for (const analysis::ScopeCompute* c : placed) {
    const RooflinePoint& p = *c->roofline;
    const double px = x(p.intensity), py = y(p.attained);
    const std::string name = profile.str(c->scope->name);
    out += "<g class=\"point\">";
    append(out, "<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"5\"><title>", px, py);
    append_escaped(out, name);
    append(out, ": {} at {} ({} of the {} {} roof, {}-bound)</title></circle>", format_si(p.attained, "FLOP/s"),
           format_ratio(p.intensity, "FLOP/byte"), format_percent(p.fraction), c->one_core ? "one-core" : "all-core",
           format_si(p.attainable, "FLOP/s"), p.bound == RooflineBound::Memory ? "memory" : "compute");
    append(out, "<text x=\"{:.1f}\" y=\"{:.1f}\">", px + 8, py - 6);
    append_escaped(out, name);
    out += "</text></g>";
  }
  out += "</svg>";
}

}  // namespace nnprof::report::html
