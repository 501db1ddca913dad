#include "serve/server.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <iostream>
#include <list>
#include <mutex>
#include <thread>
#include <vector>

#include <fmt/format.h>

#include "io/pprof_export.hpp"
#include "io/proto/profile.pb.h"
#include "record/internal_allocations.hpp"
#include "serve/access.hpp"
#include "serve/live_data.hpp"
#include "serve/live_page.hpp"
#include "serve/prometheus.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/error.hpp"

namespace nnprof::serve {

using Clock = std::chrono::steady_clock;

namespace {

// ---- fork safety ------------------------------------------------------------------------------
// A forked child inherits the listening sockets but none of the threads. It must not keep the
// port open (the parent's successor could not bind it) nor touch the parent's threads: the
// child handler closes every listening socket, and Server's destructor, seeing another pid,
// lets its state go untouched.
constexpr std::size_t kMaxListeners = 16;
// fd + 1 of each listening socket; 0: a free slot (zero-initialised, so usable before main).
std::array<std::atomic<int>, kMaxListeners> g_listeners{};
std::once_flag g_atfork_once;

void close_listeners_in_child() {
  for (auto& slot : g_listeners) {
    const int f = slot.exchange(0);
    if (f > 0) ::close(f - 1);
  }
}

void register_listener(int fd) {
  std::call_once(g_atfork_once, [] { pthread_atfork(nullptr, nullptr, close_listeners_in_child); });
  for (auto& slot : g_listeners) {
    int expected = 0;
    if (slot.compare_exchange_strong(expected, fd + 1)) return;
  }
}

void unregister_listener(int fd) {
  for (auto& slot : g_listeners) {
    int expected = fd + 1;
    if (slot.compare_exchange_strong(expected, 0)) return;
  }
}

// ---- the request pool ----------------------------------------------------------------------------
// cpp-httplib runs each connection (every keep-alive request, and a streaming response for as
// long as it streams) on one task of its queue. Its own pool has a fixed number of threads
// (8 here), so eight open live pages or idle keep-alive scrapers would leave /metrics
// unanswered. This pool keeps `core` threads and adds one whenever a task arrives with no
// thread idle, up to `limit`; a stream's thread sleeps on its client's queue, fed by the one
// broadcaster, and costs no CPU between frames.
class ElasticPool final : public httplib::TaskQueue {
 public:
  ElasticPool(std::size_t core, std::size_t limit) : limit_(limit) {
    std::lock_guard lock(mu_);
    for (std::size_t i = 0; i < core; ++i) spawn_locked();
  }
  ~ElasticPool() override = default;

  void enqueue(std::function<void()> fn) override {
    {
      std::lock_guard lock(mu_);
      jobs_.push_back(std::move(fn));
      if (idle_ < jobs_.size() && threads_.size() < limit_) spawn_locked();
    }
    cv_.notify_one();
  }

