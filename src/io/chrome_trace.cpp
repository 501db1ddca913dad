#include "io/chrome_trace.hpp"

#include <cmath>
#include <cstdint>
#include <map>
#include <ostream>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/cpu_profile.hpp"
#include "analysis/operators.hpp"
#include "io/gpu_store.hpp"
#include "io/progress.hpp"
#include "nnprof/error.hpp"
#include "nnprof/gpu.hpp"

namespace nnprof::io {

namespace {

// Events are formatted straight into a buffer that is flushed every 64 KiB: a 1,000,000-span
// trace is ~100 MB, which must neither sit in memory as a JSON tree nor as one string. The
// structure is fixed; every string goes through nlohmann-json's escaper, once per string.
class TraceWriter {
 public:
  explicit TraceWriter(std::ostream& out) : out_(out) {}
  ~TraceWriter() = default;

  template <class... Args>
  void event(fmt::format_string<Args...> f, Args&&... args) {
    if (!first_) buf_.push_back(',');
    first_ = false;
    buf_.push_back('\n');
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    if (buf_.size() > 64 * 1024) flush();
  }
  template <class... Args>
  void raw(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(std::back_inserter(buf_), f, std::forward<Args>(args)...);
    if (buf_.size() > 64 * 1024) flush();
  }
  void flush() {
    out_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
    buf_.clear();
    if (!out_) throw Error("could not write the Chrome trace: the output stream failed (disk full?)");
  }

 private:
  std::ostream& out_;
  fmt::memory_buffer buf_;
  bool first_ = true;
};

std::string quoted(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

/// Nanoseconds as trace microseconds, exactly (no floating-point rounding).
struct Micros {
  std::uint64_t ns;
};

// CPU samples, as two views of the same data:
//
// - One thread-scoped instant event per sample ("ph":"i","s":"t") on the sampled thread's
//   track, named after the innermost function, its whole stack in args.stack (innermost first,
//   one function per line) and the innermost scope in args.scope. Perfetto's JSON importer
//   turns these into zero-length slices on the thread track, next to the scopes, where a click
//   shows the stack; chrome://tracing draws them the same way. Perfetto ignores the Trace Event
//   Format's "stackFrames"/"samples" sampling data (google/perfetto#387: "never been a need to
//   support importing these"; its documentation lists B/E/X/I/C/M and flow events only), so
//   instants are the representation that both viewers really show.
// - Each instant also carries "sf", the id of its leaf in the top-level "stackFrames" tree
//   ({"name", "category": module, "parent"}), which chrome://tracing (catapult) and speedscope
//   read to show the stack as frames. It costs one entry per distinct (caller path, frame).
//
// Strings are escaped once per stack and per scope path, so a sample costs one formatted line.
// (Calls are qualified: for a non-const std::string, ADL would pick std::quoted.)
class CpuSampleWriter {
 public:
  explicit CpuSampleWriter(const Profile& p) : p_(p), stacks_(p.stacks.size()), scopes_(p.call_tree.size()) {}

  // {"stack": ..., "sf": ...} of `stack`, computed on first use.
  struct StackText {
    std::string stack;     // quoted
    std::string leaf;      // quoted innermost function
    std::uint32_t sf = 0;  // leaf node in stackFrames; 0: none
    bool done = false;
  };

  const StackText& stack(std::uint32_t index) {
    if (index >= stacks_.size()) return none_;
    StackText& t = stacks_[index];
    if (t.done) return t;
    t.done = true;
    const std::vector<std::uint32_t>& frames = p_.stacks[index].frames;
    std::string text;
    for (const std::uint32_t f : frames) {
      if (!text.empty()) text += '\n';
      text += analysis::cpu_frame_function(p_, f);
    }
    t.stack = io::quoted(text);
    t.leaf = io::quoted(frames.empty() ? std::string("[no stack]") : analysis::cpu_frame_function(p_, frames.front()));
    std::uint32_t parent = 0;
    for (auto it = frames.rbegin(); it != frames.rend(); ++it) parent = frame_node(parent, *it);
    t.sf = parent;
    return t;
  }

  const std::string& scope(std::uint32_t node) {
    if (node == 0 || node >= scopes_.size()) return outside_;
    if (scopes_[node].empty()) scopes_[node] = io::quoted(p_.node_path(node));
    return scopes_[node];
  }

  // The "stackFrames" object's members, in id order.
  void write_frames(TraceWriter& w) const {
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      const Node& n = nodes_[i];
      w.raw("{}\n\"{}\":{{\"name\":{},\"category\":{}", i == 0 ? "" : ",", i + 1, n.name, n.category);
      if (n.parent != 0) w.raw(",\"parent\":\"{}\"", n.parent);
      w.raw("}}");
    }
  }

  [[nodiscard]] bool has_frames() const { return !nodes_.empty(); }

 private:
  struct Node {
    std::uint32_t parent;  // 0: a root frame
    std::string name;      // quoted
    std::string category;  // quoted module
  };

  // The stackFrames node for the function of `frame` called from `parent` (ids from 1): frames
  // are merged by function, as in the flame tree, so two lines of one function are one node.
  std::uint32_t frame_node(std::uint32_t parent, std::uint32_t frame) {
    std::string module = "[unknown]";
    if (frame < p_.frames.size() && p_.frames[frame].module < p_.strings.size()) {
      module = p_.str(p_.frames[frame].module);
      module = module.substr(module.find_last_of('/') + 1);  // npos + 1 == 0: the whole name
    }
    std::string name = analysis::cpu_frame_function(p_, frame);
    auto [it, fresh] = node_of_.try_emplace(fmt::format("{}\x1f{}\x1f{}", parent, name, module),
                                            static_cast<std::uint32_t>(nodes_.size() + 1));
    if (fresh) nodes_.push_back({parent, io::quoted(name), io::quoted(module)});
    return it->second;
  }

  const Profile& p_;
  std::vector<StackText> stacks_;
  std::vector<std::string> scopes_;
  std::vector<Node> nodes_;
  std::unordered_map<std::string, std::uint32_t> node_of_;
  StackText none_{io::quoted(""), io::quoted("[no stack]"), 0, true};
  std::string outside_ = io::quoted("[outside any scope]");
};

}  // namespace
}  // namespace nnprof::io

