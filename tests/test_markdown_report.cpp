// The Markdown report: sections, tables read back cell by cell, escaping of scope names.
#include "io/markdown_report.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cpu_profile_fixture.hpp"
#include "sample_profiles.hpp"
#include "text_search.hpp"
#include "io/exporter_registry.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof {
namespace {

using testing::contains;
using testing::kMs;
using testing::lines_of;
using Row = std::vector<std::string>;

// How the awkward name reads in Markdown source: the pipe escaped, the newline visible.
const std::string kWeirdMd = "load, \"batch\" \\| 1\\\\nnext";

std::string report_of(const Profile& profile) {
  std::ostringstream out;
  io::write_markdown_report(profile, out);
  return out.str();
}

// The lines after the "## title" heading, up to the next "## " heading.
std::vector<std::string> section(const std::string& text, std::string_view title) {
  std::vector<std::string> result;
  bool inside = false;
  for (const std::string& line : lines_of(text)) {
    if (line.starts_with("## ")) {
      if (inside) break;
      inside = line == "## " + std::string(title);
      continue;
    }
    if (inside) result.push_back(line);
  }
  return result;
}

// Cells of a table row, split at pipes that a backslash does not escape (as GFM does),
// trimmed, still escaped.
Row cells(const std::string& line) {
  Row result;
  std::string cell;
  bool escaped = false;
  for (std::size_t i = 1; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '|' && !escaped) {
      const std::size_t first = cell.find_first_not_of(' ');
      const std::size_t last = cell.find_last_not_of(' ');
      result.push_back(first == std::string::npos ? "" : cell.substr(first, last - first + 1));
      cell.clear();
      continue;
    }
    escaped = c == '\\' && !escaped;
    cell += c;
  }
  return result;
}

struct Table {
  Row header;
  Row rule;
  std::vector<Row> rows;
};

// The first table of `lines`, checked for GFM shape: a header row, a separator row of
// dashes with optional colons, and every row with as many cells as the header.
Table first_table(const std::vector<std::string>& lines) {
  Table table;
  std::size_t i = 0;
  while (i < lines.size() && !lines[i].starts_with("|")) ++i;
  if (i + 1 >= lines.size()) {
    ADD_FAILURE() << "no table";
    return table;
  }
  EXPECT_TRUE(lines[i].ends_with("|")) << lines[i];
  table.header = cells(lines[i]);
  table.rule = cells(lines[i + 1]);
  EXPECT_EQ(table.rule.size(), table.header.size()) << lines[i + 1];
  for (const std::string& r : table.rule) {
    EXPECT_GE(r.size(), 3u) << r;
    EXPECT_EQ(r.find_first_not_of("-:"), std::string::npos) << r;
  }
  for (i += 2; i < lines.size() && lines[i].starts_with("|"); ++i) {
    EXPECT_TRUE(lines[i].ends_with("|")) << lines[i];
    table.rows.push_back(cells(lines[i]));
    EXPECT_EQ(table.rows.back().size(), table.header.size()) << lines[i];
  }
  return table;
}

TEST(MarkdownEscape, EscapesWhatMarkdownWouldInterpret) {
  EXPECT_EQ(io::markdown_escape("matmul"), "matmul");
  EXPECT_EQ(io::markdown_escape("a|b"), "a\\|b");
  EXPECT_EQ(io::markdown_escape("*x* `y` [z](w) <t> ~s~ a&b $m$ \\"),
            "\\*x\\* \\`y\\` \\[z\\](w) \\<t\\> \\~s\\~ a\\&b \\$m\\$ \\\\");
  // An underscore inside a word cannot emphasise; at a word's edge it can.
  EXPECT_EQ(io::markdown_escape("train_step"), "train_step");
  EXPECT_EQ(io::markdown_escape("_private_"), "\\_private\\_");
  EXPECT_EQ(io::markdown_escape("a_ b"), "a\\_ b");
  EXPECT_EQ(io::markdown_escape("line\nbreak\r\ttab\x1b"), "line\\\\nbreak\\\\r\\\\ttab\\\\x1b");
  EXPECT_EQ(io::markdown_escape(""), "");
  EXPECT_EQ(io::markdown_escape("µs"), "µs");
}