  void shutdown() override {
    {
      std::lock_guard lock(mu_);
      shutdown_ = true;
    }
    cv_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

 private:
  void spawn_locked() {
    threads_.emplace_back([this] {
      pthread_setname_np(pthread_self(), "nnprof-http");
      detail::InternalAllocations internal;  // the server's allocations are nnprof's, not the program's
      for (;;) {
        std::function<void()> fn;
        {
          std::unique_lock lock(mu_);
          ++idle_;
          cv_.wait(lock, [this] { return !jobs_.empty() || shutdown_; });
          --idle_;
          if (jobs_.empty()) return;  // shutting down with nothing left
          fn = std::move(jobs_.front());
          jobs_.pop_front();
        }
        fn();
      }
    });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  std::vector<std::thread> threads_;
  std::size_t idle_ = 0;
  std::size_t limit_;
  bool shutdown_ = false;
};

// One open /events stream: the frames the broadcaster queued for it.
struct Client {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::shared_ptr<const std::string>> frames;
  bool closed = false;
};

std::string sse_frame(const std::string& json) { return "event: frame\ndata: " + json + "\n\n"; }

// A pprof message with the CPU sample types and no sample: what an idle window is.
std::string empty_cpu_profile(const Profile& profile) {
  perftools::profiles::Profile message;
  message.add_string_table("");
  message.add_string_table("samples");
  message.add_string_table("count");
  message.add_string_table("cpu");
  message.add_string_table("nanoseconds");
  auto* samples = message.add_sample_type();
  samples->set_type(1);
  samples->set_unit(2);
  auto* cpu = message.add_sample_type();
  cpu->set_type(3);
  cpu->set_unit(4);
  message.mutable_period_type()->set_type(3);
  message.mutable_period_type()->set_unit(4);
  message.set_period(static_cast<std::int64_t>(profile.cpu.period_ns));
  message.set_default_sample_type(3);
  std::string bytes;
  message.SerializeToString(&bytes);
  return bytes;
}

}  // namespace

std::optional<std::string> bind_problem(const std::string& address, std::uint16_t port) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE;
  addrinfo* found = nullptr;
  std::string host = address;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  const std::string service = std::to_string(port);
  if (const int rc = getaddrinfo(host.c_str(), service.c_str(), &hints, &found); rc != 0)
    return fmt::format("cannot resolve the address '{}': {}", address, gai_strerror(rc));
  std::optional<std::string> problem;
  const int fd = ::socket(found->ai_family, found->ai_socktype | SOCK_CLOEXEC, found->ai_protocol);
  if (fd < 0) {
    problem = fmt::format("cannot open a socket: {}", std::strerror(errno));
  } else {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (::bind(fd, found->ai_addr, found->ai_addrlen) != 0 || ::listen(fd, 1) != 0) {
      const int e = errno;
      if (e == EADDRINUSE)
        problem = fmt::format("port {} on {} is in use (by another program, or another nnprof live server): choose "
                              "another port ([ADDR:]PORT, LiveServerOptions::port), or 0 for any free port",
                              port, address);
      else if (e == EADDRNOTAVAIL)
        problem = fmt::format("{} is not an address of this machine: bind 127.0.0.1, 0.0.0.0 or one of its "
                              "interfaces' addresses",
                              address);
      else if (e == EACCES)
        problem = fmt::format("port {} needs privileges (ports below 1024 do): choose one above 1023", port);
      else
        problem = fmt::format("cannot listen on {}:{}: {}", address, port, std::strerror(e));
    }
    ::close(fd);
  }
  freeaddrinfo(found);
  return problem;
}

struct Server::State {
  ServerSource source;
  LiveServerOptions options;
  std::string token;
  pid_t owner_pid = getpid();
  int listen_fd = -1;
  std::uint16_t port = 0;
  httplib::Server http;
  std::thread listener;
  std::thread broadcaster;

  std::mutex stop_mu;
  std::condition_variable stop_cv;
  bool stopping = false;
  bool stopped = false;
  bool wake = false;  // a page opened: send it a frame now

  std::mutex snapshot_mu;  // held while a snapshot is taken, so that concurrent requests share it
  std::shared_ptr<const Profile> snapshot;
  Clock::time_point snapshot_at{};
  std::mutex frame_mu;
  std::shared_ptr<const std::string> frame;  // the JSON of the last frame
  std::shared_ptr<const Profile> frame_of;   // the snapshot it was built from
  Clock::time_point frame_at{};

  mutable std::mutex clients_mu;
  std::list<std::shared_ptr<Client>> clients;
  bool clients_closed = false;  // stopping: no new stream
  std::atomic<std::uint64_t> frames_sent{0};
  std::atomic<std::uint64_t> snapshots_taken{0};
  std::atomic<std::uint64_t> snapshot_ns{0};
  std::mutex cpu_profile_mu;  // one temporary sampler at a time

  ServerStats stats() const {
    ServerStats s;
    {
      std::lock_guard lock(clients_mu);
      s.live_clients = clients.size();
    }
    s.frames_sent = frames_sent.load();
    s.snapshots_taken = snapshots_taken.load();
    s.snapshot_seconds_total = static_cast<double>(snapshot_ns.load()) * 1e-9;
    return s;
  }

  // Serving may take this share of one core at most: after work that cost C of CPU time, no
  // new snapshot is taken for C / kServingShare (the last one is served meanwhile). A snapshot
  // costs ~1 ms in steady state, so this only slows the page down when a snapshot is dear
  // (the first symbolization of new code, a leak check over a large heap).
  static constexpr double kServingShare = 0.01;
  std::atomic<std::int64_t> refresh_after_ns{0};  // Clock ns since its epoch

