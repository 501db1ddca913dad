// The live server with the real programs that read it, all on loopback and bounded in time:
// headless Chromium opens the live page of a running program and sees its numbers change with
// no script error or policy violation; a real Prometheus server scrapes /metrics and its query
// API returns nnprof's series with the program's values. Each skips, saying why, when its
// program is not installed (scripts/install-deps.sh installs both; CI has them).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <regex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "live_fixture.hpp"
#include "test_directory.hpp"

extern char** environ;

namespace nnprof {
namespace {

namespace fs = std::filesystem;
using testing::RunningProgram;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kPrometheus = "/usr/bin/prometheus";

struct TempDir : testing::ScratchDirectory {
  TempDir() : ScratchDirectory("nnprof-live") {}
};

std::string read_file(const fs::path& path) { return testing::read_whole_file(path); }

std::string tail(const std::string& text, std::size_t n = 3000) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

// ---- Chromium ----------------------------------------------------------------------------------

// Headless Chromium driven over the DevTools protocol on a pipe (--remote-debugging-pipe: it
// reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), so that the
// test can read the page's DOM at two moments of one visit and hear every exception, console
// message and policy violation in between.
class Browser {
 public:
  explicit Browser(const fs::path& dir) {
    int to_browser[2], from_browser[2];
    if (pipe(to_browser) != 0 || pipe(from_browser) != 0) return;
    const std::string profile = "--user-data-dir=" + (dir / "chromium").string();
    log_ = dir / "chromium.log";
    pid_ = fork();
    if (pid_ == 0) {
      dup2(to_browser[0], 3);
      dup2(from_browser[1], 4);
      const int log = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(log, 1);
      dup2(log, 2);
      for (int fd = 5; fd < 1024; ++fd) close(fd);
      execl(kChromium, kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync",
            "--remote-debugging-pipe", "--window-size=1400,2000", profile.c_str(), "about:blank", nullptr);
      _exit(127);
    }
    close(to_browser[0]);
    close(from_browser[1]);
    out_ = to_browser[1];
    in_ = from_browser[0];
  }
  ~Browser() {
    if (pid_ <= 0) return;
    try {
      (void)call("Browser.close", nlohmann::json::object(), "", std::chrono::seconds(5));
    } catch (...) {
    }
    close(out_);
    close(in_);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  [[nodiscard]] bool started() const { return pid_ > 0; }
  [[nodiscard]] std::string log() const { return read_file(log_); }
  /// Exceptions, console messages and log entries (CSP violations among them) seen so far.
  [[nodiscard]] const std::vector<std::string>& problems() const { return problems_; }

  /// Sends `method` (to `session`, or the browser) and returns its result; events read while
  /// waiting are kept. Throws on an error reply or a timeout.
  nlohmann::json call(const std::string& method, const nlohmann::json& params, const std::string& session,
                      std::chrono::seconds limit = std::chrono::seconds(30)) {
    const int id = ++last_id_;
    nlohmann::json message{{"id", id}, {"method", method}, {"params", params}};
    if (!session.empty()) message["sessionId"] = session;
    const std::string text = message.dump() + std::string(1, '\0');
    if (::write(out_, text.data(), text.size()) != static_cast<ssize_t>(text.size())) throw std::runtime_error("write to chromium failed");
    const auto deadline = std::chrono::steady_clock::now() + limit;
    for (;;) {
      const nlohmann::json reply = next(deadline);
      if (reply.contains("id") && reply["id"] == id) {
        if (reply.contains("error")) throw std::runtime_error(method + ": " + reply["error"].dump());
        return reply["result"];
      }
      note_event(reply);
    }
  }

  /// Reads events for `duration`.
  void pump(std::chrono::milliseconds duration) {
    const auto until = std::chrono::steady_clock::now() + duration;
    try {
      for (;;) note_event(next(until));
    } catch (const std::runtime_error&) {
      // the time is up
    }
  }

 private:
  nlohmann::json next(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
      if (const std::size_t end = buffer_.find('\0'); end != std::string::npos) {
        const std::string text = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        return nlohmann::json::parse(text);
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) throw std::runtime_error("no reply from chromium in time");
      pollfd p{in_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[65536];
      const ssize_t got = ::read(in_, chunk, sizeof chunk);
      if (got <= 0) throw std::runtime_error("chromium closed the pipe");
      buffer_.append(chunk, static_cast<std::size_t>(got));
    }
  }

  void note_event(const nlohmann::json& event) {
    const std::string method = event.value("method", "");
    if (method == "Runtime.exceptionThrown" || method == "Runtime.consoleAPICalled" || method == "Log.entryAdded")
      problems_.push_back(event["params"].dump().substr(0, 600));
  }

  pid_t pid_ = -1;
  int out_ = -1;
  int in_ = -1;
  int last_id_ = 0;
  std::string buffer_;
  fs::path log_;
  std::vector<std::string> problems_;
};

double evaluate_number(Browser& browser, const std::string& session, const std::string& expression) {
  const nlohmann::json r = browser.call("Runtime.evaluate", {{"expression", expression}, {"returnByValue", true}}, session);
  const nlohmann::json& value = r["result"]["value"];
  if (value.is_number()) return value.get<double>();
  if (value.is_string()) return std::stod(value.get<std::string>());
  return -1.0;
}

TEST(LivePageInChromium, FollowsTheRunningProgramWithoutScriptErrors) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium not installed: apt-get install chromium (scripts/install-deps.sh does)";
  TempDir dir;
  Profiler profiler;
  RunningProgram program(profiler);
  LiveServerOptions o = testing::test_server_options();
  o.token = "page-token-for-the-test";  // the page must carry it on every request it makes
  LiveServer server(profiler, o);

