#include "collect/stack/stack_capture.hpp"

#include <dlfcn.h>
#include <execinfo.h>
#include <fcntl.h>
#include <ucontext.h>
#include <unistd.h>

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

namespace {

// The one frame-pointer walk: follows the chain from `fp`, reading only inside
// [sp, stack_end) and only frames above the previous one, so a chain broken by code without
// frame pointers ends the walk instead of faulting. Calls f(frame address, saved rbp, return
// address) per frame record until f returns false. Its reads are of raw stack memory, which
// a broken chain may point anywhere into (a sanitizer's redzones included): not instrumented.
template <class F>
__attribute__((no_sanitize("address", "thread"))) void follow_frame_pointers(std::uintptr_t fp, std::uintptr_t sp, std::uintptr_t stack_end, F&& f) noexcept {
  while (fp >= sp && fp + 16 <= stack_end && (fp & 7) == 0) {
    const auto* frame = reinterpret_cast<const std::uintptr_t*>(fp);
    const std::uintptr_t next = frame[0], ret = frame[1];
    if (ret < 4096 || !f(fp, next, ret) || next <= fp) break;
    fp = next;
  }
}

}  // namespace

int capture_interrupted_stack(const void* ucontext, std::uintptr_t* out, int max, std::uintptr_t stack_end,
                              bool& truncated) noexcept {
  truncated = false;
  if (ucontext == nullptr || out == nullptr || max <= 0) return 0;
  const auto& regs = static_cast<const ucontext_t*>(ucontext)->uc_mcontext.gregs;
  const auto sp = static_cast<std::uintptr_t>(regs[REG_RSP]);
  int n = 0;
  out[n++] = static_cast<std::uintptr_t>(regs[REG_RIP]);
  if (stack_end == 0) return n;
  follow_frame_pointers(static_cast<std::uintptr_t>(regs[REG_RBP]), sp, stack_end,
                        [&](std::uintptr_t, std::uintptr_t, std::uintptr_t ret) {
                          if (n == max) {
                            truncated = true;
                            return false;
                          }
                          out[n++] = ret - 1;
                          return true;
                        });
  return n;
}

int frame_records_from(std::uintptr_t fp, std::uintptr_t sp, std::uintptr_t from, std::uintptr_t stack_end,
                       std::uint64_t* out, int max) noexcept {
  int n = 0;
  if (max <= 0) return 0;
  follow_frame_pointers(fp, sp, stack_end, [&](std::uintptr_t frame, std::uintptr_t next, std::uintptr_t ret) {
    if (frame + 16 <= from) return true;  // the stack copy holds this one
    out[3 * n] = frame;
    out[3 * n + 1] = next;
    out[3 * n + 2] = ret;
    return ++n < max;
  });
  return n;
}

void copy_stack_words(std::uintptr_t from, std::uint64_t* out, std::size_t words) noexcept {
  // x86-64 only, as the register layout of the rest of the sampler: the sanitizers do not
  // instrument inline assembly, and the compiler cannot turn it into a memcpy call.
  auto src = reinterpret_cast<const void*>(from);
  asm volatile("rep movsq" : "+D"(out), "+S"(src), "+c"(words) : : "memory");
}

bool find_mapping(std::uintptr_t address, std::uintptr_t& begin, std::uintptr_t& end) noexcept {
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  // Lines start "begin-end perms ..."; parse them as they stream through a small buffer.
  char buf[4096];
  std::uintptr_t values[2] = {0, 0};
  int field = 0;      // 0: begin, 1: end, 2: rest of the line
  bool found = false;
  for (;;) {
    const ssize_t got = read(fd, buf, sizeof buf);
    if (got <= 0) break;
    for (ssize_t i = 0; i < got && !found; ++i) {
      const char c = buf[i];
      if (c == '\n') {
        if (field >= 1 && address >= values[0] && address < values[1]) {
          begin = values[0];
          end = values[1];
          found = true;
        }
        values[0] = values[1] = 0;
        field = 0;
      } else if (field < 2) {
        if (c == '-' && field == 0) {
          field = 1;
        } else if (c == ' ') {
          field = 2;
        } else {
          const int digit = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
          if (digit >= 0) values[field] = values[field] * 16 + static_cast<std::uintptr_t>(digit);
        }
      }
    }
    if (found) break;
  }
  close(fd);
  return found;
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
