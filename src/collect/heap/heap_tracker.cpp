#include "collect/heap/heap_tracker.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string_view>

#include <fmt/format.h>

#include "collect/heap/heap_hooks_abi.hpp"
#include "collect/heap/reachability.hpp"
#include "collect/host_info.hpp"
#include "collect/stack/stack_capture.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "record/session.hpp"
#include "record/thread_ops.hpp"
#include "record/thread_record.hpp"

namespace nnprof::detail {

constinit HeapHotState g_heap_hot;

namespace {

struct LoadedHooks {
  std::atomic<bool> loaded{false};
  const char* library = nullptr;
  void* any_address = nullptr;
};
constinit LoadedHooks g_hooks;

const void* module_base(const void* address) {
  Dl_info info{};
  return dladdr(address, &info) != 0 ? info.dli_fbase : nullptr;
}

// A non-PIE executable that takes the address of an imported function gets a canonical PLT
// entry: the symbol stays undefined there but has a value, so the whole process (dlsym
// included) uses the PLT stub's address, while calls still go through the executable's GOT
// slot to the definition the dynamic linker chose. The slot, found through the executable's
// relocations, says where calls really go. nullptr: `address` is no such stub.
const void* canonical_plt_target(const char* name, const void* address) {
  struct Query {
    const char* name;
    std::uintptr_t address;
    std::uintptr_t slot = 0;
  } q{name, reinterpret_cast<std::uintptr_t>(address)};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* q = static_cast<Query*>(data);
        const ElfW(Dyn)* dynamic = nullptr;
        bool inside = false;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = info->dlpi_phdr[i];
          const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
          if (ph.p_type == PT_LOAD && q->address >= begin && q->address < begin + ph.p_memsz) inside = true;
          if (ph.p_type == PT_DYNAMIC) dynamic = reinterpret_cast<const ElfW(Dyn)*>(info->dlpi_addr + ph.p_vaddr);
        }
        if (!inside) return 0;
        if (dynamic == nullptr) return 1;
        // The loader relocates these pointers in place on most targets, not on all.
        const auto at = [&](ElfW(Addr) v) { return v < info->dlpi_addr ? v + info->dlpi_addr : v; };
        const ElfW(Sym)* symtab = nullptr;
        const char* strtab = nullptr;
        std::uintptr_t tables[2] = {0, 0}, sizes[2] = {0, 0};
        bool plt_rela = false;
        for (const ElfW(Dyn)* d = dynamic; d->d_tag != DT_NULL; ++d) {
          switch (d->d_tag) {
            case DT_SYMTAB: symtab = reinterpret_cast<const ElfW(Sym)*>(at(d->d_un.d_ptr)); break;
            case DT_STRTAB: strtab = reinterpret_cast<const char*>(at(d->d_un.d_ptr)); break;
            case DT_JMPREL: tables[0] = at(d->d_un.d_ptr); break;
            case DT_PLTRELSZ: sizes[0] = d->d_un.d_val; break;
            case DT_PLTREL: plt_rela = d->d_un.d_val == DT_RELA; break;
            case DT_RELA: tables[1] = at(d->d_un.d_ptr); break;
            case DT_RELASZ: sizes[1] = d->d_un.d_val; break;
            default: break;
          }
        }
        if (symtab == nullptr || strtab == nullptr) return 1;
        if (!plt_rela) tables[0] = 0;  // REL targets (i386, arm): not read here
        for (int t = 0; t < 2; ++t) {
          const auto* rela = reinterpret_cast<const ElfW(Rela)*>(tables[t]);
          for (std::size_t i = 0; rela != nullptr && i < sizes[t] / sizeof(ElfW(Rela)); ++i) {
            const auto index = sizeof(void*) == 8 ? ELF64_R_SYM(rela[i].r_info) : ELF32_R_SYM(rela[i].r_info);
            const ElfW(Sym)& sym = symtab[index];
            if (sym.st_shndx != SHN_UNDEF || sym.st_name == 0 || std::strcmp(strtab + sym.st_name, q->name) != 0)
              continue;
            q->slot = info->dlpi_addr + rela[i].r_offset;
            return 1;
          }
        }
        return 1;
      },
      &q);
  return q.slot != 0 ? *reinterpret_cast<const void* const*>(q.slot) : nullptr;
}

// Whether calls of `name` (malloc or free), resolved to `address`, reach the hooks library.
bool reaches_hooks(const char* name, void* address) {
  const void* hooks = module_base(g_hooks.any_address);
  if (module_base(address) == hooks) return true;
  {
    // A lazily bound GOT slot still points into the PLT: one call through the stub binds it.
    // A pair, so that whichever allocator answers gets its own block back.
    InternalAllocations internal;
    auto* m = reinterpret_cast<void* (*)(std::size_t)>(std::strcmp(name, "malloc") == 0 ? address
                                                                                       : dlsym(RTLD_DEFAULT, "malloc"));
    auto* f = reinterpret_cast<void (*)(void*)>(std::strcmp(name, "free") == 0 ? address : dlsym(RTLD_DEFAULT, "free"));
    if (m == nullptr || f == nullptr) return false;
    f(m(1));
  }
  const void* target = canonical_plt_target(name, address);
  return target != nullptr && module_base(target) == hooks;
}

std::mutex& start_mutex() {
  static std::mutex mu;
  return mu;
}

constexpr std::size_t kMaxSamples = 1'000'000;  // ~28 h at the default 100 ms
constexpr std::size_t kMaxLeakGroups = 10'000;
constexpr int kMaxStackDepth = 128;

std::uint64_t xorshift(std::uint64_t& s) noexcept {
  s ^= s << 13;
  s ^= s >> 7;
  s ^= s << 17;
  return s;
}

std::string module_of(const void* address) {
  Dl_info info{};
  if (dladdr(address, &info) != 0 && info.dli_fname != nullptr && info.dli_fname[0] != '\0') return info.dli_fname;
  return "the executable";
}

// Destroyed when a thread that tracked allocations ends: its cache must not outlive it.
struct HeapThreadExit {
  bool armed = false;
  ~HeapThreadExit() {
    if (armed) HeapTracker::instance().thread_exit();
  }
};
thread_local HeapThreadExit tls_heap_exit;