TEST(MarkdownReport, SectionsAppearInOrder) {
  const std::string text = report_of(testing::export_profile());
  EXPECT_TRUE(text.starts_with("# nnprof report\n"));
  std::size_t previous = 0;
  for (const char* title :
       {"System information", "Hot paths by time", "Hot paths by self time", "Top allocators",
        "Throughput", "Most called", "Call hierarchy", "Threads", "Memory counters", "Insights",
        "Completeness and cost", "Diagnostics"}) {
    const std::size_t at = text.find("\n## " + std::string(title) + "\n");
    ASSERT_NE(at, std::string::npos) << title;
    EXPECT_GT(at, previous) << title;
    previous = at;
  }
}

TEST(MarkdownReport, AnnotationsFollowTheSystemInformation) {
  Profile p = testing::export_profile();
  EXPECT_FALSE(contains(lines_of(report_of(p)), "Annotations of the run"));
  p.annotations = {{"git_commit", "8d2e793"}, {"note", "a | b"}};
  const std::string md = report_of(p);
  const std::size_t system = md.find("## System information"), annotations = md.find("Annotations of the run");
  ASSERT_NE(annotations, std::string::npos);
  EXPECT_LT(system, annotations);
  EXPECT_TRUE(contains(lines_of(md), "| git_commit | 8d2e793 |"));
  EXPECT_TRUE(contains(lines_of(md), "| note       | a \\| b  |")) << md.substr(annotations, 200);
}

TEST(MarkdownReport, SystemInformation) {
  const Table t = first_table(section(report_of(testing::export_profile()), "System information"));
  EXPECT_EQ(t.header, (Row{"Property", "Value"}));
  EXPECT_EQ(t.rows, (std::vector<Row>{{"Host", "testhost"},
                                      {"OS", "Linux 6.1.0"},
                                      {"CPU", "Test CPU @ 3.0GHz"},
                                      {"Logical CPUs", "8"},
                                      {"Compiler", "GCC 12.2.0"},
                                      {"Command line", "./train --epochs 1 \\| tee log.txt"},
                                      {"Process ID", "4242"},
                                      {"nnprof version", "0.1.0"},
                                      {"Session duration", "250 ms"},
                                      {"Clock source", "tsc, 0.25 ns per tick"},
                                      {"Threads", "2"},
                                      {"Instrumented time", "100 ms"}}));
}

TEST(MarkdownReport, HotPathsByTime) {
  const auto lines = section(report_of(testing::export_profile()), "Hot paths by time");
  const Table t = first_table(lines);
  EXPECT_EQ(t.header, (Row{"#", "Scope", "Total", "% of instrumented time", "Calls", "Avg", "Min",
                           "Max", "p95"}));
  // Numbers right-aligned, names left-aligned.
  EXPECT_EQ(t.rule[0], "--:");
  EXPECT_EQ(t.rule[1].find(':'), std::string::npos);
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[0], (Row{"1", "train_step", "100 ms", "100.0%", "10", "10.0 ms", "9.00 ms",
                            "12.0 ms", "12.0 ms"}));
  EXPECT_EQ(t.rows[1], (Row{"2", "forward", "60.0 ms", "60.0%", "10", "6.00 ms", "5.50 ms",
                            "7.00 ms", "6.90 ms"}));
  EXPECT_EQ(t.rows[2], (Row{"3", "matmul", "40.0 ms", "40.0%", "1,000", "40.0 µs", "35.0 µs",
                            "90.0 µs", "52.0 µs"}));
  EXPECT_EQ(t.rows[3], (Row{"4", "backward", "30.0 ms", "30.0%", "10", "3.00 ms", "2.80 ms",
                            "3.50 ms", "3.40 ms"}));
  EXPECT_EQ(t.rows[4], (Row{"5", kWeirdMd, "5.00 ms", "5.0%", "10", "500 µs", "400 µs", "700 µs",
                            "650 µs"}));
  EXPECT_FALSE(contains(lines, "Top 5 of"));  // every scope shown: no "top N of M" note
}

