// Automatic heap tracking through the real hooks (this test links nnprof::memory): exact
// bytes and counts per allocation function, attribution to scopes across threads, the peak,
// and leaks found at their site.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <malloc.h>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/error.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"

namespace {

using nnprof::LeakSite;
using nnprof::MemoryTracking;
using nnprof::MemoryTrackingOptions;
using nnprof::Profile;
using nnprof::Profiler;

// Keeps the compiler from eliding an allocation it can see is unused.
template <class T>
void escape(T* p) {
  asm volatile("" : : "g"(p) : "memory");
}

bool hooks_available(std::string& why) { return nnprof::heap_hooks_available(&why); }

#define REQUIRE_HOOKS()                                                                     \
  do {                                                                                      \
    std::string why;                                                                        \
    if (!hooks_available(why)) GTEST_SKIP() << "heap hooks unavailable here: " << why;      \
  } while (0)

const nnprof::CallTreeNode* node_named(const Profile& p, const std::string& path) {
  for (const auto& n : p.call_tree)
    if (n.id != 0 && p.node_path(n.id) == path) return &n;
  return nullptr;
}

MemoryTrackingOptions every_stack() {
  MemoryTrackingOptions o;
  o.stack_sample_bytes = 1;
  return o;
}

struct alignas(64) Aligned64 {
  char bytes[64];
};

TEST(HeapTracking, ExactBytesAndCountsOfEveryAllocationFunction) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  {
    NNPROF_SCOPE_IN(profiler, "patterns");
    void* a = std::malloc(100);
    void* b = std::calloc(10, 20);
    void* r = std::malloc(10);
    r = std::realloc(r, 1000);
    r = std::realloc(r, 100'000);
    void* pm = nullptr;
    ASSERT_EQ(posix_memalign(&pm, 64, 256), 0);
    void* al = std::aligned_alloc(128, 512);
    int* arr = new int[25];
    auto* d = new double(1.0);
    auto* x = new Aligned64;
    for (void* p : {a, b, r, pm, al}) escape(p);
    escape(arr);
    escape(d);
    escape(x);
    std::free(a);
    std::free(b);
    std::free(r);
    std::free(pm);
    std::free(al);
    delete[] arr;
    delete d;
    delete x;
  }
  tracking.stop();
  const Profile p = profiler.snapshot();
  ASSERT_TRUE(p.heap.tracked);
  const auto* s = p.find_scope("patterns");
  ASSERT_NE(s, nullptr);
  // realloc counts as freeing the old block and allocating the new one: 10 -> 1000 -> 100000.
  const std::uint64_t bytes = 100 + 200 + 10 + 1000 + 100'000 + 256 + 512 + 25 * sizeof(int) + sizeof(double) + 64;
  EXPECT_EQ(s->heap.alloc_count, 10u);
  EXPECT_EQ(s->heap.alloc_bytes, bytes);
  EXPECT_EQ(s->heap.free_count, 10u);
  EXPECT_EQ(s->heap.free_bytes, bytes);
  EXPECT_EQ(s->heap.retained_bytes, 0u);
  EXPECT_EQ(s->heap.retained_blocks, 0u);
  EXPECT_EQ(s->heap.peak_live_bytes, 100 + 200 + 100'000 + 256 + 512 + 25 * sizeof(int) + sizeof(double) + 64);
}

// Allocates three 1 KiB blocks and drops every pointer to them; runs on a thread that then
// exits, so that no stack still holds them.
__attribute__((noinline)) void leak_three_blocks(Profiler& profiler) {
  NNPROF_SCOPE_IN(profiler, "leaky");
  for (int i = 0; i < 3; ++i) {
    char* p = static_cast<char*>(std::malloc(1024));
    std::memset(p, 0x5A, 1024);
    escape(p);
  }
}

void* g_reachable_block = nullptr;

TEST(HeapTracking, LeakOfThreeBlocksIsReportedAtItsSite) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler, every_stack());
  std::thread([&] { leak_three_blocks(profiler); }).join();
  {
    NNPROF_SCOPE_IN(profiler, "kept");
    g_reachable_block = std::malloc(4096);  // referenced by a global: not a leak
  }
  tracking.stop();
  const Profile p = profiler.snapshot();
  ASSERT_TRUE(p.heap.reachability_checked);
  const LeakSite* leak = nullptr;
  for (const auto& l : p.leaks)
    if (!l.reachable && l.node != 0 && p.node_path(l.node) == "leaky") leak = &l;
  ASSERT_NE(leak, nullptr);
  EXPECT_EQ(leak->blocks, 3u);
  EXPECT_EQ(leak->bytes, 3072u);
  ASSERT_NE(leak->caller, nnprof::kNone);
  const auto& caller = p.frames[leak->caller];
  ASSERT_NE(caller.function, nnprof::kNone);
  EXPECT_NE(p.str(caller.function).find("leak_three_blocks"), std::string::npos) << p.str(caller.function);
  ASSERT_NE(leak->stack, nnprof::kNone);  // every allocation sampled in this test
  bool through_caller = false;
  for (std::uint32_t f : p.stacks[leak->stack].frames)
    if (p.frames[f].function != nnprof::kNone && p.str(p.frames[f].function).find("leak_three_blocks") != std::string::npos)
      through_caller = true;
  EXPECT_TRUE(through_caller);

