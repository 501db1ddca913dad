// The text report, the rankings it is built from, and the exporter registry, on a
// profile built by hand so that every expected number is known exactly.
#include "io/profile_reports.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analysis/rankings.hpp"
#include "cpu_profile_fixture.hpp"
#include "io/exporter_registry.hpp"
#include "io/format.hpp"
#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"
#include "text_search.hpp"

namespace nnprof {
namespace {

using testing::contains;
using testing::kMs;
using testing::kUs;
using testing::lines_of;
using testing::scope_stats;
using testing::tree_node;

// Per-call statistics with the mean (and median) of `sum` over `count` and p99 at `max`.
DurationStats stats(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max,
                    std::uint64_t p95) {
  const double mean = static_cast<double>(sum) / static_cast<double>(count);
  return {count, sum, min, max, mean, 0.0, mean > 0 ? static_cast<std::uint64_t>(mean) : 0, p95, max};
}

// The exporters' profile (testing::export_profile) with the awkward scope replaced by one
// that instrumentation dominates, one memory counter and one diagnostic:
//
//   train_step (100 ms, 10 calls)
//     forward (60 ms)  > matmul (40 ms, 1000 calls)
//     backward (30 ms)
//     tiny (0.5 ms, 5000 calls of 100 ns: below 10 x 20 ns of overhead)
//
// Self times: 9.5 + 20 + 40 + 30 + 0.5 = 100 ms = the instrumented time.
Profile sample_profile() {
  Profile p = testing::export_profile();
  p.strings[testing::kWeird] = "tiny";
  p.scopes[0].self_ns = 9'500 * kUs;  // train_step takes the time the awkward scope gives up
  p.call_tree[1].self_ns = p.scopes[0].self_ns;
  p.scopes[4] = scope_stats(testing::kWeird, 500 * kUs, stats(5000, 500 * kUs, 80, 2 * kUs, 150));
  p.call_tree[5] = tree_node(5, 1, 2, {}, p.scopes[4]);

  p.memory_counters.resize(1);  // activations: 1.50 KiB now, peak 3 MiB, 12 MiB allocated
  p.memory = {1536, 3 * testing::kMiB, 42 * kMs};

  Completeness& c = p.completeness;
  c.scopes_recorded = 6030;
  c.spans_kept = 4096;
  c.spans_dropped = 1934;
  c.overhead_total_ns = 120'600;
  p.diagnostics.resize(1);  // spans dropped
  p.diagnostics[0].count = 1934;
  p.diagnostics[0].message = "1,934 spans were dropped after the memory cap of 64.0 MiB was reached.";
  return p;
}

std::string report_of(const Profile& profile) {
  std::ostringstream out;
  io::write_text_report(profile, out);
  return out.str();
}

// Headings are underlined with '=' (the title) or '-' (a section), from the first column.
bool is_heading_rule(const std::string& line) {
  return !line.empty() && (line.find_first_not_of('-') == std::string::npos ||
                           line.find_first_not_of('=') == std::string::npos);
}

// The lines of the section whose heading starts with `title`, up to the next heading.
std::vector<std::string> section(const std::string& text, std::string_view title) {
  const std::vector<std::string> lines = lines_of(text);
  std::vector<std::string> result;
  bool inside = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const bool heading = i + 1 < lines.size() && is_heading_rule(lines[i + 1]) && !lines[i].empty();
    if (heading && inside) break;
    if (heading && lines[i].starts_with(title)) inside = true;
    if (inside) result.push_back(lines[i]);
  }
  return result;
}

// Table cells are separated by at least two spaces and never contain two in a row.
std::vector<std::string> cells(const std::string& line) {
  std::vector<std::string> result;
  std::size_t pos = line.find_first_not_of(' ');
  while (pos != std::string::npos) {
    std::size_t end = line.find("  ", pos);
    result.push_back(line.substr(pos, end == std::string::npos ? std::string::npos : end - pos));
    pos = end == std::string::npos ? end : line.find_first_not_of(' ', end);
  }
  return result;
}

// The rows of the first table in `lines`: those after its dash rule with as many cells as
// its header.
std::vector<std::vector<std::string>> table_rows(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> rows;
  std::size_t columns = 0;
  for (std::size_t i = 2; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (columns == 0) {
      if (line.starts_with("  -") && line.find_first_not_of(" -") == std::string::npos) {
        columns = cells(lines[i - 1]).size();
      }
      continue;
    }
    if (line.empty()) break;
    if (auto row = cells(line); row.size() == columns) rows.push_back(std::move(row));
  }
  return rows;
}

using Row = std::vector<std::string>;

TEST(TextReport, AnnotationsAreListedInTheHeader) {
  Profile p = testing::export_profile();
  std::ostringstream plain;
  io::write_text_report(p, plain);
  EXPECT_EQ(plain.str().find("Annotations:"), std::string::npos);
  p.annotations = {{"batch_size", "32"}, {"git_commit", "8d2e793"}};
  std::ostringstream out;
  io::write_text_report(p, out);
  const std::string text = out.str();
  const std::size_t at = text.find("  Annotations:\n    batch_size = 32\n    git_commit = 8d2e793\n");
  ASSERT_NE(at, std::string::npos) << text.substr(0, 800);
  EXPECT_LT(at, text.find("Hot paths")) << "in the header, before the first section";
}

TEST(TextReport, SampleProfileIsConsistent) {
  // Precondition of every expected percentage below.
  EXPECT_EQ(sample_profile().instrumented_ns(), 100 * kMs);
}

TEST(TextReport, HeaderStatesHostClockAndInstrumentedTime) {
  const auto header = section(report_of(sample_profile()), "nnprof summary");
  ASSERT_GE(header.size(), 2u);
  EXPECT_EQ(header[1], "==============");
  EXPECT_TRUE(contains(header, "Host:               testhost (Linux 6.1.0)"));
  EXPECT_TRUE(contains(header, "CPU:                Test CPU @ 3.0GHz, 8 logical CPUs"));
  EXPECT_TRUE(contains(header, "Threads:            2"));
  EXPECT_TRUE(contains(header, "Session duration:   250 ms"));
  EXPECT_TRUE(contains(header, "Clock source:       tsc, 0.25 ns per tick"));
  EXPECT_TRUE(contains(header, "Instrumented time:  100 ms"));
  EXPECT_TRUE(contains(header, "sum over threads of top-level scope time"));
  EXPECT_TRUE(contains(header, "denominator"));
}

TEST(TextReport, SectionsAppearInOrder) {
  const std::string text = report_of(sample_profile());
  std::size_t previous = 0;
  for (const char* title :
       {"nnprof summary", "Hot paths by total time", "Hot paths by self time", "Most called",
        "Call hierarchy", "Memory", "Insights", "Completeness and cost", "Diagnostics"}) {
    const std::size_t at = text.find(std::string(title) + "\n");
    ASSERT_NE(at, std::string::npos) << title;
    EXPECT_GE(at, previous) << title;
    previous = at;
  }
}

TEST(TextReport, HotPathsByTotalTime) {
  const auto rows = table_rows(section(report_of(sample_profile()), "Hot paths by total time"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (Row{"1", "train_step", "10", "100 ms", "100.0%", "10.0 ms", "9.00 ms",
                          "12.0 ms", "12.0 ms"}));
  EXPECT_EQ(rows[1], (Row{"2", "forward", "10", "60.0 ms", "60.0%", "6.00 ms", "5.50 ms",
                          "7.00 ms", "6.90 ms"}));
  EXPECT_EQ(rows[2], (Row{"3", "matmul", "1,000", "40.0 ms", "40.0%", "40.0 µs", "35.0 µs",
                          "90.0 µs", "52.0 µs"}));
  EXPECT_EQ(rows[3], (Row{"4", "backward", "10", "30.0 ms", "30.0%", "3.00 ms", "2.80 ms",
                          "3.50 ms", "3.40 ms"}));
  EXPECT_EQ(rows[4], (Row{"5", "tiny", "5,000", "500 µs", "0.5%", "100 ns", "80 ns", "2.00 µs",
                          "150 ns"}));
}

TEST(TextReport, HotPathsBySelfTime) {
  const auto rows = table_rows(section(report_of(sample_profile()), "Hot paths by self time"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (Row{"1", "matmul", "40.0 ms", "40.0%", "1,000", "40.0 µs"}));
  EXPECT_EQ(rows[1], (Row{"2", "backward", "30.0 ms", "30.0%", "10", "3.00 ms"}));
  EXPECT_EQ(rows[2], (Row{"3", "forward", "20.0 ms", "20.0%", "10", "2.00 ms"}));
  EXPECT_EQ(rows[3], (Row{"4", "train_step", "9.50 ms", "9.5%", "10", "950 µs"}));
  EXPECT_EQ(rows[4], (Row{"5", "tiny", "500 µs", "0.5%", "5,000", "100 ns"}));
}

TEST(TextReport, MostCalledBreaksTiesByName) {
  const auto rows = table_rows(section(report_of(sample_profile()), "Most called"));
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (Row{"1", "tiny", "5,000", "500 µs", "100 ns"}));
  EXPECT_EQ(rows[1], (Row{"2", "matmul", "1,000", "40.0 ms", "40.0 µs"}));
  EXPECT_EQ(rows[2], (Row{"3", "backward", "10", "30.0 ms", "3.00 ms"}));
  EXPECT_EQ(rows[3], (Row{"4", "forward", "10", "60.0 ms", "6.00 ms"}));
  EXPECT_EQ(rows[4], (Row{"5", "train_step", "10", "100 ms", "10.0 ms"}));
}

TEST(TextReport, CallHierarchySortsChildrenByTotalAndIndents) {
  const auto lines = section(report_of(sample_profile()), "Call hierarchy");
  const auto rows = table_rows(lines);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (Row{"train_step", "10", "100 ms", "9.50 ms", "10.0 ms", "9.00 ms",
                          "12.0 ms", "100.0%"}));
  EXPECT_EQ(rows[1], (Row{"forward", "10", "60.0 ms", "20.0 ms", "6.00 ms", "5.50 ms",
                          "7.00 ms", "60.0%"}));
  EXPECT_EQ(rows[2], (Row{"matmul", "1,000", "40.0 ms", "40.0 ms", "40.0 µs", "35.0 µs",
                          "90.0 µs", "40.0%"}));
  EXPECT_EQ(rows[3], (Row{"backward", "10", "30.0 ms", "30.0 ms", "3.00 ms", "2.80 ms",
                          "3.50 ms", "30.0%"}));
  EXPECT_EQ(rows[4], (Row{"tiny", "5,000", "500 µs", "500 µs", "100 ns", "80 ns", "2.00 µs",
                          "0.5%"}));
  // Two spaces of indent per level, after the table's own two-space margin.
  const auto column_of = [&](std::string_view name) {
    for (const std::string& line : lines) {
      const std::size_t at = line.find(std::string(name) + " ");
      if (at != std::string::npos && line.find_first_not_of(' ') == at) return at;
    }
    return std::string::npos;
  };
  EXPECT_EQ(column_of("train_step"), 2u);
  EXPECT_EQ(column_of("forward"), 4u);
  EXPECT_EQ(column_of("matmul"), 6u);
  EXPECT_EQ(column_of("backward"), 4u);
  EXPECT_FALSE(contains(lines, "not shown"));
}

TEST(TextReport, MemoryCountersAndTopAllocatingScopes) {
  const auto lines = section(report_of(sample_profile()), "Memory");
  const auto rows = table_rows(lines);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0],
            (Row{"activations", "1.50 KiB", "3.00 MiB", "12.0 MiB", "12.0 MiB", "300", "299"}));
  EXPECT_TRUE(contains(
      lines, "All counters: current 1.50 KiB, peak 3.00 MiB at 42.0 ms after the session start."));

  // The second table of the section: bytes per call is 12 MiB / 1000 calls.
  std::vector<std::string> rest;
  bool after = false;
  for (const std::string& line : lines) {
    after = after || line.find("Top allocating scopes") != std::string::npos;
    if (after) rest.push_back(line);
  }
  const auto allocating = table_rows(rest);
  ASSERT_EQ(allocating.size(), 1u);
  EXPECT_EQ(allocating[0], (Row{"1", "matmul", "12.0 MiB", "300", "12.3 KiB"}));
}