template <>
struct fmt::formatter<nnprof::io::Micros> : fmt::formatter<std::string_view> {
  auto format(nnprof::io::Micros m, format_context& ctx) const {
    return fmt::format_to(ctx.out(), "{}.{:03}", m.ns / 1000, m.ns % 1000);
  }
};

namespace nnprof::io {

namespace {

// One trace process per GPU, with pid = kGpuPidBase + the CUDA device ordinal. Linux pids are
// at most PID_MAX_LIMIT (2^22), so these never collide with the profiled process's pid, and
// they stay positive 32-bit integers, which is how trace viewers read pids.
constexpr std::int64_t kGpuPidBase = 0x7F000000;
// A CUPTI stream id is unique within its context only: a second stream with the same id on one
// device (another context) gets tid kExtraStreamTidBase + its stream index instead.
constexpr std::int64_t kExtraStreamTidBase = 1'000'000'000;

std::int64_t gpu_pid(std::uint32_t device) { return kGpuPidBase + device; }

// A counter value as a JSON number: NaN and infinities have no JSON spelling and are left out.
bool json_number(double v) { return std::isfinite(v); }

// Readable names of the NVML series (GpuCounter::name), as the reports call them.
std::string counter_track_name(const GpuCounter& c) {
  if (c.name == "nvml_memory_used") return "NVML memory used";
  if (c.name == "nvml_gpu_utilization") return "NVML GPU utilisation";
  if (c.name == "nvml_memory_utilization") return "NVML memory utilisation";
  return c.name;
}

// PyTorch's forward -> backward arrows ("fwd_bwd", as the PyTorch profiler draws them), from
// the forward call whose autograd node a backward operator ran to that backward call
// (analysis::forward_backward_links). Ids start at 2^40, clear of the thread flows' and the
// GPU launches'.
template <class PidOf, class TidOf>
void write_forward_backward_flows(const Profile& p, TraceWriter& w, PidOf&& pid_of, TidOf&& tid_of) {
  std::uint64_t id = std::uint64_t{1} << 40;
  for (const analysis::ForwardBackward& link : analysis::forward_backward_links(p)) {
    const Span& from = p.spans[link.forward_span];
    const Span& to = p.spans[link.backward_span];
    w.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"fwd_bwd","cat":"fwd_bwd"}})", id,
            pid_of(from.thread), tid_of(from.thread), Micros{from.start_ns});
    w.event(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"fwd_bwd","cat":"fwd_bwd"}})", id,
            pid_of(to.thread), tid_of(to.thread), Micros{to.start_ns});
    ++id;
  }
}

