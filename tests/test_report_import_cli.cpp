// End-to-end: `nnprof compare` and `nnprof model-compare` on the JSON and Markdown reports the
// real binary wrote (nnprof report -o, nnprof demo), against the same commands on the profiles.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"
#include "test_helpers.hpp"

namespace {

using nnprof::testing::slurp;
using nnprof::testing::spin_us;

namespace fs = std::filesystem;

// 40 steps of a matmul of `matmul_us` and a softmax of 100 us, statistics only: compare runs
// Welch's test on a profile too, so a profile and its report must give the same verdicts.
void record(const fs::path& path, int matmul_us) {
  nnprof::ProfilerOptions options;
  options.record_spans = false;
  nnprof::Profiler p(options);
  for (int step = 0; step < 40; ++step) {
    p.start("step");
    p.start("matmul");
    spin_us(matmul_us);
    p.stop("matmul");
    p.start("softmax");
    spin_us(100);
    p.stop("softmax");
    p.stop("step");
  }
  p.save(path.string());
}

struct Files {
  fs::path dir, a, b, a_md, a_json, b_md, b_json;
};

const Files& files() {
  static const Files f = [] {
    Files x;
    x.dir = fs::temp_directory_path() / ("nnprof_report_import_cli_" + std::to_string(::getpid()));
    fs::remove_all(x.dir);
    fs::create_directories(x.dir);
    x.a = x.dir / "a.nnprof";
    x.b = x.dir / "b.nnprof";
    record(x.a, 300);
    record(x.b, 600);  // matmul twice as slow
    x.a_md = x.dir / "a.md";
    x.a_json = x.dir / "a.json";
    x.b_md = x.dir / "b.md";
    x.b_json = x.dir / "b.json";
    for (const auto& [from, to] : {std::pair{x.a, x.a_md}, std::pair{x.a, x.a_json}, std::pair{x.b, x.b_md},
                                   std::pair{x.b, x.b_json}}) {
      const CliRun r = run_cli("report " + from.string() + " -o " + to.string());
      EXPECT_EQ(r.status, 0) << r.output;
    }
    return x;
  }();
  return f;
}

nlohmann::json compare_json(const fs::path& a, const fs::path& b) {
  const CliRun r = run_cli("compare " + a.string() + " " + b.string() + " --format json");
  EXPECT_EQ(r.status, 0) << r.output;
  return r.status == 0 ? nlohmann::json::parse(r.output) : nlohmann::json::object();
}

void expect_same_verdicts(const nlohmann::json& expected, const nlohmann::json& actual) {
  EXPECT_EQ(actual["summary"]["verdict"], expected["summary"]["verdict"]);
  ASSERT_EQ(actual["scopes"].size(), expected["scopes"].size());
  for (std::size_t i = 0; i < expected["scopes"].size(); ++i) {
    const auto& e = expected["scopes"][i];
    const auto& a = actual["scopes"][i];
    SCOPED_TRACE(e["name"].get<std::string>());
    EXPECT_EQ(a["name"], e["name"]);
    EXPECT_EQ(a["test"], e["test"]);
    EXPECT_EQ(a["verdict"], e["verdict"]);
    EXPECT_EQ(a["a"]["calls"], e["a"]["calls"]);
    EXPECT_EQ(a["b"]["total_ns"], e["b"]["total_ns"]);
    EXPECT_DOUBLE_EQ(a["p_value"].get<double>(), e["p_value"].get<double>());
  }
}

TEST(ReportImportCli, CompareTwoMarkdownReportsAgreesWithTheProfiles) {
  const nlohmann::json profiles = compare_json(files().a, files().b);
  const nlohmann::json reports = compare_json(files().a_md, files().b_md);
  expect_same_verdicts(profiles, reports);
  bool matmul = false;
  for (const auto& s : reports["scopes"])
    if (s["name"] == "matmul") {
      matmul = true;
      // Its verdict is the profiles' (above). 2x by construction, but preemption on a loaded
      // machine moves the means of 40 calls a lot (seen: 0.97x), so neither is fixed here.
      EXPECT_EQ(s["test"], "welch");
    }
  EXPECT_TRUE(matmul);
  // The notes say that the reports were read, and that Welch's test stood in for the rank test.
  const std::string notes = reports["notes"].dump();
  EXPECT_NE(notes.find("a.md' is a report"), std::string::npos) << notes;
  EXPECT_NE(notes.find("b.md' is a report"), std::string::npos) << notes;
  EXPECT_NE(notes.find("Welch's test on the means"), std::string::npos) << notes;
}

TEST(ReportImportCli, CompareAJsonReportWithAProfile) {
  expect_same_verdicts(compare_json(files().a, files().b), compare_json(files().a_json, files().b));
  expect_same_verdicts(compare_json(files().a, files().b), compare_json(files().a_md, files().b_json));
}

TEST(ReportImportCli, TextComparisonOfReportsNamesTheTestAndTheReports) {
  const CliRun r = run_cli("compare " + files().a_md.string() + " " + files().b_json.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("matmul"), std::string::npos);
  EXPECT_NE(r.output.find("Welch"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("is a report"), std::string::npos) << r.output;
}

TEST(ReportImportCli, ModelCompareReadsTheDemosReports) {
  const fs::path dir = files().dir / "demo";
  const CliRun demo = run_cli("demo --out " + dir.string() + " --inferences 1 --tokens 8");
  ASSERT_EQ(demo.status, 0) << demo.output;
  const CliRun profile = run_cli("model-compare " + (dir / "profile.nnprof").string() + " --format json");
  ASSERT_EQ(profile.status, 0) << profile.output;
  const CliRun md = run_cli("model-compare " + (dir / "report.md").string() + " --format json");
  ASSERT_EQ(md.status, 0) << md.output;
  // The Markdown report carries every figure model-compare reads: the same comparison.
  EXPECT_EQ(nlohmann::json::parse(md.output), nlohmann::json::parse(profile.output));
  // The JSON report's call tree may lack per-node FLOPs: then the notes say so, and the rest stands.
  const CliRun json = run_cli("model-compare " + (dir / "report.json").string() + " --format json");
  ASSERT_EQ(json.status, 0) << json.output;
  const auto j = nlohmann::json::parse(json.output);
  const auto p = nlohmann::json::parse(profile.output);
  ASSERT_EQ(j["models"].size(), p["models"].size());
  for (std::size_t i = 0; i < p["models"].size(); ++i) {
    EXPECT_EQ(j["models"][i]["name"], p["models"][i]["name"]);
    EXPECT_EQ(j["models"][i]["tokens"], p["models"][i]["tokens"]);
  }
}

TEST(ReportImportCli, BadReportsExitWith2AndNameTheFile) {
  const fs::path d = files().dir;
  const std::string md = slurp(files().a_md);
  std::ofstream(d / "plain.md") << "# notes\n\nno data here\n";
  std::ofstream(d / "cut.md") << md.substr(0, md.size() - 100);
  std::ofstream(d / "garbage.json") << "{ not json";
  const std::string good = files().a.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compare " + good + " " + (d / "plain.md").string(), "is a text report without embedded data"},
      {"compare " + (d / "cut.md").string() + " " + good, "cut short"},
      {"compare " + good + " " + (d / "garbage.json").string(), "not valid JSON"},
      {"model-compare " + (d / "cut.md").string(), "cut short"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(d.string()), std::string::npos) << args << "\n" << r.output;
  }
}

}  // namespace
