// Reading back the JSON and Markdown reports for compare and model-compare (io/report_import):
// every figure they use survives the trip exactly, the comparisons agree with those of the
// profiles, and damaged files fail with a message naming the file.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/json_report.hpp"
#include "io/profile_reports.hpp"
#include "io/report_import.hpp"
#include "nnprof/nnprof.hpp"
#include "render/render.hpp"
#include "report/documents.hpp"
#include "report/report_data.hpp"
#include "test_helpers.hpp"

namespace nnprof {
namespace {

using nnprof::testing::spin_us;

namespace fs = std::filesystem;

const std::string kGolden = NNPROF_GOLDEN_DIR;

std::string json_of(const Profile& p) {
  std::ostringstream out;
  io::write_json_report(p, out);
  return out.str();
}

std::string markdown_of(const Profile& p) {
  std::ostringstream out;
  io::write_markdown_report(p, out);
  return out.str();
}

// A small run: `step` around `work` (named as given, FLOPs declared) and `tail`.
Profile recorded(const char* work_name, int work_us, bool spans) {
  ProfilerOptions options;
  options.record_spans = spans;
  Profiler p(options);
  p.annotate("git_commit", "8d2e793");
  for (int i = 0; i < 40; ++i) {
    p.start("step");
    p.start(work_name);
    spin_us(work_us + (i % 3));
    p.add_flops(1000.0, 64);
    p.stop(work_name);
    p.start("tail");
    spin_us(30);
    p.stop("tail");
    p.stop("step");
  }
  return p.snapshot();
}

void expect_same_scopes(const Profile& original, const Profile& imported) {
  ASSERT_EQ(imported.scopes.size(), original.scopes.size());
  for (std::size_t i = 0; i < original.scopes.size(); ++i) {
    const ScopeStats& a = original.scopes[i];
    const ScopeStats& b = imported.scopes[i];
    SCOPED_TRACE(original.str(a.name));
    EXPECT_EQ(imported.str(b.name), original.str(a.name));  // same order: longest first
    EXPECT_EQ(b.total_ns, a.total_ns);
    EXPECT_EQ(b.self_ns, a.self_ns);
    EXPECT_EQ(b.time.count, a.time.count);
    EXPECT_EQ(b.time.sum_ns, a.time.sum_ns);
    EXPECT_EQ(b.time.mean_ns, a.time.mean_ns);
    EXPECT_EQ(b.time.stddev_ns, a.time.stddev_ns);
    EXPECT_EQ(b.time.min_ns, a.time.min_ns);
    EXPECT_EQ(b.time.max_ns, a.time.max_ns);
    EXPECT_EQ(b.time.p50_ns, a.time.p50_ns);
    EXPECT_EQ(b.time.p95_ns, a.time.p95_ns);
    EXPECT_EQ(b.time.p99_ns, a.time.p99_ns);
    EXPECT_EQ(b.thread_count, a.thread_count);
    EXPECT_EQ(b.memory, a.memory);
    if (original.heap.tracked) {
      EXPECT_EQ(b.heap, a.heap);
    }
  }
}

// The trees hold the same nodes, each with the same figures, reached by the same names.
void expect_same_tree(const Profile& original, const Profile& imported, bool with_node_details) {
  ASSERT_EQ(imported.call_tree.size(), original.call_tree.size());
  std::vector<std::pair<std::uint32_t, std::uint32_t>> todo = {{0, 0}};
  while (!todo.empty()) {
    const auto [a_id, b_id] = todo.back();
    todo.pop_back();
    const CallTreeNode& a = original.call_tree[a_id];
    const CallTreeNode& b = imported.call_tree[b_id];
    SCOPED_TRACE(original.node_path(a_id));
    EXPECT_GT(b_id == 0 ? 1u : b_id, b.parent == kNone ? 0u : b.parent);  // children after their parent
    if (a_id != 0) {
      EXPECT_EQ(imported.str(b.name), original.str(a.name));
      EXPECT_EQ(b.time.count, a.time.count);
      EXPECT_EQ(b.time.sum_ns, a.time.sum_ns);
      EXPECT_EQ(b.time.mean_ns, a.time.mean_ns);
      EXPECT_EQ(b.self_ns, a.self_ns);
      EXPECT_EQ(b.depth, a.depth);
      if (original.heap.tracked) {
      EXPECT_EQ(b.heap, a.heap);
    }
      if (with_node_details) {
        EXPECT_EQ(b.time.stddev_ns, a.time.stddev_ns);
        EXPECT_EQ(b.flops, a.flops);
        EXPECT_EQ(b.bytes, a.bytes);
      }
    }
    ASSERT_EQ(b.children.size(), a.children.size());
    for (std::size_t i = 0; i < a.children.size(); ++i) todo.emplace_back(a.children[i], b.children[i]);
  }
}

void expect_same_run(const Profile& original, const Profile& imported) {
  EXPECT_EQ(imported.meta.duration_ns, original.meta.duration_ns);
  EXPECT_EQ(imported.meta.hostname, original.meta.hostname);
  EXPECT_EQ(imported.meta.command_line, original.meta.command_line);
  EXPECT_EQ(imported.meta.clock.ns_per_tick, original.meta.clock.ns_per_tick);
  EXPECT_EQ(imported.annotations, original.annotations);
  EXPECT_EQ(imported.instrumented_ns(), original.instrumented_ns());
  Completeness expected = original.completeness;
  expected.spans_kept = 0;  // the report has none
  EXPECT_EQ(imported.completeness, expected);
  EXPECT_EQ(imported.heap.tracked, original.heap.tracked);
  EXPECT_EQ(imported.heap.alloc_bytes, original.heap.alloc_bytes);
  EXPECT_EQ(imported.heap.alloc_count, original.heap.alloc_count);
  EXPECT_EQ(imported.heap.peak_bytes, original.heap.peak_bytes);
  EXPECT_EQ(imported.memory_counters.size(), original.memory_counters.size());
  EXPECT_TRUE(imported.spans.empty());
}

TEST(ReportImport, JsonReportKeepsEveryFigureCompareUses) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  const LoadedRun run = io::import_json_report(json_of(original), "demo_small.json");
  EXPECT_TRUE(run.from_report);
  expect_same_run(original, run.profile);
  expect_same_scopes(original, run.profile);
  expect_same_tree(original, run.profile, /*with_node_details=*/false);
}

TEST(ReportImport, MarkdownReportKeepsEveryFigureCompareAndModelCompareUse) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  const LoadedRun run = io::import_markdown_report(markdown_of(original), "demo_small.md");
  EXPECT_TRUE(run.from_report);
  EXPECT_TRUE(run.notes.empty()) << run.notes.front();  // nothing model-compare needs is missing
  expect_same_run(original, run.profile);
  expect_same_scopes(original, run.profile);
  expect_same_tree(original, run.profile, /*with_node_details=*/true);
}

