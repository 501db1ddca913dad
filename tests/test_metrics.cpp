// Metrics by name (nnprof/metrics.hpp): recording, statistics and percentiles against
// references, threads, the buffer cap, the store, every output, and the PNG.
#include <cairo.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/chrome_trace.hpp"
#include "io/profile_reports.hpp"
#include "io/json_report.hpp"
#include "report/metric_values.hpp"
#include "io/metrics_png.hpp"
#include "model/metric_builder.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace fs = std::filesystem;


namespace {

class Metrics : public nnprof::testing::TestDirectory {
 protected:
  Metrics() : TestDirectory("metrics") {}

};

const nnprof::MetricSeries& metric(const nnprof::Profile&& p, std::string_view name) = delete;
const nnprof::MetricSeries& metric(const nnprof::Profile& p, std::string_view name) {
  const nnprof::MetricSeries* m = nnprof::find_metric(p, name);
  if (m == nullptr) throw std::runtime_error("no metric " + std::string(name));
  return *m;
}

// numpy.percentile's default (linear): rank p * (n - 1) between the two nearest ranks,
// written out here independently of the library.
double reference_percentile(std::vector<double> v, double p) {
  std::sort(v.begin(), v.end());
  const double rank = p * static_cast<double>(v.size() - 1);
  const double lo = std::floor(rank), hi = std::ceil(rank);
  return v[static_cast<std::size_t>(lo)] + (v[static_cast<std::size_t>(hi)] - v[static_cast<std::size_t>(lo)]) * (rank - lo);
}

const nnprof::Diagnostic* diagnostic_about(const nnprof::Profile& p, std::string_view name) {
  for (const auto& d : p.diagnostics)
    if (d.kind == nnprof::DiagnosticKind::MetricsIncomplete && d.name != nnprof::kNone && p.str(d.name) == name) return &d;
  return nullptr;
}

TEST_F(Metrics, CounterGaugeAndHistogramByName) {
  nnprof::Profiler p;
  auto m = p.metrics();
  m.increment("batches");
  m.increment("batches");
  m.increment("batches", 3);
  m.set("lr", 0.1);
  m.set("lr", 0.05);
  m.record("loss", 2.0);
  m.record("loss", 1.0);
  m.record("loss", 1.5);
  const nnprof::Profile prof = p.snapshot();
  ASSERT_EQ(prof.metrics.size(), 3U);
  // Sorted by name.
  EXPECT_EQ(prof.str(prof.metrics[0].name), "batches");
  EXPECT_EQ(prof.str(prof.metrics[1].name), "loss");
  EXPECT_EQ(prof.str(prof.metrics[2].name), "lr");

  const auto& batches = metric(prof, "batches");
  EXPECT_EQ(batches.kind, nnprof::MetricKind::Counter);
  EXPECT_EQ(batches.summary.count, 3U);
  EXPECT_DOUBLE_EQ(batches.summary.sum, 5.0);
  EXPECT_DOUBLE_EQ(batches.summary.last, 5.0);
  ASSERT_EQ(batches.points.size(), 3U);
  // A counter's points are its running total.
  EXPECT_DOUBLE_EQ(batches.points[0].value, 1.0);
  EXPECT_DOUBLE_EQ(batches.points[1].value, 2.0);
  EXPECT_DOUBLE_EQ(batches.points[2].value, 5.0);
  EXPECT_LE(batches.points[0].time_ns, batches.points[1].time_ns);
  EXPECT_LE(batches.points[2].time_ns, prof.meta.duration_ns);

  const auto& lr = metric(prof, "lr");
  EXPECT_EQ(lr.kind, nnprof::MetricKind::Gauge);
  EXPECT_DOUBLE_EQ(lr.summary.last, 0.05);
  EXPECT_DOUBLE_EQ(lr.summary.max, 0.1);
  EXPECT_DOUBLE_EQ(lr.points[1].value, 0.05);

  const auto& loss = metric(prof, "loss");
  EXPECT_EQ(loss.kind, nnprof::MetricKind::Histogram);
  EXPECT_EQ(loss.summary.count, 3U);
  EXPECT_DOUBLE_EQ(loss.summary.min, 1.0);
  EXPECT_DOUBLE_EQ(loss.summary.max, 2.0);
  EXPECT_DOUBLE_EQ(loss.summary.mean, 1.5);
  EXPECT_DOUBLE_EQ(loss.summary.stddev, 0.5);
  EXPECT_DOUBLE_EQ(loss.summary.p50, 1.5);
  EXPECT_DOUBLE_EQ(loss.summary.last, 1.5);
  EXPECT_EQ(loss.summary.percentile_points, 3U);
  EXPECT_EQ(loss.summary.points_dropped, 0U);
  EXPECT_TRUE(prof.diagnostics.empty() || diagnostic_about(prof, "loss") == nullptr);
  EXPECT_FALSE(prof.empty());
}

TEST_F(Metrics, PercentilesMatchASortedReference) {
  nnprof::Profiler p;
  // 1..100: numpy.percentile gives 50.5, 90.1, 95.05 and 99.01.
  std::vector<double> hundred(100);
  std::iota(hundred.begin(), hundred.end(), 1.0);
  std::shuffle(hundred.begin(), hundred.end(), std::mt19937(7));
  nnprof::Histogram h = p.metrics().histogram("one_to_hundred");
  for (double v : hundred) h.record(v);
  // 10,007 log-normal values, with duplicates.
  std::mt19937_64 rng(42);
  std::lognormal_distribution<double> dist(0.0, 1.5);
  std::vector<double> values;
  for (int i = 0; i < 10'007; ++i) values.push_back(std::round(dist(rng) * 1000.0) / 1000.0);
  for (double v : values) p.metrics().record("latency", v);

  const nnprof::Profile prof = p.snapshot();
  const auto& a = metric(prof, "one_to_hundred").summary;
  EXPECT_DOUBLE_EQ(a.p50, 50.5);
  EXPECT_DOUBLE_EQ(a.p90, 90.1);
  EXPECT_DOUBLE_EQ(a.p95, 95.05);
  EXPECT_DOUBLE_EQ(a.p99, 99.01);
  EXPECT_DOUBLE_EQ(a.min, 1.0);
  EXPECT_DOUBLE_EQ(a.max, 100.0);
  EXPECT_DOUBLE_EQ(a.mean, 50.5);
  EXPECT_NEAR(a.stddev, 29.011491975882016, 1e-9);  // sample standard deviation of 1..100

  const auto& b = metric(prof, "latency").summary;
  EXPECT_EQ(b.count, values.size());
  EXPECT_EQ(b.percentile_points, values.size());
  EXPECT_DOUBLE_EQ(b.p50, reference_percentile(values, 0.50));
  EXPECT_DOUBLE_EQ(b.p90, reference_percentile(values, 0.90));
  EXPECT_DOUBLE_EQ(b.p95, reference_percentile(values, 0.95));
  EXPECT_DOUBLE_EQ(b.p99, reference_percentile(values, 0.99));
  const double mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(values.size());
  double ss = 0.0;
  for (double v : values) ss += (v - mean) * (v - mean);
  EXPECT_NEAR(b.mean, mean, 1e-9 * mean);
  EXPECT_NEAR(b.stddev, std::sqrt(ss / static_cast<double>(values.size() - 1)), 1e-9 * b.stddev);
  EXPECT_DOUBLE_EQ(b.min, *std::min_element(values.begin(), values.end()));
  EXPECT_DOUBLE_EQ(b.max, *std::max_element(values.begin(), values.end()));

  EXPECT_DOUBLE_EQ(nnprof::model::percentile({7.0}, 0.99), 7.0);
  EXPECT_DOUBLE_EQ(nnprof::model::percentile({1.0, 2.0}, 0.5), 1.5);
}

TEST_F(Metrics, VarianceStaysExactForLargeValuesWithASmallSpread) {
  nnprof::Profiler p;
  // 1e9 + {0, 1, 2, 3}: a naive sum of squares loses the spread entirely.
  for (double d : {0.0, 1.0, 2.0, 3.0}) p.metrics().record("big", 1e9 + d);
  const nnprof::Profile prof = p.snapshot();
  const auto& s = metric(prof, "big").summary;
  EXPECT_DOUBLE_EQ(s.mean, 1e9 + 1.5);
  EXPECT_NEAR(s.stddev, std::sqrt(5.0 / 3.0), 1e-9);
}

TEST_F(Metrics, ThreadsMergeIntoOneSeries) {
  nnprof::Profiler p;
  constexpr int kThreads = 4, kEach = 10'000;
  const nnprof::Counter tokens = p.metrics().counter("tokens", "tokens");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      for (int i = 0; i < kEach; ++i) {
        tokens.increment(2);
        p.metrics().record("per_thread", static_cast<double>(t));
      }
    });
  for (auto& t : threads) t.join();
  const nnprof::Profile prof = p.snapshot();
  const auto& c = metric(prof, "tokens");
  EXPECT_EQ(c.unit, "tokens");
  EXPECT_EQ(c.summary.count, std::uint64_t{kThreads * kEach});
  EXPECT_DOUBLE_EQ(c.summary.last, 2.0 * kThreads * kEach);
  ASSERT_EQ(c.points.size(), std::size_t{kThreads * kEach});
  EXPECT_DOUBLE_EQ(c.points.back().value, 2.0 * kThreads * kEach);
  for (std::size_t i = 1; i < c.points.size(); ++i) ASSERT_LE(c.points[i - 1].time_ns, c.points[i].time_ns);
  const auto& h = metric(prof, "per_thread").summary;
  EXPECT_EQ(h.count, std::uint64_t{kThreads * kEach});
  EXPECT_DOUBLE_EQ(h.mean, 1.5);
  EXPECT_DOUBLE_EQ(h.min, 0.0);
  EXPECT_DOUBLE_EQ(h.max, 3.0);
  // Population variance of {0,1,2,3} equally often is 1.25; sample: 1.25 * n / (n - 1).
  const double n = kThreads * kEach;
  EXPECT_NEAR(h.stddev, std::sqrt(1.25 * n / (n - 1)), 1e-9);
}