constexpr auto rx = std::memory_order_relaxed;

void spin_wait(unsigned& spins) noexcept {
  if (++spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  } else {
    sched_yield();  // the writer was preempted
  }
}

// Adds `d` to a node field inside a batch change: a release store, so that a snapshot that
// reads the new value also sees the batch change begun (heap_fast_path.hpp, HeapThread::batch_seq).
void add_release(std::atomic<std::uint64_t>& a, std::uint64_t d) noexcept {
  a.store(a.load(rx) + d, std::memory_order_release);
}

// Adds the batch of `t` to its node `n` and empties it (the writer holds the batch: odd or taken).
void move_batch(HeapThread& t, Node* n) noexcept {
  constexpr auto rl = std::memory_order_release;
  const std::uint64_t alloc_bytes = t.batch_alloc_bytes.load(rx), alloc_count = t.batch_alloc_count.load(rx);
  const std::uint64_t free_bytes = t.batch_free_bytes.load(rx), free_count = t.batch_free_count.load(rx);
  const std::uint64_t other_bytes = t.batch_other_bytes.load(rx), other_count = t.batch_other_count.load(rx);
  if (n != nullptr) {
    add_release(n->heap_alloc_bytes, alloc_bytes);
    add_release(n->heap_alloc_count, alloc_count);
    add_release(n->heap_released_bytes, free_bytes);
    add_release(n->heap_released_count, free_count);
    add_release(n->heap_free_bytes, free_bytes + other_bytes);
    add_release(n->heap_free_count, free_count + other_count);
  }
  t.batch_alloc_bytes.store(0, rl);
  t.batch_alloc_count.store(0, rl);
  t.batch_free_bytes.store(0, rl);
  t.batch_free_count.store(0, rl);
  t.batch_other_bytes.store(0, rl);
  t.batch_other_count.store(0, rl);
}

// Appends t's batch with its node, read at one moment (a seqlock: retried while the owner
// moves the batch to the node). A batch that tracking's stop took is in its node already.
void read_batch(const HeapThread& t, std::vector<BatchedNodeHeap>& out) {
  constexpr auto acq = std::memory_order_acquire;
  for (unsigned spins = 0;; spin_wait(spins)) {
    const std::uint64_t s1 = t.batch_seq.load(acq);
    if ((s1 & HeapThread::kBatchTaken) != 0) {
      if ((s1 & HeapThread::kBatchDone) != 0) return;
      continue;
    }
    if ((s1 & 1) != 0) continue;
    const Node* n = t.batch_node.load(acq);
    if (n == nullptr) return;
    BatchedNodeHeap b;
    const std::uint64_t free_bytes = t.batch_free_bytes.load(acq), free_count = t.batch_free_count.load(acq);
    b.alloc_bytes = n->heap_alloc_bytes.load(acq) + t.batch_alloc_bytes.load(acq);
    b.alloc_count = n->heap_alloc_count.load(acq) + t.batch_alloc_count.load(acq);
    b.released_bytes = n->heap_released_bytes.load(acq) + free_bytes;
    b.released_count = n->heap_released_count.load(acq) + free_count;
    b.free_bytes = n->heap_free_bytes.load(acq) + free_bytes + t.batch_other_bytes.load(acq);
    b.free_count = n->heap_free_count.load(acq) + free_count + t.batch_other_count.load(acq);
    if (t.batch_seq.load(rx) != s1) continue;  // after the acquire loads above: see HeapThread::batch_seq
    b.thread = n->thread;
    b.node = n->index;
    out.push_back(b);
    return;
  }
}

}  // namespace

void install_fork_handlers() {
  pthread_atfork([] { HeapTracker::instance().mu_.lock(); },
                 [] {
                   HeapTracker& t = HeapTracker::instance();
                   t.mu_.unlock();
                   t.note_fork();
                 },
                 [] {
                   HeapTracker& t = HeapTracker::instance();
                   t.mu_.unlock();
                   t.forked_child();
                 });
}

HeapTracker& HeapTracker::instance() {
  // Never destroyed (hooks may run during static destruction); built on first use.
  static HeapTracker* tracker = [] {
    InternalAllocations internal;
    auto* t = new HeapTracker;
    install_fork_handlers();
    return t;
  }();
  return *tracker;
}

void HeapTracker::note_fork() noexcept {
  if (active()) forks_.fetch_add(1, std::memory_order_relaxed);
}

void HeapTracker::forked_child() noexcept {
  // The child has only the forking thread: no sampler, and a session whose other threads are
  // gone. It is not tracked; a child that execs is profiled afresh by the preload agent.
  active_.store(false, std::memory_order_release);
  g_heap_hot.tracking.store(false, std::memory_order_release);
}

// ---- start / stop ------------------------------------------------------------------------