TEST(ReportImport, ModelCompareOfTheMarkdownReportEqualsThatOfTheProfile) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  const LoadedRun run = io::import_markdown_report(markdown_of(original), "demo_small.md");
  std::ostringstream from_profile, from_report;
  write_model_comparison(compare_models(original), from_profile, ReportFormat::Json);
  write_model_comparison(compare_models(run.profile), from_report, ReportFormat::Json);
  EXPECT_EQ(from_report.str(), from_profile.str());
}

TEST(ReportImport, TheEmbeddedDataIsOneHtmlCommentAtTheEndAndTheVisibleReportIsUnchanged) {
  const Profile original = recorded("matmul--fused-->out", 50, true);
  const std::string md = markdown_of(original);
  const std::size_t open = md.rfind("\n<!-- nnprof-data 1\n");
  ASSERT_NE(open, std::string::npos);
  const std::size_t close = md.find("-->", open);
  ASSERT_NE(close, std::string::npos);
  EXPECT_EQ(md.substr(close), "-->\n");  // the comment ends the file, and only there
  EXPECT_EQ(md.find("--", open + 5), close) << "a '--' inside the comment";
  // The visible part is what the renderer alone writes of the report's document.
  std::ostringstream rendered;
  render::write_markdown(report::profile_document(report::analyse(original)), rendered);
  EXPECT_EQ(rendered.str(), md.substr(0, open));
  // The name with "--" and "-->" comes back as it was.
  const LoadedRun run = io::import_markdown_report(md, "x.md");
  EXPECT_NE(run.profile.find_scope("matmul--fused-->out"), nullptr);
  expect_same_scopes(original, run.profile);
  expect_same_tree(original, run.profile, true);
}