  static std::int64_t thread_cpu_ns() noexcept {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  }
  static std::int64_t clock_ns(Clock::time_point t) noexcept {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
  }
  // Charges `cpu_ns` of serving work to the budget.
  void charge(std::int64_t cpu_ns) noexcept {
    const std::int64_t until = clock_ns(Clock::now()) + static_cast<std::int64_t>(static_cast<double>(cpu_ns) / kServingShare);
    std::int64_t previous = refresh_after_ns.load(std::memory_order_relaxed);
    while (previous < until && !refresh_after_ns.compare_exchange_weak(previous, until, std::memory_order_relaxed)) {
    }
  }
  [[nodiscard]] bool within_budget(Clock::time_point now) const noexcept {
    return clock_ns(now) >= refresh_after_ns.load(std::memory_order_relaxed);
  }

  // The profile at most `max_age` old (or older while the budget says wait), taken now if the
  // last is older; `force`: now whatever the budget (a pprof window must end when asked).
  std::shared_ptr<const Profile> latest(Clock::duration max_age, bool force = false) {
    if (source.fixed) return source.fixed;
    std::lock_guard lock(snapshot_mu);
    const Clock::time_point now = Clock::now();
    if (snapshot && (now - snapshot_at <= max_age || (!force && !within_budget(now)))) return snapshot;
    const Clock::time_point start = Clock::now();
    const std::int64_t cpu_start = thread_cpu_ns();
    Profile taken = source.profiler->statistics_snapshot();
    if (source.continuous)
      if (std::optional<ContinuousProfile> continuous = source.continuous()) taken.continuous = std::move(*continuous);
    snapshot = std::make_shared<const Profile>(std::move(taken));
    snapshot_at = Clock::now();
    charge(thread_cpu_ns() - cpu_start);
    snapshots_taken.fetch_add(1, std::memory_order_relaxed);
    snapshot_ns.fetch_add(static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(snapshot_at - start).count()),
                          std::memory_order_relaxed);
    return snapshot;
  }

  std::shared_ptr<const std::string> current_frame(Clock::duration max_age) {
    std::lock_guard lock(frame_mu);
    const Clock::time_point now = Clock::now();
    if (frame && now - frame_at <= max_age) return frame;
    const std::shared_ptr<const Profile> profile = latest(max_age);
    if (frame && frame_of == profile) return frame;  // the budget kept the snapshot: so is the frame
    const std::int64_t cpu_start = thread_cpu_ns();
    LiveFrameOptions o;
    o.window_ns = static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(options.window).count());
    frame = std::make_shared<const std::string>(live_frame(*profile, o, stats()).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    frame_of = profile;
    frame_at = Clock::now();
    if (!source.fixed) charge(thread_cpu_ns() - cpu_start);
    return frame;
  }

  Clock::duration interval() const { return options.update_interval; }

  void broadcast() {
    pthread_setname_np(pthread_self(), "nnprof-live");
    detail::InternalAllocations internal;
    std::shared_ptr<const std::string> last_sent;
    std::unique_lock lock(stop_mu);
    while (!stopping) {
      stop_cv.wait_for(lock, interval(), [this] { return stopping || wake; });
      if (stopping) break;
      wake = false;
      lock.unlock();
      bool any = false;
      {
        std::lock_guard clients_lock(clients_mu);
        any = !clients.empty();
      }
      // Nobody watches: no snapshot is taken, so an idle server costs nothing.
      if (any && options.real_time_updates) {
        try {
          const auto frame_json = current_frame(interval() / 2);
          // Unchanged (the budget kept the last snapshot): pages keep what they show, and the
          // time of that frame on the page says how old it is.
          if (frame_json == last_sent) {
            lock.lock();
            continue;
          }
          last_sent = frame_json;
          const auto message = std::make_shared<const std::string>(sse_frame(*frame_json));
          frames_sent.fetch_add(1, std::memory_order_relaxed);
          std::lock_guard clients_lock(clients_mu);
          for (const auto& client : clients) {
            {
              std::lock_guard client_lock(client->mu);
              // A page that cannot keep up gets the newest frame, not a growing backlog.
              while (client->frames.size() >= 2) client->frames.pop_front();
              client->frames.push_back(message);
            }
            client->cv.notify_one();
          }
        } catch (const std::exception& e) {
          std::cerr << "nnprof: the live server could not build a frame: " << e.what() << '\n';
        }
      }
      lock.lock();
    }
  }

