// The live server with the real programs that read it, all on loopback and bounded in time:
// headless Chromium opens the live page of a running program and sees its numbers change with
// no script error or policy violation; a real Prometheus server scrapes /metrics and its query
// API returns nnprof's series with the program's values. Each skips, saying why, when its
// program is not installed (scripts/install-deps.sh installs both; CI has them).
#include <gtest/gtest.h>

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

extern char** environ;

namespace nnprof {
namespace {

namespace fs = std::filesystem;
using testing::RunningProgram;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr const char* kPrometheus = "/usr/bin/prometheus";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "nnprof-live-XXXXXX").string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  [[nodiscard]] const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::string tail(const std::string& text, std::size_t n = 3000) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

// ---- Chromium ----------------------------------------------------------------------------------

struct BrowserRun {
  int exit_code = -1;
  std::string dom;
  std::string log;
};

// The DOM of `url` after the page has run for a while (virtual time: the page's timers and
// the server's frames arrive while Chromium waits), with Chromium's log.
BrowserRun dump_live_dom(const fs::path& dir, const std::string& url, int run) {
  const fs::path profile = dir / ("chromium-" + std::to_string(run));
  const fs::path out = dir / ("dom-" + std::to_string(run) + ".html");
  const fs::path err = dir / ("log-" + std::to_string(run) + ".txt");
  const std::string command = std::string("timeout 60 ") + kChromium +
                              " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run"
                              " --disable-background-networking --disable-component-update --disable-sync"
                              " --enable-logging=stderr --v=0 --window-size=1400,2000 --virtual-time-budget=3000"
                              " --user-data-dir='" + profile.string() + "' --dump-dom '" + url + "' >'" +
                              out.string() + "' 2>'" + err.string() + "'";
  BrowserRun result;
  const int status = std::system(command.c_str());
  result.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.dom = read_file(out);
  result.log = read_file(err);
  return result;
}

// Lines of Chromium's log about the page's script: exceptions, console output, CSP refusals.
std::vector<std::string> script_messages(const std::string& log) {
  std::vector<std::string> found;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);)
    if (line.find("Uncaught") != std::string::npos || line.find(":CONSOLE") != std::string::npos ||
        line.find("Content Security Policy") != std::string::npos || line.find("Content-Security-Policy") != std::string::npos)
      found.push_back(line);
  return found;
}

// The data-v of the element with `id`, or -1.
double data_value(const std::string& dom, const std::string& id) {
  std::smatch m;
  if (std::regex_search(dom, m, std::regex("id=\"" + id + "\"[^>]*data-v=\"([0-9.eE+-]+)\"")) ||
      std::regex_search(dom, m, std::regex("data-v=\"([0-9.eE+-]+)\"[^>]*id=\"" + id + "\"")))
    return std::stod(m[1]);
  return -1.0;
}

TEST(LivePageInChromium, ShowsTheRunningProgramAndFollowsIt) {
  if (!fs::exists(kChromium)) GTEST_SKIP() << "chromium not installed: apt-get install chromium (scripts/install-deps.sh does)";
  TempDir dir;
  Profiler profiler;
  RunningProgram program(profiler);
  LiveServerOptions o = testing::test_server_options();
  o.token = "page-token-for-the-test";  // the page must carry it on every request it makes
  LiveServer server(profiler, o);
  const std::string url = server.url();

  const BrowserRun first = dump_live_dom(dir.path(), url, 1);
  ASSERT_EQ(first.exit_code, 0) << tail(first.log);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  const BrowserRun second = dump_live_dom(dir.path(), url, 2);
  ASSERT_EQ(second.exit_code, 0) << tail(second.log);

  for (const BrowserRun* run : {&first, &second}) {
    EXPECT_EQ(script_messages(run->log), std::vector<std::string>{}) << tail(run->log);
    EXPECT_NE(run->dom.find("live_step"), std::string::npos) << "the hot paths show the program's scope: " << tail(run->dom);
    EXPECT_NE(run->dom.find("fixed_scope"), std::string::npos);
    EXPECT_EQ(run->dom.find("could not load"), std::string::npos) << tail(run->dom);
  }
  const double scopes_first = data_value(first.dom, "scopes-recorded");
  const double scopes_second = data_value(second.dom, "scopes-recorded");
  const double duration_first = data_value(first.dom, "duration");
  const double duration_second = data_value(second.dom, "duration");
  std::cout << "[ chromium ] scopes closed " << scopes_first << " -> " << scopes_second << ", running " << duration_first
            << " s -> " << duration_second << " s\n";
  EXPECT_GT(scopes_first, 0.0) << tail(first.dom);
  EXPECT_GT(scopes_second, scopes_first) << "the page did not follow the program";
  EXPECT_GT(duration_second, duration_first);
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
  // Items are 10 per step: the two counters of the same scrape agree exactly.
  const std::optional<double> ratio =
      prometheus.query("nnprof_step_items_total{scope=\"live_step\"} / nnprof_steps_total{scope=\"live_step\"}");
  EXPECT_EQ(ratio, std::optional<double>(10.0));
  const std::optional<double> cpu = prometheus.query("process_cpu_seconds_total{job=\"nnprof\"}");
  ASSERT_TRUE(cpu);
  EXPECT_GT(*cpu, 0.0);
}

}  // namespace
}  // namespace nnprof
