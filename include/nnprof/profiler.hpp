// The Profiler: a recording session with scope timing, named memory counters and snapshots.
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/analysis.hpp"
#include "nnprof/config.hpp"
#include "nnprof/detail/thread_state.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/session_metrics.hpp"

namespace nnprof {

class Report;
class Metrics;

/// What happens to spans once the memory cap is reached. Statistics and the call tree are
/// complete under either policy; only the individual spans of the timeline are affected.
enum class BufferPolicy : std::uint8_t {
  KeepFirst,       ///< keep the earliest spans; later ones are dropped and counted
  FlightRecorder,  ///< keep the most recent spans; the oldest are overwritten and counted
};

struct ProfilerOptions {
  std::size_t memory_cap_bytes = std::size_t{256} << 20;  ///< bound on span/event buffers
  BufferPolicy policy = BufferPolicy::KeepFirst;
  bool record_spans = true;       ///< false: statistics and call tree only (no timeline)
  bool measure_overhead = true;   ///< time an empty scope at start to report overhead
  /// Every scope is also an NVTX range (domain "nnprof"), so Nsight Systems shows nnprof's
  /// scopes on its timeline. NNPROF_NVTX=1 in the environment turns it on for every profiler.
  /// Off, it costs one predictable branch per scope entry and exit.
  bool nvtx = false;
  /// "[ADDR:]PORT": serve this profiler live over HTTP while it records (nnprof/live_server.hpp:
  /// a live page, Prometheus /metrics, pprof endpoints, JSON). Empty: no server. The address
  /// defaults to 127.0.0.1; any other needs a token (LiveServerOptions::token or NNPROF_TOKEN).
  std::string serve{};
};

namespace detail {
class Session;

/// The part of a profiler the inline hot path reads.
struct SessionCore {
  std::atomic<bool> enabled{true};
  std::uint64_t id = 0;  ///< unique for the process lifetime, never reused
  Session* session = nullptr;
};

struct TlsSlot {
  std::uint64_t owner = 0;
  ThreadState* state = nullptr;
};
/// The calling thread's state for the profiler it used last (others: attach_thread).
NNPROF_API extern constinit thread_local TlsSlot tls_current [[gnu::tls_model("initial-exec")]];

/// Finds or creates the calling thread's state for `core`; nullptr while the thread exits.
NNPROF_API ThreadState* attach_thread(SessionCore& core) noexcept;

inline ThreadState* thread_state(SessionCore& core) noexcept {
  if (tls_current.owner == core.id) [[likely]]
    return tls_current.state;
  return attach_thread(core);
}
}  // namespace detail

/// One row of Profiler::top_by_time: a scope name with its time and the work declared in it.
struct ScopeTiming {
  std::string name;
  std::uint64_t calls = 0;
  std::chrono::nanoseconds total{0};  ///< inclusive time, nested calls of the same name counted once
  double flops = 0.0;                 ///< declared in the scope or inside it
  std::uint64_t bytes = 0;
  double gflops_per_second = 0.0;     ///< 0 without declared FLOPs
  double gbytes_per_second = 0.0;     ///< 0 without declared bytes
  double arithmetic_intensity = 0.0;  ///< FLOPs per byte; 0 without declared bytes
};

class NNPROF_API Profiler {
 public:
  Profiler();
  explicit Profiler(const ProfilerOptions& options);
  ~Profiler();
  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  /// Opens a scope named `name` on the calling thread.
  void start(std::string_view name) noexcept;
  /// Closes the innermost open scope named `name` on the calling thread. A stop without a
  /// start, or on another thread, becomes a diagnostic of the profile.
  void stop(std::string_view name) noexcept;

  /// Inclusive time of all closed scopes named `name` (nested same-name calls counted once).
  [[nodiscard]] std::chrono::nanoseconds total_time(std::string_view name) const;
  /// Mean duration of one call of `name`.
  [[nodiscard]] std::chrono::nanoseconds avg_time(std::string_view name) const;
  [[nodiscard]] std::uint64_t call_count(std::string_view name) const;
  /// All statistics of `name`, or nothing when no scope of that name has closed.
  [[nodiscard]] std::optional<ScopeStats> stats(std::string_view name) const;

