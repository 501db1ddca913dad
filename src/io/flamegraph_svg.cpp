#include "io/flamegraph_svg.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/function_name.hpp"
#include "report/format.hpp"
#include "report/html_escape.hpp"
#include "report/utf8.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {

using report::format_count;
using report::format_duration;
namespace html = report::html;
using report::valid_utf8;
namespace {

// Geometry, in pixels (flamegraph.pl's defaults).
constexpr double kPad = 10.0;
constexpr double kFrameHeight = 16.0;
constexpr double kFontSize = 12.0;
constexpr double kCharWidth = 0.59 * kFontSize;  // Verdana's average advance, as flamegraph.pl estimates it
constexpr double kTop = kFontSize * 5;           // title, subtitle and the controls
constexpr double kBottom = kFontSize * 2 + 10;   // the details line

// The merged tree of the folded stacks: node 0 is "all".
struct Node {
  FoldedFrame frame;
  std::uint64_t value = 0;
  std::map<std::string, std::size_t> children;  // by collapsed frame text: flamegraph.pl's alphabetical order
};

std::vector<Node> build_tree(const std::vector<FoldedStack>& stacks) {
  std::vector<Node> nodes(1);
  nodes[0].frame = FoldedFrame{"all", {}, FoldedFrameKind::Thread};
  for (const FoldedStack& stack : stacks) {
    std::size_t node = 0;
    nodes[0].value += stack.value;
    for (const FoldedFrame& frame : stack.frames) {
      const auto [it, inserted] = nodes[node].children.try_emplace(collapsed_frame_text(frame), nodes.size());
      const std::size_t child = it->second;
      if (inserted) nodes.push_back(Node{frame, 0, {}});
      nodes[child].value += stack.value;
      node = child;
    }
  }
  return nodes;
}

// XML text: escaped, valid UTF-8, and without the two code points XML forbids that UTF-8
// allows (U+FFFE, U+FFFF).
std::string xml_text(std::string_view raw) {
  std::string valid = valid_utf8(raw);
  for (std::size_t at = valid.find("\xEF\xBF"); at != std::string::npos; at = valid.find("\xEF\xBF", at + 1)) {
    if (at + 2 < valid.size() && (valid[at + 2] == '\xBE' || valid[at + 2] == '\xBF')) valid.replace(at, 3, "\xEF\xBF\xBD");
  }
  return html::escape(valid);
}

std::uint32_t fnv1a(std::string_view text) {
  std::uint32_t hash = 2166136261U;
  for (const char c : text) {
    hash ^= static_cast<unsigned char>(c);
    hash *= 16777619U;
  }
  return hash;
}

// 0..1 from a hash, so that colours are stable from run to run.
double unit(std::uint32_t hash) { return static_cast<double>(hash % 1000U) / 999.0; }

std::string rgb(double r, double g, double b) {
  const auto c = [](double v) { return static_cast<int>(std::lround(std::clamp(v, 0.0, 255.0))); };
  return fmt::format("rgb({},{},{})", c(r), c(g), c(b));
}

// Warm colours for code, one hue per module (so a library reads as one colour family),
// varied by function; aqua for inlined frames (flamegraph.pl's convention), grey-red for
// code without symbols, greys for the roots and stackless samples.
std::string frame_color(const FoldedFrame& frame) {
  const double v = unit(fnv1a(frame.name));
  switch (frame.kind) {
    case FoldedFrameKind::Thread:
      return rgb(190 + 20 * v, 190 + 20 * v, 205);
    case FoldedFrameKind::NoStack:
      return rgb(200, 200, 200);
    case FoldedFrameKind::Unsymbolized:
      return rgb(200 + 20 * v, 150 + 20 * v, 150 + 20 * v);
    case FoldedFrameKind::Inlined:
      return rgb(50 + 60 * v, 165 + 55 * v, 165 + 55 * v);
    case FoldedFrameKind::Function:
      break;
  }
  // The module picks where between red and yellow the frame sits; the function varies it.
  const double m = frame.module.empty() ? 0.5 : unit(fnv1a(frame.module) * 2654435761U);
  return rgb(205 + 50 * v, 50 + 170 * m + 20 * v, 30 + 25 * v);
}

std::size_t code_points(std::string_view utf8) {
  return static_cast<std::size_t>(std::count_if(utf8.begin(), utf8.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
  }));
}

