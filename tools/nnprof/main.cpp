// nnprof: the command-line tool. Exit status 0 on success, 2 on bad input, with a one-line
// message that says what to do.
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "nnprof/error.hpp"
#include "nnprof/config.hpp"

int main(int argc, char** argv) {
  CLI::App app{"nnprof: find where time, memory and FLOPs go in neural-network code", "nnprof"};
  app.set_version_flag("--version", "nnprof " NNPROF_VERSION_STRING);
  app.require_subcommand(1);
  std::vector<nnprof::cli::Action> actions;
  actions.push_back(nnprof::cli::add_demo_command(app));
  actions.push_back(nnprof::cli::add_report_command(app));
  actions.push_back(nnprof::cli::add_export_command(app));
  actions.push_back(nnprof::cli::add_query_command(app));
  actions.push_back(nnprof::cli::add_record_command(app));
  actions.push_back(nnprof::cli::add_compare_command(app));
  actions.push_back(nnprof::cli::add_model_compare_command(app));
  actions.push_back(nnprof::cli::add_machine_command(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::cerr << "nnprof: " << e.what() << "\nRun 'nnprof --help' for usage.\n";
    return 2;
  }
  try {
    for (const auto& action : actions) {
      const int status = action();
      if (status >= 0) return status;
    }
  } catch (const nnprof::Error& e) {
    std::cerr << "nnprof: " << e.what() << '\n';
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "nnprof: " << e.what() << '\n';
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "nnprof: internal error: " << e.what() << '\n';
    return 1;
  }
  return 0;
}