TEST(TextReport, NoMemorySectionWithoutCounters) {
  Profile p = sample_profile();
  p.memory_counters.clear();
  EXPECT_TRUE(section(report_of(p), "Memory").empty());
}

TEST(TextReport, NoHeapSectionWithoutHeapTracking) {
  const std::string text = report_of(sample_profile());
  EXPECT_TRUE(section(text, "Heap").empty());
  EXPECT_EQ(text.find("Leak verdict"), std::string::npos);
}

TEST(TextReport, HeapSummaryVerdictAndPeak) {
  const std::string text = report_of(testing::heap_profile());
  EXPECT_LT(text.find("\nThreads\n"), text.find("\nHeap\n"));
  EXPECT_LT(text.find("\nHeap\n"), text.find("\nInsights\n"));
  const auto lines = section(text, "Heap");
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(contains(lines, "  Tracked by:         nnprof::MemoryTracking (in-process)"));
  EXPECT_TRUE(contains(lines, "  Allocated:          163 MiB in 185 allocations; 145 MiB freed in 169 frees"));
  EXPECT_TRUE(contains(lines, "  Peak:               22.0 MiB at 949 ms after the session start, on main (TID 2001), "
                              "in train_step > forward > matmul"));
  EXPECT_TRUE(contains(lines, "  At the end:         18.0 MiB in 16 blocks: 10.0 MiB in 13 blocks leaked "
                              "(unreachable), 8.00 MiB in 3 blocks still reachable"));
  EXPECT_TRUE(contains(lines, "  RSS:                initial 48.0 MiB, peak 59.0 MiB (VmHWM), final 57.0 MiB"));
  EXPECT_TRUE(contains(lines, "  Timeline:           50 samples, every 20.0 ms"));
  EXPECT_TRUE(contains(lines, "  Leak verdict:       Memory leak detected: 13 blocks (10.0 MiB) were unreachable at "
                              "the end; heap in use grew steadily over the second half of the run (500 ms to 980 "
                              "ms): by 4.62 MiB, 9.62 MiB/s; RSS grew steadily too: by 4.62 MiB, 9.62 MiB/s."));
}