std::uint64_t HeapTracker::start(Session& session, const MemoryTrackingOptions& options) {
  InternalAllocations internal;
  std::string why;
  const bool hooks_ok = heap_hooks_available(&why);
  if (!hooks_ok && !(options.partial_ok && g_hooks.loaded.load(std::memory_order_acquire))) throw Error(why);

  std::lock_guard start_lock(start_mutex());
  if (active()) {
    throw Error(
        "heap tracking is already on in this process; stop the other nnprof::MemoryTracking (destroy it) "
        "before starting a new one");
  }
  if (sampler_.joinable()) sampler_.join();
  {
    std::lock_guard lock(mu_);
    live_.clear();
    // Caches of threads that ended since the last run: nothing can use them any more.
    for (HeapThread* t : all_threads_) {
      if (!t->exited || t->own_cache == nullptr) continue;
      t->own_cache->reset();
      live_.recycle(t->own_cache);
      t->own_cache = nullptr;
    }
    g_heap_hot.current.store(0, std::memory_order_relaxed);
    g_heap_hot.peak.store(0, std::memory_order_relaxed);
    peak_ticks_ = 0;
    peak_node_ = nullptr;
    peak_thread_ = ~std::uint32_t{0};
    threads_.clear();
    stack_ids_.clear();
    stacks_.clear();
    stacks_dropped_ = 0;
    samples_.clear();
    warnings_.clear();
    forks_.store(0, std::memory_order_relaxed);
    if (!hooks_ok) warnings_.push_back(why);
    options_ = options;
    session_ = &session;
    start_ticks_ = read_ticks();
    rss_initial_ = collect::read_process_memory().rss;
    sampler_stop_ = false;
  }
  collect::stack_capture_init();
  own_code_.clear();
  for (const void* in : {reinterpret_cast<const void*>(&heap_on_alloc), static_cast<const void*>(g_hooks.any_address)}) {
    if (in == nullptr) continue;
    // The whole text of the module holding `in`, so that its frames can be trimmed.
    struct Find {
      std::uintptr_t address;
      CodeRange range;
    } find{reinterpret_cast<std::uintptr_t>(in), {}};
    dl_iterate_phdr(
        [](dl_phdr_info* info, std::size_t, void* data) {
          auto* f = static_cast<Find*>(data);
          for (int i = 0; i < info->dlpi_phnum; ++i) {
            const auto& ph = info->dlpi_phdr[i];
            if (ph.p_type != PT_LOAD || (ph.p_flags & PF_X) == 0) continue;
            const std::uintptr_t b = info->dlpi_addr + ph.p_vaddr;
            if (f->address >= b && f->address < b + ph.p_memsz) {
              f->range = {b, b + ph.p_memsz};
              return 1;
            }
          }
          return 0;
        },
        &find);
    if (find.range.end != 0) own_code_.push_back(find.range);
  }
  loader_code_ = {};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        if (info->dlpi_name == nullptr || std::strstr(info->dlpi_name, "/ld-linux") == nullptr) return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i) {
          const auto& ph = info->dlpi_phdr[i];
          if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X) != 0)
            *static_cast<CodeRange*>(data) = {info->dlpi_addr + ph.p_vaddr, info->dlpi_addr + ph.p_vaddr + ph.p_memsz};
        }
        return 1;
      },
      &loader_code_);
  source_ = std::make_shared<TrackedHeap>();
  session_->set_heap_source(source_);
  const std::uint64_t run = g_heap_hot.epoch.fetch_add(1, std::memory_order_acq_rel) + 1;  // threads attach anew
  active_.store(true, std::memory_order_release);
  g_heap_hot.tracking.store(true, std::memory_order_release);
  sampler_ = std::thread([this] { sampler_main(); });
  return run;
}

void HeapTracker::stop(std::uint64_t run, bool calling_thread_is_root) noexcept {
  InternalAllocations internal;
  std::lock_guard start_lock(start_mutex());
  if (!active() || (run != 0 && run != g_heap_hot.epoch.load(std::memory_order_acquire))) return;
  g_heap_hot.tracking.store(false, std::memory_order_release);
  active_.store(false, std::memory_order_release);
  {
    // A thread that started moving its cache to the table as it ended has finished (no other
    // will start: tracking is off), so the snapshot below sees each block once. Every thread's
    // batch goes to its node now: the profiler's later snapshots read the nodes alone.
    std::lock_guard lock(mu_);
    for (HeapThread* t : all_threads_) take_batch(*t);
  }
  {
    std::lock_guard lock(sampler_mu_);
    sampler_stop_ = true;
  }
  sampler_cv_.notify_all();
  if (sampler_.joinable()) sampler_.join();
  try {
    take_sample();  // the last point of the timeline: the moment tracking stopped
    RawHeap frozen;
    snapshot(frozen, calling_thread_is_root);
    source_->freeze(std::move(frozen));
  } catch (...) {
    // Out of memory while freezing: later snapshots show no heap rather than a wrong one.
    source_->freeze(RawHeap{});
  }
  source_.reset();
}

HeapCounters HeapTracker::counters() const noexcept {
  InternalAllocations internal;  // first: its vector is freed before the lock is released
  HeapCounters c;
  std::lock_guard lock(mu_);
  std::int64_t current = g_heap_hot.current.load(std::memory_order_relaxed);
  for (const HeapThread* t : threads_) current += t->pending.load(std::memory_order_relaxed);
  c.current_bytes = current > 0 ? static_cast<std::uint64_t>(current) : 0;
  c.peak_bytes = std::max<std::uint64_t>(static_cast<std::uint64_t>(std::max<std::int64_t>(g_heap_hot.peak.load(std::memory_order_relaxed), 0)), c.current_bytes);
  std::vector<BatchedNodeHeap> batched;
  try {
    batched.reserve(threads_.size());
    for (const HeapThread* t : threads_) read_batch(*t, batched);
  } catch (...) {
    batched.clear();  // no memory: the nodes alone
  }
  for (const HeapThread* t : threads_) {
    // Totals live in the call-tree nodes of each thread, and in the threads' batches.
    const ThreadPrivate& p = *t->ts->priv;
    const std::uint32_t n = p.node_count.load(std::memory_order_acquire);
    for (std::uint32_t i = 0; i < n; ++i) {
      RawNodeHeap h;
      read_heap_fields(*p.node_at(i), h);
      for (const BatchedNodeHeap& b : batched)
        if (b.thread == t->index && b.node == i) merge_batched_heap(*p.node_at(i), b, h);
      c.alloc_bytes += h.alloc_bytes;
      c.alloc_count += h.alloc_count;
      c.free_count += h.free_count;
      c.current_blocks += h.retained_blocks;
    }
  }
  return c;
}

// ---- the hot path ------------------------------------------------------------------------

HeapThread* HeapTracker::current_thread() noexcept {
  HeapThreadTls& tls = tls_heap;
  if (tls.internal()) [[unlikely]]
    return nullptr;
  if (tls.run() == g_heap_hot.epoch.load(std::memory_order_relaxed)) [[likely]]
    return static_cast<HeapThread*>(tls.thread);
  return attach();
}

