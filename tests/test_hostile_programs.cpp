// The hostile-program suite: programs that have hurt profilers (crashes, self-kills, fork
// without exec, closed descriptors, their own signal handlers, static linking, children...)
// run once directly and once under `nnprof record`. Recording must not change what the
// program does: its exit status and its stdout stay the same, a profile is written wherever
// one can be, and where none can be, record keeps the status and names the cause.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

namespace fs = std::filesystem;

fs::path work_dir() {
  static const fs::path dir = nnprof::testing::process_directory("hostile");
  return dir;
}

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

struct Outcome {
  int status = -1;  // the exit status, or 128 + the signal that killed it, as a shell reports it
  bool timed_out = false;
  std::string out;
  std::string err;
};

/// Runs `argv` in a process group of its own, stdout and stderr to files; after `timeout` the
/// whole group is killed, so that a hang fails the test instead of stalling the suite.
Outcome run(const std::vector<std::string>& argv, std::chrono::seconds timeout = std::chrono::seconds(60),
        const std::vector<std::string>& env = {}) {
  static std::atomic<int> counter{0};
  const int n = ++counter;
  const fs::path out = work_dir() / ("run" + std::to_string(n) + ".out");
  const fs::path err = work_dir() / ("run" + std::to_string(n) + ".err");
  // Everything the child needs is made before fork: the test may have other threads.
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> envp;
  for (const auto& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));  // first: getenv takes it
  for (char** e = environ; *e != nullptr; ++e) envp.push_back(*e);
  envp.push_back(nullptr);
  const pid_t pid = fork();
  if (pid == 0) {
    setpgid(0, 0);
    const int o = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    const int e = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (o < 0 || e < 0) _exit(126);
    dup2(o, 1);
    dup2(e, 2);
    execvpe(args[0], args.data(), envp.data());
    _exit(127);
  }
  setpgid(pid, pid);
  Outcome r;
  int raw = 0;
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    const pid_t done = waitpid(pid, &raw, WNOHANG);
    if (done == pid) break;
    if (std::chrono::steady_clock::now() > deadline) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
      waitpid(pid, &raw, 0);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  kill(-pid, SIGKILL);  // what the program left behind (a forked child), if anything
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
  r.out = read_file(out);
  r.err = read_file(err);
  return r;
}

std::vector<std::string> record_argv(const fs::path& profile, std::vector<std::string> program, bool memory = false) {
  std::vector<std::string> argv = {NNPROF_CLI_PATH, "record", "-q", "-o", profile.string()};
  if (memory) argv.push_back("--memory");
  argv.push_back("--");
  argv.insert(argv.end(), program.begin(), program.end());
  return argv;
}

struct Case {
  const char* name;
  std::vector<std::string> program;
  int status;                  // expected of the program run directly
  bool profile;                // whether one can be written
  const char* cause = nullptr;  // when not: what record's warning must name
};

std::string hostile() { return HOSTILE_PATH; }

/// Runs `c` directly and under record (CPU sampling, and --memory too when `memory`).
void check(const Case& c, bool memory = false) {
  SCOPED_TRACE(std::string(c.name) + (memory ? " --memory" : ""));
  const Outcome direct = run(c.program);
  ASSERT_FALSE(direct.timed_out);
  EXPECT_EQ(direct.status, c.status) << direct.err;
  const fs::path profile = work_dir() / (std::string(c.name) + (memory ? "_mem" : "") + ".nnprof");
  const Outcome recorded = run(record_argv(profile, c.program, memory));
  ASSERT_FALSE(recorded.timed_out) << "record hung\n" << recorded.err;
  EXPECT_EQ(recorded.status, direct.status) << recorded.err;
  if (direct.out.size() < 4096) {
    EXPECT_EQ(recorded.out, direct.out) << recorded.err;
  } else {  // too long to print: say where they part
    const auto diff = std::mismatch(recorded.out.begin(), recorded.out.end(), direct.out.begin(), direct.out.end());
    EXPECT_TRUE(recorded.out == direct.out) << "stdout differs from byte " << (diff.first - recorded.out.begin())
                                            << " (" << recorded.out.size() << " vs " << direct.out.size()
                                            << " bytes)\n" << recorded.err;
  }
  if (c.profile) {
    ASSERT_TRUE(fs::exists(profile)) << recorded.err;
    const nnprof::Profile p = nnprof::Profile::load(profile.string());
    EXPECT_EQ(p.cpu.sampled, !memory);  // --memory alone leaves CPU sampling off
    EXPECT_EQ(p.heap.tracked, memory);
  } else {
    EXPECT_FALSE(fs::exists(profile));
    EXPECT_NE(recorded.err.find("left no profile"), std::string::npos) << recorded.err;
    if (c.cause != nullptr) {
      EXPECT_NE(recorded.err.find(c.cause), std::string::npos) << recorded.err;
    }
  }
}

