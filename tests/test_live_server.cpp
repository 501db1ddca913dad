// The live server: the Prometheus exposition and the token rules as functions, then a real
// server on loopback serving a profiler that records while the tests read /metrics, the JSON
// API, the page and its policy, 50 concurrent event streams, pprof CPU and heap profiles, and
// refuses what it must (a port in use, a public address without a token, requests without it).
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <poll.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <numeric>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/pprof_export.hpp"
#include "io/proto/profile.pb.h"
#include "live_fixture.hpp"
#include "sample_profiles.hpp"
#include "serve/access.hpp"
#include "serve/prometheus.hpp"
#include "nnprof/continuous.hpp"
#include "nnprof/error.hpp"

namespace nnprof {
namespace {

namespace pb = perftools::profiles;
using testing::RunningProgram;
using testing::test_server_options;

// ---- the exposition format ----------------------------------------------------------------------

TEST(PrometheusText, EscapesLabelValuesAndHelp) {
  EXPECT_EQ(serve::escape_label_value("plain"), "plain");
  EXPECT_EQ(serve::escape_label_value("a\"b\\c\nd"), "a\\\"b\\\\c\\nd");
  EXPECT_EQ(serve::escape_help("line\\one\ntwo \"quoted\""), "line\\\\one\\ntwo \"quoted\"");
  EXPECT_EQ(serve::metric_name_part("gpu0.memory-used"), "gpu0_memory_used");
  EXPECT_EQ(serve::metric_name_part("0day"), "_0day");
  EXPECT_EQ(serve::sample_value(std::nan("")), "NaN");
  EXPECT_EQ(serve::sample_value(1.0 / 0.0), "+Inf");
  EXPECT_EQ(serve::sample_value(-1.0 / 0.0), "-Inf");
  EXPECT_EQ(serve::sample_value(0.25), "0.25");
  EXPECT_EQ(serve::sample_value(100.0), "100");
}

// Every line is a HELP, a TYPE or a sample of the family declared last; each family is declared
// once, with HELP before TYPE; counters end in _total; names and labels are well formed.
void expect_valid_exposition(const std::string& text) {
  const std::regex sample_line(
      R"re(^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")(,[a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\["\\n])*")*\})? (NaN|[+-]Inf|-?[0-9.eE+-]+)$)re");
  std::istringstream in(text);
  std::set<std::string> families;
  std::string family, type, help_of;
  std::size_t line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (line.rfind("# HELP ", 0) == 0) {
      help_of = line.substr(7, line.find(' ', 7) - 7);
      EXPECT_TRUE(families.insert(help_of).second) << "family declared twice: " << help_of;
      continue;
    }
    if (line.rfind("# TYPE ", 0) == 0) {
      std::istringstream words(line.substr(7));
      words >> family >> type;
      EXPECT_EQ(family, help_of) << "TYPE without its HELP at line " << line_number;
      EXPECT_TRUE(type == "counter" || type == "gauge" || type == "summary") << line;
      if (type == "counter") {
        EXPECT_TRUE(family.ends_with("_total")) << family;
      }
      continue;
    }
    std::smatch m;
    ASSERT_TRUE(std::regex_match(line, m, sample_line)) << "line " << line_number << ": " << line;
    const std::string name = m[1];
    const bool belongs = name == family || (type == "summary" && (name == family + "_sum" || name == family + "_count"));
    EXPECT_TRUE(belongs) << "sample " << name << " outside its family " << family;
  }
}

TEST(PrometheusText, HeapProfileIsValidExpositionWithBaseUnits) {
  const Profile p = testing::heap_profile();
  const std::string text = serve::prometheus_text(p, serve::read_process_stats(), serve::ServerStats{});
  expect_valid_exposition(text);
  EXPECT_NE(text.find("# TYPE process_cpu_seconds_total counter"), std::string::npos);
  EXPECT_NE(text.find("# TYPE process_resident_memory_bytes gauge"), std::string::npos);
  EXPECT_NE(text.find("# TYPE nnprof_heap_live_bytes gauge"), std::string::npos);
  EXPECT_NE(text.find("\nnnprof_heap_live_bytes " + std::to_string(p.heap.current_bytes) + "\n"), std::string::npos);
  EXPECT_NE(text.find("\nnnprof_heap_allocations_total " + std::to_string(p.heap.alloc_count) + "\n"), std::string::npos);
  // train_step: 10 calls of 50 ms = 0.5 s inclusive.
  EXPECT_NE(text.find("\nnnprof_scope_calls_total{scope=\"train_step\"} 10\n"), std::string::npos) << text.substr(0, 3000);
  EXPECT_NE(text.find("\nnnprof_scope_seconds_total{scope=\"train_step\"} 0.5\n"), std::string::npos);
}

