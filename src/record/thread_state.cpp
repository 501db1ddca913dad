// The out-of-line half of recording: everything a thread does rarely (new call-tree nodes,
// chunk switches, attaching to a profiler, unusual scope nesting).
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <new>
#include <vector>

#include "record/session.hpp"
#include "record/internal_allocations.hpp"
#include "record/thread_record.hpp"
#include "record/thread_ops.hpp"

namespace nnprof::detail {

constinit thread_local TlsSlot tls_current{};
constinit thread_local HeapThreadTls tls_heap{};

// ---- chunks and thread records ------------------------------------------------------

Chunk* allocate_chunk() {
  void* p = ::operator new(Chunk::kBytes, std::align_val_t{64});
  // Touch every page now, on the drainer's thread, so that the recording thread never
  // pays a first-touch page fault (1.5-11 us each on these machines).
  std::memset(p, 0, Chunk::kBytes);
  return new (p) Chunk{};
}

void free_chunk(Chunk* c) noexcept {
  if (c == nullptr) return;
  c->~Chunk();
  ::operator delete(static_cast<void*>(c), std::align_val_t{64});
}

ThreadRecord::ThreadRecord(std::size_t full_ring_chunks) : priv(full_ring_chunks) {
  state.priv = &priv;
  state.stack_last = &state.stack[kMaxDepth];
  state.top = &state.stack[0];
  Node* block = new Node[kNodesPerBlock];
  priv.blocks[0].store(block, std::memory_order_release);
  block[0].index = 0;
  block[0].depth = 0;
  priv.node_count.store(1, std::memory_order_release);
  state.stack[0].node.store(&block[0], std::memory_order_relaxed);
}

ThreadRecord::~ThreadRecord() {
  free_chunk(priv.current.load(std::memory_order_acquire));
  while (Chunk* c = priv.full.pop()) free_chunk(c);
  while (Chunk* c = priv.spare.pop()) free_chunk(c);
  for (auto& b : priv.blocks) delete[] b.load(std::memory_order_relaxed);
}

void ThreadPrivate::note(ThreadEventKind kind, const SourceLocation* site) noexcept {
  InternalAllocations internal;
  try {
    std::lock_guard lock(mu);
    ++events[{kind, site}];
  } catch (...) {
    // Out of memory while recording a diagnostic: nothing better to do than lose it.
  }
}

// ---- slow paths of the inline hot path ----------------------------------------------

Node* find_or_add_child(ThreadState* ts, Node* parent, const SourceLocation* site) noexcept {
  InternalAllocations internal;
  for (Node* c = parent->first_child; c != nullptr; c = c->next_sibling) {
    if (c->site == site) {
      parent->hint = c;
      return c;
    }
  }
  ThreadPrivate& p = *ts->priv;
  const std::uint32_t index = p.node_count.load(std::memory_order_relaxed);
  const std::uint32_t block = index / kNodesPerBlock;
  if (block >= kMaxNodeBlocks) {
    single_writer_add(p.tree_full, std::uint64_t{1});
    return nullptr;
  }
  if (p.blocks[block].load(std::memory_order_relaxed) == nullptr) {
    Node* fresh = new (std::nothrow) Node[kNodesPerBlock];
    if (fresh == nullptr) return nullptr;
    p.blocks[block].store(fresh, std::memory_order_release);
  }
  Node* n = p.blocks[block].load(std::memory_order_relaxed) + index % kNodesPerBlock;
  n->site = site;
  n->parent = parent;
  n->index = index;
  n->depth = parent->depth + 1;
  n->thread = p.index;
  n->next_sibling = parent->first_child;
  parent->first_child = n;
  parent->hint = n;
  p.node_count.store(index + 1, std::memory_order_release);
  return n;
}

HistogramRow* add_histogram_row(ThreadState* ts, Node* node, unsigned row) noexcept {
  InternalAllocations internal;
  try {
    HistogramRow* r = ts->priv->rows.take();
    node->rows[row].store(r, std::memory_order_release);
    return r;
  } catch (...) {
    return nullptr;  // out of memory: this duration is counted but not in the percentiles
  }
}

bool next_chunk(ThreadState* ts) noexcept {
  ThreadPrivate& p = *ts->priv;
  if (ts->at_cap && ts->chunk == nullptr) {
    // Keep-first past the cap: what used to wake the drainer (a futex call) and try the
    // session's lock here for every record made each scope cost 3.5-5 times more after the
    // cap than before it. Only a spare the drainer left (from the pool) ends this state.
    Chunk* c = p.spare.pop();
    if (c == nullptr) return false;
    ts->at_cap = false;
    single_writer_add(p.chunks_taken, std::uint64_t{1});
    c->thread = p.index;
    ts->chunk = c;
    ts->chunk_count = 0;
    ts->write = c->records();
    ts->write_end = ts->write + Chunk::capacity();
    p.current.store(c, std::memory_order_release);
    return true;
  }
  InternalAllocations internal;
  bool handed_off = false;
  if (ts->chunk != nullptr) {
    // The ring holds every chunk the cap allows (full_ring_capacity): it fills only past
    // 64 GiB caps with the drainer that far behind. Drop rather than block then.
    if (!p.full.push(ts->chunk)) {
      if (!p.starving.exchange(true, std::memory_order_relaxed) && p.session) p.session->wake();
      return false;
    }
    handed_off = true;
    p.current.store(nullptr, std::memory_order_release);
    ts->chunk = nullptr;
    ts->write = ts->write_end = nullptr;
  }
  Chunk* c = p.spare.pop();
  // Once the cap is reached the drainer has nothing left to pre-fault, and a thread that ran
  // out of spares gets its chunk faster by recycling one itself (flight recorder) than by
  // waking the drainer, a futex call for each chunk, 3-7% of the cost per scope.
  const bool cap_reached = p.session != nullptr && p.session->cap_reached();
  // Keep-first past the cap the chunk just handed off is a scratch chunk (or the last one
  // kept): the drainer empties it and hands it back while this thread fills the other one.
  // One wake-up per 64 KiB chunk, not per span.
  if (handed_off && cap_reached && p.session->keeps_first_at_cap()) p.session->wake();
  if (c == nullptr && p.session != nullptr) {
    // The drainer fell behind a burst: take a chunk ourselves rather than lose spans.
    if (!cap_reached) p.session->wake();
    c = p.session->chunk_for_starving_thread();
    // Keep-first past the cap: spans go on into a scratch chunk the session lends, so that a
    // scope costs what it cost below the cap; only with none to be had (all lent and none yet
    // handed back) are they dropped here, with their durations counted on this thread.
    if (c == nullptr && p.session->keeps_first_at_cap()) {
      if (p.scratch_lent < p.scratch.size()) {
        c = p.session->lend_scratch_chunk(p);
        if (c != nullptr) ++p.scratch_lent;
      }
      if (c == nullptr) ts->at_cap = true;
    }
  }
  if (c == nullptr) {
    if (!p.starving.exchange(true, std::memory_order_relaxed) && p.session) p.session->wake();
    return false;
  }
  p.starving.store(false, std::memory_order_relaxed);
  single_writer_add(p.chunks_taken, std::uint64_t{1});
  c->thread = p.index;
  ts->chunk = c;
  ts->chunk_count = 0;
  ts->write = c->records();
  ts->write_end = ts->write + Chunk::capacity();
  p.current.store(c, std::memory_order_release);
  if (p.spare.size() <= 1 && p.session && !cap_reached) p.session->wake();  // running low: refill before it is empty
  return true;
}

void drop_record(ThreadState* ts, RecordKind kind) noexcept {
  // A dropped metric point is not counted here: the model finds it missing from its metric's
  // count, which the thread's statistics keep whatever the buffers hold.
  // Nor a GPU launch: the GPU work it launched is counted as unmatched when the profile is built.
  if (kind == RecordKind::Metric || kind == RecordKind::GpuLaunch) return;
  std::atomic<std::uint64_t>& counter =
      kind == RecordKind::Span ? ts->dropped_spans : is_flow(kind) ? ts->dropped_flows : ts->dropped_events;
  single_writer_add(counter, std::uint64_t{1});
}

void drop_span_at_cap(ThreadState* ts) noexcept {
  drop_record(ts, RecordKind::Span);
  if (ts->write == ts->write_end) next_chunk(ts);
}

void note_too_deep(ThreadState* ts) noexcept { single_writer_add(ts->too_deep, std::uint64_t{1}); }

namespace {
// A thread's first 4,096 arguments (128 KiB) come from the heap. Past them, the whole bound is
// reserved at once: address space only (glibc maps a block this large on its own), touched as
// arguments arrive. Growing by doubling instead copied every argument twice and faulted every
// page twice over; and the region asks for transparent huge pages, so that a framework
// attaching millions of arguments takes one page fault per 2 MiB instead of one per 4 KiB
// (each costs about a microsecond in a VM). Threads with a few arguments never get one.
constexpr std::size_t kFirstSpanArgs = 4096;

void reserve_span_args(std::vector<RawSpanArg>& args) {
  if (args.capacity() == 0) {
    args.reserve(kFirstSpanArgs);
    return;
  }
  args.reserve(kMaxSpanArgsPerThread);
#ifdef MADV_HUGEPAGE
  const auto begin = reinterpret_cast<std::uintptr_t>(args.data());
  constexpr std::uintptr_t kHuge = std::uintptr_t{2} << 20;
  const std::uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1);
  const std::uintptr_t end = begin + args.capacity() * sizeof(RawSpanArg);
  if (end > first) madvise(reinterpret_cast<void*>(first), (end - first) & ~(kHuge - 1), MADV_HUGEPAGE);
#endif
}
}  // namespace

