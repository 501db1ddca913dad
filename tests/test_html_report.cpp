// The HTML report: one self-contained page whose user strings are escaped, with its tables,
// call tree, timeline and memory chart, on hand-built, recorded and million-span profiles.
#include "io/profile_reports.hpp"

#include <gtest/gtest.h>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <iostream>
#include <iterator>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "io/exporter_registry.hpp"
#include "report/charts/html_charts.hpp"
#include "report/html_escape.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"
#include "cpu_profile_fixture.hpp"
#include "gpu_profile_fixture.hpp"
#include "sample_profiles.hpp"
#include "text_search.hpp"

namespace nnprof {
namespace {

std::string html_of(const Profile& profile) {
  std::ostringstream out;
  io::write_html_report(profile, out);
  return out.str();
}

using testing::count;

bool has(std::string_view text, std::string_view needle) {
  return text.find(needle) != std::string_view::npos;
}

// The text between the first `open` and the `close` after it.
std::string_view between(std::string_view text, std::string_view open, std::string_view close) {
  const std::size_t begin = text.find(open);
  if (begin == std::string_view::npos) return {};
  const std::size_t end = text.find(close, begin);
  return text.substr(begin, end == std::string_view::npos ? std::string_view::npos : end - begin);
}

// Nothing that would make a browser fetch anything: no scripts or styles by URL, no links
// to stylesheets or fonts, no CSS imports or url() references.
void expect_self_contained(std::string_view html) {
  EXPECT_FALSE(has(html, "http://"));
  EXPECT_FALSE(has(html, "https://"));
  EXPECT_FALSE(has(html, "src="));
  EXPECT_FALSE(has(html, "<link"));
  EXPECT_FALSE(has(html, "@import"));
  EXPECT_FALSE(has(html, "url("));
  EXPECT_FALSE(has(html, "@font-face"));
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(count(html, "<style"), 1u);
}

// ---- registry and document ----------------------------------------------------------

TEST(HtmlReport, RegisteredAsHtml) {
  const io::Exporter* html = io::find_exporter("html");
  ASSERT_NE(html, nullptr);
  EXPECT_EQ(html->name(), "html");
  EXPECT_EQ(html->extension(), ".html");
  EXPECT_EQ(io::find_exporter("HTML"), html);
  EXPECT_EQ(io::find_exporter_for_path("out/run.html"), html);
  EXPECT_EQ(io::find_exporter_for_path("RUN.HTML"), html);
  bool listed = false;
  for (const io::Exporter* e : io::all_exporters()) listed = listed || e == html;
  EXPECT_TRUE(listed);
}

TEST(HtmlReport, ExporterWritesTheReport) {
  const Profile p = testing::rich_profile();
  std::ostringstream out;
  io::find_exporter("html")->write(p, out);
  EXPECT_EQ(out.str(), html_of(p));
}

TEST(HtmlReport, ExporterThrowsWhenTheStreamFails) {
  std::ostringstream out;
  out.setstate(std::ios::badbit);
  EXPECT_THROW(io::HtmlExporter().write(testing::rich_profile(), out), Error);
}

TEST(HtmlReport, IsOneSelfContainedDocument) {
  const std::string html = html_of(testing::rich_profile());
  EXPECT_TRUE(html.starts_with("<!DOCTYPE html>\n<html lang=\"en\">"));
  EXPECT_TRUE(html.ends_with("</body>\n</html>\n"));
  EXPECT_TRUE(has(html, "<meta charset=\"utf-8\">"));
  EXPECT_TRUE(has(html, "Content-Security-Policy"));
  EXPECT_TRUE(has(html, "default-src 'none'"));
  expect_self_contained(html);
  EXPECT_EQ(count(html, "<body"), 1u);
  EXPECT_EQ(count(html, "</body>"), 1u);
}

// Every section of the profile report, in the page's order (report/documents.cpp).
constexpr std::string_view kSectionOrder[] = {
    "summary",    "bottlenecks", "recommendations", "hot-paths", "most-called", "throughput", "compute",    "allocators",
    "call-tree",  "callers",     "operators",   "timeline",        "threads",   "memory",       "heap",       "cpu",
    "gpu",        "gpu-scopes",  "system",      "metrics",     "critical-path",   "insights",  "annotations", "completeness", "diagnostics"};

// The values of `attribute`="..." in `html`, in order.
std::vector<std::string> attribute_values(std::string_view html, std::string_view attribute) {
  std::vector<std::string> values;
  const std::string open = std::string(attribute) + "=\"";
  for (std::size_t at = html.find(open); at != std::string_view::npos; at = html.find(open, at + 1)) {
    const std::size_t begin = at + open.size();
    values.emplace_back(html.substr(begin, html.find('"', begin) - begin));
  }
  return values;
}

std::vector<std::string> section_ids(std::string_view html) { return attribute_values(html, "<section id"); }

// The sections a page has follow the report's order, each linked once from the navigation, in the
// same order; every link and filter box points at an element that exists, and no id is used twice.
void expect_sections_in_order(std::string_view html, std::string_view what) {
  const std::vector<std::string> ids = section_ids(html);
  ASSERT_FALSE(ids.empty()) << what;
  const std::string_view nav = between(html, "<nav>", "</nav>");
  std::vector<std::string> linked;
  for (const std::string& href : attribute_values(nav, "<a href")) linked.push_back(href.substr(1));
  EXPECT_EQ(linked, ids) << what;
  const auto* order_end = std::end(kSectionOrder);
  const auto* previous = std::begin(kSectionOrder);
  for (const std::string& id : ids) {
    const auto* at = std::find(std::begin(kSectionOrder), order_end, id);
    ASSERT_NE(at, order_end) << what << ": a section not in the report's order: " << id;
    EXPECT_GE(at, previous) << what << ": " << id << " out of order";
    previous = at + 1;
  }
  std::set<std::string> seen;
  for (const std::string& id : attribute_values(html, " id")) {
    EXPECT_TRUE(seen.insert(id).second) << what << ": id " << id << " twice";
  }
  for (const std::string& href : attribute_values(html, "href")) {
    if (href.starts_with("#")) {
      EXPECT_TRUE(seen.contains(href.substr(1))) << what << ": a link to nothing: " << href;
    }
  }
  for (const std::string& target : attribute_values(html, "<input type=\"search\" data-filter")) {
    EXPECT_TRUE(seen.contains(target)) << what << ": a filter box for nothing: " << target;
    EXPECT_TRUE(seen.contains(target + "-count")) << what << ": no counter for " << target;
    EXPECT_TRUE(has(html, "<table class=\"sortable\" id=\"" + target + "\">")) << what << ": " << target;
  }
}

TEST(HtmlReport, SectionsAppearInOrder) {
  const std::string rich = html_of(testing::rich_profile());
  EXPECT_EQ(section_ids(rich),
            (std::vector<std::string>{"summary", "bottlenecks", "recommendations", "hot-paths", "most-called", "throughput",
                                      "allocators", "call-tree", "callers", "timeline", "threads", "memory", "insights",
                                      "annotations", "completeness", "diagnostics"}));
  expect_sections_in_order(rich, "rich profile");
  Profile compute = testing::export_profile();
  compute.scopes[2].flops = 4e9;
  compute.scopes[2].bytes = 16 * testing::kMiB;
  expect_sections_in_order(html_of(compute), "compute profile");
  EXPECT_TRUE(has(html_of(compute), "<section id=\"compute\">"));
  expect_sections_in_order(html_of(testing::heap_profile()), "heap profile");
  expect_sections_in_order(html_of(testing::cpu_profile()), "CPU profile");
  const std::string gpu = html_of(testing::gpu_profile());
  expect_sections_in_order(gpu, "GPU profile");
  EXPECT_LT(gpu.find("<section id=\"gpu\">"), gpu.find("<section id=\"gpu-scopes\">"));
  expect_sections_in_order(html_of(testing::recorded_profile()), "recorded profile");
  expect_sections_in_order(html_of(Profile{}), "empty profile");
  // Framework operators (spans with "op_scope"): their section, after the callers.
  nnprof::Profiler recorder;
  recorder.start("aten::addmm");
  recorder.arg("op_scope", "forward");
  recorder.arg("input_shapes", "[[128], [32, 64], [64, 128], [], []]");
  recorder.stop("aten::addmm");
  const std::string operators = html_of(recorder.snapshot());
  expect_sections_in_order(operators, "operator profile");
  ASSERT_NE(operators.find("<section id=\"operators\">"), std::string::npos);
  EXPECT_LT(operators.find("<section id=\"callers\">"), operators.find("<section id=\"operators\">"));
}

// ---- escaping -----------------------------------------------------------------------

TEST(HtmlReport, EscapeReplacesEverySpecialCharacter) {
  EXPECT_EQ(report::html::escape("<a href=\"x\">'&'</a>"),
            "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;");
  EXPECT_EQ(report::html::escape("décodage | µ\n2"), "décodage | µ\n2");
  EXPECT_EQ(report::html::escape(std::string_view("a\0b\x1b", 4)),
            "a\xEF\xBF\xBD"
            "b\xEF\xBF\xBD");
}

TEST(HtmlReport, ScriptNamedScopeRendersAsText) {
  const std::string html = html_of(testing::rich_profile());
  EXPECT_FALSE(has(html, "<script>alert"));
  EXPECT_FALSE(has(html, "</script>\")"));
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_EQ(count(html, "<script"), 1u);
  EXPECT_EQ(count(html, "</script>"), 1u);
}

TEST(HtmlReport, EveryUserStringAppearsEscaped) {
  const Profile p = testing::rich_profile();
  const std::string html = html_of(p);
  for (const ScopeStats& s : p.scopes)
    EXPECT_TRUE(has(html, report::html::escape(p.str(s.name)))) << p.str(s.name);
  for (const MemoryCounter& c : p.memory_counters) EXPECT_TRUE(has(html, report::html::escape(p.str(c.name))));
  for (const ThreadInfo& t : p.threads) EXPECT_TRUE(has(html, report::html::escape(t.name))) << t.name;
  for (const Diagnostic& d : p.diagnostics) EXPECT_TRUE(has(html, report::html::escape(d.message))) << d.message;
  ASSERT_FALSE(p.annotations.empty());
  for (const auto& [key, value] : p.annotations) {
    EXPECT_TRUE(has(html, "<td class=\"name\" title=\"" + report::html::escape(key) + "\">" + report::html::escape(key) +
                              "</td><td>" + report::html::escape(value) + "</td>"))
        << key;
  }
  EXPECT_FALSE(has(html, "<script>alert(2)"));
  EXPECT_TRUE(has(html, "./train --epochs 1 --name &quot;a,b&quot;"));
  EXPECT_TRUE(has(html, "<title>nnprof — ./train --epochs 1 --name &quot;a,b&quot;</title>"));
  EXPECT_FALSE(has(html, "\"a,b\""));
  EXPECT_TRUE(has(html, "matmul, &quot;fast&quot;"));
}

// ---- summary, tables, tree ----------------------------------------------------------

TEST(HtmlReport, SummaryCardsCarryUnits) {
  const std::string html = html_of(testing::rich_profile());
  const std::string_view cards = between(html, "<section id=\"summary\">", "</section>");
  // Instrumented time: the root's children, train_step (100 ms) and the odd scope (20 ms).
  for (const char* text :
       {"<div class=\"v\">123 ms</div>", "<div class=\"v\">120 ms</div>", "<div class=\"v\">7</div>",
        "4 distinct names", "<div class=\"v\">2</div>", "1 exited", "<div class=\"v\">4.00 KiB</div>",
        "at 51.5 ms, over 1 named counter", "<div class=\"v\">7</div>", "3 dropped · 0 overwritten",
        "26.4 ns / scope", "185 ns in total = &lt;0.1% of instrumented time"}) {
    EXPECT_TRUE(has(cards, text)) << text;
  }
}

TEST(HtmlReport, HotTableHasEveryScopeWithSortableNumbers) {
  const Profile p = testing::rich_profile();
  const std::string html = html_of(p);
  // The page's first sortable table: the one a link's #sort and #filter apply to.
  EXPECT_EQ(html.find("<table class=\"sortable\""), html.find("<table class=\"sortable\" id=\"hot-total\">"));
  const std::string_view table = between(html, "<table class=\"sortable\" id=\"hot-total\">", "</table>");
  ASSERT_FALSE(table.empty());
  EXPECT_TRUE(has(html, "<input type=\"search\" data-filter=\"hot-total\""));
  EXPECT_TRUE(has(html, "<span class=\"muted\" id=\"hot-total-count\"></span>"));
  EXPECT_EQ(count(table, "<tr>"), p.scopes.size() + 1);  // plus the header row
  for (const char* key : {"rank", "scope", "calls", "total", "pct", "self", "mean", "p50", "p95", "p99", "min", "max",
                          "item-count", "items", "alloc"}) {
    EXPECT_TRUE(has(table, std::string("data-key=\"") + key + "\"")) << key;
  }
  EXPECT_TRUE(has(table, "<th class=\"num\" data-key=\"total\" data-type=\"num\">Total</th>"));
  EXPECT_TRUE(has(table, "<th data-key=\"scope\">Scope</th>"));  // words sort as text
  // Every number carries its raw value: train_step, 2 calls, 100 ms, 10 ms self, 83.3% of 120 ms,
  // 64 items in 100 ms, 4 KiB.
  const std::string_view row = between(table, "<td class=\"name\" title=\"train_step\">", "</tr>");
  for (const char* cell :
       {"<td class=\"num\" data-v=\"2\">2</td>", "<td class=\"num\" data-v=\"100000000\">100 ms</td>",
        "<td class=\"num\" data-v=\"10000000\">10.0 ms</td>",
        "<td class=\"num\" data-v=\"0.8333333333333334\"><span class=\"bar\"><i style=\"width:83.3%\"></i></span>83.3%</td>",
        "<td class=\"num\" data-v=\"50000000\">50.0 ms</td>", "<td class=\"num\" data-v=\"640\">640 items/s</td>",
        "<td class=\"num\" data-v=\"4096\">4.00 KiB</td>"}) {
    EXPECT_TRUE(has(row, cell)) << cell << "\nin " << row;
  }
  // No items: a dash, sorted as zero.
  const std::string_view forward = between(table, "<td class=\"name\" title=\"forward\">", "</tr>");
  EXPECT_EQ(count(forward, "<td class=\"num\" data-v=\"0\">-</td>"), 2u);
  // No numeric cell without its raw value, in any sortable table of the page.
  EXPECT_EQ(count(html, "<td class=\"num\">"), 0u);
}

TEST(HtmlReport, CallTreeIsCollapsibleWithTimesAndShares) {
  const Profile p = testing::rich_profile();
  const std::string html = html_of(p);
  const std::string_view tree = between(html, "<div class=\"tree\" id=\"call-tree-table\">", "</section>");
  ASSERT_FALSE(tree.empty());
  EXPECT_TRUE(has(between(html, "<section id=\"call-tree\">", "<div class=\"tree\""),
                  "<button type=\"button\" data-tree=\"open\">Expand all</button>"));
  EXPECT_EQ(count(tree, "<details"), 2u);  // train_step and forward have children
  EXPECT_EQ(count(tree, "</details>"), 2u);
  EXPECT_EQ(count(tree, "<div class=\"row leaf\">"), 2u);
  EXPECT_TRUE(
      has(tree,
          "<details open><summary class=\"row\"><span class=\"nm\" title=\"train_step\">train_step</span>"
          "<span class=\"c\" data-v=\"2\">2</span><span class=\"c\" data-v=\"100000000\">100 ms</span>"
          "<span class=\"c\" data-v=\"10000000\">10.0 ms</span>"));
  // The full path on hover, escaped.
  EXPECT_TRUE(has(tree, "title=\"train_step &gt; forward &gt; matmul, &quot;fast&quot;\""));
  EXPECT_TRUE(has(tree, "<span class=\"c p\" data-v=\"0.8333333333333334\"><span class=\"bar\"><i "
                        "style=\"width:83.3%\"></i></span>83.3%</span>"));
  // Children by total time: train_step (100 ms) before the 20 ms scope.
  EXPECT_LT(tree.find("train_step</span>"), tree.find("&lt;script&gt;alert(1)&lt;/script&gt;</span>"));
}

TEST(HtmlReport, ThreadsAndCountersTables) {
  const std::string html = html_of(testing::rich_profile());
  const std::string_view threads =
      between(html, "<table class=\"sortable\" id=\"threads-table\">", "</table>");
  EXPECT_TRUE(has(
      threads, "<td class=\"name\" title=\"loader-0\">loader-0</td><td class=\"num\" data-v=\"1002\">1002"));
  EXPECT_TRUE(has(threads, "<td>exited</td>"));
  const std::string_view counters =
      between(html, "<table class=\"sortable\" id=\"counters-table\">", "</table>");
  EXPECT_TRUE(
      has(counters,
          "<td class=\"name\" title=\"weights\">weights</td><td class=\"num\" data-v=\"3072\">3.00 KiB"));
}

TEST(HtmlReport, InsightsCompletenessAndDiagnostics) {
  // The sentences' markup: key figures bold, scope names as code, escaped inside it.
  const std::string html = html_of(testing::rich_profile());
  const std::string_view insights = between(html, "<section id=\"insights\">", "</section>");
  EXPECT_TRUE(has(insights, "<li>The top 4 scopes by self time account for <b>100.0%</b> of instrumented time.</li>"));
  EXPECT_TRUE(has(insights, "<li>Highest self time: <code>matmul, &quot;fast&quot;</code>, 60.0 ms (50.0% of "
                            "instrumented time) in 2 calls.</li>"));
  // Facts as a definition list.
  const std::string_view completeness = between(html, "<section id=\"completeness\">", "</section>");
  EXPECT_TRUE(has(completeness, "<dl class=\"kv\"><dt>Scopes recorded</dt><dd>7</dd>"));
  EXPECT_TRUE(has(completeness, "<dd>26.4 ns per scope × 7 scopes = 185 ns (&lt;0.1% of instrumented time)</dd>"));
  // A diagnostic names a scope like a script: text in its cell and in its message.
  const std::string_view diagnostics = between(html, "<section id=\"diagnostics\">", "</section>");
  EXPECT_TRUE(has(diagnostics, "<td>stop_without_start</td>"));
  EXPECT_TRUE(has(diagnostics, "<td>stop(&quot;&lt;script&gt;alert(1)&lt;/script&gt;&quot;) without start</td>"));
}

// ---- timeline -----------------------------------------------------------------------

TEST(HtmlReport, TimelineDrawsEverySpanOfASmallProfile) {
  const Profile p = testing::rich_profile();
  const std::string html = html_of(p);
  const std::string_view svg = between(html, "<svg class=\"tl\"", "</svg>");
  ASSERT_FALSE(svg.empty());
  EXPECT_TRUE(has(svg, "data-merged=\"0\""));
  EXPECT_EQ(count(svg, "<rect class=\"b\""), p.spans.size());
  EXPECT_EQ(count(svg, "<title>"), p.spans.size());
  EXPECT_TRUE(has(svg, ">main (tid 1001)<tspan class=\"tc\"> · 6 spans</tspan>"));
  EXPECT_TRUE(has(svg, ">loader-0 (tid 1002)<tspan class=\"tc\"> · 1 spans</tspan>"));
  EXPECT_TRUE(has(svg, "<title>train_step\n40.0 ms at 0 ns (depth 1)</title>"));
  EXPECT_TRUE(has(svg, "<title>&lt;script&gt;alert(1)&lt;/script&gt;\n20.0 ms at 5.00 ms (depth 1)</title>"));
  // Dropped spans are announced above the timeline.
  EXPECT_TRUE(has(between(html, "<section id=\"timeline\">", "<svg"), "3 spans were dropped"));
}

TEST(HtmlReport, TimelineNestsByDepthAndColoursByName) {
  const Profile p = testing::rich_profile();
  const report::html::TimelineLayout layout = report::html::layout_timeline(p);
  ASSERT_EQ(layout.threads.size(), 2u);
  EXPECT_EQ(layout.threads[0].depths, 3u);
  EXPECT_EQ(layout.threads[1].depths, 1u);
  EXPECT_EQ(layout.t0_ns, 0u);
  EXPECT_EQ(layout.t1_ns, 110'000'000u);
  EXPECT_FALSE(layout.merged);
  EXPECT_EQ(layout.boxes.size(), 7u);
  // The same name has the same colour wherever it is drawn.
  const std::string html = html_of(p);
  const std::string_view svg = between(html, "<svg class=\"tl\"", "</svg>");
  std::string colour;
  for (std::size_t at = svg.find("<title>matmul"); at != std::string_view::npos;
       at = svg.find("<title>matmul", at + 1)) {
    const std::size_t fill = svg.rfind("fill=\"#", at);
    const std::string this_colour(svg.substr(fill, 14));
    if (colour.empty()) colour = this_colour;
    EXPECT_EQ(this_colour, colour);
  }
  EXPECT_FALSE(colour.empty());
}

TEST(HtmlReport, StatisticsOnlySessionSaysThereIsNoTimeline) {
  Profile p = testing::rich_profile();
  p.spans.clear();
  p.completeness.spans_enabled = false;
  const std::string html = html_of(p);
  EXPECT_TRUE(has(html, "statistics-only session: no spans were recorded"));
  EXPECT_FALSE(has(html, "<svg class=\"tl\""));
}

// ---- memory -------------------------------------------------------------------------

TEST(HtmlReport, MemoryChartIsAStepLineWithAxesAndPeak) {
  const std::string html = html_of(testing::rich_profile());
  const std::string_view svg = between(html, "<svg class=\"mem\"", "</svg>");
  ASSERT_FALSE(svg.empty());
  EXPECT_TRUE(has(svg, "<path class=\"line\" d=\"M"));
  EXPECT_TRUE(has(svg, "<path class=\"area\""));
  EXPECT_TRUE(has(svg, ">time since the session start</text>"));
  EXPECT_TRUE(has(svg, ">memory in use (bytes)</text>"));
  EXPECT_TRUE(has(svg, ">peak 4.00 KiB at 51.5 ms</text>"));
  EXPECT_TRUE(has(svg, ">4.00 KiB</text>"));  // a y-axis tick
  EXPECT_TRUE(has(svg, ">0 B</text>"));
  EXPECT_TRUE(has(svg, ">0 ns</text>"));  // the first x-axis tick
  // Three events: three vertical steps after the start.
  const std::string_view line = between(svg, "<path class=\"line\" d=\"", "\"/>");
  EXPECT_EQ(count(line, "V"), 3u);
}

TEST(HtmlReport, NoMemoryCountersSaysSo) {
  Profile p = testing::rich_profile();
  p.memory_counters.clear();
  p.memory_events.clear();
  p.memory = {};
  const std::string html = html_of(p);
  EXPECT_TRUE(has(html, "No memory counters were recorded"));
  EXPECT_FALSE(has(html, "<svg class=\"mem\""));
  EXPECT_FALSE(has(html, "id=\"counters-table\""));
}

// ---- heap ---------------------------------------------------------------------------

TEST(HtmlReport, NoHeapContentWithoutHeapTracking) {
  const std::string html = html_of(testing::rich_profile());
  EXPECT_FALSE(has(html, "heap"));
  EXPECT_FALSE(has(html, "Peak heap"));
  EXPECT_FALSE(has(html, ".mem .rss"));
  EXPECT_FALSE(has(html, "leak-verdict"));
}

TEST(HtmlReport, HeapChartShowsHeapRssAndVmHwmWithThePeak) {
  const std::string html = html_of(testing::heap_profile());
  expect_self_contained(html);
  EXPECT_TRUE(has(html, ".mem .rss{"));  // the heap CSS, in the page's one style element
  const std::string_view svg = between(html, "<svg class=\"mem\"", "</svg>");
  ASSERT_FALSE(svg.empty());
  EXPECT_TRUE(has(svg, "aria-label=\"Heap in use and RSS over time\""));
  EXPECT_TRUE(has(svg, "<path class=\"area\" d=\"M"));
  EXPECT_TRUE(has(svg, "<title>heap in use</title>"));
  EXPECT_TRUE(has(svg, "<title>RSS</title>"));
  EXPECT_TRUE(has(svg, "<title>RSS peak (VmHWM)</title>"));
  EXPECT_TRUE(has(svg, ">heap peak 22.0 MiB at 949 ms</text>"));
  EXPECT_TRUE(has(svg, ">60.0 MiB</text>")) << "the y axis reaches above the highest RSS (59 MiB)";
  EXPECT_TRUE(has(svg, ">1.00 s</text>"));
  // 50 samples 20 ms apart are 22 px apart: one point each, no column folded.
  const std::string_view heap = between(svg, "<path class=\"line\" d=\"", "\">");
  EXPECT_EQ(count(heap, "M"), 1u);
  EXPECT_EQ(count(heap, "L"), 49u);
  EXPECT_EQ(count(heap, "V"), 0u);
  EXPECT_EQ(count(svg, "<path class=\"rss\" d=\"M"), 1u);
  EXPECT_EQ(count(svg, "<path class=\"hwm\" d=\"M"), 1u);
}

TEST(HtmlReport, HeapChartFoldsSamplesOfOnePixelColumn) {
  Profile p = testing::heap_profile();
  // 10,000 samples in 1 s: about 9 per pixel column of the 1100 px axis.
  p.heap_samples.clear();
  for (std::uint64_t i = 0; i < 10'000; ++i) {
    const std::uint64_t bytes = (i % 2 == 0 ? 10 : 12) * testing::kMiB;
    p.heap_samples.push_back(HeapSample{i * 100 * testing::kUs, bytes, 2 * bytes, 24 * testing::kMiB});
  }
  const std::string html = html_of(p);
  const std::string_view heap = between(html, "<path class=\"line\" d=\"", "\">");
  EXPECT_LE(count(heap, "L"), 1100u);
  EXPECT_GT(count(heap, "V"), 1000u) << "each column's low and high";
  EXPECT_LT(heap.size(), 60'000u);
}

TEST(HtmlReport, HeapSitesAndStacksAreEscaped) {
  // The leak sites' functions, files and sampled stacks are user strings too: escaped in the
  // cells and in the titles that hold the stacks (line breaks kept).
  const std::string html = html_of(testing::heap_profile());
  const std::string_view leaks = between(html, "<table class=\"sortable\" id=\"leaks-table\">", "</table>");
  ASSERT_FALSE(leaks.empty());
  EXPECT_TRUE(has(leaks, "<td class=\"name\" title=\"train_step &gt; optimizer_step\">train_step &gt; "
                         "optimizer_step</td><td class=\"name\" title=\"sampled stack, innermost first:\n"
                         "History::append(Tensor const&amp;) (src/optim/history.cpp:42)\nOptimizer::step() "
                         "(src/optim/sgd.cpp:97)\nmain (src/train.cpp:31)\">History::append(Tensor const&amp;) "
                         "(src/optim/history.cpp:42)</td><td class=\"num\" data-v=\"10\">10</td>"
                         "<td class=\"num\" data-v=\"10485760\">10.0 MiB</td><td>leaked</td>"));
  EXPECT_TRUE(has(leaks, ">Reader&lt;Header&gt;::parse(std::istream&amp;) (src/data/reader.cpp:88)</td>"));
  EXPECT_FALSE(has(html, "Reader<Header>"));
  EXPECT_FALSE(has(html, "Tensor const&)"));
  const std::string_view findings = between(html, "<ul class=\"insights findings\">", "</ul>");
  EXPECT_TRUE(has(findings, "<li data-kind=\"memory_hotspot\"><span class=\"sev error\">high</span> <b>Memory "
                            "hotspot</b>: <code>load_batch</code> held up to <b>16.0 MiB</b> live at once"));
  EXPECT_TRUE(has(findings, "Free the blocks allocated at History::append(Tensor const&amp;)"));
}

// ---- odd profiles -------------------------------------------------------------------

// ---- CPU samples ---------------------------------------------------------------------

// The flame graph's nodes, from the data-nodes attribute, unescaped and parsed.
nlohmann::json flame_nodes(std::string_view html) {
  const std::string_view open = "id=\"flame-canvas\" data-nodes=\"";
  std::string_view data = between(html, open, "\">");
  if (data.size() < open.size()) return nullptr;
  data.remove_prefix(open.size());
  std::string json;
  for (std::size_t i = 0; i < data.size(); ++i) {
    constexpr std::pair<std::string_view, char> kEntities[] = {
        {"&quot;", '"'}, {"&amp;", '&'}, {"&lt;", '<'}, {"&gt;", '>'}, {"&#39;", '\''}};
    bool replaced = false;
    for (const auto& [entity, c] : kEntities) {
      if (data.substr(i).starts_with(entity)) {
        json += c;
        i += entity.size() - 1;
        replaced = true;
        break;
      }
    }
    if (!replaced) json += data[i];
  }
  return nlohmann::json::parse(json);
}

TEST(HtmlReport, NoCpuContentWithoutSampling) {
  const std::string html = html_of(testing::export_profile());
  EXPECT_FALSE(has(html, "id=\"cpu\""));
  EXPECT_FALSE(has(html, "flame-canvas"));
  EXPECT_FALSE(has(html, "CPU samples"));
  EXPECT_FALSE(has(html, ".flame-canvas"));
}

TEST(HtmlReport, CpuSectionFactsTablesAndFindings) {
  // The section's facts are test_report_sections_resources' (CpuSection); here, what the page adds:
  // its place, sortable tables with raw values and the full name on hover.
  const std::string html = html_of(testing::cpu_profile());
  expect_self_contained(html);
  EXPECT_TRUE(has(html, "<a href=\"#cpu\">CPU samples</a>"));
  EXPECT_TRUE(has(html, "<section id=\"cpu\"><h2>CPU samples</h2>"));
  const std::string_view functions =
      between(html, "<table class=\"sortable\" id=\"cpu-functions-table\">", "</table>");
  EXPECT_TRUE(has(functions, "<td class=\"name\" title=\"matmul\">matmul</td><td>train</td>")) << functions;
  EXPECT_TRUE(has(functions, "<td class=\"num\" data-v=\"4\">4</td><td class=\"num\" data-v=\"6000000\">6.00 ms</td>"));
  EXPECT_TRUE(has(functions, "title=\"[unknown]\""));
  EXPECT_TRUE(has(html, "<input type=\"search\" data-filter=\"cpu-functions-table\""));
  EXPECT_TRUE(has(html, "<li><code>matmul</code>: called from run_step (9 samples, 100.0%)"));
}

TEST(HtmlReport, FlameGraphDataIsTheFlameTreeWithScopes) {
  const std::string html = html_of(testing::cpu_profile());
  EXPECT_TRUE(has(html, "id=\"flame-search\""));
  EXPECT_TRUE(has(html, "id=\"flame-reset\""));
  EXPECT_TRUE(has(html, ".flame-canvas{"));
  const auto nodes = flame_nodes(html);
  const analysis::FlameTree tree = analysis::flame_tree(testing::cpu_profile(), {}, true);
  ASSERT_EQ(nodes.size(), tree.nodes.size());  // nothing narrow enough to leave out
  EXPECT_EQ(nodes[0], nlohmann::json::parse(R"(["all","",-1,14,0,16000000,0,"all"])"));
  EXPECT_EQ(nodes[1], nlohmann::json::parse(R"(["train_step","",0,12,0,14000000,1,"train_step"])"));
  for (std::size_t i = 1; i < nodes.size(); ++i) {
    EXPECT_LT(nodes[i][2].get<std::int64_t>(), static_cast<std::int64_t>(i)) << "parents come first";
  }
}

TEST(HtmlReport, FlameGraphBoxesShowReadableNamesAndDetailsTheFullSignature) {
  Profile p = testing::cpu_profile();
  const std::string signature = "void ns::matmul<float, 4>(float const*, float*, int) [clone .constprop.0]";
  p.strings[testing::kCpuMatmul] = signature;
  const auto nodes = flame_nodes(html_of(p));
  bool seen = false;
  for (const auto& node : nodes) {
    if (node[0] != signature) continue;
    seen = true;
    EXPECT_EQ(node[7], "ns::matmul<float, 4>") << node;  // the box's text; details(i) shows node[0]
  }
  EXPECT_TRUE(seen) << nodes;
}

TEST(HtmlReport, FlameGraphDataIsEscaped) {
  Profile p = testing::cpu_profile();
  p.strings[testing::kCpuMatmul] = "\"><script>alert(1)</script>";
  const std::string html = html_of(p);
  expect_self_contained(html);
  EXPECT_FALSE(has(html, "<script>alert(1)"));
  EXPECT_NE(flame_nodes(html).dump().find("\\\"><script>alert(1)</script>"), std::string::npos);
}

TEST(HtmlReport, FlameGraphLeavesOutFramesNarrowerThanAPixelColumn) {
  Profile p = testing::cpu_profile();
  // 10,000 more samples in matmul: memcpy's one sample is now below 1/5000 of the samples.
  for (int i = 0; i < 10'000; ++i) p.cpu_samples.push_back({100'000'000, 0, testing::kStackMatmul, 2, 1'000});
  const std::string html = html_of(p);
  EXPECT_TRUE(has(html, "id=\"flame-left-out\""));
  const auto nodes = flame_nodes(html);
  ASSERT_FALSE(nodes.empty());
  for (const auto& n : nodes) EXPECT_NE(n[0], "memcpy");
}

TEST(HtmlReport, EmptyProfileIsAValidPage) {
  const std::string html = html_of(Profile{});
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_TRUE(has(html, "No scopes were recorded"));
  EXPECT_TRUE(has(html, "No call tree was recorded."));
  EXPECT_TRUE(has(html, "No spans were recorded."));
  EXPECT_TRUE(has(html, "No memory counters were recorded"));
  expect_self_contained(html);
}

TEST(HtmlReport, MalformedProfileDoesNotCrash) {
  Profile p = testing::rich_profile();
  p.call_tree[3].children = {1};                       // a cycle
  p.call_tree[2].children.push_back(99);               // a child that does not exist
  p.spans.push_back(Span{7, 99, 0, 0, 9'000, 8'000});  // unknown thread and name, depth 0, end < start
  p.spans.push_back(Span{0, 0, 0, 40, 1'000, 2'000});  // deeper than the timeline draws
  p.memory_events.push_back(MemoryEvent{10, 0, 0, -1'000'000});  // out of order, below zero
  const std::string html = html_of(p);
  EXPECT_TRUE(html.ends_with("</html>\n"));
  EXPECT_TRUE(has(html, ">thread 7<tspan"));
  EXPECT_TRUE(has(html, "1 span nested deeper than 32 levels is not drawn."));
}

// ---- recorded profile ---------------------------------------------------------------

TEST(HtmlReport, RecordedProfile) {
  const Profile p = testing::recorded_profile();
  ASSERT_GE(p.scopes.size(), 7u);
  const std::string html = html_of(p);
  expect_self_contained(html);
  for (const ScopeStats& s : p.scopes) {
    EXPECT_TRUE(has(html, fmt::format(">{}</td>", report::html::escape(p.str(s.name))))) << p.str(s.name);
  }
  EXPECT_TRUE(has(html, "&lt;script&gt;alert(1)&lt;/script&gt;"));
  EXPECT_TRUE(has(html, "data &lt;loader&gt;"));
  EXPECT_FALSE(has(html, "data <loader>"));
  const std::string_view svg = between(html, "<svg class=\"tl\"", "</svg>");
  EXPECT_EQ(count(svg, "<rect class=\"b\""), p.spans.size());
  EXPECT_TRUE(has(html, "<svg class=\"mem\""));
  EXPECT_TRUE(has(html, "items/s</td>"));  // train_step reported items
  EXPECT_TRUE(has(html, ">12</td>"));      // 12 train steps
}

// ---- a million spans ----------------------------------------------------------------

TEST(HtmlReport, MillionSpansAreMergedIntoABoundedPage) {
  const Profile p = testing::million_span_profile();
  ASSERT_GE(p.spans.size(), 1'000'000u);
  const auto start = std::chrono::steady_clock::now();
  const std::string html = html_of(p);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << "[ html     ] " << p.spans.size() << " spans -> " << html.size() << " bytes of HTML in "
            << seconds << " s\n";
  EXPECT_LT(html.size(), 4u << 20);
  expect_self_contained(html);
  const std::string_view svg = between(html, "<svg class=\"tl\"", "</svg>");
  EXPECT_TRUE(has(svg, "data-merged=\"1\""));
  const std::size_t boxes = count(svg, "<rect class=\"b");
  EXPECT_LE(boxes, report::html::kTimelineBoxBudget);
  EXPECT_GT(boxes, 100u);
  EXPECT_GT(count(svg, "<rect class=\"b m\""), 100u);
  EXPECT_TRUE(has(svg, " spans merged, "));
  // A few tens of thousands of elements at most, whatever the number of spans.
  EXPECT_LT(count(html, "<") - count(html, "</"), 40'000u);
  // The memory chart folds ~83,000 events into at most a few strokes per pixel column.
  const std::string_view line = between(html, "<path class=\"line\" d=\"", "\"/>");
  EXPECT_LT(line.size(), 60'000u);
}

TEST(HtmlReport, MergingKeepsEverySpanAndWideSpansApart) {
  const Profile p = testing::million_span_profile();
  const report::html::TimelineLayout layout = report::html::layout_timeline(p);
  ASSERT_TRUE(layout.merged);
  EXPECT_LE(layout.boxes.size(), report::html::kTimelineBoxBudget);
  std::uint64_t spans = 0;
  for (const report::html::TimelineBox& box : layout.boxes) {
    spans += box.spans;
    EXPECT_LE(box.x0, box.x1);
    EXPECT_LE(box.x1, report::html::kTimelineWidthPx + 1e-6);
    if (box.spans > 1) {
      EXPECT_LE(box.busy_ns, box.end_ns - box.start_ns);
    }
  }
  EXPECT_EQ(spans, p.spans.size());
  EXPECT_EQ(layout.spans_drawn, p.spans.size());
  // Boxes of one lane (thread and depth) follow each other without overlapping.
  for (std::size_t i = 1; i < layout.boxes.size(); ++i) {
    const auto& a = layout.boxes[i - 1];
    const auto& b = layout.boxes[i];
    if (a.row == b.row && a.depth == b.depth) {
      EXPECT_LE(a.x1, b.x0 + 1e-6);
    }
  }
}

}  // namespace
}  // namespace nnprof
