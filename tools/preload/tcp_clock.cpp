// Round trips with rank 0 over TCP, for ranks that have no MPI to exchange over. The channel is
// the job's own rendezvous host: rank 0 listens on MASTER_PORT + 1 (NNPROF_CLOCK_PORT overrides
// it), which torchrun's workers all see in their environment, and each other rank connects
// there. One connection per rank stays open for the whole run, so that the exchange at the end
// does not depend on rank 0 still accepting; a rank 0 that has already ended answers nothing
// and the alignment keeps the start's offset with no drift.
#include "tcp_clock.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/profiler.hpp"
#include "nnprof/rank_recording.hpp"
#include "say.hpp"

namespace nnprof::agent {

namespace {

constexpr int kRoundTrips = 64;
constexpr auto kConnectPatience = std::chrono::seconds(60);  // rank 0 may start later than the others

std::int64_t local_now_ns(std::int64_t injected) {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  const std::int64_t mono = static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
  return mono - static_cast<std::int64_t>(global_profiler().start_monotonic_ns()) + injected;
}

bool send_all(int fd, const void* data, std::size_t size) {
  const char* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = send(fd, p, size, MSG_NOSIGNAL);  // a peer gone must not raise SIGPIPE
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

bool recv_all(int fd, void* data, std::size_t size) {
  char* p = static_cast<char*>(data);
  while (size > 0) {
    const ssize_t n = recv(fd, p, size, 0);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    p += n;
    size -= static_cast<std::size_t>(n);
  }
  return true;
}

std::optional<int> clock_port() {
  if (const char* port = std::getenv("NNPROF_CLOCK_PORT"); port != nullptr && *port != '\0') return std::atoi(port);
  const char* master = std::getenv("MASTER_PORT");
  if (master == nullptr || *master == '\0') return std::nullopt;
  const int p = std::atoi(master);
  if (p <= 0 || p >= 65535) return std::nullopt;
  return p + 1;
}

struct State {
  std::mutex mu;  // guards fd and start; the measuring thread and the exit path both use them
  int fd = -1;
  std::optional<ClockOffsetSample> start;
  std::int64_t injected = 0;
};

State& state() {
  static auto* s = new State;  // used until the process ends
  return *s;
}

/// Rank 0: answers each round trip with its receive and send times until the peer closes.
void serve(int fd) {
  const std::int64_t injected = injected_clock_offset_ns();
  for (;;) {
    std::int64_t t1 = 0;
    if (!recv_all(fd, &t1, sizeof t1)) break;
    std::array<std::int64_t, 2> times{local_now_ns(injected), 0};
    times[1] = local_now_ns(injected);
    if (!send_all(fd, times.data(), sizeof times)) break;
  }
  close(fd);
}

void listen_as_rank0(int port, std::int32_t world_size) {
  const int fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return;
  const int on = 1, off = 0;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
  setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &off, sizeof off);  // IPv4 peers too
  sockaddr_in6 addr{};
  addr.sin6_family = AF_INET6;
  addr.sin6_addr = in6addr_any;
  addr.sin6_port = htons(static_cast<std::uint16_t>(port));
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 || listen(fd, world_size) != 0) {
    say("warning: the clock exchange cannot listen on port " + std::to_string(port) + ": " + std::strerror(errno) +
        "; the ranks' clocks are not aligned (set NNPROF_CLOCK_PORT to a free port)");
    close(fd);
    return;
  }
  for (std::int32_t served = 1; served < world_size; ++served) {
    const int peer = accept4(fd, nullptr, nullptr, SOCK_CLOEXEC);
    if (peer < 0) {
      if (errno == EINTR) {
        --served;
        continue;
      }
      break;
    }
    setsockopt(peer, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
    std::thread(serve, peer).detach();
  }
  close(fd);
}

std::optional<ClockOffsetSample> exchange(int fd, std::int64_t injected) {
  std::vector<ClockRoundTrip> trips;
  trips.reserve(kRoundTrips);
  for (int i = 0; i < kRoundTrips; ++i) {
    ClockRoundTrip t;
    t.t1 = local_now_ns(injected);
    std::array<std::int64_t, 2> times{};
    if (!send_all(fd, &t.t1, sizeof t.t1) || !recv_all(fd, times.data(), sizeof times)) return std::nullopt;
    t.t4 = local_now_ns(injected);
    t.t2 = times[0];
    t.t3 = times[1];
    trips.push_back(t);
  }
  return best_clock_offset(trips);
}

int connect_to(const std::string& host, int port) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = found; a != nullptr && fd < 0; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) != 0) {
      close(fd);
      fd = -1;
    }
  }
  freeaddrinfo(found);
  return fd;
}

void measure_as_rank(const std::string& host, int port) {
  const auto deadline = std::chrono::steady_clock::now() + kConnectPatience;
  int fd = -1;
  while ((fd = connect_to(host, port)) < 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (fd < 0) {
    say("warning: the clock exchange could not reach rank 0 at " + host + ":" + std::to_string(port) +
        "; this rank's clock is not aligned");
    return;
  }
  const int on = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof on);
  // The end's exchange must not hang an exiting program on a rank 0 that stopped answering.
  const timeval patience{2, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &patience, sizeof patience);
  State& s = state();
  std::lock_guard lock(s.mu);
  s.injected = injected_clock_offset_ns();
  s.start = exchange(fd, s.injected);
  s.fd = fd;
  if (s.start) global_profiler().set_clock_alignment(align_clock(*s.start, std::nullopt, "tcp-rendezvous"));
}

}  // namespace

void start_tcp_clock(std::int32_t rank, std::int32_t world_size) noexcept {
  try {
    const char* host = std::getenv("MASTER_ADDR");
    const std::optional<int> port = clock_port();
    if (world_size < 2 || host == nullptr || *host == '\0' || !port) return;
    if (rank == 0)
      std::thread(listen_as_rank0, *port, world_size).detach();
    else
      std::thread(measure_as_rank, std::string(host), *port).detach();
  } catch (const std::exception& e) {
    say(std::string("warning: the clock exchange did not start: ") + e.what());
  }
}

void finish_tcp_clock() noexcept {
  try {
    State& s = state();
    // try_lock: a measuring thread still connecting at exit has nothing to finish.
    std::unique_lock lock(s.mu, std::try_to_lock);
    if (!lock.owns_lock() || s.fd < 0 || !s.start) return;
    const std::optional<ClockOffsetSample> end = exchange(s.fd, s.injected);
    close(s.fd);
    s.fd = -1;
    global_profiler().set_clock_alignment(align_clock(*s.start, end, "tcp-rendezvous"));
  } catch (...) {
    // Out of memory at exit: the start's alignment stays.
  }
}

}  // namespace nnprof::agent