  Browser browser(dir.path());
  ASSERT_TRUE(browser.started());
  try {
    const std::string target = browser.call("Target.createTarget", {{"url", "about:blank"}}, "")["targetId"];
    const std::string session =
        browser.call("Target.attachToTarget", {{"targetId", target}, {"flatten", true}}, "")["sessionId"];
    browser.call("Runtime.enable", nlohmann::json::object(), session);
    browser.call("Log.enable", nlohmann::json::object(), session);
    browser.call("Page.enable", nlohmann::json::object(), session);
    browser.call("Page.navigate", {{"url", server.url()}}, session);
    browser.pump(std::chrono::milliseconds(1500));
    const double scopes_first = evaluate_number(browser, session, "Number(document.getElementById('scopes-recorded').dataset.v)");
    const double duration_first = evaluate_number(browser, session, "Number(document.getElementById('duration').dataset.v)");
    const double frames_first = evaluate_number(browser, session, "Number(document.getElementById('status').dataset.frames)");
    browser.pump(std::chrono::milliseconds(1500));
    const double scopes_second = evaluate_number(browser, session, "Number(document.getElementById('scopes-recorded').dataset.v)");
    const double duration_second = evaluate_number(browser, session, "Number(document.getElementById('duration').dataset.v)");
    const double frames_second = evaluate_number(browser, session, "Number(document.getElementById('status').dataset.frames)");
    const nlohmann::json hot = browser.call(
        "Runtime.evaluate", {{"expression", "document.getElementById('hot-body').textContent"}, {"returnByValue", true}}, session);
    const std::string hot_text = hot["result"].value("value", "");
    std::cout << "[ chromium ] scopes closed " << scopes_first << " -> " << scopes_second << ", running "
              << duration_first << " s -> " << duration_second << " s, frames " << frames_first << " -> "
              << frames_second << "\n";
    EXPECT_GT(scopes_first, 0.0);
    EXPECT_GT(scopes_second, scopes_first) << "the page did not follow the program";
    EXPECT_GT(duration_second, duration_first);
    // Frames come every 200 ms unless the server's CPU budget spaces its snapshots out (a
    // sanitizer build makes them dear): at least one new frame in 1.5 s either way.
    EXPECT_GT(frames_second, frames_first) << "no frame reached the page in 1.5 s";
    EXPECT_NE(hot_text.find("live_step"), std::string::npos) << hot_text;
    EXPECT_NE(hot_text.find("fixed_scope"), std::string::npos) << hot_text;
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << tail(browser.log());
  }
  EXPECT_EQ(browser.problems(), std::vector<std::string>{}) << "exceptions, console output or policy violations";
}

// ---- Prometheus --------------------------------------------------------------------------------------

class PrometheusProcess {
 public:
  PrometheusProcess(const fs::path& dir, std::uint16_t target, std::uint16_t port) : port_(port) {
    const fs::path config = dir / "prometheus.yml";
    std::ofstream(config) << "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
                          << "scrape_configs:\n  - job_name: nnprof\n    static_configs:\n      - targets: ['127.0.0.1:"
                          << target << "']\n";
    const std::string config_arg = "--config.file=" + config.string();
    const std::string storage_arg = "--storage.tsdb.path=" + (dir / "data").string();
    const std::string listen_arg = "--web.listen-address=127.0.0.1:" + std::to_string(port);
    log_ = dir / "prometheus.log";
    std::vector<std::string> args = {kPrometheus, config_arg, storage_arg, listen_arg, "--log.level=warn"};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 1, log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    posix_spawn_file_actions_adddup2(&actions, 1, 2);
    if (posix_spawn(&pid_, kPrometheus, &actions, nullptr, argv.data(), environ) != 0) pid_ = -1;
    posix_spawn_file_actions_destroy(&actions);
  }
  ~PrometheusProcess() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    int status = 0;
    for (int i = 0; i < 100 && waitpid(pid_, &status, WNOHANG) == 0; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(50));
    if (waitpid(pid_, &status, WNOHANG) == 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, &status, 0);
    }
  }
  PrometheusProcess(const PrometheusProcess&) = delete;
  PrometheusProcess& operator=(const PrometheusProcess&) = delete;
  [[nodiscard]] bool started() const { return pid_ > 0; }
  [[nodiscard]] std::string log() const { return read_file(log_); }

