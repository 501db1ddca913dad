// The operator table: the calls of a framework's operators (PyTorch's aten::addmm,
// AddmmBackward0, record_function blocks) grouped by operator and input shapes, as
// torch.profiler's key_averages(group_by_input_shape=True) groups them, with self time,
// FLOP/s, heap per call and the forward operator each backward operator came from.
//
// An operator call is an ordinary span that carries the string argument "op_scope" (the
// LibTorch observer attaches it, and a program may too): "function", "backward", "user",
// "torchscript" or "other". Its other arguments, all optional: "input_shapes" and
// "input_dtypes" (strings in torch's format, "[[32, 64], [64, 128], []]" and
// "[float, float, Scalar]"), "seq" (int: torch's sequence number, shared by a forward call
// and the backward calls of the autograd node it created), "fwd_thread" (int, backward calls),
// "flops" (real: FLOPs of the call, nested operators included) and "bytes" (int).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// The "op_scope" of an operator call: which part of the framework called it.
enum class OperatorScope : std::uint8_t {
  Function,     ///< "function": an operator or autograd node (torch's RecordScope::FUNCTION), in the forward or the backward pass
  Backward,     ///< "backward": an autograd node run by the backward pass (BACKWARD_FUNCTION)
  User,         ///< "user": a block the program named (torch.autograd.profiler.record_function)
  TorchScript,  ///< "torchscript": a TorchScript function or method
  Other,        ///< "other", or any value nnprof does not know
};

/// "function", "backward", "user", "torchscript" or "other".
NNPROF_API const char* to_string(OperatorScope scope) noexcept;

/// Calls of a backward group whose autograd nodes were created by the calls of another group.
struct OperatorLink {
  std::uint32_t group = 0;  ///< index into OperatorTable::groups: the forward operator and its shapes
  std::uint64_t calls = 0;  ///< backward calls linked to it

  bool operator==(const OperatorLink&) const = default;
};

/// The calls of one operator with one set of input shapes.
struct OperatorGroup {
  StringId name = kNone;       ///< the operator's name, as the framework gives it ("aten::addmm")
  std::string input_shapes;    ///< "[[128], [32, 64], [64, 128], [], []]"; empty when not recorded
  std::vector<std::string> input_dtypes;  ///< every distinct "input_dtypes" of its calls, in order of first call
  OperatorScope scope = OperatorScope::Other;  ///< the op_scope of its first call
  std::uint64_t calls = 0;     ///< operator calls kept as spans
  std::uint64_t total_ns = 0;  ///< inclusive time, summed over calls (a call nested in a call of the same group counts again)
  std::uint64_t self_ns = 0;   ///< total_ns minus the time of spans directly inside its calls on their thread
  double flops = 0.0;          ///< sum of the calls' "flops" (nested operators included)
  std::uint64_t flops_calls = 0;  ///< calls that carried "flops"
  std::uint64_t bytes = 0;     ///< sum of the calls' "bytes"
  /// Heap tracking: heap bytes allocated on the call paths (call-tree nodes) of these calls while
  /// the operator was the innermost scope, and the calls of those paths. Heap is attributed per
  /// call path, not per span, so calls of other shapes on the same path share these figures.
  std::uint64_t heap_alloc_bytes = 0;
  std::uint64_t heap_path_calls = 0;
  /// Backward groups: the forward groups whose calls created the autograd nodes these calls ran
  /// (matched by "seq" to the outermost forward call with that sequence number), most calls first.
  std::vector<OperatorLink> forward;
  std::uint64_t unlinked_calls = 0;  ///< backward calls with a "seq" no kept forward call carries

  [[nodiscard]] double mean_ns() const noexcept {
    return calls == 0 ? 0.0 : static_cast<double>(total_ns) / static_cast<double>(calls);
  }
  /// FLOPs per second of inclusive time; 0 without FLOPs.
  [[nodiscard]] double flops_per_second() const noexcept {
    return total_ns == 0 ? 0.0 : flops * 1e9 / static_cast<double>(total_ns);
  }
  /// Heap bytes allocated per call of the operator's call paths; 0 without heap figures.
  [[nodiscard]] double heap_bytes_per_call() const noexcept {
    return heap_path_calls == 0 ? 0.0 : static_cast<double>(heap_alloc_bytes) / static_cast<double>(heap_path_calls);
  }

  bool operator==(const OperatorGroup&) const = default;
};

/// Every operator call of a profile, grouped by (operator, input shapes).
struct OperatorTable {
  std::vector<OperatorGroup> groups;  ///< most self time first
  std::uint64_t calls = 0;            ///< spans with "op_scope"
  /// Calls of the operators' names counted by the scope statistics, which are complete even
  /// where spans were not kept (memory cap, flight recorder): more than `calls` when some were not.
  std::uint64_t recorded_calls = 0;
  std::uint64_t self_ns = 0;          ///< sum of the groups' self time
  std::uint64_t operator_ns = 0;      ///< time inside outermost operator calls, summed over threads
  std::uint64_t covered_ns = 0;       ///< wall time during which at least one thread was inside an operator
  std::uint64_t duration_ns = 0;      ///< the session's duration (Metadata::duration_ns)
  bool heap_tracked = false;          ///< the groups' heap figures are meaningful

  /// The share of the session's wall time spent inside operators (on any thread); 0 when the
  /// duration is not known.
  [[nodiscard]] double fraction_of_run() const noexcept {
    return duration_ns == 0 ? 0.0 : static_cast<double>(covered_ns) / static_cast<double>(duration_ns);
  }
  [[nodiscard]] bool empty() const noexcept { return groups.empty(); }

  bool operator==(const OperatorTable&) const = default;
};

/// Groups the operator calls (spans with "op_scope") of `profile`. Empty when it has none.
/// Linear in spans and span arguments.
NNPROF_API OperatorTable operator_table(const Profile& profile);

}  // namespace nnprof
