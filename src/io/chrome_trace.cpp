#include "io/chrome_trace.hpp"

#include <cstdint>
#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "analysis/cpu_profile.hpp"
#include "io/progress.hpp"
#include "nnprof/error.hpp"

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

void write_chrome_trace(const Profile& p, std::ostream& out) {
  std::vector<std::string> names(p.strings.size());
  for (std::size_t i = 0; i < p.strings.size(); ++i) names[i] = quoted(p.strings[i]);
  const std::string unknown = quoted("[unknown]");
  auto name_of = [&](StringId id) -> const std::string& { return id < names.size() ? names[id] : unknown; };
  const std::int64_t pid = p.meta.pid > 0 ? p.meta.pid : 1;
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
  if (p.cpu.sampled) {
    other["cpu_sampling"] = {{"mode", p.cpu.mode},           {"mechanism", p.cpu.mechanism},
                             {"unwinder", p.cpu.unwinder},   {"period_ns", p.cpu.period_ns},
                             {"samples", p.cpu.samples},     {"samples_dropped", p.cpu.samples_dropped}};
  }

  TraceWriter w(out);
  w.raw("{{\"displayTimeUnit\":\"ns\",\"otherData\":{},\"traceEvents\":[",
        other.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
  const std::string process = p.meta.command_line.empty() ? "nnprof" : "nnprof: " + p.meta.command_line;
  w.event(R"({{"ph":"M","pid":{},"tid":0,"name":"process_name","args":{{"name":{}}}}})", pid, quoted(process));
  for (const ThreadInfo& t : p.threads) {
    const std::string label = t.name.empty() ? fmt::format("thread {}", t.os_tid) : t.name;
    w.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_name","args":{{"name":{}}}}})", pid, tid_of(t.id),
            quoted(label));
    w.event(R"({{"ph":"M","pid":{},"tid":{},"name":"thread_sort_index","args":{{"sort_index":{}}}}})", pid,
            tid_of(t.id), t.id);
  }

  Progress progress("exporting spans", p.spans.size());
  for (const Span& s : p.spans) {
    w.event(R"({{"ph":"X","pid":{},"tid":{},"ts":{},"dur":{},"name":{},"cat":"scope"}})", pid, tid_of(s.thread),
            Micros{s.start_ns}, Micros{s.end_ns - s.start_ns}, name_of(s.name));
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
    w.event(R"({{"ph":"s","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"flow"}})", i + 1, pid,
            tid_of(f.out.thread), Micros{f.out.time_ns}, name);
    w.event(R"({{"ph":"f","bp":"e","id":{},"pid":{},"tid":{},"ts":{},"name":"{}","cat":"flow"}})", i + 1, pid,
            tid_of(f.in.thread), Micros{f.in.time_ns}, name);
  }

  CpuSampleWriter cpu(p);
  for (const CpuSample& sample : p.cpu_samples) {
    const CpuSampleWriter::StackText& stack = cpu.stack(sample.stack);
    if (stack.sf != 0) {
      w.event(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":"cpu_sample","sf":"{}","args":{{"stack":{},"scope":{},"weight_ns":{}}}}})",
              pid, tid_of(sample.thread), Micros{sample.time_ns}, stack.leaf, stack.sf, stack.stack,
              cpu.scope(sample.node), sample.weight_ns);
    } else {
      w.event(R"({{"ph":"i","s":"t","pid":{},"tid":{},"ts":{},"name":{},"cat":"cpu_sample","args":{{"stack":{},"scope":{},"weight_ns":{}}}}})",
              pid, tid_of(sample.thread), Micros{sample.time_ns}, stack.leaf, stack.stack, cpu.scope(sample.node),
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

void ChromeTraceExporter::write(const Profile& profile, std::ostream& out) const { write_chrome_trace(profile, out); }

}  // namespace nnprof::io