TEST(PrometheusText, ScopeNamesAreEscapedAndAnomaliesCounted) {
  Profile p = testing::heap_profile();
  p.strings[testing::kHeapStep] = "step \"one\"\\two\nthree";
  Anomaly a;
  a.kind = AnomalyKind::LevelShift;
  a.metric = "step_time";
  p.continuous.enabled = true;
  p.continuous.anomalies = {a, a};
  a.kind = AnomalyKind::Growth;
  a.metric = "rss";
  p.continuous.anomalies.push_back(a);
  Trend t;
  t.metric = "rss";
  t.relative_slope_per_hour = 0.5;
  t.significant = true;
  p.continuous.trends = {t};
  const std::string text = serve::prometheus_text(p, std::nullopt, serve::ServerStats{});
  expect_valid_exposition(text);
  EXPECT_NE(text.find("nnprof_scope_calls_total{scope=\"step \\\"one\\\"\\\\two\\nthree\"} 10\n"), std::string::npos);
  EXPECT_NE(text.find("nnprof_anomalies_total{kind=\"level-shift\",metric=\"step_time\"} 2\n"), std::string::npos);
  EXPECT_NE(text.find("nnprof_anomalies_total{kind=\"growth\",metric=\"rss\"} 1\n"), std::string::npos);
  EXPECT_NE(text.find("nnprof_trend_relative_slope_per_hour{metric=\"rss\"} 0.5\n"), std::string::npos);
  EXPECT_EQ(text.find("process_cpu_seconds_total"), std::string::npos) << "a saved profile has no live process";
}

// ---- tokens and addresses ---------------------------------------------------------------------

TEST(LiveAccess, TokensAndAddresses) {
  EXPECT_TRUE(serve::equal_in_constant_time("abcdef0123456789", "abcdef0123456789"));
  EXPECT_FALSE(serve::equal_in_constant_time("abcdef0123456789", "abcdef0123456788"));
  EXPECT_FALSE(serve::equal_in_constant_time("abcdef0123456789", "abcdef012345678"));
  EXPECT_FALSE(serve::equal_in_constant_time("", "x"));
  EXPECT_EQ(serve::presented_token("Bearer s3cret-token-value", "other"), "s3cret-token-value");
  EXPECT_EQ(serve::presented_token("bearer  s3cret ", ""), "s3cret");
  EXPECT_EQ(serve::presented_token("", "from-query"), "from-query");
  EXPECT_EQ(serve::presented_token("Basic abc", "from-query"), "from-query");
  EXPECT_TRUE(serve::token_accepted("", "anything"));
  EXPECT_FALSE(serve::token_accepted("required-token-1", ""));
  EXPECT_TRUE(serve::is_loopback_address("127.0.0.1"));
  EXPECT_TRUE(serve::is_loopback_address("127.1.2.3"));
  EXPECT_TRUE(serve::is_loopback_address("::1"));
  EXPECT_TRUE(serve::is_loopback_address("[::1]"));
  EXPECT_TRUE(serve::is_loopback_address("localhost"));
  EXPECT_FALSE(serve::is_loopback_address("0.0.0.0"));
  EXPECT_FALSE(serve::is_loopback_address("10.0.0.1"));
  EXPECT_FALSE(serve::is_loopback_address("::"));

  const std::string a = serve::generate_token();
  const std::string b = serve::generate_token();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.find_first_not_of("0123456789abcdef"), std::string::npos);

  unsetenv("NNPROF_TOKEN");
  bool generated = false;
  EXPECT_EQ(serve::required_token("127.0.0.1", "", false, generated), "");
  EXPECT_FALSE(generated);
  try {
    (void)serve::required_token("0.0.0.0", "", false, generated);
    ADD_FAILURE() << "a public address without a token was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("without a token"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("NNPROF_TOKEN"), std::string::npos) << e.what();
  }
  EXPECT_EQ(serve::required_token("0.0.0.0", "", true, generated).size(), 32u);
  EXPECT_TRUE(generated);
  EXPECT_THROW((void)serve::required_token("0.0.0.0", "short", false, generated), Error);
  EXPECT_THROW((void)serve::required_token("0.0.0.0", "has spaces in the token", false, generated), Error);
  setenv("NNPROF_TOKEN", "token-from-the-environment", 1);
  EXPECT_EQ(serve::required_token("0.0.0.0", "", false, generated), "token-from-the-environment");
  unsetenv("NNPROF_TOKEN");
}

