// Issue 21, goal 1: a scope costs no more than a Tracy zone measured in the same process and run.
//
//   tracy_zone_compare [rounds [iterations]]      (default 7 rounds of 3,000,000)
//
// Built and run by bench/compare_tracy.sh, which builds Tracy's client and capture tool from
// their source in a scratch folder: this file needs Tracy's headers and client and is not part
// of the CMake build (CI has no Tracy).
//
// Five variants, each an empty block in a tight loop, in one process:
//   clock read        nnprof::detail::read_ticks() alone: the floor (a scope reads it twice)
//   Tracy zone        ZoneScopedN, with tracy-capture connected and receiving
//   nnprof default    NNPROF_SCOPE_IN into a default nnprof::Profiler (keep-first, 256 MiB cap)
//   nnprof flight     the same with BufferPolicy::FlightRecorder, past its cap (recycling)
//   nnprof no spans   the same with record_spans = false (statistics and call tree only)
// Every round runs each variant once, the order rotating from round to round, so that a
// shared machine's load and the order itself fall on every variant alike. After each timed
// loop the program waits for its background threads (Tracy's sender, nnprof's drainer) and the
// capture process (NNPROF_TRACY_CAPTURE_PID) to go idle: one variant's data, still being
// shipped or compressed, must not slow the next one down; that wait is printed too (for Tracy:
// how long the capture took to receive a round's zones). It prints ns per iteration per round
// in the measuring thread's CPU time (the cost on the instrumented thread; the goal's measure)
// and in wall time, the medians, each median over the clock read's and over Tracy's, and the
// CPU the background spent per iteration (Tracy's sender and tracy-capture; nnprof's drainer).
#include <time.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <tracy/Tracy.hpp>

#include "nnprof/nnprof.hpp"

#ifndef TRACY_ENABLE
#error "compile with -DTRACY_ENABLE (bench/compare_tracy.sh does): without it ZoneScoped is empty"
#endif

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The variants. noinline: each loop is compiled once, on its own, with the same flags (this
// one translation unit holds the inline hot paths of both profilers).

[[gnu::noinline]] void clock_loop(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    const std::uint64_t t = nnprof::detail::read_ticks();
    asm volatile("" : : "r"(t));  // keep the read
  }
}

[[gnu::noinline]] void tracy_loop(std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    ZoneScopedN("tracy_zone");
  }
}

[[gnu::noinline]] void nnprof_loop(nnprof::Profiler& p, std::uint64_t n) {
  for (std::uint64_t i = 0; i < n; ++i) {
    NNPROF_SCOPE_IN(p, "nnprof_scope");
  }
}