TEST(ReportImport, ComparingReportsGivesTheVerdictsOfComparingProfilesWhereWelchApplies) {
  // Without spans both comparisons run Welch's test on the same figures: identical results.
  const Profile a = recorded("matmul", 200, false);
  const Profile b = recorded("matmul", 400, false);
  const Comparison direct = compare(a, b);
  const Comparison imported = compare(io::import_markdown_report(markdown_of(a), "a.md").profile,
                                      io::import_json_report(json_of(b), "b.json").profile);
  ASSERT_EQ(imported.scopes.size(), direct.scopes.size());
  for (std::size_t i = 0; i < direct.scopes.size(); ++i) {
    SCOPED_TRACE(direct.scopes[i].name);
    EXPECT_EQ(imported.scopes[i].name, direct.scopes[i].name);
    EXPECT_EQ(imported.scopes[i].test, direct.scopes[i].test);
    EXPECT_EQ(imported.scopes[i].verdict, direct.scopes[i].verdict);
    EXPECT_EQ(imported.scopes[i].p_value, direct.scopes[i].p_value);
    EXPECT_EQ(imported.scopes[i].ratio, direct.scopes[i].ratio);
  }
  EXPECT_EQ(imported.verdict, direct.verdict);
  EXPECT_EQ(imported.runtime_change, direct.runtime_change);
  EXPECT_EQ(imported.significant_change, direct.significant_change);
}

TEST(ReportImport, AReportWithSpansIsComparedByWelchAndTheScopeNotesSaySo) {
  const Profile a = recorded("matmul", 100, true);
  const LoadedRun b = io::import_json_report(json_of(recorded("matmul", 100, true)), "b.json");
  const Comparison c = compare(a, b.profile);
  const ScopeChange* matmul = nullptr;
  for (const ScopeChange& s : c.scopes)
    if (s.name == "matmul") matmul = &s;
  ASSERT_NE(matmul, nullptr);
  EXPECT_EQ(matmul->test, CompareTest::Welch);
  EXPECT_NE(matmul->note.find("B kept spans for 0 of 40 calls"), std::string::npos) << matmul->note;
  EXPECT_NE(compare_report_note(b, "b.json").find("Welch's test"), std::string::npos);
  EXPECT_EQ(compare_report_note(LoadedRun{}, "a.nnprof"), "");
}

TEST(ReportImport, AJsonReportWithoutNodeDetailsSaysWhatModelCompareLacks) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  std::string json = json_of(original);
  // As a report of a version whose call tree had no FLOPs or spread per node.
  auto j = nlohmann::ordered_json::parse(json);
  std::vector<nlohmann::ordered_json*> todo;
  for (auto& n : j["call_tree"]) todo.push_back(&n);
  while (!todo.empty()) {
    auto* n = todo.back();
    todo.pop_back();
    n->erase("std_ns");
    n->erase("flops");
    n->erase("bytes");
    for (auto& c : (*n)["children"]) todo.push_back(&c);
  }
  const LoadedRun run = io::import_json_report(j.dump(), "old.json");
  ASSERT_EQ(run.notes.size(), 2u);
  EXPECT_NE(run.notes[0].find("no FLOPs or bytes per node"), std::string::npos) << run.notes[0];
  EXPECT_NE(run.notes[1].find("no standard deviation per node"), std::string::npos) << run.notes[1];
}

