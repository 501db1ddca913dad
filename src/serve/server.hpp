// The HTTP server behind nnprof::LiveServer (cpp-httplib): routes, the token check, the
// snapshot and frame caches, the broadcaster thread that feeds every /events stream, and the
// pool that runs requests. It knows the profiler only through its public API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "nnprof/live_server.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof::serve {

/// What the server serves: a running profiler, or a fixed profile.
struct ServerSource {
  Profiler* profiler = nullptr;
  std::shared_ptr<const Profile> fixed;
  /// Whether a CPU sampler runs in the process now (the api layer asks the collector): the
  /// pprof endpoint starts one of its own for the requested seconds only when none does.
  std::function<bool()> sampler_running;
  /// The windows, anomalies and trends of a continuous run over `profiler` so far (the api
  /// layer asks the ContinuousProfiler), put into each snapshot's Profile::continuous.
  std::function<std::optional<ContinuousProfile>()> continuous;
};

class Server {
 public:
  /// Binds and starts serving. Throws nnprof::Error (port taken, address not local, no token).
  Server(ServerSource source, const LiveServerOptions& options);
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] const std::string& address() const noexcept;
  [[nodiscard]] const std::string& token() const noexcept;
  [[nodiscard]] std::size_t live_clients() const noexcept;
  void wait();
  void stop() noexcept;

 private:
  struct State;
  State* state_;  // owned, except in a forked child, which lets it go untouched
};

/// A readable reason why `address`:`port` cannot be bound (in use, not this machine's address,
/// privileged), or nothing when a test bind succeeds.
[[nodiscard]] std::optional<std::string> bind_problem(const std::string& address, std::uint16_t port);

}  // namespace nnprof::serve