std::uint64_t cpu_ns(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

// Two costs per iteration of one timed loop. `cpu`, the measuring thread's own CPU time, is the
// cost a scope adds to the instrumented thread: on two cores shared with Tracy's sender thread,
// tracy-capture and nnprof's drainer, the wall time also holds the time the thread waited for a
// core while those ran, which is printed apart (background CPU) rather than mixed in.
struct Cost {
  double cpu = 0.0;
  double wall = 0.0;
};

template <typename F>
Cost cost_per_iteration(std::uint64_t n, F&& loop) {
  const std::uint64_t c0 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  const auto t0 = Clock::now();
  loop(n);
  const auto t1 = Clock::now();
  const std::uint64_t c1 = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  const double per = 1.0 / static_cast<double>(n);
  return {static_cast<double>(c1 - c0) * per, std::chrono::duration<double, std::nano>(t1 - t0).count() * per};
}

// CPU time used by everything that may still be working on a variant's data: the other
// threads of this process and, when the script says which it is, the capture process (all its
// threads, from /proc/PID/task/*/schedstat: nanoseconds on the CPU).
pid_t capture_pid() {
  const char* s = std::getenv("NNPROF_TRACY_CAPTURE_PID");
  return s != nullptr ? static_cast<pid_t>(std::atoi(s)) : 0;
}

std::uint64_t background_cpu_ns() {
  std::uint64_t ns = cpu_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  if (const pid_t pid = capture_pid(); pid > 0) {
    std::error_code ec;
    for (const auto& task : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
      std::ifstream in(task.path() / "schedstat");
      std::uint64_t on_cpu = 0;
      if (in >> on_cpu) ns += on_cpu;
    }
  }
  return ns;
}

// Waits until the background used under 5% of a CPU over 50 ms; returns the seconds waited,
// or nothing after 120 s (the capture cannot keep up, or something else keeps it busy).
std::optional<double> quiesce() {
  const auto t0 = Clock::now();
  constexpr auto kWindow = std::chrono::milliseconds(50);
  for (;;) {
    const std::uint64_t before = background_cpu_ns();
    std::this_thread::sleep_for(kWindow);
    if (background_cpu_ns() - before < 2'500'000) return seconds_since(t0);
    if (seconds_since(t0) > 120.0) return std::nullopt;
  }
}

bool wait_for_tracy_capture() {
  const char* env = std::getenv("NNPROF_TRACY_CONNECT_TIMEOUT_S");
  const double timeout_s = env != nullptr ? std::atof(env) : 60.0;
  const auto t0 = Clock::now();
  while (!TracyIsConnected) {
    if (seconds_since(t0) > timeout_s) {
      std::fprintf(stderr,
                   "no Tracy capture connected within %.0f s. Start one first, e.g. `tracy-capture -o out.tracy -f` "
                   "(bench/compare_tracy.sh does), on the port in TRACY_PORT (default 8086). Timing a Tracy client "
                   "that nobody drains would measure nothing real: its queue would only grow.\n",
                   timeout_s);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  std::fprintf(stderr, "Tracy capture connected after %.1f s\n", seconds_since(t0));
  return true;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 == 1 ? v[m] : (v[m - 1] + v[m]) / 2.0;
}

// A field of /proc/PID/status in KiB ("VmHWM:" the peak resident memory, "VmRSS:" the current).
std::uint64_t status_kib(const std::string& pid, const char* field) {
  std::ifstream in("/proc/" + pid + "/status");
  std::string key;
  while (in >> key) {
    if (key == field) {
      std::uint64_t kib = 0;
      in >> kib;
      return kib;
    }
    in.ignore(1 << 20, '\n');
  }
  return 0;
}

enum Variant { kClock, kTracy, kDefault, kFlight, kNoSpans, kVariants };
constexpr std::array<const char*, kVariants> kNames = {"clock read (floor)", "Tracy ZoneScoped", "nnprof default",
                                                       "nnprof flight recorder", "nnprof record_spans=false"};

nnprof::ProfilerOptions flight_options() {
  nnprof::ProfilerOptions o;
  o.policy = nnprof::BufferPolicy::FlightRecorder;
  return o;
}

nnprof::ProfilerOptions no_span_options() {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  const int rounds = argc > 1 ? std::max(1, std::atoi(argv[1])) : 7;
  const std::uint64_t n = argc > 2 ? std::max(1000ull, std::strtoull(argv[2], nullptr, 10)) : 3'000'000;
  constexpr std::uint64_t kWarm = 10'000;

  if (!wait_for_tracy_capture()) return 2;

  // The default profiler is created afresh for every round (and destroyed after it, outside
  // the timing): each round then records below the 256 MiB cap and keeps every span, the
  // state of a session that is not yet full, whatever the number of rounds. What happens past
  // the cap is bench/cap_cliff.cpp's subject; the flight recorder below shows its steady state.
  //
  // The flight recorder lives through all rounds and is filled past its cap first, so that
  // every round measures the recycling a long training run sees (as bench_record.cpp's
  // BM_ScopeTimeline does). Its memory stays at the cap.
  nnprof::Profiler flight(flight_options());
  const std::uint64_t fill = flight.options().memory_cap_bytes / sizeof(nnprof::detail::Record) * 11 / 10;
  nnprof_loop(flight, fill);
  const auto flight_fill = flight.statistics_snapshot().completeness;
  // Statistics only: nothing grows with the number of scopes.
  nnprof::Profiler no_spans(no_span_options());
  nnprof_loop(no_spans, kWarm);
  // Tracy: the thread's queue and the zone's source location are set up by the first zones.
  tracy_loop(kWarm);
  clock_loop(kWarm);

  std::array<std::vector<double>, kVariants> cpu, wall, background, waited;
  std::uint64_t default_dropped = 0, default_hot_allocations = 0;
  std::int64_t tracy_rss_growth_kib = 0;  // the most the process grew during one Tracy loop
  bool counts_ok = true, idle_ok = true;

  for (int r = 0; r < rounds; ++r) {
    for (int k = 0; k < kVariants; ++k) {
      const auto v = static_cast<Variant>((r + k) % kVariants);
      std::unique_ptr<nnprof::Profiler> fresh;
      if (v == kDefault) {
        fresh = std::make_unique<nnprof::Profiler>();
        nnprof_loop(*fresh, kWarm);  // attaches the thread, creates the node and first chunk
        idle_ok = quiesce().has_value() && idle_ok;
      }
      if (v == kTracy && !TracyIsConnected) {
        std::fprintf(stderr, "the Tracy capture disconnected: stopping (see its log)\n");
        return 2;
      }
      const std::uint64_t background0 = background_cpu_ns();
      Cost c;
      switch (v) {
        case kClock: c = cost_per_iteration(n, clock_loop); break;
        case kTracy: {
          // What the client queued and the capture had not yet taken (outside the timing).
          const auto rss0 = static_cast<std::int64_t>(status_kib("self", "VmRSS:"));
          c = cost_per_iteration(n, tracy_loop);
          const auto rss1 = static_cast<std::int64_t>(status_kib("self", "VmRSS:"));
          tracy_rss_growth_kib = std::max(tracy_rss_growth_kib, rss1 - rss0);
          break;
        }
        case kDefault: c = cost_per_iteration(n, [&](std::uint64_t m) { nnprof_loop(*fresh, m); }); break;
        case kFlight: c = cost_per_iteration(n, [&](std::uint64_t m) { nnprof_loop(flight, m); }); break;
        case kNoSpans: c = cost_per_iteration(n, [&](std::uint64_t m) { nnprof_loop(no_spans, m); }); break;
        case kVariants: break;
      }
      cpu[v].push_back(c.cpu);
      wall[v].push_back(c.wall);
      if (v == kDefault) {  // every scope counted and, below the cap, every span kept
        const auto c = fresh->statistics_snapshot().completeness;
        counts_ok = counts_ok && fresh->call_count("nnprof_scope") == n + kWarm;
        default_dropped += c.spans_dropped;
        default_hot_allocations += c.hot_path_allocations;
        fresh.reset();
      }
      const std::optional<double> w = quiesce();  // this variant's data shipped or compressed
      if (!w) idle_ok = false;
      waited[v].push_back(w.value_or(120.0));
      // The background's CPU from the loop's start until idle again, per iteration (it includes
      // up to 2.5 ms of idle noise from the last 50 ms window: under 1 ns at 3 M iterations).
      background[v].push_back(static_cast<double>(background_cpu_ns() - background0) / static_cast<double>(n));
    }
  }

  const auto flight_end = flight.statistics_snapshot().completeness;
  counts_ok = counts_ok && flight.call_count("nnprof_scope") == fill + n * static_cast<std::uint64_t>(rounds) &&
              no_spans.call_count("nnprof_scope") == kWarm + n * static_cast<std::uint64_t>(rounds);

  auto table = [&](const char* title, const std::array<std::vector<double>, kVariants>& ns) {
    std::printf("\n%s\n%-26s", title, "ns per iteration");
    for (int r = 0; r < rounds; ++r) std::printf(" %6s%-2d", "r", r + 1);
    std::printf(" %8s %8s %8s\n", "median", "x floor", "/ Tracy");
    const double floor = median(ns[kClock]), tracy = median(ns[kTracy]);
    for (std::size_t v = 0; v < kVariants; ++v) {
      std::printf("%-26s", kNames[v]);
      for (double t : ns[v]) std::printf(" %8.2f", t);
      const double m = median(ns[v]);
      std::printf(" %8.2f %8.2f %8.2f\n", m, m / floor, m / tracy);
    }
  };
  std::printf("\n%d rounds x %llu iterations per variant, order rotating per round; tick source: %s\n", rounds,
              static_cast<unsigned long long>(n), nnprof::clock::tick_source());
  table("on-thread CPU time (CLOCK_THREAD_CPUTIME_ID): the cost on the instrumented thread", cpu);
  table("wall time (steady_clock): also the time the thread waited for a core", wall);
  std::printf("\n%-26s %18s %22s\n", "medians", "background CPU ns/it", "wait for idle after, ms");
  for (std::size_t v = 0; v < kVariants; ++v)
    std::printf("%-26s %18.2f %22.0f\n", kNames[v], median(background[v]), 1000.0 * median(waited[v]));
  std::printf("(background: this process's other threads and tracy-capture, from the loop's start until idle;\n"
              " for Tracy its sender thread and the capture receiving the zones, for nnprof its drainer)\n");
  std::printf("nnprof default: %d fresh profilers, spans dropped %llu (0: below the cap), chunks allocated on the "
              "recording thread %llu\n",
              rounds, static_cast<unsigned long long>(default_dropped),
              static_cast<unsigned long long>(default_hot_allocations));
  std::printf("nnprof flight recorder: filled with %llu scopes first (overwritten then %llu), overwritten at the end "
              "%llu (cap %llu MiB)\n",
              static_cast<unsigned long long>(fill), static_cast<unsigned long long>(flight_fill.spans_overwritten),
              static_cast<unsigned long long>(flight_end.spans_overwritten),
              static_cast<unsigned long long>(flight.options().memory_cap_bytes >> 20));
  std::printf("memory: this process peaked at %llu MiB resident (nnprof's flight recorder alone holds its %llu MiB); "
              "it grew by up to %lld MiB during one Tracy loop (Tracy's queue has no cap)",
              static_cast<unsigned long long>(status_kib("self", "VmHWM:") >> 10),
              static_cast<unsigned long long>(flight.options().memory_cap_bytes >> 20),
              static_cast<long long>(tracy_rss_growth_kib >> 10));
  if (const pid_t pid = capture_pid(); pid > 0)
    std::printf("; tracy-capture peaked at %llu MiB (it keeps every zone until it saves)",
                static_cast<unsigned long long>(status_kib(std::to_string(pid), "VmHWM:") >> 10));
  std::printf("\n");
  const double nnprof_cpu = median(cpu[kDefault]), tracy_cpu = median(cpu[kTracy]);
  const double nnprof_wall = median(wall[kDefault]), tracy_wall = median(wall[kTracy]);
  std::printf("goal 1 (a scope costs no more than a Tracy zone): nnprof default %.2f ns vs Tracy %.2f ns on-thread "
              "CPU: %s (wall: %.2f vs %.2f ns)\n",
              nnprof_cpu, tracy_cpu, nnprof_cpu <= tracy_cpu ? "met" : "NOT met", nnprof_wall, tracy_wall);
  std::printf("Tracy zones recorded: %llu (tracy-capture's count below should match)\n",
              static_cast<unsigned long long>(kWarm + n * static_cast<std::uint64_t>(rounds)));
  if (!counts_ok) std::printf("ERROR: nnprof's call counts are not the scopes recorded\n");
  if (!idle_ok) std::printf("WARNING: some waits for idle timed out after 120 s: the rounds after them overlap\n");
  return counts_ok ? 0 : 1;
}
