// Metrics recorded by name (nnprof/metrics.hpp): the session's registry of names and kinds,
// each thread's running statistics per metric, and what a snapshot hands to the model.
//
// An observation updates the calling thread's cell for that metric (owner-only relaxed
// atomics: plain moves on x86-64, no locked instruction) and writes one Record of kind Metric
// into the thread's chunk, like a span: so the points share the chunks' cap, hand-off and
// drop counting, and the statistics stay complete when points are dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "nnprof/detail/thread_state.hpp"
#include "nnprof/metric_series.hpp"

namespace nnprof::detail {

struct ThreadRecord;

/// Most distinct metric names per session; more are refused and counted.
inline constexpr std::uint32_t kMaxMetrics = 4096;

/// A metric name: created on first use, never moved or removed while the session lives.
struct MetricEntry {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::Counter;
  std::uint32_t id = 0;
  /// Name-based calls of another kind (set() on a counter, ...), ignored and counted.
  std::atomic<std::uint64_t> misuses{0};
};

/// Running statistics of one metric on one thread, in the metric's unit. Written by the
/// owning thread only; snapshots read them concurrently.
struct MetricCell {
  std::atomic<std::uint64_t> count{0};
  std::atomic<double> sum{0.0};
  std::atomic<double> min{0.0};
  std::atomic<double> max{0.0};
  // Deviations from the first value: the variance stays exact where a plain sum of squares
  // would cancel catastrophically (large values with a small spread).
  std::atomic<double> shift{0.0};
  std::atomic<double> sum_dev{0.0};
  std::atomic<double> sum_dev_sq{0.0};
  std::atomic<double> last{0.0};
  std::atomic<std::uint64_t> last_ticks{0};
};

/// A thread's metric state, part of its ThreadPrivate.
struct MetricThread {
  static constexpr std::uint32_t kCellsPerBlock = 64;
  static constexpr std::uint32_t kBlocks = kMaxMetrics / kCellsPerBlock;
  std::atomic<MetricCell*> blocks[kBlocks] = {};  // allocated by the owner on first use
  std::unordered_map<std::string_view, MetricEntry*> cache;  // owner only: names it used

  MetricThread() = default;
  ~MetricThread();
  MetricThread(const MetricThread&) = delete;
  MetricThread& operator=(const MetricThread&) = delete;

  /// The cell of metric `id`, or nullptr before this thread first recorded into its block.
  [[nodiscard]] MetricCell* cell(std::uint32_t id) const noexcept {
    MetricCell* b = blocks[id / kCellsPerBlock].load(std::memory_order_acquire);
    return b == nullptr ? nullptr : b + id % kCellsPerBlock;
  }
};

/// One thread's statistics of one metric, as a snapshot read them.
struct RawMetricCell {
  std::uint32_t thread = 0;
  std::uint64_t count = 0;
  double sum = 0.0, min = 0.0, max = 0.0, shift = 0.0, sum_dev = 0.0, sum_dev_sq = 0.0, last = 0.0;
  std::uint64_t last_ticks = 0;
};

struct RawMetric {
  std::string name;
  std::string unit;
  MetricKind kind = MetricKind::Counter;
  std::uint64_t misuses = 0;
  std::vector<RawMetricCell> cells;  ///< threads that recorded it
};

/// What the metric registry hands to the model; points come as the threads' Metric records.
struct RawMetrics {
  std::vector<RawMetric> metrics;  ///< indexed by metric id (Record::ref)
  std::uint64_t refused = 0;       ///< observations of names beyond kMaxMetrics
};

class MetricRegistry {
 public:
  /// The entry of `name`, created with `kind` and `unit` on first use. nullptr when the
  /// registry is full (counted). An existing entry is returned whatever its kind.
  MetricEntry* get(std::string_view name, MetricKind kind, std::string_view unit);
  /// The existing entry of `name`, or nullptr.
  [[nodiscard]] const MetricEntry* find(std::string_view name) const;
  void note_refused() noexcept { refused_.fetch_add(1, std::memory_order_relaxed); }

  /// Every metric's per-thread statistics. The caller holds the session's lock over `threads`
  /// and has already read their records, so every recorded point is counted in a cell.
  void snapshot(const std::vector<std::shared_ptr<ThreadRecord>>& threads, RawMetrics& out) const;

 private:
  mutable std::mutex mu_;
  std::unordered_map<std::string_view, std::unique_ptr<MetricEntry>> by_name_;
  std::vector<MetricEntry*> by_id_;
  std::atomic<std::uint64_t> refused_{0};
};

/// The calling thread's entry for `name` of `kind` (its cache first, then the registry).
/// nullptr when the name has another kind (counted as a misuse) or the registry is full.
MetricEntry* metric_for_thread(ThreadState* ts, MetricRegistry& registry, std::string_view name, MetricKind kind,
                               std::string_view unit) noexcept;

/// Records one observation of metric `id` on the calling thread: its cell, and a point.
NNPROF_API void record_metric(ThreadState* ts, std::uint32_t id, double value) noexcept;

}  // namespace nnprof::detail