TEST(MarkdownReport, HotPathsBySelfTime) {
  const Table t = first_table(section(report_of(testing::export_profile()), "Hot paths by self time"));
  EXPECT_EQ(t.header,
            (Row{"#", "Scope", "Self", "% of instrumented time", "Calls", "Avg self", "Total"}));
  ASSERT_EQ(t.rows.size(), 5u);
  EXPECT_EQ(t.rows[0], (Row{"1", "matmul", "40.0 ms", "40.0%", "1,000", "40.0 µs", "40.0 ms"}));
  EXPECT_EQ(t.rows[1], (Row{"2", "backward", "30.0 ms", "30.0%", "10", "3.00 ms", "30.0 ms"}));
  EXPECT_EQ(t.rows[2], (Row{"3", "forward", "20.0 ms", "20.0%", "10", "2.00 ms", "60.0 ms"}));
  // Equal self times are ordered by name.
  EXPECT_EQ(t.rows[3], (Row{"4", kWeirdMd, "5.00 ms", "5.0%", "10", "500 µs", "5.00 ms"}));
  EXPECT_EQ(t.rows[4], (Row{"5", "train_step", "5.00 ms", "5.0%", "10", "500 µs", "100 ms"}));
}

TEST(MarkdownReport, TopAllocators) {
  const auto lines = section(report_of(testing::export_profile()), "Top allocators");
  EXPECT_TRUE(contains(lines, "Percentages are of 16.0 MiB allocated in all"));
  const Table t = first_table(lines);
  EXPECT_EQ(t.header, (Row{"#", "Scope", "Allocated", "% of all allocations", "Allocations",
                           "Avg per call"}));
  // 12 MiB over 1000 calls; 4 MiB over 10 calls.
  EXPECT_EQ(t.rows, (std::vector<Row>{{"1", "matmul", "12.0 MiB", "75.0%", "300", "12.3 KiB"},
                                      {"2", kWeirdMd, "4.00 MiB", "25.0%", "100", "410 KiB"}}));
}

TEST(MarkdownReport, NoAllocatorsOrThroughputSectionsWithoutData) {
  Profile p = testing::export_profile();
  for (ScopeStats& s : p.scopes) {
    s.memory = {};
    s.items = 0;
  }
  const std::string text = report_of(p);
  EXPECT_EQ(text.find("## Top allocators"), std::string::npos);
  EXPECT_EQ(text.find("## Throughput"), std::string::npos);
  EXPECT_EQ(text.find("Highest allocation"), std::string::npos);
}

// The lines of `lines` after the "### title" heading, up to the next heading.
std::vector<std::string> subsection(const std::vector<std::string>& lines, std::string_view title) {
  std::vector<std::string> result;
  bool inside = false;
  for (const std::string& line : lines) {
    if (line.starts_with("#")) {
      if (inside) break;
      inside = line == "### " + std::string(title);
      continue;
    }
    if (inside) result.push_back(line);
  }
  return result;
}

TEST(MarkdownReport, NoHeapSectionWithoutHeapTracking) {
  const std::string text = report_of(testing::export_profile());
  EXPECT_EQ(text.find("## Heap memory"), std::string::npos);
  EXPECT_EQ(text.find("Leak verdict"), std::string::npos);
}

