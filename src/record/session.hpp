// A recording session: the threads that record into one profiler, the chunks they hand off,
// the names they intern, and the background drainer that keeps them supplied.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>
#include <unordered_map>
#include <vector>

#include "nnprof/profiler.hpp"
#include "record/heap_source.hpp"
#include "record/metric_registry.hpp"
#include "record/region_log.hpp"
#include "record/raw_snapshot.hpp"
#include "record/thread_record.hpp"

namespace nnprof::detail {

/// A name given at run time (start("x"), record_alloc("x", n)): its call site for scopes and
/// its memory counter. Entries never move once created.
struct NamedEntry {
  std::string name;
  SourceLocation site{};
  std::uint32_t id = 0;
  std::atomic<std::int64_t> current{0};
  std::atomic<std::uint64_t> peak{0};
  std::atomic<std::uint64_t> alloc_bytes{0};
  std::atomic<std::uint64_t> freed_bytes{0};
  std::atomic<std::uint64_t> alloc_count{0};
  std::atomic<std::uint64_t> free_count{0};
  std::atomic<std::uint64_t> largest_alloc{0};
  std::atomic<std::uint64_t> items{0};  // work items reported for the scope of this name
};

class Session {
 public:
  Session(SessionCore& core, const ProfilerOptions& options);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// The id of the profiler this session records for (SessionCore::id): a thread's cached
  /// state belongs to this session when detail::tls_current.owner equals it.
  [[nodiscard]] std::uint64_t profiler_id() const noexcept { return core_.id; }
  /// False while the profiler is disabled: collectors then record nothing either.
  [[nodiscard]] bool recording() const noexcept { return core_.enabled.load(std::memory_order_relaxed); }
  /// The calling thread's state in this session: the cached one when it is current (inline),
  /// otherwise attach_calling_thread. nullptr while the thread exits.
  ThreadState* calling_thread() noexcept { return thread_state(core_); }
  /// Finds or creates the calling thread's state in this session (detail::attach_thread).
  ThreadState* attach_calling_thread() noexcept { return attach_thread(core_); }

  /// A new record for the calling thread, with its first chunks.
  std::shared_ptr<ThreadRecord> register_thread();
  /// The entry for `name`, created on first use (locks; callers cache per thread).
  NamedEntry* intern(std::string_view name);
  /// The calling thread's cached lookup of `name`.
  NamedEntry* intern_cached(ThreadState* ts, std::string_view name);

  void record_memory(ThreadState* ts, NamedEntry* entry, std::int64_t delta) noexcept;
  [[nodiscard]] std::int64_t memory_current() const noexcept { return memory_current_.load(std::memory_order_relaxed); }
  [[nodiscard]] std::uint64_t memory_peak() const noexcept { return memory_peak_.load(std::memory_order_relaxed); }

  /// Makes every later snapshot include the heap as `source` sees it.
  void set_heap_source(std::shared_ptr<HeapSource> source) {
    std::lock_guard lock(heap_mu_);
    heap_source_ = std::move(source);
  }
  std::shared_ptr<HeapSource> heap_source() {
    std::lock_guard lock(heap_mu_);
    return heap_source_;
  }

  /// Makes every later snapshot include the CPU samples `source` holds.
  void set_cpu_source(std::shared_ptr<CpuSource> source) {
    std::lock_guard lock(heap_mu_);
    cpu_source_ = std::move(source);
  }
  std::shared_ptr<CpuSource> cpu_source() {
    std::lock_guard lock(heap_mu_);
    return cpu_source_;
  }

  /// Makes every later snapshot include the GPU activity `source` traced.
  void set_gpu_source(std::shared_ptr<GpuSource> source) {
    std::lock_guard lock(heap_mu_);
    gpu_source_ = std::move(source);
  }
  std::shared_ptr<GpuSource> gpu_source() {
    std::lock_guard lock(heap_mu_);
    return gpu_source_;
  }

  /// Makes every later snapshot include what the system monitor `source` sampled.
  void set_system_source(std::shared_ptr<SystemSource> source) {
    std::lock_guard lock(heap_mu_);
    system_source_ = std::move(source);
  }
  std::shared_ptr<SystemSource> system_source() {
    std::lock_guard lock(heap_mu_);
    return system_source_;
  }

  /// How this process's clock maps onto rank 0's (Profiler::set_clock_alignment).
  void set_clock_alignment(const ClockAlignment& clock) {
    std::lock_guard lock(clock_mu_);
    clock_alignment_ = clock;
  }
  [[nodiscard]] ClockAlignment clock_alignment() const {
    std::lock_guard lock(clock_mu_);
    return clock_alignment_;
  }
  /// CLOCK_MONOTONIC at the session's start: the origin of a profile's times.
  [[nodiscard]] std::uint64_t start_monotonic_ns() const noexcept { return start_.monotonic_ns; }
  /// Sets run annotation `key` to `value` (Profiler::annotate, which checks the key).
  void annotate(std::string_view key, std::string_view value) {
    std::lock_guard lock(annotations_mu_);
    annotations_.insert_or_assign(std::string(key), std::string(value));
  }

  /// The names and kinds of the metrics recorded into this session.
  MetricRegistry& metrics() noexcept { return metrics_; }
  /// The results of finished regions (Profiler::profile).
  RegionLog& regions() noexcept { return regions_; }