  const LeakSite* kept = nullptr;
  for (const auto& l : p.leaks)
    if (l.node != 0 && p.node_path(l.node) == "kept") kept = &l;
  ASSERT_NE(kept, nullptr);
  EXPECT_TRUE(kept->reachable);
  EXPECT_EQ(kept->bytes, 4096u);
  EXPECT_GE(p.heap.leaked_bytes, 3072u);
  std::free(g_reachable_block);
}

TEST(HeapTracking, AttributionPerScopeAcrossFourThreads) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&profiler, t] {
      NNPROF_SCOPE_IN(profiler, "worker");
      void* blocks[15];  // not a vector: its own growth would be allocations too
      for (int i = 0; i < 10; ++i) blocks[i] = std::malloc(static_cast<std::size_t>(1000 * (t + 1)));
      {
        NNPROF_SCOPE_IN(profiler, "inner");
        for (int i = 10; i < 15; ++i) blocks[i] = new char[64];
      }
      for (int i = 0; i < 10; ++i) std::free(blocks[i]);
      for (int i = 10; i < 15; ++i) delete[] static_cast<char*>(blocks[i]);
    });
  }
  for (auto& th : threads) th.join();
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* worker = p.find_scope("worker");
  const auto* inner = p.find_scope("inner");
  ASSERT_NE(worker, nullptr);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(worker->thread_count, 4u);
  EXPECT_EQ(worker->heap.alloc_count, 40u);
  EXPECT_EQ(worker->heap.alloc_bytes, 10u * (1000 + 2000 + 3000 + 4000));
  EXPECT_EQ(inner->heap.alloc_count, 20u);
  EXPECT_EQ(inner->heap.alloc_bytes, 20u * 64);
  // Frees are attributed to the scope open when they happen: all in "worker".
  EXPECT_EQ(worker->heap.free_count, 60u);
  EXPECT_EQ(worker->heap.retained_bytes, 0u);
  EXPECT_EQ(inner->heap.retained_bytes, 0u);
  const auto* node = node_named(p, "worker > inner");
  ASSERT_NE(node, nullptr);
  EXPECT_EQ(node->heap.alloc_bytes, 20u * 64);
}

