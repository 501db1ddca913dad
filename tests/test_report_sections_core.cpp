// The core sections of the profile report as blocks, before any format: what each says about
// hand-made profiles (titles, cells with their raw values, row order, sentences), the limits
// it honours and what it says when it has nothing. These carry over the facts that the text,
// Markdown and HTML report tests asserted about the same sections.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "analysis/advisor.hpp"
#include "analysis/bottleneck.hpp"
#include "analysis/bottlenecks.hpp"
#include "analysis/compute.hpp"
#include "analysis/facts.hpp"
#include "report/format.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/profile.hpp"
#include "report/cells.hpp"
#include "report/charts/html_charts.hpp"
#include "report/report_data.hpp"
#include "report/sections.hpp"
#include "report_blocks.hpp"
#include "sample_profiles.hpp"

namespace nnprof {
namespace {

using analysis::Sentence;
using report::Cell;
using report::Section;
using report::Table;
using testing::kMs;
using namespace report_testing;

// ---- helpers ------------------------------------------------------------------------

// The one section `builder` appends for `profile` (fails the test when there is none).
Section only_section(report::SectionBuilder builder, const Profile& profile, const report::ReportLimits& limits = {}) {
  const report::ReportData data = report::analyse(profile, limits);
  std::vector<Section> out = build(builder, data);
  EXPECT_EQ(out.size(), 1u);
  return out.empty() ? Section{} : std::move(out.front());
}

// label -> rendered value, in order.
std::vector<std::pair<std::string, std::string>> facts_of(const Profile& profile, const report::Facts& facts) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const report::Fact& fact : facts.items) out.emplace_back(fact.label, render::text_of(profile, fact.value));
  return out;
}

std::string fact(const Profile& profile, const report::Facts& facts, std::string_view label) {
  for (const report::Fact& f : facts.items) {
    if (f.label == label) return render::text_of(profile, f.value);
  }
  ADD_FAILURE() << "no fact " << label;
  return {};
}

// A profile of `n` scopes, one call of 1 ms each.
Profile many_scopes(std::uint32_t n) {
  Profile p;
  for (std::uint32_t i = 0; i < n; ++i) {
    p.strings.push_back("scope" + std::to_string(i));
    p.scopes.push_back(testing::scope_stats(i, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0}));
  }
  return p;
}

// A profile with one scope and the call tree `nodes`.
Profile profile_with_tree(std::vector<CallTreeNode> nodes) {
  Profile p;
  p.strings = {"n"};
  p.scopes = {testing::scope_stats(0, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0})};
  p.call_tree = std::move(nodes);
  return p;
}

// ---- cells --------------------------------------------------------------------------

TEST(ReportCells, NumbersKeepTheirRawValues) {
  const Cell d = report::duration_cell(std::uint64_t{40 * kMs});
  EXPECT_EQ(d.text, "40.0 ms");
  EXPECT_DOUBLE_EQ(d.value, 40e6);
  EXPECT_FALSE(d.bar);
  EXPECT_EQ(report::bytes_cell(std::uint64_t{3072}).text, "3.00 KiB");
  EXPECT_DOUBLE_EQ(report::bytes_cell(std::uint64_t{3072}).value, 3072.0);
  EXPECT_EQ(report::count_cell(1000).text, "1,000");
  const Cell share = report::share_cell(1, 4);
  EXPECT_EQ(share.text, "25.0%");
  EXPECT_DOUBLE_EQ(share.value, 0.25);
  EXPECT_TRUE(share.bar);
  // A share of nothing: "n/a", no bar, sorted as zero.
  const Cell none = report::share_cell(1, 0);
  EXPECT_EQ(none.text, "n/a");
  EXPECT_FALSE(none.bar);
  EXPECT_DOUBLE_EQ(none.value, 0.0);
  EXPECT_EQ(report::fraction_cell(0.0004).text, "<0.1%");
}

TEST(ReportCells, FunctionNamesAreReadableWithTheSignatureAsTitle) {
  const std::string full = "void ns::gemm<ns::Avx512, 1, 16>(int, float const*) [clone .constprop.0]";
  const Cell readable = report::function_cell(full, false);
  EXPECT_EQ(readable.text, "ns::gemm<ns::Avx512, 1, 16>");
  EXPECT_EQ(readable.title, full);
  EXPECT_TRUE(readable.name);
  const Cell whole = report::function_cell(full, true);
  EXPECT_EQ(whole.text, full);
  EXPECT_TRUE(whole.title.empty());
  // A C name is its own readable form: no title.
  EXPECT_TRUE(report::function_cell("memcpy", false).title.empty());
}

