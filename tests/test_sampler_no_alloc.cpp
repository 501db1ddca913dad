// Nothing the sampler's signal handler does may allocate or free (issue 16, defect 1): a
// thread interrupted inside malloc holds the arena's lock, so an allocation from its handler
// waits forever. This program replaces malloc and free and counts the calls made while the
// calling thread is inside the handler (detail::tls_in_sample_handler), with fresh threads
// looping malloc/free under each unwinder that runs in the handler. The old handler called
// libunwind, whose first unwind on a thread made glibc allocate its thread-local block there.
#include <gtest/gtest.h>

#include <time.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <thread>
#include <vector>

#include "collect/cpu/cpu_sampler.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/profiler.hpp"

#include "handler_allocations.hpp"

using nnprof::testing::g_allocator_calls;
using nnprof::testing::g_allocator_calls_in_handler;

namespace {

using namespace std::chrono_literals;

std::chrono::nanoseconds thread_cpu_now() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

void allocate_and_free() {
  void* live[32] = {};
  std::uint64_t k = 0;
  const auto start = thread_cpu_now();
  while (thread_cpu_now() - start < 60ms) {
    for (int j = 0; j < 256; ++j, ++k) {
      std::free(live[k % 32]);
      live[k % 32] = std::malloc(16 + (k * 7919) % 4096);
      asm volatile("" : : "r"(live) : "memory");
    }
  }
  for (void* p : live) std::free(p);
}

void expect_no_allocation_in_the_handler(nnprof::Unwinder unwinder, double hz) {
  nnprof::Profiler profiler;
  nnprof::CpuProfilerOptions o;
  o.hz = hz;
  o.unwinder = unwinder;
  nnprof::CpuProfiler sampler(profiler, o);
  const std::uint64_t calls_before = g_allocator_calls.load();
  for (int round = 0; round < 2; ++round) {
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i) threads.emplace_back(allocate_and_free);
    for (auto& t : threads) t.join();
  }
  sampler.stop();
  EXPECT_GT(g_allocator_calls.load() - calls_before, 10'000u) << "the replacement malloc is not the one called";
  const auto p = profiler.snapshot();
  ASSERT_GT(p.cpu_samples.size(), 10u) << p.cpu.unwinder;
  EXPECT_EQ(g_allocator_calls_in_handler.load(), 0u) << p.cpu.unwinder << ": the signal handler called malloc or free";
}

TEST(SamplerNoAllocation, DwarfHandler) { expect_no_allocation_in_the_handler(nnprof::Unwinder::Dwarf, 199); }
TEST(SamplerNoAllocation, DwarfHandlerThroughPerfEvents) {
  expect_no_allocation_in_the_handler(nnprof::Unwinder::Dwarf, 1000);
}
TEST(SamplerNoAllocation, FramePointerHandler) {
  expect_no_allocation_in_the_handler(nnprof::Unwinder::FramePointer, 199);
}
TEST(SamplerNoAllocation, AutoHandler) { expect_no_allocation_in_the_handler(nnprof::Unwinder::Auto, 199); }

}  // namespace