  /// Reports `count` work items (samples, tokens, batches) processed under scope `name`, so
  /// that reports give its throughput in items per second.
  void add_items(std::string_view name, std::uint64_t count) noexcept;

  /// Declares work done in the calling thread's innermost open scope: `flops` floating-point
  /// operations and `bytes` moved to or from memory (nnprof/flops.hpp computes both for common
  /// operations). Reports then give the scope's FLOP/s, bytes/s, arithmetic intensity and its
  /// place on the machine's roofline. Costs two adds; no lock, no allocation.
  void add_flops(double flops, std::uint64_t bytes = 0) noexcept;
  /// start(name) followed by add_flops(flops, bytes).
  void start_with_flops(std::string_view name, double flops, std::uint64_t bytes = 0) noexcept;
  /// The `n` scopes with the most inclusive time, longest first.
  [[nodiscard]] std::vector<ScopeTiming> top_by_time(std::size_t n) const;
  /// The bottlenecks of everything recorded so far, most severe first (nnprof/analysis.hpp).
  [[nodiscard]] std::vector<Bottleneck> analyze_bottlenecks(const BottleneckThresholds& thresholds = {}) const;

  /// Attaches `key` = `value` to the calling thread's innermost open scope (see
  /// ProfileGuard::arg): start("conv"); arg("input", "1x3x224x224"); ... stop("conv").
  /// Nothing outside a scope.
  void arg(std::string_view key, std::string_view value) noexcept { attach_arg(key, detail::arg_value(value)); }
  template <typename T>
    requires std::integral<T> || std::floating_point<T>
  void arg(std::string_view key, T value) noexcept {
    attach_arg(key, detail::arg_value(value));
  }

  /// Named memory counters (tensors, buffers) that the program reports itself.
  void record_alloc(std::string_view name, std::uint64_t bytes) noexcept;
  void record_free(std::string_view name, std::uint64_t bytes) noexcept;
  /// Sum of all named counters now, and the highest that sum has been: only what the program
  /// reported with record_alloc/record_free, not the process's memory (see current_rss()).
  [[nodiscard]] std::uint64_t current_memory() const noexcept;
  [[nodiscard]] std::uint64_t peak_memory() const noexcept;
  /// The process's resident memory (RAM, VmRSS) now, in bytes, whatever was reported with
  /// record_alloc: what a Python profiler's get_current_memory() means. The same for every
  /// profiler of the process (nnprof::get_current_memory()); 0 where it cannot be read.
  [[nodiscard]] std::uint64_t current_rss() const noexcept;

  /// Records a fact about the run in every later snapshot (Profile::annotations), as PyTorch's
  /// add_metadata does: annotate("git_commit", "8d2e793"), annotate("batch_size", "32"). The
  /// last value given for a key wins. Thread-safe; meant for a few calls, not the hot path.
  /// Throws std::invalid_argument when `key` is empty or not printable ASCII (' ' to '~').
  void annotate(std::string_view key, std::string_view value);

  /// How this process's clock maps onto rank 0's in a distributed job (nnprof/distributed.hpp),
  /// as the MPI interposer or `nnprof record`'s agent measured it. Every later snapshot of a
  /// process that is a rank (its launcher's RANK, OMPI_COMM_WORLD_RANK, PMI_RANK or
  /// SLURM_PROCID) carries it in Profile::ranks. Thread-safe; the last call wins.
  void set_clock_alignment(const ClockAlignment& clock);
  /// CLOCK_MONOTONIC when this profiler started: a profile's time t is this plus t nanoseconds.
  /// For code that compares this profiler's clock with another process's.
  [[nodiscard]] std::uint64_t start_monotonic_ns() const noexcept;

  /// While disabled, scopes cost one relaxed atomic load and record nothing.
  void set_enabled(bool enabled) noexcept { core_.enabled.store(enabled, std::memory_order_relaxed); }
  [[nodiscard]] bool enabled() const noexcept { return core_.enabled.load(std::memory_order_relaxed); }