// The label that fits a frame `width` pixels wide: all of it, a prefix and "..", or nothing
// (the same rule as the script uses after a zoom).
std::string fit_label(std::string_view name, double width) {
  const double fits = std::floor((width - 6) / kCharWidth);
  if (fits < 3) return {};
  const auto chars = static_cast<std::size_t>(fits);
  if (code_points(name) <= chars) return std::string(name);
  std::size_t kept = 0;
  std::size_t end = 0;
  while (end < name.size() && kept < chars - 2) {
    ++end;
    while (end < name.size() && (static_cast<unsigned char>(name[end]) & 0xC0) == 0x80) ++end;
    ++kept;
  }
  return std::string(name.substr(0, end)) + "..";
}

// What a frame's box says: a function as a reader names it ("ns::gemm<…>" rather than its
// whole signature, analysis::readable_function); the tooltip keeps the full name. Roots,
// addresses without a symbol, stackless samples and names without a parameter list (C
// functions, names that are no signature) are shown as they are.
std::string frame_label(const FoldedFrame& frame) {
  const bool function = frame.kind == FoldedFrameKind::Function || frame.kind == FoldedFrameKind::Inlined;
  return function && frame.name.find('(') != std::string::npos ? analysis::readable_function(frame.name) : frame.name;
}

std::string percent(std::uint64_t part, std::uint64_t whole) {
  return fmt::format("{:.2f}%", whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole));
}

std::string amount(std::uint64_t value, CpuWeight weight) {
  return weight == CpuWeight::Samples ? format_count(value, "sample", "samples") : format_duration(value);
}

std::string kind_note(FoldedFrameKind kind) {
  switch (kind) {
    case FoldedFrameKind::Inlined: return " (inlined)";
    case FoldedFrameKind::Unsymbolized: return " (no symbol)";
    default: return "";
  }
}

std::string subtitle(const Profile& profile, const FlameGraphOptions& options, std::uint64_t total) {
  std::string text = amount(total, options.stacks.weight);
  if (profile.cpu.requested_hz > 0) text += fmt::format(" at {:g} Hz", profile.cpu.requested_hz);
  text += profile.cpu.mode == "wall" ? " of wall-clock time" : " of CPU time";
  if (options.stacks.thread != kNone && options.stacks.thread < profile.threads.size()) {
    const ThreadInfo& thread = profile.threads[options.stacks.thread];
    text += fmt::format(", thread {} (tid {})", thread.name, thread.os_tid);
  }
  if (options.stacks.scope != 0) text += ", in scope " + profile.node_path(options.stacks.scope);
  return text;
}