TEST(TextReport, HeapTopAllocatorsAndLeakSites) {
  const auto lines = section(report_of(testing::heap_profile()), "Heap");
  EXPECT_TRUE(contains(lines, "  Top allocators (heap bytes allocated while the scope was the innermost open one):"));
  const auto allocators = table_rows(lines);
  ASSERT_EQ(allocators.size(), 6u);
  EXPECT_EQ(allocators[0],
            (Row{"1", "load_batch", "80.0 MiB", "49.0%", "13", "8.00 MiB", "8.00 MiB in 4 blocks", "16.0 MiB"}));
  EXPECT_EQ(allocators[1], (Row{"2", "matmul", "40.0 MiB", "24.5%", "40", "1.00 MiB", "0 B", "1.00 MiB"}));
  EXPECT_EQ(allocators[4],
            (Row{"5", "optimizer_step", "10.0 MiB", "6.1%", "10", "1.00 MiB", "10.0 MiB in 10 blocks", "10.0 MiB"}));
  std::size_t at = 0;
  while (at < lines.size() && !lines[at].starts_with("  Blocks still allocated at the end")) ++at;
  ASSERT_LT(at, lines.size());
  const auto sites = table_rows(std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(at), lines.end()));
  ASSERT_EQ(sites.size(), 4u);
  EXPECT_EQ(sites[0], (Row{"1", "train_step > optimizer_step",
                           "History::append(Tensor const&) (src/optim/history.cpp:42)", "10", "10.0 MiB", "leaked"}));
  EXPECT_EQ(sites[2], (Row{"3", "[outside any scope]", "init_logging() (src/log.cpp:12)", "2", "4.00 KiB",
                           "reachable"}));
  EXPECT_EQ(sites[3], (Row{"4", "load_batch", "Reader<Header>::parse(std::istream&) (src/data/reader.cpp:88)", "3",
                           "3.00 KiB", "leaked"}));
}