TEST(ReportCells, ScopeNamesAreCapped) {
  Profile p;
  p.strings = {std::string(5000, 'x'), "short"};
  const Cell capped = report::scope_cell(p, 0);
  EXPECT_LT(capped.text.size(), 300u);
  EXPECT_NE(capped.text.find("more bytes"), std::string::npos);
  EXPECT_FALSE(capped.title.empty());
  EXPECT_LE(capped.title.size(), report::kTextDisplayLimit + 100);
  const Cell plain = report::scope_cell(p, 1, "root > short");
  EXPECT_EQ(plain.text, "short");
  EXPECT_EQ(plain.title, "root > short");
  EXPECT_TRUE(plain.name);
}

TEST(ReportCells, TopOfSaysWhatALimitCut) {
  const Profile p;
  EXPECT_EQ(render::text_of(p, report::top_of(30, 40, "scopes")), "Top 30 of 40 scopes.");
  EXPECT_TRUE(report::top_of(5, 5, "scopes").empty());
}

// ---- about and summary --------------------------------------------------------------

TEST(ReportSections, AboutStatesHostCpuClockAndInstrumentedTime) {
  // Carried over: the text header's and the Markdown system information's facts.
  Profile p = testing::export_profile();
  const report::ReportData data = report::analyse(p);
  const report::Facts about = report::sections::about(data);
  EXPECT_EQ(fact(p, about, "Host"), "testhost (Linux 6.1.0)");
  EXPECT_EQ(fact(p, about, "CPU"), "Test CPU @ 3.0GHz, 8 logical CPUs");
  EXPECT_EQ(fact(p, about, "Compiler"), "GCC 12.2.0");
  EXPECT_EQ(fact(p, about, "Command"), "./train --epochs 1 | tee log.txt");
  EXPECT_EQ(fact(p, about, "Process ID"), "4242");
  EXPECT_EQ(fact(p, about, "nnprof version"), "0.1.0");
  EXPECT_EQ(fact(p, about, "Threads"), "2");
  EXPECT_EQ(fact(p, about, "Session duration"), "250 ms");
  EXPECT_EQ(fact(p, about, "Clock source"), "tsc, 0.25 ns per tick");
  // One line each: what instrumented time is, the summary's card says (ReportSections.SummaryCardsCarryUnits).
  EXPECT_EQ(fact(p, about, "Instrumented time"), "100 ms");
  for (const auto& [label, value] : facts_of(p, about)) EXPECT_EQ(label.find("annotation"), std::string::npos);
}

TEST(ReportSections, AnnotationsAreATableOfKeysAndValues) {
  Profile p = testing::export_profile();
  EXPECT_TRUE(build(report::sections::annotations, report::analyse(p)).empty());
  p.annotations = {{"batch_size", "32"}, {"note", "a | b"}};
  const Section s = only_section(report::sections::annotations, p);
  EXPECT_EQ(s.id, "annotations");
  EXPECT_TRUE(says(p, s, "Profiler::annotate"));
  const Table* t = table_of(s, "annotations-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"Key", "Value"}));
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"batch_size", "32"}, {"note", "a | b"}}));
}

TEST(ReportSections, AboutOfAnEmptyProfileSaysUnknown) {
  const Profile p;
  const report::Facts about = report::sections::about(report::analyse(p));
  EXPECT_EQ(fact(p, about, "Host"), "unknown");
  EXPECT_EQ(fact(p, about, "CPU"), "unknown");
  EXPECT_EQ(fact(p, about, "Instrumented time").substr(0, 4), "0 ns");
}

TEST(ReportSections, SummaryCardsCarryUnits) {
  // Carried over from the HTML report's summary cards.
  const Profile p = testing::rich_profile();
  const Section s = only_section(report::sections::overview, p);
  EXPECT_EQ(s.id, "summary");
  EXPECT_EQ(s.title, "Summary");
  const auto cards = blocks_of<report::Cards>(s);
  ASSERT_EQ(cards.size(), 1u);
  const auto card = [&](std::string_view label) {
    for (const report::Card& c : cards[0]->items) {
      if (c.label == label) return c;
    }
    ADD_FAILURE() << "no card " << label;
    return report::Card{};
  };
  EXPECT_EQ(card("Session duration").value, "123 ms");
  EXPECT_EQ(card("Instrumented time").value, "120 ms");
  // The denominator of every percentage of instrumented time, said where the number is.
  EXPECT_EQ(card("Instrumented time").detail, "top-level scopes summed over threads; the 100% of every percentage");
  EXPECT_EQ(card("Scopes recorded").value, "7");
  EXPECT_EQ(card("Scopes recorded").detail, "4 distinct names");
  EXPECT_EQ(card("Threads").value, "2");
  EXPECT_EQ(card("Threads").detail, "1 exited");
  EXPECT_EQ(card("Peak memory").value, "4.00 KiB");
  EXPECT_EQ(card("Peak memory").detail, "at 51.5 ms, over 1 named counter");
  EXPECT_EQ(card("Spans kept").value, "7");
  EXPECT_EQ(card("Spans kept").detail, "3 dropped · 0 overwritten");
  EXPECT_EQ(card("Instrumentation overhead").value, "26.4 ns / scope");
  EXPECT_EQ(card("Instrumentation overhead").detail, "185 ns in total = <0.1% of instrumented time");
  EXPECT_TRUE(paragraphs(p, s).empty());  // scopes were recorded: no hint
}

