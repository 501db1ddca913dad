// Seeds 002 (kitsune's profiler) and 003 (cookbook's PerformanceProfiler): the metrics as CSV
// (points and summaries), measure_time as a metric and a scope that analyze_bottlenecks sees,
// the throughput rates of the JSON report, and the process's RAM as get_current_memory().
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_report.hpp"
#include "io/metrics_csv.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

class MetricSeed002 : public nnprof::testing::TestDirectory {
 protected:
  MetricSeed002() : TestDirectory("seed002") {}
};

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// The records of a CRLF-terminated CSV text, each split at commas (the tests' names need no quoting).
std::vector<std::vector<std::string>> csv_rows(const std::string& text) {
  std::vector<std::vector<std::string>> rows;
  std::size_t start = 0;
  while (start < text.size()) {
    const std::size_t end = text.find("\r\n", start);
    EXPECT_NE(end, std::string::npos) << "every record ends with CRLF";
    if (end == std::string::npos) break;
    std::vector<std::string> fields;
    std::stringstream line(text.substr(start, end - start));
    std::string field;
    while (std::getline(line, field, ',')) fields.push_back(field);
    if (!text.empty() && text[end - 1] == ',') fields.emplace_back();
    rows.push_back(fields);
    start = end + 2;
  }
  return rows;
}

void busy_for(std::chrono::milliseconds d) {
  const auto end = std::chrono::steady_clock::now() + d;
  volatile std::uint64_t sink = 0;
  while (std::chrono::steady_clock::now() < end) sink = sink + 1;
}

TEST_F(MetricSeed002, CsvByExtensionHasOneRowPerPoint) {
  nnprof::Profiler p;
  const nnprof::Metrics m = p.metrics();
  m.increment("batches");
  m.increment("batches", 2);
  m.record("loss", 0.5);
  m.record("loss", 0.25);
  m.record("loss", 0.125);
  m.set("lr", 3e-4);
  const std::string csv = path("metrics.csv");
  const std::string csv_upper = path("METRICS.CSV");
  const std::string json = path("metrics.json");
  m.save_metrics(csv);
  m.save_metrics(csv_upper);
  m.save_metrics(json);

  const auto rows = csv_rows(read_file(csv));
  ASSERT_EQ(rows.size(), 1U + 2U + 3U + 1U);
  EXPECT_EQ(read_file(csv).substr(0, nnprof::io::kMetricPointsCsvHeader.size()), nnprof::io::kMetricPointsCsvHeader);
  // Metrics by name; a counter's value is its running total.
  EXPECT_EQ(rows[1], (std::vector<std::string>{"batches", "counter", "", rows[1][3], "1", "0"}));
  EXPECT_EQ(rows[2][4], "3");
  EXPECT_EQ(rows[3][0], "loss");
  EXPECT_EQ(rows[3][1], "histogram");
  EXPECT_EQ(rows[3][4], "0.5");
  EXPECT_EQ(rows[5][4], "0.125");
  EXPECT_LE(std::stoull(rows[3][3]), std::stoull(rows[4][3])) << "points in time order";
  EXPECT_EQ(rows[6][0], "lr");
  EXPECT_EQ(rows[6][1], "gauge");
  EXPECT_DOUBLE_EQ(std::stod(rows[6][4]), 3e-4);
  EXPECT_EQ(read_file(csv_upper), read_file(csv)) << "the extension in any case";
  EXPECT_TRUE(nlohmann::json::accept(read_file(json))) << "other extensions stay JSON";
}

TEST_F(MetricSeed002, SummaryCsvHasOneRowPerMetric) {
  nnprof::Profiler p;
  const nnprof::Metrics m = p.metrics();
  for (const double v : {1.0, 2.0, 3.0, 4.0}) m.record("latency", v);
  m.increment("steps", 5);
  const std::string csv = path("summary.csv");
  m.save_metrics_summary(csv);
  const auto rows = csv_rows(read_file(csv));
  ASSERT_EQ(rows.size(), 3U);
  ASSERT_EQ(rows[0].size(), 16U);
  EXPECT_EQ(rows[0][0], "metric");
  EXPECT_EQ(rows[0][9], "p50");
  const auto& latency = rows[1];
  ASSERT_EQ(latency.size(), 16U);
  EXPECT_EQ(latency[0], "latency");
  EXPECT_EQ(latency[3], "4");       // count
  EXPECT_EQ(latency[4], "10");      // sum
  EXPECT_EQ(latency[5], "1");       // min
  EXPECT_EQ(latency[6], "4");       // max
  EXPECT_EQ(latency[7], "2.5");     // mean
  EXPECT_EQ(latency[9], "2.5");     // p50, numpy's linear interpolation
  EXPECT_EQ(latency[13], "4");      // percentile_points
  EXPECT_EQ(latency[14], "4");      // last
  EXPECT_EQ(latency[15], "0");      // points_dropped
  EXPECT_EQ(rows[2][0], "steps");
  EXPECT_EQ(rows[2][4], "5");
}

TEST_F(MetricSeed002, SummaryCsvLeavesPercentilesEmptyWithoutPoints) {
  nnprof::ProfilerOptions options;
  options.record_spans = false;  // statistics only: no point is kept
  nnprof::Profiler p(options);
  p.metrics().record("x", 2.0);
  const nnprof::Profile prof = p.snapshot();
  std::ostringstream out;
  nnprof::io::write_metric_summary_csv(prof, out);
  const auto rows = csv_rows(out.str());
  ASSERT_EQ(rows.size(), 2U);
  if (prof.metrics.at(0).summary.percentile_points == 0) {
    ASSERT_EQ(rows[1].size(), 16U);
    EXPECT_EQ(rows[1][9], "");
    EXPECT_EQ(rows[1][12], "");
    EXPECT_EQ(rows[1][15], "1") << "the dropped point is counted";
  }
  EXPECT_EQ(rows[1][3], "1");
}

