// The allocation hooks: malloc, calloc, realloc, reallocarray, free, posix_memalign,
// aligned_alloc, memalign, valloc, pvalloc and every operator new/delete, defined here so that
// the dynamic linker binds the whole process to them (first in symbol lookup order when
// linked as nnprof::memory, or when preloaded). Each forwards to the allocator that would
// have been used otherwise (dlsym RTLD_NEXT: glibc, or jemalloc/tcmalloc when the program
// links one) and, while a tracker runs, tracks the block: inline when the thread allocates a
// block or frees one it allocated recently (heap_fast_path.hpp), else through libnnprof.
// Idle, a hook is a load of the tracking flag and a tail call of the real allocator.
//
// dlsym itself may allocate (its error buffer): while this thread resolves, allocations come
// from a small static arena that free() recognizes and ignores.
#include <dlfcn.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <new>

#include "collect/heap/heap_fast_path.hpp"

#define NNPROF_HOOK extern "C" __attribute__((visibility("default")))

extern "C" {
void* __libc_malloc(std::size_t) noexcept;
void __libc_free(void*) noexcept;
void* __libc_calloc(std::size_t, std::size_t) noexcept;
void* __libc_realloc(void*, std::size_t) noexcept;
void* __libc_memalign(std::size_t, std::size_t) noexcept;
}

