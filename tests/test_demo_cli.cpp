// End-to-end tests of `nnprof demo` as the SmallMind seed's profiler is used
// (seeds/004): `nnprof demo my-profile.md 5 100` (report file, inferences, tokens per
// inference), any token count for every model (a sliding context window past the context),
// and a default run of 3 × 50 tokens whose CPU profile has enough samples to mean something.
// Each test runs the real binary on a real workload.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "cli_run.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"
#include "test_helpers.hpp"

namespace {

using nnprof::testing::slurp;

namespace fs = std::filesystem;

/// Calls of scope `name` in the profile, over every call-tree node of that name.
std::uint64_t calls_of(const nnprof::Profile& p, const std::string& name) {
  std::uint64_t calls = 0;
  for (std::uint32_t i = 1; i < p.call_tree.size(); ++i)
    if (p.str(p.call_tree[i].name) == name) calls += p.call_tree[i].time.count;
  return calls;
}

/// Calls of scope `name` inside the scope `model:<model>`.
std::uint64_t calls_in_model(const nnprof::Profile& p, const std::string& model, const std::string& name) {
  std::uint64_t calls = 0;
  for (std::uint32_t i = 1; i < p.call_tree.size(); ++i) {
    if (p.str(p.call_tree[i].name) != name) continue;
    for (std::uint32_t n = p.call_tree[i].parent; n != 0 && n != nnprof::kNone; n = p.call_tree[n].parent)
      if (p.str(p.call_tree[n].name) == nnprof::model_scope_name(model)) {
        calls += p.call_tree[i].time.count;
        break;
      }
  }
  return calls;
}

class DemoCli : public nnprof::testing::TestDirectory {
 protected:
  DemoCli() : TestDirectory("demo_cli") {}
};

TEST_F(DemoCli, PositionalArgumentsWriteTheNamedReportOfThatManyInferencesAndTokens) {
  // The seed's example, smaller: 2 inferences of 70 tokens per model; the small model's context
  // is 64, so its window slides for the last 6 tokens of each (each slide re-encodes 63
  // positions: kept few, so that the ASan build of this test stays well under its timeout).
  const std::string report = path("my-profile.md");
  const CliRun r = run_cli("demo " + report + " 2 70 --out " + path("out"));
  ASSERT_EQ(r.status, 0) << r.output;
  const std::string md = slurp(report);
  EXPECT_TRUE(md.starts_with("# nnprof report")) << md.substr(0, 200);
  EXPECT_NE(md.find("| model.small.context_window"), std::string::npos) << "the context use is annotated";
  EXPECT_NE(md.find("sliding window of the last 64 tokens for the last 6"), std::string::npos);
  EXPECT_NE(md.find("context 128, generated 70 tokens per inference: within the context"), std::string::npos);
  // The named report comes first in the list, then the --out directory's files as without it.
  const std::size_t listed = r.output.find("Files written (the named report, then --out " + path("out") + "/):\n  " +
                                           report + "\n");
  EXPECT_NE(listed, std::string::npos) << r.output;
  for (const char* f : {"profile.nnprof", "report.md", "report.html", "trace.json", "model-comparison.md"})
    EXPECT_TRUE(fs::exists(dir_ / "out" / f)) << f;

  const nnprof::Profile p = nnprof::Profile::load(path("out/profile.nnprof"));
  for (const std::string model : {"small", "medium"}) {
    EXPECT_EQ(calls_in_model(p, model, "inference"), 2u) << model;
    EXPECT_EQ(calls_in_model(p, model, "generate_token"), 2u * 70u) << model << ": every token reached";
  }
  EXPECT_EQ(calls_in_model(p, "small", "slide_window"), 2u * 6u);
  EXPECT_EQ(calls_in_model(p, "medium", "slide_window"), 0u);
  // One forward pass per token, plus 63 re-encoded positions for each small token past 64.
  EXPECT_EQ(calls_in_model(p, "small", "forward"), 2u * (70u + 6u * 63u));
  EXPECT_EQ(calls_in_model(p, "medium", "forward"), 2u * 70u);
  EXPECT_NE(r.output.find("small: context 64, generated 70 tokens per inference: sliding window"), std::string::npos)
      << r.output;
}

TEST_F(DemoCli, TheNamedReportsFormatComesFromItsExtension) {
  const std::string json = path("run.json"), html = path("run.html"), profile = path("run.nnprof");
  for (const std::string& file : {json, html, profile}) {
    const CliRun r = run_cli("demo " + file + " 1 4 --model small --no-sampling --out " + path("out"));
    ASSERT_EQ(r.status, 0) << file << "\n" << r.output;
  }
  const auto j = nlohmann::json::parse(slurp(json));
  EXPECT_EQ(j["timing"]["generate_token"]["count"], 4);
  EXPECT_NE(slurp(html).find("</html>"), std::string::npos);
  EXPECT_EQ(calls_of(nnprof::Profile::load(profile), "generate_token"), 4u);
}

TEST_F(DemoCli, BadPositionalArgumentsAreRefusedBeforeAnythingRuns) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"demo " + path("report.unknown"), "cannot tell the report format of"},
      {"demo " + path("r.md") + " 2 --inferences 3", "inferences given twice"},
      {"demo " + path("r.md") + " 2 50 --tokens 3", "tokens given twice"},
      {"demo " + path("r.md") + " 0", "INFERENCES"},
      {"demo " + path("flame.svg") + " --no-sampling", "--no-sampling turns off"},
      {"demo " + path("missing/r.md"), "does not exist"},
      {"demo --workload training " + path("r.md") + " 5", "applies to the transformer workload only"},
  };
  for (const auto& [args, expected] : cases) {
    const CliRun r = run_cli(args + " --out " + path("out"));
    EXPECT_EQ(r.status, 2) << args << "\n" << r.output;
    EXPECT_NE(r.output.find(expected), std::string::npos) << args << "\n" << r.output;
    EXPECT_FALSE(fs::exists(dir_ / "out")) << args << ": refused before the demo ran";
  }
}