void add_span_arg(ThreadState* ts, const Frame* f, std::string_view key, const ArgValue& value) noexcept {
  const SpanArgInput arg{key, value};
  add_span_args(ts, f, {&arg, 1});
}

void add_span_args(ThreadState* ts, const Frame* f, std::span<const SpanArgInput> args) noexcept {
  if (ts == nullptr || f == nullptr || f == &ts->stack[0] || !ts->keep_spans || args.empty()) return;
  ThreadPrivate* p = ts->priv;
  const std::uint32_t node = f->node.load(std::memory_order_relaxed)->index;
  try {
    InternalAllocations internal;
    std::lock_guard lock(p->mu);
    for (const SpanArgInput& in : args) {
      if (p->span_args.size() >= kMaxSpanArgsPerThread) {
        ++p->span_args_dropped;
        continue;
      }
      if (p->span_args.size() == p->span_args.capacity()) reserve_span_args(p->span_args);
      RawSpanArg arg;
      arg.node = node;
      arg.start_ticks = f->start;
      arg.type = in.value.type;
      if (in.value.type == ArgValue::Type::Real)
        arg.real = in.value.real;
      else
        arg.integer = in.value.integer;
      arg.key = p->arg_string_id(in.key);
      if (in.value.type == ArgValue::Type::String) arg.text = p->arg_string_id(in.value.text);
      p->span_args.push_back(arg);
    }
  } catch (...) {
    // Out of memory: the arguments not stored yet are not kept.
  }
}

