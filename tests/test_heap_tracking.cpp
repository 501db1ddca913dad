// Automatic heap tracking through the real hooks (this test links nnprof::memory): exact
// bytes and counts per allocation function, attribution to scopes across threads, the peak,
// and leaks found at their site.
#include <gtest/gtest.h>

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

}  // namespace