TEST(MarkdownReport, HeapMemorySummaryAndVerdict) {
  const std::string text = report_of(testing::heap_profile());
  EXPECT_LT(text.find("## Threads"), text.find("## Heap memory"));
  EXPECT_LT(text.find("## Heap memory"), text.find("## Insights"));
  const Table t = first_table(section(text, "Heap memory"));
  EXPECT_EQ(t.header, (Row{"Measure", "Value"}));
  ASSERT_EQ(t.rows.size(), 9u);
  EXPECT_EQ(t.rows[0], (Row{"Tracked by", "nnprof::MemoryTracking (in-process)"}));
  EXPECT_EQ(t.rows[2], (Row{"Peak", "22.0 MiB at 949 ms after the session start, on main (TID 2001), in train_step "
                                    "\\> forward \\> matmul"}));
  EXPECT_EQ(t.rows[4], (Row{"RSS", "initial 48.0 MiB, peak 59.0 MiB (VmHWM), final 57.0 MiB"}));
  EXPECT_EQ(t.rows[8], (Row{"Leak verdict",
                            "Memory leak detected: 13 blocks (10.0 MiB) were unreachable at the end; heap in use "
                            "grew steadily over the second half of the run (500 ms to 980 ms): by 4.62 MiB, 9.62 "
                            "MiB/s; RSS grew steadily too: by 4.62 MiB, 9.62 MiB/s."}));
}

TEST(MarkdownReport, HeapTopAllocatorsLeakSitesAndFindings) {
  const auto lines = section(report_of(testing::heap_profile()), "Heap memory");
  const auto allocators = subsection(lines, "Top allocators");
  EXPECT_TRUE(contains(allocators, "Percentages are of the 163 MiB allocated in all"));
  const Table top = first_table(allocators);
  EXPECT_EQ(top.header, (Row{"#", "Scope", "Allocated", "% of heap allocated", "Allocations", "Avg per call",
                             "Retained at end", "Peak live"}));
  ASSERT_EQ(top.rows.size(), 6u);
  EXPECT_EQ(top.rows[0],
            (Row{"1", "load_batch", "80.0 MiB", "49.0%", "13", "8.00 MiB", "8.00 MiB in 4 blocks", "16.0 MiB"}));
  EXPECT_EQ(top.rows[5], (Row{"6", "train_step", "640 KiB", "0.4%", "10", "64.0 KiB", "0 B", "64.0 KiB"}));
  const Table sites = first_table(subsection(lines, "Blocks still allocated at the end"));
  EXPECT_EQ(sites.header, (Row{"#", "Scope", "Allocated at (calling function)", "Blocks", "Bytes", "State"}));
  ASSERT_EQ(sites.rows.size(), 4u);
  EXPECT_EQ(sites.rows[0], (Row{"1", "train_step \\> optimizer_step",
                                "History::append(Tensor const\\&) (src/optim/history.cpp:42)", "10", "10.0 MiB",
                                "leaked"}));
  EXPECT_EQ(sites.rows[3], (Row{"4", "load_batch", "Reader\\<Header\\>::parse(std::istream\\&) (src/data/reader.cpp:88)",
                                "3", "3.00 KiB", "leaked"}));
  const auto findings = subsection(lines, "Memory findings");
  EXPECT_TRUE(contains(findings,
                       "- **Memory hotspot** (high severity): **load_batch** held up to 16.0 MiB live at once, "
                       "72.7% of the 22.0 MiB heap peak (threshold 30.0%). It allocates 8.00 MiB per call (80.0 "
                       "MiB over 10 calls), far more than it holds at once: allocate the buffers once, outside the "
                       "loop, and reuse them across iterations, or take them from a pool."));
  EXPECT_TRUE(contains(findings,
                       "- **Memory leak** (medium severity): 10.0 MiB in 13 blocks (6.1% of the 163 MiB allocated; "
                       "threshold 5.0%) were never freed, and nothing points to them any more. Free the blocks "
                       "allocated at History::append(Tensor const\\&) (src/optim/history.cpp:42) in "
                       "**train_step** \\> **optimizer_step** (10.0 MiB in 10 blocks), or give them an owner that "
                       "frees them (a std::unique_ptr, a container, an RAII wrapper)."));
}

// ---- CPU samples ---------------------------------------------------------------------

