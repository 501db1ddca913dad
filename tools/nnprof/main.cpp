// nnprof: the command-line tool. Exit status 0 on success, 2 on bad input, with a one-line
// message that says what to do.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ios>
#include <iostream>
#include <vector>

#include "commands.hpp"
#include "nnprof/error.hpp"
#include "nnprof/config.hpp"

namespace {

// Every command's output must reach standard output: a report cut short by a full disk or a
// closed pipe is a failure, not a success. Run once after any command (and after --help),
// so that no command can forget it. `write_errno`: the cause of a write that failed earlier.
int check_stdout(int status, int write_errno) {
  std::cout.exceptions(std::ios::goodbit);
  errno = 0;
  std::cout.flush();
  const bool failed = !std::cout || std::fflush(stdout) != 0 || std::ferror(stdout) != 0;
  if (!failed) return status;
  const int err = write_errno != 0 ? write_errno : errno;
  std::cerr << "nnprof: cannot write to standard output: " << (err != 0 ? std::strerror(err) : "I/O error") << '\n';
  // A failing status (a program's own under `record`) already says something went wrong.
  return status == 0 ? 2 : status;
}

int run(int argc, char** argv) {
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
  actions.push_back(nnprof::cli::add_merge_command(app));
  actions.push_back(nnprof::cli::add_machine_command(app));
  actions.push_back(nnprof::cli::add_serve_command(app));
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
  // The first failed write throws, while errno still holds its cause (stdio keeps only a
  // flag). Not under `record`, which must get to the program's exit status whatever happens.
  if (!app.got_subcommand("record")) std::cout.exceptions(std::ios::badbit);
  try {
    for (const auto& action : actions) {
      const int status = action();
      if (status >= 0) return status;
    }
  } catch (const std::ios_base::failure&) {
    throw;  // standard output failed: main takes errno and check_stdout names the cause
  } catch (const nnprof::Error& e) {
    // A writer that stopped because standard output failed: check_stdout names the cause.
    if (!std::cout) return 2;
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

}  // namespace

int main(int argc, char** argv) {
  int status = 0;
  int write_errno = 0;
  try {
    status = run(argc, argv);
  } catch (const std::ios_base::failure&) {
    write_errno = errno;
    status = 2;
  }
  return check_stdout(status, write_errno);
}