TEST(LiveAccess, ParsesServeAddresses) {
  EXPECT_EQ(parse_serve_address("9000").port, 9000);
  EXPECT_EQ(parse_serve_address("9000").address, "127.0.0.1");
  EXPECT_EQ(parse_serve_address("0.0.0.0:8081").address, "0.0.0.0");
  EXPECT_EQ(parse_serve_address("0.0.0.0:8081").port, 8081);
  EXPECT_EQ(parse_serve_address("[::1]:8082").address, "::1");
  EXPECT_THROW((void)parse_serve_address("70000"), Error);
  EXPECT_THROW((void)parse_serve_address("host:"), Error);
  EXPECT_THROW((void)parse_serve_address(":80"), Error);
  EXPECT_THROW((void)parse_serve_address("::1:80"), Error);
}

// ---- a server of a running program ----------------------------------------------------------------

TEST(LiveServer, ServesMetricsJsonAndThePageOfARunningProgram) {
  Profiler profiler;
  RunningProgram program(profiler);
  LiveServer server(profiler, test_server_options());
  ASSERT_NE(server.port(), 0);
  EXPECT_EQ(server.url(), "http://127.0.0.1:" + std::to_string(server.port()) + "/");
  while (program.steps() < 20) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto client = testing::client_of(server);

  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->status, 200);
  EXPECT_EQ(metrics->get_header_value("Content-Type"), "text/plain; version=0.0.4; charset=utf-8");
  expect_valid_exposition(metrics->body);
  EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"fixed_scope\"} 100\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"live_step\"}"), std::string::npos);
  EXPECT_NE(metrics->body.find("nnprof_steps_total{scope=\"live_step\"}"), std::string::npos);
  EXPECT_NE(metrics->body.find("nnprof_metric_gauge{metric=\"live_gauge\",unit=\"\"} 42\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("\nprocess_cpu_seconds_total "), std::string::npos);
  EXPECT_NE(metrics->body.find("\nprocess_open_fds "), std::string::npos);

  const auto live = client.Get("/api/v1/live");
  ASSERT_TRUE(live);
  EXPECT_EQ(live->status, 200);
  const nlohmann::json frame = nlohmann::json::parse(live->body);
  bool found = false;
  for (const auto& row : frame["hot"]) found = found || row["name"] == "live_step";
  EXPECT_TRUE(found) << live->body.substr(0, 2000);
  EXPECT_GT(frame["meta"]["duration_s"].get<double>(), 0.0);
  EXPECT_TRUE(frame.contains("flame"));
  EXPECT_TRUE(frame.contains("bottlenecks"));

  const auto scopes = client.Get("/api/v1/scopes");
  ASSERT_TRUE(scopes);
  const nlohmann::json s = nlohmann::json::parse(scopes->body);
  std::uint64_t fixed_calls = 0;
  for (const auto& row : s["scopes"])
    if (row["name"] == "fixed_scope") fixed_calls = row["calls"];
  EXPECT_EQ(fixed_calls, RunningProgram::kFixedCalls);
  ASSERT_TRUE(client.Get("/api/v1/metrics"));
  ASSERT_TRUE(client.Get("/api/v1/anomalies"));

  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  EXPECT_EQ(page->status, 200);
  const std::string policy = page->get_header_value("Content-Security-Policy");
  std::smatch nonce;
  ASSERT_TRUE(std::regex_search(policy, nonce, std::regex("script-src 'nonce-([0-9a-f]{32})'"))) << policy;
  EXPECT_NE(policy.find("default-src 'none'"), std::string::npos);
  EXPECT_NE(policy.find("connect-src 'self'"), std::string::npos);
  EXPECT_NE(page->body.find("<script nonce=\"" + nonce[1].str() + "\">"), std::string::npos);
  EXPECT_NE(page->body.find("<style nonce=\"" + nonce[1].str() + "\">"), std::string::npos);
  EXPECT_EQ(page->body.find("src=\"http"), std::string::npos) << "the page loads nothing from elsewhere";
  EXPECT_EQ(page->body.find("href=\"http"), std::string::npos);
  // A fresh nonce per response.
  const auto again = client.Get("/");
  ASSERT_TRUE(again);
  EXPECT_NE(again->get_header_value("Content-Security-Policy"), policy);
}

// A ContinuousProfiler over the served profiler: its windows and events are in every frame and
// on /metrics while it runs (the live server asks it; the profiler's own snapshots do not carry
// them), and no longer once it stopped.
TEST(LiveServer, ShowsTheWindowsOfAContinuousRunOverItsProfiler) {
  ProfilerOptions po;
  po.record_spans = false;
  Profiler profiler(po);
  std::uint64_t now = 1'000'000'000;
  ContinuousOptions o;
  o.interval = std::chrono::seconds(60);
  o.metrics = {};
  o.clock = [&now] { return now; };
  o.background = false;
  o.step_scope = "step";
  ContinuousProfiler continuous(profiler, o);
  continuous.start();
  LiveServerOptions so = test_server_options();
  so.update_interval = std::chrono::milliseconds(50);
  LiveServer server(profiler, so);
  for (int i = 0; i < 4; ++i) {
    NNPROF_SCOPE_IN(profiler, "step");
  }
  now += 61'000'000'000ull;  // the interval has passed; the next step end closes the window
  { NNPROF_SCOPE_IN(profiler, "step"); }
  ASSERT_TRUE(continuous.poll());
  auto client = testing::client_of(server);
  std::string body;
  for (int attempt = 0; attempt < 200 && body.find("nnprof_continuous_windows 1\n") == std::string::npos; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(60));
    const auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    body = metrics->body;
  }
  EXPECT_NE(body.find("nnprof_continuous_windows 1\n"), std::string::npos) << body;
  expect_valid_exposition(body);
  const auto anomalies = client.Get("/api/v1/anomalies");
  ASSERT_TRUE(anomalies);
  EXPECT_EQ(nlohmann::json::parse(anomalies->body)["enabled"], true);
  (void)continuous.stop();
  // Gone from the next snapshot: at most an update interval later, or as long as the server's
  // CPU budget holds the last one (100 times what it cost: longer under a sanitizer).
  for (int attempt = 0; attempt < 200 && body.find("nnprof_continuous_windows") != std::string::npos; ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const auto after = client.Get("/metrics");
    ASSERT_TRUE(after);
    body = after->body;
  }
  EXPECT_EQ(body.find("nnprof_continuous_windows"), std::string::npos);
}