TEST(MarkdownReport, CpuSummaryTopFunctionsAndCallers) {
  const std::string text = report_of(testing::cpu_profile());
  EXPECT_LT(text.find("## CPU samples"), text.find("## Insights"));
  const auto lines = section(text, "CPU samples");
  const Table facts = first_table(lines);
  ASSERT_EQ(facts.rows.size(), 3u);
  EXPECT_EQ(facts.rows[1], (Row{"Samples", "14 samples (16.0 ms of CPU time) on 2 threads"}));
  const Table top = first_table(subsection(lines, "Top functions"));
  EXPECT_EQ(top.header, (Row{"#", "Function", "Module", "Self (% of samples)", "Self samples", "Self time",
                             "Total (% of samples)", "Total samples"}));
  ASSERT_EQ(top.rows.size(), 8u);
  EXPECT_EQ(top.rows[0], (Row{"1", "matmul", "train", "28.6%", "4", "6.00 ms", "64.3%", "9"}));
  EXPECT_EQ(top.rows[3], (Row{"4", "\\[unknown\\]", "?", "7.1%", "1", "1.00 ms", "7.1%", "1"}));
  EXPECT_TRUE(contains(subsection(lines, "Who calls the hottest functions"),
                       "- **matmul**: called from run_step (9 samples, 100.0%); calls dot (4 samples, 44.4%), memcpy "
                       "(1 sample, 11.1%)"));
}

TEST(MarkdownReport, CpuHotLinesScopesAndFindings) {
  const auto lines = section(report_of(testing::cpu_profile()), "CPU samples");
  const Table hot = first_table(subsection(lines, "Hot lines"));
  ASSERT_EQ(hot.rows.size(), 3u);
  EXPECT_EQ(hot.rows[0], (Row{"1", "model.cpp:31", "matmul", "4", "28.6%", "6.00 ms"}));
  const Table scopes = first_table(subsection(lines, "Samples per scope"));
  ASSERT_EQ(scopes.rows.size(), 4u);
  EXPECT_EQ(scopes.rows[1], (Row{"train_step \\> forward", "9", "64.3%", "11.0 ms",
                                 "matmul 44.4%, dot 44.4%, memcpy 11.1%"}));
  EXPECT_TRUE(contains(subsection(lines, "CPU findings"), "- Too few CPU samples to judge (14, at least 20 needed)"));
}

TEST(MarkdownReport, NoCpuSectionWithoutSampling) {
  const std::string text = report_of(testing::export_profile());
  EXPECT_EQ(text.find("## CPU samples"), std::string::npos);
  EXPECT_EQ(text.find("Hot lines"), std::string::npos);
}

TEST(MarkdownReport, Throughput) {
  const Table t = first_table(section(report_of(testing::export_profile()), "Throughput"));
  EXPECT_EQ(t.header, (Row{"Scope", "Items", "Total", "Throughput"}));
  EXPECT_EQ(t.rows, (std::vector<Row>{{"train_step", "320", "100 ms", "3,200 items/s"},
                                      {"matmul", "2,000", "40.0 ms", "50,000 items/s"}}));
}

TEST(MarkdownReport, MostCalled) {
  const Table t = first_table(section(report_of(testing::export_profile()), "Most called"));
  EXPECT_EQ(t.header, (Row{"#", "Scope", "Calls", "Total", "Avg", "Self"}));
  EXPECT_EQ(t.rows, (std::vector<Row>{{"1", "matmul", "1,000", "40.0 ms", "40.0 µs", "40.0 ms"},
                                      {"2", "backward", "10", "30.0 ms", "3.00 ms", "30.0 ms"},
                                      {"3", "forward", "10", "60.0 ms", "6.00 ms", "20.0 ms"},
                                      {"4", kWeirdMd, "10", "5.00 ms", "500 µs", "5.00 ms"},
                                      {"5", "train_step", "10", "100 ms", "10.0 ms", "5.00 ms"}}));
}

