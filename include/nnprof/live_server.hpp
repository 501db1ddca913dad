// A live view of a running program over HTTP, served from inside the profiled process:
//
//   nnprof::Profiler profiler;
//   nnprof::LiveServer server(profiler);          // http://127.0.0.1:8080/
//   train();                                      // the page updates while it runs
//
// or ProfilerOptions::serve = "8080", NNPROF_SERVE=8080 (the global profiler), or
// `nnprof record --serve 8080 -- ./train`; `nnprof serve run.nnprof` serves a saved profile.
//
// Endpoints (docs/LIVE.md):
//   /                                  the live page: hot paths, call tree, memory, system and
//                                      metric charts, the flame graph of the last window,
//                                      bottlenecks, anomalies; updated by server-sent events
//   /events                            the server-sent events the page reads (one frame per tick)
//   /metrics                           Prometheus text exposition (process_* and nnprof_*)
//   /debug/pprof/profile?seconds=N     CPU profile of the next N seconds, gzipped pprof
//   /debug/pprof/heap                  live heap blocks by allocation site, gzipped pprof
//   /api/v1/live, /api/v1/scopes, /api/v1/metrics, /api/v1/anomalies   the data as JSON
//
// The server binds 127.0.0.1 by default. Binding any other address needs a token (given, from
// NNPROF_TOKEN, or generated and printed); every request must then carry it, as
// "Authorization: Bearer <token>" or "?token=<token>", or gets 401.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

struct LiveServerOptions {
  /// Address to bind. Anything but a loopback address (127.0.0.0/8, ::1, localhost) requires
  /// a token.
  std::string address = "127.0.0.1";
  /// TCP port; 0 picks a free one (LiveServer::port() says which).
  std::uint16_t port = 8080;
  /// Bearer token every request must carry (16 or more of A-Z a-z 0-9 - . _ ~). Empty:
  /// NNPROF_TOKEN; without either, a loopback server accepts every local request and any
  /// other address is refused unless `generate_token` is set.
  std::string token;
  /// For a non-loopback address without a token: make one (32 hex digits from /dev/urandom)
  /// and print it at start, instead of refusing to bind. `nnprof record --serve` sets it.
  bool generate_token = false;
  /// How often the live page gets a new frame: 50 ms to 1 s. The page is never more than this
  /// behind the program (plus the time to take the snapshot).
  std::chrono::milliseconds update_interval{1000};
  /// Whether the page streams frames (server-sent events). false: it shows the state when it
  /// was opened and reloads on demand.
  bool real_time_updates = true;
  /// The flame graph and hot functions of the page cover this last stretch of time.
  std::chrono::seconds window{10};
  /// Open /events streams at most; more are answered 503 so that the server keeps answering.
  std::size_t max_live_clients = 64;
  /// Print the URL (and a generated token) to standard error when the server starts.
  bool announce = true;
};

/// Reads "[ADDR:]PORT" ("8080", "0.0.0.0:9000", "[::1]:8080") into `base`'s address and port.
/// Throws nnprof::Error naming what is wrong.
[[nodiscard]] NNPROF_API LiveServerOptions parse_serve_address(std::string_view spec, LiveServerOptions base = {});

/// An HTTP server with the endpoints above, until destroyed. Threads: one that accepts, a
/// small pool for requests, one broadcaster that takes a snapshot per tick while a page is
/// open and hands the same frame to every open page. A forked child does not serve and never
/// touches the parent's threads.
class NNPROF_API LiveServer {
 public:
  /// Serves `profiler` while it records; it must outlive the server. Throws nnprof::Error
  /// when the port is taken, the address cannot be bound, or a non-loopback address has no
  /// token.
  explicit LiveServer(Profiler& profiler, LiveServerOptions options = {});
  /// Serves a saved profile (nnprof serve FILE): the same page and endpoints, fixed data.
  explicit LiveServer(Profile profile, LiveServerOptions options = {});
  ~LiveServer();
  LiveServer(const LiveServer&) = delete;
  LiveServer& operator=(const LiveServer&) = delete;

  /// The port bound (the one chosen when the options said 0).
  [[nodiscard]] std::uint16_t port() const noexcept;
  [[nodiscard]] const std::string& address() const noexcept;
  /// "http://127.0.0.1:8080/", with "?token=..." when a token is required.
  [[nodiscard]] std::string url() const;
  /// The token requests must carry; empty when none is required.
  [[nodiscard]] const std::string& token() const noexcept;
  /// /events streams open now.
  [[nodiscard]] std::size_t live_clients() const noexcept;
  /// Blocks until stop() is called from another thread (or the server failed).
  void wait();
  /// Stops serving: open streams end, the threads are joined. Idempotent.
  void stop() noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

class InteractiveProfiler;

/// The seed's InteractiveProfiler: a profiler with its live page.
///
///   auto profiler = nnprof::InteractiveProfilerBuilder().web_interface(8080).real_time_updates(true).build();
///   profiler.serve();
///   profiler.record([] { train_model(); });
class NNPROF_API InteractiveProfilerBuilder {
 public:
  /// The port of the live page (8080 by default; 0: any free port).
  InteractiveProfilerBuilder& web_interface(std::uint16_t port) noexcept;
  /// Address to bind (127.0.0.1 by default; any other requires a token).
  InteractiveProfilerBuilder& address(std::string address);
  InteractiveProfilerBuilder& token(std::string token);
  /// Stream frames to the page (true by default) or show the state at each load.
  InteractiveProfilerBuilder& real_time_updates(bool on) noexcept;
  /// 50 ms to 1 s.
  InteractiveProfilerBuilder& update_interval(std::chrono::milliseconds interval) noexcept;
  /// CPU samples per second while record() runs (199 by default; 0: no sampling).
  InteractiveProfilerBuilder& sample_rate(double hz) noexcept;
  /// Throws nnprof::Error for an interval or rate out of range.
  [[nodiscard]] InteractiveProfiler build() const;

 private:
  friend class InteractiveProfiler;
  LiveServerOptions server_;
  double sample_hz_ = 199.0;
};

class NNPROF_API InteractiveProfiler {
 public:
  ~InteractiveProfiler();
  InteractiveProfiler(InteractiveProfiler&&) noexcept;
  InteractiveProfiler& operator=(InteractiveProfiler&&) noexcept;

  /// Starts the server (idempotent). Throws nnprof::Error when the port is taken.
  void serve();
  /// Runs `work` with CPU sampling on, inside a scope "record", and returns what it returns;
  /// the page shows it live when serve() was called.
  template <typename Work>
  decltype(auto) record(Work&& work) {
    Recording recording(*this);
    return std::forward<Work>(work)();
  }
  /// The profiler that records (for NNPROF_SCOPE_IN and scopes of your own).
  [[nodiscard]] Profiler& profiler() noexcept;
  /// The server, once serve() was called; nullptr before.
  [[nodiscard]] LiveServer* server() noexcept;
  /// Everything recorded so far.
  [[nodiscard]] Profile snapshot() const;

 private:
  friend class InteractiveProfilerBuilder;
  explicit InteractiveProfiler(const InteractiveProfilerBuilder& settings);
  void begin_recording();
  void end_recording() noexcept;
  class Recording {
   public:
    explicit Recording(InteractiveProfiler& owner) : owner_(owner) { owner_.begin_recording(); }
    ~Recording() { owner_.end_recording(); }
    Recording(const Recording&) = delete;
    Recording& operator=(const Recording&) = delete;

   private:
    InteractiveProfiler& owner_;
  };
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nnprof
