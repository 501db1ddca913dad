// `nnprof record [--sample-hz N] [--wall] [--unwind U] [--memory] [--gpu] [--system[=INTERVAL]] [--continuous INTERVAL]
// [--mpi] [--out FILE] -- CMD ARGS...`: runs an
// unmodified program with the preload agent (libnnprof_preload.so) and reports the profile it
// writes when it ends. CPU sampling is on unless only --memory is asked for.
#include <elf.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/stat.h>
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
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/error.hpp"
#include "nnprof/live_server.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/rank_recording.hpp"
#include "nnprof/report.hpp"

namespace nnprof::cli {

namespace {

namespace fs = std::filesystem;

struct RecordOptions {
  bool memory = false;
  bool gpu = false;
  bool no_torch_ops = false;
  bool mpi = false;     // --mpi: preload the MPI interposer whatever the program links
  bool no_mpi = false;  // --no-mpi: never preload it
  double sample_hz = 0;  // 0: not given
  bool wall = false;
  std::string unwind = "auto";
  std::string out;  // empty: kDefaultOut, or kDefaultRankOut in a rank of a distributed job
  std::uint64_t stack_sample_bytes = 512 * 1024;
  std::uint64_t interval_ms = 100;
  std::string system;      // --system[=INTERVAL]: empty when not given
  double tdp_watts = 0.0;  // --tdp: for the CPU energy model where RAPL cannot be read
  std::string system_thread;  // --system-thread: whose innermost scope each system sample carries
  std::string continuous;     // --continuous INTERVAL: empty when not given
  std::string step_scope;     // --step-scope: the scope whose ends close continuous windows
  bool quiet = false;
  std::string serve;  // --serve [ADDR:]PORT: a live server in the program; empty: none
  std::vector<std::string> command;
};

constexpr const char* kDefaultOut = "nnprof-record.nnprof";
constexpr const char* kDefaultRankOut = "nnprof-record.rank{rank}.nnprof";

/// Launchers that start the ranks of a job, possibly on other hosts: `nnprof record` goes
/// after them, once per rank, not before (see run_record).
constexpr const char* kJobLaunchers[] = {"mpirun", "mpiexec", "orterun", "prterun", "srun", "aprun", "jsrun", "hydra_pmi_proxy"};

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

/// An interval given as "200ms", "2s", "10m", "1h" or a bare number of `bare_unit`s, in
/// milliseconds within [min_ms, max_ms]; otherwise an Error saying `refusal`, in which "{}"
/// stands for the text given.
std::uint64_t interval_ms(const std::string& text, std::string_view bare_unit, double min_ms, double max_ms,
                          std::string_view refusal) {
  double value = 0.0;
  std::size_t used = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  const std::string given = text.substr(used);
  const std::string_view unit = given.empty() ? bare_unit : std::string_view(given);
  const double ms = unit == "ms"                   ? value
                    : unit == "s"                  ? value * 1e3
                    : unit == "m" || unit == "min" ? value * 60e3
                    : unit == "h"                  ? value * 3600e3
                                                   : -1.0;
  if (used == 0 || !(ms >= min_ms && ms <= max_ms)) throw Error(fmt::format(fmt::runtime(refusal), text));
  return static_cast<std::uint64_t>(ms);
}

/// --system's interval: a bare number is milliseconds; 10 ms to 1 h.
std::uint64_t system_interval_ms(const std::string& text) {
  return interval_ms(text, "ms", 10.0, 3'600'000.0,
                     "--system={} is not an interval from 10ms to 1h: give it as 500ms, 2s or a number of "
                     "milliseconds (default 500ms)");
}

/// --continuous's interval: a bare number is seconds; 10 ms to 24 h.
std::uint64_t continuous_interval_ms(const std::string& text) {
  return interval_ms(text, "s", 10.0, 86'400'000.0,
                     "--continuous {} is not an interval from 10ms to 24h: give it as 200ms, 60s, 10m, 1h or a "
                     "number of seconds");
}

/// Samples per second asked for: CPU sampling is on when a rate or --wall is given, or when
/// --memory is not (sampling is what a bare `nnprof record -- CMD` does).
double cpu_rate(const RecordOptions& o) {
  if (o.sample_hz > 0) return o.sample_hz;
  return o.wall || !o.memory ? CpuProfilerOptions{}.hz : 0.0;
}

/// The file execvp would run for `name` (searched in PATH when it has no slash); empty when none.
fs::path resolve_command(const std::string& name) {
  if (name.find('/') != std::string::npos) return name;
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  for (std::size_t begin = 0; begin <= dirs.size();) {
    std::size_t end = dirs.find(':', begin);
    if (end == std::string::npos) end = dirs.size();
    const fs::path candidate = fs::path(end == begin ? "." : dirs.substr(begin, end - begin)) / name;
    if (access(candidate.c_str(), X_OK) == 0 && !fs::is_directory(candidate)) return candidate;
    begin = end + 1;
  }
  return {};
}

/// True for an ELF executable without a program interpreter (PT_INTERP): the kernel starts it
/// directly, no dynamic loader runs, and LD_PRELOAD cannot bring the agent in. A script is
/// judged by its #! interpreter.
bool is_static_executable(const fs::path& file, int depth = 0) {
  std::ifstream in(file, std::ios::binary);
  char head[256] = {};
  in.read(head, sizeof head);
  const std::streamsize got = in.gcount();
  if (got >= 2 && head[0] == '#' && head[1] == '!' && depth == 0) {
    std::string line(head + 2, static_cast<std::size_t>(got - 2));
    line = line.substr(0, line.find('\n'));
    const std::size_t b = line.find_first_not_of(" \t");
    if (b == std::string::npos) return false;
    const std::size_t e = line.find_first_of(" \t", b);
    return is_static_executable(line.substr(b, e == std::string::npos ? e : e - b), depth + 1);
  }
  if (got < static_cast<std::streamsize>(sizeof(Elf64_Ehdr)) || std::memcmp(head, ELFMAG, SELFMAG) != 0 ||
      head[EI_CLASS] != ELFCLASS64)
    return false;  // not a 64-bit ELF file: the loader says what it thinks of it
  Elf64_Ehdr eh{};
  std::memcpy(&eh, head, sizeof eh);
  if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN) return false;
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.clear();
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + std::uint64_t{i} * eh.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return false;  // truncated: not ours to judge
    if (ph.p_type == PT_INTERP) return false;
  }
  return true;
}