  /// Everything recorded so far, without stopping the session.
  [[nodiscard]] Profile snapshot() const;
  /// snapshot() without the individual spans and memory events: the statistics, call tree,
  /// counters, CPU samples, heap, system tracks and metrics. What a live view or a periodic
  /// window needs; its cost does not grow with the number of spans kept.
  [[nodiscard]] Profile statistics_snapshot() const;
  /// Saves snapshot() as a .nnprof file, or as the report its extension names
  /// ("profile.json": the JSON report; see Profile::save).
  void save(const std::string& path) const;
  /// A report over snapshot(); print it with <<.
  [[nodiscard]] Report summary() const;
  /// Writes the text summary to stdout (or `out`).
  void print_summary() const;
  void print_summary(std::ostream& out) const;

  /// Counters, gauges and histograms by name recorded into this profiler (nnprof/metrics.hpp).
  [[nodiscard]] Metrics metrics() noexcept;

  /// Measures a region until the returned guard ends (nnprof/session_metrics.hpp): wall, CPU,
  /// user and system time, CPU utilisation, RSS, FLOP/s. The region is also a scope `name`.
  [[nodiscard]] ProfiledRegion profile(std::string_view name);
  /// The metrics of the last finished region named `name` (or of any name), also when an
  /// exception ended it; nothing when no such region has finished.
  [[nodiscard]] std::optional<RegionMetrics> get_metrics(std::string_view name) const;
  [[nodiscard]] std::optional<RegionMetrics> get_metrics() const;
  /// Wall time of every region name, in the order first finished, with its share of the total.
  [[nodiscard]] std::vector<RegionShare> get_timing_breakdown() const;
  /// True once a region has finished.
  [[nodiscard]] bool has_results() const noexcept;

  [[nodiscard]] const ProfilerOptions& options() const noexcept { return options_; }
  /// For the scope macros and guards.
  [[nodiscard]] detail::SessionCore& core() noexcept { return core_; }

 private:
  ProfilerOptions options_;
  void attach_arg(std::string_view key, const detail::ArgValue& value) noexcept;

  detail::SessionCore core_;
  std::unique_ptr<detail::Session> session_;
};

namespace detail {
NNPROF_API extern std::atomic<Profiler*> g_global_profiler;
NNPROF_API Profiler& create_global_profiler();
}  // namespace detail

/// The process-wide profiler used by NNPROF_SCOPE and the free functions below. Created on
/// first use with default options (NNPROF_MEMORY_CAP_MB and NNPROF_POLICY override them).
inline Profiler& global_profiler() {
  if (Profiler* p = detail::g_global_profiler.load(std::memory_order_acquire)) [[likely]]
    return *p;
  return detail::create_global_profiler();
}

NNPROF_API void start(std::string_view name) noexcept;
NNPROF_API void stop(std::string_view name) noexcept;
NNPROF_API void record_alloc(std::string_view name, std::uint64_t bytes) noexcept;
NNPROF_API void record_free(std::string_view name, std::uint64_t bytes) noexcept;
NNPROF_API void add_items(std::string_view name, std::uint64_t count) noexcept;
/// Profiler::add_flops on the global profiler.
NNPROF_API void add_flops(double flops, std::uint64_t bytes = 0) noexcept;
/// The process's resident memory (RAM, VmRSS from /proc/self/status) now, in bytes; 0 where
/// it cannot be read. Unlike Profiler::current_memory(), which sums the named counters of
/// record_alloc, this is the memory the operating system gives the process: heap, stacks,
/// mapped files, the GPU driver's host memory. Reading it costs a file read (microseconds).
[[nodiscard]] NNPROF_API std::uint64_t get_current_memory() noexcept;

/// Profiler::arg on the global profiler: a key/value argument of the innermost open scope.
inline void span_arg(std::string_view key, std::string_view value) noexcept { global_profiler().arg(key, value); }
template <typename T>
  requires std::integral<T> || std::floating_point<T>
inline void span_arg(std::string_view key, T value) noexcept {
  global_profiler().arg(key, value);
}

/// Names the calling thread in every profile (and, truncated to 15 bytes, for the OS).
NNPROF_API void set_thread_name(std::string_view name);

}  // namespace nnprof
