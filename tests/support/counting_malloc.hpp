// Replaces malloc, calloc, realloc, aligned_alloc and posix_memalign with versions that count
// the calling thread's allocations in `tls_allocations`, then forward to glibc. Include it in
// exactly one file of a test program, and only in plain builds (sanitizers own malloc).
#pragma once

#include <cerrno>
#include <cstddef>
#include <cstdint>

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
}

namespace {
constinit thread_local std::uint64_t tls_allocations = 0;
}

extern "C" void* malloc(std::size_t n) {
  ++tls_allocations;
  return __libc_malloc(n);
}
extern "C" void* calloc(std::size_t n, std::size_t s) {
  ++tls_allocations;
  return __libc_calloc(n, s);
}
extern "C" void* realloc(void* p, std::size_t n) {
  ++tls_allocations;
  return __libc_realloc(p, n);
}
extern "C" void* aligned_alloc(std::size_t a, std::size_t n) {
  ++tls_allocations;
  return __libc_memalign(a, n);
}
extern "C" int posix_memalign(void** out, std::size_t a, std::size_t n) {
  ++tls_allocations;
  *out = __libc_memalign(a, n);
  return *out ? 0 : ENOMEM;
}
