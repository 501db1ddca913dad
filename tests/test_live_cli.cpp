// The live server from the command line: `nnprof record --serve` serves the recorded program
// while it runs (from inside it, through the preload agent), and `nnprof serve FILE` serves the
// profile it wrote, until interrupted; a public address gets a printed token.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include <httplib.h>

#include "live_fixture.hpp"

extern char** environ;

namespace nnprof {
namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// A child process with its standard error in a file.
class Child {
 public:
  Child(std::vector<std::string> args, const fs::path& err) {
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
    if (posix_spawn(&pid_, argv[0], &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~Child() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;
  [[nodiscard]] pid_t pid() const { return pid_; }
  /// Signals it and returns its exit status (-1: killed after `limit`).
  int end(int signal, std::chrono::seconds limit = std::chrono::seconds(30)) {
    kill(pid_, signal);
    int status = 0;
    const auto until = std::chrono::steady_clock::now() + limit;
    while (waitpid(pid_, &status, WNOHANG) == 0) {
      if (std::chrono::steady_clock::now() > until) return -1;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
};

// GET `path` until it answers (the server is starting), for up to 30 s.
std::optional<httplib::Result> get_when_up(std::uint16_t port, const std::string& path, const httplib::Headers& headers = {}) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < until) {
    httplib::Client client("127.0.0.1", port);
    client.set_connection_timeout(1, 0);
    auto res = client.Get(path, headers);
    if (res) return res;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

TEST(LiveCli, RecordServesTheProgramThenServeServesItsProfile) {
  const fs::path dir = fs::temp_directory_path() / ("nnprof-live-cli-" + std::to_string(getpid()));
  fs::create_directories(dir);
  const fs::path profile = dir / "run.nnprof";
  const fs::path pid_file = dir / "pid";
  const std::uint16_t port = testing::free_port();
  {
    // --memory: the program allocates and then sleeps, so its heap is what its profile holds.
    Child record({NNPROF_CLI_PATH, "record", "--memory", "--serve", "127.0.0.1:" + std::to_string(port), "-q", "-o",
                  profile.string(), "--", WAIT_FOR_SIGNAL_PATH, pid_file.string()},
                 dir / "record.err");
    ASSERT_GT(record.pid(), 0);
    auto metrics = get_when_up(port, "/metrics");
    ASSERT_TRUE(metrics) << read_file(dir / "record.err");
    ASSERT_TRUE(*metrics);
    EXPECT_EQ((*metrics)->status, 200);
    EXPECT_NE((*metrics)->body.find("\nprocess_cpu_seconds_total "), std::string::npos);
    EXPECT_NE((*metrics)->body.find("\nnnprof_heap_allocations_total "), std::string::npos) << "record --memory tracks the heap";
    // The server runs in the program, not in nnprof record.
    const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!fs::exists(pid_file) && std::chrono::steady_clock::now() < until)
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const pid_t program = std::stoi(read_file(pid_file));
    httplib::Client client("127.0.0.1", port);
    const auto live = client.Get("/api/v1/live");
    ASSERT_TRUE(live);
    EXPECT_NE(live->body.find("\"pid\":" + std::to_string(program)), std::string::npos) << live->body.substr(0, 300);
    kill(program, SIGTERM);  // record writes the profile when its program ends
    EXPECT_NE(record.end(0), -1) << "record did not end: " << read_file(dir / "record.err");
  }
  ASSERT_TRUE(fs::exists(profile)) << read_file(dir / "record.err");

  const std::uint16_t serve_port = testing::free_port();
  Child serve({NNPROF_CLI_PATH, "serve", profile.string(), "--listen", "127.0.0.1:" + std::to_string(serve_port)},
              dir / "serve.err");
  auto metrics = get_when_up(serve_port, "/metrics");
  ASSERT_TRUE(metrics && *metrics) << read_file(dir / "serve.err");
  EXPECT_EQ((*metrics)->status, 200);
  EXPECT_EQ((*metrics)->body.find("process_cpu_seconds_total"), std::string::npos) << "a saved profile has no process";
  EXPECT_NE((*metrics)->body.find("\nnnprof_heap_allocations_total "), std::string::npos);
  EXPECT_EQ(serve.end(SIGINT), 0) << read_file(dir / "serve.err");
  fs::remove_all(dir);
}

TEST(LiveCli, APublicAddressGetsAPrintedToken) {
  const fs::path dir = fs::temp_directory_path() / ("nnprof-live-token-" + std::to_string(getpid()));
  fs::create_directories(dir);
  {
    // Any profile will do: one written by a profiler here.
    Profiler profiler;
    profiler.start("saved");
    profiler.stop("saved");
    profiler.save((dir / "p.nnprof").string());
  }
  const std::uint16_t port = testing::free_port();
  unsetenv("NNPROF_TOKEN");
  Child serve({NNPROF_CLI_PATH, "serve", (dir / "p.nnprof").string(), "--listen", "0.0.0.0:" + std::to_string(port)},
              dir / "serve.err");
  auto denied = get_when_up(port, "/metrics");
  ASSERT_TRUE(denied && *denied) << read_file(dir / "serve.err");
  EXPECT_EQ((*denied)->status, 401);
  std::smatch token;
  const std::string err = read_file(dir / "serve.err");
  ASSERT_TRUE(std::regex_search(err, token, std::regex("requests need the token ([0-9a-f]{32})"))) << err;
  httplib::Client client("127.0.0.1", port);
  const auto allowed = client.Get("/metrics", httplib::Headers{{"Authorization", "Bearer " + token[1].str()}});
  ASSERT_TRUE(allowed);
  EXPECT_EQ(allowed->status, 200);
  EXPECT_NE(allowed->body.find("nnprof_scope_calls_total{scope=\"saved\"} 1\n"), std::string::npos);
  EXPECT_EQ(serve.end(SIGTERM), 0);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace nnprof