TEST(LiveServer, NamesCannotBreakOutOfThePage) {
  Profile p = testing::heap_profile();
  p.strings[testing::kHeapStep] = "</script><script>alert(1)</script><!--";
  LiveServer server(p, test_server_options());
  auto client = testing::client_of(server);
  const auto page = client.Get("/");
  ASSERT_TRUE(page);
  std::size_t closes = 0;
  for (std::size_t at = page->body.find("</script>"); at != std::string::npos; at = page->body.find("</script>", at + 1)) ++closes;
  EXPECT_EQ(closes, 2u) << "the data block and the script close, nothing else";
  EXPECT_EQ(page->body.find("<!--"), std::string::npos);
  EXPECT_NE(page->body.find("\\u003c/script>\\u003cscript>alert(1)"), std::string::npos);
}

TEST(LiveServer, APortInUseIsAClearError) {
  Profiler profiler;
  LiveServer first(profiler, test_server_options());
  LiveServerOptions same = test_server_options();
  same.port = first.port();
  try {
    LiveServer second(profiler, same);
    ADD_FAILURE() << "a second server bound the same port";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("port " + std::to_string(first.port())), std::string::npos) << message;
    EXPECT_NE(message.find("in use"), std::string::npos) << message;
    EXPECT_NE(message.find("another port"), std::string::npos) << message;
  }
}

