// What the reports say, before any markup: insights, completeness facts, the call-tree walk
// with its caps, and sentences rendered in a markup.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "analysis/call_tree.hpp"
#include "analysis/facts.hpp"
#include "analysis/insights.hpp"
#include "analysis/sentence.hpp"
#include "render/sentence_markup.hpp"
#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"

namespace nnprof {
namespace {

using analysis::InsightKind;
using testing::kMs;

std::vector<std::uint32_t> nodes_of(const analysis::TreeWalk& walk) {
  std::vector<std::uint32_t> nodes;
  for (const analysis::TreeRow& row : walk.rows) nodes.push_back(row.node);
  return nodes;
}

std::string text_of(const Profile& profile, const analysis::Sentence& sentence) {
  return render::text_of(profile, sentence);
}

// ---- call tree ----------------------------------------------------------------------

TEST(CallTreeWalk, ChildrenByTotalTimeDepthFirst) {
  const Profile p = testing::export_profile();
  // train_step's children are stored as {weird, backward, forward}.
  EXPECT_EQ(analysis::sorted_children(p, 1), (std::vector<std::uint32_t>{2, 4, 5}));
  EXPECT_TRUE(analysis::sorted_children(p, 99).empty());
  const analysis::TreeWalk walk = analysis::walk_call_tree(p, {});
  EXPECT_EQ(nodes_of(walk), (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));
  std::vector<std::uint32_t> depths;
  for (const analysis::TreeRow& row : walk.rows) depths.push_back(row.depth);
  EXPECT_EQ(depths, (std::vector<std::uint32_t>{1, 2, 3, 2, 2}));
  EXPECT_EQ(walk.omitted(), 0u);
  EXPECT_TRUE(analysis::omitted_nodes(walk).empty());
}

TEST(CallTreeWalk, CountsWhatTheCapsLeaveOut) {
  const Profile p = testing::export_profile();
  const analysis::TreeWalk shallow = analysis::walk_call_tree(p, {2, 200});
  EXPECT_EQ(nodes_of(shallow), (std::vector<std::uint32_t>{1, 2, 4, 5}));
  EXPECT_EQ(shallow.too_deep, 1u);
  EXPECT_EQ(text_of(p, analysis::omitted_nodes(shallow)), "1 node not shown: 1 deeper than 2 levels.");

  const analysis::TreeWalk short_walk = analysis::walk_call_tree(p, {1, 3});
  EXPECT_EQ(nodes_of(short_walk), (std::vector<std::uint32_t>{1}));
  EXPECT_EQ(short_walk.too_deep, 4u);
  const analysis::TreeWalk few = analysis::walk_call_tree(p, {12, 2});
  EXPECT_EQ(nodes_of(few), (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(few.over_row_cap, 3u);
  EXPECT_EQ(text_of(p, analysis::omitted_nodes(few)), "3 nodes not shown: 3 beyond the first 2 lines.");
}

TEST(CallTreeWalk, SurvivesCyclesAndDanglingChildren) {
  Profile p = testing::export_profile();
  p.call_tree[3].children = {1};   // matmul "calls" train_step again
  p.call_tree[2].children.push_back(99);
  EXPECT_EQ(nodes_of(analysis::walk_call_tree(p, {})), (std::vector<std::uint32_t>{1, 2, 3, 4, 5}));
  EXPECT_TRUE(analysis::walk_call_tree(Profile{}, {}).rows.empty());
}

// ---- insights -----------------------------------------------------------------------

TEST(Insights, EveryKindInOrderWithItsNumbers) {
  const Profile p = testing::export_profile();
  const auto insights = analysis::insights(p);
  std::vector<InsightKind> kinds;
  for (const analysis::Insight& insight : insights) kinds.push_back(insight.kind);
  EXPECT_EQ(kinds, (std::vector<InsightKind>{InsightKind::Concentration, InsightKind::HottestSelf,
                                             InsightKind::Inflation, InsightKind::Allocation,
                                             InsightKind::Frequency}));
  EXPECT_EQ(text_of(p, insights[1].sentence),
            "Highest self time: matmul, 40.0 ms (40.0% of instrumented time) in 1,000 calls.");
  // The scope is named by id, the share is the key figure: markups decide how they look.
  const std::vector<analysis::Part>& parts = insights[0].sentence.parts();
  ASSERT_EQ(parts.size(), 5u);
  EXPECT_EQ(parts[1].kind, analysis::Part::Kind::Count);
  EXPECT_EQ(parts[3].kind, analysis::Part::Kind::Share);
  EXPECT_TRUE(parts[3].key);
  EXPECT_EQ(insights[1].sentence.parts()[1].scope, testing::kMatmul);
}

TEST(Insights, NoneWithoutScopesAndNoAllocationInsightWithoutAllocations) {
  EXPECT_TRUE(analysis::insights(Profile{}).empty());
  Profile p = testing::export_profile();
  for (ScopeStats& s : p.scopes) s.memory = {};
  for (const analysis::Insight& insight : analysis::insights(p)) {
    EXPECT_NE(insight.kind, InsightKind::Allocation);
  }
}

TEST(Insights, OnlyScopeAndNoInstrumentedTime) {
  Profile p;
  p.strings = {"only"};
  p.scopes = {testing::scope_stats(0, 0, {3, 0, 0, 0, 0.0, 0.0, 0, 0, 0})};
  const auto insights = analysis::insights(p);
  ASSERT_GE(insights.size(), 3u);
  EXPECT_EQ(text_of(p, insights[0].sentence),
            "The only scope accounts for 0.0% of instrumented time by self time.");
  EXPECT_EQ(text_of(p, insights[1].sentence),
            "Highest self time: only, 0 ns (n/a of instrumented time) in 3 calls.");
  EXPECT_EQ(text_of(p, insights[2].sentence),
            "Instrumentation overhead was not measured, so timings inflated by it cannot be flagged.");
}

// ---- facts --------------------------------------------------------------------------

TEST(CompletenessFacts, LabelsAndValues) {
  Profile p = testing::export_profile();
  std::vector<std::string> lines;
  for (const analysis::Fact& fact : analysis::completeness_facts(p)) {
    lines.push_back(std::string(fact.label) + ": " + text_of(p, fact.value));
  }
  EXPECT_EQ(lines, (std::vector<std::string>{
                       "Scopes recorded: 1,040",
                       "Spans: 1,000 kept, 40 dropped, 0 overwritten (policy keep-first, memory cap 64.0 MiB)",
                       "Events dropped: 0 memory events",
                       "Hot-path buffer allocations: 2 buffers of 64 KiB",
                       "Instrumentation: 20.0 ns per scope × 1,040 scopes = 20.8 µs (<0.1% of instrumented time)"}));

  p.completeness = {};
  p.completeness.spans_enabled = false;
  const auto facts = analysis::completeness_facts(p);
  EXPECT_EQ(text_of(p, facts[1].value), "statistics only: no timeline recorded");
  EXPECT_EQ(text_of(p, facts[4].value), "not measured");
}

TEST(MemoryTotals, CurrentAndPeak) {
  const Profile p = testing::export_profile();
  EXPECT_EQ(text_of(p, analysis::memory_totals(p)),
            "All counters: current 4.00 MiB, peak 7.00 MiB at 42.0 ms after the session start.");
}

// ---- rendering ----------------------------------------------------------------------

void upper(std::string& out, std::string_view text) {
  for (const char c : text) out += (c >= 'a' && c <= 'z') ? static_cast<char>(c - 'a' + 'A') : c;
}
void bracket(std::string& out, std::string_view text) {
  out += '[';
  out += text;
  out += ']';
}
void tick(std::string& out, std::string_view text) {
  out += '`';
  out += text;
  out += '`';
}

TEST(Sentence, WordsMergeAndEveryPartGoesThroughTheMarkup) {
  const Profile p = testing::export_profile();
  analysis::Sentence s;
  s.words("see ").words("the ").scope(testing::kMatmul).words(" and ").code("f()").words(": ")
      .duration(std::uint64_t{2 * kMs}).key().words(", ").bytes(std::uint64_t{2048}).words(", ")
      .rate(2'500.0, "calls/s").words(", ").count(1, "call", "calls");
  EXPECT_EQ(s.parts()[0].text, "see the ");
  const render::Markup markup{upper, bracket, tick, "*", "*"};
  EXPECT_EQ(render::text_of(p, s, markup), "SEE THE [matmul] AND `f()`: *2.00 MS*, 2.00 KIB, 2,500 CALLS/S, 1 CALL");
  EXPECT_EQ(render::text_of(p, s), "see the matmul and f(): 2.00 ms, 2.00 KiB, 2,500 calls/s, 1 call");
}

}  // namespace
}  // namespace nnprof