TEST(HostilePrograms, CrashesAndSignalsKeepTheStatusAndTheProfile) {
  for (const Case& c : {Case{"segv", {hostile(), "segv"}, 128 + SIGSEGV, true},
                        Case{"abort", {hostile(), "abort"}, 128 + SIGABRT, true},
                        Case{"sighup", {hostile(), "sighup"}, 128 + SIGHUP, true},
                        Case{"sigpipe", {hostile(), "sigpipe"}, 128 + SIGPIPE, true}})
    check(c);
  check(Case{"segv", {hostile(), "segv"}, 128 + SIGSEGV, true}, true);
}

TEST(HostilePrograms, EndsNoHandlerSeesKeepTheStatusAndNameTheCause) {
  check(Case{"exit_now", {hostile(), "exit_now"}, 3, false, "_exit"});
  check(Case{"sigkill", {hostile(), "sigkill"}, 128 + SIGKILL, false, "SIGKILL"});
  check(Case{"py_exit", {"/usr/bin/python3", "-c", "import os; os._exit(0)"}, 0, false, "_exit"});
}

TEST(HostilePrograms, StaticBinaryRunsUnprofiledAndRecordSaysWhyUpFront) {
  const Case c{"static", {HOSTILE_STATIC_PATH, "work"}, 0, false, "statically linked"};
  check(c);
  const Outcome r = run(record_argv(work_dir() / "static2.nnprof", c.program));
  EXPECT_NE(r.err.find("warning: '" HOSTILE_STATIC_PATH "' is a statically linked executable"), std::string::npos)
      << r.err;
}

TEST(HostilePrograms, ForkVforkAndExecKeepTheRootProfile) {
  for (const Case& c : {Case{"fork", {hostile(), "fork"}, 0, true}, Case{"fork_exec", {hostile(), "fork_exec"}, 0, true},
                        Case{"vfork", {hostile(), "vfork"}, 0, true}, Case{"exec", {hostile(), "exec"}, 0, true}})
    check(c);
  check(Case{"fork", {hostile(), "fork"}, 0, true}, true);
}

TEST(HostilePrograms, TwoHundredShortLivedThreads) {
  check(Case{"threads200", {hostile(), "threads200"}, 0, true});
  check(Case{"threads200", {hostile(), "threads200"}, 0, true}, true);
}

TEST(HostilePrograms, OwnSigprofAndSigsegvHandlers) {
  // Its SIGSEGV handler recovers and it prints how many SIGPROF it saw: none was sent by the
  // program, so any would be the sampler's, reaching the program (0 from nnprof since the
  // sampler keeps its signal to itself).
  check(Case{"own_handlers", {hostile(), "own_handlers"}, 0, true});
}

TEST(HostilePrograms, CrashHandlerThatChainsToThePreviousActionStillLeavesAProfile) {
  // It finds SIG_DFL before it (as without nnprof), and putting that back and raising again
  // ends the process through the agent, which writes the profile first.
  check(Case{"chained_crash", {hostile(), "chained_crash_handler"}, 128 + SIGSEGV, true});
}

TEST(HostilePrograms, ClosedDescriptorsThenACrashLeaveTheProgramsFileAlone) {
  for (bool memory : {false, true}) {
    const fs::path file = work_dir() / (memory ? "own_file_mem.txt" : "own_file.txt");
    check(Case{memory ? "closed_fds" : "closed_fds_cpu", {hostile(), "closed_fds", file.string()}, 128 + SIGSEGV, true},
          memory);
    EXPECT_EQ(read_file(file), "program data\n") << "the agent wrote into the program's file";
  }
}