  // The value of an instant query's single series, or nothing (no result yet).
  [[nodiscard]] std::optional<double> query(const std::string& promql) const {
    httplib::Client client("127.0.0.1", port_);
    client.set_connection_timeout(2, 0);
    const auto res = client.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!res || res->status != 200) return std::nullopt;
    const nlohmann::json j = nlohmann::json::parse(res->body, nullptr, false);
    if (j.is_discarded() || j["status"] != "success" || j["data"]["result"].empty()) return std::nullopt;
    return std::stod(j["data"]["result"][0]["value"][1].get<std::string>());
  }

 private:
  std::uint16_t port_;
  pid_t pid_ = -1;
  fs::path log_;
};

TEST(LiveMetricsInPrometheus, ARealPrometheusScrapesTheProgramsSeries) {
  if (!fs::exists(kPrometheus)) GTEST_SKIP() << "prometheus not installed: apt-get install prometheus (scripts/install-deps.sh does)";
  TempDir dir;
  Profiler profiler;
  RunningProgram program(profiler);
  LiveServer server(profiler, testing::test_server_options());
  PrometheusProcess prometheus(dir.path(), server.port(), testing::free_port());
  ASSERT_TRUE(prometheus.started());

  // Scrapes every second; the first lands within a few seconds of the start.
  std::optional<double> fixed;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (!fixed && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    fixed = prometheus.query("nnprof_scope_calls_total{job=\"nnprof\",scope=\"fixed_scope\"}");
  }
  ASSERT_TRUE(fixed) << "no nnprof series in Prometheus after 60 s; its log:\n" << tail(prometheus.log());
  EXPECT_EQ(*fixed, static_cast<double>(RunningProgram::kFixedCalls));
  EXPECT_EQ(prometheus.query("up{job=\"nnprof\"}"), std::optional<double>(1.0));
  EXPECT_EQ(prometheus.query("nnprof_metric_gauge{metric=\"live_gauge\"}"), std::optional<double>(42.0));
  EXPECT_EQ(prometheus.query("nnprof_info{job=\"nnprof\"}"), std::optional<double>(1.0));
  const std::optional<double> steps = prometheus.query("nnprof_steps_total{scope=\"live_step\"}");
  ASSERT_TRUE(steps);
  EXPECT_GT(*steps, 0.0);
  EXPECT_LE(*steps, static_cast<double>(program.steps()));
  // Items are 10 per step. One scrape's two counters are read from the program a moment apart
  // (the step count with the scope statistics, the items with the throughput counters), while
  // its 2 ms steps go on: 10.004 at 2,500 steps was seen, and 2 steps' items ahead under
  // AddressSanitizer. So they agree to within a few steps in a thousand; counting items twice
  // or not at all is far off.
  const std::optional<double> ratio =
      prometheus.query("nnprof_step_items_total{scope=\"live_step\"} / nnprof_steps_total{scope=\"live_step\"}");
  ASSERT_TRUE(ratio);
  EXPECT_NEAR(*ratio, 10.0, 0.5);
  const std::optional<double> cpu = prometheus.query("process_cpu_seconds_total{job=\"nnprof\"}");
  ASSERT_TRUE(cpu);
  EXPECT_GT(*cpu, 0.0);
}

}  // namespace
}  // namespace nnprof
