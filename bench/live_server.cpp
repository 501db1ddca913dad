// The live server's cost to the profiled program (issue 23): the same instrumented, sampled
// training "step" (three 384x384 matmuls in nested scopes, a CPU sampler at 199 Hz) run in
// alternating blocks without a server and with one serving N live pages (N raw /events readers
// in a thread of their own), plus the CPU time of the server's threads (nnprof-live: the
// broadcaster, nnprof-http: requests and streams, nnprof-listen) from /proc/self/task/*/schedstat.
// With 50 pages it also times /metrics from another thread: the p50/p99 a scraper sees.
//
//   nnprof_bench_live [BLOCKS] [STEPS_PER_BLOCK] [PAGES...]   (defaults 4, 400, pages 1 10 50)
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "kernels.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/live_server.hpp"
#include "nnprof/profiler.hpp"

namespace {

namespace k = nnprof::transformer::kernels;
constexpr int kN = 384;

struct Step {
  std::vector<float> a = std::vector<float>(kN * kN, 0.5f), b = std::vector<float>(kN * kN, 0.25f),
                     c = std::vector<float>(kN * kN);
  void run(nnprof::Profiler& p) {
    p.start("step");
    for (int i = 0; i < 3; ++i) {
      p.start(i == 0 ? "attention" : i == 1 ? "mlp" : "output");
      p.start("matmul");
      k::matmul(kN, kN, kN, a.data(), kN, b.data(), kN, c.data(), kN);
      p.stop("matmul");
      p.stop(i == 0 ? "attention" : i == 1 ? "mlp" : "output");
    }
    a[0] = c[kN + 1] * 1e-9f;
    p.add_items("step", 32);
    p.stop("step");
  }
};

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// CPU seconds of this process's threads whose name starts with "nnprof-" and is one of the
// server's (schedstat: nanoseconds).
double server_cpu_seconds() {
  DIR* dir = opendir("/proc/self/task");
  if (dir == nullptr) return 0.0;
  double seconds = 0.0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] == '.') continue;
    std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
    std::string name;
    std::getline(comm, name);
    if (name != "nnprof-live" && name != "nnprof-http" && name != "nnprof-listen") continue;
    std::ifstream schedstat(std::string("/proc/self/task/") + e->d_name + "/schedstat");
    unsigned long long ns = 0;
    if (schedstat >> ns) seconds += static_cast<double>(ns) / 1e9;
  }
  closedir(dir);
  return seconds;
}

// N live pages: raw connections reading /events until told to stop; counts the frames.
class Pages {
 public:
  Pages(std::uint16_t port, int n) {
    for (int i = 0; i < n; ++i) {
      const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
      sockaddr_in a{};
      a.sin_family = AF_INET;
      a.sin_port = htons(port);
      a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      if (::connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
        ::close(fd);
        continue;
      }
      const std::string request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
      (void)::write(fd, request.data(), request.size());
      fds_.push_back(fd);
    }
    reader_ = std::thread([this] {
      std::vector<char> buffer(1 << 16);
      while (!stop_.load()) {
        std::vector<pollfd> polls;
        for (const int fd : fds_) polls.push_back(pollfd{fd, POLLIN, 0});
        if (::poll(polls.data(), polls.size(), 50) <= 0) continue;
        for (const pollfd& p : polls)
          if ((p.revents & POLLIN) != 0) {
            const ssize_t got = ::read(p.fd, buffer.data(), buffer.size());
            if (got > 0) bytes_ += static_cast<std::uint64_t>(got);
          }
      }
    });
  }
  ~Pages() {
    stop_.store(true);
    reader_.join();
    for (const int fd : fds_) ::close(fd);
  }
  [[nodiscard]] std::uint64_t bytes() const { return bytes_.load(); }

 private:
  std::vector<int> fds_;
  std::atomic<bool> stop_{false};
  std::atomic<std::uint64_t> bytes_{0};
  std::thread reader_;
};

double percentile(std::vector<double> v, double q) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

}  // namespace

int main(int argc, char** argv) {
  const int blocks = argc > 1 ? std::atoi(argv[1]) : 4;
  const int steps = argc > 2 ? std::atoi(argv[2]) : 400;
  std::vector<int> page_counts;
  for (int i = 3; i < argc; ++i) page_counts.push_back(std::atoi(argv[i]));
  if (page_counts.empty()) page_counts = {1, 10, 50};

  nnprof::Profiler profiler;
  nnprof::CpuProfiler sampler(profiler);
  Step step;
  for (int i = 0; i < 20; ++i) step.run(profiler);

  nnprof::LiveServerOptions options;
  options.port = 0;
  options.announce = false;
  std::printf("pages  step without (ms)  step with (ms)  ratio   server CPU %% of wall  frames MB/s  /metrics p50 / p99 (ms)\n");
  for (const int pages : page_counts) {
    std::vector<double> off, on, metrics_ms;
    double server_cpu = 0.0, served_wall = 0.0, mb = 0.0;
    for (int b = 0; b < blocks; ++b) {
      for (int pass = 0; pass < 2; ++pass) {
        const bool serving = (pass == 0) == (b % 2 == 0);
        if (!serving) {
          const auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < steps; ++i) step.run(profiler);
          off.push_back(seconds_since(t0) / steps);
          continue;
        }
        nnprof::LiveServer server(profiler, options);
        Pages readers(server.port(), pages);
        std::atomic<bool> done{false};
        std::thread scraper;
        if (pages >= 50) {
          scraper = std::thread([&] {
            std::size_t requests = 0;
            httplib::Client client("127.0.0.1", server.port());
            while (!done.load()) {
              const auto t0 = std::chrono::steady_clock::now();
              if (client.Get("/metrics")) {
                metrics_ms.push_back(seconds_since(t0) * 1e3);
                if (std::getenv("NNPROF_BENCH_VERBOSE") != nullptr && metrics_ms.back() > 100.0)
                  std::printf("slow /metrics: request %zu of this block took %.1f ms\n", requests, metrics_ms.back());
              }
              ++requests;
              std::this_thread::sleep_for(std::chrono::milliseconds(100));
            }
          });
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // the pages connect
        const double cpu0 = server_cpu_seconds();
        const std::uint64_t bytes0 = readers.bytes();
        const auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < steps; ++i) step.run(profiler);
        const double wall = seconds_since(t0);
        server_cpu += server_cpu_seconds() - cpu0;
        mb += static_cast<double>(readers.bytes() - bytes0) / 1e6;
        served_wall += wall;
        on.push_back(wall / steps);
        done.store(true);
        if (scraper.joinable()) scraper.join();
      }
    }
    const double off_ms = percentile(off, 0.5) * 1e3, on_ms = percentile(on, 0.5) * 1e3;
    std::printf("%5d  %17.3f  %14.3f  %.4f  %20.3f  %11.2f  ", pages, off_ms, on_ms, on_ms / off_ms,
                100.0 * server_cpu / served_wall, mb / served_wall);
    if (metrics_ms.empty())
      std::printf("-\n");
    else
      std::printf("%.2f / %.2f (%zu requests, max %.2f)\n", percentile(metrics_ms, 0.5), percentile(metrics_ms, 0.99),
                  metrics_ms.size(), *std::max_element(metrics_ms.begin(), metrics_ms.end()));
  }
  return 0;
}