TEST(TextReport, HeapFindings) {
  const auto lines = section(report_of(testing::heap_profile()), "Heap");
  EXPECT_TRUE(contains(lines,
                       "  - [high] Memory hotspot: load_batch held up to 16.0 MiB live at once, 72.7% of the 22.0 "
                       "MiB heap peak (threshold 30.0%). It allocates 8.00 MiB per call (80.0 MiB over 10 calls), "
                       "far more than it holds at once: allocate the buffers once, outside the loop, and reuse them "
                       "across iterations, or take them from a pool."));
  EXPECT_TRUE(contains(lines, "  - [medium] Memory hotspot: optimizer_step held up to 10.0 MiB live at once, 45.4%"));
  EXPECT_TRUE(contains(lines,
                       "  - [medium] Memory leak: 10.0 MiB in 13 blocks (6.1% of the 163 MiB allocated; threshold "
                       "5.0%) were never freed, and nothing points to them any more. Free the blocks allocated at "
                       "History::append(Tensor const&) (src/optim/history.cpp:42) in train_step > optimizer_step "
                       "(10.0 MiB in 10 blocks), or give them an owner that frees them (a std::unique_ptr, a "
                       "container, an RAII wrapper)."));
  // Nothing past the thresholds: the report says which thresholds were not passed.
  Profile quiet = testing::heap_profile();
  for (ScopeStats& scope : quiet.scopes) scope.heap.peak_live_bytes = 0;
  quiet.heap.leaked_bytes = 0;
  EXPECT_TRUE(contains(section(report_of(quiet), "Heap"),
                       "  - No memory bottleneck: no scope held more than 30.0% of the heap peak, and no more than "
                       "5.0% of the bytes allocated were left unfreed."));
}