TEST_F(Metrics, MeasureTimeRecordsNanoseconds) {
  nnprof::Profiler p;
  {
    auto t = p.metrics().measure_time("sleep");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  nnprof::Histogram h = p.metrics().histogram("sleep");  // the same histogram, by handle
  std::uint64_t ns = 0;
  {
    auto t = h.measure_time();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ns = t.stop();
    EXPECT_EQ(t.stop(), 0U) << "a second stop records nothing";
  }
  EXPECT_GE(ns, 5'000'000U);
  const nnprof::Profile prof = p.snapshot();
  const auto& m = metric(prof, "sleep");
  EXPECT_EQ(m.unit, "ns");
  ASSERT_EQ(m.summary.count, 2U);
  EXPECT_GE(m.points[0].value, 20e6);
  EXPECT_LT(m.points[0].value, 2e9);
  EXPECT_DOUBLE_EQ(m.points[1].value, static_cast<double>(ns));
}

TEST_F(Metrics, MisuseIsIgnoredCountedAndReported) {
  nnprof::Profiler p;
  auto m = p.metrics();
  m.increment("steps");
  m.set("steps", 4.0);                                     // a gauge call on a counter
  m.record("steps", 1.0);                                  // a histogram call on a counter
  m.increment("steps", std::numeric_limits<double>::quiet_NaN());  // not finite
  EXPECT_THROW((void)m.gauge("steps"), nnprof::Error);
  try {
    (void)m.histogram("steps");
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("already a counter"), std::string::npos) << e.what();
  }
  const nnprof::Profile prof = p.snapshot();
  const auto& s = metric(prof, "steps").summary;
  EXPECT_EQ(s.count, 1U);
  EXPECT_DOUBLE_EQ(s.last, 1.0);
  const nnprof::Diagnostic* d = diagnostic_about(prof, "steps");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, 3U);
  EXPECT_NE(d->message.find("ignored"), std::string::npos);
}