/// True when the ELF file `file` names a libmpi (libmpi.so.40, libmpi_mpifh, ...) among its
/// DT_NEEDED entries: the program calls MPI, so the interposer is preloaded. A script, a
/// static executable or an unreadable file: false (--mpi says so instead).
bool links_libmpi(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh) || std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 ||
      eh.e_ident[EI_CLASS] != ELFCLASS64)
    return false;
  std::vector<Elf64_Phdr> headers(eh.e_phnum);
  in.seekg(static_cast<std::streamoff>(eh.e_phoff));
  if (!in.read(reinterpret_cast<char*>(headers.data()), static_cast<std::streamsize>(headers.size() * sizeof(Elf64_Phdr))))
    return false;
  // The dynamic section gives the string table by address: map it to a file offset through
  // the PT_LOAD segment that holds it.
  auto file_offset = [&](std::uint64_t address) -> std::optional<std::uint64_t> {
    for (const Elf64_Phdr& ph : headers)
      if (ph.p_type == PT_LOAD && address >= ph.p_vaddr && address < ph.p_vaddr + ph.p_filesz)
        return address - ph.p_vaddr + ph.p_offset;
    return std::nullopt;
  };
  for (const Elf64_Phdr& ph : headers) {
    if (ph.p_type != PT_DYNAMIC) continue;
    std::vector<Elf64_Dyn> dynamic(ph.p_filesz / sizeof(Elf64_Dyn));
    in.seekg(static_cast<std::streamoff>(ph.p_offset));
    if (!in.read(reinterpret_cast<char*>(dynamic.data()), static_cast<std::streamsize>(dynamic.size() * sizeof(Elf64_Dyn))))
      return false;
    std::uint64_t strtab = 0;
    for (const Elf64_Dyn& d : dynamic)
      if (d.d_tag == DT_STRTAB) strtab = d.d_un.d_ptr;
    const auto table = file_offset(strtab);
    if (!table) return false;
    for (const Elf64_Dyn& d : dynamic) {
      if (d.d_tag == DT_NULL) break;
      if (d.d_tag != DT_NEEDED) continue;
      char name[64] = {};
      in.clear();
      in.seekg(static_cast<std::streamoff>(*table + d.d_un.d_val));
      in.read(name, sizeof name - 1);
      if (std::string_view(name).starts_with("libmpi")) return true;
    }
  }
  return false;
}