HeapThread* HeapTracker::attach() noexcept {
  InternalAllocations internal;
  if (!active()) return nullptr;
  ThreadState* ts = session_->attach_calling_thread();
  if (ts == nullptr) return nullptr;  // the thread is exiting
  auto* t = static_cast<HeapThread*>(tls_heap.thread);
  try {
    std::lock_guard lock(mu_);
    if (t == nullptr) {
      t = new HeapThread;
      all_threads_.push_back(t);
    }
    threads_.push_back(t);
  } catch (...) {
    return nullptr;
  }
  t->ts = ts;
  t->index = ts->priv->index;
  t->pending.store(0, std::memory_order_relaxed);
  reset_batch(*t);
  t->claims = 0;
  t->untracked_frees.store(0, std::memory_order_relaxed);
  t->untracked_allocs.store(0, std::memory_order_relaxed);
  t->largest_alloc.store(0, std::memory_order_relaxed);
  // The whole stack: frames this thread pushes later lie below the one it is in now.
  const collect::MemoryRange stack = collect::thread_stack(pthread_self()).value_or(collect::current_thread_stack());
  t->stack_begin = stack.begin;
  t->stack_end = stack.end;
  t->rng = (static_cast<std::uint64_t>(ts->priv->os_tid) << 32) ^ read_ticks() ^ 0x9E3779B97F4A7C15ull;
  if (t->rng == 0) t->rng = 1;
  reset_countdown(*t);
  set_up_cache(*t);
  tls_heap_exit.armed = true;  // constructs it on this thread: thread_exit() runs when the thread ends
  tls_heap.thread = t;
  tls_heap.ts = t->ts;
  tls_heap.cache = t->cache;
  tls_heap.join(g_heap_hot.epoch.load(std::memory_order_acquire));
  return t;
}

void HeapTracker::set_up_cache(HeapThread& t) noexcept {
  // The calling thread is t's: it alone writes its cache's blocks. A cache enlisted for an
  // earlier run was delisted when this one started, and may hold that run's blocks.
  t.cache = nullptr;
  t.cache_place = -1;
  if (t.exited) return;
  if (t.own_cache == nullptr && (t.own_cache = live_.new_cache()) == nullptr) return;
  t.own_cache->reset();
  std::lock_guard lock(mu_);
  t.cache_place = live_.enlist(t.own_cache);
  if (t.cache_place < 0) return;  // too many threads have one: this one uses the shared table
  t.cache_epoch = g_heap_hot.epoch.load(std::memory_order_acquire);
  t.cache = t.own_cache;
}

void HeapTracker::thread_exit() noexcept {
  InternalAllocations internal;
  auto* t = static_cast<HeapThread*>(tls_heap.thread);
  if (t == nullptr) return;
  std::lock_guard lock(mu_);
  // The batch goes to its node, if it is this run's (a stopped run took it already).
  if (active() && tls_heap.run() == g_heap_hot.epoch.load(std::memory_order_acquire))
    switch_batch(*t, nullptr);
  else
    drop_taken_batch(*t);
  collect::ThreadCache* cache = t->cache;
  t->cache = nullptr;  // later allocations of this thread (other thread-local destructors) go to the table
  tls_heap.cache = nullptr;
  t->exited = true;
  if (cache == nullptr) return;
  if (active() && t->cache_epoch == g_heap_hot.epoch.load(std::memory_order_acquire) && live_.flush(*cache)) {
    live_.delist(t->cache_place);
    live_.recycle(cache);
    t->own_cache = nullptr;
  }
  // Otherwise tracking stopped (its snapshot may be reading the cache: it stays as it is, and
  // the next start recycles it), or the table could not take every block (they stay
  // enlisted, still found by frees and snapshots).
}

void HeapTracker::reset_countdown(HeapThread& t) noexcept {
  const std::uint64_t mean = options_.stack_sample_bytes;
  if (mean == 0) {
    t.countdown = std::numeric_limits<std::int64_t>::max();
  } else if (mean == 1) {
    t.countdown = 0;  // every allocation of at least one byte
  } else {
    // Exponential gaps make every byte equally likely to be sampled (a Poisson process over
    // allocated bytes), so a block of size s is sampled with probability 1 - exp(-s/mean).
    const double u = static_cast<double>(xorshift(t.rng) >> 11) * 0x1p-53;
    t.countdown = static_cast<std::int64_t>(-std::log1p(-u) * static_cast<double>(mean)) + 1;
  }
}

bool HeapTracker::in_own_code(std::uintptr_t pc) const noexcept {
  for (const CodeRange& r : own_code_)
    if (pc >= r.begin && pc < r.end) return true;
  return false;
}

std::uint32_t HeapTracker::sample_stack(HeapThread& t) noexcept {
  // Before unwinding: the unwinder allocates its thread-local cache on first use.
  InternalAllocations internal;
  reset_countdown(t);
  std::uintptr_t pcs[kMaxStackDepth];
  const int max = std::min<int>(kMaxStackDepth, static_cast<int>(options_.max_stack_depth));
  const int n = collect::capture_stack(pcs, max, 0);
  int first = 0;
  while (first < n && in_own_code(pcs[first])) ++first;  // the hooks and the tracker itself
  if (first == n) return 0;
  try {
    std::vector<std::uintptr_t> key(pcs + first, pcs + n);
    std::lock_guard lock(mu_);
    if (auto it = stack_ids_.find(key); it != stack_ids_.end()) return it->second;
    if (stacks_.size() >= collect::LiveTable::kMaxStackId) {
      ++stacks_dropped_;
      return 0;
    }
    stacks_.push_back(key);
    const auto id = static_cast<std::uint32_t>(stacks_.size());
    stack_ids_.emplace(std::move(key), id);
    return id;
  } catch (...) {
    return 0;
  }
}

void HeapTracker::on_alloc(void* block, std::size_t size, std::uintptr_t caller) noexcept {
  if (block == nullptr) return;
  HeapThread* t = current_thread();
  if (t == nullptr) return;
  Node* node = t->ts->top->node.load(std::memory_order_relaxed);
  std::uint32_t stack = 0;
  t->countdown -= static_cast<std::int64_t>(size);
  if (t->countdown < 0) [[unlikely]]
    stack = sample_stack(*t);
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  const collect::LiveBlockInfo info{size, node, caller, stack};
  const bool kept = t->cache != nullptr ? live_.put(*t->cache, address, info, t->claims)
                                        : live_.table().insert(address, info, t->claims);
  if (!kept) [[unlikely]] {
    single_writer_add(t->untracked_allocs, std::uint64_t{1});
    return;
  }
  if (size > t->largest_alloc.load(std::memory_order_relaxed))
    t->largest_alloc.store(size, std::memory_order_relaxed);  // single writer: the thread itself
  heap_count_alloc(*t, node, size);
}

