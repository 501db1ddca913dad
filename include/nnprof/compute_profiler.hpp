// ComputeProfiler: operation times, FLOP rates, throughput and bandwidth, for code that only
// wants to time named operations and declare the work they do.
//
//   nnprof::ComputeProfiler profiler;
//   profiler.start_with_flops("matmul", 2.0 * m * n * k, bytes_moved);
//   ... the multiplication ...
//   profiler.stop("matmul");
//   for (const auto& op : profiler.top_by_time(5))
//     std::cout << op.name << ": " << op.call_count << " calls, " << op.flops_per_second() / 1e9 << " GFLOP/s\n";
//
// It is a Profiler underneath (profiler()), so everything a Profiler gives (reports, bottlenecks,
// snapshots) is there for the same recording.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

/// One operation of a ComputeProfiler: how often it ran, how long, and the work declared in it.
struct OperationStats {
  std::string name;
  std::uint64_t call_count = 0;
  std::chrono::nanoseconds total{0};  ///< inclusive time, nested calls of the same name counted once
  double flops = 0.0;                 ///< declared in the operation or inside it, over all calls
  std::uint64_t bytes = 0;            ///< bytes moved, declared with the FLOPs

  [[nodiscard]] std::chrono::nanoseconds total_time() const noexcept { return total; }
  /// Mean time of one call; 0 before any call.
  [[nodiscard]] std::chrono::nanoseconds avg_time() const noexcept {
    return call_count == 0 ? std::chrono::nanoseconds{0}
                           : total / static_cast<std::chrono::nanoseconds::rep>(call_count);
  }
  /// Declared FLOPs per second of time in the operation (throughput); 0 without FLOPs.
  [[nodiscard]] double flops_per_second() const noexcept { return per_second(flops); }
  /// Declared bytes per second of time in the operation (bandwidth); 0 without bytes.
  [[nodiscard]] double bytes_per_second() const noexcept { return per_second(static_cast<double>(bytes)); }
  /// FLOPs per byte moved; 0 when no bytes were declared.
  [[nodiscard]] double arithmetic_intensity() const noexcept {
    return bytes == 0 ? 0.0 : flops / static_cast<double>(bytes);
  }

 private:
  [[nodiscard]] double per_second(double amount) const noexcept {
    return total.count() <= 0 ? 0.0 : amount * 1e9 / static_cast<double>(total.count());
  }
};

/// Times named operations and the work they declare. Thread-safe as Profiler is: each thread
/// starts and stops its own operations.
class NNPROF_API ComputeProfiler {
 public:
  ComputeProfiler();
  explicit ComputeProfiler(const ProfilerOptions& options);

  /// Opens operation `name` on the calling thread.
  void start(std::string_view name) noexcept;
  /// Opens operation `name` and declares the `flops` and `bytes` of this call.
  void start_with_flops(std::string_view name, double flops, std::uint64_t bytes = 0) noexcept;
  /// Declares more work in the calling thread's innermost open operation (once shapes are known).
  void add_flops(double flops, std::uint64_t bytes = 0) noexcept;
  /// Closes the innermost open operation `name` of the calling thread.
  void stop(std::string_view name) noexcept;

  /// The `n` operations with the most time, longest first.
  [[nodiscard]] std::vector<OperationStats> top_by_time(std::size_t n) const;
  /// Every operation, longest first.
  [[nodiscard]] std::vector<OperationStats> all_stats() const;
  /// The operation `name`, or nothing when it has not completed a call.
  [[nodiscard]] std::optional<OperationStats> stats(std::string_view name) const;

  /// The Profiler that records the operations: for summary(), analyze_bottlenecks(), save().
  [[nodiscard]] Profiler& profiler() noexcept { return profiler_; }
  [[nodiscard]] const Profiler& profiler() const noexcept { return profiler_; }

 private:
  Profiler profiler_;
};

}  // namespace nnprof