TEST(ReportSections, SummaryOfAnEmptyProfileGivesTheHint) {
  const Profile p;
  const Section s = only_section(report::sections::overview, p);
  EXPECT_EQ(paragraphs(p, s),
            (std::vector<std::string>{"No scopes were recorded: wrap code in NNPROF_SCOPE(\"name\") or "
                                      "profiler.start/stop."}));
}

// ---- bottlenecks and recommendations ------------------------------------------------

TEST(ReportSections, BottlenecksAreTheFindingsOfTheAnalysis) {
  const Profile p = testing::export_profile();
  const report::ReportData data = report::analyse(p);
  const std::vector<Section> out = build(report::sections::bottlenecks, data);
  ASSERT_EQ(out.size(), 1u);
  const auto findings = blocks_of<report::Findings>(out[0]);
  ASSERT_EQ(findings.size(), 1u);
  ASSERT_EQ(findings[0]->items.size(), data.bottlenecks.size());
  for (std::size_t i = 0; i < data.bottlenecks.size(); ++i) {
    EXPECT_EQ(findings[0]->items[i].title, analysis::title(data.bottlenecks[i].kind));
    EXPECT_EQ(findings[0]->items[i].severity, analysis::to_string(data.bottlenecks[i].severity));
    EXPECT_EQ(findings[0]->items[i].description, data.bottlenecks[i].description);
  }
  EXPECT_EQ(render::text_of(p, findings[0]->none), render::text_of(p, analysis::no_bottlenecks(p)));
  const Profile empty;
  EXPECT_TRUE(build(report::sections::bottlenecks, report::analyse(empty)).empty());
}

TEST(ReportSections, RecommendationsCarryGainEvidenceAndSteps) {
  const Profile p = testing::export_profile();
  const report::ReportData data = report::analyse(p);
  const Section s = only_section(report::sections::recommendations, p);
  EXPECT_TRUE(says(p, s, "Amdahl's law"));
  const auto lists = blocks_of<report::Recommendations>(s);
  ASSERT_EQ(lists.size(), 1u);
  ASSERT_EQ(lists[0]->items.size(), data.advice.size());
  for (std::size_t i = 0; i < data.advice.size(); ++i) {
    EXPECT_EQ(lists[0]->items[i].title, data.advice[i].title);
    EXPECT_EQ(lists[0]->items[i].gain, analysis::speedup_summary(data.advice[i]));
    EXPECT_EQ(lists[0]->items[i].steps, data.advice[i].steps);
  }
  EXPECT_EQ(lists[0]->none, analysis::no_advice());
  const Profile empty;
  EXPECT_TRUE(build(report::sections::recommendations, report::analyse(empty)).empty());
}

// ---- hot paths, most called, allocators ---------------------------------------------