void HeapTracker::flush(HeapThread& t, Node* node) noexcept {
  const std::int64_t pending = t.pending.load(rx);
  if (Node* n = t.batch_node.load(rx)) {
    // The batch node's live bytes: its own allocated - released when the batch began, the
    // batch's net bytes there, less what other threads released since.
    const std::int64_t live = static_cast<std::int64_t>(t.batch_base) + (pending - t.batch_p0) -
                              static_cast<std::int64_t>(n->heap_released_remote_bytes.load(rx));
    if (live > 0 && static_cast<std::uint64_t>(live) > n->heap_peak_live.load(rx))
      n->heap_peak_live.store(static_cast<std::uint64_t>(live), rx);
  }
  if (pending >= kFlushBytes || pending <= -kFlushBytes ||
      g_heap_hot.current.load(rx) + pending > g_heap_hot.peak.load(rx)) {
    t.pending.store(0, rx);
    t.batch_p0 -= pending;
    const std::int64_t total = g_heap_hot.current.fetch_add(pending, rx) + pending;
    if (pending > 0 && total > g_heap_hot.peak.load(rx)) note_peak(total, t, node);
  }
  refresh_limit(t);
}

void HeapTracker::refresh_limit(HeapThread& t) noexcept {
  // The heap in use would pass its peak, or the batch of heap change is full.
  std::int64_t limit = std::min<std::int64_t>(kFlushBytes - 1, g_heap_hot.peak.load(rx) - g_heap_hot.current.load(rx));
  if (const Node* n = t.batch_node.load(rx)) {
    // The batch node's live bytes (see flush) would pass its peak: other threads' releases
    // only lower them, so this limit is reached no later than a new peak.
    const std::int64_t node_limit = static_cast<std::int64_t>(n->heap_peak_live.load(rx)) -
                                    static_cast<std::int64_t>(t.batch_base) +
                                    static_cast<std::int64_t>(n->heap_released_remote_bytes.load(rx)) + t.batch_p0;
    limit = std::min(limit, node_limit);
  }
  t.limit = limit;
}

bool HeapTracker::switch_batch(HeapThread& t, Node* node) noexcept {
  std::uint64_t seq = t.batch_seq.load(rx);
  if ((seq & HeapThread::kBatchTaken) != 0 ||
      !t.batch_seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire, rx)) {
    drop_taken_batch(t);  // tracking stopped: the stopping thread took the batch
    return false;
  }
  move_batch(t, t.batch_node.load(rx));
  t.batch_node.store(node, std::memory_order_release);
  t.batch_base = node == nullptr ? 0 : node->heap_alloc_bytes.load(rx) - node->heap_released_bytes.load(rx);
  t.batch_p0 = t.pending.load(rx);
  t.batch_seq.store(seq + 2, std::memory_order_release);
  refresh_limit(t);
  return true;
}

void HeapTracker::drop_taken_batch(HeapThread& t) noexcept {
  std::uint64_t seq = t.batch_seq.load(std::memory_order_acquire);
  if ((seq & HeapThread::kBatchTaken) == 0) {
    // Not taken (a run that stopped before this thread's batch began): drop it as it is.
    if (!t.batch_seq.compare_exchange_strong(seq, seq + 1, std::memory_order_acquire, rx)) return drop_taken_batch(t);
    move_batch(t, nullptr);
    t.batch_node.store(nullptr, std::memory_order_release);
    t.batch_seq.store(seq + 2, std::memory_order_release);
  } else {
    for (unsigned spins = 0; (seq & HeapThread::kBatchDone) == 0; spin_wait(spins))
      seq = t.batch_seq.load(std::memory_order_acquire);
    move_batch(t, nullptr);  // nobody reads a taken batch
    t.batch_node.store(nullptr, rx);
  }
  t.limit = std::numeric_limits<std::int64_t>::max();  // the batch node is nullptr: counting takes the slow path
}

void HeapTracker::reset_batch(HeapThread& t) noexcept {
  // The owner, joining a run: the batch of an earlier run was taken when it stopped, or began
  // after that (and is dropped).
  drop_taken_batch(t);
  const std::uint64_t seq = t.batch_seq.load(rx) & ~(HeapThread::kBatchTaken | HeapThread::kBatchDone);
  t.batch_seq.store(seq + 2, std::memory_order_release);
  t.batch_base = 0;
  t.batch_p0 = 0;
  refresh_limit(t);
}

void HeapTracker::take_batch(HeapThread& t) noexcept {
  std::uint64_t seq = t.batch_seq.load(std::memory_order_acquire);
  for (unsigned spins = 0;; spin_wait(spins)) {
    if ((seq & HeapThread::kBatchTaken) != 0) return;
    if ((seq & 1) == 0 &&
        t.batch_seq.compare_exchange_weak(seq, seq | HeapThread::kBatchTaken, std::memory_order_acq_rel,
                                          std::memory_order_acquire))
      break;
    seq = t.batch_seq.load(std::memory_order_acquire);
  }
  move_batch(t, t.batch_node.load(std::memory_order_acquire));
  t.batch_seq.store(seq | HeapThread::kBatchTaken | HeapThread::kBatchDone, std::memory_order_release);
}

void HeapTracker::read_batches(std::vector<BatchedNodeHeap>& out) const {
  std::lock_guard lock(mu_);
  for (const HeapThread* t : threads_) read_batch(*t, out);
}

void HeapTracker::count_alloc_slow(HeapThread& t, Node* node, std::uint64_t size) noexcept {
  if (node == t.batch_node.load(rx) || switch_batch(t, node)) heap_count_alloc(t, node, size);
}