TEST_F(Metrics, PointsBeyondTheCapAreDroppedCountedAndStatisticsStayExact) {
  nnprof::ProfilerOptions o;
  o.memory_cap_bytes = 256 * 1024;  // four 64 KiB chunks: about 10,900 records
  o.measure_overhead = false;
  nnprof::Profiler p(o);
  constexpr int kN = 100'000;
  const nnprof::Histogram h = p.metrics().histogram("x");
  for (int i = 0; i < kN; ++i) h.record(static_cast<double>(i % 100));
  const nnprof::Profile prof = p.snapshot();
  const auto& m = metric(prof, "x");
  EXPECT_EQ(m.summary.count, std::uint64_t{kN});
  EXPECT_DOUBLE_EQ(m.summary.mean, 49.5);
  EXPECT_DOUBLE_EQ(m.summary.max, 99.0);
  EXPECT_LT(m.points.size(), std::size_t{kN});
  EXPECT_GT(m.points.size(), 0U);
  EXPECT_EQ(m.summary.points_dropped, kN - m.points.size());
  EXPECT_EQ(m.summary.percentile_points, m.points.size());
  const nnprof::Diagnostic* d = diagnostic_about(prof, "x");
  ASSERT_NE(d, nullptr);
  EXPECT_EQ(d->count, m.summary.points_dropped);
  EXPECT_EQ(d->severity, nnprof::Severity::Warning);
  // Metric points are not memory events: nothing else claims to be lost.
  EXPECT_EQ(prof.completeness.events_dropped, 0U);
}

