// The operator observer: a global at::RecordFunction callback (LibTorch 1.13's API: plain
// function pointers, inputs readable only in the start callback) that opens an nnprof scope
// for each operator and closes it at the operator's end.
//
// The callbacks keep their state in a fixed per-thread stack rather than in torch's
// ObserverContext, which would cost an allocation per operator (and show up in the heap
// profile as the operator's own). Ends are matched by torch's RecordFunction handle, so an
// operator that began before the observer (or whose start was skipped) closes nothing.
#include <ATen/record_function.h>
#include <torch/csrc/api/include/torch/version.h>
#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>

#include <atomic>
#include <charconv>
#include <cstring>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "record/framework_scopes.hpp"
#include "collect/torch/op_cost.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/torch.hpp"

namespace nnprof::torch {
namespace {

using collect::torch_ops::OpInput;

std::atomic<Profiler*> g_profiler{nullptr};
std::atomic<bool> g_record_shapes{true};
std::mutex g_mu;  // guards starting and stopping
bool g_callback_added = false;
at::CallbackHandle g_handle = 0;

const char* scope_name(at::RecordScope scope) {
  switch (scope) {
    case at::RecordScope::FUNCTION: return "function";
    case at::RecordScope::BACKWARD_FUNCTION: return "backward";
    case at::RecordScope::USER_SCOPE: return "user";
    case at::RecordScope::TORCHSCRIPT_FUNCTION: return "torchscript";
    default: return "other";
  }
}

struct OpFrame {
  at::RecordFunctionHandle handle = 0;
  const char* name = nullptr;
  const SourceLocation* site = nullptr;  ///< the scope open_framework_scope opened
  OpCost own;           ///< counted from this call's inputs
  OpCost inside;        ///< declared by the operators nested in it
};

constexpr int kMaxDepth = 256;

struct ThreadOps {
  OpFrame frames[kMaxDepth];
  int depth = 0;
  std::vector<OpInput> inputs;
  std::string shapes, dtypes;
};

// Each thread's stack, reached through one pointer in initial-exec TLS: a plain
// thread_local in a shared library goes through __tls_get_addr on every access (twice per
// operator), which cost more than the rest of the bookkeeping. The pointer is 8 bytes of the
// static TLS that glibc keeps for libraries loaded later (the agent dlopens this one); the
// stack itself is allocated on the thread's first operator and freed when the thread ends.
// Operators that run in thread-local destructors after the stack is gone are not recorded.
__attribute__((tls_model("initial-exec"))) thread_local ThreadOps* tls_ops = nullptr;
__attribute__((tls_model("initial-exec"))) thread_local bool tls_ops_ended = false;

struct ThreadOpsOwner {
  std::unique_ptr<ThreadOps> ops;
  ~ThreadOpsOwner() {
    tls_ops = nullptr;
    tls_ops_ended = true;
  }
};

__attribute__((noinline)) ThreadOps* first_thread_ops() {
  if (tls_ops_ended) return nullptr;
  try {
    thread_local ThreadOpsOwner owner;
    owner.ops = std::make_unique<ThreadOps>();
    tls_ops = owner.ops.get();
  } catch (...) {
    return nullptr;  // out of memory: this thread's operators are not recorded
  }
  return tls_ops;
}

ThreadOps* thread_ops() {
  if (ThreadOps* ops = tls_ops) [[likely]]
    return ops;
  return first_thread_ops();
}

void append_int(std::string& out, std::int64_t v) {
  char buf[24];
  const auto r = std::to_chars(buf, buf + sizeof buf, v);
  out.append(buf, r.ptr);
}

// Reads the inputs torch passes: shapes and dtypes in the PyTorch profiler's format, and the
// OpInputs the counting needs.
void read_inputs(const at::RecordFunction& fn, ThreadOps& ops) {
  ops.inputs.clear();
  ops.shapes.assign("[");
  ops.dtypes.assign("[");
  const auto inputs = fn.inputs();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const c10::IValue& v = inputs[i];
    if (i > 0) {
      ops.shapes += ", ";
      ops.dtypes += ", ";
    }
    OpInput in;
    ops.shapes += '[';
    if (v.isTensor()) {
      const at::Tensor& t = v.toTensor();
      if (t.defined() && !t.is_nested()) {
        in.kind = OpInput::Kind::Tensor;
        const auto sizes = t.sizes();
        in.truncated = sizes.size() > OpInput::kMaxDims;
        in.dims = static_cast<std::uint8_t>(std::min(sizes.size(), OpInput::kMaxDims));
        for (std::size_t d = 0; d < sizes.size(); ++d) {
          if (d > 0) ops.shapes += ", ";
          append_int(ops.shapes, sizes[d]);
          if (d < OpInput::kMaxDims) in.size[d] = sizes[d];
        }
        in.element_bytes = static_cast<std::uint32_t>(t.element_size());
        const auto name = t.dtype().name();
        ops.dtypes.append(name.data(), name.size());
      } else {
        in.kind = OpInput::Kind::None;
      }
    } else {
      if (v.isIntList()) {
        in.kind = OpInput::Kind::IntList;
        const c10::List<std::int64_t> list = v.toIntList();
        in.truncated = list.size() > OpInput::kMaxDims;
        in.dims = static_cast<std::uint8_t>(std::min(list.size(), OpInput::kMaxDims));
        for (std::size_t d = 0; d < in.dims; ++d) in.size[d] = list.get(d);
      } else if (v.isInt()) {
        in.kind = OpInput::Kind::Int;
        in.integer = v.toInt();
      } else if (v.isBool()) {
        in.kind = OpInput::Kind::Int;
        in.integer = v.toBool() ? 1 : 0;
      } else if (v.isDouble()) {
        in.kind = OpInput::Kind::Double;
      } else if (v.isString()) {
        in.kind = OpInput::Kind::String;
        in.text = v.toStringRef();  // lives as long as the inputs: read before the start callback returns
      } else if (v.isNone()) {
        in.kind = OpInput::Kind::None;
      }
      // The PyTorch profiler's names for what is not a tensor: Scalar, IntList, ...
      if (v.isScalar()) ops.dtypes += "Scalar";
      else if (v.isList()) ops.dtypes += v.tagKind();
    }
    ops.shapes += ']';
    ops.inputs.push_back(in);
  }
  ops.shapes += ']';
  ops.dtypes += ']';
}

// ---- torch.distributed collectives (c10d::allreduce_, c10d::broadcast_, ...) ----
//
// A collective's span carries nnprof/distributed.hpp's collective arguments. The group is
// named by its backend, size and the order in which this rank first used groups of that
// backend and size ("gloo-2#0"): torch 1.13 gives a process group no name, and its own
// sequence number for gloo is not the same across ranks, so the sequence is counted here,
// per group, in call order. Members use their groups in the same order (torch requires that
// of collectives), so both agree across ranks.

struct CollectiveGroup {
  std::string name;
  std::int64_t size = 0;
  std::int64_t next_seq = 0;
};

std::mutex g_groups_mu;
std::unordered_map<const void*, CollectiveGroup>& groups() {
  static auto* map = new std::unordered_map<const void*, CollectiveGroup>;  // used until the process ends
  return *map;
}
std::unordered_map<std::string, int>& groups_seen() {
  static auto* map = new std::unordered_map<std::string, int>;
  return *map;
}

struct CollectiveCall {
  std::string group;
  std::int64_t size = 0;
  std::int64_t seq = 0;
  std::int64_t bytes = 0;
  std::int64_t root = -1;  ///< -1: none
  std::string_view operation;
};

std::int64_t tensor_bytes(const c10::IValue& v) {
  if (v.isTensor()) {
    const at::Tensor& t = v.toTensor();
    return t.defined() ? static_cast<std::int64_t>(t.nbytes()) : 0;
  }
  std::int64_t total = 0;
  if (v.isTensorList()) {
    for (const at::Tensor& t : v.toTensorVector())
      if (t.defined()) total += static_cast<std::int64_t>(t.nbytes());
  } else if (v.isList()) {
    for (const c10::IValue& inner : v.toListRef()) total += tensor_bytes(inner);
  }
  return total;
}

bool is_tensor_input(const c10::IValue& v) {
  return v.isTensor() || v.isTensorList() || (v.isList() && v.toListRef().size() > 0 && v.toListRef()[0].isTensorList());
}

/// The collective arguments of a c10d operator; nullopt when no process group is among its inputs.
std::optional<CollectiveCall> read_collective(const at::RecordFunction& fn, std::string_view name) {
  CollectiveCall call;
  call.operation = name.substr(6);  // after "c10d::"
  if (call.operation.ends_with('_')) call.operation.remove_suffix(1);  // allreduce_ is in place
  const auto inputs = fn.inputs();
  std::size_t pg_index = inputs.size();
  c10::intrusive_ptr<c10d::ProcessGroup> pg;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (!inputs[i].isCustomClass()) continue;
    try {
      pg = inputs[i].toCustomClass<c10d::ProcessGroup>();
      pg_index = i;
      break;
    } catch (const std::exception&) {
      // Another custom class (a ReduceOp): not the group.
    }
  }
  if (!pg) return std::nullopt;
  // The data this rank contributes: the last tensor input before the group (allgather_'s
  // input list, not its output lists).
  for (std::size_t i = 0; i < pg_index; ++i)
    if (is_tensor_input(inputs[i])) call.bytes = tensor_bytes(inputs[i]);
  if (call.operation == "barrier") call.bytes = 0;  // its tensor is a placeholder
  if (call.operation == "broadcast" || call.operation == "reduce" || call.operation == "gather" ||
      call.operation == "scatter") {
    for (std::size_t i = pg_index + 1; i < inputs.size(); ++i)
      if (inputs[i].isInt()) {
        call.root = inputs[i].toInt();
        break;
      }
  }
  std::lock_guard lock(g_groups_mu);
  auto it = groups().find(pg.get());
  if (it == groups().end()) {
    std::string backend;
    try {
      backend = pg->getBackendName();
    } catch (const std::exception&) {
      backend = "c10d";
    }
    const std::string kind = backend + "-" + std::to_string(pg->getSize());
    const int ordinal = groups_seen()[kind]++;
    it = groups().emplace(pg.get(), CollectiveGroup{kind + "#" + std::to_string(ordinal), pg->getSize(), 0}).first;
  }
  call.group = it->second.name;
  call.size = it->second.size;
  call.seq = it->second.next_seq++;
  return call;
}