void HeapTracker::count_free(HeapThread& t, Node* here, Node* owner, std::uint64_t size, bool own) noexcept {
  if (here != t.batch_node.load(rx) && !switch_batch(t, here)) {
    // Tracking stopped: only the owner's release, which other threads' snapshots need.
    if (!own) {
      owner->heap_released_remote_bytes.fetch_add(size, rx);
      owner->heap_released_remote_count.fetch_add(1, rx);
    }
    return;
  }
  if (own && owner == here) {
    heap_count_own_free(t, here, owner, size);
    return;
  }
  if (own) {
    // A node of this thread's tree other than the batch node: the owner writes it alone.
    single_writer_add(owner->heap_released_bytes, size);
    single_writer_add(owner->heap_released_count, std::uint64_t{1});
  } else {
    owner->heap_released_remote_bytes.fetch_add(size, rx);
    owner->heap_released_remote_count.fetch_add(1, rx);
  }
  single_writer_add(t.batch_other_bytes, size);
  single_writer_add(t.batch_other_count, std::uint64_t{1});
  // The heap shrinks, the batch node's live bytes do not: the limit follows `pending`.
  const auto s = static_cast<std::int64_t>(size);
  const std::int64_t pending = t.pending.load(rx) - s;
  t.pending.store(pending, rx);
  t.batch_p0 -= s;
  t.limit -= s;
  if (pending <= -kFlushBytes) flush(t, here);
}

void HeapTracker::note_peak(std::int64_t total, HeapThread& t, Node* node) noexcept {
  std::atomic<std::int64_t>& peak_ = g_heap_hot.peak;
  std::int64_t peak = peak_.load(std::memory_order_relaxed);
  while (total > peak)
    if (peak_.compare_exchange_weak(peak, total, std::memory_order_relaxed)) break;
  if (total < peak) return;
  while (peak_lock_.exchange(true, std::memory_order_acquire)) {
  }
  if (peak_.load(std::memory_order_relaxed) == total) {  // still the highest: describe it
    peak_ticks_ = read_ticks();
    peak_node_ = node;
    peak_thread_ = t.index;
  }
  peak_lock_.store(false, std::memory_order_release);
}

void HeapTracker::restore(void* block, const collect::LiveBlockInfo& info) noexcept {
  std::uint32_t claims = 0;  // one slot: too few to matter for the occupancy estimate
  live_.table().insert(reinterpret_cast<std::uintptr_t>(block), info, claims);
}

bool HeapTracker::take(void* block, collect::LiveBlockInfo& info) noexcept {
  if (block == nullptr) return false;
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  HeapThread* t = current_thread();
  collect::ThreadCache* own = t != nullptr ? t->cache : nullptr;
  if (own != nullptr) {
    if (collect::LiveSlot* slot = own->find(address)) {
      info = slot->read();
      slot->key.store(collect::LiveSlot::kEmpty, std::memory_order_release);
      return true;
    }
  }
  return live_.take(own, address, info);
}

void HeapTracker::on_free(void* block) noexcept {
  if (block == nullptr) return;
  HeapThread* t = current_thread();
  const auto address = reinterpret_cast<std::uintptr_t>(block);
  if (t != nullptr && t->cache != nullptr) {
    std::uint64_t size = 0;
    Node* owner = nullptr;
    if (t->cache->take_own(address, size, owner)) {
      heap_count_own_free(*t, t->ts->top->node.load(std::memory_order_relaxed), owner, size);
      return;
    }
  }
  collect::LiveBlockInfo info;
  if (!live_.take(t != nullptr ? t->cache : nullptr, address, info)) {
    // Allocated before tracking started, or by nnprof itself.
    if (t != nullptr) single_writer_add(t->untracked_frees, std::uint64_t{1});
    return;
  }
  release(t, info);
}

void HeapTracker::release(const collect::LiveBlockInfo& info) noexcept { release(current_thread(), info); }

void HeapTracker::release(HeapThread* t, const collect::LiveBlockInfo& info) noexcept {
  Node* owner = info.node;
  if (t == nullptr) {
    // nnprof's own code, or a thread that is exiting, frees a tracked block.
    owner->heap_released_remote_bytes.fetch_add(info.size, rx);
    owner->heap_released_remote_count.fetch_add(1, rx);
    g_heap_hot.current.fetch_sub(static_cast<std::int64_t>(info.size), rx);
    return;
  }
  Node* here = t->ts->top->node.load(rx);
  count_free(*t, here, owner, info.size, owner->thread == t->index);
}

// ---- the memory timeline -----------------------------------------------------------------

void HeapTracker::sampler_main() {
  InternalAllocations internal;  // for the life of the thread
  set_current_thread_name("nnprof heap");
  std::unique_lock lock(sampler_mu_);
  for (;;) {
    lock.unlock();
    take_sample();
    lock.lock();
    if (sampler_cv_.wait_for(lock, options_.interval, [this] { return sampler_stop_; })) return;
  }
}

void HeapTracker::take_sample() {
  const collect::ProcessMemory mem = collect::read_process_memory();
  std::lock_guard lock(mu_);
  std::int64_t heap = g_heap_hot.current.load(std::memory_order_relaxed);
  for (const HeapThread* t : threads_) heap += t->pending.load(std::memory_order_relaxed);
  if (samples_.size() >= kMaxSamples) return;
  samples_.push_back(RawHeapSample{read_ticks(), heap > 0 ? static_cast<std::uint64_t>(heap) : 0, mem.rss, mem.hwm});
}

// ---- snapshots ---------------------------------------------------------------------------

