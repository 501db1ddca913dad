// Conservative reachability of heap blocks, as LeakSanitizer does it: any aligned word in a
// root range or in a reachable block that points into a block makes that block reachable.
#pragma once

#include <pthread.h>

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace nnprof::collect {

struct LiveBlock {
  std::uintptr_t address;
  std::uint64_t size;
};

/// [begin, end) of this process's memory.
struct MemoryRange {
  std::uintptr_t begin, end;
};

/// Writable PT_LOAD segments (.data, .bss, and the RELRO part) of every loaded module, except
/// modules that contain any of `exclude_modules_containing` (e.g. an address in nnprof's own
/// library, whose tables point at every block). Does not allocate while it holds the loader
/// lock, so a malloc hook that unwinds on another thread cannot deadlock against it.
std::vector<MemoryRange> global_data_ranges(std::span<const std::uintptr_t> exclude_modules_containing = {});

/// From just below the caller's frame to the top of the calling thread's stack: the caller's
/// locals and everything above them, not the dead area below. Values that live only in
/// registers are not in it.
MemoryRange current_thread_stack();

/// Zeroes up to `bytes` of the calling thread's stack below the caller's frame: the dead
/// frames of calls that have returned (the program's malloc calls among them). A leak scan
/// reads this thread's live frames, whose unwritten slots would otherwise still hold a
/// dropped block's address and make the block look reachable. Stops short of the guard page.
void clear_dead_stack(std::size_t bytes) noexcept;

/// The whole stack of `thread` (pthread_getattr_np): its unused part may hold stale
/// pointers, which can only make blocks look reachable. nullopt when the thread is unknown.
std::optional<MemoryRange> thread_stack(pthread_t thread);

/// The private, writable, anonymous mappings of this process, from /proc/self/maps (the brk
/// heap and named anonymous mappings included; [stack] and the kernel's pages not), with the
/// bytes of `except` cut out. Empty when /proc/self/maps cannot be read.
std::vector<MemoryRange> anonymous_mappings(std::span<const MemoryRange> except = {});

/// Memory the program mapped itself (an interpreter's arenas: pymalloc's hold the only
/// pointers to many malloc'd blocks), offered as further roots. The scan's own buffers and
/// the pages of large blocks (64 KiB and up: mapped on their own, but merged by the kernel
/// with neighbouring mappings) are cut out, and what is left of a range is scanned only when
/// it holds no block: an allocator's heap holds blocks, and scanning it would make every
/// block a leaked one points to reachable.
struct MappedRoots {
  std::span<const MemoryRange> ranges;
  std::uint64_t budget_bytes = std::uint64_t{4} << 30;  ///< scanned at most, in order
  /// The caller's own malloc'd buffers that hold blocks' addresses (its list of every block):
  /// cut out only after a range is tested for blocks. Cut out of `ranges` beforehand, such a
  /// buffer would split the allocator's heap it lies in, and a piece that happens to hold no
  /// block would be scanned as a root, with the stale addresses of freed bookkeeping in it.
  std::span<const MemoryRange> own_buffers = {};
  // Filled in by find_reachable:
  std::uint64_t scanned_bytes = 0;  ///< in the ranges scanned
  std::uint64_t skipped_bytes = 0;  ///< in ranges left out for the budget: blocks only they point to look leaked
};

/// Marks which of `blocks` (sorted by address, not overlapping) are reachable from `roots`
/// (and from `mapped`, as it says): roots are scanned word by word (8-byte aligned), a word
/// pointing anywhere into a block (interior pointers count) marks it, and marked blocks are
/// scanned in turn (a worklist).
/// result[i] belongs to blocks[i]. Memory is read with process_vm_readv, so a range that is
/// unmapped (or freed and unmapped concurrently) is skipped rather than crashing us; reading
/// also bypasses sanitizer poisoning; where neither process_vm_readv nor /proc/self/mem can
/// be used, nothing is marked. Cost: one binary search per word that falls between the
/// lowest and highest block, O((root bytes + reachable block bytes) / 8 * log blocks), plus a
/// system call per 64 KiB of roots and large blocks and per 16 pages of small blocks (those
/// go through a 1 MiB page cache, so blocks that share a page share a read); memory: a bit
/// and a worklist slot per block. Measured here: ~1 GB/s over large ranges, ~90 ns per
/// block for a list allocated in order, 1.3-2 us per block when every block is on a
/// different page (a system call costs ~1 us per random page).
std::vector<bool> find_reachable(std::span<const LiveBlock> blocks_sorted_by_address,
                                 std::span<const MemoryRange> roots, MappedRoots* mapped = nullptr);

}  // namespace nnprof::collect
