// PyTorch and LibTorch operators as nnprof scopes (libnnprof_torch; CMake target
// nnprof::torch, built when LibTorch is found).
//
// While an OpObserver lives, every operator torch records (aten::addmm, AddmmBackward0, a
// torch.autograd.profiler.record_function scope, ...) is a scope of the profiler on the
// thread that runs it, nested in the scopes open there, so every analysis applies: hot paths,
// call tree, timeline, heap and CPU samples per operator, bottlenecks, compare. Each call
// carries span arguments:
//   op_scope      "function", "backward", "user", "torchscript" or "other" (torch's RecordScope)
//   input_shapes  torch's format, "[[32, 64], [64, 128], []]" (non-tensor inputs are [])
//   input_dtypes  "[float, float, Scalar]"
//   seq           the sequence number that links a backward operator to its forward one
//   fwd_thread    the forward operator's thread (backward operators)
//   flops, bytes  the work of the call and of the operators inside it, where nnprof counts it
//                 (matmuls, convolutions, softmax, layer norm, GELU, add/sub/mul/div)
// FLOPs are also declared to the scope (Profiler::add_flops) by the innermost operator that
// has a count, so an operator's inclusive FLOPs never count its children twice.
//
// `nnprof record` does this without code changes when the program loads LibTorch.
#pragma once

#include "nnprof/profiler.hpp"

namespace nnprof::torch {

struct OpObserverOptions {
  /// Input shapes and dtypes as span arguments, and FLOPs from them. Off, an operator costs
  /// its scope alone.
  bool record_shapes = true;
};

/// Observes every operator of the process until destroyed (a global at::RecordFunction
/// callback). One at a time: a second, while one lives, throws std::logic_error.
class NNPROF_API OpObserver {
 public:
  explicit OpObserver(Profiler& profiler = global_profiler(), OpObserverOptions options = {});
  ~OpObserver();
  OpObserver(const OpObserver&) = delete;
  OpObserver& operator=(const OpObserver&) = delete;

  /// Whether an observer is recording now.
  [[nodiscard]] static bool active() noexcept;
};

/// The LibTorch version libnnprof_torch was built against ("1.13.1").
[[nodiscard]] NNPROF_API const char* built_for_torch_version() noexcept;

}  // namespace nnprof::torch

/// For the preload agent, which finds this library with dlopen: starts observing into the
/// global profiler. Returns 0, or -1 with a reason in `why` (NUL-terminated, truncated to
/// `why_size`).
extern "C" NNPROF_API int nnprof_torch_start(int record_shapes, char* why, unsigned long why_size) noexcept;
