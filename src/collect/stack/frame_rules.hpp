// Where a function's frame is at a given instruction, from the module's unwind tables
// (.eh_frame, read with libdw), cached per address: the canonical frame address (CFA) rule
// and where the caller's return address and frame pointer were saved.
//
// Two users, both on the CPU sampler's manager thread, never in a signal handler:
// - kernel-walked stacks (Unwinder::Kernel, as `perf record -g`): the kernel's frame-pointer
//   walk starts from rbp, which belongs to the innermost function that set up a frame, so it
//   skips every function interrupted or called since that has none (a leaf built with
//   -momit-leaf-frame-pointer, GCC's default on x86-64 even with -fno-omit-frame-pointer, a
//   prologue, libm, code built with -fomit-frame-pointer); unwind_copy steps through those by
//   their rules over the kernel's copy of the top of the stack, then joins the kernel's chain.
// - DWARF unwinding (Unwinder::Dwarf, as `perf record --call-graph dwarf`): the signal handler
//   only copies the registers and the top of the interrupted stack; unwind_copy steps frame by
//   frame over that copy afterwards, so code built without frame pointers keeps its callers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace nnprof::collect {

struct CfaRule {
  enum class Base : std::uint8_t {
    Unknown,       ///< no unwind table covers the address
    StackPointer,  ///< CFA = rsp + offset: no frame of its own in rbp (yet)
    FramePointer,  ///< CFA = rbp + offset: the frame-pointer chain is right here
    Other,         ///< another register or an expression
  };
  Base base = Base::Unknown;
  std::int64_t offset = 0;
};

/// Where the caller's value of a register is, in the frame at some address.
struct SavedRegister {
  enum class Kind : std::uint8_t {
    Undefined,    ///< cannot be recovered; for the return address: the outermost frame
    SameValue,    ///< this frame did not change it
    AtCfa,        ///< saved in memory at CFA + offset
    Unsupported,  ///< any other rule (an expression, another register): the step cannot be done
  };
  Kind kind = Kind::Unsupported;
  std::int64_t offset = 0;
};

struct FrameRule {
  CfaRule cfa;
  SavedRegister return_address;
  SavedRegister frame_pointer;  ///< rbp
  bool signal_frame = false;    ///< the caller was interrupted, not called: its pc is exact
};

/// The registers and copied stack that an offline unwind starts from.
struct StackCopy {
  std::uintptr_t pc = 0, sp = 0, fp = 0;
  const unsigned char* bytes = nullptr;  ///< the stack from sp up
  std::size_t size = 0;
  /// Frame records of the frame-pointer chain beyond the copy, walked in the signal handler:
  /// triples (frame address, saved rbp, return address), innermost first.
  const std::uint64_t* chain = nullptr;
  std::size_t chain_frames = 0;
  /// The return addresses of the frame-pointer chain from `fp` as the kernel walked it when it
  /// took the sample (Unwinder::Kernel): kernel_returns[k] is the one saved in the k-th frame
  /// record from `fp` outward. They go on from wherever the unwind reaches a record of that
  /// chain that neither the copy nor `chain` holds; the kernel could read all of the stack.
  const std::uint64_t* kernel_returns = nullptr;
  std::size_t kernel_return_count = 0;
};

/// How an offline unwind ended.
enum class UnwindEnd : std::uint8_t {
  Complete,   ///< reached the outermost frame
  Depth,      ///< `max` frames written: the stack is deeper
  Incomplete, ///< no rule and no consistent frame-pointer chain to go on with
};

/// Not thread-safe: one owner (the CPU sampler's manager thread) asks.
class FrameRules {
 public:
  FrameRules();
  ~FrameRules();
  FrameRules(const FrameRules&) = delete;
  FrameRules& operator=(const FrameRules&) = delete;

  /// The rule at code address `pc` of this process.
  FrameRule at(std::uintptr_t pc);

  /// Unwinds `copy` into `out`: out[0] is the interrupted pc, out[1..] call sites (return
  /// addresses minus one, as capture_interrupted_stack writes them). Every frame is stepped by
  /// its table rule while the copy holds the words the rule names, so chains of functions
  /// without frame pointers keep every caller. Where the tables cannot step (no table, an
  /// expression rule, the copy ends) it goes on along the frame-pointer chain when that chain is
  /// consistent (above the stack pointer reached, growing): from the copy, then from the
  /// handler's frame records or the kernel's return addresses; else it stops.
  std::size_t unwind_copy(const StackCopy& copy, std::uintptr_t* out, std::size_t max, UnwindEnd& end);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnprof::collect
