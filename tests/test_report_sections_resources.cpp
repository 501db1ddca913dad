// The resource sections of the report model (memory counters, heap, CPU samples, GPU, metrics,
// critical path): on hand-made profiles, the blocks each builder appends state the facts the
// text, Markdown and HTML reports stated, once, with raw values beside the shown text.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cpu_profile_fixture.hpp"
#include "gpu_profile_fixture.hpp"
#include "gpu_report_fixture.hpp"
#include "analysis/critical_path.hpp"
#include "analysis/function_name.hpp"
#include "report/format.hpp"
#include "render/sentence_markup.hpp"
#include "report/cells.hpp"
#include "report/charts/html_charts.hpp"
#include "report/report_data.hpp"
#include "report/sections.hpp"
#include "report_blocks.hpp"
#include "sample_profiles.hpp"

namespace nnprof {
namespace {

using report::Block;
using report::Section;
using report::Table;
using namespace report_testing;

std::string fact(const Profile& profile, const Section& section, std::string_view label) {
  for (const report::Facts* facts : blocks_of<report::Facts>(section))
    for (const report::Fact& f : facts->items)
      if (f.label == label) return render::text_of(profile, f.value);
  return "<no fact " + std::string(label) + ">";
}

std::vector<std::string> subheadings(const Section& section) {
  std::vector<std::string> out;
  for (const report::Subheading* s : blocks_of<report::Subheading>(section)) out.push_back(s->title);
  return out;
}


// ---- memory counters -------------------------------------------------------------------

TEST(MemorySection, CountersTableTotalsAndChart) {
  const Profile p = testing::export_profile();
  const auto sections = build(report::sections::memory, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.id, "memory");
  EXPECT_EQ(s.title, "Memory counters");
  const Table& t = table_with_id(s, "counters-table");
  EXPECT_EQ(headers(t), (Row{"Counter", "Current", "Peak", "Allocated", "Freed", "Allocations", "Frees"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(texts(t.rows[0]), (Row{"activations", "1.50 KiB", "3.00 MiB", "12.0 MiB", "12.0 MiB", "300", "299"}));
  EXPECT_EQ(texts(t.rows[1]), (Row{"weights", "4.00 MiB", "4.00 MiB", "4.00 MiB", "0 B", "100", "0"}));
  EXPECT_TRUE(t.rows[0][0].name);
  EXPECT_EQ(t.rows[0][2].value, 3.0 * testing::kMiB);
  EXPECT_EQ(t.rows[0][5].value, 300.0);
  EXPECT_TRUE(says(p, s, "All counters: current 4.00 MiB, peak 7.00 MiB at 42.0 ms after the session start."));
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_FALSE(pictures[0]->html().empty());  // the chart, or the note that no memory event was recorded
}

TEST(MemorySection, RawValuesOfTheRichProfile) {
  const Profile p = testing::rich_profile();
  const auto sections = build(report::sections::memory, report::analyse(p));
  const auto* weights = [&]() -> const std::vector<report::Cell>* {
    for (const auto& row : table_with_id(sections.at(0), "counters-table").rows)
      if (row[0].text == "weights") return &row;
    return nullptr;
  }();
  ASSERT_NE(weights, nullptr);
  EXPECT_EQ((*weights)[1].text, "3.00 KiB");
  EXPECT_EQ((*weights)[1].value, 3072.0);
  EXPECT_NE(blocks_of<report::Picture>(sections[0]).at(0)->html().find("<svg class=\"mem\""), std::string::npos);
}

TEST(MemorySection, WithoutCountersOnlyTheHintOrNothingWithHeapTracking) {
  Profile p = testing::export_profile();
  p.memory_counters.clear();
  const auto sections = build(report::sections::memory, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].blocks.size(), 1u);
  EXPECT_EQ(paragraphs(p, sections[0]),
            (Row{"No memory counters were recorded: report allocations with record_alloc/record_free to see memory "
                 "over time."}));
  const Profile heap_only = testing::heap_profile();
  EXPECT_TRUE(build(report::sections::memory, report::analyse(heap_only)).empty());
}

TEST(MemorySection, BesideTheHeapWhenBothWereRecorded) {
  Profile p = testing::heap_profile();
  p.memory_counters = {MemoryCounter{0, 5, 5, 5, 0, 1, 0, 5}};
  p.memory_events = {MemoryEvent{1000, 0, 0, 5}};
  p.memory = {5, 5, 1000};
  const auto sections = build(report::sections::memory, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(table_with_id(sections[0], "counters-table").rows.size(), 1u);
  EXPECT_NE(blocks_of<report::Picture>(sections[0]).at(0)->html().find("aria-label=\"Memory in use over time\""),
            std::string::npos);
}

// ---- heap ---------------------------------------------------------------------------------

TEST(HeapSection, FactsVerdictAndChart) {
  const Profile p = testing::heap_profile();
  const auto sections = build(report::sections::heap, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.title, "Heap memory");
  EXPECT_EQ(fact(p, s, "Tracked by"), "nnprof::MemoryTracking (in-process)");
  EXPECT_EQ(fact(p, s, "Allocated"), "163 MiB in 185 allocations; 145 MiB freed in 169 frees");
  EXPECT_EQ(fact(p, s, "Peak"), "22.0 MiB at 949 ms after the session start, on main (TID 2001), in train_step > "
                                "forward > matmul");
  EXPECT_EQ(fact(p, s, "At the end"), "18.0 MiB in 16 blocks: 10.0 MiB in 13 blocks leaked (unreachable), 8.00 MiB in "
                                      "3 blocks still reachable");
  EXPECT_EQ(fact(p, s, "RSS"), "initial 48.0 MiB, peak 59.0 MiB (VmHWM), final 57.0 MiB");
  EXPECT_EQ(fact(p, s, "Timeline"), "50 samples, every 20.0 ms");
  EXPECT_EQ(fact(p, s, "Leak verdict"),
            "Memory leak detected: 13 blocks (10.0 MiB) were unreachable at the end; heap in use grew steadily over "
            "the second half of the run (500 ms to 980 ms): by 4.62 MiB, 9.62 MiB/s; RSS grew steadily too: by 4.62 "
            "MiB, 9.62 MiB/s.");
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->style.find(".mem .rss"), std::string_view::npos);
  EXPECT_EQ(subheadings(s), (Row{"Top allocators", "Blocks still allocated at the end", "Memory findings"}));
}

TEST(HeapSection, TopAllocatorsWithRawValues) {
  const Profile p = testing::heap_profile();
  const auto sections = build(report::sections::heap, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_TRUE(says(p, s, "% is of the 163 MiB allocated in all"));
  const Table& t = table_with_id(s, "heap-allocators-table");
  EXPECT_EQ(headers(t), (Row{"#", "Scope", "Allocated", "% of heap allocated", "Allocations", "Avg per call",
                             "Retained at end", "Retained blocks", "Peak live"}));
  ASSERT_EQ(t.rows.size(), 6u);
  EXPECT_EQ(texts(t.rows[0]),
            (Row{"1", "load_batch", "80.0 MiB", "49.0%", "13", "8.00 MiB", "8.00 MiB", "4", "16.0 MiB"}));
  EXPECT_EQ(texts(t.rows[1]), (Row{"2", "matmul", "40.0 MiB", "24.5%", "40", "1.00 MiB", "0 B", "0", "1.00 MiB"}));
  EXPECT_EQ(texts(t.rows[4]),
            (Row{"5", "optimizer_step", "10.0 MiB", "6.1%", "10", "1.00 MiB", "10.0 MiB", "10", "10.0 MiB"}));
  EXPECT_EQ(texts(t.rows[5]), (Row{"6", "train_step", "640 KiB", "0.4%", "10", "64.0 KiB", "0 B", "0", "64.0 KiB"}));
  // The HTML report's sortable values.
  EXPECT_EQ(t.rows[0][2].value, 83889152.0);
  EXPECT_EQ(t.rows[0][6].value, 8391680.0);
  EXPECT_EQ(t.rows[0][7].value, 4.0);
  EXPECT_EQ(t.rows[0][8].value, 16780288.0);
  EXPECT_TRUE(t.rows[0][3].bar);
}

TEST(HeapSection, LeakSitesWithTheirStacksAsTitles) {
  const Profile p = testing::heap_profile();
  const auto sections = build(report::sections::heap, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Table& t = table_with_id(sections[0], "leaks-table");
  EXPECT_EQ(headers(t), (Row{"#", "Scope", "Allocated at (calling function)", "Blocks", "Bytes", "State"}));
  ASSERT_EQ(t.rows.size(), 4u);
  EXPECT_EQ(texts(t.rows[0]), (Row{"1", "train_step > optimizer_step",
                                   "History::append(Tensor const&) (src/optim/history.cpp:42)", "10", "10.0 MiB",
                                   "leaked"}));
  EXPECT_EQ(t.rows[0][2].title, "sampled stack, innermost first:\nHistory::append(Tensor const&) "
                                "(src/optim/history.cpp:42)\nOptimizer::step() (src/optim/sgd.cpp:97)\nmain "
                                "(src/train.cpp:31)");
  EXPECT_EQ(t.rows[0][4].value, 10485760.0);
  EXPECT_EQ(texts(t.rows[2]), (Row{"3", "[outside any scope]", "init_logging() (src/log.cpp:12)", "2", "4.00 KiB",
                                   "reachable"}));
  EXPECT_EQ(texts(t.rows[3]), (Row{"4", "load_batch", "Reader<Header>::parse(std::istream&) (src/data/reader.cpp:88)",
                                   "3", "3.00 KiB", "leaked"}));
}

TEST(HeapSection, LimitsAreHonouredAndSaid) {
  const Profile p = testing::heap_profile();
  report::ReportLimits limits;
  limits.allocators = 2;
  limits.leak_sites = 3;
  const auto sections = build(report::sections::heap, report::analyse(p, limits));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(table_with_id(sections[0], "heap-allocators-table").rows.size(), 2u);
  EXPECT_EQ(table_with_id(sections[0], "leaks-table").rows.size(), 3u);
  EXPECT_TRUE(says(p, sections[0], "Top 2 of 6 scopes.")) << ::testing::PrintToString(paragraphs(p, sections[0]));
  EXPECT_TRUE(says(p, sections[0], "Top 3 of 4 allocation sites."));
}

TEST(HeapSection, FindingsOrTheThresholdsNotPassed) {
  const Profile p = testing::heap_profile();
  const auto sections = build(report::sections::heap, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const auto findings = blocks_of<report::Findings>(sections[0]);
  ASSERT_EQ(findings.size(), 1u);
  ASSERT_EQ(findings[0]->items.size(), 3u);
  const report::Finding& first = findings[0]->items[0];
  EXPECT_EQ(first.severity, "high");
  EXPECT_EQ(first.title, "Memory hotspot");
  EXPECT_EQ(render::text_of(p, first.description), "load_batch held up to 16.0 MiB live at once, 72.7% of the 22.0 MiB heap "
                                              "peak (threshold 30.0%).");
  EXPECT_TRUE(render::text_of(p, first.suggestion).starts_with("It allocates 8.00 MiB per call (80.0 MiB over 10 calls)"));
  bool leak = false;
  for (const report::Finding& f : findings[0]->items) {
    if (f.title != "Memory leak") continue;
    leak = true;
    EXPECT_EQ(f.severity, "medium");
    EXPECT_TRUE(render::text_of(p, f.description).starts_with("10.0 MiB in 13 blocks (6.1% of the 163 MiB allocated"));
  }
  EXPECT_TRUE(leak);

  Profile quiet = testing::heap_profile();
  for (ScopeStats& scope : quiet.scopes) scope.heap.peak_live_bytes = 0;
  quiet.heap.leaked_bytes = 0;
  const auto quiet_sections = build(report::sections::heap, report::analyse(quiet));
  const auto none = blocks_of<report::Findings>(quiet_sections.at(0));
  ASSERT_EQ(none.size(), 1u);
  EXPECT_TRUE(none[0]->items.empty());
  EXPECT_EQ(render::text_of(quiet, none[0]->none),
            "No memory bottleneck: no scope held more than 30.0% of the heap peak, and no more than 5.0% of the bytes "
            "allocated were left unfreed.");
}

TEST(HeapSection, NoneWithoutHeapTracking) {
  const Profile untracked = testing::export_profile();
  EXPECT_TRUE(build(report::sections::heap, report::analyse(untracked)).empty());
}

// ---- CPU samples ----------------------------------------------------------------------------

TEST(CpuSection, FactsAndTopFunctions) {
  const Profile p = testing::cpu_profile();
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.id, "cpu");
  EXPECT_EQ(s.title, "CPU samples");
  EXPECT_EQ(fact(p, s, "Sampling"), "CPU time of each thread, 1000 Hz requested (one sample every 1.00 ms), by "
                                    "perf_event; call stacks by libunwind");
  EXPECT_EQ(fact(p, s, "Samples"), "14 samples (16.0 ms of CPU time) on 2 threads");
  EXPECT_EQ(fact(p, s, "Samples lost"), "3 dropped (the sample buffer was full), 1 stack cut at the depth limit, 1 "
                                        "without a stack");
  EXPECT_EQ(subheadings(s), (Row{"Top functions", "Who calls the hottest functions", "Hot lines", "Samples per scope",
                                 "CPU findings"}));
  const Table& t = table_with_id(s, "cpu-functions-table");
  EXPECT_EQ(headers(t), (Row{"#", "Function", "Module", "Self (% of samples)", "Self samples", "Self time",
                             "Total (% of samples)", "Total samples"}));
  ASSERT_EQ(t.rows.size(), 8u);
  EXPECT_EQ(texts(t.rows[0]), (Row{"1", "matmul", "train", "28.6%", "4", "6.00 ms", "64.3%", "9"}));
  EXPECT_EQ(texts(t.rows[2]), (Row{"3", "recurse", "train", "14.3%", "2", "2.00 ms", "14.3%", "2"}));
  EXPECT_EQ(texts(t.rows[3]), (Row{"4", "[unknown]", "?", "7.1%", "1", "1.00 ms", "7.1%", "1"}));
  EXPECT_EQ(texts(t.rows[4]), (Row{"5", "libfoo.so+0x7000", "libfoo.so", "7.1%", "1", "1.00 ms", "7.1%", "1"}));
  EXPECT_EQ(texts(t.rows[6]), (Row{"7", "main", "train", "0.0%", "0", "0 ns", "92.9%", "13"}));
  EXPECT_EQ(t.rows[0][5].value, 6e6);
  EXPECT_EQ(t.rows[0][4].value, 4.0);
  EXPECT_TRUE(t.rows[0][1].name);
  EXPECT_TRUE(t.rows[0][1].title.empty());  // the readable name is the whole name
}

TEST(CpuSection, FunctionsShowTheirReadableNameWithTheSignatureAsTitle) {
  Profile p = testing::cpu_profile();
  const std::string full = "std::vector<float, std::allocator<float> > ns::matmul<float>(float const*, int)";
  p.strings[testing::kCpuMatmul] = full;
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  const Table& t = table_with_id(sections.at(0), "cpu-functions-table");
  ASSERT_FALSE(t.rows.empty());
  EXPECT_EQ(t.rows[0][1].text, analysis::readable_function(full));
  EXPECT_NE(t.rows[0][1].text, full);
  EXPECT_EQ(t.rows[0][1].title, full);

  // --full-names: the whole signature is shown, in the functions table and the scopes' hottest.
  report::ReportLimits full_names;
  full_names.full_names = true;
  const auto full_sections = build(report::sections::cpu_samples, report::analyse(p, full_names));
  EXPECT_EQ(table_with_id(full_sections.at(0), "cpu-functions-table").rows.at(0)[1].text, full);
  bool hottest = false;
  for (const auto& row : table_with_id(full_sections.at(0), "cpu-scopes-table").rows)
    hottest = hottest || row[4].text.starts_with(full);
  EXPECT_TRUE(hottest);
}

TEST(CpuSection, HugeNamesAreCappedWithTheFullNameAsTitle) {
  Profile p = testing::cpu_profile();
  p.strings[testing::kCpuMatmul] = std::string(5'000, 'm');
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  const Table& t = table_with_id(sections.at(0), "cpu-functions-table");
  EXPECT_LE(t.rows.at(0)[1].text.size(), report::kNameDisplayLimit + 64);
  EXPECT_LE(t.rows.at(0)[1].title.size(), report::kTextDisplayLimit + 64);
  EXPECT_GT(t.rows.at(0)[1].title.size(), t.rows.at(0)[1].text.size());
}

TEST(CpuSection, CallersLinesScopesAndFindings) {
  const Profile p = testing::cpu_profile();
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  const auto bullets = blocks_of<report::Bullets>(s);
  ASSERT_EQ(bullets.size(), 1u);
  ASSERT_GE(bullets[0]->items.size(), 2u);
  EXPECT_EQ(render::text_of(p, bullets[0]->items[0]), "matmul: called from run_step (9 samples, 100.0%); calls dot (4 "
                                                 "samples, 44.4%), memcpy (1 sample, 11.1%)");
  bool recurse = false;
  for (const auto& item : bullets[0]->items)
    recurse = recurse || render::text_of(p, item) == "recurse: called from run_step (2 samples, 100.0%)";
  EXPECT_TRUE(recurse);

  const Table& lines = table_with_id(s, "cpu-lines-table");
  EXPECT_EQ(headers(lines), (Row{"#", "Line", "Function", "Self samples", "% of samples", "Time"}));
  ASSERT_EQ(lines.rows.size(), 3u);
  EXPECT_EQ(texts(lines.rows[0]), (Row{"1", "model.cpp:31", "matmul", "4", "28.6%", "6.00 ms"}));
  EXPECT_EQ(texts(lines.rows[1]), (Row{"2", "model.cpp:42", "dot", "4", "28.6%", "4.00 ms"}));
  EXPECT_EQ(texts(lines.rows[2]), (Row{"3", "model.cpp:50", "recurse", "2", "14.3%", "2.00 ms"}));

  const Table& scopes = table_with_id(s, "cpu-scopes-table");
  ASSERT_EQ(scopes.rows.size(), 4u);
  EXPECT_EQ(texts(scopes.rows[1]),
            (Row{"train_step > forward", "9", "64.3%", "11.0 ms", "matmul 44.4%, dot 44.4%, memcpy 11.1%"}));
  bool outside = false;
  for (const auto& row : scopes.rows)
    outside = outside || texts(row) == Row{"[outside any scope]", "2", "14.3%", "2.00 ms", "[unknown] 50.0%"};
  EXPECT_TRUE(outside);

  const auto findings = blocks_of<report::Findings>(s);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_TRUE(findings[0]->items.empty());
  EXPECT_TRUE(render::text_of(p, findings[0]->none).starts_with("Too few CPU samples to judge (14, at least 20 needed)"));
}

TEST(CpuSection, FlameGraphIsAPictureWithItsScript) {
  const Profile p = testing::cpu_profile();
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  const auto pictures = blocks_of<report::Picture>(sections.at(0));
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("Flame graph"), std::string::npos);
  EXPECT_NE(pictures[0]->html().find("data-nodes"), std::string::npos);
  EXPECT_FALSE(pictures[0]->script.empty());
  EXPECT_FALSE(pictures[0]->style.empty());
}

TEST(CpuSection, LimitsAreHonouredAndSaid) {
  const Profile p = testing::cpu_profile();
  report::ReportLimits limits;
  limits.cpu_functions = 3;
  limits.cpu_caller_functions = 1;
  limits.cpu_edges = 1;
  limits.hot_lines = 2;
  limits.cpu_scopes = 2;
  const auto sections = build(report::sections::cpu_samples, report::analyse(p, limits));
  const Section& s = sections.at(0);
  EXPECT_EQ(table_with_id(s, "cpu-functions-table").rows.size(), 3u);
  EXPECT_TRUE(says(p, s, "Top 3 of 8 functions."));
  EXPECT_EQ(table_with_id(s, "cpu-lines-table").rows.size(), 2u);
  EXPECT_EQ(table_with_id(s, "cpu-scopes-table").rows.size(), 2u);
  EXPECT_TRUE(says(p, s, "Top 2 of 4 scopes."));
  const auto bullets = blocks_of<report::Bullets>(s);
  ASSERT_EQ(bullets.size(), 1u);
  ASSERT_EQ(bullets[0]->items.size(), 1u);
  EXPECT_EQ(render::text_of(p, bullets[0]->items[0]),
            "matmul: called from run_step (9 samples, 100.0%); calls dot (4 samples, 44.4%) and 1 more");
}

TEST(CpuSection, NoneWithoutSamplingAndNoFunctionsWithoutStacks) {
  const Profile unsampled = testing::export_profile();
  EXPECT_TRUE(build(report::sections::cpu_samples, report::analyse(unsampled)).empty());
  Profile p = testing::cpu_profile();
  for (CpuSample& sample : p.cpu_samples) sample.stack = kNone;
  const auto sections = build(report::sections::cpu_samples, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_TRUE(blocks_of<Table>(sections[0]).empty());
  EXPECT_TRUE(says(p, sections[0], "No sample has a stack: there is nothing to attribute to functions."));
}

// ---- GPU ----------------------------------------------------------------------------------

TEST(GpuSection, FactsAndTablesWithRawValues) {
  const Profile p = testing::gpu_profile();
  const report::ReportData data = report::analyse(p);
  ASSERT_TRUE(data.gpu.has_value());
  const auto sections = build(report::sections::gpu, data);
  ASSERT_EQ(sections.size(), 2u);
  const Section& s = sections[0];
  EXPECT_EQ(s.title, "GPU");
  EXPECT_EQ(sections[1].title, "GPU time per scope");
  EXPECT_EQ(fact(p, s, "Status"), "CUPTI 13.0.1 tracing 2 devices");
  EXPECT_EQ(fact(p, s, "CUPTI and driver"), "CUPTI API version 130001, CUDA driver 13.0");
  EXPECT_NE(fact(p, s, "Records lost").find("3 records dropped (CUPTI had no buffer)"), std::string::npos);
  EXPECT_NE(fact(p, s, "Device 0").find("NVIDIA H100 80GB HBM3 (132 SMs"), std::string::npos);

  const report::GpuReportData& gpu = *data.gpu;
  const Table& kernels = table_with_id(s, "gpu-kernels-table");
  EXPECT_EQ(headers(kernels), (Row{"#", "Kernel", "Calls", "Total", "Mean", "Min", "Max", "% of GPU time", "Grid",
                                   "Block", "Registers per thread", "Theoretical occupancy"}));
  ASSERT_EQ(kernels.rows.size(), gpu.kernels.size());
  for (std::size_t i = 0; i < kernels.rows.size(); ++i) {
    EXPECT_EQ(kernels.rows[i][2].value, static_cast<double>(gpu.kernels[i].calls));
    EXPECT_EQ(kernels.rows[i][3].value, static_cast<double>(gpu.kernels[i].total_ns));
    EXPECT_EQ(kernels.rows[i][3].text, report::format_duration(gpu.kernels[i].total_ns));
  }
  EXPECT_EQ(kernels.rows[0][1].text, p.str(gpu.kernels[0].name));

  const Table& transfers = table_with_id(s, "gpu-transfers-table");
  ASSERT_EQ(transfers.rows.size(), gpu.transfers.size());
  bool htod = false;
  for (const auto& row : transfers.rows) htod = htod || row[0].text == "Memcpy HtoD";
  EXPECT_TRUE(htod);
  EXPECT_EQ(table_with_id(s, "gpu-streams-table").rows.size(), gpu.streams.streams.size());
  EXPECT_EQ(table_with_id(s, "gpu-devices-table").rows.size(), gpu.streams.devices.size());
  EXPECT_EQ(table_with_id(s, "gpu-peers-table").rows.size(), gpu.streams.peers.size());
  EXPECT_EQ(table_with_id(s, "gpu-memory-table").rows.size(), gpu.memory.devices.size());
  EXPECT_EQ(table_with_id(s, "gpu-leaks-table").rows.size(), gpu.memory.leaks.size());
  EXPECT_TRUE(says(p, s, "CUDA context, driver, library workspaces and other processes"));

  // Streams: the default stream is marked; the device is sorted by its number.
  bool default_stream = false;
  for (const auto& row : table_with_id(s, "gpu-streams-table").rows)
    default_stream = default_stream || row[1].text.ends_with(" (default)");
  EXPECT_TRUE(default_stream);

  // The kernel bars: one per kernel shown, with their own style.
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("id=\"gpu-kernel-chart\""), std::string::npos);
  EXPECT_NE(pictures[0]->style.find(".kbars"), std::string_view::npos);
}

TEST(GpuSection, KernelLimitsAndEscapedBars) {
  const Profile p = testing::gpu_profile();
  report::ReportLimits limits;
  limits.kernels = 1;
  limits.gpu_leaks = 1;
  const report::ReportData data = report::analyse(p, limits);
  ASSERT_GT(data.gpu->kernels.size(), 1u);
  const auto sections = build(report::sections::gpu, data);
  const Section& s = sections.at(0);
  EXPECT_EQ(table_with_id(s, "gpu-kernels-table").rows.size(), 1u);
  EXPECT_TRUE(says(p, s, "Top 1 of " + std::to_string(data.gpu->kernels.size()) + " kernels."));
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_EQ(pictures[0]->html().find("\"sum\""), std::string::npos);  // names are escaped in the bars
  if (data.gpu->memory.leaks.size() > 1) {
    EXPECT_EQ(table_with_id(s, "gpu-leaks-table").rows.size(), 1u);
  }
}

TEST(GpuSection, PerScopeTableAndItsShareOfCpuTime) {
  const Profile p = testing::gpu_profile();
  const auto sections = build(report::sections::gpu, report::analyse(p));
  ASSERT_EQ(sections.size(), 2u);
  const Section& s = sections[1];
  EXPECT_EQ(s.id, "gpu-scopes");
  const Table& t = table_with_id(s, "gpu-scopes-table");
  EXPECT_EQ(headers(t), (Row{"Scope", "Kernels", "Kernel time", "Copies", "Copy time", "Bytes copied",
                             "Device memory allocated", "GPU time", "GPU time / CPU time"}));
  ASSERT_EQ(t.rows.size(), p.gpu.scopes.size());
  for (std::size_t i = 0; i < t.rows.size(); ++i) {
    const GpuScopeStats& g = p.gpu.scopes[i];
    EXPECT_EQ(t.rows[i][7].value, static_cast<double>(g.gpu_ns()));
    const ScopeStats* cpu = g.name == kNone ? nullptr : p.find_scope(p.str(g.name));
    if (cpu != nullptr && cpu->total_ns > 0) {
      EXPECT_DOUBLE_EQ(t.rows[i][8].value, static_cast<double>(g.gpu_ns()) / static_cast<double>(cpu->total_ns));
      EXPECT_FALSE(t.rows[i][8].bar);  // may pass 100%: not a part of a whole
    } else {
      EXPECT_EQ(t.rows[i][8].text, "n/a");
    }
  }

  Profile no_scopes = testing::gpu_profile();
  no_scopes.gpu.scopes.clear();
  const auto empty = build(report::sections::gpu, report::analyse(no_scopes));
  ASSERT_EQ(empty.size(), 2u);
  EXPECT_TRUE(blocks_of<Table>(empty[1]).empty());
  EXPECT_TRUE(says(no_scopes, empty[1], "No GPU work was launched inside a scope."));
}

// test_gpu_reports' GPU profile (gpu_report_fixture.hpp), its scopes "forward" and "backward"
// built by hand (1 ms each) instead of recorded: kernel time 650 µs, copy time 10 µs, GPU time
// 660 µs, device memory peak 6 MiB, all launched in "forward".
Profile test_gpu_profile() {
  Profile p;
  p.strings = {"forward", "backward"};
  const DurationStats one_ms{1, testing::kMs, testing::kMs, testing::kMs, 1e6, 0.0, testing::kMs, testing::kMs,
                             testing::kMs};
  p.scopes = {testing::scope_stats(0, testing::kMs, one_ms), testing::scope_stats(1, testing::kMs, one_ms)};
  CallTreeNode root;
  root.children = {1, 2};
  p.call_tree = {root, testing::tree_node(1, 0, 1, {}, p.scopes[0]), testing::tree_node(2, 0, 1, {}, p.scopes[1])};
  p.meta.duration_ns = 1'000'000;
  testing::report_gpu::add_report_gpu(p, 1);
  return p;
}

const std::vector<report::Cell>* row_starting(const Table& table, const Row& first) {
  for (const auto& row : table.rows) {
    const Row shown = texts(row);
    if (shown.size() >= first.size() && std::equal(first.begin(), first.end(), shown.begin())) return &row;
  }
  return nullptr;
}

// The facts of test_gpu_reports' text, Markdown and HTML GPU sections, at the section level.
TEST(GpuSection, TheFactsTheOldReportsStated) {
  const Profile p = test_gpu_profile();
  const auto sections = build(report::sections::gpu, report::analyse(p));
  ASSERT_EQ(sections.size(), 2u);
  const Section& s = sections[0];
  EXPECT_EQ(s.id, "gpu");
  EXPECT_EQ(fact(p, s, "Status"), "CUPTI is tracing kernels, copies, memsets and device memory.");
  EXPECT_EQ(fact(p, s, "Device 0"), "Test GPU (80 SMs, 16.0 GiB, compute capability 8.0)");
  EXPECT_EQ(fact(p, s, "CUPTI and driver"), "CUPTI API version 26, CUDA driver 13.0");
  EXPECT_EQ(fact(p, s, "Clock source"), "monotonic-callback");
  EXPECT_EQ(fact(p, s, "Kernels"), "4 kernels, 650 µs of kernel time");
  EXPECT_EQ(fact(p, s, "Copies"), "1 copy, 1.00 MiB in 10.0 µs (105 GB/s), 1 pageable");
  EXPECT_EQ(fact(p, s, "Memsets"), "none");
  EXPECT_TRUE(fact(p, s, "GPU time").starts_with("660 µs"));
  EXPECT_EQ(fact(p, s, "Records lost"), "none lost");

  EXPECT_EQ(texts(table_with_id(s, "gpu-transfers-table").rows.at(0)),
            (Row{"Memcpy HtoD", "1", "1.00 MiB", "10.0 µs", "105 GB/s", "1"}));
  const Table& kernels = table_with_id(s, "gpu-kernels-table");
  ASSERT_EQ(kernels.rows.size(), 2u);
  EXPECT_EQ(texts(kernels.rows[0]), (Row{"1", "gemm_kernel", "3", "600 µs", "200 µs", "100 µs", "300 µs", "90.9%",
                                         "128×1×1", "256×1×1", "32", "50.0%"}));
  EXPECT_EQ(kernels.rows[0][3].value, 600e3);
  EXPECT_EQ(texts(kernels.rows[1]), (Row{"2", "relu_kernel", "1", "50.0 µs", "50.0 µs", "50.0 µs", "50.0 µs", "7.6%",
                                         "32×1×1", "256×1×1", "16", "n/a"}));
  // The bars: gemm_kernel the longest (100%), relu_kernel 50 of 600 µs.
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("<i style=\"width:100.0%\"></i></span><span class=\"kv\">600 µs (90.9%)</span>"),
            std::string::npos);
  EXPECT_NE(pictures[0]->html().find("<i style=\"width:8.3%\"></i></span><span class=\"kv\">50.0 µs (7.6%)</span>"),
            std::string::npos);

  const Table& streams = table_with_id(s, "gpu-streams-table");
  EXPECT_EQ(texts(streams.rows.at(0)),
            (Row{"0: Test GPU", "7 (default)", "3", "3", "600 µs", "200 µs", "2", "100 µs", "75.0%"}));
  EXPECT_EQ(texts(streams.rows.at(1)),
            (Row{"0: Test GPU", "13", "2", "1", "60.0 µs", "80.0 µs", "1", "80.0 µs", "42.9%"}));
  const auto* device = row_starting(table_with_id(s, "gpu-devices-table"), {"0: Test GPU", "4", "650 µs", "65.0%"});
  ASSERT_NE(device, nullptr);
  EXPECT_EQ((*device)[5].text, "10.0 µs");
  EXPECT_EQ((*device)[7].text, "60.0%");
  EXPECT_EQ((*device)[8].text, "80.0%");
  EXPECT_NE(row_starting(table_with_id(s, "gpu-memory-table"),
                         {"0: Test GPU", "6.00 MiB", "2.00 µs", "4.00 MiB", "2", "1", "1.40 GiB", "1.39 GiB"}),
            nullptr);
  EXPECT_TRUE(says(p, s, "CUDA context, driver, library workspaces and other processes"));
  EXPECT_EQ(texts(table_with_id(s, "gpu-leaks-table").rows.at(0)), (Row{"0: Test GPU", "forward", "1", "4.00 MiB"}));
  for (const std::string& title : subheadings(s)) EXPECT_NE(title, "Peer-to-peer copies");  // no peer copies

  const Table& scopes = table_with_id(sections[1], "gpu-scopes-table");
  ASSERT_EQ(scopes.rows.size(), 1u);  // backward launched nothing
  EXPECT_EQ(texts(scopes.rows[0]), (Row{"forward", "4", "650 µs", "1", "10.0 µs", "1.00 MiB", "6.00 MiB", "660 µs",
                                        report::format_percent(660e3 / 1e6)}));
}

TEST(GpuSection, LostRecordsAndPeerCopies) {
  Profile p = test_gpu_profile();
  p.gpu.summary.records_dropped = 12;
  p.gpu.summary.unmatched_correlations = 3;
  GpuDevice second;
  second.id = 1;
  second.name = "Other GPU";
  p.gpu.devices.push_back(second);
  GpuMemcpy peer;
  peer.kind = MemcpyKind::PtoP;
  peer.bytes = 2'000'000;
  peer.src_device = 0;
  peer.dst_device = 1;
  p.gpu.memcpys.push_back(peer);
  GpuOp o;
  o.kind = GpuOpKind::Memcpy;
  o.stream = 1;
  o.start_ns = 900 * testing::kUs;
  o.end_ns = 920 * testing::kUs;
  o.detail = 1;
  p.gpu.ops.push_back(o);
  const auto sections = build(report::sections::gpu, report::analyse(p));
  const Section& s = sections.at(0);
  EXPECT_EQ(fact(p, s, "Records lost"),
            "12 records dropped (CUPTI had no buffer), 3 ops whose launching call was not seen");
  // 2 MB in 20 µs: 100 GB/s.
  const Table& peers = table_with_id(s, "gpu-peers-table");
  ASSERT_EQ(peers.rows.size(), 1u);
  EXPECT_EQ(texts(peers.rows[0]), (Row{"0: Test GPU", "1: Other GPU", "1", "1.91 MiB", "20.0 µs", "100 GB/s"}));
  EXPECT_DOUBLE_EQ(peers.rows[0][5].value, 1e11);
  EXPECT_NE(row_starting(table_with_id(s, "gpu-transfers-table"), {"Memcpy PtoP", "1", "1.91 MiB", "20.0 µs", "100 GB/s"}),
            nullptr);
}

TEST(GpuSection, KernelNamesStayWholeInCellsAndEscapedInBars) {
  Profile p = test_gpu_profile();
  p.strings[p.gpu.ops[0].name] = "void gemm<float>(float*, int)";
  const auto sections = build(report::sections::gpu, report::analyse(p));
  const Section& s = sections.at(0);
  EXPECT_EQ(table_with_id(s, "gpu-kernels-table").rows.at(0)[1].text, "void gemm<float>(float*, int)");
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("void gemm&lt;float&gt;(float*, int)"), std::string::npos);
  EXPECT_EQ(pictures[0]->html().find("gemm<float>"), std::string::npos);
}

TEST(GpuSection, NoneWithoutTracing) {
  const Profile untraced = testing::export_profile();
  EXPECT_TRUE(build(report::sections::gpu, report::analyse(untraced)).empty());
}

// ---- metrics ------------------------------------------------------------------------------

Profile metrics_profile(std::size_t metrics) {
  Profile p = testing::export_profile();
  for (std::size_t i = 0; i < metrics; ++i) {
    MetricSeries m;
    m.name = static_cast<std::uint32_t>(p.strings.size());
    p.strings.push_back("loss" + std::to_string(i));
    m.kind = MetricKind::Gauge;
    m.unit = i == 0 ? "ns" : "";
    m.summary.count = 4;
    m.summary.last = 2'000'000;
    m.summary.mean = 1'500'000;
    m.summary.min = 1'000'000;
    m.summary.max = 2'000'000;
    m.summary.p50 = 1'500'000;
    m.summary.percentile_points = i == 0 ? 4 : 0;
    m.summary.points_dropped = i == 0 ? 0 : 3;
    m.points = {{0, 1'000'000}, {10, 2'000'000}};
    p.metrics.push_back(std::move(m));
  }
  return p;
}

TEST(MetricsSection, TableWithRawValuesAndCompletenessNote) {
  const Profile p = metrics_profile(2);
  const auto sections = build(report::sections::metrics, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.title, "Metrics");
  const Table& t = table_with_id(s, "metrics-table");
  EXPECT_EQ(headers(t), (Row{"Metric", "Kind", "Count", "Last / total", "Mean", "Std dev", "Min", "p50", "p90", "p95",
                             "p99", "Max"}));
  ASSERT_EQ(t.rows.size(), 2u);
  EXPECT_EQ(t.rows[0][0].text, "loss0");
  EXPECT_EQ(t.rows[0][3].text, "2.00 ms");
  EXPECT_EQ(t.rows[0][3].value, 2e6);
  EXPECT_EQ(t.rows[0][7].text, "1.50 ms");
  EXPECT_EQ(t.rows[1][7].text, "n/a");  // no point kept: no percentile
  EXPECT_FALSE(t.rows[1][7].bar);
  EXPECT_EQ(t.rows[1][3].text, "2,000,000");
  EXPECT_TRUE(says(p, s, "3 observations of 1 metric(s) were not kept as points"));
  EXPECT_EQ(blocks_of<report::Picture>(s).size(), 2u);
  EXPECT_NE(blocks_of<report::Picture>(s)[0]->html().find("A counter's chart shows its running total."), std::string::npos);
  EXPECT_NE(blocks_of<report::Picture>(s)[1]->html().find("<h3>loss1 <span class=\"muted\">(gauge)</span></h3>"),
            std::string::npos);
}

TEST(MetricsSection, ChartsStopAtTheirLimitAndSaySo) {
  const Profile p = metrics_profile(report::html::kMetricChartLimit + 2);
  const auto sections = build(report::sections::metrics, report::analyse(p));
  const Section& s = sections.at(0);
  EXPECT_EQ(table_with_id(s, "metrics-table").rows.size(), report::html::kMetricChartLimit + 2);
  const auto pictures = blocks_of<report::Picture>(s);
  ASSERT_EQ(pictures.size(), report::html::kMetricChartLimit + 1);
  EXPECT_NE(pictures.back()->html().find("2 more metrics are in the table but not drawn"), std::string::npos);
}

TEST(MetricsSection, NoneWithoutMetrics) {
  const Profile no_metrics = testing::export_profile();
  EXPECT_TRUE(build(report::sections::metrics, report::analyse(no_metrics)).empty());
}

// ---- critical path --------------------------------------------------------------------------

// A path of `steps` scope steps on thread 0, step i lasting i + 1 ms, over export_profile's names.
CriticalPath path_of(std::size_t steps) {
  CriticalPath path;
  path.root = testing::kTrain;
  path.threads = 1;
  std::uint64_t t = 0;
  for (std::size_t i = 0; i < steps; ++i) {
    CriticalPathStep s;
    s.kind = CriticalStepKind::Scope;
    s.name = i % 2 == 0 ? testing::kForward : testing::kBackward;
    s.start_ns = t;
    s.end_ns = t + (i + 1) * testing::kMs;
    t = s.end_ns;
    path.steps.push_back(s);
  }
  path.start_ns = 0;
  path.end_ns = t;
  for (CriticalPathStep& s : path.steps) s.share = static_cast<double>(s.duration_ns()) / static_cast<double>(t);
  CriticalPathScope forward{CriticalStepKind::Scope, testing::kForward, 0, 0.0, 0, 1};
  CriticalPathScope backward{CriticalStepKind::Scope, testing::kBackward, 0, 0.0, 0, 1};
  for (const CriticalPathStep& s : path.steps) {
    CriticalPathScope& e = s.name == testing::kForward ? forward : backward;
    e.duration_ns += s.duration_ns();
    ++e.steps;
  }
  forward.share = static_cast<double>(forward.duration_ns) / static_cast<double>(t);
  backward.share = static_cast<double>(backward.duration_ns) / static_cast<double>(t);
  path.by_scope = backward.duration_ns > forward.duration_ns ? std::vector{backward, forward}
                                                             : std::vector{forward, backward};
  return path;
}

TEST(CriticalPathSection, SummaryScopesAndStepsInTimeOrder) {
  const Profile p = testing::export_profile();
  report::ReportData data = report::analyse(p);
  data.critical_path = path_of(4);
  const auto sections = build(report::sections::critical_path, data);
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.id, "critical-path");
  EXPECT_EQ(render::text_of(p, std::get<report::Paragraph>(s.blocks.at(0)).text),
            render::text_of(p, analysis::critical_path_summary(p, *data.critical_path)));
  const Table& scopes = table_with_id(s, "critical-path-scopes");
  EXPECT_EQ(headers(scopes), (Row{"#", "Scope", "Time on the path", "% of the path", "Steps", "Threads"}));
  ASSERT_EQ(scopes.rows.size(), 2u);
  EXPECT_EQ(texts(scopes.rows[0]), (Row{"1", "backward", "6.00 ms", "60.0%", "2", "1"}));
  EXPECT_EQ(scopes.rows[0][2].value, 6e6);
  const Table& steps = table_with_id(s, "critical-path-steps");
  EXPECT_EQ(headers(steps), (Row{"#", "Start (since session start)", "Step", "Thread", "Duration", "% of the path"}));
  ASSERT_EQ(steps.rows.size(), 4u);
  EXPECT_EQ(steps.rows[1][0].text, "2");
  EXPECT_EQ(steps.rows[1][1].text, "1.00 ms");
  EXPECT_EQ(steps.rows[1][2].text, "backward");
  EXPECT_EQ(steps.rows[1][4].value, 2e6);
  EXPECT_TRUE(says(p, s, "Steps in time order."));
  EXPECT_TRUE(says(p, s, "Waits on another thread count as that thread's work."));
}

TEST(CriticalPathSection, LongestStepsKeptInTimeOrderAndSaid) {
  const Profile p = testing::export_profile();
  report::ReportLimits limits;
  limits.critical_path_steps = 3;
  limits.critical_path_scopes = 1;
  report::ReportData data = report::analyse(p, limits);
  data.critical_path = path_of(6);
  const auto sections = build(report::sections::critical_path, data);
  const Section& s = sections.at(0);
  const Table& steps = table_with_id(s, "critical-path-steps");
  ASSERT_EQ(steps.rows.size(), 3u);
  EXPECT_EQ(steps.rows[0][0].text, "4");  // the longest three, steps 4 to 6, in time order
  EXPECT_EQ(steps.rows[2][0].text, "6");
  EXPECT_TRUE(says(p, s, "The 3 longest of 6 steps, in time order."));
  EXPECT_EQ(table_with_id(s, "critical-path-scopes").rows.size(), 1u);
  EXPECT_TRUE(says(p, s, "Top 1 of 2 scopes."));
}

TEST(CriticalPathSection, EmptyPathIsOnlyItsSummaryAndNoneWithoutFlows) {
  const Profile p = testing::export_profile();
  report::ReportData data = report::analyse(p);
  EXPECT_TRUE(build(report::sections::critical_path, data).empty());
  data.critical_path = CriticalPath{};
  const auto sections = build(report::sections::critical_path, data);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].blocks.size(), 1u);
  EXPECT_TRUE(blocks_of<Table>(sections[0]).empty());
}

// ---- what the resources add to the other sections -------------------------------------------

// The summary's cards of heap tracking, CPU sampling and GPU tracing (carried over from the HTML
// report's heap, CPU and GPU tests).
TEST(ResourceCards, PeakHeapCpuSamplesAndGpuTime) {
  const auto card = [](const Profile& p, std::string_view label) {
    const auto sections = build(report::sections::overview, report::analyse(p));
    for (const report::Cards* cards : blocks_of<report::Cards>(sections.at(0)))
      for (const report::Card& c : cards->items)
        if (c.label == label) return c;
    ADD_FAILURE() << "no card " << label;
    return report::Card{};
  };
  const report::Card heap = card(testing::heap_profile(), "Peak heap");
  EXPECT_EQ(heap.value, "22.0 MiB");
  EXPECT_EQ(heap.detail, "at 949 ms, in train_step > forward > matmul");
  const report::Card cpu = card(testing::cpu_profile(), "CPU samples");
  EXPECT_EQ(cpu.value, "14");
  EXPECT_EQ(cpu.detail, "16.0 ms of CPU time, perf_event");
  EXPECT_EQ(card(test_gpu_profile(), "GPU time").value, "660 µs");
}

// A traced profile's rankings gain a "GPU time" column: the GPU time of the work each scope
// launched, "-" where it launched none (carried over from test_gpu_reports' text report).
TEST(ResourceRankings, HotPathsGainAGpuTimeColumn) {
  const auto hot_total = [](const Profile& p) {
    const auto sections = build(report::sections::hot_paths, report::analyse(p));
    return table_with_id(sections.at(0), "hot-total");
  };
  const auto row_named = [](const Table& t, std::string_view name) -> const std::vector<report::Cell>* {
    for (const auto& row : t.rows)
      if (row[1].text == name) return &row;
    ADD_FAILURE() << "no row " << name;
    return nullptr;
  };
  const Table t = hot_total(test_gpu_profile());
  ASSERT_FALSE(t.columns.empty());
  EXPECT_EQ(t.columns.back().header, "GPU time");
  EXPECT_EQ(t.columns.back().key, "gpu");
  const auto* forward = row_named(t, "forward");
  const auto* backward = row_named(t, "backward");
  ASSERT_TRUE(forward != nullptr && backward != nullptr);
  EXPECT_EQ(forward->back().text, "660 µs");
  EXPECT_EQ(forward->back().value, 660e3);
  EXPECT_EQ(backward->back().text, "-");

  // No GPU work inside any scope: every row says so.
  Profile unscoped = test_gpu_profile();
  unscoped.gpu.scopes.clear();
  const Table none = hot_total(unscoped);
  for (const auto& row : none.rows) EXPECT_EQ(row.back().text, "-") << row[1].text;
}

// Heap tracking that ended before its first sample: the chart's place says so, and named
// counters recorded beside it keep their own section (carried over from the HTML report).
TEST(HeapSection, WithoutSamplesTheChartSaysSoBesideTheCounters) {
  Profile p = testing::heap_profile();
  p.heap_samples.clear();
  p.memory_counters = {MemoryCounter{0, 5, 5, 5, 0, 1, 0, 5}};
  p.memory_events = {MemoryEvent{1000, 0, 0, 5}};
  p.memory = {5, 5, 1000};
  const report::ReportData data = report::analyse(p);
  const auto heap = build(report::sections::heap, data);
  ASSERT_EQ(heap.size(), 1u);
  const auto pictures = blocks_of<report::Picture>(heap[0]);
  ASSERT_EQ(pictures.size(), 1u);
  EXPECT_NE(pictures[0]->html().find("id=\"no-heap-timeline\""), std::string::npos);
  EXPECT_EQ(pictures[0]->html().find("<svg"), std::string::npos);
  const auto memory = build(report::sections::memory, data);
  ASSERT_EQ(memory.size(), 1u);
  EXPECT_EQ(table_with_id(memory[0], "counters-table").rows.size(), 1u);
  EXPECT_NE(blocks_of<report::Picture>(memory[0]).at(0)->html().find("aria-label=\"Memory in use over time\""),
            std::string::npos);
}

// ---- heap bytes in the hot paths and insights (seed 004: "Alloc (MB)", high-allocation methods) ----

TEST(HotPathsSection, HeapAllocatedColumnOnlyWithHeapTracking) {
  const Profile p = testing::heap_profile();
  const Section s = build(report::sections::hot_paths, report::analyse(p)).at(0);
  const Table& t = table_with_id(s, "hot-total");
  const Row h = headers(t);
  ASSERT_FALSE(h.empty());
  EXPECT_EQ(h.back(), "Heap allocated");
  EXPECT_EQ(t.columns.back().key, "heap-alloc");
  EXPECT_EQ(t.columns.back().align, report::Align::Right);
  EXPECT_TRUE(says(p, s, "Heap allocated is the heap bytes allocated while the scope was the innermost"));
  // Every row carries its scope's heap bytes as a number: matmul 40 MiB, load_batch 80 MiB + 3 KiB.
  bool saw_matmul = false;
  bool saw_load = false;
  for (const auto& row : t.rows) {
    if (row[1].text == "matmul") {
      saw_matmul = true;
      EXPECT_EQ(row.back().text, "40.0 MiB");
      EXPECT_DOUBLE_EQ(row.back().value, 40.0 * testing::kMiB);
    }
    if (row[1].text == "load_batch") {
      saw_load = true;
      EXPECT_DOUBLE_EQ(row.back().value, 80.0 * testing::kMiB + 3 * 1024);
    }
  }
  EXPECT_TRUE(saw_matmul);
  EXPECT_TRUE(saw_load);
  // The self-time table is unchanged.
  for (const std::string& header : headers(table_with_id(s, "hot-self"))) EXPECT_NE(header, "Heap allocated");

  // Without heap tracking the table reads as before: no heap column, no sentence about it.
  const Profile plain = testing::export_profile();
  const Section without = build(report::sections::hot_paths, report::analyse(plain)).at(0);
  const Row plain_headers = headers(table_with_id(without, "hot-total"));
  EXPECT_EQ(plain_headers.back(), "Allocated");
  EXPECT_EQ(std::count(plain_headers.begin(), plain_headers.end(), "Heap allocated"), 0);
  EXPECT_FALSE(says(plain, without, "Heap allocated is"));
}

TEST(InsightsSection, HighHeapAllocationScopesWithTheirShares) {
  const Profile p = testing::heap_profile();
  const Section s = build(report::sections::insights, report::analyse(p)).at(0);
  const auto bullets = blocks_of<report::Bullets>(s);
  ASSERT_EQ(bullets.size(), 1u);
  std::string heap;
  for (const analysis::Sentence& sentence : bullets[0]->items) {
    const std::string text = render::text_of(p, sentence);
    if (text.starts_with("Highest heap allocation: ")) heap = text;
    // heap_profile has no memory counters: no counter allocation insight beside the heap one.
    EXPECT_FALSE(text.starts_with("Highest allocation: "));
  }
  // The three scopes that allocated most, most first, each with its share of every heap byte
  // allocated (163 MiB, 4 KiB of it outside any scope) and per call, then their sum.
  const double total = static_cast<double>(p.heap.alloc_bytes);
  const std::string load_share = report::format_percent((80.0 * testing::kMiB + 3 * 1024) / total);
  const std::string matmul_share = report::format_percent(40.0 * testing::kMiB / total);
  const std::string forward_share = report::format_percent(20.0 * testing::kMiB / total);
  const std::string together = report::format_percent((140.0 * testing::kMiB + 3 * 1024) / total);
  EXPECT_EQ(heap, "Highest heap allocation: load_batch 80.0 MiB (" + load_share +
                      " of all heap bytes allocated, 8.00 MiB per call); matmul 40.0 MiB (" + matmul_share +
                      " of all heap bytes allocated, 1.00 MiB per call); forward 20.0 MiB (" + forward_share +
                      " of all heap bytes allocated, 2.00 MiB per call); together " + together + " of the " +
                      report::format_bytes(p.heap.alloc_bytes) +
                      " allocated. Allocating on every call costs time and memory pressure: consider reusing "
                      "buffers (a pool or a preallocated workspace).");
  EXPECT_EQ(load_share, "49.0%");

  // Without heap tracking there is no heap insight.
  const Profile plain = testing::export_profile();
  for (const analysis::Insight& insight : report::analyse(plain).insights)
    EXPECT_NE(insight.kind, analysis::InsightKind::HeapAllocation);
}

// ---- callers (seed 004: "Transformer_Forward  Called by: GenerateToken (150 times)") ----

// step > mlp > matmul (16 calls), step > attention > matmul (8 calls) and matmul at the top
// level (2 calls): matmul has three callers.
Profile profile_with_shared_callee() {
  using testing::kMs;
  Profile p;
  p.strings = {"step", "mlp", "attention", "matmul"};
  const ScopeStats step = testing::scope_stats(0, kMs, {4, 40 * kMs, 10 * kMs, 10 * kMs, 10e6, 0, 0, 0, 0});
  const ScopeStats mlp = testing::scope_stats(1, kMs, {4, 20 * kMs, 5 * kMs, 5 * kMs, 5e6, 0, 0, 0, 0});
  const ScopeStats attention = testing::scope_stats(2, kMs, {4, 12 * kMs, 3 * kMs, 3 * kMs, 3e6, 0, 0, 0, 0});
  const ScopeStats matmul_mlp = testing::scope_stats(3, 16 * kMs, {16, 16 * kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  const ScopeStats matmul_attention = testing::scope_stats(3, 8 * kMs, {8, 8 * kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  const ScopeStats matmul_top = testing::scope_stats(3, 2 * kMs, {2, 2 * kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  ScopeStats matmul = testing::scope_stats(3, 26 * kMs, {26, 26 * kMs, kMs, kMs, 1e6, 0, 0, 0, 0});
  p.scopes = {step, mlp, attention, matmul};
  CallTreeNode root;
  root.children = {1, 6};
  p.call_tree = {root,
                 testing::tree_node(1, 0, 1, {2, 3}, step),
                 testing::tree_node(2, 1, 2, {4}, mlp),
                 testing::tree_node(3, 1, 2, {5}, attention),
                 testing::tree_node(4, 2, 3, {}, matmul_mlp),
                 testing::tree_node(5, 3, 3, {}, matmul_attention),
                 testing::tree_node(6, 0, 1, {}, matmul_top)};
  return p;
}

TEST(CallersSection, EachScopeWithItsCallersMostCallsFirst) {
  const Profile p = profile_with_shared_callee();
  const auto sections = build(report::sections::callers, report::analyse(p));
  ASSERT_EQ(sections.size(), 1u);
  const Section& s = sections[0];
  EXPECT_EQ(s.id, "callers");
  EXPECT_EQ(s.title, "Callers");
  EXPECT_TRUE(says(p, s, "Who calls each scope"));
  const Table& t = table_with_id(s, "callers-table");
  EXPECT_EQ(t.style, Table::Style::Tree);
  EXPECT_EQ(headers(t), (Row{"Scope, then its callers", "Calls", "Time", "% of the scope's calls"}));
  // Scopes by total time (step 40 ms, matmul 26 ms, mlp 20 ms, attention 12 ms), each followed
  // by its callers.
  EXPECT_EQ(rows_of(t), (std::vector<Row>{
                            {"step", "4", "40.0 ms", "100.0%"},
                            {"(top level)", "4", "40.0 ms", "100.0%"},
                            {"matmul", "26", "26.0 ms", "100.0%"},
                            {"mlp", "16", "16.0 ms", "61.5%"},
                            {"attention", "8", "8.00 ms", "30.8%"},
                            {"(top level)", "2", "2.00 ms", "7.7%"},
                            {"mlp", "4", "20.0 ms", "100.0%"},
                            {"step", "4", "20.0 ms", "100.0%"},
                            {"attention", "4", "12.0 ms", "100.0%"},
                            {"step", "4", "12.0 ms", "100.0%"},
                        }));
  EXPECT_EQ(t.depths, (std::vector<std::uint32_t>{1, 2, 1, 2, 2, 2, 1, 2, 1, 2}));
  EXPECT_DOUBLE_EQ(t.rows[3][1].value, 16.0);
  EXPECT_TRUE(t.rows[3][0].name);
  EXPECT_FALSE(t.rows[1][0].name);  // "(top level)" is words, not a scope
  EXPECT_FALSE(says(p, s, "Top "));
}

TEST(CallersSection, LimitsCutScopesAndCountTheOtherCallers) {
  const Profile p = profile_with_shared_callee();
  report::ReportLimits limits;
  limits.callers_scopes = 2;
  limits.callers_per_scope = 1;
  const Section s = build(report::sections::callers, report::analyse(p, limits)).at(0);
  EXPECT_TRUE(says(p, s, "Top 2 of 4 scopes."));
  EXPECT_EQ(rows_of(table_with_id(s, "callers-table")), (std::vector<Row>{
                                                             {"step", "4", "40.0 ms", "100.0%"},
                                                             {"(top level)", "4", "40.0 ms", "100.0%"},
                                                             {"matmul", "26", "26.0 ms", "100.0%"},
                                                             {"mlp", "16", "16.0 ms", "61.5%"},
                                                             {"2 other callers", "10", "10.0 ms", "38.5%"},
                                                         }));
  EXPECT_EQ(limits.with_rows(50).callers_scopes, 50u);
  EXPECT_EQ(limits.with_rows(50).callers_per_scope, 50u);
}

TEST(CallersSection, NoneWithoutACallTree) {
  Profile p = profile_with_shared_callee();
  p.call_tree.resize(1);
  EXPECT_TRUE(build(report::sections::callers, report::analyse(p)).empty());
  const Profile empty;
  EXPECT_TRUE(build(report::sections::callers, report::analyse(empty)).empty());
}

}  // namespace
}  // namespace nnprof