TEST(HeapTracking, PeakIsFoundAtTheScopeThatReachedIt) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  constexpr std::size_t kMiB = 1024 * 1024;
  {
    NNPROF_SCOPE_IN(profiler, "warmup");
    void* p = std::malloc(1 * kMiB);
    escape(p);
    std::free(p);
  }
  {
    NNPROF_SCOPE_IN(profiler, "forward");
    NNPROF_SCOPE_IN(profiler, "activations");
    void* blocks[8];
    for (void*& b : blocks) b = std::malloc(kMiB);
    for (void* b : blocks) std::free(b);
  }
  {
    NNPROF_SCOPE_IN(profiler, "after");
    void* p = std::malloc(2 * kMiB);
    escape(p);
    std::free(p);
  }
  const auto counters = tracking.counters();
  tracking.stop();
  const Profile p = profiler.snapshot();
  EXPECT_GE(p.heap.peak_bytes, 8 * kMiB);
  EXPECT_LE(p.heap.peak_bytes, 8 * kMiB + p.heap.peak_resolution_bytes + 256 * 1024);
  ASSERT_NE(p.heap.peak_node, 0u);
  EXPECT_EQ(p.node_path(p.heap.peak_node), "forward > activations");
  EXPECT_GT(p.heap.peak_time_ns, 0u);
  EXPECT_GE(counters.peak_bytes, 8 * kMiB);
  const auto* act = p.find_scope("activations");
  ASSERT_NE(act, nullptr);
  EXPECT_EQ(act->heap.peak_live_bytes, 8 * kMiB);
}

TEST(HeapTracking, TimelineHasHeapAndRssSamples) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTrackingOptions o;
  o.interval = std::chrono::milliseconds(5);
  MemoryTracking tracking(profiler, o);
  std::vector<void*> blocks;
  for (int i = 0; i < 20; ++i) {
    blocks.push_back(std::malloc(256 * 1024));
    std::memset(blocks.back(), 1, 256 * 1024);
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
  }
  for (void* b : blocks) std::free(b);
  tracking.stop();
  const Profile p = profiler.snapshot();
  ASSERT_GE(p.heap_samples.size(), 5u);
  std::uint64_t max_heap = 0;
  for (const auto& s : p.heap_samples) {
    max_heap = std::max(max_heap, s.heap_bytes);
    EXPECT_GT(s.rss_bytes, 0u);
    EXPECT_GE(s.rss_peak_bytes, s.rss_bytes);
  }
  EXPECT_GE(max_heap, 2u * 1024 * 1024);
  EXPECT_GT(p.heap.rss_peak_bytes, 0u);
  EXPECT_GT(p.heap.rss_initial_bytes, 0u);
}

TEST(HeapTracking, OnlyOneTrackerAtATimeAndAClearErrorWithoutHooks) {
  std::string why;
  if (!hooks_available(why)) {
    // A sanitizer build: its allocator takes precedence, and tracking says so.
    Profiler profiler;
    try {
      MemoryTracking tracking(profiler);
      FAIL() << "tracking started without working hooks";
    } catch (const nnprof::Error& e) {
      EXPECT_NE(std::string(e.what()).find("malloc"), std::string::npos) << e.what();
    }
    return;
  }
  Profiler profiler;
  MemoryTracking first(profiler);
  EXPECT_THROW(MemoryTracking second(profiler), nnprof::Error);
  first.stop();
  MemoryTracking again(profiler);  // restartable once stopped
  EXPECT_TRUE(again.active());
}

// Blocks still in the allocating thread's cache, freed by another thread while the allocating
// one is alive: each free is found (none untracked) and credited to the allocating scope.
TEST(HeapTracking, CrossThreadFreeOfBlocksStillInTheAllocatingThreadsCache) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  constexpr int kBlocks = 50;
  void* blocks[kBlocks];
  std::atomic<int> stage{0};
  std::thread producer([&] {
    NNPROF_SCOPE_IN(profiler, "producer");
    for (int i = 0; i < kBlocks; ++i) blocks[i] = std::malloc(static_cast<std::size_t>(100 + i));
    stage.store(1);
    while (stage.load() != 2) std::this_thread::yield();  // alive while the consumer frees
  });
  while (stage.load() != 1) std::this_thread::yield();
  {
    NNPROF_SCOPE_IN(profiler, "consumer");
    for (void* b : blocks) std::free(b);
  }
  stage.store(2);
  producer.join();
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* producer_scope = p.find_scope("producer");
  const auto* consumer_scope = p.find_scope("consumer");
  ASSERT_NE(producer_scope, nullptr);
  ASSERT_NE(consumer_scope, nullptr);
  const std::uint64_t bytes = kBlocks * 100 + kBlocks * (kBlocks - 1) / 2;
  EXPECT_EQ(producer_scope->heap.alloc_count, static_cast<std::uint64_t>(kBlocks));
  EXPECT_EQ(producer_scope->heap.alloc_bytes, bytes);
  EXPECT_EQ(producer_scope->heap.retained_blocks, 0u);
  EXPECT_EQ(producer_scope->heap.retained_bytes, 0u);
  EXPECT_EQ(consumer_scope->heap.free_count, static_cast<std::uint64_t>(kBlocks));
  EXPECT_EQ(consumer_scope->heap.free_bytes, bytes);
  for (const auto& l : p.leaks)
    EXPECT_FALSE(l.node != 0 && p.node_path(l.node) == "producer") << "a freed block is still live";
}

