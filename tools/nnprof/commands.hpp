// Subcommands of the nnprof CLI: each registers its options and returns an exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

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

/// Adds a format option (`--format,-f`, `--to`) that takes a name of `formats`, any case. The
/// help shows FORMAT and `help` lists the names: CLI11's own description of a mapping is
/// not legible. `formats` must outlive parsing.
void add_format_option(CLI::App* cmd, const std::string& names, ReportFormat& format,
                       const std::map<std::string, ReportFormat>& formats, const std::string& help);

/// Profile::load, refusing an empty profile with a message that says what to check.
Profile load_nonempty(const std::string& path);

}  // namespace nnprof::cli
