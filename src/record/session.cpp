// Session: registers threads, supplies and collects their chunks, interns names, and takes
// snapshots. The drainer thread does the slow work (allocating and pre-faulting chunks,
// moving full ones aside, recycling under the flight-recorder policy) off the hot threads.
#include "record/session.hpp"

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string_view>
#include <ctime>
#include <fstream>

#include "record/internal_allocations.hpp"
#include "record/thread_ops.hpp"

namespace nnprof::detail {

namespace {
constexpr SourceLocation kCalibrationSite{"[nnprof overhead calibration]", "", "", 0};
constexpr std::size_t kMaxSpareChunks = 32;
// Spare chunks a thread may get by recycling kept ones (flight recorder at its cap).
constexpr std::size_t kMinRecycledSpares = 2;

std::int64_t unix_now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

bool nvtx_from_environment() {
  static const bool on = [] {
    const char* v = std::getenv("NNPROF_NVTX");
    return v != nullptr && std::string_view(v) == "1";
  }();
  return on;
}

/// A node's counters as a snapshot sees them (relaxed reads; the owner may be writing).
void read_node(const Node& node, std::uint32_t parent, RawNode& r) {
  r.site = node.site;
  r.parent = parent;
  r.depth = node.depth;
  r.count = node.count.load(std::memory_order_relaxed);
  r.total = node.total.load(std::memory_order_relaxed);
  r.self = node.self.load(std::memory_order_relaxed);
  r.min = node.min.load(std::memory_order_relaxed);
  r.max = node.max.load(std::memory_order_relaxed);
  r.shift = node.shift.load(std::memory_order_relaxed);
  r.sum_dev = node.sum_dev.load(std::memory_order_relaxed);
  r.sum_dev_sq = node.sum_dev_sq.load(std::memory_order_relaxed);
  r.alloc_bytes = node.alloc_bytes.load(std::memory_order_relaxed);
  r.alloc_count = node.alloc_count.load(std::memory_order_relaxed);
  r.free_bytes = node.free_bytes.load(std::memory_order_relaxed);
  r.free_count = node.free_count.load(std::memory_order_relaxed);
  r.flops = node.flops.load(std::memory_order_relaxed);
  r.bytes_moved = node.bytes_moved.load(std::memory_order_relaxed);
  read_heap_fields(node, r.heap);
  for (unsigned row = 0; row < kHistogramRows; ++row) {
    const HistogramRow* hr = node.rows[row].load(std::memory_order_acquire);
    if (hr == nullptr) continue;
    for (unsigned sub = 0; sub < kHistogramSubBuckets; ++sub) {
      const std::uint64_t c = hr->bucket[sub].load(std::memory_order_relaxed);
      if (c != 0) r.buckets.emplace_back(row * kHistogramSubBuckets + sub, c);
    }
  }
}

/// Adds `count` durations in bucket `flat` to a node's sorted (bucket, count) list.
void add_to_buckets(std::vector<std::pair<std::uint32_t, std::uint64_t>>& buckets, std::uint32_t flat,
                    std::uint64_t count) {
  const auto it = std::lower_bound(buckets.begin(), buckets.end(), flat,
                                   [](const auto& bucket, std::uint32_t f) { return bucket.first < f; });
  if (it != buckets.end() && it->first == flat) {
    it->second += count;
  } else {
    buckets.emplace(it, flat, count);
  }
}

/// Adds the histogram of the spans of node `index` that the session has kept (keep_locked)
/// to `r`, whose buckets are sorted: one merge of two sorted lists. Under the session mutex.
void add_kept_durations(const ThreadPrivate& p, std::uint32_t index, RawNode& r) {
  if (index >= p.kept_rows.size()) return;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> kept;
  for (unsigned row = 0; row < kHistogramRows; ++row) {
    const HistogramRow* hr = p.kept_rows[index][row];
    if (hr == nullptr) continue;
    for (unsigned sub = 0; sub < kHistogramSubBuckets; ++sub)
      if (const std::uint64_t c = hr->bucket[sub].load(std::memory_order_relaxed); c != 0)
        kept.emplace_back(row * kHistogramSubBuckets + sub, c);
  }
  if (kept.empty()) return;
  std::vector<std::pair<std::uint32_t, std::uint64_t>> merged;
  merged.reserve(r.buckets.size() + kept.size());
  auto a = r.buckets.begin();
  auto b = kept.begin();
  while (a != r.buckets.end() || b != kept.end()) {
    if (b == kept.end() || (a != r.buckets.end() && a->first < b->first)) {
      merged.push_back(*a++);
    } else if (a == r.buckets.end() || b->first < a->first) {
      merged.push_back(*b++);
    } else {
      merged.emplace_back(a->first, a->second + b->second);
      ++a;
      ++b;
    }
  }
  r.buckets = std::move(merged);
}

/// Adds the first `end` records' spans of `c`, the chunk a thread is still filling, which no
/// one has counted into a histogram yet (keep_locked does when the session keeps the chunk),
/// to the histograms of a snapshot's nodes. `kept`, when given, maps a node index to its place
/// in `nodes` (kNone: left out). Under the session mutex, which the chunk's recycling needs.
void add_unkept_durations(const Chunk* c, std::uint32_t end, std::vector<RawNode>& nodes,
                          const std::vector<std::uint32_t>* kept = nullptr) {
  if (c == nullptr) return;
  const Record* r = c->records();
  for (std::uint32_t i = 0; i < end; ++i) {
    if (r[i].kind != RecordKind::Span) continue;
    std::uint32_t at = r[i].ref;
    if (kept != nullptr) at = at < kept->size() ? (*kept)[at] : kNone;
    if (at >= nodes.size()) continue;
    const BucketIndex b = histogram_bucket(r[i].t1 - r[i].t0);
    add_to_buckets(nodes[at].buckets, b.row * kHistogramSubBuckets + b.sub, 1);
  }
}

std::string read_task_comm(std::int64_t tid) {
  std::ifstream in("/proc/self/task/" + std::to_string(tid) + "/comm");
  std::string name;
  std::getline(in, name);
  return name;
}
}  // namespace

namespace {
// The session's start, read after the clock's one-time calibration (a 10 ms sleep in the first
// session of a process): a session's time is the program's, so two runs of the same work
// compare equal whichever came first.
ClockPair calibrated_start() {
  clock::nominal_ns_per_tick();
  return clock::read_pair();
}
}  // namespace

Session::Session(SessionCore& core, const ProfilerOptions& options)
    : core_(core), options_(options), start_(calibrated_start()), unix_start_ns_(unix_now_ns()) {
  drainer_ = std::thread([this] { drainer_main(); });
}

Session::~Session() {
  {
    std::lock_guard lock(wake_mu_);
    stopping_ = true;
  }
  wake_cv_.notify_one();
  drainer_.join();
  std::lock_guard lock(mu_);
  for (auto& rec : threads_) {
    while (Chunk* c = rec->priv.full.pop()) kept_.push_back(c);
    if (rec->priv.exited.load(std::memory_order_acquire)) retire_thread_locked(*rec);
    rec->priv.session = nullptr;
    rec->priv.orphaned.store(true, std::memory_order_release);
  }
  for (Chunk* c : kept_) free_chunk(c);
  for (Chunk* c : pool_) free_chunk(c);
}

std::shared_ptr<ThreadRecord> Session::register_thread() {
  auto rec = std::make_shared<ThreadRecord>(full_ring_capacity(options_.memory_cap_bytes));
  rec->priv.session = this;
  rec->priv.os_tid = current_os_tid();
  rec->priv.name = current_thread_name();
  rec->state.keep_spans = options_.record_spans;
  rec->state.nvtx = options_.nvtx || nvtx_from_environment();
  rec->priv.rows.refill();  // the first slab, carved here rather than on the recording thread
  std::lock_guard lock(mu_);
  rec->priv.index = static_cast<std::uint32_t>(threads_.size());
  rec->priv.node_at(0)->thread = rec->priv.index;
  // Ids that flow_begin() makes: the top bit set (user ids stay below it), the thread's index
  // above a 40-bit per-thread count, so threads never hand out the same id.
  rec->state.next_flow_id = (std::uint64_t{1} << 63) | (std::uint64_t{rec->priv.index} << 40) | 1;
  if (options_.record_spans) {
    // Two spares now; the drainer adds more as the thread shows how fast it records.
    for (int i = 0; i < 2; ++i)
      if (Chunk* c = obtain_chunk_locked()) rec->priv.spare.push(c);
  }
  threads_.push_back(rec);
  return rec;
}

NamedEntry* Session::intern(std::string_view name) {
  InternalAllocations internal;
  std::lock_guard lock(names_mu_);
  if (auto it = names_.find(name); it != names_.end()) return it->second.get();
  auto entry = std::make_unique<NamedEntry>();
  entry->name.assign(name);
  entry->site = SourceLocation{entry->name.c_str(), "", "", 0};
  entry->id = static_cast<std::uint32_t>(names_by_id_.size());
  NamedEntry* raw = entry.get();
  names_by_id_.push_back(raw);
  names_.emplace(std::string_view(raw->name), std::move(entry));
  return raw;
}

NamedEntry* Session::intern_cached(ThreadState* ts, std::string_view name) {
  InternalAllocations internal;
  auto& cache = ts->priv->name_cache;
  if (auto it = cache.find(name); it != cache.end()) [[likely]]
    return it->second;
  NamedEntry* e = intern(name);
  cache.emplace(std::string_view(e->name), e);
  return e;
}

void Session::record_memory(ThreadState* ts, NamedEntry* e, std::int64_t delta) noexcept {
  const std::uint64_t now = read_ticks();
  const std::uint64_t bytes = static_cast<std::uint64_t>(delta < 0 ? -delta : delta);
  if (delta >= 0) {
    e->alloc_bytes.fetch_add(bytes, std::memory_order_relaxed);
    e->alloc_count.fetch_add(1, std::memory_order_relaxed);
    std::uint64_t largest = e->largest_alloc.load(std::memory_order_relaxed);
    while (bytes > largest && !e->largest_alloc.compare_exchange_weak(largest, bytes, std::memory_order_relaxed)) {
    }
  } else {
    e->freed_bytes.fetch_add(bytes, std::memory_order_relaxed);
    e->free_count.fetch_add(1, std::memory_order_relaxed);
  }
  const std::int64_t cur = e->current.fetch_add(delta, std::memory_order_relaxed) + delta;
  if (cur < 0) ts->priv->note(ThreadEventKind::NegativeMemory, &e->site);
  std::uint64_t peak = e->peak.load(std::memory_order_relaxed);
  while (cur > 0 && static_cast<std::uint64_t>(cur) > peak &&
         !e->peak.compare_exchange_weak(peak, static_cast<std::uint64_t>(cur), std::memory_order_relaxed)) {
  }
  const std::int64_t total = memory_current_.fetch_add(delta, std::memory_order_relaxed) + delta;
  std::uint64_t tpeak = memory_peak_.load(std::memory_order_relaxed);
  while (total > 0 && static_cast<std::uint64_t>(total) > tpeak) {
    if (memory_peak_.compare_exchange_weak(tpeak, static_cast<std::uint64_t>(total), std::memory_order_relaxed)) {
      memory_peak_ticks_.store(now, std::memory_order_relaxed);
      break;
    }
  }
  // Attribute to the innermost open scope of this thread.
  Node* n = ts->top->node.load(std::memory_order_relaxed);
  if (delta >= 0) {
    single_writer_add(n->alloc_bytes, bytes);
    single_writer_add(n->alloc_count, std::uint64_t{1});
  } else {
    single_writer_add(n->free_bytes, bytes);
    single_writer_add(n->free_count, std::uint64_t{1});
  }
  if (ts->keep_spans)
    write_record(ts, now, bytes, e->id, delta >= 0 ? RecordKind::MemoryAlloc : RecordKind::MemoryFree);
}

void Session::measure_overhead() {
  ThreadState* ts = attach_thread(core_);
  if (ts == nullptr) return;
  // Recorded through the real path, then rewound so that the calibration spans take no
  // room in the buffers; the calibration node is left out of every report.
  if (ts->keep_spans && ts->chunk == nullptr) next_chunk(ts);  // so that the rewind below applies
  Chunk* chunk = ts->chunk;
  const std::uint32_t count = ts->chunk_count;
  constexpr int kRounds = 7, kPerRound = 200;
  std::uint64_t best = ~std::uint64_t{0};
  for (int r = 0; r < kRounds; ++r) {
    const std::uint64_t t0 = read_ticks();
    for (int i = 0; i < kPerRound; ++i) {
      if (Frame* f = scope_enter(ts, &kCalibrationSite)) scope_exit(ts, f, f->start);
    }
    best = std::min(best, read_ticks() - t0);
  }
  overhead_ticks_per_scope_ = static_cast<double>(best) / kPerRound;
  if (ts->chunk == chunk && chunk != nullptr) {
    ts->chunk_count = count;
    ts->write = chunk->records() + count;
    chunk->count.store(count, std::memory_order_release);
  }
}

void Session::wake() noexcept {
  {
    std::lock_guard lock(wake_mu_);
    wake_requested_ = true;
  }
  wake_cv_.notify_one();
}

void Session::drainer_main() {
  InternalAllocations internal;
  pthread_setname_np(pthread_self(), "nnprof-drain");
  using namespace std::chrono_literals;
  auto interval = 1ms;
  std::unique_lock lock(wake_mu_);
  while (!stopping_) {
    wake_cv_.wait_for(lock, interval, [this] { return stopping_ || wake_requested_; });
    const bool woken = wake_requested_;
    wake_requested_ = false;
    if (stopping_) break;
    lock.unlock();
    std::uint64_t before = 0, after = 0;
    {
      std::lock_guard g(mu_);
      before = next_sequence_;
      drain_locked();
      after = next_sequence_;
    }
    // Poll every millisecond while threads fill chunks, back off to 16 ms when idle.
    interval = (after != before || woken) ? 1ms : std::min<std::chrono::milliseconds>(interval * 2, 16ms);
    lock.lock();
  }
}

Chunk* Session::take_pooled_locked() noexcept {
  if (pool_.empty()) return nullptr;
  Chunk* c = pool_.back();
  pool_.pop_back();
  c->count.store(0, std::memory_order_relaxed);
  return c;
}

Chunk* Session::allocate_within_cap() noexcept {
  std::uint64_t cur = allocated_bytes_.load(std::memory_order_relaxed);
  do {
    if (cur + Chunk::kBytes > options_.memory_cap_bytes) return nullptr;
  } while (!allocated_bytes_.compare_exchange_weak(cur, cur + Chunk::kBytes, std::memory_order_relaxed));
  try {
    return allocate_chunk();
  } catch (const std::bad_alloc&) {
    allocated_bytes_.fetch_sub(Chunk::kBytes, std::memory_order_relaxed);
    return nullptr;
  }
}

namespace {
/// Counts the duration of each span of `c` into its node's histogram of kept spans.
void count_kept_spans(ThreadPrivate& p, const Chunk* c, std::uint32_t n) noexcept {
  InternalAllocations internal;
  const Record* r = c->records();
  std::uint32_t ref = ~std::uint32_t{0};
  std::array<HistogramRow*, kHistogramRows>* rows = nullptr;
  try {
    for (std::uint32_t i = 0; i < n; ++i) {
      if (r[i].kind != RecordKind::Span) continue;
      if (r[i].ref != ref) {
        ref = r[i].ref;
        if (ref >= p.kept_rows.size())
          p.kept_rows.resize(std::min<std::size_t>(std::max<std::size_t>(ref + 1, 2 * p.kept_rows.size()),
                                                   std::size_t{kMaxNodeBlocks} * kNodesPerBlock),
                             {});
        rows = ref < p.kept_rows.size() ? &p.kept_rows[ref] : nullptr;  // nullptr: not a node of this thread
      }
      if (rows == nullptr) continue;
      const BucketIndex b = histogram_bucket(r[i].t1 - r[i].t0);
      HistogramRow*& row = (*rows)[b.row];
      if (row == nullptr) row = p.kept_row_slabs.take();
      single_writer_add(row->bucket[b.sub], std::uint64_t{1});
    }
  } catch (...) {
    // Out of memory: these durations stay in the statistics, not in the percentiles.
  }
}

/// The first `n` records of `c` by kind, as a snapshot counts them when they are lost.
struct KindTally {
  std::uint16_t spans = 0, flows = 0, events = 0;
};
KindTally tally_kinds(const Chunk* c, std::uint32_t n) noexcept {
  KindTally t;
  const Record* r = c->records();
  for (std::uint32_t i = 0; i < n; ++i) {
    if (r[i].kind == RecordKind::Span)
      ++t.spans;
    else if (is_flow(r[i].kind))
      ++t.flows;
    // Metric points: the model counts what is missing per metric; GPU launches: the GPU work
    // they launched is counted as unmatched.
    else if (r[i].kind != RecordKind::Metric && r[i].kind != RecordKind::GpuLaunch)
      ++t.events;
  }
  return t;
}
}  // namespace

void Session::keep_locked(Chunk* c) noexcept {
  ThreadPrivate* owner = c->thread < threads_.size() ? &threads_[c->thread]->priv : nullptr;
  if (owner != nullptr && owner->is_scratch(c)) {
    empty_scratch_locked(*owner, c);
    return;
  }
  c->sequence = next_sequence_++;
  const std::uint32_t n = c->count.load(std::memory_order_acquire);
  if (owner != nullptr) count_kept_spans(*owner, c, n);
  const KindTally t = tally_kinds(c, n);
  c->spans = t.spans;
  c->flows = t.flows;
  c->events = t.events;
  kept_.push_back(c);
}

Chunk* Session::lend_scratch_chunk(ThreadPrivate& p) noexcept {
  InternalAllocations internal;
  std::lock_guard lock(mu_);
  for (Chunk*& slot : p.scratch) {
    if (slot != nullptr) continue;
    try {
      slot = allocate_chunk();
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    hot_path_chunks_.fetch_add(1, std::memory_order_relaxed);  // allocated on the recording thread
    return slot;
  }
  return nullptr;
}

void Session::empty_scratch_locked(ThreadPrivate& p, Chunk* c) noexcept {
  const std::uint32_t n = c->count.load(std::memory_order_acquire);
  count_kept_spans(p, c, n);  // every closed scope is in its histogram, kept or not
  const KindTally t = tally_kinds(c, n);
  p.scratch_dropped_spans += t.spans;
  p.scratch_dropped_flows += t.flows;
  p.scratch_dropped_events += t.events;
  c->count.store(0, std::memory_order_relaxed);
  if (p.finalized || p.exited.load(std::memory_order_acquire) || !p.spare.push(c)) release_scratch_locked(p, c);
}

void Session::release_scratch_locked(ThreadPrivate& p, Chunk* c) noexcept {
  for (Chunk*& slot : p.scratch)
    if (slot == c) slot = nullptr;
  free_chunk(c);
}

Chunk* Session::recycle_oldest_locked() noexcept {
  if (options_.policy != BufferPolicy::FlightRecorder || kept_.empty()) return nullptr;
  Chunk* c = kept_.front();
  kept_.pop_front();
  // Tallied by keep_locked: a thread that recycles a chunk itself (its spares ran out) does
  // not read the records it overwrites.
  spans_overwritten_ += c->spans;
  flows_overwritten_ += c->flows;
  events_overwritten_ += c->events;
  c->count.store(0, std::memory_order_relaxed);
  return c;
}

Chunk* Session::obtain_chunk_locked() noexcept {
  if (Chunk* c = take_pooled_locked()) return c;
  if (Chunk* c = allocate_within_cap()) return c;
  return recycle_oldest_locked();
}

Chunk* Session::chunk_for_starving_thread() noexcept {
  InternalAllocations internal;
  std::unique_lock lock(mu_, std::try_to_lock);
  if (lock.owns_lock())
    if (Chunk* c = take_pooled_locked()) return c;
  // Allocating here costs this thread page faults, but loses nothing; it is counted and reported.
  if (Chunk* c = allocate_within_cap()) {
    hot_path_chunks_.fetch_add(1, std::memory_order_relaxed);
    return c;
  }
  // A flight recorder at its cap always has a chunk to recycle: wait for the lock rather than
  // drop records until it is free. Past the cap the drainer holds it only to move and recycle
  // chunks (it has nothing left to allocate), or a snapshot does.
  if (!lock.owns_lock() && options_.policy == BufferPolicy::FlightRecorder) lock.lock();
  if (!lock.owns_lock()) return nullptr;
  // The starving thread no longer wakes the drainer at the cap: the chunks it handed off may
  // all still be in the rings. Keep them now so that the oldest can be recycled.
  if (kept_.empty()) keep_handed_off_locked();
  return recycle_oldest_locked();
}

void Session::keep_handed_off_locked() noexcept {
  // Every consumer of the rings holds mu_, so any thread may empty them here.
  for (auto& rec : threads_)
    if (!rec->priv.finalized)
      while (Chunk* c = rec->priv.full.pop()) keep_locked(c);
}

const Chunk* Session::current_chunk_locked(ThreadPrivate& p, std::vector<const Chunk*>* newly_kept) noexcept {
  const Chunk* current = p.current.load(std::memory_order_acquire);
  if (p.finalized) return nullptr;
  bool current_kept = false;
  while (Chunk* c = p.full.pop()) {
    const bool scratch = p.is_scratch(c);  // emptied and handed back, not kept
    keep_locked(c);
    if (newly_kept != nullptr && !scratch) {
      try {
        newly_kept->push_back(c);
      } catch (...) {
        // Out of memory: this snapshot leaves the chunk's records out; the session keeps them.
      }
    }
    current_kept = current_kept || c == current;
  }
  return current_kept ? nullptr : current;
}

void Session::retire_thread_locked(ThreadRecord& rec) {
  ThreadPrivate& p = rec.priv;
  if (p.finalized) return;
  while (Chunk* c = p.full.pop()) keep_locked(c);
  if (Chunk* c = p.current.exchange(nullptr, std::memory_order_acq_rel)) {
    if (c->count.load(std::memory_order_acquire) > 0 || p.is_scratch(c)) {
      keep_locked(c);  // a scratch chunk is emptied and freed there
    } else {
      pool_.push_back(c);
    }
  }
  // Scratch chunks lie beyond the cap: freed, never pooled for other threads.
  while (Chunk* c = p.spare.pop()) {
    if (p.is_scratch(c))
      release_scratch_locked(p, c);
    else
      pool_.push_back(c);
  }
  p.finalized = true;
}

void Session::drain_locked() {
  for (auto& rec : threads_) {
    ThreadPrivate& p = rec->priv;
    if (p.finalized) continue;
    if (p.exited.load(std::memory_order_acquire)) {
      retire_thread_locked(*rec);
      continue;
    }
    while (Chunk* c = p.full.pop()) keep_locked(c);
    if (!options_.record_spans) continue;
    // Keep about twice what the thread used since the last pass in reserve.
    const std::uint64_t taken = p.chunks_taken.load(std::memory_order_relaxed);
    const std::size_t used = static_cast<std::size_t>(taken - p.last_taken);
    p.last_taken = taken;
    p.spare_target = std::clamp<std::size_t>(std::max(2 * used + 2, p.spare_target > 2 ? p.spare_target - 1 : 2), 2,
                                             kMaxSpareChunks);
    while (p.spare.size() < p.spare_target) {
      Chunk* c = take_pooled_locked();
      if (c == nullptr) c = allocate_within_cap();
      // At the cap, a flight recorder recycles its oldest kept chunk; but only for a small
      // reserve. Topping a thread's spares up to a burst-sized target from kept_ could
      // recycle the whole history into empty spares, and a snapshot would then hold nothing.
      if (c == nullptr && p.spare.size() < kMinRecycledSpares) c = recycle_oldest_locked();
      if (c == nullptr) break;
      if (!p.spare.push(c)) {
        pool_.push_back(c);
        break;
      }
    }
  }
}

RawSnapshot Session::empty_snapshot() const {
  RawSnapshot s;
  s.start = start_;
  s.unix_start_ns = unix_start_ns_;
  s.nominal_ns_per_tick = clock::nominal_ns_per_tick();
  s.memory_cap_bytes = options_.memory_cap_bytes;
  s.flight_recorder = options_.policy == BufferPolicy::FlightRecorder;
  s.keep_spans = options_.record_spans;
  s.overhead_ticks_per_scope = overhead_ticks_per_scope_;
  s.internal_site = &kCalibrationSite;
  return s;
}

RawSnapshot Session::snapshot(bool with_records, bool with_sources) {
  InternalAllocations internal;
  RawSnapshot s = empty_snapshot();
  // Before the threads: every node a heap block refers to then exists in the trees read below.
  // Skipped for the queries by name (stats(), total_time()): a heap snapshot scans memory.
  if (with_sources) {
    if (auto heap = heap_source()) heap->snapshot_heap(s.heap);
    if (auto cpu = cpu_source()) cpu->snapshot_cpu(s.cpu);
    // Before the threads too: every launch record of the GPU work read here is then read below.
    if (auto gpu = gpu_source()) gpu->snapshot_gpu(s.gpu);
    if (auto system = system_source()) system->snapshot_system(s.system);
  }
  // Heap counts that threads batch (src/collect/heap/heap_fast_path.hpp): every snapshot,
  // statistics-only ones too, merges them into the nodes, so no allocation made before it is
  // missing.
  std::vector<BatchedNodeHeap> batched;
  if (auto heap = heap_source()) heap->batched_heap(batched);
  {
    std::lock_guard lock(annotations_mu_);
    s.annotations = annotations_;
  }

  std::lock_guard lock(mu_);
  drain_locked();
  s.now = clock::read_pair();
  s.spans_overwritten = spans_overwritten_;
  s.hot_path_chunks = hot_path_chunks_.load(std::memory_order_relaxed);
  s.events_overwritten = events_overwritten_;
  s.flows_overwritten = flows_overwritten_;
  s.memory_current = memory_current_.load(std::memory_order_relaxed);
  s.memory_peak = memory_peak_.load(std::memory_order_relaxed);
  s.memory_peak_ticks = memory_peak_ticks_.load(std::memory_order_relaxed);

  // Kept chunks by thread, in hand-off order.
  std::vector<std::vector<const Chunk*>> kept_by_thread(threads_.size());
  if (with_records)
    for (const Chunk* c : kept_)
      if (c->thread < kept_by_thread.size()) kept_by_thread[c->thread].push_back(c);

  s.threads.reserve(threads_.size());
  for (auto& rec : threads_) {
    ThreadPrivate& p = rec->priv;
    ThreadState& ts = rec->state;
    RawThread t;
    t.index = p.index;
    t.os_tid = p.os_tid;
    t.exited = p.exited.load(std::memory_order_acquire);
    {
      std::lock_guard g(p.mu);
      t.name = p.name;
      for (const auto& [key, count] : p.events) t.events.push_back({key.first, key.second, count});
      if (with_records) {
        t.span_args = p.span_args;
        t.arg_strings.assign(p.arg_strings.begin(), p.arg_strings.end());
      }
      t.span_args_dropped = p.span_args_dropped;
    }
    if (!t.exited) {
      // The kernel's name is current; ours may predate a pthread_setname_np by the program.
      std::string comm = read_task_comm(p.os_tid);
      if (!comm.empty() && (t.name.empty() || t.name.rfind(comm, 0) != 0)) t.name = comm;
    }
    t.dropped_spans = ts.dropped_spans.load(std::memory_order_relaxed);
    t.dropped_events = ts.dropped_events.load(std::memory_order_relaxed);
    t.dropped_flows = ts.dropped_flows.load(std::memory_order_relaxed);
    t.too_deep = ts.too_deep.load(std::memory_order_relaxed);
    t.tree_full = p.tree_full.load(std::memory_order_relaxed);

    const Chunk* cur = current_chunk_locked(p, with_records ? &kept_by_thread[p.index] : nullptr);
    const std::uint32_t cur_count = cur ? cur->count.load(std::memory_order_acquire) : 0;
    // Keep-first past the cap: what scratch chunks held is dropped, the one being filled too.
    const bool cur_scratch = p.is_scratch(cur);
    const KindTally in_scratch = cur_scratch ? tally_kinds(cur, cur_count) : KindTally{};
    t.dropped_spans += p.scratch_dropped_spans + in_scratch.spans;
    t.dropped_flows += p.scratch_dropped_flows + in_scratch.flows;
    t.dropped_events += p.scratch_dropped_events + in_scratch.events;
    const std::uint32_t n = p.node_count.load(std::memory_order_acquire);
    t.nodes.resize(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      const Node* node = p.node_at(i);
      read_node(*node, node->parent != nullptr ? node->parent->index : 0, t.nodes[i]);
      add_kept_durations(p, i, t.nodes[i]);
    }
    add_unkept_durations(cur, cur_count, t.nodes);
    for (const BatchedNodeHeap& b : batched)
      if (b.thread == p.index && b.node < n) merge_batched_heap(*p.node_at(b.node), b, t.nodes[b.node].heap);

    // Open scopes: map frame node pointers to indices without dereferencing them, since a
    // node created after node_count was read is not yet safe to read.
    const std::uint32_t depth = std::min<std::uint32_t>(ts.depth.load(std::memory_order_relaxed), kMaxDepth);
    for (std::uint32_t d = 1; d <= depth; ++d) {
      const Node* node = ts.stack[d].node.load(std::memory_order_relaxed);
      for (std::uint32_t b = 0; b * kNodesPerBlock < n; ++b) {
        const Node* base = p.blocks[b].load(std::memory_order_acquire);
        if (node >= base && node < base + kNodesPerBlock) {
          const auto idx = static_cast<std::uint32_t>(b * kNodesPerBlock + static_cast<std::uint32_t>(node - base));
          if (idx < n && idx != 0) t.open_nodes.push_back(idx);
          break;
        }
      }
    }

    if (with_records) {
      std::size_t total = 0;
      for (const Chunk* c : kept_by_thread[p.index]) total += c->count.load(std::memory_order_acquire);
      t.records.reserve(total + cur_count);
      for (const Chunk* c : kept_by_thread[p.index]) {
        const std::uint32_t cnt = c->count.load(std::memory_order_acquire);
        t.records.insert(t.records.end(), c->records(), c->records() + cnt);
      }
      if (cur != nullptr && !cur_scratch) t.records.insert(t.records.end(), cur->records(), cur->records() + cur_count);
    }
    s.threads.push_back(std::move(t));
  }

  {
    std::lock_guard g(names_mu_);
    s.counters.reserve(names_by_id_.size());
    for (const NamedEntry* e : names_by_id_) {
      RawCounter c;
      c.name = e->name;
      c.current = e->current.load(std::memory_order_relaxed);
      c.peak = e->peak.load(std::memory_order_relaxed);
      c.alloc_bytes = e->alloc_bytes.load(std::memory_order_relaxed);
      c.freed_bytes = e->freed_bytes.load(std::memory_order_relaxed);
      c.alloc_count = e->alloc_count.load(std::memory_order_relaxed);
      c.free_count = e->free_count.load(std::memory_order_relaxed);
      c.largest_alloc = e->largest_alloc.load(std::memory_order_relaxed);
      c.items = e->items.load(std::memory_order_relaxed);
      s.counters.push_back(std::move(c));
    }
  }
  // After the records: every point read above is counted in the statistics read here.
  metrics_.snapshot(threads_, s.metrics);
  return s;
}

namespace {
// Per node of a thread's tree, for the statistics of one name (Session::scope_totals and
// scope_snapshot): the same nodes, nesting and exclusions as the model's merged tree.
constexpr std::uint8_t kNamed = 1;     // a scope of that name
constexpr std::uint8_t kUnder = 2;     // of that name or below one
constexpr std::uint8_t kExcluded = 4;  // the overhead calibration scope and below: never reported
constexpr std::uint8_t kKept = 8;      // scope_snapshot: an ancestor of a scope of that name

struct NodeMarks {
  std::vector<std::uint8_t> flags;
  std::vector<std::uint32_t> parent;
};

/// Marks the nodes of `p` published so far; a parent always has a lower index than its children.
void mark_nodes(const ThreadPrivate& p, std::string_view name, NodeMarks& m) {
  const std::uint32_t n = p.node_count.load(std::memory_order_acquire);
  m.flags.assign(n, 0);
  m.parent.assign(n, 0);
  for (std::uint32_t i = 1; i < n; ++i) {
    const Node* node = p.node_at(i);
    const std::uint32_t up = node->parent != nullptr ? node->parent->index : 0;
    m.parent[i] = up;
    if ((m.flags[up] & kExcluded) != 0 || node->site == &kCalibrationSite) {
      m.flags[i] = kExcluded;
      continue;
    }
    const bool named = std::string_view(node->site->name) == name;
    m.flags[i] = static_cast<std::uint8_t>((named ? kNamed : 0) | (named || (m.flags[up] & kUnder) != 0 ? kUnder : 0));
  }
}
}  // namespace

Session::ScopeTotals Session::scope_totals(std::string_view name) {
  InternalAllocations internal;
  ScopeTotals totals;
  totals.start = start_;
  totals.nominal_ns_per_tick = clock::nominal_ns_per_tick();
  NodeMarks m;
  std::lock_guard lock(mu_);
  totals.now = clock::read_pair();
  for (auto& rec : threads_) {
    const ThreadPrivate& p = rec->priv;
    mark_nodes(p, name, m);
    for (std::uint32_t i = 1; i < m.flags.size(); ++i) {
      if ((m.flags[i] & kNamed) == 0) continue;
      const Node* node = p.node_at(i);
      const std::uint64_t count = node->count.load(std::memory_order_relaxed);
      if (count == 0) continue;  // never closed: nothing in the statistics yet
      totals.calls += count;
      if ((m.flags[m.parent[i]] & kUnder) == 0) totals.inclusive_ticks += node->total.load(std::memory_order_relaxed);
    }
  }
  return totals;
}

RawSnapshot Session::scope_snapshot(std::string_view name) {
  InternalAllocations internal;
  RawSnapshot s = empty_snapshot();
  std::vector<BatchedNodeHeap> batched;
  if (auto heap = heap_source()) heap->batched_heap(batched);
  {
    std::lock_guard g(names_mu_);
    if (auto it = names_.find(name); it != names_.end()) {
      RawCounter c;
      c.name = it->second->name;
      c.items = it->second->items.load(std::memory_order_relaxed);
      s.counters.push_back(std::move(c));
    }
  }

  NodeMarks m;
  std::vector<std::uint32_t> kept_index;
  std::lock_guard lock(mu_);
  s.now = clock::read_pair();
  s.threads.reserve(threads_.size());
  for (auto& rec : threads_) {
    ThreadPrivate& p = rec->priv;
    const Chunk* cur = current_chunk_locked(p, nullptr);
    const std::uint32_t cur_count = cur ? cur->count.load(std::memory_order_acquire) : 0;
    RawThread t;
    t.index = p.index;
    t.os_tid = p.os_tid;
    t.exited = p.exited.load(std::memory_order_acquire);
    mark_nodes(p, name, m);
    const auto n = static_cast<std::uint32_t>(m.flags.size());
    for (std::uint32_t i = 1; i < n; ++i)
      if ((m.flags[i] & kNamed) != 0)
        for (std::uint32_t up = m.parent[i]; up != 0 && (m.flags[up] & (kKept | kUnder)) == 0; up = m.parent[up])
          m.flags[up] |= kKept;
    kept_index.assign(n, kNone);
    for (std::uint32_t i = 0; i < n; ++i) {
      if (i != 0 && (m.flags[i] & (kKept | kUnder)) == 0) continue;
      kept_index[i] = static_cast<std::uint32_t>(t.nodes.size());
      read_node(*p.node_at(i), kept_index[m.parent[i]], t.nodes.emplace_back());
      add_kept_durations(p, i, t.nodes.back());
    }
    add_unkept_durations(cur, cur_count, t.nodes, &kept_index);
    for (const BatchedNodeHeap& b : batched)
      if (b.thread == p.index && b.node < n && kept_index[b.node] != kNone)
        merge_batched_heap(*p.node_at(b.node), b, t.nodes[kept_index[b.node]].heap);
    s.threads.push_back(std::move(t));
  }
  return s;
}

}  // namespace nnprof::detail
