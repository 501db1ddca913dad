// Subcommands of the nnprof CLI: each registers its options and returns an exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>

namespace nnprof::cli {

/// A subcommand's action, run after parsing; returns the process exit status.
using Action = std::function<int()>;

Action add_demo_command(CLI::App& app);
Action add_report_command(CLI::App& app);
Action add_export_command(CLI::App& app);
Action add_query_command(CLI::App& app);
Action add_record_command(CLI::App& app);

}  // namespace nnprof::cli