  /// Times an empty scope on the calling thread (the per-scope overhead reported later).
  void measure_overhead();
  /// Everything recorded so far; `with_records` false skips spans and memory events, and
  /// `with_sources` false the collectors' data (heap, CPU samples, GPU, system monitor).
  RawSnapshot snapshot(bool with_records, bool with_sources);
  RawSnapshot snapshot(bool with_records) { return snapshot(with_records, with_records); }
  /// The closed calls of the scopes named `name` and their inclusive time (a recursive call
  /// counted once, at its outermost level), summed over the threads' call trees without a
  /// snapshot: what Profiler::call_count and total_time answer.
  struct ScopeTotals {
    std::uint64_t calls = 0;
    std::uint64_t inclusive_ticks = 0;
    ClockPair start, now;  ///< to convert ticks as a snapshot taken now would
    double nominal_ns_per_tick = 1.0;
  };
  ScopeTotals scope_totals(std::string_view name);
  /// A snapshot of only what the statistics of `name` depend on: per thread, the nodes of that
  /// name with their ancestors and subtrees, and the counter of that name. The profile built
  /// from it has exactly the ScopeStats of `name` that a full snapshot's profile has.
  RawSnapshot scope_snapshot(std::string_view name);
  /// Asks the drainer to run now (a thread is low on spare chunks).
  void wake() noexcept;
  /// A chunk for a thread whose spares ran out: from the pool, freshly allocated within the
  /// cap, or recycled (flight recorder). nullptr when the cap forbids it.
  Chunk* chunk_for_starving_thread() noexcept;
  /// Keep-first past the cap: a scratch chunk lent to `p`'s thread beyond the cap (at most
  /// ThreadPrivate::kScratchChunks per thread, for its lifetime), whose records the session
  /// does not keep; nullptr when all are lent or memory is short. Waits for the session's lock:
  /// at most that many times per thread.
  Chunk* lend_scratch_chunk(ThreadPrivate& p) noexcept;
  /// True once the cap allows no new chunk and the policy keeps the first spans: a chunk can
  /// then only come from one a thread left behind.
  [[nodiscard]] bool keeps_first_at_cap() const noexcept {
    return options_.policy == BufferPolicy::KeepFirst && cap_reached();
  }
  /// True once the cap allows no new chunk: the drainer has nothing left to pre-fault.
  [[nodiscard]] bool cap_reached() const noexcept {
    return allocated_bytes_.load(std::memory_order_relaxed) + Chunk::kBytes > options_.memory_cap_bytes;
  }

 private:
  /// A snapshot holding the session's own facts (start, clock, cap, policy), no thread yet.
  RawSnapshot empty_snapshot() const;
  void drainer_main();
  void drain_locked();
  Chunk* obtain_chunk_locked() noexcept;
  Chunk* take_pooled_locked() noexcept;
  Chunk* allocate_within_cap() noexcept;
  Chunk* recycle_oldest_locked() noexcept;
  void keep_locked(Chunk* c) noexcept;
  /// Empties scratch chunk `c` of `p` (see ThreadPrivate::scratch) and hands it back as a spare,
  /// or frees it once the thread has ended.
  void empty_scratch_locked(ThreadPrivate& p, Chunk* c) noexcept;
  static void release_scratch_locked(ThreadPrivate& p, Chunk* c) noexcept;
  void keep_handed_off_locked() noexcept;
  /// The chunk `p`'s thread is filling (nullptr: none), for a snapshot: the chunks the thread
  /// has handed off are kept first (and appended to `newly_kept` when given), so that a chunk
  /// handed off while the snapshot runs is counted once, as kept, and not also as the one
  /// being filled.
  const Chunk* current_chunk_locked(ThreadPrivate& p, std::vector<const Chunk*>* newly_kept) noexcept;
  void retire_thread_locked(ThreadRecord& rec);

  SessionCore& core_;
  const ProfilerOptions options_;
  const ClockPair start_;
  const std::int64_t unix_start_ns_;
  double overhead_ticks_per_scope_ = 0.0;

  std::mutex mu_;  // threads_, kept_, pool_, counters below
  std::vector<std::shared_ptr<ThreadRecord>> threads_;
  std::deque<Chunk*> kept_;  // full chunks in hand-off order
  std::vector<Chunk*> pool_;  // empty chunks ready to hand out
  std::atomic<std::uint64_t> allocated_bytes_{0};
  std::atomic<std::uint64_t> hot_path_chunks_{0};  // allocated on a recording thread
  std::uint64_t next_sequence_ = 0;
  std::uint64_t spans_overwritten_ = 0;
  std::uint64_t events_overwritten_ = 0;
  std::uint64_t flows_overwritten_ = 0;

  std::mutex names_mu_;
  std::unordered_map<std::string_view, std::unique_ptr<NamedEntry>> names_;
  std::vector<NamedEntry*> names_by_id_;

  std::atomic<std::int64_t> memory_current_{0};
  std::atomic<std::uint64_t> memory_peak_{0};
  std::atomic<std::uint64_t> memory_peak_ticks_{0};

  MetricRegistry metrics_;
  RegionLog regions_;

  std::mutex heap_mu_;  // heap_source_, cpu_source_, gpu_source_, system_source_
  std::shared_ptr<HeapSource> heap_source_;
  std::shared_ptr<CpuSource> cpu_source_;
  std::shared_ptr<GpuSource> gpu_source_;
  std::shared_ptr<SystemSource> system_source_;

  mutable std::mutex clock_mu_;
  ClockAlignment clock_alignment_;
  std::mutex annotations_mu_;
  std::map<std::string, std::string> annotations_;

  std::mutex wake_mu_;
  std::condition_variable wake_cv_;
  bool wake_requested_ = false;
  bool stopping_ = false;
  std::thread drainer_;
};

}  // namespace nnprof::detail
