// Where a function's frame is at a given instruction: the canonical frame address (CFA) rule
// from the module's unwind tables (.eh_frame, read with libdw), cached per address.
//
// Why: a frame-pointer walk (the kernel's, for Unwinder::Kernel, as in `perf record -g`)
// starts from the frame-pointer register, which belongs to the caller while the interrupted
// function has not set up its own frame: in a leaf compiled with -momit-leaf-frame-pointer
// (GCC's default on x86-64, even with -fno-omit-frame-pointer) or in a prologue. The walk then
// skips the direct caller. When the rule says the CFA is the stack pointer plus N, the return
// address is the word at SP + N - 8, which a small copy of the user stack holds.
#pragma once

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

/// Not thread-safe: one owner (the CPU sampler's manager thread) asks.
class FrameRules {
 public:
  FrameRules();
  ~FrameRules();
  FrameRules(const FrameRules&) = delete;
  FrameRules& operator=(const FrameRules&) = delete;

  /// The rule at code address `pc` of this process.
  CfaRule at(std::uintptr_t pc);

  /// The return address of the function interrupted at `pc`, when its rule is
  /// stack-pointer based and `stack` (a copy of `stack_bytes` bytes of the user stack from the
  /// stack pointer up) holds it; 0 otherwise.
  std::uintptr_t caller_of_frameless(std::uintptr_t pc, const unsigned char* stack, std::uint64_t stack_bytes);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace nnprof::collect