TEST(HostilePrograms, ChildProcessesGetTheirOwnProfilesAndTheReportIsTheRoots) {
  const std::string code = "import subprocess; subprocess.run(['" + hostile() + "', 'work'])";
  check(Case{"py_child", {"/usr/bin/python3", "-c", code}, 0, true});
  // Without -q: the printed report is the recorded process's, the child's profile is listed.
  const fs::path profile = work_dir() / "py_child_report.nnprof";
  const Outcome r = run({NNPROF_CLI_PATH, "record", "-o", profile.string(), "--", "/usr/bin/python3", "-c", code});
  ASSERT_EQ(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("processes it started"), std::string::npos) << r.err;
  const nnprof::Profile root = nnprof::Profile::load(profile.string());
  EXPECT_NE(root.meta.command_line.find("python3"), std::string::npos) << root.meta.command_line;
  EXPECT_NE(r.out.find("python3"), std::string::npos) << "the report is not the root's:\n" << r.out;
  const fs::path child = profile.parent_path() / (profile.stem().string() + ".");
  bool child_listed = false;
  for (const auto& entry : fs::directory_iterator(work_dir()))
    if (entry.path().string().rfind(child.string(), 0) == 0 && entry.path().extension() == ".nnprof") {
      child_listed = r.err.find(entry.path().string()) != std::string::npos;
      const nnprof::Profile p = nnprof::Profile::load(entry.path().string());
      EXPECT_NE(p.meta.command_line.find("hostile"), std::string::npos) << p.meta.command_line;
    }
  EXPECT_TRUE(child_listed) << r.err;
}

TEST(HostilePrograms, PythonStillRaisesKeyboardInterrupt) {
  // CPython installs its SIGINT handler only when it finds SIG_DFL there at start-up: the
  // agent's handler must look like SIG_DFL, or Ctrl-C kills a training loop instead of
  // running its `except KeyboardInterrupt:`.
  const std::string code =
      "import os, signal, time\n"
      "print(signal.getsignal(signal.SIGINT) is signal.default_int_handler, signal.getsignal(signal.SIGHUP))\n"
      "try:\n"
      "    os.kill(os.getpid(), signal.SIGINT)\n"
      "    time.sleep(5)\n"
      "except KeyboardInterrupt:\n"
      "    print('KeyboardInterrupt caught')\n";
  check(Case{"py_sigint", {"/usr/bin/python3", "-c", code}, 0, true});
  const Outcome direct = run({"/usr/bin/python3", "-c", code});
  EXPECT_EQ(direct.out, "True 0\nKeyboardInterrupt caught\n");  // 0: SIG_DFL
}

TEST(HostilePrograms, GnuSortInParallel) {
  const fs::path input = work_dir() / "sort_input.txt";
  {
    std::ofstream f(input);
    std::mt19937 rng(42);
    for (int i = 0; i < 200'000; ++i) f << rng() << '\n';
  }
  check(Case{"sort", {"sort", "--parallel=2", "-S", "4M", input.string()}, 0, true});
}

TEST(HostilePrograms, MultiThreadedMallocNeverHangs) {
  // Several runs: a deadlock between the sampler and malloc shows up in some runs only. Each
  // run has a timeout that kills its process group, so a hang fails here instead of stalling.
  for (int i = 0; i < 4; ++i) {
    const fs::path profile = work_dir() / ("malloc3_" + std::to_string(i) + ".nnprof");
    const Outcome r = run(record_argv(profile, {hostile(), "malloc3", "1000"}), std::chrono::seconds(20));
    ASSERT_FALSE(r.timed_out) << "run " << i << " hung\n" << r.err;
    EXPECT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.out, "malloc threads done\n");
    EXPECT_TRUE(fs::exists(profile)) << r.err;
  }
}

TEST(HostilePrograms, ProgramWithItsOwnCpuProfiler) {
  // The agent's sampler yields to the program's own (CpuProfilerOptions::yield_to_program):
  // the program runs as it would alone, and record never waits out its 30 s flush limit.
  const Case c{"own_profiler", {OWN_PROFILER_PATH}, 0, true};
  SCOPED_TRACE(c.name);
  const Outcome direct = run(c.program);
  EXPECT_EQ(direct.status, 0) << direct.err;
  const fs::path profile = work_dir() / "own_profiler.nnprof";
  const Outcome recorded = run(record_argv(profile, c.program), std::chrono::seconds(20));
  ASSERT_FALSE(recorded.timed_out) << recorded.err;
  EXPECT_EQ(recorded.status, direct.status) << recorded.err;
  EXPECT_EQ(recorded.out, direct.out) << recorded.err;
  EXPECT_TRUE(fs::exists(profile)) << recorded.err;
}

// ---- record's own checks: output, lock, private run directory ----------------------------