// ---- CPU samples ---------------------------------------------------------------------

TEST(TextReport, CpuSummaryAndTopFunctions) {
  const std::string text = report_of(testing::cpu_profile());
  EXPECT_LT(text.find("\nThreads\n"), text.find("\nCPU samples\n"));
  EXPECT_LT(text.find("\nCPU samples\n"), text.find("\nInsights\n"));
  const auto lines = section(text, "CPU samples");
  ASSERT_FALSE(lines.empty());
  EXPECT_TRUE(contains(lines, "  Sampling:           CPU time of each thread, 1000 Hz requested (one sample every 1.00 "
                              "ms), by perf_event; call stacks by libunwind"));
  EXPECT_TRUE(contains(lines, "  Samples:            14 samples (16.0 ms of CPU time) on 2 threads"));
  EXPECT_TRUE(contains(lines, "  Samples lost:       3 dropped (the sample buffer was full), 1 stack cut at the depth "
                              "limit, 1 without a stack"));
  const auto functions = table_rows(lines);
  ASSERT_EQ(functions.size(), 8u);
  EXPECT_EQ(functions[0], (Row{"1", "matmul", "train", "28.6%", "4", "6.00 ms", "64.3%", "9"}));
  EXPECT_EQ(functions[2], (Row{"3", "recurse", "train", "14.3%", "2", "2.00 ms", "14.3%", "2"}));
  EXPECT_EQ(functions[4], (Row{"5", "libfoo.so+0x7000", "libfoo.so", "7.1%", "1", "1.00 ms", "7.1%", "1"}));
  EXPECT_EQ(functions[6], (Row{"7", "main", "train", "0.0%", "0", "0 ns", "92.9%", "13"}));
  EXPECT_TRUE(contains(lines, "  - matmul: called from run_step (9 samples, 100.0%); calls dot (4 samples, 44.4%), "
                              "memcpy (1 sample, 11.1%)"));
  EXPECT_TRUE(contains(lines, "  - recurse: called from run_step (2 samples, 100.0%)"));
}