void HeapTracker::collect_leaks(RawHeap& out, bool calling_thread_is_root) {
  struct Key {
    const Node* node;
    std::uintptr_t caller;
    std::uint32_t stack;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const noexcept {
      return std::hash<const void*>()(k.node) ^ (k.caller * 0x9E3779B97F4A7C15ull) ^ (std::size_t{k.stack} << 40);
    }
  };
  struct Block {
    std::uintptr_t address;
    std::uint64_t size;
    std::uint32_t group;
  };
  std::unordered_map<Key, std::uint32_t, KeyHash> group_of;
  std::vector<Key> keys;
  std::vector<Block> blocks;
  live_.for_each([&](std::uintptr_t address, const collect::LiveBlockInfo& info) {
    if (info.node == nullptr) return;
    const Key k{info.node, info.caller, info.stack};
    auto [it, inserted] = group_of.try_emplace(k, static_cast<std::uint32_t>(keys.size()));
    if (inserted) keys.push_back(k);
    blocks.push_back(Block{address, info.size, it->second});
  });
  out.current_blocks = blocks.size();
  out.current_bytes = 0;
  for (const Block& b : blocks) out.current_bytes += b.size;

  std::vector<bool> reachable(blocks.size(), false);
  if (options_.find_leaks && !blocks.empty()) {
    std::sort(blocks.begin(), blocks.end(), [](const Block& a, const Block& b) { return a.address < b.address; });
    std::vector<collect::LiveBlock> live;
    live.reserve(blocks.size());
    for (const Block& b : blocks) live.push_back(collect::LiveBlock{b.address, b.size});
    // Roots: global data of every module but nnprof's own, and the stacks of live threads.
    std::vector<std::uintptr_t> own;
    for (const CodeRange& r : own_code_) own.push_back(r.begin);
    std::vector<collect::MemoryRange> roots = collect::global_data_ranges(own);
    const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
    {
      std::lock_guard lock(mu_);
      for (const HeapThread* t : threads_) {
        if (t->stack_end == 0 || t->ts->priv->exited.load(std::memory_order_acquire)) continue;
        if (here >= t->stack_begin && here < t->stack_end) continue;  // this thread: below
        roots.push_back(collect::MemoryRange{t->stack_begin, t->stack_end});
      }
    }
    // The calling thread's live frames only: below them lie stale values of returned calls.
    const collect::MemoryRange mine = collect::current_thread_stack();
    if (calling_thread_is_root && mine.end > here) roots.push_back(collect::MemoryRange{here, mine.end});
    // Memory the program mapped itself holds pointers as global data does (pymalloc keeps
    // Python's objects in its own arenas): a root, but not what holds every block's address
    // for nnprof (its tables, this function's lists) nor thread stacks, whose dead parts
    // hold stale pointers (the live parts are roots above).
    std::vector<collect::MemoryRange> not_mapped_roots;
    const bool tables_known = collect::live_table_mappings(not_mapped_roots);
    {
      std::lock_guard lock(mu_);
      for (const HeapThread* t : threads_)
        if (t->stack_end != 0) not_mapped_roots.push_back(collect::MemoryRange{t->stack_begin, t->stack_end});
    }
    if (const auto whole = collect::thread_stack(pthread_self())) not_mapped_roots.push_back(*whole);
    // This function's list of every block (`live`, find_reachable cuts out itself): malloc'd,
    // so cut out after the test for blocks (see MappedRoots::own_buffers).
    const auto listed = reinterpret_cast<std::uintptr_t>(blocks.data());
    const collect::MemoryRange own_list{listed, listed + blocks.capacity() * sizeof(Block)};
    std::vector<collect::MemoryRange> mapped_ranges;
    if (tables_known) mapped_ranges = collect::anonymous_mappings(not_mapped_roots);
    collect::MappedRoots mapped{mapped_ranges};
    mapped.own_buffers = {&own_list, 1};
    reachable = collect::find_reachable(live, roots, &mapped);
    if (!tables_known)
      out.warnings.push_back(
          "the leak check did not scan memory the program mapped itself (nnprof could not tell its own tables "
          "apart), so blocks referenced only from there (such as pymalloc's arenas) are counted as leaked: the "
          "leak figures may be too high");
    else if (mapped.skipped_bytes > 0)
      out.warnings.push_back(fmt::format(
          "the leak check scanned {} MiB of memory the program mapped itself and left out {} MiB over its limit: "
          "blocks referenced only from there are counted as leaked, so the leak figures may be too high",
          mapped.scanned_bytes >> 20, mapped.skipped_bytes >> 20));
    for (std::size_t i = 0; i < blocks.size(); ++i) {
      const std::uintptr_t caller = keys[blocks[i].group].caller;
      if (caller >= loader_code_.begin && caller < loader_code_.end) reachable[i] = true;
    }
    out.reachability_checked = true;
  }

  // Groups split by reachability, largest first.
  std::unordered_map<std::uint64_t, std::size_t> out_index;
  std::vector<RawLeakGroup> groups;
  for (std::size_t i = 0; i < blocks.size(); ++i) {
    const Block& b = blocks[i];
    const bool r = reachable[i];
    const std::uint64_t id = (std::uint64_t{b.group} << 1) | (r ? 1 : 0);
    auto [it, inserted] = out_index.try_emplace(id, groups.size());
    if (inserted) {
      const Key& k = keys[b.group];
      groups.push_back(RawLeakGroup{k.node->thread, k.node->index, k.caller, k.stack, r, 0, 0});
    }
    RawLeakGroup& g = groups[it->second];
    ++g.blocks;
    g.bytes += b.size;
    (r ? out.reachable_blocks : out.leaked_blocks) += 1;
    (r ? out.reachable_bytes : out.leaked_bytes) += b.size;
  }
  std::sort(groups.begin(), groups.end(), [](const RawLeakGroup& a, const RawLeakGroup& b) {
    if (a.reachable != b.reachable) return !a.reachable;  // leaks before still-reachable blocks
    return a.bytes > b.bytes;
  });
  if (groups.size() > kMaxLeakGroups) {
    out.warnings.push_back(fmt::format("{} allocation sites still held memory; only the {} largest are kept",
                                       groups.size(), kMaxLeakGroups));
    groups.resize(kMaxLeakGroups);
  }
  out.leaks = std::move(groups);
}