TEST(MarkdownReport, CallHierarchyIsANestedListByTotalTime) {
  const auto lines = section(report_of(testing::export_profile()), "Call hierarchy");
  std::vector<std::string> items;
  for (const std::string& line : lines) {
    if (line.find("- ") != std::string::npos && line.find_first_not_of(' ') == line.find("- ")) {
      items.push_back(line);
    }
  }
  EXPECT_EQ(items,
            (std::vector<std::string>{
                "- **train_step**: 10 calls, total 100 ms (100.0%), self 5.00 ms, avg 10.0 ms",
                "  - **forward**: 10 calls, total 60.0 ms (60.0%), self 20.0 ms, avg 6.00 ms",
                "    - **matmul**: 1,000 calls, total 40.0 ms (40.0%), self 40.0 ms, avg 40.0 µs",
                "  - **backward**: 10 calls, total 30.0 ms (30.0%), self 30.0 ms, avg 3.00 ms",
                "  - **" + kWeirdMd + "**: 10 calls, total 5.00 ms (5.0%), self 5.00 ms, avg 500 µs"}));
  EXPECT_FALSE(contains(lines, "not shown"));
}

// A profile with one scope and a chain or fan of tree nodes.
Profile profile_with_tree(std::vector<CallTreeNode> nodes) {
  Profile p;
  p.strings = {"n"};
  p.scopes = {testing::scope_stats(0, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0})};
  p.call_tree = std::move(nodes);
  return p;
}