// ---- errors and loading by content -------------------------------------------------------

class ReportImportFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("nnprof_report_import_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string write(const std::string& name, const std::string& text) {
    const fs::path p = dir_ / name;
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }
  // The message of the nnprof::Error that loading `path` throws.
  static std::string error_of(const std::string& path) {
    try {
      (void)load_run(path);
    } catch (const Error& e) {
      return e.what();
    }
    return "no error";
  }
  fs::path dir_;
};

TEST_F(ReportImportFiles, LoadRunPicksTheReaderByContent) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  const LoadedRun nnprof = load_run(kGolden + "/demo_small.nnprof");
  EXPECT_FALSE(nnprof.from_report);
  EXPECT_EQ(nnprof.profile, original);
  // The extension does not decide: a JSON report named .txt and a Markdown report named .report.
  for (const auto& [name, text] : {std::pair{std::string("r.json"), json_of(original)},
                                   std::pair{std::string("r.txt"), json_of(original)},
                                   std::pair{std::string("r.md"), markdown_of(original)},
                                   std::pair{std::string("r.report"), markdown_of(original)}}) {
    SCOPED_TRACE(name);
    const LoadedRun run = load_run(write(name, text));
    EXPECT_TRUE(run.from_report);
    EXPECT_EQ(run.profile.scopes.size(), original.scopes.size());
  }
  const LoadedRun golden_md = load_run(kGolden + "/demo_small.md");
  EXPECT_EQ(golden_md.profile.scopes.size(), original.scopes.size());
  const LoadedRun golden_json = load_run(kGolden + "/demo_small.json");
  EXPECT_EQ(golden_json.profile.scopes.size(), original.scopes.size());
}

TEST_F(ReportImportFiles, DamagedAndForeignFilesFailNamingTheFile) {
  const Profile original = Profile::load(kGolden + "/demo_small.nnprof");
  const std::string md = markdown_of(original);
  const std::string json = json_of(original);
  const std::size_t block = md.rfind("<!-- nnprof-data");
  const struct {
    std::string name, text, expected;
  } cases[] = {
      {"plain.md", "# A report\n\nwritten by hand\n", "is a text report without embedded data"},
      {"text.txt", "nnprof report\n=============\n", "is a text report without embedded data"},
      {"cut.md", md.substr(0, md.size() - 200), "cut short"},
      {"cut_header.md", md.substr(0, block + 18), "cut short"},
      {"corrupt.md", md.substr(0, block + 20) + "###" + md.substr(block + 20), "not valid JSON"},
      {"later.md", md.substr(0, block) + "<!-- nnprof-data 99\n{}\n-->\n", "newer than this nnprof reads"},
      {"noversion.md", md.substr(0, block) + "<!-- nnprof-data\n{}\n-->\n", "has no version"},
      {"cut.json", json.substr(0, json.size() / 2), "not valid JSON"},
      {"other.json", R"({"schema": "nnprof-comparison", "schema_version": 1})", "not an nnprof report"},
      {"array.json", "[1, 2, 3]", "not an nnprof report"},
      {"wrongtype.json", R"({"schema": "nnprof-report", "schema_version": 1, "timing": {"a": {"count": "x"}}})",
       "not a complete nnprof report"},
      {"later.json", R"({"schema": "nnprof-report", "schema_version": 99})", "newer than this nnprof reads"},
      {"binary.bin", std::string("\x01\x02\0\0garbage", 11), "neither a .nnprof file nor a report"},
      {"empty.md", "", "is empty"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = write(c.name, c.text);
    const std::string message = error_of(path);
    EXPECT_NE(message.find(c.expected), std::string::npos) << message;
    EXPECT_NE(message.find(path), std::string::npos) << message;
  }
  EXPECT_NE(error_of((dir_ / "missing.md").string()).find("no such file"), std::string::npos);
}

}  // namespace
}  // namespace nnprof
