// Rankings of scopes (analysis/rankings) and the text exporter's place in the registry. What the
// text report says is tested per section (test_report_sections_*), how it is laid out by
// test_renderers, and the whole report by the golden test (test_report_golden).
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
#include "report/format.hpp"
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