namespace {
const SourceLocation* frame_site(const Frame* f) noexcept {
  return f->node.load(std::memory_order_relaxed)->site;
}

/// Closes every frame above `target`, each counted as implicitly closed.
void close_frames_above(ThreadState* ts, Frame* target, std::uint64_t end) noexcept {
  while (ts->top != target) {
    ts->priv->note(ThreadEventKind::ImplicitlyClosed, frame_site(ts->top));
    scope_finish(ts, ts->top, end);
  }
}
}  // namespace

void exit_out_of_order(ThreadState* ts, Frame* frame, std::uint64_t start, std::uint64_t end) noexcept {
  // Still open with scopes above it that were started and never stopped: close those first.
  if (frame < ts->top && frame > &ts->stack[0] && frame->start == start) {
    close_frames_above(ts, frame, end);
    scope_finish(ts, frame, end);
  }
  // Otherwise an explicit stop() already closed it (and said so); nothing is left to do.
}

void note_start_beyond_stack(ThreadState* ts) noexcept { ++ts->priv->overflow_depth; }

void stop_site(ThreadState* ts, const SourceLocation* site) noexcept {
  const std::uint64_t end = read_ticks();
  Frame* top = ts->top;
  if (std::uint32_t& overflow = ts->priv->overflow_depth; overflow > 0) [[unlikely]] {
    // The stop of a start that the full stack refused; its time stays in the deepest frame.
    if (top == ts->stack_last) {
      --overflow;
      return;
    }
    // A scope guard closed the deepest frame under those starts: they will never be stopped.
    overflow = 0;
  }
  if (top != &ts->stack[0] && frame_site(top) == site) [[likely]] {
    scope_finish(ts, top, end);
    return;
  }
  // The innermost open scope with this name (a guard may have opened it under a static site).
  for (Frame* f = top; f != &ts->stack[0]; --f) {
    const SourceLocation* s = frame_site(f);
    if (s == site || std::strcmp(s->name, site->name) == 0) {
      close_frames_above(ts, f, end);
      scope_finish(ts, f, end);
      return;
    }
  }
  ts->priv->note(ThreadEventKind::StopWithoutStart, site);
}

// ---- attaching threads to profilers -------------------------------------------------