TEST(MarkdownReport, CallHierarchyCountsWhatItLeavesOut) {
  const ScopeStats s =
      testing::scope_stats(0, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  std::vector<CallTreeNode> chain(1);
  for (std::uint32_t id = 1; id <= 15; ++id) {
    chain[id - 1].children = {id};
    chain.push_back(testing::tree_node(id, id - 1, id, {}, s));
  }
  auto lines = section(report_of(profile_with_tree(std::move(chain))), "Call hierarchy");
  EXPECT_TRUE(contains(lines, std::string(22, ' ') + "- **n**"));  // level 12
  EXPECT_FALSE(contains(lines, std::string(24, ' ') + "- **n**"));
  EXPECT_TRUE(contains(lines, "3 nodes not shown: 3 deeper than 12 levels."));

  std::vector<CallTreeNode> fan(1);
  for (std::uint32_t id = 1; id <= 250; ++id) {
    fan[0].children.push_back(id);
    fan.push_back(testing::tree_node(id, 0, 1, {}, s));
  }
  lines = section(report_of(profile_with_tree(std::move(fan))), "Call hierarchy");
  std::size_t items = 0;
  for (const std::string& line : lines) items += line.starts_with("- **n**") ? 1 : 0;
  EXPECT_EQ(items, 200u);
  EXPECT_TRUE(contains(lines, "50 nodes not shown: 50 beyond the first 200 lines."));
}

TEST(MarkdownReport, Threads) {
  const Table t = first_table(section(report_of(testing::export_profile()), "Threads"));
  EXPECT_EQ(t.header, (Row{"Thread", "TID", "Scopes", "Top-level time", "% of instrumented time",
                           "State"}));
  EXPECT_EQ(t.rows, (std::vector<Row>{{"main", "1001", "1,040", "100 ms", "100.0%", "running"},
                                      {"worker", "1002", "0", "0 ns", "0.0%", "exited"}}));
}

TEST(MarkdownReport, MemoryCounters) {
  const auto lines = section(report_of(testing::export_profile()), "Memory counters");
  const Table t = first_table(lines);
  EXPECT_EQ(t.header,
            (Row{"Counter", "Current", "Peak", "Allocated", "Freed", "Allocations", "Frees"}));
  EXPECT_EQ(t.rows,
            (std::vector<Row>{
                {"activations", "1.50 KiB", "3.00 MiB", "12.0 MiB", "12.0 MiB", "300", "299"},
                {"weights", "4.00 MiB", "4.00 MiB", "4.00 MiB", "0 B", "100", "0"}}));
  EXPECT_TRUE(contains(lines, "All counters: current 4.00 MiB, peak 7.00 MiB at 42.0 ms after the "
                              "session start."));

  Profile p = testing::export_profile();
  p.memory_counters.clear();
  EXPECT_EQ(report_of(p).find("## Memory counters"), std::string::npos);
}

TEST(MarkdownReport, Insights) {
  const auto lines = section(report_of(testing::export_profile()), "Insights");
  const std::vector<std::string> expected{
      "- The top 5 scopes by self time account for 100.0% of instrumented time.",
      "- Highest self time: **matmul**, 40.0 ms (40.0% of instrumented time) in 1,000 calls.",
      "- No scope is short enough for instrumentation cost (20.0 ns per scope) to dominate its "
      "timing.",
      "- Highest allocation: **matmul** 12.0 MiB (75.0% of all allocations, 12.3 KiB per call); **" +
          kWeirdMd +
          "** 4.00 MiB (25.0% of all allocations, 410 KiB per call). Allocating on every call "
          "costs time and memory pressure: consider reusing buffers (a pool or a preallocated "
          "workspace).",
      "- High call frequency: **matmul** 1,000 calls, 4,000 calls/s over the session, 40.0 µs per "
      "call. Per-call costs add up: consider batching the work into fewer calls or caching "
      "results."};
  std::vector<std::string> bullets;
  for (const std::string& line : lines) {
    if (line.starts_with("- ")) bullets.push_back(line);
  }
  EXPECT_EQ(bullets, expected);
}

TEST(MarkdownReport, InsightsFlagInflatedAndLowFrequency) {
  Profile p = testing::export_profile();
  p.completeness.overhead_per_scope_ns = 5000.0;  // 10 x 5 µs = 50 µs: matmul's 40 µs mean is below
  p.scopes[2].time.count = 999;
  const auto lines = section(report_of(p), "Insights");
  EXPECT_TRUE(contains(lines, "- Timings dominated by instrumentation cost (mean below 10 × 5.00 µs "
                              "= 50.0 µs per call): **matmul**."));
  EXPECT_TRUE(contains(lines, "- No scope was called 1,000 times or more."));
}

TEST(MarkdownReport, CompletenessAndCost) {
  const auto lines = section(report_of(testing::export_profile()), "Completeness and cost");
  const Table t = first_table(lines);
  EXPECT_EQ(t.header, (Row{"Measure", "Value"}));
  EXPECT_EQ(t.rows,
            (std::vector<Row>{
                {"Scopes recorded", "1,040"},
                {"Spans", "1,000 kept, 40 dropped, 0 overwritten (policy keep-first, memory cap "
                          "64.0 MiB)"},
                {"Events dropped", "0 memory events"},
                {"Hot-path buffer allocations", "2 buffers of 64 KiB"},
                {"Instrumentation",
                 "20.0 ns per scope × 1,040 scopes = 20.8 µs (\\<0.1% of instrumented time)"}}));
  EXPECT_TRUE(contains(lines, "Statistics and the call tree are complete"));
}

TEST(MarkdownReport, Diagnostics) {
  const auto lines = section(report_of(testing::export_profile()), "Diagnostics");
  const Table t = first_table(lines);
  EXPECT_EQ(t.header, (Row{"Severity", "Kind", "Thread", "Scope or counter", "Count", "Message"}));
  EXPECT_EQ(t.rows,
            (std::vector<Row>{
                {"warning", "spans_dropped", "n/a", "n/a", "40",
                 "40 spans were dropped after the memory cap of 64.0 MiB was reached."},
                {"info", "unclosed_scope", "worker (TID 1002)", kWeirdMd, "1",
                 "A scope was still open when the profile was taken."}}));

  Profile clean = testing::export_profile();
  clean.diagnostics.clear();
  EXPECT_TRUE(contains(section(report_of(clean), "Diagnostics"), "None."));
}

TEST(MarkdownReport, LongRankingsSayHowManyAreShown) {
  Profile p;
  for (std::uint32_t i = 0; i < 40; ++i) {
    p.strings.push_back("scope" + std::to_string(i));
    p.scopes.push_back(
        testing::scope_stats(i, kMs, {1, kMs, kMs, kMs, 1e6, 0, 0, 0, 0}));
  }
  const std::string text = report_of(p);
  const auto hot = section(text, "Hot paths by time");
  EXPECT_TRUE(contains(hot, "Top 30 of 40 scopes."));
  EXPECT_EQ(first_table(hot).rows.size(), 30u);
  const auto called = section(text, "Most called");
  EXPECT_TRUE(contains(called, "Top 15 of 40 scopes."));
  EXPECT_EQ(first_table(called).rows.size(), 15u);
}

TEST(MarkdownReport, EmptyProfilePrintsSystemInformationAndAHint) {
  const std::string text = report_of(Profile{});
  EXPECT_TRUE(text.starts_with("# nnprof report\n"));
  EXPECT_NE(text.find("## System information"), std::string::npos);
  EXPECT_NE(text.find("No scopes were recorded"), std::string::npos);
  for (const char* absent : {"## Hot paths", "## Most called", "## Call hierarchy", "## Insights",
                             "## Completeness", "## Diagnostics"}) {
    EXPECT_EQ(text.find(absent), std::string::npos) << absent;
  }
}

TEST(MarkdownReport, EveryTableInTheReportIsWellFormed) {
  const std::vector<std::string> lines = lines_of(report_of(testing::export_profile()));
  std::size_t tables = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("|") || (i > 0 && lines[i - 1].starts_with("|"))) continue;
    ++tables;
    EXPECT_TRUE(i == 0 || lines[i - 1].empty()) << "a table must follow a blank line: " << lines[i];
    first_table({lines.begin() + static_cast<std::ptrdiff_t>(i), lines.end()});
  }
  EXPECT_EQ(tables, 10u);
}

