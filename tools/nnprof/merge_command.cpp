// `nnprof merge A.nnprof B.nnprof ... -o combined.html`: profiles recorded separately (one with
// CPU sampling, one with heap tracking, one of the data loader) analysed together, as
// nnprof::PerformanceAnalysis does: one order of action across them and one report holding
// each profile's report. The profiles themselves stay as they are.
// `nnprof merge rank*.nnprof -o job.nnprof`: the ranks of one distributed job joined into one
// profile on rank 0's clock (nnprof::merge_rank_profiles), which every report reads.
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
    bool allow_missing_ranks = false;
    bool allow_clock_residual = false;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "merge", "Analyse separately recorded profiles together: one order of action and one report of them all");
  cmd->add_option("profiles", o->profiles, "Profiles (.nnprof, or .json / .md reports nnprof wrote), two or more")
      ->required()
      ->expected(2, 1 << 16);
  cmd->add_option("-o,--output", o->out,
                  "The combined report (.html, .md or .txt), or a .nnprof: the ranks of one distributed job merged")
      ->required();
  cmd->add_flag("--allow-missing-ranks", o->allow_missing_ranks,
                "Rank merge: merge although some ranks of the job have no profile among the inputs");
  cmd->add_flag("--allow-clock-residual", o->allow_clock_residual,
                "Rank merge: merge although the clocks' residual error exceeds every wait at a collective");
  cmd->add_option("--label", o->labels, "A name per profile, in order (default: the file's name without extension)");
  cmd->footer("\nPrints the recommendations of every profile in one order of action (largest expected gain "
              "first), then writes the report: that list, then each profile's report under its label.\n"
              "With -o NAME.nnprof the inputs must be the ranks of one job (recorded under torchrun, mpirun or srun): "
              "they are merged into one profile, a process per rank on rank 0's clock, read by `nnprof report` "
              "(section \"Ranks\") and every export. Refused: inputs that are not ranks of one job, a rank given "
              "twice, missing ranks (unless --allow-missing-ranks), clocks whose residual exceeds every wait judged "
              "(unless --allow-clock-residual).\n"
              "Exit status: 0 when the report was written; 2 when a profile or an argument is unusable.");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (std::filesystem::path(o->out).extension() == ".nnprof") {
      if (!o->labels.empty()) throw Error("--label names the parts of a combined report; a rank merge names its ranks");
      RankMergeOptions options;
      options.allow_missing_ranks = o->allow_missing_ranks;
      options.allow_clock_residual = o->allow_clock_residual;
      const RankMergeResult r = merge_rank_profiles(o->profiles, o->out, options);
      for (const std::string& warning : r.warnings) std::cerr << "nnprof: warning: " << warning << '\n';
      std::cerr << fmt::format("nnprof: merged {} of {} ranks ({} spans, {} collective calls; clock residual {:.0f} ns, "
                               "median wait spread {} ns) into {}\n",
                               r.ranks_merged, r.world_size, r.spans, r.collectives, r.clock_residual_ns,
                               r.median_spread_ns, o->out);
      return 0;
    }
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