TEST_F(Metrics, StatisticsOnlySessionKeepsStatisticsButNoPoints) {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler p(o);
  for (int i = 1; i <= 10; ++i) p.metrics().record("v", i);
  const nnprof::Profile prof = p.snapshot();
  const auto& m = metric(prof, "v");
  EXPECT_EQ(m.summary.count, 10U);
  EXPECT_DOUBLE_EQ(m.summary.mean, 5.5);
  EXPECT_TRUE(m.points.empty());
  EXPECT_EQ(m.summary.percentile_points, 0U);
  EXPECT_EQ(m.summary.points_dropped, 10U);
  bool said = false;
  for (const auto& d : prof.diagnostics)
    said = said || (d.kind == nnprof::DiagnosticKind::MetricsIncomplete && d.severity == nnprof::Severity::Info);
  EXPECT_TRUE(said);
}

TEST_F(Metrics, DisabledProfilerRecordsNothing) {
  nnprof::Profiler p;
  const nnprof::Counter c = p.metrics().counter("c");
  p.set_enabled(false);
  c.increment();
  p.metrics().increment("c");
  { auto t = p.metrics().measure_time("t"); }
  p.set_enabled(true);
  const nnprof::Profile prof = p.snapshot();
  EXPECT_EQ(metric(prof, "c").summary.count, 0U);
  EXPECT_EQ(nnprof::find_metric(prof, "t"), nullptr);
  nnprof::Counter inert;
  inert.increment();  // a default handle is harmless
}

TEST_F(Metrics, SummaryOfANameAndTheGlobalFunctions) {
  nnprof::increment("global_test_counter", 2);
  nnprof::set("global_test_gauge", 7.5);
  nnprof::record("global_test_hist", 3.0);
  { auto t = nnprof::measure_time("global_test_timer"); }
  const auto s = nnprof::global_profiler().metrics().summary("global_test_counter");
  ASSERT_TRUE(s.has_value());
  EXPECT_DOUBLE_EQ(s->last, 2.0);
  EXPECT_DOUBLE_EQ(nnprof::global_profiler().metrics().summary("global_test_gauge")->last, 7.5);
  EXPECT_EQ(nnprof::global_profiler().metrics().summary("global_test_timer")->count, 1U);
  EXPECT_FALSE(nnprof::global_profiler().metrics().summary("never_recorded").has_value());
  nnprof::save_metrics(path("global.json"));
  nnprof::plot_metrics(path("global.png"));
  EXPECT_TRUE(fs::exists(path("global.json")));
  EXPECT_TRUE(fs::exists(path("global.png")));
}

