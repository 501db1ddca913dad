// Replaces malloc, calloc, realloc, the aligned allocations and free with counting wrappers
// around glibc's own, to prove the CPU sampler's signal handler never allocates. Include it
// in exactly one translation unit of a test program (it defines the allocator functions);
// plain builds only (a sanitizer owns the allocator).
#pragma once

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>

#include "collect/cpu/cpu_sampler.hpp"

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace nnprof::testing {
/// Allocator calls of the process, and those made inside the sampler's signal handler.
inline std::atomic<std::uint64_t> g_allocator_calls{0};
inline std::atomic<std::uint64_t> g_allocator_calls_in_handler{0};

inline void count_allocator_call() {
  g_allocator_calls.fetch_add(1, std::memory_order_relaxed);
  if (nnprof::detail::tls_in_sample_handler != 0) g_allocator_calls_in_handler.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace nnprof::testing

extern "C" void* malloc(std::size_t n) {
  nnprof::testing::count_allocator_call();
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t n, std::size_t s) {
  nnprof::testing::count_allocator_call();
  return __libc_calloc(n, s);
}
extern "C" void* realloc(void* p, std::size_t n) {
  nnprof::testing::count_allocator_call();
  return __libc_realloc(p, n);
}
extern "C" void* aligned_alloc(std::size_t a, std::size_t n) {
  nnprof::testing::count_allocator_call();
  return __libc_memalign(a, n);
}
extern "C" void* memalign(std::size_t a, std::size_t n) {
  nnprof::testing::count_allocator_call();
  return __libc_memalign(a, n);
}
extern "C" int posix_memalign(void** out, std::size_t a, std::size_t n) {
  nnprof::testing::count_allocator_call();
  *out = __libc_memalign(a, n);
  return *out != nullptr ? 0 : ENOMEM;
}
extern "C" void free(void* p) {
  if (p != nullptr) nnprof::testing::count_allocator_call();
  __libc_free(p);
}