TEST(TextReport, CpuHotLinesScopesAndFindings) {
  const auto lines = section(report_of(testing::cpu_profile()), "CPU samples");
  std::size_t at = 0;
  while (at < lines.size() && !lines[at].starts_with("  Hot lines")) ++at;
  ASSERT_LT(at, lines.size());
  const auto hot = table_rows(std::vector<std::string>(lines.begin() + static_cast<std::ptrdiff_t>(at), lines.end()));
  ASSERT_GE(hot.size(), 3u);
  EXPECT_EQ(hot[0], (Row{"1", "model.cpp:31", "matmul", "4", "28.6%", "6.00 ms"}));
  EXPECT_EQ(hot[1], (Row{"2", "model.cpp:42", "dot", "4", "28.6%", "4.00 ms"}));
  EXPECT_EQ(hot[2], (Row{"3", "model.cpp:50", "recurse", "2", "14.3%", "2.00 ms"}));
  EXPECT_TRUE(contains(lines, "  train_step > forward         9  64.3%  11.0 ms  matmul 44.4%, dot 44.4%, memcpy 11.1%"));
  EXPECT_TRUE(contains(lines, "  [outside any scope]          2  14.3%  2.00 ms  [unknown] 50.0%"));
  EXPECT_TRUE(contains(lines, "  - Too few CPU samples to judge (14, at least 20 needed): sample longer or at a higher "
                              "rate."));
}

TEST(TextReport, NoCpuSectionWithoutSampling) {
  const std::string text = report_of(sample_profile());
  EXPECT_TRUE(section(text, "CPU samples").empty());
  EXPECT_EQ(text.find("Hot lines"), std::string::npos);
}

TEST(TextReport, Insights) {
  const auto lines = section(report_of(sample_profile()), "Insights");
  EXPECT_TRUE(
      contains(lines, "- The top 5 scopes by self time account for 100.0% of instrumented time."));
  EXPECT_TRUE(
      contains(lines, "- Highest self time: matmul, 40.0 ms (40.0% of instrumented time) in 1,000 calls."));
  EXPECT_TRUE(contains(lines,
                       "- Timings dominated by instrumentation cost (mean below 10 × 20.0 ns = "
                       "200 ns per call): tiny."));
}

TEST(TextReport, CompletenessAndCost) {
  const auto lines = section(report_of(sample_profile()), "Completeness and cost");
  EXPECT_TRUE(contains(lines, "Scopes recorded:    6,030"));
  EXPECT_TRUE(contains(lines,
                       "Spans:              4,096 kept, 1,934 dropped, 0 overwritten "
                       "(policy keep-first, memory cap 64.0 MiB)"));
  EXPECT_TRUE(contains(lines, "Events dropped:     0 memory events"));
  EXPECT_TRUE(contains(
      lines, "20.0 ns per scope × 6,030 scopes = 121 µs (0.1% of instrumented time)"));
  EXPECT_TRUE(contains(lines, "Statistics and the call tree are complete"));
  EXPECT_TRUE(contains(lines, "spans were dropped or overwritten"));
}

TEST(TextReport, StatisticsOnlySession) {
  Profile p = sample_profile();
  p.completeness.spans_enabled = false;
  EXPECT_TRUE(contains(section(report_of(p), "Completeness and cost"),
                       "Spans:              statistics only: no timeline recorded"));
}

TEST(TextReport, Diagnostics) {
  const auto lines = section(report_of(sample_profile()), "Diagnostics");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2], "  [" + std::string(to_string(Severity::Warning)) +
                          "] 1,934 spans were dropped after the memory cap of 64.0 MiB was "
                          "reached.");

  Profile clean = sample_profile();
  clean.diagnostics.clear();
  const auto none = section(report_of(clean), "Diagnostics");
  ASSERT_EQ(none.size(), 3u);
  EXPECT_EQ(none[2], "  none");
}