TEST(LiveServer, ProfilerOptionsServeStartsAServer) {
  const std::uint16_t port = testing::free_port();
  ProfilerOptions options;
  options.serve = "127.0.0.1:" + std::to_string(port);
  {
    Profiler profiler(options);
    profiler.start("served_scope");
    profiler.stop("served_scope");
    httplib::Client client("127.0.0.1", port);
    const auto metrics = client.Get("/metrics");
    ASSERT_TRUE(metrics);
    EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"served_scope\"} 1\n"), std::string::npos);
  }
  // The profiler's end stopped its server.
  httplib::Client client("127.0.0.1", port);
  client.set_connection_timeout(1, 0);
  EXPECT_FALSE(client.Get("/metrics"));
  options.serve = "not-a-port";
  EXPECT_THROW(Profiler bad(options), Error);
}

TEST(LiveServer, APublicAddressNeedsAToken) {
  Profiler profiler;
  unsetenv("NNPROF_TOKEN");
  LiveServerOptions open = test_server_options();
  open.address = "0.0.0.0";
  try {
    LiveServer refused(profiler, open);
    ADD_FAILURE() << "0.0.0.0 was bound without a token";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("refusing to serve the profile on 0.0.0.0 without a token"), std::string::npos)
        << e.what();
  }

  LiveServerOptions guarded = open;
  guarded.token = "a-test-token-of-some-length";
  LiveServer server(profiler, guarded);
  EXPECT_EQ(server.token(), guarded.token);
  EXPECT_NE(server.url().find("?token=a-test-token-of-some-length"), std::string::npos);
  auto client = testing::client_of(server);
  for (const char* path : {"/", "/metrics", "/events", "/api/v1/live", "/debug/pprof/heap", "/nowhere"}) {
    const auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 401) << path;
    EXPECT_EQ(res->get_header_value("WWW-Authenticate"), "Bearer realm=\"nnprof\"");
  }
  const auto wrong = client.Get("/metrics", httplib::Headers{{"Authorization", "Bearer a-test-token-of-some-lengtH"}});
  ASSERT_TRUE(wrong);
  EXPECT_EQ(wrong->status, 401);
  const auto by_header = client.Get("/metrics", httplib::Headers{{"Authorization", "Bearer a-test-token-of-some-length"}});
  ASSERT_TRUE(by_header);
  EXPECT_EQ(by_header->status, 200);
  const auto by_query = client.Get("/api/v1/live?token=a-test-token-of-some-length");
  ASSERT_TRUE(by_query);
  EXPECT_EQ(by_query->status, 200);
}

// ---- event streams ------------------------------------------------------------------------------

// `n` raw connections reading /events: the time until each has received `frames` frames.
struct StreamResult {
  std::size_t complete = 0;
  std::vector<std::string> first_bytes;
};

StreamResult read_streams(std::uint16_t port, std::size_t n, std::size_t frames, std::chrono::seconds limit,
                          std::atomic<bool>* all_open = nullptr) {
  std::vector<int> fds;
  for (std::size_t i = 0; i < n; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd);
      continue;
    }
    const std::string request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n";
    (void)::write(fd, request.data(), request.size());
    fds.push_back(fd);
  }
  if (all_open != nullptr) all_open->store(true);
  std::vector<std::string> received(fds.size());
  std::vector<std::size_t> counted(fds.size(), 0);
  StreamResult result;
  const auto deadline = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < deadline && result.complete < fds.size()) {
    std::vector<pollfd> polls;
    for (const int fd : fds) polls.push_back(pollfd{fd, POLLIN, 0});
    if (::poll(polls.data(), polls.size(), 100) <= 0) continue;
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if ((polls[i].revents & POLLIN) == 0) continue;
      char buffer[65536];
      const ssize_t got = ::read(fds[i], buffer, sizeof buffer);
      if (got <= 0) continue;
      received[i].append(buffer, static_cast<std::size_t>(got));
      const bool was_complete = counted[i] >= frames;
      std::size_t count = 0;
      for (std::size_t at = received[i].find("event: frame"); at != std::string::npos; at = received[i].find("event: frame", at + 1)) ++count;
      counted[i] = count;
      if (!was_complete && count >= frames) ++result.complete;
      if (received[i].size() > (1u << 20)) received[i].erase(0, received[i].size() - 4096);
    }
  }
  for (std::size_t i = 0; i < fds.size(); ++i) {
    result.first_bytes.push_back(received[i].substr(0, 200));
    ::close(fds[i]);
  }
  return result;
}

