#include "collect/stack/stack_capture.hpp"

#include <dlfcn.h>
#include <execinfo.h>

#include <algorithm>
#include <atomic>

namespace nnprof::collect {

namespace {

using UnwBacktraceFn = int (*)(void**, int);

enum class Method : int { none, libunwind, backtrace };

std::atomic<Method> g_method{Method::none};
std::atomic<UnwBacktraceFn> g_unw_backtrace{nullptr};

// The raw trace lives on the stack (no allocation in hooks): 2 KiB, so at most
// kRawFrames - kInternalFrames frames reach the caller.
constexpr int kRawFrames = 256;
// Frames of the unwinder and of capture_stack itself that precede the caller's return
// address in a raw trace (1-2 in practice; searched, not assumed).
constexpr int kInternalFrames = 8;

// ThreadSanitizer finishes a thread in the last round of thread-specific-data destructors;
// libunwind frees its per-thread cache in that round too, taking a mutex through TSan's
// interceptor on the finished thread, which crashes at thread exit.
bool under_thread_sanitizer() noexcept { return dlsym(RTLD_DEFAULT, "__tsan_init") != nullptr; }

Method choose_method() noexcept {
  // RTLD_LOCAL: libunwind's own _Unwind_* stay out of the global scope, so exceptions keep
  // going through libgcc_s. The handle is never closed: captures may run at any time.
  void* lib = under_thread_sanitizer() ? nullptr : dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
  if (lib != nullptr) {
    if (auto fn = reinterpret_cast<UnwBacktraceFn>(dlsym(lib, "unw_backtrace"))) {
      // The first call sets up libunwind's caches (pthread keys, mmap'd pools) and binds
      // its lazy symbols; do it here rather than inside the first malloc hook.
      void* probe[kInternalFrames * 2];
      if (fn(probe, kInternalFrames * 2) > 0) {
        g_unw_backtrace.store(fn, std::memory_order_release);
        return Method::libunwind;
      }
    }
    dlclose(lib);
  }
  // glibc's first backtrace() dlopens libgcc_s, which allocates.
  void* probe[kInternalFrames * 2];
  if (::backtrace(probe, kInternalFrames * 2) > 0) return Method::backtrace;
  return Method::none;
}

}  // namespace

bool stack_capture_init() noexcept {
  // A function-local static: concurrent first calls wait for one initialisation.
  static const Method chosen = [] {
    const Method m = choose_method();
    g_method.store(m, std::memory_order_release);
    return m;
  }();
  return chosen != Method::none;
}

// Not inlined: the caller's return address below must be this call's own.
__attribute__((noinline)) int capture_stack(std::uintptr_t* out, int max, int skip) noexcept {
  const Method method = g_method.load(std::memory_order_acquire);
  if (method == Method::none || out == nullptr || max <= 0) return 0;
  skip = std::max(skip, 0);
  if (skip >= kRawFrames - kInternalFrames) return 0;

  void* raw[kRawFrames];
  const int want = std::min(kRawFrames, kInternalFrames + skip + max);
  const int n =
      method == Method::libunwind ? g_unw_backtrace.load(std::memory_order_relaxed)(raw, want) : ::backtrace(raw, want);

  // How many entries belong to the unwinder differs between unwinders (and versions): find
  // the address at which our caller resumes instead of assuming a count.
  void* const resume = __builtin_return_address(0);
  int first = -1;
  for (int i = 0; i < std::min(n, kInternalFrames); ++i) {
    if (raw[i] == resume) {
      first = i;
      break;
    }
  }
  if (first < 0) return 0;
  const int begin = first + skip;
  const int count = std::min(max, n - begin);
  for (int i = 0; i < count; ++i) out[i] = reinterpret_cast<std::uintptr_t>(raw[begin + i]);
  return std::max(count, 0);
}

const char* stack_capture_method() noexcept {
  switch (g_method.load(std::memory_order_acquire)) {
    case Method::libunwind: return "libunwind";
    case Method::backtrace: return "backtrace";
    case Method::none: break;
  }
  return "none";
}

}  // namespace nnprof::collect