TEST(ReportSections, HotPathsByTotalTime) {
  // Carried over: the text/Markdown "by total time" rows and the HTML hot table's columns.
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::hot_paths, p);
  EXPECT_EQ(s.title, "Hot paths");
  const auto subheadings = blocks_of<report::Subheading>(s);
  ASSERT_EQ(subheadings.size(), 2u);
  EXPECT_EQ(subheadings[0]->title, "By total time");
  EXPECT_EQ(subheadings[1]->title, "By self time");
  EXPECT_TRUE(says(p, s, "Total is inclusive"));
  EXPECT_FALSE(says(p, s, "Top 5 of"));  // every scope shown
  const Table* t = table_of(s, "hot-total");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->style, Table::Style::Sortable);
  EXPECT_FALSE(t->filter_label.empty());
  EXPECT_EQ(headers(*t), (Row{"#", "Scope", "Calls", "Total", "% of instrumented time", "Self", "Avg", "p50", "p95",
                              "p99", "Min", "Max", "Items", "Items/s", "Allocated"}));
  std::vector<std::string> keys;
  for (const report::Column& c : t->columns) keys.push_back(c.key);
  EXPECT_EQ(keys, (Row{"rank", "scope", "calls", "total", "pct", "self", "mean", "p50", "p95", "p99", "min", "max",
                       "item-count", "items", "alloc"}));
  EXPECT_EQ(t->columns[1].align, report::Align::Left);
  EXPECT_EQ(t->columns[3].align, report::Align::Right);
  ASSERT_EQ(t->rows.size(), 5u);
  const ScopeStats& train = p.scopes[0];
  EXPECT_EQ(texts(t->rows[0]), (Row{"1", "train_step", "10", "100 ms", "100.0%", "5.00 ms", "10.0 ms",
                                    report::format_duration(train.time.p50_ns), "12.0 ms",
                                    report::format_duration(train.time.p99_ns), "9.00 ms", "12.0 ms", "320",
                                    "3,200 items/s", "0 B"}));
  EXPECT_DOUBLE_EQ(t->rows[0][3].value, 100e6);
  EXPECT_DOUBLE_EQ(t->rows[0][4].value, 1.0);
  EXPECT_TRUE(t->rows[0][4].bar);
  EXPECT_DOUBLE_EQ(t->rows[0][13].value, 3200.0);
  EXPECT_TRUE(t->rows[0][1].name);
  const Row names{t->rows[0][1].text, t->rows[1][1].text, t->rows[2][1].text, t->rows[3][1].text, t->rows[4][1].text};
  EXPECT_EQ(names, (Row{"train_step", "forward", "matmul", "backward", testing::kWeirdName}));
  EXPECT_EQ(texts(t->rows[2]).at(12), "2,000");            // matmul's items
  EXPECT_EQ(texts(t->rows[2]).at(13), "50,000 items/s");
  EXPECT_EQ(texts(t->rows[2]).at(14), "12.0 MiB");
  // No items: a dash, sorted as zero.
  EXPECT_EQ(t->rows[1][12].text, "-");
  EXPECT_DOUBLE_EQ(t->rows[1][13].value, 0.0);
  EXPECT_EQ(t->rows[1][13].text, "-");
}

TEST(ReportSections, HotPathsBySelfTimeBreakTiesByName) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::hot_paths, p);
  EXPECT_TRUE(says(p, s, "Self time is time in the scope itself, not in the scopes it opened."));
  const Table* t = table_of(s, "hot-self");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->style, Table::Style::Sortable);
  EXPECT_EQ(headers(*t), (Row{"#", "Scope", "Self", "% of instrumented time", "Calls", "Avg self", "Total"}));
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"1", "matmul", "40.0 ms", "40.0%", "1,000", "40.0 µs", "40.0 ms"},
                                           {"2", "backward", "30.0 ms", "30.0%", "10", "3.00 ms", "30.0 ms"},
                                           {"3", "forward", "20.0 ms", "20.0%", "10", "2.00 ms", "60.0 ms"},
                                           {"4", testing::kWeirdName, "5.00 ms", "5.0%", "10", "500 µs", "5.00 ms"},
                                           {"5", "train_step", "5.00 ms", "5.0%", "10", "500 µs", "100 ms"}}));
}

TEST(ReportSections, LongRankingsSayHowManyAreShown) {
  const Profile p = many_scopes(40);
  const Section hot = only_section(report::sections::hot_paths, p);
  EXPECT_EQ(table_of(hot, "hot-total")->rows.size(), 30u);
  EXPECT_EQ(table_of(hot, "hot-self")->rows.size(), 30u);
  std::size_t cut = 0;
  for (const std::string& said : paragraphs(p, hot)) cut += said == "Top 30 of 40 scopes." ? 1 : 0;
  EXPECT_EQ(cut, 2u);  // once under each table
  const Section called = only_section(report::sections::most_called, p);
  EXPECT_TRUE(says(p, called, "Top 15 of 40 scopes."));
  EXPECT_EQ(table_of(called, "most-called-table")->rows.size(), 15u);

  // The limits are the data's, not the section's.
  report::ReportLimits limits;
  limits.hot_paths = 3;
  limits.most_called = 2;
  const Section few = only_section(report::sections::hot_paths, p, limits);
  EXPECT_EQ(table_of(few, "hot-total")->rows.size(), 3u);
  EXPECT_TRUE(says(p, few, "Top 3 of 40 scopes."));
  EXPECT_EQ(table_of(only_section(report::sections::most_called, p, limits), "most-called-table")->rows.size(), 2u);
}

