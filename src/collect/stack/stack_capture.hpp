// Call stacks of the calling thread, cheap enough for malloc hooks.
#pragma once

#include <cstddef>
#include <cstdint>

namespace nnprof::collect {

/// Chooses the unwinder; call once before any capture_stack, outside malloc hooks and signal
/// handlers (it loads libraries and allocates). Loads libunwind with dlopen rather than linking
/// it, since linking -lunwind would replace _Unwind_* (C++ exceptions) process-wide; falls back
/// to glibc's backtrace() (also under ThreadSanitizer, which crashes with libunwind at thread
/// exit). Idempotent and thread-safe. Returns false when neither works.
bool stack_capture_init() noexcept;

/// Writes up to `max` (at most 248) return addresses of the calling thread into `out`, innermost first, and
/// returns how many. out[0] is where the caller of capture_stack resumes after it returns,
/// out[1] where the caller's caller resumes, ...; `skip` drops that many of these first. All
/// entries are return addresses: symbolize them with return_address = true.
/// May run on many threads at once; returns 0 before stack_capture_init. Does not allocate,
/// except once per thread with libunwind: its first capture on a thread makes glibc allocate
/// libunwind's thread-local block (dynamic TLS of a dlopen'd library, one small malloc), so a
/// malloc hook must mark itself as inside the hook before calling this, or it recurses.
int capture_stack(std::uintptr_t* out, int max, int skip) noexcept;

// What follows runs inside the CPU sampler's signal handler: only reads of the interrupted
// thread's own stack within bounds and async-signal-safe system calls; never libunwind,
// backtrace(), dl_iterate_phdr or a dlopen'ed library's thread-local storage, which may take
// the loader's locks or allocate (docs/ARCHITECTURE.md, "What may run in a signal handler").

/// The frame-pointer chain of the code a signal interrupted, from inside the handler:
/// out[0] is the interrupted instruction, out[1..] the call sites of its callers (return
/// addresses minus one), so every entry is symbolized as it is (return_address = false).
/// Reads stay within [sp, stack_end), where `stack_end` is the end of the interrupted thread's
/// stack (0: unknown, then only out[0]). `truncated` is set when the stack was deeper than `max`.
int capture_interrupted_stack(const void* ucontext, std::uintptr_t* out, int max, std::uintptr_t stack_end,
                              bool& truncated) noexcept;

/// The frame records of the frame-pointer chain from `fp` that do not lie wholly below
/// `from` (the end of a stack copy), as triples (frame address, saved rbp, return address)
/// into `out`, at most `max` of them; returns how many. Reads stay within [sp, stack_end).
/// An offline unwind (FrameRules::unwind_copy) goes on with them where its copy ends.
int frame_records_from(std::uintptr_t fp, std::uintptr_t sp, std::uintptr_t from, std::uintptr_t stack_end,
                       std::uint64_t* out, int max) noexcept;

/// Copies `words` 8-byte words of the calling thread's stack from `from` into `out`
/// (async-signal-safe). Not a memcpy call: under AddressSanitizer the stack holds poisoned
/// redzones between variables, which an intercepted memcpy would report; this copy is
/// invisible to the sanitizers, as a copy of raw stack memory must be.
void copy_stack_words(std::uintptr_t from, std::uint64_t* out, std::size_t words) noexcept;

/// The mapping that holds `address` (for a thread's stack: pass its stack pointer), read
/// from /proc/self/maps with async-signal-safe system calls only. False when none does.
bool find_mapping(std::uintptr_t address, std::uintptr_t& begin, std::uintptr_t& end) noexcept;

/// "libunwind", "backtrace", or "none" (before init, or when neither unwinder works).
const char* stack_capture_method() noexcept;

}  // namespace nnprof::collect