TEST_F(MetricSeed002, CsvQuotesNamesAndNeutralisesFormulas) {
  nnprof::Profiler p;
  p.metrics().record("a,b", 1.0);
  p.metrics().record("=cmd", 1.0);
  std::ostringstream out;
  nnprof::io::write_metric_points_csv(p.snapshot(), out);
  EXPECT_NE(out.str().find("\"a,b\",histogram"), std::string::npos);
  EXPECT_NE(out.str().find("'=cmd,histogram"), std::string::npos);
}

TEST_F(MetricSeed002, MeasureTimeIsAlsoAScope) {
  nnprof::Profiler p;
  std::uint64_t ns = 0;
  {
    auto t = p.metrics().measure_time("forward");
    busy_for(std::chrono::milliseconds(5));
    ns = t.stop();
  }
  const nnprof::Histogram h = p.metrics().histogram("backward", "ns");
  { auto t = h.measure_time(); busy_for(std::chrono::milliseconds(2)); }
  const auto forward = p.stats("forward");
  ASSERT_TRUE(forward.has_value()) << "measure_time by name opens a scope";
  EXPECT_EQ(forward->time.count, 1U);
  // The metric and the scope measure the same interval (from the same start tick).
  EXPECT_NEAR(static_cast<double>(forward->total_ns), static_cast<double>(ns), 0.05 * static_cast<double>(ns) + 1e5);
  ASSERT_TRUE(p.stats("backward").has_value()) << "so does a histogram handle's measure_time";
  EXPECT_EQ(p.metrics().summary("backward")->count, 1U);
}

TEST_F(MetricSeed002, AnalyzeBottlenecksNamesTheSlowestMeasuredPhase) {
  nnprof::Profiler p;
  for (int i = 0; i < 3; ++i) {
    { auto t = p.metrics().measure_time("data_loading"); busy_for(std::chrono::milliseconds(2)); }
    { auto t = p.metrics().measure_time("forward"); busy_for(std::chrono::milliseconds(12)); }
    { auto t = p.metrics().measure_time("backward"); busy_for(std::chrono::milliseconds(4)); }
  }
  const std::vector<nnprof::Bottleneck> found = p.analyze_bottlenecks();
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().type, nnprof::BottleneckType::SlowOperation);
  EXPECT_EQ(found.front().name, "forward");
  EXPECT_EQ(p.metrics().summary("forward")->count, 3U);
}

TEST_F(MetricSeed002, MeasureTimeOfAnotherKindRecordsNeither) {
  nnprof::Profiler p;
  p.metrics().increment("phase");
  { auto t = p.metrics().measure_time("phase"); }
  EXPECT_FALSE(p.stats("phase").has_value()) << "a misused name opens no scope either";
}

TEST_F(MetricSeed002, JsonThroughputHasIterationsPerSecond) {
  nnprof::Profiler p;
  for (int i = 0; i < 4; ++i) {
    NNPROF_SCOPE_IN(p, "iteration");
    busy_for(std::chrono::milliseconds(1));
    p.add_items("iteration", 32);
  }
  { NNPROF_SCOPE_IN(p, "no_items"); }
  const nnprof::Profile prof = p.snapshot();
  std::ostringstream out;
  nnprof::io::write_json_report(prof, out);
  const nlohmann::json j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j["throughput"].contains("iteration"));
  EXPECT_FALSE(j["throughput"].contains("no_items"));
  const nlohmann::json& t = j["throughput"]["iteration"];
  const double seconds = t["total_ns"].get<double>() / 1e9;
  EXPECT_EQ(t["items"], 128);
  EXPECT_EQ(t["calls"], 4);
  EXPECT_DOUBLE_EQ(t["items_per_second"].get<double>(), 128 / seconds);
  EXPECT_DOUBLE_EQ(t["calls_per_second"].get<double>(), 4 / seconds);
  EXPECT_DOUBLE_EQ(t["items_per_second"].get<double>() / t["calls_per_second"].get<double>(), 32.0)
      << "samples per iteration";
}

TEST(MetricCurrentMemory, GetCurrentMemoryIsTheProcessRss) {
  nnprof::Profiler p;
  p.record_alloc("weights", 1024);
  const std::uint64_t before = nnprof::get_current_memory();
  EXPECT_GT(before, 1024U * 1024U) << "a process's RSS is more than a MiB";
  EXPECT_EQ(p.current_memory(), 1024U) << "current_memory stays the named counters";
  // Touching 64 MiB makes them resident: RSS grows by about that much.
  std::vector<char> block(64U << 20);
  for (std::size_t i = 0; i < block.size(); i += 4096) block[i] = static_cast<char>(i);
  const std::uint64_t after = p.current_rss();
  EXPECT_GE(after, before + (48U << 20));
  EXPECT_EQ(block[4096], static_cast<char>(4096));
  // /proc/self/statm's resident pages agree to within a few MiB.
  std::ifstream statm("/proc/self/statm");
  std::uint64_t size = 0, resident = 0;
  statm >> size >> resident;
  const double statm_bytes = static_cast<double>(resident) * static_cast<double>(sysconf(_SC_PAGESIZE));
  EXPECT_NEAR(static_cast<double>(nnprof::get_current_memory()), statm_bytes, 8.0 * (1 << 20));
}

}  // namespace