TEST(ReportSections, RankingsAreLeftOutWithoutScopes) {
  const Profile empty;
  const report::ReportData data = report::analyse(empty);
  EXPECT_TRUE(build(report::sections::hot_paths, data).empty());
  EXPECT_TRUE(build(report::sections::most_called, data).empty());
  EXPECT_TRUE(build(report::sections::allocators, data).empty());
  EXPECT_TRUE(build(report::sections::compute, data).empty());
  EXPECT_TRUE(build(report::sections::insights, data).empty());
  EXPECT_TRUE(build(report::sections::threads, data).empty());
  EXPECT_TRUE(build(report::sections::completeness, data).empty());
  EXPECT_TRUE(build(report::sections::diagnostics, data).empty());
}

TEST(ReportSections, MostCalledBreaksTiesByName) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::most_called, p);
  EXPECT_EQ(s.title, "Most called");
  const Table* t = table_of(s, "most-called-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"#", "Scope", "Calls", "Total", "Avg", "Self"}));
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"1", "matmul", "1,000", "40.0 ms", "40.0 µs", "40.0 ms"},
                                           {"2", "backward", "10", "30.0 ms", "3.00 ms", "30.0 ms"},
                                           {"3", "forward", "10", "60.0 ms", "6.00 ms", "20.0 ms"},
                                           {"4", testing::kWeirdName, "10", "5.00 ms", "500 µs", "5.00 ms"},
                                           {"5", "train_step", "10", "100 ms", "10.0 ms", "5.00 ms"}}));
}

TEST(ReportSections, TopAllocatorsByCounterBytes) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::allocators, p);
  EXPECT_EQ(s.title, "Top allocators");
  EXPECT_TRUE(says(p, s, "Percentages are of 16.0 MiB allocated in all"));
  EXPECT_TRUE(says(p, s, "innermost open one"));
  const Table* t = table_of(s, "allocators-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"#", "Scope", "Allocated", "% of all allocations", "Allocations", "Avg per call"}));
  // 12 MiB over 1000 calls; 4 MiB over 10 calls.
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"1", "matmul", "12.0 MiB", "75.0%", "300", "12.3 KiB"},
                                           {"2", testing::kWeirdName, "4.00 MiB", "25.0%", "100", "410 KiB"}}));
  EXPECT_DOUBLE_EQ(t->rows[0][3].value, 0.75);

  Profile none = p;
  for (ScopeStats& scope : none.scopes) scope.memory = {};
  EXPECT_TRUE(build(report::sections::allocators, report::analyse(none)).empty());

  report::ReportLimits limits;
  limits.allocators = 1;
  const Section cut = only_section(report::sections::allocators, p, limits);
  EXPECT_EQ(table_of(cut, "allocators-table")->rows.size(), 1u);
  EXPECT_TRUE(says(p, cut, "Top 1 of 2 allocating scopes."));
}

TEST(ReportSections, GpuTimeColumnOnlyForGpuProfiles) {
  Profile p = testing::export_profile();
  EXPECT_EQ(headers(*table_of(only_section(report::sections::most_called, p), "most-called-table")).back(), "Self");
  // The column alone, on data not analysed: this profile has no GPU activity to replay.
  p.gpu.summary.traced = true;
  report::ReportData data;
  data.profile = &p;
  data.instrumented_ns = p.instrumented_ns();
  const Table t = report::scope_table(data, "t", {&p.scopes[0]}, {report::ScopeColumn::Name});
  EXPECT_EQ(headers(t), (Row{"Scope", "GPU time"}));
  EXPECT_EQ(t.rows[0].back().text, "-");  // no GPU work launched in train_step
}

// ---- compute ------------------------------------------------------------------------