// The interactive part. Frames are <g class="f"> with their start and value in samples (or
// ns) and their depth; zooming recomputes positions from those, so it is exact at any depth.
constexpr std::string_view kScript = R"JS(
"use strict";
var frames = [], total = 0, chartWidth = 0, details, matched, searchButton, unzoomButton, searching = false;
var PAD = 10, CHAR_WIDTH = 0.59 * 12;
function init() {
  details = document.getElementById("details").firstChild;
  matched = document.getElementById("matched");
  searchButton = document.getElementById("search");
  unzoomButton = document.getElementById("unzoom");
  chartWidth = +document.documentElement.getAttribute("width") - 2 * PAD;
  var groups = document.querySelectorAll("#frames > g");
  for (var i = 0; i < groups.length; i++) {
    var g = groups[i], rect = g.querySelector("rect");
    g.fg = { s: +g.getAttribute("data-s"), v: +g.getAttribute("data-v"), d: +g.getAttribute("data-d"),
             name: g.querySelector("title").textContent.split("\n")[0], rect: rect, text: g.querySelector("text"),
             fill: rect.getAttribute("fill"), info: g.getAttribute("data-info") };
    // The box shows the readable name (data-l, where it differs); the tooltip the full one.
    g.fg.label = g.getAttribute("data-l") || g.fg.name;
    frames.push(g);
    total = Math.max(total, g.fg.v);
    g.addEventListener("mouseover", function () { details.nodeValue = this.fg.name + " (" + this.fg.info + ")"; });
    g.addEventListener("mouseout", function () { details.nodeValue = " "; });
    g.addEventListener("click", function () { zoom(this); });
  }
  unzoomButton.addEventListener("click", unzoom);
  searchButton.addEventListener("click", function () { if (searching) resetSearch(); else askSearch(); });
  window.addEventListener("keydown", function (e) {
    if (e.keyCode === 114 || ((e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F"))) {
      e.preventDefault();
      askSearch();
    } else if (e.key === "Escape") {
      resetSearch();
      unzoom();
    }
  });
}
function fit(name, width) {
  var n = Math.floor((width - 6) / CHAR_WIDTH);
  if (n < 3) return "";
  var chars = Array.from(name);
  return chars.length <= n ? name : chars.slice(0, n - 2).join("") + "..";
}
function place(g, x, width) {
  g.fg.rect.setAttribute("x", x.toFixed(2));
  g.fg.rect.setAttribute("width", width.toFixed(2));
  g.fg.text.setAttribute("x", (x + 3).toFixed(2));
  g.fg.text.textContent = fit(g.fg.label, width);
}
function zoom(node) {
  var s = node.fg.s, v = node.fg.v, d = node.fg.d, scale = chartWidth / v;
  frames.forEach(function (g) {
    var f = g.fg, inside = f.s >= s && f.s + f.v <= s + v, above = f.s <= s && f.s + f.v >= s + v;
    if (f.d < d && above) {
      place(g, PAD, chartWidth);
      g.setAttribute("class", "f parent");
    } else if (f.d >= d && inside && f.v * scale >= 0.1) {
      place(g, PAD + (f.s - s) * scale, f.v * scale);
      g.setAttribute("class", "f");
    } else {
      g.setAttribute("class", "f hide");
    }
  });
  unzoomButton.setAttribute("class", d > 0 ? "" : "hide");
}
function unzoom() {
  if (frames.length > 0) zoom(frames[0]);
}
function askSearch() {
  var term = prompt("Search frames for (a regular expression):", "");
  if (term) search(term);
}
function search(term) {
  var re;
  try { re = new RegExp(term); } catch (e) { alert("Not a regular expression: " + e.message); return; }
  var hits = [];
  frames.forEach(function (g) {
    if (re.test(g.fg.name) || re.test(g.fg.label)) {
      g.fg.rect.setAttribute("fill", "rgb(230,0,230)");
      hits.push(g.fg);
    } else {
      g.fg.rect.setAttribute("fill", g.fg.fill);
    }
  });
  // Frames either nest or are disjoint: count each outermost match once.
  hits.sort(function (a, b) { return a.s - b.s || b.v - a.v; });
  var covered = 0, end = -1;
  hits.forEach(function (f) { if (f.s >= end) { covered += f.v; end = f.s + f.v; } });
  searching = true;
  searchButton.firstChild.nodeValue = "Reset Search";
  matched.firstChild.nodeValue = "Matched: " + (total > 0 ? (100 * covered / total).toFixed(2) : "0.00") + "% (" + term + ")";
}
function resetSearch() {
  frames.forEach(function (g) { g.fg.rect.setAttribute("fill", g.fg.fill); });
  searching = false;
  searchButton.firstChild.nodeValue = "Search";
  matched.firstChild.nodeValue = " ";
}
)JS";

constexpr std::string_view kStyle = R"CSS(
text { font-family: Verdana, "DejaVu Sans", sans-serif; font-size: 12px; fill: rgb(0,0,0); }
#title { text-anchor: middle; font-size: 17px; }
#subtitle { text-anchor: middle; fill: rgb(80,80,80); }
#search, #unzoom { cursor: pointer; fill: rgb(0,0,160); }
#search, #matched { text-anchor: end; }
#frames g { cursor: pointer; }
#frames g:hover rect { stroke: rgb(0,0,0); stroke-width: 0.5; }
#frames text { pointer-events: none; }
.hide { display: none; }
.parent { opacity: 0.5; }
)CSS";

}  // namespace