namespace {
/// The profilers this thread records into; tells them when the thread ends.
struct ThreadAttachments {
  std::vector<std::uint64_t> owners;
  std::vector<std::shared_ptr<ThreadRecord>> records;
  std::string name;  // from set_thread_name
};

// Plain pointers and flags (trivially destructible), so that they can still be read after the
// thread's thread_local destructors have run: other thread_local destructors, and on the main
// thread static destructors and atexit handlers, may open scopes after that.
constinit thread_local ThreadAttachments* tls_attachments = nullptr;
constinit thread_local bool tls_exiting = false;

/// Ends a thread's attachments when the thread ends (its thread_local destructor).
struct AttachmentsReleaser {
  ~AttachmentsReleaser();
};
thread_local AttachmentsReleaser tls_releaser;

ThreadAttachments& attachments() {
  if (tls_attachments == nullptr) {
    tls_attachments = new ThreadAttachments;
    // The first use of the thread_local registers its destructor for this thread.
    [[maybe_unused]] AttachmentsReleaser* releaser = &tls_releaser;
  }
  return *tls_attachments;
}

std::string os_thread_name() {
  char buf[64] = {};
  if (pthread_getname_np(pthread_self(), buf, sizeof buf) != 0) return {};
  return buf;
}

bool is_main_thread() noexcept { return ::syscall(SYS_gettid) == ::getpid(); }

// A CPU-sampling signal on this thread reads tls_current between any two instructions: it
// must never see an owner paired with another profiler's state. The owner is cleared before
// and set after the state changes (compiler-only barriers; the handler runs on this thread).
void set_tls_current(std::uint64_t owner, ThreadState* state) noexcept {
  tls_current.owner = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_current.state = state;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  tls_current.owner = owner;
}

AttachmentsReleaser::~AttachmentsReleaser() {
  ThreadAttachments* a = tls_attachments;
  if (a == nullptr) return;
  InternalAllocations internal;
  const std::string final_name = a->name.empty() ? os_thread_name() : a->name;
  // The main thread's thread_local destructors run at exit() before the static destructors
  // and atexit handlers (the preload agent saves the profile in one). It keeps recording, so
  // that scopes of static destructors land in a profile saved after them; its attachments are
  // never freed and its records never retired (a retired record's chunks belong to the session).
  const bool keep_recording = is_main_thread();
  for (auto& rec : a->records) {
    {
      std::lock_guard lock(rec->priv.mu);
      if (!final_name.empty()) rec->priv.name = final_name;
    }
    if (!keep_recording) rec->priv.exited.store(true, std::memory_order_release);
  }
  if (keep_recording) return;
  tls_exiting = true;
  set_tls_current(0, nullptr);
  tls_attachments = nullptr;
  delete a;
}
}  // namespace

ThreadState* attach_thread(SessionCore& core) noexcept {
  InternalAllocations internal;
  if (tls_exiting) return nullptr;
  try {
    ThreadAttachments& a = attachments();
    // Forget records of profilers that have ended since this thread last attached.
    for (std::size_t i = 0; i < a.records.size();) {
      if (a.records[i]->priv.orphaned.load(std::memory_order_acquire)) {
        a.records.erase(a.records.begin() + static_cast<std::ptrdiff_t>(i));
        a.owners.erase(a.owners.begin() + static_cast<std::ptrdiff_t>(i));
      } else {
        ++i;
      }
    }
    for (std::size_t i = 0; i < a.owners.size(); ++i) {
      if (a.owners[i] == core.id) {
        set_tls_current(core.id, &a.records[i]->state);
        return tls_current.state;
      }
    }
    if (core.session == nullptr) return nullptr;
    std::shared_ptr<ThreadRecord> rec = core.session->register_thread();
    if (!a.name.empty()) rec->priv.name = a.name;  // not yet visible to other threads
    a.owners.push_back(core.id);
    a.records.push_back(rec);
    set_tls_current(core.id, &rec->state);
    return tls_current.state;
  } catch (...) {
    return nullptr;  // out of memory: this scope goes unrecorded rather than throwing
  }
}

void set_current_thread_name(std::string_view name) {
  InternalAllocations internal;
  if (tls_exiting) return;
  ThreadAttachments& a = attachments();
  a.name.assign(name);
  for (auto& rec : a.records) {
    std::lock_guard lock(rec->priv.mu);
    rec->priv.name = a.name;
  }
  const std::string os_name(name.substr(0, 15));  // the kernel keeps 15 bytes
  pthread_setname_np(pthread_self(), os_name.c_str());
}

std::int64_t current_os_tid() noexcept { return static_cast<std::int64_t>(::syscall(SYS_gettid)); }

std::string current_thread_name() {
  if (tls_attachments != nullptr && !tls_attachments->name.empty()) return tls_attachments->name;
  return os_thread_name();
}

}  // namespace nnprof::detail