/// Before the program runs: can a profile be written at `out`? Refuses a directory, a missing
/// or unwritable directory (probed by creating and removing a file of a unique name there).
/// A device or a FIFO is written directly, so only its write permission counts.
void check_output(const fs::path& out) {
  struct stat st {};
  if (stat(out.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode))
      throw Error(fmt::format("cannot write the profile to '{}': it is a directory; give a file name, such as -o {}",
                              out.string(), (out / "profile.nnprof").string()));
    if (!S_ISREG(st.st_mode)) {
      if (access(out.c_str(), W_OK) != 0)
        throw Error(fmt::format("cannot write the profile to '{}': {}", out.string(), std::strerror(errno)));
      return;
    }
  } else if (errno != ENOENT) {
    throw Error(fmt::format("cannot write the profile to '{}': {}", out.string(), std::strerror(errno)));
  }
  const fs::path dir = out.parent_path();
  if (!fs::is_directory(dir))
    throw Error(fmt::format("cannot write '{}': directory '{}' does not exist", out.string(), dir.string()));
  std::string probe = (dir / ".nnprof-probe-XXXXXX").string();
  const int fd = mkostemp(probe.data(), O_CLOEXEC);
  if (fd < 0)
    throw Error(fmt::format("cannot write the profile to '{}': cannot create files in '{}': {}; choose another -o",
                            out.string(), dir.string(), std::strerror(errno)));
  close(fd);
  unlink(probe.c_str());
}