TEST(MarkdownReport, EveryTableOfAHeapReportIsWellFormed) {
  const std::vector<std::string> lines = lines_of(report_of(testing::heap_profile()));
  std::size_t tables = 0;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (!lines[i].starts_with("|") || (i > 0 && lines[i - 1].starts_with("|"))) continue;
    ++tables;
    EXPECT_TRUE(i == 0 || lines[i - 1].empty()) << "a table must follow a blank line: " << lines[i];
    first_table({lines.begin() + static_cast<std::ptrdiff_t>(i), lines.end()});
  }
  EXPECT_EQ(tables, 10u);  // system, 2 hot paths, most called, threads, heap, allocators, sites, completeness, diagnostics
}

TEST(MarkdownReport, RegisteredByNameAndExtension) {
  const io::Exporter* e = io::find_exporter("markdown");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->name(), "markdown");
  EXPECT_EQ(e->extension(), ".md");
  EXPECT_EQ(io::find_exporter_for_path("docs/profile.MD"), e);
  std::ostringstream out;
  e->write(testing::export_profile(), out);
  EXPECT_EQ(out.str(), report_of(testing::export_profile()));
}

TEST(MarkdownReport, ReachableThroughReportFormat) {
  std::ostringstream out;
  Report(testing::export_profile()).write(out, ReportFormat::Markdown);
  EXPECT_EQ(out.str(), report_of(testing::export_profile()));
}

TEST(MarkdownReport, RecordedProfile) {
  using namespace std::chrono_literals;
  Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "step");
    for (int i = 0; i < 2; ++i) {
      NNPROF_SCOPE_IN(profiler, "attention|qkv");
      std::this_thread::sleep_for(1ms);
    }
  }
  const Profile p = profiler.snapshot();
  std::ostringstream out;
  io::find_exporter("markdown")->write(p, out);
  const std::string text = out.str();
  const Table hot = first_table(section(text, "Hot paths by time"));
  ASSERT_EQ(hot.rows.size(), 2u);
  EXPECT_EQ(hot.rows[0][1], "step");
  EXPECT_EQ(hot.rows[0][3], "100.0%");
  EXPECT_EQ(hot.rows[0][4], "1");
  EXPECT_EQ(hot.rows[1][1], "attention\\|qkv");
  EXPECT_EQ(hot.rows[1][4], "2");
  const auto tree = section(text, "Call hierarchy");
  EXPECT_TRUE(contains(tree, "- **step**: 1 call, total "));
  EXPECT_TRUE(contains(tree, "  - **attention\\|qkv**: 2 calls, total "));
  const Table threads = first_table(section(text, "Threads"));
  EXPECT_EQ(threads.rows.size(), p.threads.size());
}

}  // namespace
}  // namespace nnprof
