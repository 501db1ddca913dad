// Subcommands of the nnprof CLI: each registers its options and returns an exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>

#include "nnprof/compare.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof::cli {

/// A subcommand's action, run after parsing; returns the process exit status.
using Action = std::function<int()>;

Action add_demo_command(CLI::App& app);
Action add_report_command(CLI::App& app);
Action add_export_command(CLI::App& app);
Action add_query_command(CLI::App& app);
Action add_record_command(CLI::App& app);
Action add_compare_command(CLI::App& app);
Action add_model_compare_command(CLI::App& app);
Action add_machine_command(CLI::App& app);
Action add_merge_command(CLI::App& app);
Action add_serve_command(CLI::App& app);

/// Adds a format option (`--format,-f`, `--to`) that takes the name or an alias of a format
/// that renders `document` (report_formats()), any case. The option's help names those
/// formats followed by `default_note` in parentheses, and the command's help ends with a
/// line per format (names, extensions, description): CLI11's own description of a mapping
/// is not legible. A footer the command sets itself follows that list: start it with "\n".
void add_format_option(CLI::App* cmd, const std::string& names, ReportFormat& format, Document document,
                       const std::string& default_note);

/// Profile::load, refusing an empty profile with a message that says what to check.
Profile load_nonempty(const std::string& path);

/// load_run (a .nnprof file, or a JSON or Markdown report nnprof wrote), refusing an empty
/// profile as load_nonempty does: what compare and model-compare read.
LoadedRun load_nonempty_run(const std::string& path);

/// The output file given either as `-o` or positionally (the seeds' form: `compare A B OUT.md`);
/// throws nnprof::Error when both name one.
std::string output_of(const std::string& option, const std::string& positional);

}  // namespace nnprof::cli