TEST(ReportSections, ComputeTableNoteAndRoofline) {
  Profile p = testing::export_profile();
  p.scopes[2].flops = 4e9;  // matmul: 4 GFLOP over 16 MiB in 40 ms
  p.scopes[2].bytes = 16 * testing::kMiB;
  const report::ReportData unknown_machine = report::analyse(p);
  const Section s = only_section(report::sections::compute, p);
  EXPECT_EQ(s.id, "compute");
  const Table* t = table_of(s, "compute-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"Scope", "Calls", "Total", "FLOPs", "FLOP/s", "Bytes/s", "FLOPs per byte"}));
  ASSERT_EQ(t->rows.size(), 1u);
  EXPECT_EQ(t->rows[0][0].text, "matmul");
  EXPECT_EQ(t->rows[0][3].text, "4 G");
  EXPECT_DOUBLE_EQ(t->rows[0][3].value, 4e9);
  EXPECT_EQ(t->rows[0][4].text, "100 GFLOP/s");
  const std::vector<std::string> said = paragraphs(p, s);
  ASSERT_EQ(said.size(), 2u);
  EXPECT_EQ(said[0], render::text_of(p, analysis::compute_note(p, unknown_machine.compute)));
  EXPECT_EQ(said[1], render::text_of(p, analysis::no_machine_hint()));
  EXPECT_TRUE(blocks_of<report::Picture>(s).empty());  // no roofs to draw against

  p.machine = testing::synthetic_peaks(50e9, 400e9, 20e9, 80e9, 8);
  const Section roofed = only_section(report::sections::compute, p);
  const Table* with_roofs = table_of(roofed, "compute-table");
  EXPECT_EQ(headers(*with_roofs).size(), 10u);
  EXPECT_EQ(headers(*with_roofs).back(), "% of roof");
  EXPECT_EQ(paragraphs(p, roofed)[1], render::text_of(p, analysis::machine_roofs(p.machine)));
  const auto pictures = blocks_of<report::Picture>(roofed);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("<svg class=\"roofline\""), std::string::npos);

  const Profile no_flops = testing::export_profile();
  EXPECT_TRUE(build(report::sections::compute, report::analyse(no_flops)).empty());
}

// ---- call tree ----------------------------------------------------------------------

TEST(ReportSections, CallTreeRowsByTotalTimeWithDepthsAndPaths) {
  // Carried over: the text/Markdown call hierarchy (children by total time, indented by
  // level, times and shares) and the HTML tree's full path on hover.
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::call_tree, p);
  EXPECT_EQ(s.title, "Call tree");
  EXPECT_TRUE(says(p, s, "Merged over all threads; children by total time"));
  const Table* t = table_of(s, "call-tree-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->style, Table::Style::Tree);
  EXPECT_EQ(t->depths, (std::vector<std::uint32_t>{1, 2, 3, 2, 2}));
  EXPECT_EQ(headers(*t), (Row{"Scope", "Calls", "Total", "Self", "Avg", "Min", "Max", "% of instrumented time"}));
  const std::vector<Row> rows = rows_of(*t);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0], (Row{"train_step", "10", "100 ms", "5.00 ms", "10.0 ms", "9.00 ms", "12.0 ms", "100.0%"}));
  EXPECT_EQ(rows[1][0], "forward");
  EXPECT_EQ(rows[2], (Row{"matmul", "1,000", "40.0 ms", "40.0 ms", "40.0 µs", "35.0 µs", "90.0 µs", "40.0%"}));
  EXPECT_EQ(rows[3][0], "backward");
  EXPECT_EQ(rows[4][0], testing::kWeirdName);
  EXPECT_EQ(rows[4][7], "5.0%");
  EXPECT_EQ(t->rows[2][0].title, "train_step > forward > matmul");
  EXPECT_DOUBLE_EQ(t->rows[2][7].value, 0.4);
  EXPECT_FALSE(says(p, s, "not shown"));
}

TEST(ReportSections, CallTreeCountsWhatItLeavesOut) {
  const ScopeStats stats = testing::scope_stats(0, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  std::vector<CallTreeNode> chain(1);
  for (std::uint32_t id = 1; id <= 15; ++id) {
    chain[id - 1].children = {id};
    chain.push_back(testing::tree_node(id, id - 1, id, {}, stats));
  }
  const Profile deep = profile_with_tree(std::move(chain));
  const Section deep_section = only_section(report::sections::call_tree, deep);
  EXPECT_EQ(table_of(deep_section, "call-tree-table")->rows.size(), 12u);
  EXPECT_EQ(table_of(deep_section, "call-tree-table")->depths.back(), 12u);
  EXPECT_TRUE(says(deep, deep_section, "3 nodes not shown: 3 deeper than 12 levels."));

  std::vector<CallTreeNode> fan(1);
  for (std::uint32_t id = 1; id <= 250; ++id) {
    fan[0].children.push_back(id);
    fan.push_back(testing::tree_node(id, 0, 1, {}, stats));
  }
  const Profile wide = profile_with_tree(std::move(fan));
  const Section wide_section = only_section(report::sections::call_tree, wide);
  EXPECT_EQ(table_of(wide_section, "call-tree-table")->rows.size(), 200u);
  EXPECT_TRUE(says(wide, wide_section, "50 nodes not shown: 50 beyond the first 200 lines."));

  // The limits are the data's.
  report::ReportLimits limits;
  limits.call_tree = {2, 200};
  EXPECT_EQ(table_of(only_section(report::sections::call_tree, deep, limits), "call-tree-table")->rows.size(), 2u);
}

TEST(ReportSections, NoCallTreeSaysSo) {
  const Profile p;
  const Section s = only_section(report::sections::call_tree, p);
  EXPECT_EQ(paragraphs(p, s), (std::vector<std::string>{"No call tree was recorded."}));
  EXPECT_TRUE(blocks_of<Table>(s).empty());
}

// ---- timeline -----------------------------------------------------------------------

TEST(ReportSections, TimelineIsAPictureWithItsNotes) {
  const Profile p = testing::rich_profile();
  const Section s = only_section(report::sections::timeline, p);
  EXPECT_EQ(s.id, "timeline");
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("<svg class=\"tl\""), std::string::npos);
  EXPECT_EQ(pictures[0]->style, report::html::kTimelineStyle);
  // Dropped spans are said before the picture.
  EXPECT_TRUE(says(p, s, "3 spans were dropped when the memory cap (1.00 MiB) was reached (policy keep-first)"));
  EXPECT_FALSE(says(p, s, "merged"));
}