nnprof::Profile sample_profile() {
  nnprof::Profiler p;
  const nnprof::Gauge memory = p.metrics().gauge("memory_used", "bytes");
  {
    NNPROF_SCOPE_IN(p, "step");
    for (int i = 0; i < 50; ++i) {
      p.metrics().increment("batches");
      memory.set(1000.0 + i * 10);
      p.metrics().record("loss", 2.0 / (1 + i));
    }
  }
  return p.snapshot();
}

TEST_F(Metrics, StoreRoundTripsEveryMetricExactly) {
  const nnprof::Profile prof = sample_profile();
  prof.save(path("m.nnprof"));
  const nnprof::Profile back = nnprof::Profile::load(path("m.nnprof"));
  ASSERT_EQ(back.metrics.size(), 3U);
  EXPECT_EQ(back.metrics, prof.metrics);
  EXPECT_EQ(back, prof);
  const nnprof::QueryResult q = nnprof::query_profile(
      path("m.nnprof"),
      "select s.str, m.kind, m.unit, m.count, count(p.id) from metric m join strings s on s.id = m.name_id "
      "join metric_point p on p.metric_id = m.id group by m.id order by m.id");
  ASSERT_EQ(q.rows.size(), 3U);
  EXPECT_EQ(q.rows[0], (std::vector<std::string>{"batches", "counter", "", "50", "50"}));
  EXPECT_EQ(q.rows[2], (std::vector<std::string>{"memory_used", "gauge", "bytes", "50", "50"}));
}

TEST_F(Metrics, FilesWithoutMetricTablesLoad) {
  const nnprof::Profile prof = sample_profile();
  prof.save(path("old.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("old.nnprof").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DROP TABLE metric_point; DROP TABLE metric;", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  const nnprof::Profile back = nnprof::Profile::load(path("old.nnprof"));
  EXPECT_TRUE(back.metrics.empty());
  EXPECT_EQ(back.scopes, prof.scopes);
}

TEST_F(Metrics, DamagedMetricRowsAreRefused) {
  sample_profile().save(path("bad.nnprof"));
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path("bad.nnprof").c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE metric SET name_id = 99999 WHERE id = 0", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  try {
    (void)nnprof::Profile::load(path("bad.nnprof"));
    FAIL() << "a metric naming a missing string must not load";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("metric 0 names a missing string"), std::string::npos) << e.what();
  }
}

TEST_F(Metrics, ChromeTraceHasACounterTrackPerMetric) {
  const nnprof::Profile prof = sample_profile();
  std::ostringstream out;
  nnprof::io::write_chrome_trace(prof, out);
  const auto j = nlohmann::json::parse(out.str());
  std::vector<double> batches, memory;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] != "C") continue;
    if (e["name"] == "metric: batches") batches.push_back(e["args"]["value"]);
    if (e["name"] == "metric: memory_used (bytes)") memory.push_back(e["args"]["value"]);
  }
  ASSERT_EQ(batches.size(), 50U);
  EXPECT_DOUBLE_EQ(batches.front(), 1.0);
  EXPECT_DOUBLE_EQ(batches.back(), 50.0);
  ASSERT_EQ(memory.size(), 50U);
  EXPECT_DOUBLE_EQ(memory.back(), 1490.0);
}