TEST(LiveServer, FiftyLivePagesGetFramesAndMetricsStillAnswersFast) {
  Profiler profiler;
  RunningProgram program(profiler);
  LiveServer server(profiler, test_server_options());
  std::atomic<bool> all_open{false};
  StreamResult streams;
  std::thread readers([&] { streams = read_streams(server.port(), 50, 3, std::chrono::seconds(30), &all_open); });
  while (!all_open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  // While 50 pages stream, /metrics is answered (the request pool grows past the streams).
  auto client = testing::client_of(server);
  std::vector<double> ms;
  for (int i = 0; i < 60; ++i) {
    const auto start = std::chrono::steady_clock::now();
    const auto res = client.Get("/metrics");
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  readers.join();
  std::sort(ms.begin(), ms.end());
  std::cout << "[ live ] /metrics with 50 live pages: p50 " << ms[ms.size() / 2] << " ms, p99 "
            << ms[ms.size() * 99 / 100] << " ms, max " << ms.back() << " ms\n";
  EXPECT_LT(ms[ms.size() * 99 / 100], 2000.0) << "not a timing bound: a server that stopped answering";
  EXPECT_EQ(streams.complete, 50u) << (streams.first_bytes.empty() ? "" : streams.first_bytes.front());
  for (const std::string& head : streams.first_bytes) {
    EXPECT_NE(head.find("HTTP/1.1 200"), std::string::npos) << head;
    EXPECT_NE(head.find("text/event-stream"), std::string::npos) << head;
  }
  // The pages went away: the server noticed at its next write.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (server.live_clients() != 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(server.live_clients(), 0u);
}

TEST(LiveServer, MoreStreamsThanTheLimitAre503) {
  Profiler profiler;
  LiveServerOptions o = test_server_options();
  o.max_live_clients = 2;
  LiveServer server(profiler, o);
  std::atomic<bool> open{false};
  std::thread readers([&] { (void)read_streams(server.port(), 2, 1000, std::chrono::seconds(3), &open); });
  while (!open.load()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (server.live_clients() < 2 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  auto client = testing::client_of(server);
  const auto third = client.Get("/events");
  ASSERT_TRUE(third);
  EXPECT_EQ(third->status, 503);
  readers.join();
}

// ---- pprof ------------------------------------------------------------------------------------------

[[gnu::noinline]] void live_test_hot_spin(std::atomic<bool>& stop) {
  volatile std::uint64_t x = 0;
  while (!stop.load(std::memory_order_relaxed))
    for (int i = 0; i < 10000; ++i) x = x + static_cast<std::uint64_t>(i);
}

std::int64_t samples_of_function(const pb::Profile& message, std::string_view needle) {
  std::set<std::uint64_t> functions;
  for (const pb::Function& f : message.function())
    if (message.string_table(static_cast<int>(f.name())).find(needle) != std::string::npos) functions.insert(f.id());
  std::set<std::uint64_t> locations;
  for (const pb::Location& l : message.location())
    for (const pb::Line& line : l.line())
      if (functions.count(line.function_id()) != 0) locations.insert(l.id());
  std::int64_t samples = 0;
  for (const pb::Sample& s : message.sample())
    for (const std::uint64_t id : s.location_id())
      if (locations.count(id) != 0) {
        samples += s.value(0);
        break;
      }
  return samples;
}

TEST(LiveServer, PprofProfileOfTheNextSecondsHasTheHotFunction) {
  Profiler profiler;
  LiveServer server(profiler, test_server_options());
  std::atomic<bool> stop{false};
  std::thread hot([&] { live_test_hot_spin(stop); });
  auto client = testing::client_of(server);
  const auto res = client.Get("/debug/pprof/profile?seconds=2");
  stop.store(true);
  hot.join();
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  ASSERT_GE(res->body.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(res->body[0]), 0x1f) << "gzip, as Go serves it";
  pb::Profile message;
  io::decode_pprof(res->body, message);
  ASSERT_GE(message.sample_type_size(), 2);
  EXPECT_EQ(message.string_table(static_cast<int>(message.sample_type(1).type())), "cpu");
  EXPECT_EQ(message.string_table(static_cast<int>(message.sample_type(1).unit())), "nanoseconds");
  const std::int64_t hot_samples = samples_of_function(message, "live_test_hot_spin");
  std::cout << "[ live ] pprof: " << message.sample_size() << " distinct samples, " << hot_samples
            << " in live_test_hot_spin\n";
#if defined(NNPROF_SANITIZE_THREAD)
  // ThreadSanitizer runs signal handlers at its own safe points, with the stack of that point:
  // samples are taken, but their stacks say little about the program.
  EXPECT_GT(message.sample_size(), 0);
  (void)hot_samples;
#else
  EXPECT_GT(hot_samples, 20) << "2 s of a busy thread at 100 Hz";
#endif

  const auto bad = client.Get("/debug/pprof/profile?seconds=abc");
  ASSERT_TRUE(bad);
  EXPECT_EQ(bad->status, 400);
}

TEST(LiveServer, PprofHeapOfASavedProfileInGoConvention) {
  const Profile p = testing::heap_profile();
  LiveServer server(p, test_server_options());
  auto client = testing::client_of(server);
  const auto res = client.Get("/debug/pprof/heap");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  pb::Profile message;
  io::decode_pprof(res->body, message);
  std::vector<std::string> types;
  for (const pb::ValueType& t : message.sample_type())
    types.push_back(message.string_table(static_cast<int>(t.type())) + "/" + message.string_table(static_cast<int>(t.unit())));
  EXPECT_EQ(types, (std::vector<std::string>{"alloc_objects/count", "alloc_space/bytes", "inuse_objects/count", "inuse_space/bytes"}));
  EXPECT_EQ(message.string_table(static_cast<int>(message.default_sample_type())), "inuse_space");
  std::int64_t inuse = 0, blocks = 0;
  for (const pb::Sample& s : message.sample()) {
    inuse += s.value(3);
    blocks += s.value(2);
  }
  std::uint64_t want_bytes = 0, want_blocks = 0;
  for (const LeakSite& site : p.leaks) {
    want_bytes += site.bytes;
    want_blocks += site.blocks;
  }
  EXPECT_EQ(static_cast<std::uint64_t>(inuse), want_bytes);
  EXPECT_EQ(static_cast<std::uint64_t>(blocks), want_blocks);
  EXPECT_EQ(message.sample_size(), static_cast<int>(p.leaks.size()));

  // A saved profile has no process: no process_* metrics, the same scopes.
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_EQ(metrics->body.find("process_cpu_seconds_total"), std::string::npos);
  EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"matmul\"} 40\n"), std::string::npos);
}

TEST(LiveServer, HeapOfAProcessWithoutTrackingSaysSo) {
  Profiler profiler;
  LiveServer server(profiler, test_server_options());
  auto client = testing::client_of(server);
  const auto res = client.Get("/debug/pprof/heap");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_NE(res->body.find("heap tracking is off"), std::string::npos);
}

// ---- fork ---------------------------------------------------------------------------------------------

TEST(LiveServer, AForkedChildNeitherServesNorJoinsTheParentsThreads) {
  Profiler profiler;
  auto server = std::make_unique<LiveServer>(profiler, test_server_options());
  const std::uint16_t port = server->port();
  const pid_t child = fork();
  if (child == 0) {
    alarm(10);  // a child that hangs on the parent's threads fails the test by its signal
    server.reset();
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the child hung or crashed: status " << status;
  httplib::Client client("127.0.0.1", port);
  const auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << "the parent stopped serving after the fork";
  EXPECT_EQ(res->status, 200);
}

// ---- the seed's InteractiveProfiler ------------------------------------------------------------------

TEST(InteractiveProfiler, ServesWhatRecordRuns) {
  auto profiler = InteractiveProfilerBuilder().web_interface(0).real_time_updates(true).sample_rate(0).build();
  profiler.serve();
  ASSERT_NE(profiler.server(), nullptr);
  const int result = profiler.record([&] {
    NNPROF_SCOPE_IN(profiler.profiler(), "train_model");
    return 7;
  });
  EXPECT_EQ(result, 7);
  httplib::Client client("127.0.0.1", profiler.server()->port());
  const auto metrics = client.Get("/metrics");
  ASSERT_TRUE(metrics);
  EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"train_model\"} 1\n"), std::string::npos);
  EXPECT_NE(metrics->body.find("nnprof_scope_calls_total{scope=\"record\"} 1\n"), std::string::npos);
  EXPECT_THROW((void)InteractiveProfilerBuilder().update_interval(std::chrono::milliseconds(5000)).build(), Error);
}

}  // namespace
}  // namespace nnprof
