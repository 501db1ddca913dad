// `nnprof model-compare PROFILE`: the models described in one run (nnprof::describe_model) side
// by side, with the ratios of each to the smallest and a scaling-efficiency verdict.
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof::cli {

Action add_model_compare_command(CLI::App& app) {
  struct Options {
    std::string profile, out, positional_out;
    ReportFormat format = ReportFormat::Auto;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "model-compare", "Compare the models of one profile: speed, work and memory, and how time scales with size");
  cmd->add_option("profile", o->profile, "Profile (.nnprof, or a .json or .md report nnprof wrote) whose models were described with "
                 "nnprof::describe_model")
      ->required();
  cmd->add_option("output", o->positional_out, "Output file, as -o gives it (model-compare RUN OUT.md)");
  cmd->add_option("-o,--output", o->out, "Output file (default: standard output)");
  add_format_option(cmd, "--format,-f", o->format, Document::ModelComparison, "default: from -o's extension, else text");
  cmd->footer("\nExit status: 0 when the comparison was written; 2 when the profile has no model descriptions or an "
              "argument is unusable.");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->out = output_of(o->out, o->positional_out);
    const LoadedRun run = load_run(o->profile);
    const Profile& p = run.profile;
    if (described_models(p).empty())
      throw Error(fmt::format("{} has no model descriptions: record models with nnprof::describe_model (nnprof demo "
                              "does)",
                              o->profile));
    ModelComparison c = compare_models(p);
    c.notes.insert(c.notes.end(), run.notes.begin(), run.notes.end());
    if (o->out.empty() || o->out == "-") {
      write_model_comparison(c, std::cout, o->format == ReportFormat::Auto ? ReportFormat::Text : o->format);
    } else {
      export_model_comparison(c, o->out, o->format);
      std::cerr << "nnprof: wrote " << o->out << '\n';
    }
    return 0;
  };
}

}  // namespace nnprof::cli