TEST(TextReport, EmptyProfilePrintsHeaderAndAHint) {
  const std::string text = report_of(Profile{});
  EXPECT_TRUE(text.starts_with("nnprof summary\n"));
  EXPECT_NE(text.find("\nNo scopes were recorded: wrap code in NNPROF_SCOPE(\"name\") or "
                      "profiler.start/stop.\n"),
            std::string::npos);
  for (const char* absent : {"Hot paths", "Most called", "Call hierarchy", "Memory", "Insights",
                             "Completeness", "Diagnostics"}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  }
}

TEST(TextReport, CountersWithoutScopesStillShowMemory) {
  Profile p = sample_profile();
  p.scopes.clear();
  p.call_tree.clear();
  const std::string text = report_of(p);
  EXPECT_NE(text.find("No scopes were recorded"), std::string::npos);
  EXPECT_EQ(text.find("Hot paths"), std::string::npos);
  EXPECT_EQ(table_rows(section(text, "Memory")).size(), 1u);
}

// A profile with one scope per tree node, so the report has scopes to show.
Profile profile_with_tree(std::vector<CallTreeNode> nodes) {
  Profile p;
  p.strings = {"n"};
  p.scopes = {scope_stats(0, kMs, stats(1, kMs, kMs, kMs, kMs))};
  p.call_tree = std::move(nodes);
  return p;
}

TEST(TextReport, CallHierarchyStopsAtDepth12) {
  const ScopeStats s = scope_stats(0, kMs, stats(1, kMs, kMs, kMs, kMs));
  std::vector<CallTreeNode> nodes(1);
  for (std::uint32_t id = 1; id <= 15; ++id) {
    nodes[id - 1].children = {id};
    nodes.push_back(tree_node(id, id - 1, id, {}, s));
  }
  const auto lines = section(report_of(profile_with_tree(std::move(nodes))), "Call hierarchy");
  EXPECT_EQ(table_rows(lines).size(), 12u);
  EXPECT_TRUE(contains(lines, "  3 nodes not shown: 3 deeper than 12 levels."));
}

TEST(TextReport, CallHierarchyStopsAt200Lines) {
  const ScopeStats s = scope_stats(0, kMs, stats(1, kMs, kMs, kMs, kMs));
  std::vector<CallTreeNode> nodes(1);
  for (std::uint32_t id = 1; id <= 250; ++id) {
    nodes[0].children.push_back(id);
    nodes.push_back(tree_node(id, 0, 1, {}, s));
  }
  const auto lines = section(report_of(profile_with_tree(std::move(nodes))), "Call hierarchy");
  EXPECT_EQ(table_rows(lines).size(), 200u);
  EXPECT_TRUE(contains(lines, "  50 nodes not shown: 50 beyond the first 200 lines."));
}

// ---- rankings -----------------------------------------------------------------------

std::vector<std::string> names(const Profile& p, const std::vector<const ScopeStats*>& scopes) {
  std::vector<std::string> result;
  for (const ScopeStats* s : scopes) result.push_back(p.str(s->name));
  return result;
}

TEST(Rankings, OrderAndLimit) {
  const Profile p = sample_profile();
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(p, analysis::top_by_total(p, 3)), (Names{"train_step", "forward", "matmul"}));
  EXPECT_EQ(names(p, analysis::top_by_self(p, 2)), (Names{"matmul", "backward"}));
  EXPECT_EQ(names(p, analysis::most_called(p, 100)),
            (Names{"tiny", "matmul", "backward", "forward", "train_step"}));
  EXPECT_TRUE(analysis::top_by_total(p, 0).empty());
  EXPECT_EQ(names(p, analysis::top_by_alloc_bytes(p, 10)), (Names{"matmul"}));
}

