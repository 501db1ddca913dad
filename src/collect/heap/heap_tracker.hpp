// The heap tracker: the process-wide receiver of the allocation hooks. It attributes every
// block to the innermost open scope of the allocating thread, keeps the live table, the
// heap-in-use and peak, sampled stacks and the memory timeline, and hands a RawHeap to
// snapshots of the profiler it tracks into.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "collect/heap/heap_fast_path.hpp"
#include "collect/heap/thread_cache.hpp"
#include "nnprof/memory.hpp"
#include "record/heap_source.hpp"
#include "collect/stack/stack_ids.hpp"
#include "record/raw_snapshot.hpp"

namespace nnprof::detail {

class TrackedHeap;

class HeapTracker {
 public:
  /// The one tracker of the process (the hooks are process-wide). Never destroyed: hooks may
  /// run in static destructors after everything else is gone.
  static HeapTracker& instance();

  /// Starts tracking into `session`, which keeps the tracked heap as its heap source.
  /// Throws nnprof::Error when the hooks are missing or tracking already runs.
  /// Returns the run id (see MemoryTrackingOptions::partial_ok).
  std::uint64_t start(Session& session, const MemoryTrackingOptions& options);
  /// Stops run `run` (0: whichever runs); the session's later snapshots show the heap as it
  /// was at this moment.
  /// `calling_thread_is_root` false: see MemoryTracking::stop_at_exit.
  void stop(std::uint64_t run = 0, bool calling_thread_is_root = true) noexcept;
  [[nodiscard]] bool active() const noexcept { return active_.load(std::memory_order_acquire); }
  [[nodiscard]] HeapCounters counters() const noexcept;

  // The hooks' entry points (see heap_hooks_abi.hpp).
  void on_alloc(void* block, std::size_t size, std::uintptr_t caller) noexcept;
  void on_free(void* block) noexcept;
  void flush(HeapThread& t, Node* node) noexcept;
  void count_alloc_slow(HeapThread& t, Node* node, std::uint64_t size) noexcept;
  /// A free counted at `here` by thread `t`; `own`: `owner` is a node of t's tree.
  void count_free(HeapThread& t, Node* here, Node* owner, std::uint64_t size, bool own) noexcept;
  bool take(void* block, collect::LiveBlockInfo& info) noexcept;
  void release(const collect::LiveBlockInfo& info) noexcept;  // account for a block taken out
  void restore(void* block, const collect::LiveBlockInfo& info) noexcept;  // put one back
  /// The calling thread ends: its cache's blocks move to the shared table.
  void thread_exit() noexcept;

  /// Fills `out` with the heap as it is now.
  void snapshot(RawHeap& out, bool calling_thread_is_root = true);
  /// Drops the first `points` points of the memory timeline (TrackedHeap::discard_timeline).
  void discard_samples(std::size_t points) noexcept;
  /// Appends every thread's batched counts with its node (see heap_fast_path.hpp).
  void read_batches(std::vector<BatchedNodeHeap>& out) const;

  /// The flush threshold: a thread adds its heap change to the global counter when it passes
  /// this many bytes (or may set a new peak), so the peak is exact to within this per thread.
  static constexpr std::int64_t kFlushBytes = kHeapFlushBytes;

 private:
  HeapTracker() = default;
  HeapThread* current_thread() noexcept;
  HeapThread* attach() noexcept;
  void release(HeapThread* t, const collect::LiveBlockInfo& info) noexcept;
  void set_up_cache(HeapThread& t) noexcept;
  // The batch of a thread (heap_fast_path.hpp). The owner only, but take_batch.
  bool switch_batch(HeapThread& t, Node* node) noexcept;
  void drop_taken_batch(HeapThread& t) noexcept;
  void reset_batch(HeapThread& t) noexcept;
  void refresh_limit(HeapThread& t) noexcept;
  void take_batch(HeapThread& t) noexcept;  // tracking stopped: any thread, under mu_
  void note_peak(std::int64_t total, HeapThread& t, Node* node) noexcept;
  std::uint32_t sample_stack(HeapThread& t) noexcept;
  void reset_countdown(HeapThread& t) noexcept;
  void sampler_main();
  void take_sample();
  void collect_leaks(RawHeap& out, bool calling_thread_is_root);
  void note_fork() noexcept;
  void forked_child() noexcept;
  bool in_own_code(std::uintptr_t pc) const noexcept;

  // Read by the general path of the hooks (the fast path reads g_heap_hot: the run, the
  // heap in use and its peak).
  std::atomic<bool> active_{false};
  Session* session_ = nullptr;  ///< the session of the current (or last) run
  MemoryTrackingOptions options_;
  std::uint64_t start_ticks_ = 0;
  collect::LiveBlocks live_;

  alignas(64) std::atomic<bool> peak_lock_{false};
  std::uint64_t peak_ticks_ = 0;
  Node* peak_node_ = nullptr;
  std::uint32_t peak_thread_ = ~std::uint32_t{0};

  alignas(64) mutable std::mutex mu_;  // threads_, stacks_, samples_, thread caches
  std::vector<HeapThread*> threads_;  // this run's threads
  std::vector<HeapThread*> all_threads_;  // every HeapThread ever made (reused across runs)
  collect::StackIds stack_ids_;
  std::vector<std::vector<std::uintptr_t>> stacks_;
  std::uint64_t stacks_dropped_ = 0;
  std::vector<RawHeapSample> samples_;
  std::uint64_t rss_initial_ = 0;
  std::vector<std::string> warnings_;
  std::shared_ptr<TrackedHeap> source_;
  std::atomic<std::uint64_t> forks_{0};
  struct CodeRange {
    std::uintptr_t begin = 0, end = 0;
  };
  std::vector<CodeRange> own_code_;  // libnnprof and the hooks: trimmed from sampled stacks
  CodeRange loader_code_;            // ld.so: its blocks (TLS vectors) are referenced from thread
                                     // control blocks, which the leak check does not scan

  std::mutex sampler_mu_;
  std::condition_variable sampler_cv_;
  bool sampler_stop_ = false;
  std::thread sampler_;

  friend class TrackedHeap;
  friend void install_fork_handlers();
};

/// The heap source a tracked session reads: the live tracker while it runs, then the heap
/// as it was when tracking stopped.
class TrackedHeap : public HeapSource {
 public:
  void snapshot_heap(RawHeap& out) override;
  void batched_heap(std::vector<BatchedNodeHeap>& out) override;
  void discard_timeline(std::size_t points) noexcept override;
  void freeze(RawHeap heap);

 private:
  std::mutex mu_;
  bool frozen_ = false;
  RawHeap heap_;
};

}  // namespace nnprof::detail