/// An exclusive flock on `.NAME.nnprof-lock` beside the output for the whole run, so that two
/// runs never write the same profile: the second one stops before starting its program. The
/// file is removed at the end while still locked; a run that locked a file removed meanwhile
/// (it lost that race) sees another inode at the path and starts over. A run killed with
/// SIGKILL leaves the file, unlocked: the next run takes it and removes it.
class OutputLock {
 public:
  explicit OutputLock(const fs::path& out) {
    struct stat st {};
    if (stat(out.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) return;  // a device or FIFO: nothing replaced
    path_ = out.parent_path() / ("." + out.filename().string() + ".nnprof-lock");
    for (int attempt = 0; attempt < 100; ++attempt) {
      fd_ = open(path_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
      if (fd_ < 0)
        throw Error(fmt::format("cannot create the lock file '{}': {}", path_.string(), std::strerror(errno)));
      if (flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK)
          throw Error(fmt::format("'{}' is being written by another 'nnprof record' (it holds {}); wait for it to "
                                  "end or choose another -o",
                                  out.string(), path_.string()));
        throw Error(fmt::format("cannot lock '{}': {}", path_.string(), std::strerror(err)));
      }
      struct stat held {}, now {};
      if (fstat(fd_, &held) == 0 && lstat(path_.c_str(), &now) == 0 && held.st_dev == now.st_dev &&
          held.st_ino == now.st_ino)
        return;
      close(fd_);  // removed by the run that held it: lock the file at the path now
      fd_ = -1;
    }
    throw Error(fmt::format("cannot lock '{}': it keeps being replaced", path_.string()));
  }
  ~OutputLock() {
    if (fd_ < 0) return;
    unlink(path_.c_str());
    close(fd_);
  }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  fs::path path_;
  int fd_ = -1;
};

/// The private run directory (mkdtemp: mode 0700, a fresh name) where the agents list the
/// profiles they write and leave markers about how each process ended; removed at the end.
class RunDirectory {
 public:
  RunDirectory() {
    std::string tmpl = (fs::temp_directory_path() / "nnprof-record-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr)
      throw Error(fmt::format("cannot create a private directory in {}: {}; set TMPDIR to a writable directory",
                              fs::temp_directory_path().string(), std::strerror(errno)));
    path_ = tmpl;
  }
  ~RunDirectory() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  RunDirectory(const RunDirectory&) = delete;
  RunDirectory& operator=(const RunDirectory&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

  /// The text of `name`, read without following a symlink; nullopt when there is none.
  [[nodiscard]] std::optional<std::string> read(const std::string& name) const {
    const int fd = open((path_ / name).c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return std::nullopt;
    std::string text;
    char buf[4096];
    for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    close(fd);
    return text;
  }

 private:
  fs::path path_;
};

[[noreturn]] void exec_child(const RecordOptions& o, const std::string& preload, const fs::path& out,
                             const fs::path& run_dir) {
  std::string ld = preload;
  if (const char* old = std::getenv("LD_PRELOAD"); old != nullptr && *old != '\0') ld += std::string(":") + old;
  setenv("LD_PRELOAD", ld.c_str(), 1);
  setenv("NNPROF_RECORD_OUT", out.c_str(), 1);
  setenv("NNPROF_RECORD_PID", std::to_string(getpid()).c_str(), 1);
  setenv("NNPROF_RECORD_DIR", run_dir.c_str(), 1);
  setenv("NNPROF_STACK_SAMPLE_BYTES", std::to_string(o.stack_sample_bytes).c_str(), 1);
  setenv("NNPROF_MEMORY_INTERVAL_MS", std::to_string(o.interval_ms).c_str(), 1);
  setenv("NNPROF_RECORD_MEMORY", o.memory ? "1" : "0", 1);
  setenv("NNPROF_SAMPLE_HZ", std::to_string(static_cast<long long>(cpu_rate(o))).c_str(), 1);
  setenv("NNPROF_SAMPLE_WALL", o.wall ? "1" : "0", 1);
  setenv("NNPROF_SAMPLE_UNWIND", o.unwind.c_str(), 1);
  setenv("NNPROF_RECORD_GPU", o.gpu ? "1" : "0", 1);
  setenv("NNPROF_RECORD_SYSTEM_MS", std::to_string(o.system.empty() ? 0 : system_interval_ms(o.system)).c_str(), 1);
  setenv("NNPROF_RECORD_TDP", fmt::format("{}", o.tdp_watts).c_str(), 1);
  setenv("NNPROF_RECORD_SYSTEM_THREAD", o.system_thread.c_str(), 1);
  setenv("NNPROF_RECORD_TORCH", o.no_torch_ops ? "0" : "1", 1);
  setenv("NNPROF_RECORD_MPI", preload.find("libnnprof_mpi") != std::string::npos ? "1" : "0", 1);
  setenv("NNPROF_RECORD_CONTINUOUS_MS", std::to_string(o.continuous.empty() ? 0 : continuous_interval_ms(o.continuous)).c_str(), 1);
  setenv("NNPROF_RECORD_STEP_SCOPE", o.step_scope.c_str(), 1);
  if (!o.continuous.empty()) {
    // A long run must not keep every span: an 8 MiB flight recorder of the latest ones
    // (statistics, which the windows are made of, are complete whatever the cap).
    setenv("NNPROF_MEMORY_CAP_MB", "8", 0);
    setenv("NNPROF_POLICY", "flight-recorder", 0);
  }
  setenv("NNPROF_RECORD_SERVE", o.serve.c_str(), 1);
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

std::string signal_text(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? fmt::format("SIG{}", abbrev) : fmt::format("signal {}", sig);
}

std::string describe_status(int status) {
  if (WIFEXITED(status)) return fmt::format("exited with status {}", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return fmt::format("was killed by {} ({})", signal_text(WTERMSIG(status)), strsignal(WTERMSIG(status)));
  return "ended";
}

/// Why the recorded process left no profile, from its wait status and the agent's markers.
std::string missing_profile_cause(const RunDirectory& run, pid_t root, int status, bool static_exe, bool sampling) {
  const std::string pid = std::to_string(root);
  if (static_exe)
    return "it is a statically linked executable (no program interpreter), so LD_PRELOAD could not load the agent "
           "into it; link it dynamically to profile it";
  if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !run.read("loaded." + pid))
    return "it could not be started (exit status 127)";
  if (!run.read("loaded." + pid))
    return "the agent never loaded into it (a set-user-ID or set-capabilities program ignores LD_PRELOAD, as does "
           "a program that clears its environment before exec'ing)";
  if (const auto error = run.read("error." + pid)) return "the profile could not be written: " + *error;
  if (const auto stuck = run.read("stuck." + pid))
    return "it ended on a signal but the profile could not be written in time (" + *stuck +
           "); the program probably crashed while holding a lock that nnprof needs";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
    return "it was killed by SIGKILL (kill -9, or the out-of-memory killer: see dmesg), which no handler can see";
  if (WIFSIGNALED(status) && WTERMSIG(status) == SIGPROF && sampling)
    return "it was killed by SIGPROF, the signal of nnprof's CPU sampler (the program installed its own SIGPROF "
           "handler or reset it); try --memory without CPU sampling";
  if (WIFSIGNALED(status))
    return fmt::format("it was killed by {}, which the program handled itself or blocked, so nnprof's handler did "
                       "not run",
                       signal_text(WTERMSIG(status)));
  return "it ended without running exit handlers (_exit, or exit from a forked child)";
}

int program_status(int status) {
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  return WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
}

int run_record(RecordOptions o) {
  if (o.command.empty()) throw Error("no program to record: put it after --, as in 'nnprof record -- ./app'");
  // A launcher starts ranks that may run on other hosts, where neither LD_PRELOAD nor this
  // run's private directory reaches, and the profile nnprof would report is the launcher's:
  // one `nnprof record` per rank, started by the launcher, is what works everywhere.
  const std::string launcher = fs::path(o.command[0]).filename().string();
  for (const char* name : kJobLaunchers)
    if (launcher == name)
      throw Error(fmt::format("nnprof record runs one process: put it after {0}, so that each rank runs under its "
                              "own, as in '{0} -np 4 nnprof record -o \'nnprof-record.rank{{rank}}.nnprof\' -- ./app' "
                              "(each rank writes the file its rank names; `nnprof merge` joins them)",
                              launcher));
  const RankEnvironment rank_env = read_rank_environment();
  for (const std::string& problem : rank_env.problems)
    std::cerr << "nnprof: warning: the launcher's rank variables: " << problem << '\n';
  if (o.out.empty()) o.out = rank_env.rank ? kDefaultRankOut : kDefaultOut;
  const bool rank_pattern = is_rank_pattern(o.out);  // throws on a malformed pattern
  // In a rank other than 0 the report would repeat on every rank's terminal: say only where
  // the profile went.
  if (rank_env.rank && rank_env.rank->rank != 0) o.quiet = true;
  if (o.sample_hz != 0 && (o.sample_hz < 1 || o.sample_hz > 10'000 || o.sample_hz != std::floor(o.sample_hz)))
    throw Error(fmt::format("--sample-hz {} is out of range: give a whole number of samples per second from 1 to 10000 "
                            "(default {:.0f}; above 250 needs perf_event_open)",
                            o.sample_hz, CpuProfilerOptions{}.hz));
  if (!o.system.empty()) (void)system_interval_ms(o.system);  // refused before the program runs
  if (!o.continuous.empty()) (void)continuous_interval_ms(o.continuous);
  if (o.tdp_watts < 0.0 || o.tdp_watts > 10'000.0)
    throw Error(fmt::format("--tdp {} is out of range: give the CPU package's thermal design power in watts", o.tdp_watts));
  std::string preload = find_preload_library(o.memory ? "libnnprof_preload.so" : "libnnprof_agent.so").string();
  // The agent expands the pattern in each process with that process's rank; this process
  // checks and locks the file its own rank names (the program's, under mpirun).
  const fs::path pattern = fs::absolute(o.out);
  const fs::path out = fs::absolute(expand_rank_pattern(o.out, rank_env.rank));
  if (!rank_pattern && rank_env.rank && rank_env.rank->world_size > 1)
    std::cerr << fmt::format("nnprof: warning: this is rank {} of {}, and -o {} names no {{rank}}: every rank on this "
                             "host writes that same file (the second one is refused); give -o '{}.rank{{rank}}{}'\n",
                             rank_env.rank->rank, rank_env.rank->world_size, o.out,
                             (fs::path(o.out).parent_path() / fs::path(o.out).stem()).string(),
                             fs::path(o.out).extension().string());
  if (rank_pattern && !rank_env.rank)
    std::cerr << fmt::format("nnprof: note: -o {} names {{rank}} but this process is not a rank (no "
                             "OMPI_COMM_WORLD_RANK, PMI_RANK, RANK or SLURM_PROCID): processes without a rank write "
                             "'none' there, ranks their number\n",
                             o.out);
  check_output(out);
  const OutputLock lock(fs::weakly_canonical(out));
  const fs::path program = resolve_command(o.command[0]);
  const bool wants_mpi = !o.no_mpi && (o.mpi || (!program.empty() && links_libmpi(program)));
  if (wants_mpi) {
#ifdef NNPROF_MPI_INTERPOSER
    preload += ":" + find_preload_library("libnnprof_mpi.so").string();
#else
    if (o.mpi)
      throw Error("--mpi: this nnprof was built without MPI (no MPI was found when it was built, or it is a "
                  "sanitizer build), so MPI calls cannot be recorded; install libopenmpi-dev and rebuild");
#endif
  }
  const bool static_exe = !program.empty() && is_static_executable(program);
  if (static_exe)
    std::cerr << fmt::format("nnprof: warning: '{}' is a statically linked executable (no program interpreter): "
                             "LD_PRELOAD cannot load the agent into it, so it runs unprofiled\n",
                             program.string());
  const RunDirectory run;

  std::cout.flush();
  const pid_t child = fork();
  if (child < 0) throw Error(fmt::format("cannot start '{}': fork failed: {}", o.command[0], std::strerror(errno)));
  if (child == 0) exec_child(o, preload, pattern, run.path());

  // Ctrl-C reaches the whole process group: let the program handle it and stay to report.
  // A SIGTERM or SIGHUP sent to nnprof alone is passed on to the program.
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

  // "<pid> <path>" per profile written; the recorded process's own is the run's profile.
  std::optional<std::string> root_profile;
  std::vector<std::string> others;
  {
    std::istringstream list(run.read("manifest").value_or(""));
    for (std::string line; std::getline(list, line);) {
      const std::size_t space = line.find(' ');
      if (space == std::string::npos) continue;
      const std::string path = line.substr(space + 1);
      if (line.substr(0, space) == std::to_string(child) && !root_profile)
        root_profile = path;
      else
        others.push_back(path);
    }
  }
  const std::string how = fmt::format("'{}' {}", o.command[0], describe_status(status));
  if (!root_profile) {
    // The program's status is kept: a run that wrote no profile is still the program's run.
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 127 && !run.read("loaded." + std::to_string(child))))
      std::cerr << "nnprof: warning: " << how << " and left no profile: "
                << missing_profile_cause(run, child, status, static_exe, cpu_rate(o) > 0) << '\n';
  } else {
    std::error_code ec;
    // A profile sent to a device or a pipe (-o /dev/null) cannot be read back.
    if (!o.quiet && !fs::is_regular_file(*root_profile, ec)) {
      std::cerr << "nnprof: no report printed: " << *root_profile << " is not a regular file\n";
    } else if (!o.quiet) {
      try {
        std::cout << Report(Profile::load(*root_profile));
        std::cout.flush();
      } catch (const std::exception& e) {
        std::cerr << "nnprof: warning: cannot print the report of " << *root_profile << ": " << e.what() << '\n';
      }
    }
    std::cerr << "nnprof: " << how << "; profile written:\n  " << *root_profile << '\n';
  }
  if (!others.empty()) {
    std::cerr << "nnprof: profile" << (others.size() > 1 ? "s" : "") << " of the processes it started:\n";
    for (const auto& f : others) std::cerr << "  " << f << '\n';
  }
  return program_status(status);
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
                  "How stacks are walked: auto (kernel above 250 Hz, else dwarf), kernel (frame pointers, walked "
                  "by the kernel as perf record -g does: no signal per sample), dwarf (the handler copies the top of "
                  "the stack, unwound afterwards with the .eh_frame tables: right for code without frame pointers; "
                  "'libunwind' is its older name) or frame-pointer")
      ->check(CLI::IsMember({"auto", "kernel", "dwarf", "libunwind", "frame-pointer"}))
      ->capture_default_str();
  cmd->add_flag("--memory", o->memory, "Track every heap allocation (malloc, new) of the program");
  cmd->add_flag("--gpu", o->gpu,
                "Trace NVIDIA GPUs with CUPTI: kernels, copies, device memory, CUDA calls, each joined to the CPU "
                "code that launched it (needs the NVIDIA driver; says why when it is off)");
  cmd->add_flag("--system{500ms}", o->system,
                "Sample system metrics every INTERVAL (--system=2s; default 500ms): process and host CPU, memory "
                "against the container's limits, disk and network IO, pressure stalls, GPUs through NVML, and "
                "energy (RAPL, NVML, else modelled and labelled so)");
  cmd->add_option("--system-thread", o->system_thread,
                  "The thread (by name) whose innermost open scope each system sample carries (default: the main "
                  "thread), so that GPU utilisation or RSS per scope are queries");
  cmd->add_option("--tdp", o->tdp_watts,
                  "The CPU package's TDP in watts, for the CPU energy model used where RAPL cannot be read");
  cmd->add_flag("--no-torch-ops", o->no_torch_ops,
                "Do not record PyTorch operators (by default, a program that loads LibTorch, as `import torch` does, has "
                "every operator recorded as a scope with its input shapes and FLOPs)");
  cmd->add_flag("--mpi", o->mpi,
                "Record MPI calls (collectives as spans, the clock offset to rank 0) whatever the program links; by "
                "default they are recorded when the program links libmpi");
  cmd->add_flag("--no-mpi", o->no_mpi, "Do not record MPI calls, even in a program that links libmpi");
  cmd->add_option("-o,--out", o->out,
                  "Profile to write (.nnprof): default nnprof-record.nnprof, and nnprof-record.rank{rank}.nnprof in a "
                  "rank of a distributed job; {rank}, {world_size} and {local_rank} are replaced by each process's "
                  "own (from its launcher's RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or SLURM_PROCID)");
  cmd->add_option("--stack-sample", o->stack_sample_bytes,
                  "Mean bytes between allocations whose full call stack is kept (1: every one, 0: none)")
      ->capture_default_str();
  cmd->add_option("--interval", o->interval_ms, "Milliseconds between points of the memory timeline")
      ->check(CLI::Range(1, 3'600'000))
      ->capture_default_str();
  cmd->add_option("--continuous", o->continuous,
                  "Continuous profiling: cut the run into windows of INTERVAL (200ms, 60s, 10m, 1h), each closed at "
                  "the first step end after it, with scope statistics, CPU samples, heap, RSS and energy per window; "
                  "older windows are rolled up, each finished window is written to the profile as the run goes, and "
                  "the report gives trends and anomalies (level shifts, outliers, leaks) with the window where each "
                  "began");
  cmd->add_option("--step-scope", o->step_scope,
                  "With --continuous: the scope whose ends mark steps (default: the scope that reported work items)");
  cmd->add_option("--serve", o->serve,
                  "Serve the program's profile live while it runs, at [ADDR:]PORT (127.0.0.1 unless an address is "
                  "given): a live page, Prometheus /metrics, /debug/pprof/profile and /heap (docs/LIVE.md). Any "
                  "address but loopback needs a token: NNPROF_TOKEN, else one is made and printed")
      ->check([](const std::string& spec) {
        try {
          (void)nnprof::parse_serve_address(spec);
          return std::string();
        } catch (const nnprof::Error& e) {
          return std::string(e.what());
        }
      });
  cmd->add_flag("-q,--quiet", o->quiet, "Do not print the report, only where the profile went");
  cmd->add_option("command", o->command, "The program and its arguments, after --")->required();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    return run_record(*o);
  };
}

}  // namespace nnprof::cli
