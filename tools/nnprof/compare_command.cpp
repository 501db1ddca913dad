// `nnprof compare A B`: what changed between two runs (.nnprof files, or the JSON or Markdown
// reports nnprof wrote of them), with a verdict per scope
// that a CI job can gate on (--fail-on-regression).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof::cli {

namespace {

/// Exit status when a scope regressed by more than --fail-on-regression allows (2 stays
/// "bad input", 1 "internal error").
constexpr int kRegressionStatus = 3;

}  // namespace

std::string output_of(const std::string& option, const std::string& positional) {
  if (!option.empty() && !positional.empty())
    throw Error(fmt::format("two outputs given ('{}' and -o '{}'): name the output file once", positional, option));
  return option.empty() ? positional : option;
}

LoadedRun load_nonempty_run(const std::string& path) {
  LoadedRun run = load_run(path);
  if (run.profile.empty())
    throw Error("'" + path +
                "' holds an empty profile: no scopes, spans or memory counters were recorded. Check that the "
                "program ran instrumented code (NNPROF_SCOPE, start/stop) before the profile was saved.");
  return run;
}

Action add_compare_command(CLI::App& app) {
  struct Options {
    std::string a, b, out, positional_out;
    ReportFormat format = ReportFormat::Auto;
    std::optional<double> fail_pct;
    CompareOptions compare;
    double min_change_pct = 5.0;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand("compare", "Compare two runs: what got faster, what got slower");
  cmd->add_option("a", o->a, "Baseline run: a .nnprof profile, or a .json or .md report nnprof wrote")->required();
  cmd->add_option("b", o->b, "Run to compare with the baseline (.nnprof, .json or .md, as A)")->required();
  cmd->add_option("output", o->positional_out, "Output file, as -o gives it (compare A B OUT.md)");
  cmd->add_option("-o,--output", o->out, "Output file (default: standard output)");
  add_format_option(cmd, "--format,-f", o->format, Document::Comparison, "default: from -o's extension, else text");
  cmd->add_option("--fail-on-regression", o->fail_pct,
                  "Exit with status 3 when a scope's verdict is 'regressed' and its mean time per call grew by "
                  "more than PCT percent (scopes too short to decide the run's verdict, mostly instrumentation, "
                  "do not count)")
      ->option_text("PCT")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--alpha", o->compare.alpha, "Significance level of the per-scope test (default 0.05)")
      ->check(CLI::Range(0.0, 1.0).description("a probability between 0 and 1"));
  cmd->add_option("--min-calls", o->compare.min_calls,
                  "Calls a scope needs in each run for a verdict; fewer gives 'unreliable' (default 5)")
      ->check(CLI::Range(std::uint64_t{2}, std::uint64_t{1} << 40));
  cmd->add_option("--min-change", o->min_change_pct,
                  "Smallest change of the mean time per call, in percent, that counts as improved or regressed "
                  "(default 5)")
      ->check(CLI::NonNegativeNumber);
  cmd->footer(
      "\nExit status: 0 when the comparison was written (whatever it found); 3 with --fail-on-regression PCT when "
      "a scope regressed by more than PCT percent; 2 when a profile or an argument is unusable.");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    o->out = output_of(o->out, o->positional_out);
    o->compare.min_change = o->min_change_pct / 100.0;
    const LoadedRun a = load_nonempty_run(o->a);
    const LoadedRun b = load_nonempty_run(o->b);
    Comparison c = compare(a.profile, b.profile, o->compare);
    // A report keeps no spans: say so once for the run, beside each scope's own note.
    for (const auto& [run, path] : {std::pair{&a, &o->a}, std::pair{&b, &o->b}}) {
      if (run->from_report) c.notes.push_back(compare_report_note(*run, *path));
      c.notes.insert(c.notes.end(), run->notes.begin(), run->notes.end());
    }
    if (o->out.empty() || o->out == "-") {
      write_comparison(c, std::cout, o->format == ReportFormat::Auto ? ReportFormat::Text : o->format);
    } else {
      export_comparison(c, o->out, o->format);
      std::cerr << "nnprof: wrote " << o->out << '\n';
    }
    if (o->fail_pct) {
      const ScopeChange* worst = c.worst_regression();
      if (worst != nullptr && worst->change * 100.0 > *o->fail_pct) {
        std::cerr << fmt::format(
            "nnprof: regression: '{}' takes {:.2f}x as long per call ({:+.1f}%, p = {:.2g}), more than "
            "--fail-on-regression {}% allows\n",
            worst->name, worst->ratio, worst->change * 100.0, worst->p_value, *o->fail_pct);
        return kRegressionStatus;
      }
    }
    return 0;
  };
}

}  // namespace nnprof::cli