std::unique_ptr<at::ObserverContext> on_start(const at::RecordFunction& fn) {
  Profiler* profiler = g_profiler.load(std::memory_order_acquire);
  if (profiler == nullptr) return nullptr;
  ThreadOps* stack = thread_ops();
  if (stack == nullptr) return nullptr;
  ThreadOps& ops = *stack;
  if (ops.depth >= kMaxDepth) return nullptr;  // its end finds another handle on top: closes nothing
  OpFrame& frame = ops.frames[ops.depth++];
  frame = OpFrame{fn.handle(), fn.name(), nullptr, {}, {}};
  using detail::arg_value;
  detail::SpanArgInput args[11];
  std::size_t n = 0;
  args[n++] = {"op_scope", arg_value(std::string_view(scope_name(fn.scope())))};
  std::optional<CollectiveCall> collective;
  if (std::string_view(frame.name).starts_with("c10d::")) {
    try {
      collective = read_collective(fn, frame.name);
    } catch (const std::exception&) {
      // Inputs torch could not give: the operator keeps its scope without the collective's arguments.
    }
  }
  if (collective) {
    // The collective's own sequence ("seq"), not autograd's, which c10d operators do not have.
    args[n++] = {collective_arg::kOperation, arg_value(collective->operation)};
    args[n++] = {collective_arg::kGroup, arg_value(std::string_view(collective->group))};
    args[n++] = {collective_arg::kSequence, arg_value(collective->seq)};
    args[n++] = {collective_arg::kBytes, arg_value(collective->bytes)};
    if (collective->root >= 0) args[n++] = {collective_arg::kRoot, arg_value(collective->root)};
    args[n++] = {collective_arg::kGroupSize, arg_value(collective->size)};
  } else if (fn.seqNr() >= 0) {
    args[n++] = {"seq", arg_value(fn.seqNr())};
  }
  if (fn.scope() == at::RecordScope::BACKWARD_FUNCTION && fn.forwardThreadId() != 0)
    args[n++] = {"fwd_thread", arg_value(fn.forwardThreadId())};
  if (fn.needsInputs() && g_record_shapes.load(std::memory_order_relaxed)) {
    try {
      read_inputs(fn, ops);
      args[n++] = {"input_shapes", arg_value(std::string_view(ops.shapes))};
      args[n++] = {"input_dtypes", arg_value(std::string_view(ops.dtypes))};
      frame.own = collect::torch_ops::op_cost(frame.name, ops.inputs);
    } catch (...) {
      // An input torch could not describe (a tensor without sizes): the call keeps its scope.
    }
  }
  frame.site = detail::open_framework_scope(*profiler, frame.name, {args, n});
  return nullptr;
}