TEST(ReportSections, StatisticsOnlySessionSaysThereIsNoTimeline) {
  Profile p = testing::rich_profile();
  p.spans.clear();
  p.completeness.spans_enabled = false;
  const Section s = only_section(report::sections::timeline, p);
  EXPECT_TRUE(says(p, s, "statistics-only session: no spans were recorded"));
  EXPECT_TRUE(blocks_of<report::Picture>(s).empty());
  EXPECT_TRUE(says(Profile{}, only_section(report::sections::timeline, Profile{}), "No spans were recorded."));
}

TEST(ReportSections, TimelineSaysWhenSpansAreMerged) {
  // Carried over from the HTML report's million-span page: the note above the merged timeline.
  const Profile p = testing::million_span_profile();
  const Section s = only_section(report::sections::timeline, p);
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  // Said with the picture, which only formats that draw it show.
  const std::string html = pictures[0]->html();
  EXPECT_NE(html.find("<p class=\"muted\">1,000,020 spans are drawn as "), std::string::npos);
  EXPECT_NE(html.find("are merged per column of that width into one box"), std::string::npos);
  EXPECT_NE(html.find("data-merged=\"1\""), std::string::npos);
}

TEST(ReportSections, TimelineSaysWhatItDoesNotDraw) {
  Profile p = testing::rich_profile();
  p.spans.push_back(Span{0, 0, 0, 40, 1'000, 2'000});  // deeper than the timeline draws
  // Said with the picture: formats without pictures never walk the spans.
  const report::Section s = only_section(report::sections::timeline, p);
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("<p class=\"muted\">1 span nested deeper than 32 levels is not drawn.</p>"),
            std::string::npos);
  EXPECT_FALSE(says(p, s, "nested deeper"));
}

// ---- threads, insights, completeness, diagnostics -----------------------------------

TEST(ReportSections, Threads) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::threads, p);
  const Table* t = table_of(s, "threads-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"Thread", "TID", "Scopes", "Top-level time", "% of instrumented time", "State"}));
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"main", "1001", "1,040", "100 ms", "100.0%", "running"},
                                           {"worker", "1002", "0", "0 ns", "0.0%", "exited"}}));
  EXPECT_DOUBLE_EQ(t->rows[0][1].value, 1001.0);
}

TEST(ReportSections, Insights) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::insights, p);
  const auto bullets = blocks_of<report::Bullets>(s);
  ASSERT_EQ(bullets.size(), 1u);
  std::vector<std::string> said;
  for (const Sentence& sentence : bullets[0]->items) said.push_back(render::text_of(p, sentence));
  ASSERT_EQ(said.size(), 5u);
  EXPECT_EQ(said[0], "The top 5 scopes by self time account for 100.0% of instrumented time.");
  EXPECT_EQ(said[1], "Highest self time: matmul, 40.0 ms (40.0% of instrumented time) in 1,000 calls.");
  EXPECT_EQ(said[2], "No scope is short enough for instrumentation cost (20.0 ns per scope) to dominate its timing.");
  EXPECT_TRUE(said[3].starts_with("Highest allocation: matmul 12.0 MiB (75.0% of all allocations, 12.3 KiB per call)"));
  EXPECT_TRUE(said[4].starts_with("High call frequency: matmul 1,000 calls, 4,000 calls/s over the session"));
}

