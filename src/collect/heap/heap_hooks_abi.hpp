// What the allocation hooks (libnnprof_memory.so, libnnprof_preload.so) call in libnnprof.
// The hooks are a separate library so that replacing malloc stays opt-in; everything they
// report goes to the one heap tracker in libnnprof.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "nnprof/config.hpp"

namespace nnprof::detail {

/// True while a tracker runs: the hooks call in only then, so an idle hook costs one load.
NNPROF_API extern std::atomic<bool> g_heap_tracking;

/// A block taken out of the live table by heap_realloc_begin.
struct HeapBlockToken {
  bool found = false;
  std::uint64_t size = 0;
  void* node = nullptr;
  std::uintptr_t caller = 0;
  std::uint32_t stack = 0;
};

/// `size` bytes at `block` were allocated; `caller` is the return address into the program.
NNPROF_API void heap_on_alloc(void* block, std::size_t size, const void* caller) noexcept;
/// `block` is about to be freed (before the real free: its address may be reused at once).
NNPROF_API void heap_on_free(void* block) noexcept;
/// realloc in two steps, so that the old address leaves the table before the allocator can
/// hand it to another thread: begin before the real realloc, end after it.
NNPROF_API HeapBlockToken heap_realloc_begin(void* old_block) noexcept;
NNPROF_API void heap_realloc_end(const HeapBlockToken& old, void* old_block, void* new_block, std::size_t size,
                                 const void* caller) noexcept;

/// The hooks library announces itself when it is loaded. `any_address` lies in it, so that
/// libnnprof can check that the process's malloc really resolves into that library.
struct HeapHooksInfo {
  const char* library = nullptr;  ///< path of libnnprof_memory.so or libnnprof_preload.so
  void* any_address = nullptr;
};
NNPROF_API void heap_hooks_loaded(const HeapHooksInfo& info) noexcept;

}  // namespace nnprof::detail