void on_end(const at::RecordFunction& fn, at::ObserverContext*) {
  ThreadOps* stack = tls_ops;  // no stack: no start was recorded on this thread
  if (stack == nullptr) return;
  ThreadOps& ops = *stack;
  if (ops.depth == 0 || ops.frames[ops.depth - 1].handle != fn.handle()) return;
  const OpFrame frame = ops.frames[--ops.depth];
  // The innermost count wins: an operator declares its own FLOPs only when none of the
  // operators inside it did (aten::linear's addmm counts, linear inherits it).
  const bool declared_inside = frame.inside.flops > 0;
  const OpCost work = declared_inside ? frame.inside : frame.own;
  if (ops.depth > 0) ops.frames[ops.depth - 1].inside += work;
  Profiler* profiler = g_profiler.load(std::memory_order_acquire);
  if (profiler == nullptr) return;  // stopped while the operator ran
  using detail::arg_value;
  const detail::SpanArgInput args[2] = {{"flops", arg_value(work.flops)},
                                        {"bytes", arg_value(static_cast<std::int64_t>(work.bytes))}};
  const double declared = declared_inside ? 0.0 : frame.own.flops;
  detail::close_framework_scope(*profiler, frame.site, frame.name, declared, static_cast<std::uint64_t>(frame.own.bytes),
                                {args, work.flops > 0 ? std::size_t{2} : std::size_t{0}});
}