  bool authorized(const httplib::Request& req) const {
    if (token.empty()) return true;
    const std::string header = req.get_header_value("Authorization");
    const std::string parameter = req.get_param_value("token");
    return token_accepted(token, presented_token(header, parameter));
  }

  static void text(httplib::Response& res, int status, const std::string& body) {
    res.status = status;
    res.set_content(body, "text/plain; charset=utf-8");
  }

  void json_response(httplib::Response& res, const std::string& body) {
    res.set_header("Cache-Control", "no-store");
    res.set_content(body, "application/json");
  }

  void routes() {
    // A failure inside a handler answers 500 saying what failed; it never reaches the program.
    http.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr failure) {
      try {
        std::rethrow_exception(failure);
      } catch (const std::exception& e) {
        text(res, 500, std::string("nnprof live server: ") + e.what() + "\n");
      } catch (...) {
        text(res, 500, "nnprof live server: the request failed\n");
      }
    });
    http.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
      res.set_header("X-Content-Type-Options", "nosniff");
      res.set_header("Referrer-Policy", "no-referrer");  // the page's URL may hold the token
      if (authorized(req)) return httplib::Server::HandlerResponse::Unhandled;
      res.set_header("WWW-Authenticate", "Bearer realm=\"nnprof\"");
      text(res, 401,
           "nnprof live server: this request needs the token printed when the server started (or NNPROF_TOKEN): "
           "send \"Authorization: Bearer <token>\" or add ?token=<token> to the URL\n");
      return httplib::Server::HandlerResponse::Handled;
    });

    http.Get("/", [this](const httplib::Request&, httplib::Response& res) {
      const std::string nonce = generate_token();
      res.set_header("Content-Security-Policy", live_page_policy(nonce));
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Frame-Options", "DENY");
      res.set_content(live_page_html(nonce, options.real_time_updates, *current_frame(interval())),
                      "text/html; charset=utf-8");
    });

    http.Get("/events", [this](const httplib::Request&, httplib::Response& res) {
      auto client = std::make_shared<Client>();
      {
        std::lock_guard lock(clients_mu);
        if (clients_closed) {
          text(res, 503, "nnprof live server: stopping\n");
          return;
        }
        if (clients.size() >= options.max_live_clients) {
          text(res, 503, fmt::format("nnprof live server: {} live pages are open already, the most it serves "
                                     "(LiveServerOptions::max_live_clients)\n",
                                     clients.size()));
          return;
        }
        clients.push_back(client);
      }
      // The page starts from the last frame built; the broadcaster is woken to build a newer one.
      std::shared_ptr<const std::string> current;
      {
        std::lock_guard lock(frame_mu);
        current = frame;
      }
      if (current) {
        std::lock_guard lock(client->mu);
        client->frames.push_back(std::make_shared<const std::string>(sse_frame(*current)));
      }
      {
        std::lock_guard lock(stop_mu);
        wake = true;
      }
      stop_cv.notify_all();
      res.set_header("Cache-Control", "no-store");
      res.set_header("X-Accel-Buffering", "no");
      res.set_chunked_content_provider(
          "text/event-stream",
          [client](std::size_t, httplib::DataSink& sink) {
            std::deque<std::shared_ptr<const std::string>> ready;
            {
              std::unique_lock lock(client->mu);
              client->cv.wait_for(lock, std::chrono::seconds(15),
                                  [&] { return client->closed || !client->frames.empty(); });
              if (client->closed) return false;
              ready.swap(client->frames);
            }
            // A comment line every 15 s without frames: proxies keep the stream, and a page
            // that went away is noticed when the write fails.
            if (ready.empty()) return sink.write(": keep-alive\n\n", 14);
            for (const auto& frame : ready)
              if (!sink.write(frame->data(), frame->size())) return false;
            return true;
          },
          [this, client](bool) {
            std::lock_guard lock(clients_mu);
            clients.remove(client);
          });
    });

    http.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      const auto profile = latest(interval());
      const std::optional<ProcessStats> process = source.fixed ? std::nullopt : read_process_stats();
      res.set_header("Cache-Control", "no-store");
      res.set_content(prometheus_text(*profile, process, stats()), "text/plain; version=0.0.4; charset=utf-8");
    });

    http.Get("/api/v1/live", [this](const httplib::Request&, httplib::Response& res) {
      json_response(res, *current_frame(interval()));
    });
    http.Get("/api/v1/scopes", [this](const httplib::Request&, httplib::Response& res) {
      json_response(res, scopes_json(*latest(interval())).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    http.Get("/api/v1/metrics", [this](const httplib::Request&, httplib::Response& res) {
      json_response(res, metrics_json(*latest(interval())).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });
    http.Get("/api/v1/anomalies", [this](const httplib::Request&, httplib::Response& res) {
      json_response(res, anomalies_json(*latest(interval())).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    });

    http.Get("/debug/pprof/profile", [this](const httplib::Request& req, httplib::Response& res) { cpu_profile(req, res); });
    http.Get("/debug/pprof/heap", [this](const httplib::Request&, httplib::Response& res) {
      const auto profile = latest(interval());
      if (!profile->heap.tracked) {
        text(res, 404,
             "nnprof live server: heap tracking is off in this process (nnprof record tracks the heap; a "
             "program can link nnprof::memory and create an nnprof::MemoryTracking)\n");
        return;
      }
      res.set_header("Content-Disposition", "attachment; filename=\"heap\"");
      res.set_content(io::gzip(io::heap_pprof_message(*profile)), "application/octet-stream");
    });
  }

  // Go's /debug/pprof/profile: the CPU profile of the next `seconds` (default 30).
  void cpu_profile(const httplib::Request& req, httplib::Response& res) {
    double seconds = 30.0;
    if (req.has_param("seconds")) {
      const std::string text_value = req.get_param_value("seconds");
      char* end = nullptr;
      seconds = std::strtod(text_value.c_str(), &end);
      if (end == text_value.c_str() || *end != '\0' || !(seconds > 0.0) || seconds > 3600.0) {
        text(res, 400, "nnprof live server: seconds must be a number of seconds from 0 to 3600\n");
        return;
      }
    }
    std::shared_ptr<const Profile> profile;
    std::uint64_t from_ns = 0;
    std::uint64_t to_ns = UINT64_MAX;
    if (source.fixed) {
      profile = source.fixed;  // a saved profile: every sample it holds
    } else {
      std::unique_ptr<CpuProfiler> own;
      {
        std::lock_guard lock(cpu_profile_mu);
        if (!source.sampler_running || !source.sampler_running()) {
          CpuProfilerOptions o;
          o.hz = 100.0;  // Go's rate
          o.yield_to_program = true;
          try {
            own = std::make_unique<CpuProfiler>(*source.profiler, o);
          } catch (const Error& e) {
            // Another sampler started in between (its samples serve as well), or sampling
            // is impossible here: the profile will be empty, and this says why.
            std::cerr << "nnprof live server: /debug/pprof/profile runs no sampler of its own: " << e.what() << '\n';
          }
        }
      }
      const Clock::time_point start = Clock::now();
      {
        std::unique_lock lock(stop_mu);
        stop_cv.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return stopping; });
      }
      if (own) own->stop();
      const std::uint64_t elapsed =
          static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count());
      profile = latest(std::chrono::milliseconds(0), true);
      to_ns = profile->meta.duration_ns;
      from_ns = to_ns > elapsed ? to_ns - elapsed : 0;
    }
    const Profile window = cpu_window(*profile, from_ns, to_ns);
    const std::string message = window.cpu_samples.empty() ? empty_cpu_profile(window) : io::pprof_message(window);
    res.set_header("Content-Disposition", "attachment; filename=\"profile\"");
    res.set_content(io::gzip(message), "application/octet-stream");
  }
};

