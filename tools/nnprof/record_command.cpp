// `nnprof record [--sample-hz N] [--wall] [--unwind U] [--memory] [--gpu] [--out FILE] -- CMD ARGS...`: runs an
// unmodified program with the preload agent (libnnprof_preload.so) and reports the profile it
// writes when it ends. CPU sampling is on unless only --memory is asked for.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof::cli {

namespace {

namespace fs = std::filesystem;

struct RecordOptions {
  bool memory = false;
  bool gpu = false;
  double sample_hz = 0;  // 0: not given
  bool wall = false;
  std::string unwind = "auto";
  std::string out = "nnprof-record.nnprof";
  std::uint64_t stack_sample_bytes = 512 * 1024;
  std::uint64_t interval_ms = 100;
  bool quiet = false;
  std::vector<std::string> command;
};

/// The preload agent: NNPROF_PRELOAD_LIBRARY, else `name` next to this executable (build tree
/// and install tree both keep it in ../lib*/ relative to bin/). libnnprof_preload.so carries
/// the allocation hooks; libnnprof_agent.so, for CPU sampling alone, leaves malloc untouched.
fs::path find_preload_library(const std::string& name) {
  if (const char* env = std::getenv("NNPROF_PRELOAD_LIBRARY"); env != nullptr && *env != '\0') {
    if (!fs::exists(env)) throw Error(fmt::format("NNPROF_PRELOAD_LIBRARY names '{}', which does not exist", env));
    return fs::absolute(env);
  }
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  std::vector<fs::path> tried;
  if (!ec) {
    for (const char* dir : {"../lib", "../" NNPROF_INSTALL_LIBDIR, "."}) {
      const fs::path candidate = (exe.parent_path() / dir / name).lexically_normal();
      if (fs::exists(candidate)) return candidate;
      tried.push_back(candidate);
    }
  }
  std::string list;
  for (const auto& p : tried) list += (list.empty() ? "" : ", ") + p.string();
  throw Error(fmt::format("cannot find {} (looked at {}); reinstall nnprof or set NNPROF_PRELOAD_LIBRARY to its path",
                          name, list.empty() ? "nothing: /proc/self/exe is unreadable" : list));
}

/// Samples per second asked for: CPU sampling is on when a rate or --wall is given, or when
/// --memory is not (sampling is what a bare `nnprof record -- CMD` does).
double cpu_rate(const RecordOptions& o) {
  if (o.sample_hz > 0) return o.sample_hz;
  return o.wall || !o.memory ? CpuProfilerOptions{}.hz : 0.0;
}

[[noreturn]] void exec_child(const RecordOptions& o, const fs::path& preload, const fs::path& out,
                             const fs::path& manifest) {
  std::string ld = preload.string();
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') ld += std::string(":") + old;
  setenv("LD_PRELOAD", ld.c_str(), 1);
  setenv("NNPROF_RECORD_OUT", out.c_str(), 1);
  setenv("NNPROF_RECORD_PID", std::to_string(getpid()).c_str(), 1);
  setenv("NNPROF_RECORD_MANIFEST", manifest.c_str(), 1);
  setenv("NNPROF_STACK_SAMPLE_BYTES", std::to_string(o.stack_sample_bytes).c_str(), 1);
  setenv("NNPROF_MEMORY_INTERVAL_MS", std::to_string(o.interval_ms).c_str(), 1);
  setenv("NNPROF_RECORD_MEMORY", o.memory ? "1" : "0", 1);
  setenv("NNPROF_SAMPLE_HZ", std::to_string(static_cast<long long>(cpu_rate(o))).c_str(), 1);
  setenv("NNPROF_SAMPLE_WALL", o.wall ? "1" : "0", 1);
  setenv("NNPROF_SAMPLE_UNWIND", o.unwind.c_str(), 1);
  setenv("NNPROF_RECORD_GPU", o.gpu ? "1" : "0", 1);
  std::vector<char*> argv;
  for (const auto& a : o.command) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  execvp(argv[0], argv.data());
  const std::string msg = fmt::format("nnprof: cannot run '{}': {}\n", o.command[0], std::strerror(errno));
  [[maybe_unused]] ssize_t rc = write(STDERR_FILENO, msg.data(), msg.size());
  _exit(127);
}

pid_t g_child = 0;

void forward_signal(int sig) {
  if (g_child > 0) kill(g_child, sig);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by signal {} ({})", WTERMSIG(status), strsignal(WTERMSIG(status)));
  return "ended";
}

int run_record(const RecordOptions& o) {
  if (o.command.empty()) throw Error("no program to record: put it after --, as in 'nnprof record -- ./app'");
  if (o.sample_hz != 0 && (o.sample_hz < 1 || o.sample_hz > 10'000 || o.sample_hz != std::floor(o.sample_hz)))
    throw Error(fmt::format("--sample-hz {} is out of range: give a whole number of samples per second from 1 to 10000 "
                            "(default {:.0f}; above 250 needs perf_event_open)",
                            o.sample_hz, CpuProfilerOptions{}.hz));
  const fs::path preload = find_preload_library(o.memory ? "libnnprof_preload.so" : "libnnprof_agent.so");
  const fs::path out = fs::absolute(o.out);
  if (!out.parent_path().empty() && !fs::is_directory(out.parent_path()))
    throw Error(fmt::format("cannot write '{}': directory '{}' does not exist", out.string(), out.parent_path().string()));
  const fs::path manifest = fs::temp_directory_path() / fmt::format("nnprof-record-{}.list", getpid());
  fs::remove(manifest);

  std::cout.flush();
  const pid_t child = fork();
  if (child < 0) throw Error(fmt::format("cannot start '{}': fork failed: {}", o.command[0], std::strerror(errno)));
  if (child == 0) exec_child(o, preload, out, manifest);

  // Ctrl-C reaches the whole process group: let the program handle it and stay to report.
  // A SIGTERM sent to nnprof alone is passed on to the program.
  g_child = child;
  signal(SIGINT, SIG_IGN);
  signal(SIGTERM, forward_signal);
  signal(SIGHUP, forward_signal);
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
  signal(SIGHUP, SIG_DFL);

  std::vector<std::string> written;
  {
    std::ifstream list(manifest);
    for (std::string line; std::getline(list, line);)
      if (!line.empty()) written.push_back(line);
  }
  fs::remove(manifest);
  const std::string how = fmt::format("'{}' {}", o.command[0], describe_status(status));
  if (written.empty() && WIFEXITED(status) && WEXITSTATUS(status) == 127)
    throw Error(fmt::format("'{}' could not be started (exit status 127); nothing was recorded", o.command[0]));
  if (written.empty()) {
    throw Error(fmt::format(
        "{} without writing a profile: it ended in a way no handler sees (SIGKILL, _exit, or the out-of-memory "
        "killer) or could not load {}",
        how, preload.string()));
  }
  if (!o.quiet) {
    const Profile profile = Profile::load(written.front());
    std::cout << Report(profile);
  }
  std::cerr << "nnprof: " << how << "; profile" << (written.size() > 1 ? "s" : "") << " written:\n";
  for (const auto& f : written) std::cerr << "  " << f << '\n';
  if (written.size() > 1) std::cerr << "  (one per process that ran under the agent)\n";
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

}  // namespace

Action add_record_command(CLI::App& app) {
  auto o = std::make_shared<RecordOptions>();
  CLI::App* cmd = app.add_subcommand(
      "record",
      "Run an unmodified program under nnprof and write its profile (nnprof record [--sample-hz N] [--wall] "
      "[--memory] -- CMD ARGS); CPU sampling is on unless only --memory is given");
  cmd->add_option("--sample-hz", o->sample_hz,
                  "CPU samples per second of each thread's CPU time, 1 to 10000 (default 199; above 250 uses "
                  "perf_event_open)");
  cmd->add_flag("--wall", o->wall, "Sample wall-clock time instead of CPU time, to see where threads wait");
  cmd->add_option("--unwind", o->unwind,
                  "How stacks are walked: auto (kernel above 250 Hz, else libunwind), kernel (frame pointers, walked "
                  "by the kernel as perf record -g does: no signal per sample), libunwind (DWARF, right for code "
                  "without frame pointers) or frame-pointer")
      ->check(CLI::IsMember({"auto", "kernel", "libunwind", "frame-pointer"}))
      ->capture_default_str();
  cmd->add_flag("--memory", o->memory, "Track every heap allocation (malloc, new) of the program");
  cmd->add_flag("--gpu", o->gpu,
                "Trace NVIDIA GPUs with CUPTI: kernels, copies, device memory, CUDA calls, each joined to the CPU "
                "code that launched it (needs the NVIDIA driver; says why when it is off)");
  cmd->add_option("-o,--out", o->out, "Profile to write (.nnprof)")->capture_default_str();
  cmd->add_option("--stack-sample", o->stack_sample_bytes,
                  "Mean bytes between allocations whose full call stack is kept (1: every one, 0: none)")
      ->capture_default_str();
  cmd->add_option("--interval", o->interval_ms, "Milliseconds between points of the memory timeline")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the report, only where the profile went");
  cmd->add_option("command", o->command, "The program and its arguments, after --")->required();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_record(*o);
  };
}

}  // namespace nnprof::cli