// The GPU part of the trace (Profile::gpu, when traced): a process per device with a thread
// per stream holding its kernels, copies and memsets; CUDA API calls on their CPU threads;
// an arrow from each launch to its op; NVML series and the allocated memory as counters.
class GpuTraceWriter {
 public:
  /// `thread_tid`: the trace tid of each Profile::threads entry; `names`: every string, quoted.
  GpuTraceWriter(const Profile& p, TraceWriter& w, std::int64_t pid, std::vector<std::int64_t> thread_tid,
                 const std::vector<std::string>& names, const std::string& unknown)
      : p_(p), g_(p.gpu), w_(w), pid_(pid), thread_tid_(std::move(thread_tid)), names_(names), unknown_(unknown) {
    scopes_.resize(p.call_tree.size());
  }

  void write() {
    processes_and_threads();
    api_calls();
    ops();
    launch_flows();
    counters();
  }

 private:
  const std::string& name(StringId id) const { return id < names_.size() ? names_[id] : unknown_; }

  // The launching scope's path, quoted, computed once per call-tree node.
  const std::string& scope(std::uint32_t node) {
    if (node >= scopes_.size()) return outside_;
    if (scopes_[node].empty()) scopes_[node] = node == 0 ? outside_ : io::quoted(p_.node_path(node));
    return scopes_[node];
  }