TEST_F(DemoCli, TokensPastTheContextCompleteForEveryModelChoice) {
  struct Case {
    std::string args;
    std::string slid_model;  ///< the model whose window slides, "" for none
  };
  // 100 tokens: past the small model's context (64), within the medium's (128); 130 tokens
  // slide the medium's window too. One inference each keeps the runs short.
  const std::vector<Case> cases = {{"--model small --tokens 100", "small"},
                                   {"--model medium --tokens 100", ""},
                                   {"--model both --tokens 100", "small"},
                                   {"--model medium --tokens 130", "medium"},
                                   {path("both.md") + " 1 100", "small"}};
  for (const auto& [args, slid] : cases) {
    fs::remove_all(dir_ / "out");
    // The positional form names its inferences (1); the others get --inferences 1.
    const bool positional = args.starts_with("/");
    const CliRun r = run_cli("demo " + args + (positional ? "" : " --inferences 1") + " --no-sampling --out " +
                             path("out"));
    ASSERT_EQ(r.status, 0) << args << "\n" << r.output;
    const nnprof::Profile p = nnprof::Profile::load(path("out/profile.nnprof"));
    const int tokens = args.ends_with("130") ? 130 : 100;
    const bool one_model = args.find("--model small") != std::string::npos ||
                           args.find("--model medium") != std::string::npos;
    EXPECT_EQ(nnprof::described_models(p).size(), one_model ? 1u : 2u) << args;
    for (const nnprof::ModelInfo& m : nnprof::described_models(p)) {
      EXPECT_EQ(calls_in_model(p, m.name, "generate_token"), static_cast<std::uint64_t>(tokens)) << args << " " << m.name;
      const std::string& note = p.annotations.at("model." + m.name + ".context_window");
      if (m.name == slid) {
        const auto past = static_cast<std::uint64_t>(tokens) - m.context;
        EXPECT_NE(note.find("sliding window of the last " + std::to_string(m.context) + " tokens"), std::string::npos)
            << note;
        EXPECT_EQ(calls_in_model(p, m.name, "slide_window"), past) << args;
        EXPECT_NE(r.output.find(m.name + ": context " + std::to_string(m.context)), std::string::npos) << r.output;
      } else {
        EXPECT_NE(note.find("within the context"), std::string::npos) << note;
        EXPECT_EQ(calls_in_model(p, m.name, "slide_window"), 0u) << args;
      }
    }
  }
}

TEST_F(DemoCli, TheDefaultRunIsTheSeedsThreeInferencesOfFiftyTokensWithAThousandCpuSamples) {
  const CliRun r = run_cli("demo --out " + path("out"));
  ASSERT_EQ(r.status, 0) << r.output;
  const nnprof::Profile p = nnprof::Profile::load(path("out/profile.nnprof"));
  for (const std::string model : {"small", "medium"}) {
    EXPECT_EQ(calls_in_model(p, model, "inference"), 3u) << model;
    EXPECT_EQ(calls_in_model(p, model, "generate_token"), 3u * 50u) << model;
  }
  // Sampling runs wherever the process may use CPU timers; at the sampler's maximum of
  // 10,000 Hz (perf_event) the default run's tenth of a second of CPU time gives about 1,000
  // samples and more. Without perf_event the rate is capped (250 Hz) and the demo says so.
  if (r.output.find("without CPU sampling") != std::string::npos || p.cpu.mechanism != "perf_event") {
    GTEST_SKIP() << "no perf_event sampling here: " << p.cpu.mechanism;
  }
  EXPECT_EQ(p.cpu.requested_hz, 10000.0);
  // About 1,200 on the 2-vCPU machine this was written on; the count follows the machine's
  // speed (a faster CPU does the same work in less CPU time), so the test asks for half.
  EXPECT_GE(p.cpu.samples, 500u) << r.output;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(r.output, m, std::regex("CPU sampling: ([0-9,]+) samples at 10,000 Hz"))) << r.output;
  EXPECT_TRUE(fs::exists(dir_ / "out" / "flamegraph.svg"));
}

}  // namespace
