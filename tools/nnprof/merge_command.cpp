// `nnprof merge A.nnprof B.nnprof ... -o combined.html`: profiles recorded separately (one with
// CPU sampling, one with heap tracking, one of the data loader) analysed together, as
// nnprof::PerformanceAnalysis does: one order of action across them and one report holding
// each profile's report. The profiles themselves stay as they are.
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof::cli {

Action add_merge_command(CLI::App& app) {
  struct Options {
    std::vector<std::string> profiles, labels;
    std::string out;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Analyse separately recorded profiles together: one order of action and one report of them all");
  cmd->add_option("profiles", o->profiles, "Profiles (.nnprof, or .json / .md reports nnprof wrote), two or more")
      ->required()
      ->expected(2, 1 << 16);
  cmd->add_option("-o,--output", o->out, "The combined report (.html, .md or .txt)")->required();
  cmd->add_option("--label", o->labels, "A name per profile, in order (default: the file's name without extension)");
  cmd->footer("\nPrints the recommendations of every profile in one order of action (largest expected gain "
              "first), then writes the report: that list, then each profile's report under its label.\n"
              "Exit status: 0 when the report was written; 2 when a profile or an argument is unusable.");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (!o->labels.empty() && o->labels.size() != o->profiles.size())
      throw Error(fmt::format("{} labels for {} profiles: give one --label per profile, or none", o->labels.size(),
                              o->profiles.size()));
    PerformanceAnalysis analysis;
    for (std::size_t i = 0; i < o->profiles.size(); ++i) {
      const std::string& path = o->profiles[i];
      const std::string label = o->labels.empty() ? std::filesystem::path(path).stem().string() : o->labels[i];
      analysis.add_profile(load_nonempty_run(path).profile, label);
    }
    analysis.analyze();
    for (const Recommendation& r : analysis.recommendations())
      std::cout << fmt::format("{}. {}{}\n", r.priority, r.title,
                               r.expected_speedup > 0.0 ? fmt::format(" (expected {:.2f}x for its run)", r.expected_speedup)
                                                        : std::string());
    if (analysis.recommendations().empty()) std::cout << "No profile had a recommendation.\n";
    analysis.generate_report(o->out);
    std::cerr << "nnprof: wrote " << o->out << '\n';
    return 0;
  };
}

}  // namespace nnprof::cli