TEST_F(Metrics, JsonReportAndSaveMetricsCarrySeriesAndSummaries) {
  const nnprof::Profile prof = sample_profile();
  std::ostringstream out;
  nnprof::io::write_json_report(prof, out);
  const auto report = nlohmann::json::parse(out.str());
  ASSERT_TRUE(report.contains("metrics"));
  ASSERT_EQ(report["metrics"].size(), 3U);
  const auto& loss = report["metrics"][1];
  EXPECT_EQ(loss["name"], "loss");
  EXPECT_EQ(loss["kind"], "histogram");
  EXPECT_EQ(loss["summary"]["count"], 50);
  EXPECT_DOUBLE_EQ(loss["summary"]["max"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(loss["summary"]["p50"].get<double>(), metric(prof, "loss").summary.p50);
  EXPECT_EQ(loss["points"].size(), 50U);

  nnprof::save_metrics(prof, path("metrics.json"));
  std::ifstream in(path("metrics.json"));
  const auto doc = nlohmann::json::parse(in);
  EXPECT_EQ(doc["schema"], "nnprof-metrics");
  ASSERT_EQ(doc["metrics"].size(), 3U);
  const auto& batches = doc["metrics"][0];
  EXPECT_EQ(batches["name"], "batches");
  EXPECT_EQ(batches["kind"], "counter");
  EXPECT_DOUBLE_EQ(batches["summary"]["last"].get<double>(), 50.0);
  EXPECT_EQ(batches["points"][49][0].get<std::uint64_t>(), metric(prof, "batches").points[49].time_ns);
  EXPECT_DOUBLE_EQ(batches["points"][49][1].get<double>(), 50.0);

  EXPECT_THROW(nnprof::save_metrics(prof, path("no/such/dir/metrics.json")), nnprof::Error);
}

TEST_F(Metrics, TextMarkdownAndHtmlReportsShowTheSummaryTable) {
  const nnprof::Profile prof = sample_profile();
  std::ostringstream text, md, html;
  nnprof::io::write_text_report(prof, text);
  nnprof::io::write_markdown_report(prof, md);
  nnprof::io::write_html_report(prof, html);
  EXPECT_NE(text.str().find("\nMetrics\n-------"), std::string::npos);
  EXPECT_NE(text.str().find("memory_used"), std::string::npos);
  EXPECT_NE(text.str().find("1.46 KiB"), std::string::npos) << "gauge in bytes, last value 1490 B";
  EXPECT_NE(md.str().find("## Metrics"), std::string::npos);
  EXPECT_NE(md.str().find("| loss"), std::string::npos);
  const std::string h = html.str();
  EXPECT_NE(h.find("<section id=\"metrics\">"), std::string::npos);
  EXPECT_NE(h.find("href=\"#metrics\""), std::string::npos);
  EXPECT_NE(h.find("id=\"metrics-table\""), std::string::npos);
  // One chart per metric: two lines over time and one distribution.
  std::size_t charts = 0;
  for (std::size_t at = h.find("class=\"mem metric\""); at != std::string::npos; at = h.find("class=\"mem metric\"", at + 1))
    ++charts;
  EXPECT_EQ(charts, 3U);
  EXPECT_NE(h.find("aria-label=\"distribution of loss\""), std::string::npos);
  EXPECT_NE(h.find("aria-label=\"batches over time\""), std::string::npos);
  // A profile without metrics has no such section.
  std::ostringstream plain;
  nnprof::io::write_text_report(nnprof::Profile{}, plain);
  EXPECT_EQ(plain.str().find("Metrics"), std::string::npos);
}

TEST_F(Metrics, PlotMetricsWritesARealPng) {
  const nnprof::Profile prof = sample_profile();
  nnprof::plot_metrics(prof, path("metrics.png"));
  cairo_surface_t* img = cairo_image_surface_create_from_png(path("metrics.png").c_str());
  ASSERT_EQ(cairo_surface_status(img), CAIRO_STATUS_SUCCESS) << "libpng could not read the file back";
  EXPECT_EQ(cairo_image_surface_get_width(img), 1000);
  EXPECT_EQ(cairo_image_surface_get_height(img), 3 * 240);
  cairo_surface_flush(img);
  const unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  // Pixels that are neither white nor grey: the blue lines and bars of each panel.
  std::size_t blue = 0, non_white = 0;
  std::vector<std::size_t> blue_per_panel(3, 0);
  for (int y = 0; y < cairo_image_surface_get_height(img); ++y)
    for (int x = 0; x < 1000; ++x) {
      const auto* px = data + y * stride + x * 4;  // B, G, R, (A) in native-endian ARGB32/RGB24
      if (px[0] != 255 || px[1] != 255 || px[2] != 255) ++non_white;
      if (px[0] > 180 && px[2] < 120) {
        ++blue;
        ++blue_per_panel[static_cast<std::size_t>(y / 240)];
      }
    }
  cairo_surface_destroy(img);
  EXPECT_GT(non_white, 10'000U);
  EXPECT_GT(blue, 1'000U);
  for (std::size_t panel = 0; panel < 3; ++panel) EXPECT_GT(blue_per_panel[panel], 100U) << "panel " << panel;
}

TEST_F(Metrics, PlotMetricsErrorsSayWhatToDo) {
  try {
    nnprof::plot_metrics(sample_profile(), path("missing/dir/metrics.png"));
    FAIL() << "an unwritable path must throw";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing/dir/metrics.png"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("missing")));
  try {
    nnprof::plot_metrics(nnprof::Profile{}, path("empty.png"));
    FAIL() << "a profile without metrics has nothing to plot";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("no metric"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(path("empty.png")));
}

// ---- readable numbers and text that fits in the PNG --------------------------------------

TEST(MetricValues, LargeValuesAreWholeNumbersWithSeparatorsNotScientific) {
  using nnprof::report::format_metric_value;
  EXPECT_EQ(format_metric_value(37'050.3, "tokens/s"), "37,050 tokens/s");  // was 3.705e+04
  EXPECT_EQ(format_metric_value(37'050.0, "tokens/s"), "37,050 tokens/s");
  EXPECT_EQ(format_metric_value(1'234'567.89, ""), "1,234,568");
  EXPECT_EQ(format_metric_value(-1'234.6, "x"), "-1,235 x");
  EXPECT_EQ(format_metric_value(999.97, "ms"), "1000 ms");
  EXPECT_EQ(format_metric_value(0.31274, "nats"), "0.3127 nats");
  EXPECT_EQ(format_metric_value(2.5e-5, ""), "2.500e-05");
  EXPECT_EQ(format_metric_value(3e15 + 0.5, ""), "3.000e+15");
  EXPECT_EQ(format_metric_value(1'500, "ns"), "1.50 µs");
  EXPECT_EQ(format_metric_value(std::nan(""), "x"), "n/a");
}

TEST(MetricValues, AxisLabelsAreShortWithSeparatorsOrDecimalPrefixes) {
  using nnprof::report::format_axis_value;
  EXPECT_EQ(format_axis_value(37'050.3, "tokens/s"), "37,050 tokens/s");
  EXPECT_EQ(format_axis_value(105'000.0, "tokens/s"), "105,000 tokens/s");  // the demo's "05e+04 tokens/s"
  EXPECT_EQ(format_axis_value(1'234'567.0, "tokens/s"), "1.23M tokens/s");
  EXPECT_EQ(format_axis_value(999'999.7, ""), "1M");
  EXPECT_EQ(format_axis_value(45.6e9, "FLOP"), "45.6G FLOP");
  EXPECT_EQ(format_axis_value(-2.5e6, "x"), "-2.5M x");
  EXPECT_EQ(format_axis_value(2e24, ""), "2e+24");  // beyond E: no prefix left
  EXPECT_EQ(format_axis_value(999.7, ""), "1,000");
  EXPECT_EQ(format_axis_value(12.345, "tokens/s"), "12.3 tokens/s");
  EXPECT_EQ(format_axis_value(0.0, ""), "0");
  EXPECT_EQ(format_axis_value(0.5, "loss"), "0.5 loss");
  EXPECT_EQ(format_axis_value(1'500, "ns"), "1.50 µs");
  EXPECT_EQ(format_axis_value(3.0 * 1024 * 1024, "bytes"), "3.00 MiB");
  EXPECT_EQ(format_axis_value(std::nan(""), "x"), "n/a");
}

// Metrics whose labels and titles do not fit the old fixed layout: values in the tens of
// thousands with a long unit, and a name longer than the image is wide.
nnprof::Profile wide_text_profile() {
  nnprof::Profiler p;
  const nnprof::Gauge throughput = p.metrics().gauge("throughput", "tokens/s");
  const nnprof::Gauge long_name = p.metrics().gauge(std::string(150, 'n') + "_" + std::string(150, 'm'), "bytes");
  const nnprof::Histogram latency = p.metrics().histogram("latency", "ns");
  for (int i = 0; i < 40; ++i) {
    throughput.set(37'050.3 + 1'000.0 * i);
    long_name.set(1e6 + i);
    latency.record(1e6 * (1 + i % 7));
  }
  return p.snapshot();
}

TEST_F(Metrics, PngLayoutFitsTheWidestLabelAndEveryTitle) {
  const nnprof::Profile prof = wide_text_profile();
  const nnprof::io::MetricPngLayout layout = nnprof::io::metrics_png_layout(prof);
  ASSERT_EQ(layout.panels.size(), 3U);
  const nnprof::io::MetricPngPanelText& throughput = layout.panels[2];  // metrics are sorted by name
  ASSERT_FALSE(throughput.title.empty());
  EXPECT_TRUE(throughput.title[0].starts_with("throughput (gauge)")) << throughput.title[0];
  EXPECT_EQ(throughput.y_low, "37,050 tokens/s");
  EXPECT_EQ(throughput.y_high, "76,050 tokens/s");
  std::string title;
  for (const std::string& line : throughput.title) title += line;
  EXPECT_NE(title.find("min 37,050 tokens/s"), std::string::npos) << title;
  EXPECT_EQ(title.find("e+0"), std::string::npos) << title;

  // Every panel's plot starts right of its widest value label, with room to spare.
  EXPECT_GT(layout.widest_y_label, 60.0);  // "76,050 tokens/s" at 10.5 px
  EXPECT_GE(layout.left_margin, layout.widest_y_label + 12.0);
  EXPECT_LE(layout.left_margin, layout.widest_y_label + 30.0);

  // Titles fit; one too long for a line is split into name and statistics, the name cut with "…".
  EXPECT_GT(layout.title_limit, 900.0);
  EXPECT_LE(layout.widest_title, layout.title_limit);
  const nnprof::io::MetricPngPanelText& long_name = layout.panels[1];
  ASSERT_EQ(long_name.title.size(), 2U);
  EXPECT_TRUE(long_name.title[0].starts_with("nnnnnnnn")) << long_name.title[0];
  EXPECT_TRUE(long_name.title[0].ends_with("…")) << long_name.title[0];
  EXPECT_TRUE(long_name.title[1].starts_with("n=40, last ")) << long_name.title[1];
  // A histogram's value axis counts points; its horizontal one spans the values.
  const nnprof::io::MetricPngPanelText& latency = layout.panels[0];
  EXPECT_EQ(latency.y_low, "0");
  EXPECT_EQ(latency.x_left, "1.00 ms");
  EXPECT_EQ(latency.x_right, "7.00 ms");
}

TEST_F(Metrics, PngTextStaysInsideTheImage) {
  nnprof::plot_metrics(wide_text_profile(), path("wide.png"));
  cairo_surface_t* img = cairo_image_surface_create_from_png(path("wide.png").c_str());
  ASSERT_EQ(cairo_surface_status(img), CAIRO_STATUS_SUCCESS);
  cairo_surface_flush(img);
  const unsigned char* data = cairo_image_surface_get_data(img);
  const int stride = cairo_image_surface_get_stride(img);
  const int width = cairo_image_surface_get_width(img), height = cairo_image_surface_get_height(img);
  // Nothing is drawn in the outer 6 pixels on either side: no label or title runs off an edge.
  std::size_t edge = 0, inside = 0;
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      const auto* px = data + y * stride + x * 4;
      const bool white = px[0] == 255 && px[1] == 255 && px[2] == 255;
      if (white) continue;
      if (x < 6 || x >= width - 6) {
        ++edge;
      } else {
        ++inside;
      }
    }
  cairo_surface_destroy(img);
  EXPECT_EQ(edge, 0U);
  EXPECT_GT(inside, 10'000U);
}

}  // namespace
