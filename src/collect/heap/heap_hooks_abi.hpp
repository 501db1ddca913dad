// What the allocation hooks (libnnprof_memory.so, libnnprof_preload.so) share with libnnprof.
// The hooks are a separate library so that replacing malloc stays opt-in; everything they
// report goes to the one heap tracker in libnnprof. The common case (a thread allocating a
// block, or freeing one it allocated recently) is handled inline in the hooks
// (heap_fast_path.hpp) on state that libnnprof exports here; everything else calls in.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "nnprof/config.hpp"

namespace nnprof::detail {

struct HeapThread;
struct Node;

/// The tracker's state that every hook reads.
struct HeapHotState {
  /// True while a tracker runs: the hooks call in only then, so an idle hook costs one load.
  std::atomic<bool> tracking{false};
  /// The tracking run (1, 2, ...); a thread whose tls_heap.key differs has not joined it yet,
  /// or is inside nnprof.
  std::atomic<std::uint64_t> epoch{0};
  /// Heap in use, without the batches threads have not added yet, and its peak.
  alignas(64) std::atomic<std::int64_t> current{0};
  std::atomic<std::int64_t> peak{0};
};
NNPROF_API extern HeapHotState g_heap_hot;

/// A block taken out of the live blocks by heap_realloc_begin.
struct HeapBlockToken {
  bool found = false;
  std::uint64_t size = 0;
  void* node = nullptr;
  std::uintptr_t caller = 0;
  std::uint32_t stack = 0;
};

/// `size` bytes at `block` were allocated; `caller` is the return address into the program.
/// Returns `block`. The general path, for what the inline one does not handle.
NNPROF_API void* heap_on_alloc(void* block, std::size_t size, const void* caller) noexcept;
/// `block` is about to be freed (before the real free: its address may be reused at once).
NNPROF_API void heap_on_free(void* block) noexcept;
/// The thread's heap change passed its limit (heap_fast_path.hpp): adds it to the global
/// counter when needed (and notes a new peak), notes a new peak of `node`'s live bytes, and
/// sets the next limit.
NNPROF_API void heap_flush(HeapThread& thread, Node* node) noexcept;
/// Counting when the innermost scope is not the thread's batch node: an allocation, and a
/// free of the thread's own block (`owner`, a node of its own tree) that is not both
/// allocated and freed at the batch node.
NNPROF_API void heap_count_alloc_slow(HeapThread& thread, Node* node, std::uint64_t size) noexcept;
NNPROF_API void heap_count_free_slow(HeapThread& thread, Node* here, Node* owner, std::uint64_t size) noexcept;
/// realloc in two steps, so that the old address leaves the live blocks before the allocator
/// can hand it to another thread: begin before the real realloc, end after it.
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