// Far more live blocks than a thread's cache holds: the older ones move to the shared table,
// and every one is still known (snapshot mid-run) and found when freed, by either thread.
TEST(HeapTracking, ManyLiveBlocksOutgrowTheCacheAndAreAllFound) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  constexpr std::size_t kBlocks = 20'000;
  std::vector<void*> blocks;
  blocks.reserve(kBlocks);  // before the scope: the vector's own block is not counted there
  {
    NNPROF_SCOPE_IN(profiler, "many");
    for (std::size_t i = 0; i < kBlocks; ++i) blocks.push_back(std::malloc(32 + i % 64));
  }
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < kBlocks; ++i) bytes += 32 + i % 64;
  {
    const Profile mid = profiler.snapshot();
    std::uint64_t site_blocks = 0, site_bytes = 0;
    for (const auto& l : mid.leaks)
      if (l.node != 0 && mid.node_path(l.node) == "many") site_blocks += l.blocks, site_bytes += l.bytes;
    EXPECT_EQ(site_blocks, kBlocks);
    EXPECT_EQ(site_bytes, bytes);
  }
  std::thread([&] {
    for (std::size_t i = 1; i < kBlocks; i += 2) std::free(blocks[i]);
  }).join();
  for (std::size_t i = 0; i < kBlocks; i += 2) std::free(blocks[i]);
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* s = p.find_scope("many");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->heap.alloc_count, kBlocks);
  EXPECT_EQ(s->heap.alloc_bytes, bytes);
  EXPECT_EQ(s->heap.retained_blocks, 0u);
  EXPECT_EQ(s->heap.peak_live_bytes, bytes);
  for (const auto& l : p.leaks) EXPECT_FALSE(l.node != 0 && p.node_path(l.node) == "many");
}

// A thread ends with blocks in its cache: they move to the shared table, so that frees by
// other threads still find them and the ones never freed are reported as leaks.
TEST(HeapTracking, ThreadEndingWithCachedBlocksThenFreesAndLeaks) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  void* handed_over[10];
  std::thread([&] {
    NNPROF_SCOPE_IN(profiler, "ending");
    for (void*& b : handed_over) b = std::malloc(200);
    for (int i = 0; i < 4; ++i) {
      char* leak = static_cast<char*>(std::malloc(300));  // dropped: a leak
      std::memset(leak, 0x5A, 300);
      escape(leak);
    }
  }).join();
  {
    NNPROF_SCOPE_IN(profiler, "after");
    for (void* b : handed_over) std::free(b);
  }
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* ending = p.find_scope("ending");
  const auto* after = p.find_scope("after");
  ASSERT_NE(ending, nullptr);
  ASSERT_NE(after, nullptr);
  EXPECT_EQ(ending->heap.alloc_count, 14u);
  EXPECT_EQ(ending->heap.retained_blocks, 4u);
  EXPECT_EQ(ending->heap.retained_bytes, 1200u);
  EXPECT_EQ(after->heap.free_count, 10u);
  EXPECT_EQ(after->heap.free_bytes, 2000u);
  std::uint64_t leaked = 0, leaked_bytes = 0;
  for (const auto& l : p.leaks)
    if (l.node != 0 && p.node_path(l.node) == "ending") leaked += l.blocks, leaked_bytes += l.bytes;
  EXPECT_EQ(leaked, 4u);
  EXPECT_EQ(leaked_bytes, 1200u);
}