TEST(Rankings, TiesAreBrokenByName) {
  Profile p;
  p.strings = {"charlie", "alpha", "bravo"};
  const DurationStats same = stats(4, 8 * kMs, kMs, 3 * kMs, 3 * kMs);
  p.scopes = {scope_stats(0, kMs, same), scope_stats(1, kMs, same), scope_stats(2, kMs, same)};
  using Names = std::vector<std::string>;
  const Names alphabetical{"alpha", "bravo", "charlie"};
  EXPECT_EQ(names(p, analysis::top_by_total(p, 3)), alphabetical);
  EXPECT_EQ(names(p, analysis::top_by_self(p, 3)), alphabetical);
  EXPECT_EQ(names(p, analysis::most_called(p, 3)), alphabetical);
  EXPECT_EQ(names(p, analysis::top_by_total(p, 2)), (Names{"alpha", "bravo"}));
}

TEST(Rankings, ShareOfInstrumented) {
  const Profile p = sample_profile();
  EXPECT_DOUBLE_EQ(analysis::share_of_instrumented(p, 25 * kMs), 0.25);
  EXPECT_DOUBLE_EQ(analysis::share_of_instrumented(Profile{}, 25 * kMs), 0.0);
}

TEST(Rankings, HotPathConcentrationUsesSelfTime) {
  const Profile p = sample_profile();
  const analysis::Concentration two = analysis::hot_path_concentration(p, 2);
  EXPECT_EQ(two.top_n, 2u);
  EXPECT_DOUBLE_EQ(two.share, 0.70);  // matmul 40 ms + backward 30 ms of 100 ms
  const analysis::Concentration all = analysis::hot_path_concentration(p, 10);
  EXPECT_EQ(all.top_n, 5u);  // only 5 scopes exist
  EXPECT_DOUBLE_EQ(all.share, 1.0);  // totals would have summed to 230%
  const analysis::Concentration empty = analysis::hot_path_concentration(Profile{});
  EXPECT_EQ(empty.top_n, 0u);
  EXPECT_DOUBLE_EQ(empty.share, 0.0);
}

TEST(Rankings, InflatedByInstrumentation) {
  Profile p = sample_profile();
  using Names = std::vector<std::string>;
  EXPECT_EQ(names(p, analysis::inflated_by_instrumentation(p)), (Names{"tiny"}));
  // 2500 x 20 ns = 50 µs: matmul's 40 µs mean is now below it too; shortest mean first.
  EXPECT_EQ(names(p, analysis::inflated_by_instrumentation(p, 2500)), (Names{"tiny", "matmul"}));
  p.completeness.overhead_per_scope_ns = 0.0;
  EXPECT_TRUE(analysis::inflated_by_instrumentation(p).empty());
}

// ---- exporter registry --------------------------------------------------------------

TEST(Exporters, TextIsRegisteredByNameAndExtension) {
  const io::Exporter* text = io::find_exporter("text");
  ASSERT_NE(text, nullptr);
  EXPECT_EQ(text->name(), "text");
  EXPECT_EQ(text->extension(), ".txt");
  EXPECT_EQ(io::find_exporter("TEXT"), text);
  EXPECT_EQ(io::find_exporter("no-such-format"), nullptr);
  EXPECT_EQ(io::find_exporter_for_path("out/run.txt"), text);
  EXPECT_EQ(io::find_exporter_for_path("RUN.TXT"), text);
  EXPECT_EQ(io::find_exporter_for_path("run.no-such-extension"), nullptr);
  EXPECT_EQ(io::find_exporter_for_path("txt"), nullptr);
  bool listed = false;
  for (const io::Exporter* e : io::all_exporters()) listed = listed || e == text;
  EXPECT_TRUE(listed);
}

TEST(Exporters, TextExporterWritesTheTextReport) {
  const Profile p = sample_profile();
  std::ostringstream out;
  io::find_exporter("text")->write(p, out);
  EXPECT_EQ(out.str(), report_of(p));
}

}  // namespace
}  // namespace nnprof