  void processes_and_threads() {
    // Every device the profile names: those described, then any other one that a stream, a
    // counter or an allocation refers to.
    std::map<std::uint32_t, std::string> devices;
    for (const GpuDevice& d : g_.devices) devices.try_emplace(d.id, d.name);
    for (const GpuStream& s : g_.streams) devices.try_emplace(s.device);
    for (const GpuCounter& c : g_.counters) devices.try_emplace(c.device);
    for (const GpuMemoryEvent& e : g_.memory_events) devices.try_emplace(e.device);
    // The CPU process first, then the GPUs in device order.
    w_.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":0}}}})", pid_);
    std::int64_t rank = 1;
    for (const auto& [id, device_name] : devices) {
      const std::string label = device_name.empty() ? fmt::format("GPU {}", id) : fmt::format("GPU {}: {}", id, device_name);
      w_.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})", gpu_pid(id), io::quoted(label));
      w_.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", gpu_pid(id),
               rank++);
    }
    std::set<std::pair<std::uint32_t, std::int64_t>> taken;  // (device, tid)
    for (std::size_t i = 0; i < g_.streams.size(); ++i) {
      const GpuStream& s = g_.streams[i];
      std::int64_t tid = s.stream;
      std::string label = fmt::format("stream {}{}", s.stream, s.is_default ? " (default)" : "");
      if (!taken.emplace(s.device, tid).second) {
        tid = kExtraStreamTidBase + static_cast<std::int64_t>(i);
        taken.emplace(s.device, tid);
        label += fmt::format(" (context {})", s.context);
      }
      stream_tid_.push_back(tid);
      w_.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})", gpu_pid(s.device), tid,
               io::quoted(label));
      w_.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})",
               gpu_pid(s.device), tid, i);
    }
  }

  // Only calls on a thread nnprof knows: the others have no track to be drawn on.
  void api_calls() {
    for (const GpuApiCall& a : g_.api_calls) {
      if (a.thread >= thread_tid_.size()) continue;
      std::string args = fmt::format(R"("correlation_id":{},"cbid":{},"driver":{},"return_value":{})", a.correlation_id,
                                     a.cbid, a.driver, a.return_value);
      if (a.external_kind != 0)
        args += fmt::format(R"(,"external_id":{},"external_kind":{})", a.external_id, a.external_kind);
      w_.event(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"cuda_api","args":{{{}}}}})", pid_,
               thread_tid_[a.thread], Micros{a.start_ns}, Micros{a.end_ns - a.start_ns}, name(a.name), args);
    }
  }

  std::string op_args(const GpuOp& op) {
    std::string args = fmt::format(R"("correlation_id":{},"scope":{})", op.correlation_id, scope(op.launch.node));
    const std::uint64_t dur = op.duration_ns();
    if (op.kind == GpuOpKind::Kernel && op.detail < g_.kernels.size()) {
      const GpuKernel& k = g_.kernels[op.detail];
      args += fmt::format(
          R"(,"grid":[{},{},{}],"block":[{},{},{}],"registers_per_thread":{},"shared_bytes":{},"static_shared_bytes":{},"dynamic_shared_bytes":{})",
          k.grid[0], k.grid[1], k.grid[2], k.block[0], k.block[1], k.block[2], k.registers_per_thread,
          std::int64_t{k.static_shared_bytes} + k.dynamic_shared_bytes, k.static_shared_bytes, k.dynamic_shared_bytes);
      if (k.occupancy >= 0.0 && json_number(k.occupancy)) {
        args += fmt::format(R"(,"occupancy":{})", k.occupancy);
        if (k.occupancy_estimated) args += R"(,"occupancy_estimated":true)";
      }
    } else if (op.kind == GpuOpKind::Memcpy && op.detail < g_.memcpys.size()) {
      const GpuMemcpy& m = g_.memcpys[op.detail];
      args += fmt::format(R"(,"kind":"{}","bytes":{},"src_memory":"{}","dst_memory":"{}","pageable":{},"async":{})",
                          to_string(m.kind), m.bytes, to_string(m.src), to_string(m.dst), m.pageable(), m.async);
      // Bytes per nanosecond are GB/s.
      if (dur > 0) args += fmt::format(R"(,"GB/s":{:.3f})", static_cast<double>(m.bytes) / static_cast<double>(dur));
      if (m.kind == MemcpyKind::PtoP) args += fmt::format(R"(,"src_device":{},"dst_device":{})", m.src_device, m.dst_device);
    } else if (op.kind == GpuOpKind::Memset && op.detail < g_.memsets.size()) {
      const GpuMemset& m = g_.memsets[op.detail];
      args += fmt::format(R"(,"bytes":{},"value":{},"memory":"{}")", m.bytes, m.value, to_string(m.memory));
    }
    return args;
  }

  void ops() {
    for (const GpuOp& op : g_.ops) {
      if (op.stream >= g_.streams.size()) continue;
      w_.event(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"{}","args":{{{}}}}})",
               gpu_pid(g_.streams[op.stream].device), stream_tid_[op.stream], Micros{op.start_ns},
               Micros{op.duration_ns()}, name(op.name), stored_name(op.kind), op_args(op));
    }
  }

  // An arrow from the launch to the op: "s" on the CPU thread where the launching API call
  // began (binding to that call's slice, written above), or, without a traced call, at the
  // launch time in the scope open then; "f","bp":"e" binds to the op's slice on its stream.
  // Ids continue after the thread flows' (1 .. flows.size()), one per op index.
  void launch_flows() {
    for (std::size_t i = 0; i < g_.ops.size(); ++i) {
      const GpuOp& op = g_.ops[i];
      if (op.stream >= g_.streams.size()) continue;
      const GpuLaunch& l = op.launch;
      std::uint32_t thread = kNone;
      std::uint64_t time_ns = 0;
      if (l.api < g_.api_calls.size() && g_.api_calls[l.api].thread < thread_tid_.size()) {
        thread = g_.api_calls[l.api].thread;
        time_ns = g_.api_calls[l.api].start_ns;
      } else if (l.thread < thread_tid_.size() && l.span != kNone) {
        thread = l.thread;
        time_ns = l.time_ns;
      } else {
        continue;  // nothing on a CPU track to leave from
      }
      const std::uint64_t id = p_.flows.size() + 1 + i;
      w_.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"launch","cat":"gpu_launch"}})", id, pid_,
               thread_tid_[thread], Micros{time_ns});
      w_.event(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"launch","cat":"gpu_launch"}})", id,
               gpu_pid(g_.streams[op.stream].device), stream_tid_[op.stream], Micros{op.start_ns});
    }
  }

  void counters() {
    for (const GpuCounter& c : g_.counters) {
      const std::string track = io::quoted(counter_track_name(c));
      const char* key = c.unit == "bytes" ? "bytes" : c.unit == "percent" ? "percent" : "value";
      for (const auto& [time_ns, value] : c.points) {
        if (!json_number(value)) continue;
        w_.event(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"{}":{}}}}})", gpu_pid(c.device), Micros{time_ns},
                 track, key, value);
      }
    }
    // Device memory allocated, replayed from the allocations and releases (releases matched
    // by address, as every GPU memory view does).
    for (const GpuMemoryPoint& point : gpu_memory_report(p_).timeline)
      w_.event(R"({{"ph":"C","pid":{},"ts":{},"name":"GPU memory allocated","args":{{"bytes":{}}}}})",
               gpu_pid(point.device), Micros{point.time_ns}, point.allocated_bytes);
  }

  const Profile& p_;
  const GpuProfile& g_;
  TraceWriter& w_;
  std::int64_t pid_;
  std::vector<std::int64_t> thread_tid_;
  std::vector<std::int64_t> stream_tid_;
  const std::vector<std::string>& names_;
  const std::string& unknown_;
  std::vector<std::string> scopes_;
  std::string outside_ = io::quoted("[outside any scope]");
};

}  // namespace

