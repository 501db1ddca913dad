// MemoryProfiler and the largest single allocation of heap tracking (seed 001's memory
// profile): linked with the allocation hooks (nnprof::memory); skipped where they cannot load.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <new>
#include <string>
#include <thread>

#include "nnprof/error.hpp"
#include "nnprof/memory_profiler.hpp"
#include "nnprof/timeline.hpp"

namespace {

// Keeps the compiler from eliding an allocation it can see is unused.
void escape(void* p) { asm volatile("" : : "g"(p) : "memory"); }

#define SKIP_WITHOUT_HOOKS()                                                           \
  do {                                                                                 \
    std::string why;                                                                   \
    if (!nnprof::heap_hooks_available(&why)) GTEST_SKIP() << "heap hooks unavailable: " << why; \
  } while (false)

TEST(MemoryProfiler, LargestAllocationIsTheLargestOfKnownBlocks) {
  SKIP_WITHOUT_HOOKS();
  auto profiler = nnprof::MemoryProfilerBuilder().find_leaks(false).build();
  EXPECT_THROW((void)profiler.stop(), nnprof::Error) << "stop() before start()";
  profiler.start();
  EXPECT_THROW(profiler.start(), nnprof::Error);
  void* a = std::malloc(1000);
  void* b = std::malloc(300'000);  // the largest
  void* c = std::calloc(50, 100);
  escape(a), escape(b), escape(c);
  for (int i = 0; i < 64; ++i) {  // many smaller ones after it stay on the fast path
    void* p = std::malloc(static_cast<std::size_t>(64 + i));
    escape(p);
    std::free(p);
  }
  std::free(a), std::free(b), std::free(c);
  const nnprof::MemoryReport report = profiler.stop();
  EXPECT_EQ(report.largest_allocation_bytes, 300'000u);
  EXPECT_DOUBLE_EQ(report.largest_allocation_mb, 300'000.0 / (1024.0 * 1024.0));
  EXPECT_GE(report.num_allocations, 67u);
  EXPECT_GE(report.peak_bytes, 300'000u + 1000u + 5000u);
  EXPECT_EQ(report.profile.heap.largest_alloc_bytes, 300'000u);
}

TEST(MemoryProfiler, EachRunHasItsOwnLargestAndReallocAndOtherThreadsCount) {
  SKIP_WITHOUT_HOOKS();
  auto profiler = nnprof::MemoryProfilerBuilder().find_leaks(false).build();
  profiler.start();
  void* big = std::malloc(1 << 20);
  escape(big);
  std::free(big);
  EXPECT_EQ(profiler.stop().largest_allocation_bytes, 1u << 20);

  profiler.start();  // a new run forgets the 1 MiB block of the last one
  void* p = std::malloc(100);
  escape(p);
  p = std::realloc(p, 70'000);  // realloc to a larger block counts as its size
  escape(p);
  std::thread([] {
    void* q = ::operator new(90'000);  // the largest, on another thread
    escape(q);
    ::operator delete(q);
  }).join();
  std::free(p);
  const nnprof::MemoryReport report = profiler.stop();
  EXPECT_EQ(report.largest_allocation_bytes, 90'000u);
}

TEST(TimelineMemoryTrack, TracksTheHeapWhereTheHooksAreLoaded) {
  SKIP_WITHOUT_HOOKS();
  auto timeline = nnprof::TimelineBuilder().add_track("Memory").build();
  timeline.record([] {
    void* p = std::malloc(200'000);
    escape(p);
    std::free(p);
  });
  ASSERT_EQ(timeline.tracks().size(), 1u);
  EXPECT_TRUE(timeline.tracks()[0].collecting) << timeline.tracks()[0].note;
  const nnprof::Profile profile = timeline.profile();
  EXPECT_TRUE(profile.heap.tracked);
  EXPECT_EQ(profile.heap.largest_alloc_bytes, 200'000u);
  const std::string path = ::testing::TempDir() + "seed_001_timeline_memory.json";
  timeline.save_chrome_trace(path);
  std::ifstream in(path);
  const std::string trace((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(trace.find("heap in use"), std::string::npos) << "the heap timeline's counter row";
  std::remove(path.c_str());
}

TEST(MemoryReport, IsZeroWithoutHeapTracking) {
  const nnprof::MemoryReport r = nnprof::memory_report(nnprof::Profile{});
  EXPECT_EQ(r.num_allocations, 0u);
  EXPECT_EQ(r.largest_allocation_bytes, 0u);
  EXPECT_EQ(r.peak_mb, 0.0);
}

}  // namespace
