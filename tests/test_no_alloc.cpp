// Zero heap allocations per scope in steady state: this program replaces malloc and every
// operator new, counts calls made by the recording thread, and records scopes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>

#include "nnprof/nnprof.hpp"

#include "counting_malloc.hpp"

void* operator new(std::size_t n) {
  if (void* p = malloc(n)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, std::align_val_t a) {
  void* p = nullptr;
  if (posix_memalign(&p, static_cast<std::size_t>(a), n) != 0) throw std::bad_alloc();
  return p;
}
void* operator new[](std::size_t n, std::align_val_t a) { return operator new(n, a); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept { return malloc(n); }
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept { return malloc(n); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, std::size_t) noexcept { free(p); }
void operator delete[](void* p, std::size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, std::size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { free(p); }

namespace {

TEST(NoAllocation, CountingWorks) {
  const std::uint64_t before = tls_allocations;
  auto* p = new int(3);
  delete p;
  EXPECT_EQ(tls_allocations - before, 1u);
}

TEST(NoAllocation, ScopesAllocateNothingInSteadyState) {
  nnprof::Profiler profiler;
  auto body = [&](int n) {
    for (int i = 0; i < n; ++i) {
      NNPROF_SCOPE_IN(profiler, "outer");
      NNPROF_SCOPE_IN(profiler, "inner");
    }
  };
  body(20000);  // warm up: tree nodes, histogram rows, first chunks
  const std::uint64_t hot_before = profiler.snapshot().completeness.hot_path_allocations;
  const std::uint64_t before = tls_allocations;
  body(200000);  // 400,000 scopes: spans fill ~150 chunks supplied by the drainer
  const std::uint64_t allocations = tls_allocations - before;
  const auto p = profiler.snapshot();
  EXPECT_EQ(allocations, p.completeness.hot_path_allocations - hot_before)
      << "the only allocations on a recording thread are the buffers it takes when the drainer falls behind";
  EXPECT_EQ(p.find_scope("inner")->time.count, 220000u);
}

TEST(NoAllocation, NamedStartStopAllocatesNothingOnceTheNameIsKnown) {
  nnprof::Profiler profiler;
  for (int i = 0; i < 100; ++i) {
    profiler.start("step");
    profiler.record_alloc("tensor", 64);
    profiler.record_free("tensor", 64);
    profiler.stop("step");
  }
  const std::uint64_t hot_before = profiler.snapshot().completeness.hot_path_allocations;
  const std::uint64_t before = tls_allocations;
  for (int i = 0; i < 100000; ++i) {
    profiler.start("step");
    profiler.record_alloc("tensor", 64);
    profiler.record_free("tensor", 64);
    profiler.stop("step");
  }
  const std::uint64_t allocations = tls_allocations - before;
  EXPECT_EQ(allocations, profiler.snapshot().completeness.hot_path_allocations - hot_before);
}

TEST(NoAllocation, StatisticsOnlyScopesAllocateNothingAtAll) {
  nnprof::ProfilerOptions o;
  o.record_spans = false;
  nnprof::Profiler profiler(o);
  for (int i = 0; i < 1000; ++i) {
    NNPROF_SCOPE_IN(profiler, "outer");
    NNPROF_SCOPE_IN(profiler, "inner");
  }
  const std::uint64_t before = tls_allocations;
  for (int i = 0; i < 500000; ++i) {
    NNPROF_SCOPE_IN(profiler, "outer");
    NNPROF_SCOPE_IN(profiler, "inner");
  }
  EXPECT_EQ(tls_allocations - before, 0u);
}

TEST(NoAllocation, DisabledScopesAllocateNothing) {
  nnprof::Profiler profiler;
  profiler.set_enabled(false);
  const std::uint64_t before = tls_allocations;
  for (int i = 0; i < 100000; ++i) {
    NNPROF_SCOPE_IN(profiler, "off");
  }
  EXPECT_EQ(tls_allocations - before, 0u);
}

}  // namespace