void HeapTracker::snapshot(RawHeap& out, bool calling_thread_is_root) {
  InternalAllocations internal;
  out = RawHeap{};
  out.tracked = true;
  out.source = options_.source;
  out.stack_sample_bytes = options_.stack_sample_bytes;
  out.interval_ns = static_cast<std::uint64_t>(std::chrono::nanoseconds(options_.interval).count());
  out.peak_resolution_bytes = static_cast<std::uint64_t>(kFlushBytes);
  collect_leaks(out, calling_thread_is_root);
  const collect::ProcessMemory mem = collect::read_process_memory();
  out.rss_initial = rss_initial_;
  out.rss_final = mem.rss;
  out.rss_peak = mem.hwm;
  while (peak_lock_.exchange(true, std::memory_order_acquire)) {
  }
  const std::int64_t peak = g_heap_hot.peak.load(std::memory_order_relaxed);
  const Node* peak_node = peak_node_;
  out.peak_ticks = peak_ticks_;
  out.peak_thread = peak_thread_;
  peak_lock_.store(false, std::memory_order_release);
  out.peak_bytes = peak > 0 ? static_cast<std::uint64_t>(peak) : 0;
  if (peak_node != nullptr) out.peak_node = peak_node->index;
  if (out.current_bytes > out.peak_bytes) {  // below the flush threshold, the table is exact
    out.peak_bytes = out.current_bytes;
    out.peak_ticks = read_ticks();
    out.peak_node = 0;
    out.peak_thread = ~std::uint32_t{0};
  }
  std::lock_guard lock(mu_);
  out.peak_resolution_bytes = static_cast<std::uint64_t>(kFlushBytes) * std::max<std::size_t>(threads_.size(), 1);
  for (const HeapThread* t : threads_) {
    out.untracked_frees += t->untracked_frees.load(std::memory_order_relaxed);
    out.untracked_allocs += t->untracked_allocs.load(std::memory_order_relaxed);
    out.largest_alloc_bytes = std::max(out.largest_alloc_bytes, t->largest_alloc.load(std::memory_order_relaxed));
  }
  out.samples = samples_;
  out.stacks = stacks_;
  out.warnings.insert(out.warnings.end(), warnings_.begin(), warnings_.end());
  if (stacks_dropped_ > 0)
    out.warnings.push_back(fmt::format("{} sampled stacks were not kept: the limit of {} distinct stacks was reached",
                                       stacks_dropped_, collect::LiveTable::kMaxStackId));
  if (out.untracked_allocs > 0)
    out.warnings.push_back(fmt::format(
        "{} allocations were not tracked because no memory could be mapped for the live-allocation table",
        out.untracked_allocs));
  if (const std::uint64_t forks = forks_.load(std::memory_order_relaxed); forks > 0)
    out.warnings.push_back(fmt::format(
        "the process forked {} time(s); a child that does not exec is not tracked (one that execs is profiled on "
        "its own under `nnprof record`)",
        forks));
}

void TrackedHeap::snapshot_heap(RawHeap& out) {
  std::lock_guard lock(mu_);
  if (frozen_)
    out = heap_;
  else
    HeapTracker::instance().snapshot(out);
}

void TrackedHeap::batched_heap(std::vector<BatchedNodeHeap>& out) {
  std::lock_guard lock(mu_);
  if (!frozen_) HeapTracker::instance().read_batches(out);  // frozen: stop moved every batch to its node
}

void TrackedHeap::discard_timeline(std::size_t points) noexcept {
  std::lock_guard lock(mu_);
  if (frozen_) {
    heap_.samples.erase(heap_.samples.begin(),
                        heap_.samples.begin() + static_cast<std::ptrdiff_t>(std::min(points, heap_.samples.size())));
  } else {
    HeapTracker::instance().discard_samples(points);
  }
}

void HeapTracker::discard_samples(std::size_t points) noexcept {
  std::lock_guard lock(mu_);
  samples_.erase(samples_.begin(), samples_.begin() + static_cast<std::ptrdiff_t>(std::min(points, samples_.size())));
}

void TrackedHeap::freeze(RawHeap heap) {
  std::lock_guard lock(mu_);
  heap_ = std::move(heap);
  frozen_ = true;
}

// ---- the hooks' entry points -------------------------------------------------------------

void* heap_on_alloc(void* block, std::size_t size, const void* caller) noexcept {
  HeapTracker::instance().on_alloc(block, size, reinterpret_cast<std::uintptr_t>(caller));
  return block;
}

void heap_on_free(void* block) noexcept { HeapTracker::instance().on_free(block); }

void heap_flush(HeapThread& thread, Node* node) noexcept { HeapTracker::instance().flush(thread, node); }

void heap_count_alloc_slow(HeapThread& thread, Node* node, std::uint64_t size) noexcept {
  HeapTracker::instance().count_alloc_slow(thread, node, size);
}

void heap_count_free_slow(HeapThread& thread, Node* here, Node* owner, std::uint64_t size) noexcept {
  HeapTracker::instance().count_free(thread, here, owner, size, true);
}

HeapBlockToken heap_realloc_begin(void* old_block) noexcept {
  collect::LiveBlockInfo info;
  HeapBlockToken token;
  if (HeapTracker::instance().take(old_block, info)) token = {true, info.size, info.node, info.caller, info.stack};
  return token;
}

void heap_realloc_end(const HeapBlockToken& old, void* old_block, void* new_block, std::size_t size,
                      const void* caller) noexcept {
  HeapTracker& tracker = HeapTracker::instance();
  const collect::LiveBlockInfo info{old.size, static_cast<Node*>(old.node), old.caller, old.stack};
  if (new_block == nullptr && size != 0) {
    if (old.found) tracker.restore(old_block, info);  // failed: the old block is still there
    return;
  }
  if (old.found) tracker.release(info);
  tracker.on_alloc(new_block, size, reinterpret_cast<std::uintptr_t>(caller));
}

void heap_hooks_loaded(const HeapHooksInfo& info) noexcept {
  g_hooks.library = info.library;
  g_hooks.any_address = info.any_address;
  g_hooks.loaded.store(true, std::memory_order_release);
}

}  // namespace nnprof::detail

namespace nnprof {

bool heap_hooks_available(std::string* why) {
  using detail::g_hooks;
  if (!g_hooks.loaded.load(std::memory_order_acquire)) {
    if (why != nullptr)
      *why =
          "heap tracking needs nnprof's allocation hooks, which are not loaded in this process: link the CMake "
          "target nnprof::memory (libnnprof_memory.so), or run the program under `nnprof record --memory`";
    return false;
  }
  for (const char* name : {"malloc", "free"}) {
    void* resolved = dlsym(RTLD_DEFAULT, name);
    if (resolved != nullptr && detail::reaches_hooks(name, resolved)) continue;
    if (why != nullptr)
      *why = fmt::format(
          "{} in this process resolves to {} rather than to nnprof's hooks in {}: another allocator (a "
          "sanitizer such as ASan or TSan, or an allocator linked into the executable) takes precedence, so heap "
          "tracking would miss allocations; profile a build without it",
          name, detail::module_of(resolved), g_hooks.library != nullptr ? g_hooks.library : "the hooks library");
    return false;
  }
  return true;
}

}  // namespace nnprof
