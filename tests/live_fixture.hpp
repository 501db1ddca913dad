// What the live server's tests share: a program that keeps recording while they look at it,
// and small HTTP helpers over cpp-httplib's client.
#pragma once

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <thread>

#include "nnprof/live_server.hpp"
#include "nnprof/metrics.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace nnprof::testing {

/// A program at work: a thread that runs "live_step" > "live_work" scopes (about 2 ms each,
/// 10 items per step) until destroyed, and sets the gauge "live_gauge" to 42. Before it
/// starts, "fixed_scope" has closed exactly kFixedCalls times.
class RunningProgram {
 public:
  static constexpr std::uint64_t kFixedCalls = 100;

  explicit RunningProgram(Profiler& profiler) : profiler_(profiler) {
    for (std::uint64_t i = 0; i < kFixedCalls; ++i) {
      profiler_.start("fixed_scope");
      profiler_.stop("fixed_scope");
    }
    profiler_.metrics().set("live_gauge", 42.0);
    worker_ = std::thread([this] {
      while (!stop_.load()) {
        profiler_.start("live_step");
        profiler_.start("live_work");
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
        volatile double x = 1.0;
        while (std::chrono::steady_clock::now() < until) x = x * 1.0000001 + 1e-9;
        profiler_.stop("live_work");
        profiler_.add_items("live_step", 10);
        profiler_.stop("live_step");
        steps_.fetch_add(1);
      }
    });
  }
  ~RunningProgram() {
    stop_.store(true);
    worker_.join();
  }
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;
  [[nodiscard]] std::uint64_t steps() const { return steps_.load(); }

 private:
  Profiler& profiler_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> steps_{0};
  std::thread worker_;
};

/// Options for a test server: any free port, frames every 200 ms, quiet.
inline LiveServerOptions test_server_options() {
  LiveServerOptions o;
  o.port = 0;
  o.update_interval = std::chrono::milliseconds(200);
  o.announce = false;
  return o;
}

inline httplib::Client client_of(const LiveServer& server) {
  httplib::Client client("127.0.0.1", server.port());
  client.set_connection_timeout(5, 0);
  client.set_read_timeout(60, 0);
  return client;
}

/// A TCP port nothing listens on now (bound, read back, released).
inline std::uint16_t free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
  socklen_t len = sizeof a;
  ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  ::close(fd);
  return ntohs(a.sin_port);
}

}  // namespace nnprof::testing