Server::Server(ServerSource source, const LiveServerOptions& options) : state_(nullptr) {
  if (options.update_interval < std::chrono::milliseconds(50) || options.update_interval > std::chrono::milliseconds(1000))
    throw Error(fmt::format("the live server's update interval must be 50 ms to 1 s, not {} ms",
                            options.update_interval.count()));
  if (options.max_live_clients == 0) throw Error("the live server needs max_live_clients of at least 1");
  bool generated = false;
  std::string token = required_token(options.address, options.token, options.generate_token, generated);
  if (options.port != 0)
    if (const auto problem = bind_problem(options.address, options.port)) throw Error("nnprof live server: " + *problem);

  auto state = std::make_unique<State>();
  State& s = *state;
  s.source = std::move(source);
  s.options = options;
  s.token = std::move(token);
  s.http.new_task_queue = [limit = options.max_live_clients + 16] { return new ElasticPool(4, limit); };
  s.http.set_keep_alive_timeout(2);
  s.http.set_read_timeout(5, 0);
  s.http.set_write_timeout(5, 0);
  s.http.set_socket_options([&s](socket_t fd) {
    const int yes = 1;
    ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    // The first socket is the listening one (the options apply to it only in this version).
    if (s.listen_fd < 0) s.listen_fd = fd;
  });
  s.routes();
  std::string host = options.address;
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  int port = options.port;
  if (options.port == 0) {
    port = s.http.bind_to_any_port(host);
  } else if (!s.http.bind_to_port(host, options.port)) {
    port = -1;
  }
  if (port <= 0) {
    const auto problem = bind_problem(options.address, options.port);
    throw Error("nnprof live server: " + problem.value_or(fmt::format("cannot listen on {}:{}", options.address, options.port)));
  }
  s.port = static_cast<std::uint16_t>(port);
  if (s.listen_fd >= 0) {
    // This cpp-httplib listens with a backlog of 5: fifty pages opening at once overflowed it,
    // and a scrape arriving then waited for its SYN to be resent (1 s). Listening again on
    // the bound socket raises the backlog.
    ::listen(s.listen_fd, SOMAXCONN);
    register_listener(s.listen_fd);
  }
  s.listener = std::thread([&s] {
    pthread_setname_np(pthread_self(), "nnprof-listen");
    detail::InternalAllocations internal;
    s.http.listen_after_bind();
    std::lock_guard lock(s.stop_mu);
    s.stopped = true;
    s.stop_cv.notify_all();
  });
  // cpp-httplib's stop() does nothing until listen_after_bind has marked the server running:
  // a server stopped before its listener thread got that far would listen for ever and its
  // destructor would wait on it. The constructor returns only once the server is serving (or
  // its listener has ended on its own).
  for (;;) {
    if (s.http.is_running()) break;
    {
      std::lock_guard lock(s.stop_mu);
      if (s.stopped) break;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  s.broadcaster = std::thread([&s] { s.broadcast(); });
  state_ = state.release();

  if (options.announce) {
    const bool v6 = host.find(':') != std::string::npos;
    std::string url = fmt::format("http://{}{}{}:{}/", v6 ? "[" : "", host, v6 ? "]" : "", s.port);
    std::cerr << "nnprof: live profile at " << url;
    if (!s.token.empty()) std::cerr << "?token=" << (generated ? s.token : std::string("<NNPROF_TOKEN>"));
    std::cerr << "  (Prometheus: " << url << "metrics)\n";
    if (generated) std::cerr << "nnprof: requests need the token " << s.token << " (Authorization: Bearer, or ?token=)\n";
  }
}

Server::~Server() {
  if (state_ == nullptr) return;
  if (getpid() != state_->owner_pid) {
    // A forked child: the threads are the parent's; joining them would wait forever and
    // destroying them would terminate. The state is let go untouched (the child's listening
    // socket was closed at the fork).
    state_ = nullptr;
    return;
  }
  stop();
  delete state_;
}

std::uint16_t Server::port() const noexcept { return state_->port; }
const std::string& Server::address() const noexcept { return state_->options.address; }
const std::string& Server::token() const noexcept { return state_->token; }
std::size_t Server::live_clients() const noexcept { return state_->stats().live_clients; }

void Server::wait() {
  std::unique_lock lock(state_->stop_mu);
  state_->stop_cv.wait(lock, [this] { return state_->stopping || state_->stopped; });
}

void Server::stop() noexcept {
  State& s = *state_;
  if (getpid() != s.owner_pid) return;
  {
    std::lock_guard lock(s.stop_mu);
    if (s.stopping) return;
    s.stopping = true;
  }
  s.stop_cv.notify_all();
  {
    std::lock_guard lock(s.clients_mu);
    s.clients_closed = true;
    for (const auto& client : s.clients) {
      {
        std::lock_guard client_lock(client->mu);
        client->closed = true;
      }
      client->cv.notify_all();
    }
  }
  if (s.broadcaster.joinable()) s.broadcaster.join();
  s.http.stop();
  if (s.listener.joinable()) s.listener.join();
  if (s.listen_fd >= 0) unregister_listener(s.listen_fd);
}

}  // namespace nnprof::serve