namespace {

using nnprof::detail::g_heap_hot;
using nnprof::detail::heap_track_alloc;
using nnprof::detail::heap_track_free;

// noexcept (C functions do not throw): a noexcept hook can then end in a tail call of them.
struct RealAllocator {
  void* (*malloc)(std::size_t) noexcept = nullptr;
  void (*free)(void*) noexcept = nullptr;
  void* (*calloc)(std::size_t, std::size_t) noexcept = nullptr;
  void* (*realloc)(void*, std::size_t) noexcept = nullptr;
  int (*posix_memalign)(void**, std::size_t, std::size_t) noexcept = nullptr;
  void* (*aligned_alloc)(std::size_t, std::size_t) noexcept = nullptr;
  void* (*memalign)(std::size_t, std::size_t) noexcept = nullptr;
  void* (*valloc)(std::size_t) noexcept = nullptr;
  void* (*pvalloc)(std::size_t) noexcept = nullptr;
};

constinit RealAllocator g_real;
constinit std::atomic<bool> g_resolved{false};
constinit thread_local bool tls_resolving [[gnu::tls_model("initial-exec")]] = false;

// ---- bootstrap arena ---------------------------------------------------------------------

constexpr std::size_t kArenaBytes = 256 * 1024;
alignas(64) constinit char g_arena[kArenaBytes] = {};
constinit std::atomic<std::size_t> g_arena_used{0};

bool in_arena(const void* p) noexcept {
  return reinterpret_cast<std::uintptr_t>(p) - reinterpret_cast<std::uintptr_t>(g_arena) < kArenaBytes;
}

void* arena_alloc(std::size_t size, std::size_t align = alignof(std::max_align_t)) noexcept {
  // A 16-byte header before each block keeps its size, for realloc.
  align = align < 16 ? 16 : align;
  std::size_t used = g_arena_used.load(std::memory_order_relaxed);
  for (;;) {
    const std::size_t start = (used + 16 + align - 1) & ~(align - 1);
    const std::size_t end = start + size;
    if (end > kArenaBytes) return nullptr;
    if (g_arena_used.compare_exchange_weak(used, end, std::memory_order_relaxed)) {
      std::memcpy(g_arena + start - 16, &size, sizeof size);
      return g_arena + start;  // static storage: already zero, as calloc needs
    }
  }
}

std::size_t arena_size(const void* p) noexcept {
  std::size_t size = 0;
  std::memcpy(&size, static_cast<const char*>(p) - 16, sizeof size);
  return size;
}

template <class F>
void resolve_one(F& slot, const char* name, F fallback) noexcept {
  void* sym = dlsym(RTLD_NEXT, name);
  slot = sym != nullptr ? reinterpret_cast<F>(sym) : fallback;
}

int libc_posix_memalign(void** out, std::size_t align, std::size_t size) noexcept {
  if (align % sizeof(void*) != 0 || (align & (align - 1)) != 0) return EINVAL;
  void* p = __libc_memalign(align, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}
void* libc_aligned_alloc(std::size_t align, std::size_t size) noexcept { return __libc_memalign(align, size); }
void* libc_valloc(std::size_t size) noexcept { return __libc_memalign(static_cast<std::size_t>(getpagesize()), size); }
void* libc_pvalloc(std::size_t size) noexcept {
  const auto page = static_cast<std::size_t>(getpagesize());
  return __libc_memalign(page, (size + page - 1) & ~(page - 1));
}

void resolve() noexcept {
  tls_resolving = true;
  RealAllocator r;
  resolve_one(r.malloc, "malloc", &__libc_malloc);
  resolve_one(r.free, "free", &__libc_free);
  resolve_one(r.calloc, "calloc", &__libc_calloc);
  resolve_one(r.realloc, "realloc", &__libc_realloc);
  resolve_one(r.posix_memalign, "posix_memalign", &libc_posix_memalign);
  resolve_one(r.aligned_alloc, "aligned_alloc", &libc_aligned_alloc);
  resolve_one(r.memalign, "memalign", &__libc_memalign);
  resolve_one(r.valloc, "valloc", &libc_valloc);
  resolve_one(r.pvalloc, "pvalloc", &libc_pvalloc);
  g_real = r;
  g_resolved.store(true, std::memory_order_release);
  tls_resolving = false;
}

inline const RealAllocator& real() noexcept {
  if (!g_resolved.load(std::memory_order_acquire)) [[unlikely]]
    resolve();
  return g_real;
}

inline bool tracking() noexcept { return g_heap_hot.tracking.load(std::memory_order_relaxed); }

// Until the real allocator is resolved (and on the resolving thread while it is).
[[gnu::noinline]] void* malloc_first(std::size_t size, const void* caller) noexcept {
  if (tls_resolving) return arena_alloc(size);  // dlsym's own allocations, while it resolves
  void* p = real().malloc(size);
  return tracking() ? heap_track_alloc(p, size, caller) : p;
}

// Not idle: the allocator is not resolved yet, or tracking is on. (A stop between the
// hook's test and the record records one more block, as a stop between the real malloc and
// the record always could.)
[[gnu::noinline]] void* malloc_busy(std::size_t size, const void* caller) noexcept {
  if (!g_resolved.load(std::memory_order_acquire)) [[unlikely]]
    return malloc_first(size, caller);
  return heap_track_alloc(g_real.malloc(size), size, caller);
}

// An idle hook is two loads and a tail call of the real allocator; the rest is out of line,
// which keeps its prologue (and the frame that reading the caller's address needs) off that
// path.
inline bool idle() noexcept { return g_resolved.load(std::memory_order_acquire) && !tracking(); }

inline void* tracked_malloc(std::size_t size, const void* caller) noexcept {
  if (idle()) [[likely]]
    return g_real.malloc(size);
  return malloc_busy(size, caller);
}

// Not idle (or a block of the arena), and not the common tracked case: as malloc_busy.
[[gnu::noinline]] void free_slow(void* p) noexcept {
  if (p == nullptr || in_arena(p)) return;
  if (!g_resolved.load(std::memory_order_acquire)) [[unlikely]] {
    const RealAllocator& r = real();
    if (tracking()) heap_track_free(p);
    return r.free(p);
  }
  nnprof::detail::heap_on_free(p);  // heap_track_free_fast did not take it
  g_real.free(p);
}

// The common tracked free first, with no call but the tail call of the real free: a block in
// this thread's cache is neither null nor the arena's, and tracking ran, so the allocator is
// resolved.
[[gnu::noinline]] void free_busy(void* p) noexcept {
  if (nnprof::detail::heap_track_free_fast(p)) [[likely]]
    return g_real.free(p);
  free_slow(p);
}

inline void tracked_free(void* p) noexcept {
  if (idle() && !in_arena(p)) [[likely]]
    return g_real.free(p);  // free(nullptr) included: the real free ignores it
  free_busy(p);
}

void* tracked_realloc(void* old, std::size_t size, const void* caller) noexcept {
  if (old == nullptr) return tracked_malloc(size, caller);
  if (in_arena(old)) {
    void* p = tracked_malloc(size, caller);
    if (p != nullptr) std::memcpy(p, old, arena_size(old) < size ? arena_size(old) : size);
    return p;
  }
  if (!tracking()) return real().realloc(old, size);
  // Through libnnprof: the old block may be in any thread's cache or in the table.
  const nnprof::detail::HeapBlockToken token = nnprof::detail::heap_realloc_begin(old);
  void* p = real().realloc(old, size);
  nnprof::detail::heap_realloc_end(token, old, p, size, caller);
  return p;
}

void* aligned_or_null(std::size_t align, std::size_t size, const void* caller) noexcept {
  if (tls_resolving) [[unlikely]]
    return arena_alloc(size, align);
  void* p = nullptr;
  if (real().posix_memalign(&p, align, size) != 0) return nullptr;
  return tracking() ? heap_track_alloc(p, size, caller) : p;
}

// operator new: retry through the new-handler, then throw, as the standard requires.
void* new_or_throw(std::size_t size, const void* caller) {
  if (idle()) [[likely]] {
    if (void* p = g_real.malloc(size)) [[likely]]
      return p;
  }
  for (;;) {
    if (void* p = tracked_malloc(size, caller)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

void* aligned_new_or_throw(std::size_t size, std::align_val_t align, const void* caller) {
  for (;;) {
    if (void* p = aligned_or_null(static_cast<std::size_t>(align), size, caller)) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}

}  // namespace

#define CALLER __builtin_return_address(0)

NNPROF_HOOK void* malloc(std::size_t size) {
  if (idle()) [[likely]]
    return g_real.malloc(size);
  return malloc_busy(size, CALLER);
}
NNPROF_HOOK void free(void* p) { tracked_free(p); }
NNPROF_HOOK void cfree(void* p) { tracked_free(p); }

NNPROF_HOOK void* calloc(std::size_t n, std::size_t size) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  if (tls_resolving) [[unlikely]]
    return arena_alloc(bytes);
  void* p = real().calloc(n, size);
  return tracking() ? heap_track_alloc(p, bytes, CALLER) : p;
}

NNPROF_HOOK void* realloc(void* old, std::size_t size) { return tracked_realloc(old, size, CALLER); }

NNPROF_HOOK void* reallocarray(void* old, std::size_t n, std::size_t size) {
  std::size_t bytes = 0;
  if (__builtin_mul_overflow(n, size, &bytes)) {
    errno = ENOMEM;
    return nullptr;
  }
  return tracked_realloc(old, bytes, CALLER);
}

NNPROF_HOOK int posix_memalign(void** out, std::size_t align, std::size_t size) {
  if (tls_resolving) [[unlikely]] {
    *out = arena_alloc(size, align);
    return *out != nullptr ? 0 : ENOMEM;
  }
  const int rc = real().posix_memalign(out, align, size);
  if (rc == 0 && tracking()) heap_track_alloc(*out, size, CALLER);
  return rc;
}

NNPROF_HOOK void* aligned_alloc(std::size_t align, std::size_t size) {
  if (tls_resolving) [[unlikely]]
    return arena_alloc(size, align);
  void* p = real().aligned_alloc(align, size);
  return tracking() ? heap_track_alloc(p, size, CALLER) : p;
}

NNPROF_HOOK void* memalign(std::size_t align, std::size_t size) {
  if (tls_resolving) [[unlikely]]
    return arena_alloc(size, align);
  void* p = real().memalign(align, size);
  return tracking() ? heap_track_alloc(p, size, CALLER) : p;
}

NNPROF_HOOK void* valloc(std::size_t size) {
  void* p = real().valloc(size);
  return tracking() ? heap_track_alloc(p, size, CALLER) : p;
}

NNPROF_HOOK void* pvalloc(std::size_t size) {
  void* p = real().pvalloc(size);
  return tracking() ? heap_track_alloc(p, size, CALLER) : p;
}

// ---- operator new and delete, every form -----------------------------------------------------

#define NNPROF_NEW __attribute__((visibility("default")))

NNPROF_NEW void* operator new(std::size_t size) { return new_or_throw(size, CALLER); }
NNPROF_NEW void* operator new[](std::size_t size) { return new_or_throw(size, CALLER); }
NNPROF_NEW void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return new_or_throw(size, CALLER);
  } catch (...) {
    return nullptr;
  }
}
NNPROF_NEW void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  try {
    return new_or_throw(size, CALLER);
  } catch (...) {
    return nullptr;
  }
}
NNPROF_NEW void* operator new(std::size_t size, std::align_val_t align) {
  return aligned_new_or_throw(size, align, CALLER);
}
NNPROF_NEW void* operator new[](std::size_t size, std::align_val_t align) {
  return aligned_new_or_throw(size, align, CALLER);
}
NNPROF_NEW void* operator new(std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return aligned_new_or_throw(size, align, CALLER);
  } catch (...) {
    return nullptr;
  }
}
NNPROF_NEW void* operator new[](std::size_t size, std::align_val_t align, const std::nothrow_t&) noexcept {
  try {
    return aligned_new_or_throw(size, align, CALLER);
  } catch (...) {
    return nullptr;
  }
}

NNPROF_NEW void operator delete(void* p) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete(void* p, std::size_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p, std::size_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete(void* p, const std::nothrow_t&) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p, const std::nothrow_t&) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete(void* p, std::align_val_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p, std::align_val_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete(void* p, std::size_t, std::align_val_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p, std::size_t, std::align_val_t) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { tracked_free(p); }
NNPROF_NEW void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { tracked_free(p); }

// Announce the hooks as early as possible: before the program's own constructors allocate.
__attribute__((constructor(101))) static void nnprof_hooks_announce() {
  real();
  Dl_info info{};
  const char* library = "nnprof allocation hooks";
  if (dladdr(reinterpret_cast<void*>(&nnprof_hooks_announce), &info) != 0 && info.dli_fname != nullptr)
    library = info.dli_fname;
  // Any address in this library: libnnprof checks that malloc resolves into the same module
  // (`&malloc` would go through the GOT and name whichever malloc won, a sanitizer's say).
  nnprof::detail::heap_hooks_loaded({library, reinterpret_cast<void*>(&nnprof_hooks_announce)});
}