TEST(ReportSections, CompletenessAndCost) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::completeness, p);
  EXPECT_EQ(s.title, "Completeness and cost");
  const auto facts = blocks_of<report::Facts>(s);
  ASSERT_EQ(facts.size(), 1u);
  EXPECT_EQ(facts_of(p, *facts[0]),
            (std::vector<std::pair<std::string, std::string>>{
                {"Scopes recorded", "1,040"},
                {"Spans", "1,000 kept, 40 dropped, 0 overwritten (policy keep-first, memory cap 64.0 MiB)"},
                {"Events dropped", "0 memory events"},
                {"Hot-path buffer allocations", "2 buffers of 64 KiB"},
                {"Instrumentation", "20.0 ns per scope × 1,040 scopes = 20.8 µs (<0.1% of instrumented time)"}}));
  EXPECT_EQ(paragraphs(p, s), (std::vector<std::string>{std::string(analysis::kStatisticsAreComplete)}));

  Profile statistics_only = p;
  statistics_only.completeness.spans_enabled = false;
  const Section no_spans = only_section(report::sections::completeness, statistics_only);
  EXPECT_EQ(fact(statistics_only, *blocks_of<report::Facts>(no_spans)[0], "Spans"),
            "statistics only: no timeline recorded");
}

TEST(ReportSections, Diagnostics) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::diagnostics, p);
  const Table* t = table_of(s, "diagnostics-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"Severity", "Kind", "Thread", "Scope or counter", "Count", "Message"}));
  EXPECT_EQ(rows_of(*t), (std::vector<Row>{{"warning", "spans_dropped", "n/a", "n/a", "40",
                                            "40 spans were dropped after the memory cap of 64.0 MiB was reached."},
                                           {"info", "unclosed_scope", "worker (TID 1002)", testing::kWeirdName, "1",
                                            "A scope was still open when the profile was taken."}}));

  Profile clean = p;
  clean.diagnostics.clear();
  const Section none = only_section(report::sections::diagnostics, clean);
  EXPECT_TRUE(blocks_of<Table>(none).empty());
  EXPECT_TRUE(says(clean, none, "None"));

  // An empty profile still says what went wrong, when something did.
  Profile empty;
  empty.diagnostics.push_back(p.diagnostics[0]);
  EXPECT_EQ(table_of(only_section(report::sections::diagnostics, empty), "diagnostics-table")->rows.size(), 1u);
}

// ---- throughput ---------------------------------------------------------------------

TEST(ThroughputSection, EveryScopeWithItemsLongestFirstAndItsRate) {
  const Profile p = testing::export_profile();
  const Section s = only_section(report::sections::throughput, p);
  EXPECT_EQ(s.id, "throughput");
  EXPECT_EQ(s.title, "Throughput");
  EXPECT_TRUE(says(p, s, "per second of its total time"));
  const Table* t = table_of(s, "throughput-table");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(headers(*t), (Row{"Scope", "Items", "Total", "Items/s"}));
  // train_step: 320 items in 100 ms; matmul: 2,000 items in its total time. Scopes without items are left out.
  ASSERT_EQ(t->rows.size(), 2u);
  EXPECT_EQ(texts(t->rows[0]), (Row{"train_step", "320", "100 ms", "3,200 items/s"}));
  EXPECT_EQ(t->rows[1][0].text, "matmul");
  EXPECT_EQ(t->rows[1][1].text, "2,000");
  EXPECT_DOUBLE_EQ(t->rows[0][3].value, 3200.0);
}

TEST(ThroughputSection, NoneWithoutItems) {
  Profile p = testing::export_profile();
  for (ScopeStats& scope : p.scopes) scope.items = 0;
  const report::ReportData data = report::analyse(p);
  EXPECT_TRUE(build(report::sections::throughput, data).empty());
}

TEST(ReportLimits, RowsSetsEveryListAndZeroKeepsTheDefaults) {
  const report::ReportLimits defaults;
  const report::ReportLimits same = defaults.with_rows(0);
  EXPECT_EQ(same.hot_paths, defaults.hot_paths);
  EXPECT_EQ(same.most_called, defaults.most_called);
  const report::ReportLimits wide = defaults.with_rows(2000);
  for (const std::size_t limit : {wide.hot_paths, wide.most_called, wide.allocators, wide.leak_sites, wide.cpu_functions,
                                  wide.hot_lines, wide.cpu_scopes, wide.kernels, wide.gpu_leaks, wide.critical_path_scopes,
                                  wide.critical_path_steps, wide.call_tree.max_rows})
    EXPECT_EQ(limit, 2000u);
  // --rows 40 on a profile of 40 scopes: every scope in the hot-path tables, no "top N of M".
  const Profile p = many_scopes(40);
  const Section s = only_section(report::sections::hot_paths, p, defaults.with_rows(40));
  const Table* t = table_of(s, "hot-total");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->rows.size(), 40u);
  EXPECT_FALSE(says(p, s, "Top "));
}

}  // namespace
}  // namespace nnprof
