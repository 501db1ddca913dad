// End-to-end tests of `nnprof compare`: profiles recorded by a real Profiler and saved as
// .nnprof files, compared by the real binary; output, files and exit status checked.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"
#include "test_helpers.hpp"

namespace {

using nnprof::testing::slurp;
using nnprof::testing::spin_us;

namespace fs = std::filesystem;

// A training-like run: 20 steps, each a matmul of `matmul_us` and a softmax of 100 us;
// an "init" scope called once; `extra` names a scope only this run has.
void record(const fs::path& path, int matmul_us, const char* extra, bool spans = true) {
  nnprof::ProfilerOptions options;
  options.record_spans = spans;
  nnprof::Profiler p(options);
  p.start("init");
  spin_us(200);
  p.stop("init");
  for (int step = 0; step < 20; ++step) {
    p.start("step");
    p.start("matmul");
    spin_us(matmul_us);
    p.stop("matmul");
    p.start("softmax");
    spin_us(100);
    p.stop("softmax");
    p.start(extra);
    spin_us(20);
    p.stop(extra);
    p.stop("step");
  }
  p.save(path.string());
}

struct Runs {
  fs::path dir, before, after, same, stats_only;
};

// Recorded once for all tests (about a quarter of a second).
const Runs& runs() {
  static const Runs r = [] {
    Runs x;
    x.dir = fs::temp_directory_path() / ("nnprof_compare_cli_" + std::to_string(::getpid()));
    fs::remove_all(x.dir);
    fs::create_directories(x.dir);
    x.before = x.dir / "before.nnprof";
    x.after = x.dir / "after.nnprof";
    x.stats_only = x.dir / "stats_only.nnprof";
    record(x.before, 400, "old_cache");
    // matmul four times as slow: the runs' wall times (10.6 and 34.6 ms) stay apart even when
    // a loaded machine preempts the faster run for a few scheduler slices, so the run's
    // verdict, which reads the runtime, is as sure as the scope's.
    record(x.after, 1600, "new_cache");
    record(x.stats_only, 1600, "new_cache", false);
    return x;
  }();
  return r;
}

TEST(CompareCli, TextReportShowsTheRegressionAndExitsZero) {
  const CliRun r = run_cli("compare " + runs().before.string() + " " + runs().after.string());
  ASSERT_EQ(r.status, 0) << r.output;
  for (const char* expected : {"nnprof comparison", "Verdict: REGRESSED", "Top 10 regressions", "matmul", "regressed",
                               "Only in A (removed)", "old_cache", "Only in B (added)", "new_cache", "Speedup:",
                               "Geometric mean", "init"})
    EXPECT_NE(r.output.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << r.output;
}

TEST(CompareCli, JsonSaysMatmulIsTwiceAsSlow) {
  const fs::path out = runs().dir / "diff.json";
  const CliRun r = run_cli("compare " + runs().before.string() + " " + runs().after.string() + " -o " + out.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("wrote"), std::string::npos);
  const auto j = nlohmann::json::parse(slurp(out));
  EXPECT_EQ(j["schema"], "nnprof-comparison");
  EXPECT_EQ(j["summary"]["verdict"], "regressed");
  EXPECT_EQ(j["summary"]["runtime_basis"], "session wall time");
  bool found = false;
  for (const auto& s : j["scopes"]) {
    if (s["name"] == "matmul") {
      found = true;
      EXPECT_EQ(s["verdict"], "regressed");
      EXPECT_EQ(s["test"], "mann-whitney");
      EXPECT_EQ(s["a"]["calls"], 20);
      EXPECT_EQ(s["a"]["spans"], 20);
      // 4x by construction (the spin is a lower bound). Preemption on a loaded machine
      // stretches a few calls of either run, which moves the means (seen: 1.43x for 2x) far
      // more than the medians: bound the medians tightly, the mean ratio loosely.
      const double median_ratio =
          s["b"]["median_ns"].get<double>() / s["a"]["median_ns"].get<double>();
      EXPECT_GT(median_ratio, 3.2);
      EXPECT_LT(median_ratio, 5.0);
      EXPECT_GT(s["ratio"].get<double>(), 1.5);
      EXPECT_LT(s["p_value"].get<double>(), 0.001);
    }
    if (s["name"] == "init") {
      EXPECT_EQ(s["verdict"], "unreliable");  // one call a run
    }
  }
  EXPECT_TRUE(found);
  EXPECT_EQ(j["removed"][0]["name"], "old_cache");
  EXPECT_EQ(j["added"][0]["name"], "new_cache");
}

TEST(CompareCli, MarkdownAndHtmlByFormatAndExtension) {
  const CliRun md = run_cli("compare " + runs().before.string() + " " + runs().after.string() + " --format md");
  ASSERT_EQ(md.status, 0) << md.output;
  EXPECT_NE(md.output.find("# nnprof comparison"), std::string::npos);
  EXPECT_NE(md.output.find("| matmul"), std::string::npos) << md.output;
  const fs::path html = runs().dir / "diff.html";
  const CliRun h = run_cli("compare " + runs().before.string() + " " + runs().after.string() + " -o " + html.string());
  ASSERT_EQ(h.status, 0) << h.output;
  const std::string page = slurp(html);
  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(page.find("Verdict: REGRESSED"), std::string::npos);
  EXPECT_NE(page.find("<section id=\"regressions\"><h2>Top 10 regressions</h2>"), std::string::npos);
  EXPECT_NE(page.find("<td class=\"name\" title=\"matmul\">matmul</td>"), std::string::npos);
  EXPECT_NE(page.find("old_cache"), std::string::npos);
  EXPECT_NE(page.find("new_cache"), std::string::npos);
  EXPECT_NE(page.find("</html>"), std::string::npos);
  // `--format html` to standard output: the same page.
  const CliRun stdout_html =
      run_cli("compare " + runs().before.string() + " " + runs().after.string() + " --format html");
  ASSERT_EQ(stdout_html.status, 0) << stdout_html.output;
  EXPECT_EQ(stdout_html.output.rfind("<!DOCTYPE html>", 0), 0u);
}

TEST(CompareCli, MarkdownAndTextFilesByExtension) {
  const std::string both = runs().before.string() + " " + runs().after.string();
  const fs::path md = runs().dir / "diff.md";
  const CliRun m = run_cli("compare " + both + " -o " + md.string());
  ASSERT_EQ(m.status, 0) << m.output;
  const std::string doc = slurp(md);
  EXPECT_TRUE(doc.starts_with("# nnprof comparison")) << doc;
  for (const char* expected : {"## Summary", "Verdict: REGRESSED", "## Top 10 regressions", "| matmul",
                               "## Only in A (removed)", "old_cache", "## Only in B (added)", "## Method and notes"})
    EXPECT_NE(doc.find(expected), std::string::npos) << "missing '" << expected << "' in:\n" << doc;
  const fs::path txt = runs().dir / "diff.txt";
  const CliRun t = run_cli("compare " + both + " -o " + txt.string());
  ASSERT_EQ(t.status, 0) << t.output;
  const std::string text = slurp(txt);
  EXPECT_TRUE(text.starts_with("nnprof comparison\n")) << text;
  EXPECT_NE(text.find("Verdict: REGRESSED"), std::string::npos) << text;
  EXPECT_NE(text.find("new_cache"), std::string::npos) << text;
  // The seed's form names the output third; the same file as -o gives.
  const fs::path positional = runs().dir / "positional.md";
  const CliRun p = run_cli("compare " + both + " " + positional.string());
  ASSERT_EQ(p.status, 0) << p.output;
  EXPECT_TRUE(slurp(positional).starts_with("# nnprof comparison"));
  const CliRun twice = run_cli("compare " + both + " " + positional.string() + " -o " + md.string());
  EXPECT_EQ(twice.status, 2) << twice.output;
  EXPECT_NE(twice.output.find("name the output file once"), std::string::npos) << twice.output;
}

TEST(CompareCli, FailOnRegressionGivesExitStatus3AboveTheThreshold) {
  const std::string both = runs().before.string() + " " + runs().after.string();
  const CliRun fail = run_cli("compare " + both + " --fail-on-regression 25");
  EXPECT_EQ(fail.status, 3) << fail.output;
  // The worst regression is matmul's unless preemption stretched another scope more.
  EXPECT_NE(fail.output.find("nnprof: regression: '"), std::string::npos) << fail.output;
  EXPECT_NE(fail.output.find("more than --fail-on-regression 25% allows"), std::string::npos) << fail.output;
  // matmul is about +300%: a 1000% budget lets it pass.
  const CliRun pass = run_cli("compare " + both + " --fail-on-regression 1000");
  EXPECT_EQ(pass.status, 0) << pass.output;
  // A run against itself: nothing regressed.
  const CliRun self = run_cli("compare " + runs().before.string() + " " + runs().before.string() +
                              " --fail-on-regression 0 --format json");
  ASSERT_EQ(self.status, 0) << self.output;
  const auto j = nlohmann::json::parse(self.output);
  EXPECT_EQ(j["summary"]["verdict"], "stable");
  EXPECT_EQ(j["summary"]["regressed"], 0);
}

TEST(CompareCli, StatisticsOnlyProfilesFallBackToWelchAndSaySo) {
  const CliRun r = run_cli("compare " + runs().before.string() + " " + runs().stats_only.string() + " --format json");
  ASSERT_EQ(r.status, 0) << r.output;
  const auto j = nlohmann::json::parse(r.output);
  EXPECT_FALSE(j["b"]["spans_enabled"].get<bool>());
  ASSERT_FALSE(j["notes"].empty());
  EXPECT_NE(j["notes"][0].get<std::string>().find("without spans"), std::string::npos) << j["notes"];
  for (const auto& s : j["scopes"]) {
    if (s["name"] == "init") continue;  // one call a run: too few for any test
    // No rank test without B's per-call durations: Welch's test on the statistics, or no
    // verdict when 20 calls a side give it fewer than 30 degrees of freedom (unequal variances).
    EXPECT_NE(s["test"], "mann-whitney") << s["name"];
    EXPECT_NE(s["note"].get<std::string>().find("B kept spans for 0 of 20 calls"), std::string::npos) << s["note"];
    if (s["test"] != "welch") {
      EXPECT_EQ(s["verdict"], "unreliable");
      EXPECT_NE(s["note"].get<std::string>().find("degrees of freedom"), std::string::npos) << s["note"];
    }
  }
}

// `nnprof merge`: separately recorded profiles analysed together into one report.
TEST(MergeCli, OneOrderOfActionAndOneReportOfEveryProfile) {
  const std::string both = runs().before.string() + " " + runs().after.string();
  const fs::path md = runs().dir / "merged.md";
  const CliRun r = run_cli("merge " + both + " -o " + md.string());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("1. "), std::string::npos) << "the combined order of action: " << r.output;
  const std::string doc = slurp(md);
  EXPECT_TRUE(doc.starts_with("# nnprof performance analysis")) << doc.substr(0, 200);
  for (const char* expected : {"## Recommendations, in order of action", "## before: Hot paths", "## after: Hot paths",
                               "old_cache", "new_cache"})
    EXPECT_NE(doc.find(expected), std::string::npos) << "missing '" << expected << "'";
  const fs::path html = runs().dir / "merged.html";
  const CliRun labelled = run_cli("merge " + both + " --label baseline --label candidate -o " + html.string());
  ASSERT_EQ(labelled.status, 0) << labelled.output;
  EXPECT_NE(slurp(html).find("<h2>candidate: Hot paths</h2>"), std::string::npos);
  // One profile, a label count that does not match, a format the report is not written in.
  EXPECT_EQ(run_cli("merge " + runs().before.string() + " -o " + md.string()).status, 2);
  const CliRun labels = run_cli("merge " + both + " --label one -o " + md.string());
  EXPECT_EQ(labels.status, 2);
  EXPECT_NE(labels.output.find("1 labels for 2 profiles"), std::string::npos) << labels.output;
  EXPECT_EQ(run_cli("merge " + both + " -o " + (runs().dir / "merged.csv").string()).status, 2);
}

TEST(CompareCli, BadInputExitsWith2AndSaysWhy) {
  const fs::path d = runs().dir;
  std::ofstream(d / "garbage.nnprof") << std::string(4096, 'g');
  const std::string good = runs().before.string();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"compare " + good + " " + (d / "missing.nnprof").string(), "no such file"},
      {"compare " + (d / "garbage.nnprof").string() + " " + good, "not an nnprof profile"},
      {"compare " + good, "b is required"},
      {"compare " + good + " " + good + " --format csv", "--format"},
      {"compare " + good + " " + good + " -o " + (d / "x.unknown").string(), "cannot tell the comparison's format"},
      {"compare " + good + " " + good + " --fail-on-regression -5", "--fail-on-regression"},
      {"compare " + good + " " + good + " --alpha 2", "--alpha"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = run_cli(args);
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
  }
  EXPECT_FALSE(fs::exists(d / "x.unknown"));
}

}  // namespace