// Stop and start again: the second run starts with empty caches. Blocks of the first run are
// not the second's (their frees are untracked), and its own counts are exact.
TEST(HeapTracking, RestartStartsWithEmptyCaches) {
  REQUIRE_HOOKS();
  void* from_first[20];
  {
    Profiler first;
    MemoryTracking tracking(first);
    {
      NNPROF_SCOPE_IN(first, "first");
      for (void*& b : from_first) b = std::malloc(128);
    }
    tracking.stop();
    const Profile p = first.snapshot();
    const auto* s = p.find_scope("first");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->heap.alloc_count, 20u);
    EXPECT_EQ(p.heap.current_blocks, 20u);
  }
  Profiler second;
  MemoryTracking tracking(second);
  void* mine[5];
  {
    NNPROF_SCOPE_IN(second, "second");
    for (void*& b : mine) b = std::malloc(64);
    for (void* b : from_first) std::free(b);  // same addresses' cache slots, other run
    for (int i = 0; i < 3; ++i) std::free(mine[i]);
  }
  tracking.stop();
  const Profile p = second.snapshot();
  const auto* s = p.find_scope("second");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->heap.alloc_count, 5u);
  EXPECT_EQ(s->heap.free_count, 3u);
  EXPECT_EQ(s->heap.retained_blocks, 2u);
  EXPECT_GE(p.heap.untracked_frees, 20u);
  EXPECT_EQ(p.heap.current_blocks, 2u);
  EXPECT_EQ(p.heap.current_bytes, 128u);
  for (int i = 3; i < 5; ++i) std::free(mine[i]);
}

// Counts are batched per thread until the innermost scope changes (heap_fast_path.hpp):
// snapshots taken while tracking runs must still see every allocation made before them, the
// statistics-only ones (stats()) and HeapCounters included.
TEST(HeapTracking, SnapshotsWhileTrackingSeeTheBatchedCounts) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  void* kept[3];
  {
    NNPROF_SCOPE_IN(profiler, "batched");
    for (int i = 0; i < 100; ++i) {
      void* b = std::malloc(48);
      escape(b);
      std::free(b);
    }
    for (void*& b : kept) b = std::malloc(1000);
  }
  // No allocation since the scope closed: its counts may still be in this thread's batch.
  const auto counters = tracking.counters();
  const auto stats = profiler.stats("batched");
  const Profile p = profiler.snapshot();
  EXPECT_GE(counters.alloc_count, 103u);
  EXPECT_GE(counters.current_blocks, 3u);
  ASSERT_TRUE(stats.has_value());
  EXPECT_EQ(stats->heap.alloc_count, 103u);
  EXPECT_EQ(stats->heap.alloc_bytes, 100u * 48 + 3000);
  EXPECT_EQ(stats->heap.free_count, 100u);
  EXPECT_EQ(stats->heap.retained_bytes, 3000u);
  const auto* s = p.find_scope("batched");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->heap.alloc_count, 103u);
  EXPECT_EQ(s->heap.alloc_bytes, 100u * 48 + 3000);
  EXPECT_EQ(s->heap.free_count, 100u);
  EXPECT_EQ(s->heap.free_bytes, 100u * 48);
  EXPECT_EQ(s->heap.retained_blocks, 3u);
  EXPECT_EQ(s->heap.retained_bytes, 3000u);
  EXPECT_EQ(s->heap.peak_live_bytes, 3000u);
  for (void* b : kept) std::free(b);
  tracking.stop();
  const Profile after = profiler.snapshot();
  const auto* a = after.find_scope("batched");
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(a->heap.alloc_count, 103u);
  EXPECT_EQ(a->heap.retained_bytes, 0u);  // freed outside any scope, still released here
}