TEST(HostileRecord, UnusableOutputIsRefusedBeforeTheProgramRuns) {
  const fs::path marker = work_dir() / "ran";
  fs::remove(marker);
  for (const std::string& out : {work_dir().string(), std::string("/proc/nnprof-test.nnprof"),
                                (work_dir() / "no" / "such" / "x.nnprof").string()}) {
    const Outcome r = run({NNPROF_CLI_PATH, "record", "-q", "-o", out, "--", "/usr/bin/touch", marker.string()});
    EXPECT_EQ(r.status, 2) << out << "\n" << r.err;
    EXPECT_NE(r.err.find("nnprof: "), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(marker)) << "the program ran although the profile could not be written to " << out;
  }
  const Outcome dir = run({NNPROF_CLI_PATH, "record", "-q", "-o", work_dir().string(), "--", "/bin/true"});
  EXPECT_NE(dir.err.find("is a directory"), std::string::npos) << dir.err;
  // The probe leaves nothing behind.
  for (const auto& entry : fs::directory_iterator(work_dir()))
    EXPECT_EQ(entry.path().filename().string().find(".nnprof-probe"), std::string::npos) << entry.path();
}

TEST(HostileRecord, ProfileThatCannotBeWrittenKeepsTheStatusAndSaysWhy) {
  const fs::path dir = work_dir() / "vanishing";
  fs::create_directories(dir);
  // The program removes the output's directory: the agent's save fails, record says how.
  const Outcome r = run({NNPROF_CLI_PATH, "record", "-q", "-o", (dir / "x.nnprof").string(), "--", "/usr/bin/python3",
                         "-c", "import shutil, sys; shutil.rmtree('" + dir.string() + "'); sys.exit(7)"});
  EXPECT_EQ(r.status, 7) << r.err;
  EXPECT_NE(r.err.find("the profile could not be written"), std::string::npos) << r.err;
}

TEST(HostileRecord, SecondRunOnTheSameOutputIsRefusedAndNothingIsLost) {
  const fs::path profile = work_dir() / "shared.nnprof";
  const fs::path pid_file = work_dir() / "shared.pid";
  fs::remove(pid_file);
  auto first = std::async(std::launch::async, [&] {
    return run(record_argv(profile, {WAIT_FOR_SIGNAL_PATH, pid_file.string()}));
  });
  for (int i = 0; i < 400 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(pid_file));
  const fs::path marker = work_dir() / "second_ran";
  const Outcome second = run(record_argv(profile, {"/usr/bin/touch", marker.string()}));
  EXPECT_EQ(second.status, 2) << second.err;
  EXPECT_NE(second.err.find("another 'nnprof record'"), std::string::npos) << second.err;
  EXPECT_FALSE(fs::exists(marker));
  int pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  kill(pid, SIGTERM);
  const Outcome done = first.get();
  EXPECT_EQ(done.status, 128 + SIGTERM) << done.err;
  EXPECT_NO_THROW(nnprof::Profile::load(profile.string()));
  // No lock file stays behind, and the output is free again.
  EXPECT_FALSE(fs::exists(work_dir() / ".shared.nnprof.nnprof-lock"));
  const Outcome again = run(record_argv(profile, {"/bin/true"}));
  EXPECT_EQ(again.status, 0) << again.err;
}

TEST(HostileRecord, RunFilesLiveInAPrivateDirectoryRemovedAtTheEnd) {
  const fs::path tmp = work_dir() / "tmpdir";
  fs::create_directories(tmp);
  const fs::path pid_file = work_dir() / "private.pid";
  fs::remove(pid_file);
  const std::string tmpdir = "TMPDIR=" + tmp.string();
  auto running = std::async(std::launch::async, [&] {
    return run(record_argv(work_dir() / "private.nnprof", {WAIT_FOR_SIGNAL_PATH, pid_file.string()}),
               std::chrono::seconds(60), {tmpdir});
  });
  for (int i = 0; i < 400 && !fs::exists(pid_file); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(25));
  ASSERT_TRUE(fs::exists(pid_file));
  int entries = 0;
  for (const auto& entry : fs::directory_iterator(tmp)) {
    ++entries;
    struct stat st {};
    ASSERT_EQ(lstat(entry.path().c_str(), &st), 0);
    EXPECT_TRUE(S_ISDIR(st.st_mode)) << entry.path() << " is not a private directory";
    EXPECT_EQ(st.st_mode & 0777, 0700u) << entry.path();
  }
  EXPECT_EQ(entries, 1);
  int pid = 0;
  std::ifstream(pid_file) >> pid;
  ASSERT_GT(pid, 0);
  kill(pid, SIGTERM);
  const Outcome done = running.get();
  EXPECT_EQ(done.status, 128 + SIGTERM) << done.err;
  EXPECT_TRUE(fs::is_empty(tmp)) << "the run directory was not removed";
}

}  // namespace
