// Subcommands of the nnprof CLI: each registers its options and returns an exit status.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <map>
#include <string>

#include "nnprof/profile.hpp"

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

/// Profile::load, refusing an empty profile with a message that says what to check.
Profile load_nonempty(const std::string& path);

}  // namespace nnprof::cli