// Another thread's batch: the snapshot is taken while that thread waits inside its scope.
TEST(HeapTracking, SnapshotSeesTheBatchOfAThreadStillInsideItsScope) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  std::atomic<int> stage{0};
  void* blocks[10];
  std::thread worker([&] {
    {
      NNPROF_SCOPE_IN(profiler, "waiting");
      for (void*& b : blocks) b = std::malloc(200);
      for (int i = 0; i < 4; ++i) std::free(blocks[i]);
      stage.store(1);
      while (stage.load() != 2) std::this_thread::yield();
    }
    for (int i = 4; i < 10; ++i) std::free(blocks[i]);
  });
  while (stage.load() != 1) std::this_thread::yield();
  const Profile mid = profiler.snapshot();
  stage.store(2);
  worker.join();
  const auto* n = node_named(mid, "waiting");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->heap.alloc_count, 10u);
  EXPECT_EQ(n->heap.alloc_bytes, 2000u);
  EXPECT_EQ(n->heap.free_count, 4u);
  EXPECT_EQ(n->heap.retained_blocks, 6u);
  EXPECT_EQ(n->heap.retained_bytes, 1200u);
  EXPECT_EQ(n->heap.peak_live_bytes, 2000u);
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* s = p.find_scope("waiting");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->heap.alloc_count, 10u);
  EXPECT_EQ(s->heap.free_count, 4u);  // the other six were freed outside the scope
  EXPECT_EQ(s->heap.retained_blocks, 0u);
}

// Blocks allocated in one scope and freed in another (of the same thread), and a scope's peak
// of live bytes while another thread frees its blocks in the middle of a batch.
TEST(HeapTracking, FreesInOtherScopesAndPeakWithRemoteFrees) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  void* blocks[10];
  std::atomic<int> stage{0};
  std::thread producer([&] {
    NNPROF_SCOPE_IN(profiler, "produce");
    for (void*& b : blocks) b = std::malloc(1000);
    stage.store(1);
    while (stage.load() != 2) std::this_thread::yield();
    // The consumer released all ten: five more make 5000 live, not 15000.
    void* more[5];
    for (void*& b : more) b = std::malloc(1000);
    {
      NNPROF_SCOPE_IN(profiler, "release");
      for (void* b : more) std::free(b);
    }
  });
  while (stage.load() != 1) std::this_thread::yield();
  {
    NNPROF_SCOPE_IN(profiler, "consume");
    for (void* b : blocks) std::free(b);
  }
  stage.store(2);
  producer.join();
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* produce = p.find_scope("produce");
  const auto* release = p.find_scope("release");
  const auto* consume = p.find_scope("consume");
  ASSERT_NE(produce, nullptr);
  ASSERT_NE(release, nullptr);
  ASSERT_NE(consume, nullptr);
  EXPECT_EQ(produce->heap.alloc_count, 15u);
  EXPECT_EQ(produce->heap.alloc_bytes, 15000u);
  EXPECT_EQ(produce->heap.free_count, 0u);
  EXPECT_EQ(produce->heap.retained_blocks, 0u);
  EXPECT_EQ(produce->heap.peak_live_bytes, 10000u);
  EXPECT_EQ(release->heap.free_count, 5u);
  EXPECT_EQ(release->heap.free_bytes, 5000u);
  EXPECT_EQ(release->heap.alloc_count, 0u);
  EXPECT_EQ(consume->heap.free_count, 10u);
  EXPECT_EQ(consume->heap.free_bytes, 10000u);
}

// A thread that ends right after allocating in a scope: its batch reaches the node when it
// ends, before tracking stops.
TEST(HeapTracking, EndingThreadAddsItsBatchToTheNode) {
  REQUIRE_HOOKS();
  Profiler profiler;
  MemoryTracking tracking(profiler);
  void* blocks[7];
  std::thread([&] {
    NNPROF_SCOPE_IN(profiler, "short lived");
    for (void*& b : blocks) b = std::malloc(300);
    std::free(blocks[0]);
  }).join();
  const Profile mid = profiler.snapshot();
  const auto* s = mid.find_scope("short lived");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->heap.alloc_count, 7u);
  EXPECT_EQ(s->heap.alloc_bytes, 2100u);
  EXPECT_EQ(s->heap.free_count, 1u);
  EXPECT_EQ(s->heap.retained_blocks, 6u);
  for (int i = 1; i < 7; ++i) std::free(blocks[i]);
  tracking.stop();
  const Profile p = profiler.snapshot();
  const auto* e = p.find_scope("short lived");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->heap.alloc_count, 7u);
  EXPECT_EQ(e->heap.retained_blocks, 0u);
}

}  // namespace