// Throws std::logic_error when an observer is already recording.
void start(Profiler& profiler, bool record_shapes) {
  std::lock_guard lock(g_mu);
  if (g_profiler.load(std::memory_order_relaxed) != nullptr)
    throw std::logic_error("nnprof::torch::OpObserver: an observer is already recording operators");
  g_record_shapes.store(record_shapes, std::memory_order_relaxed);
  g_profiler.store(&profiler, std::memory_order_release);
  if (!g_callback_added) {
    // Added once and then switched with disable/reenable: LibTorch 1.13 keeps running a
    // removed global callback for operators already under way.
    g_handle = at::addGlobalCallback(at::RecordFunctionCallback(on_start, on_end).needsInputs(true));
    g_callback_added = true;
  } else {
    at::reenableCallback(g_handle);
  }
}

void stop() noexcept {
  std::lock_guard lock(g_mu);
  if (g_callback_added) at::disableCallback(g_handle);
  g_profiler.store(nullptr, std::memory_order_release);
}

}  // namespace

OpObserver::OpObserver(Profiler& profiler, OpObserverOptions options) { start(profiler, options.record_shapes); }

OpObserver::~OpObserver() { stop(); }

bool OpObserver::active() noexcept { return g_profiler.load(std::memory_order_acquire) != nullptr; }

const char* built_for_torch_version() noexcept { return TORCH_VERSION; }

}  // namespace nnprof::torch

extern "C" int nnprof_torch_start(int record_shapes, char* why, unsigned long why_size) noexcept {
  const auto say = [&](const char* text) {
    if (why != nullptr && why_size > 0) {
      std::strncpy(why, text, why_size - 1);
      why[why_size - 1] = '\0';
    }
  };
  try {
    // Lives until the process ends: the preload agent observes the whole run.
    static nnprof::torch::OpObserver* observer = nullptr;
    if (observer != nullptr) return 0;
    observer = new nnprof::torch::OpObserver(nnprof::global_profiler(), {record_shapes != 0});
    return 0;
  } catch (const std::exception& e) {
    say(e.what());
  } catch (...) {
    say("unknown error");
  }
  return -1;
}