void write_chrome_trace(const Profile& p, std::ostream& out) {
  std::vector<std::string> names(p.strings.size());
  for (std::size_t i = 0; i < p.strings.size(); ++i) names[i] = quoted(p.strings[i]);
  const std::string unknown = quoted("[unknown]");
  auto name_of = [&](StringId id) -> const std::string& { return id < names.size() ? names[id] : unknown; };
  // A merged distributed profile is a process per rank, pid = the rank, all on rank 0's clock.
  const bool by_rank = p.ranks.size() >= 2;
  const std::int64_t pid = by_rank ? 0 : p.meta.pid > 0 ? p.meta.pid : 1;
  auto pid_of = [&](std::uint32_t thread) -> std::int64_t {
    if (!by_rank) return pid;
    const std::uint32_t rank = thread < p.threads.size() ? p.threads[thread].rank : 0;
    return rank < p.ranks.size() ? p.ranks[rank].rank : 0;
  };
  auto tid_of = [&](std::uint32_t thread) -> std::int64_t {
    return thread < p.threads.size() && p.threads[thread].os_tid > 0 ? p.threads[thread].os_tid
                                                                      : static_cast<std::int64_t>(thread) + 1;
  };

  nlohmann::json other = {
      {"generator", "nnprof " + p.meta.nnprof_version},
      {"host", p.meta.hostname},
      {"os", p.meta.os},
      {"cpu", p.meta.cpu_model},
      {"logical_cpus", p.meta.logical_cpus},
      {"command_line", p.meta.command_line},
      {"clock_source", p.meta.clock.source},
      {"ns_per_tick", p.meta.clock.ns_per_tick},
      {"start_unix_ns", p.meta.clock.unix_origin_ns},
      {"duration_ns", p.meta.duration_ns},
      {"spans_kept", p.completeness.spans_kept},
      {"spans_dropped", p.completeness.spans_dropped},
      {"spans_overwritten", p.completeness.spans_overwritten},
      {"overhead_per_scope_ns", p.completeness.overhead_per_scope_ns},
  };

  if (!p.annotations.empty()) other["annotations"] = p.annotations;
  if (by_rank) {
    nlohmann::json ranks = nlohmann::json::array();
    for (const RankInfo& r : p.ranks)
      ranks.push_back({{"rank", r.rank},
                       {"host", r.hostname},
                       {"clock_method", r.clock.method},
                       {"clock_offset_ns", r.clock.offset_ns},
                       {"clock_residual_ns", r.clock.residual_ns}});
    other["ranks"] = std::move(ranks);
  }
  if (p.cpu.sampled) {
    other["cpu_sampling"] = {{"mode", p.cpu.mode},           {"mechanism", p.cpu.mechanism},
                             {"unwinder", p.cpu.unwinder},   {"period_ns", p.cpu.period_ns},
                             {"samples", p.cpu.samples},     {"samples_dropped", p.cpu.samples_dropped}};
  }
  if (p.gpu.summary.traced) {
    const GpuSummary& s = p.gpu.summary;
    other["gpu"] = {{"status", s.status},
                    {"clock_source", s.clock_source},
                    {"cupti_version", s.cupti_version},
                    {"driver_version", s.driver_version},
                    {"records_dropped", s.records_dropped},
                    {"gpu_pid_base", kGpuPidBase}};
  }

  TraceWriter w(out);
  w.raw("{{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[",
        other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const std::string process = p.meta.command_line.empty() ? "nnprof" : "nnprof: " + p.meta.command_line;
  if (by_rank) {
    for (const RankInfo& r : p.ranks) {
      w.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})", r.rank,
              quoted(fmt::format("rank {} ({})", r.rank, r.hostname)));
      w.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_sort_index","args":{{"sort_index":{}}}}})", r.rank, r.rank);
    }
  } else {
    w.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})", pid, quoted(process));
  }
  for (const ThreadInfo& t : p.threads) {
    const std::string label = t.name.empty() ? fmt::format("thread {}", t.os_tid) : t.name;
    w.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})", pid_of(t.id), tid_of(t.id),
            quoted(label));
    w.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid_of(t.id),
            tid_of(t.id), t.id);
  }

  Progress progress("exporting spans", p.spans.size());
  std::size_t next_arg = 0;  // span_args are sorted by span
  std::string args;
  for (std::size_t i = 0; i < p.spans.size(); ++i) {
    const Span& s = p.spans[i];
    // The program's arguments of this span (ProfileGuard::arg) as the slice's "args".
    args.clear();
    for (; next_arg < p.span_args.size() && p.span_args[next_arg].span == i; ++next_arg) {
      const SpanArg& a = p.span_args[next_arg];
      args += args.empty() ? R"(,"args":{)" : ",";
      args += quoted(a.key);
      args += ':';
      if (a.type == SpanArg::Type::Int) {
        args += std::to_string(a.int_value);
      } else if (a.type == SpanArg::Type::Real && std::isfinite(a.real_value)) {
        args += fmt::format("{}", a.real_value);
      } else {
        args += quoted(a.type == SpanArg::Type::Real ? fmt::format("{}", a.real_value) : a.string_value);  // JSON has no NaN
      }
    }
    if (!args.empty()) args += '}';
    w.event(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"scope"{}}})", pid_of(s.thread), tid_of(s.thread),
            Micros{s.start_ns}, Micros{s.end_ns - s.start_ns}, name_of(s.name), args);
    progress.advance(1);
  }

  // Flows as the Trace Event Format's flow events, which Perfetto and chrome://tracing draw as
  // arrows: "s" binds to the slice open at its time on its thread, "f" with "bp":"e" to the
  // enclosing slice (without it, to the next slice to begin). An end outside any kept span
  // has nothing to bind to and is left out. Ids are the flows' indices: a program's own id
  // may be used twice (hand-over and completion, or again in a later round).
  for (std::size_t i = 0; i < p.flows.size(); ++i) {
    const Flow& f = p.flows[i];
    if (f.out.span == kNone || f.in.span == kNone) continue;
    const char* name = f.kind == FlowKind::Handoff ? "handoff" : "completion";
    w.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"flow"}})", i + 1, pid_of(f.out.thread),
            tid_of(f.out.thread), Micros{f.out.time_ns}, name);
    w.event(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"flow"}})", i + 1,
            pid_of(f.in.thread), tid_of(f.in.thread), Micros{f.in.time_ns}, name);
  }
  write_forward_backward_flows(p, w, pid_of, tid_of);
  if (p.gpu.summary.traced) {
    std::vector<std::int64_t> thread_tid;
    for (std::size_t t = 0; t < p.threads.size(); ++t) thread_tid.push_back(tid_of(static_cast<std::uint32_t>(t)));
    GpuTraceWriter(p, w, pid, std::move(thread_tid), names, unknown).write();
  }

  CpuSampleWriter cpu(p);
  for (const CpuSample& sample : p.cpu_samples) {
    const CpuSampleWriter::StackText& stack = cpu.stack(sample.stack);
    if (stack.sf != 0) {
      w.event(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":"cpu_sample","sf":"{}","args":{{"stack":{},"scope":{},"weight_ns":{}}}}})",
              pid_of(sample.thread), tid_of(sample.thread), Micros{sample.time_ns}, stack.leaf, stack.sf, stack.stack,
              cpu.scope(sample.node), sample.weight_ns);
    } else {
      w.event(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":"cpu_sample","args":{{"stack":{},"scope":{},"weight_ns":{}}}}})",
              pid_of(sample.thread), tid_of(sample.thread), Micros{sample.time_ns}, stack.leaf, stack.stack, cpu.scope(sample.node),
              sample.weight_ns);
    }
  }

  // One counter track per memory counter, plus the sum over all of them.
  std::vector<std::int64_t> running(p.memory_counters.size(), 0);
  std::int64_t total = 0;
  for (const MemoryEvent& e : p.memory_events) {
    if (e.counter >= running.size()) continue;
    running[e.counter] += e.delta_bytes;
    total += e.delta_bytes;
    const StringId counter_name = p.memory_counters[e.counter].name;
    w.event(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"bytes":{}}}}})", pid, Micros{e.time_ns},
            quoted("memory: " + (counter_name < p.strings.size() ? p.strings[counter_name] : "[unknown]")),
            running[e.counter]);
    w.event(R"j({{"ph":"C","pid":{},"ts":{},"name":"memory (all counters)","args":{{"bytes":{}}}}})j", pid,
            Micros{e.time_ns}, total);
  }
  // The heap timeline: one counter track per series, as Perfetto shows process memory.
  for (const HeapSample& sample : p.heap_samples) {
    w.event(R"({{"ph":"C","pid":{},"ts":{},"name":"heap in use","args":{{"bytes":{}}}}})", pid,
            Micros{sample.time_ns}, sample.heap_bytes);
    w.event(R"({{"ph":"C","pid":{},"ts":{},"name":"RSS","args":{{"bytes":{}}}}})", pid, Micros{sample.time_ns},
            sample.rss_bytes);
    w.event(R"j({{"ph":"C","pid":{},"ts":{},"name":"RSS peak (VmHWM)","args":{{"bytes":{}}}}})j", pid,
            Micros{sample.time_ns}, sample.rss_peak_bytes);
  }
  // Metrics (nnprof/metrics.hpp): a counter track each; a counter's value is its running total.
  for (const MetricSeries& m : p.metrics) {
    const std::string track =
        quoted(fmt::format("metric: {}{}", p.str(m.name), m.unit.empty() ? "" : fmt::format(" ({})", m.unit)));
    for (const MetricPoint& pt : m.points)
      w.event(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"value":{}}}}})", pid, Micros{pt.time_ns}, track,
              pt.value);
  }
  // The system monitor (nnprof/system.hpp): a counter track each, named with its unit; values
  // not read at a sample are left out rather than drawn as zero.
  for (const SystemTrack& t : p.system.tracks) {
    const std::string track = quoted(fmt::format("system: {} ({})", t.name, t.unit));
    for (std::size_t i = 0; i < t.values.size() && i < p.system.sample_ns.size(); ++i)
      if (json_number(t.values[i]))
        w.event(R"({{"ph":"C","pid":{},"ts":{},"name":{},"args":{{"value":{}}}}})", pid, Micros{p.system.sample_ns[i]},
                track, t.values[i]);
  }
  if (p.heap.tracked) {
    // Where the heap peaked, on the thread whose allocation reached it.
    const std::string path = p.heap.peak_node == 0 ? "[outside any scope]" : p.node_path(p.heap.peak_node);
    if (p.heap.peak_thread < p.threads.size()) {
      w.event(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":"heap peak","args":{{"bytes":{},"scope":{}}}}})",
              pid, tid_of(p.heap.peak_thread), Micros{p.heap.peak_time_ns}, p.heap.peak_bytes, quoted(path));
    } else {
      w.event(R"({{"ph":"i","s":"p","pid":{},"ts":{},"name":"heap peak","args":{{"bytes":{},"scope":{}}}}})", pid,
              Micros{p.heap.peak_time_ns}, p.heap.peak_bytes, quoted(path));
    }
  }
  if (cpu.has_frames()) {
    w.raw("\n],\"stackFrames\":{{");
    cpu.write_frames(w);
    w.raw("\n}}}}\n");
  } else {
    w.raw("\n]}}\n");
  }
  w.flush();
}

void ChromeTraceExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& /*options: names are data here*/) const { write_chrome_trace(profile, out); }

}  // namespace nnprof::io