void write_flamegraph_svg(const Profile& profile, std::ostream& out, const FlameGraphOptions& options) {
  const std::vector<FoldedStack> stacks = fold_cpu_samples(profile, options.stacks);
  const std::vector<Node> nodes = build_tree(stacks);
  const std::uint64_t total = nodes[0].value;
  const double width = std::max(200.0, static_cast<double>(options.width));
  const double scale = (width - 2 * kPad) / static_cast<double>(total);

  // Lay out depth first; children left to right in alphabetical order.
  struct Placed {
    std::size_t node;
    std::uint64_t start;
    std::size_t depth;
  };
  std::vector<Placed> placed;
  std::size_t max_depth = 0;
  std::size_t omitted = 0;
  std::vector<Placed> pending{{0, 0, 0}};
  while (!pending.empty()) {
    const Placed p = pending.back();
    pending.pop_back();
    if (static_cast<double>(nodes[p.node].value) * scale < options.min_frame_px) {
      ++omitted;
      continue;
    }
    placed.push_back(p);
    max_depth = std::max(max_depth, p.depth);
    std::uint64_t start = p.start;
    std::vector<Placed> children;
    for (const auto& [text, child] : nodes[p.node].children) {
      children.push_back({child, start, p.depth + 1});
      start += nodes[child].value;
    }
    pending.insert(pending.end(), children.rbegin(), children.rend());
  }

  const double height = kTop + static_cast<double>(max_depth + 1) * kFrameHeight + kBottom;
  std::string title = options.title;
  if (title.empty()) title = profile.cpu.mode == "wall" ? "Wall-clock flame graph" : "CPU flame graph";

  std::string svg;
  svg.reserve(placed.size() * 300 + 8192);
  html::append(svg,
               "<?xml version=\"1.0\" standalone=\"no\"?>\n"
               "<svg version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" onload=\"init(evt)\" "
               "xmlns=\"http://www.w3.org/2000/svg\">\n",
               width, height);
  html::append(svg, "<!-- Flame graph of CPU samples, written by nnprof. Stacks: {}; frames narrower than {} px "
                    "left out: {}. -->\n",
               stacks.size(), options.min_frame_px, omitted);
  svg += "<defs><linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">"
         "<stop stop-color=\"#eeeeee\" offset=\"5%\"/><stop stop-color=\"#eeeeb0\" offset=\"95%\"/>"
         "</linearGradient></defs>\n";
  html::append(svg, "<style type=\"text/css\"><![CDATA[{}]]></style>\n", kStyle);
  html::append(svg, "<script type=\"text/ecmascript\"><![CDATA[{}]]></script>\n", kScript);
  html::append(svg, "<rect x=\"0\" y=\"0\" width=\"{}\" height=\"{}\" fill=\"url(#background)\"/>\n", width, height);
  html::append(svg, "<text id=\"title\" x=\"{}\" y=\"24\">{}</text>\n", width / 2, xml_text(title));
  html::append(svg, "<text id=\"subtitle\" x=\"{}\" y=\"42\">{}</text>\n", width / 2,
               xml_text(subtitle(profile, options, total)));
  html::append(svg, "<text id=\"unzoom\" class=\"hide\" x=\"{}\" y=\"{}\">Reset Zoom</text>\n", kPad, kTop - 6);
  html::append(svg, "<text id=\"search\" x=\"{}\" y=\"{}\">Search</text>\n", width - kPad, kTop - 6);
  html::append(svg, "<text id=\"details\" x=\"{}\" y=\"{}\"> </text>\n", kPad, height - 17);
  html::append(svg, "<text id=\"matched\" x=\"{}\" y=\"{}\"> </text>\n", width - kPad, height - 17);

  svg += "<g id=\"frames\">\n";
  for (const Placed& p : placed) {
    const Node& node = nodes[p.node];
    const double x = kPad + static_cast<double>(p.start) * scale;
    const double w = static_cast<double>(node.value) * scale;
    const double y = height - kBottom - static_cast<double>(p.depth + 1) * kFrameHeight;
    const std::string share = percent(node.value, total);
    std::string info = amount(node.value, options.stacks.weight) + ", " + share;
    std::string tooltip = node.frame.name + "\n" + info;
    if (!node.frame.module.empty()) tooltip += "\nmodule: " + node.frame.module;
    tooltip += kind_note(node.frame.kind);
    const std::string label = frame_label(node.frame);
    html::append(svg, "<g class=\"f\" data-s=\"{}\" data-v=\"{}\" data-d=\"{}\" data-info=\"{}\"", p.start,
                 node.value, p.depth, xml_text(info));
    if (label != node.frame.name) html::append(svg, " data-l=\"{}\"", xml_text(label));
    svg += '>';
    html::append(svg, "<title>{}</title>", xml_text(tooltip));
    html::append(svg, "<rect x=\"{:.2f}\" y=\"{:.1f}\" width=\"{:.2f}\" height=\"{:.1f}\" fill=\"{}\" rx=\"2\" ry=\"2\"/>",
                 x, y, w, kFrameHeight - 1, frame_color(node.frame));
    html::append(svg, "<text x=\"{:.2f}\" y=\"{:.1f}\">{}</text></g>\n", x + 3, y + kFrameHeight - 4.5,
                 xml_text(fit_label(label, w)));
  }
  svg += "</g>\n</svg>\n";
  out << svg;
}

void FlameGraphExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& /*options: names are data here*/) const {
  write_flamegraph_svg(profile, out);
  if (!out) throw Error("could not write the flame graph: the output stream failed");
}

}  // namespace nnprof::io
