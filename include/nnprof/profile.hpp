// Profile: the one data model that every analysis, report and exporter reads.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/clock.hpp"
#include "nnprof/config.hpp"
#include "nnprof/continuous_profile.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/gpu_profile.hpp"
#include "nnprof/ids.hpp"
#include "nnprof/metric_series.hpp"
#include "nnprof/system_profile.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof {


/// Where and when the profile was taken.
struct Metadata {
  std::string nnprof_version;
  std::string hostname;
  std::string os;            ///< kernel name and release, e.g. "Linux 6.1.0"
  std::string cpu_model;
  std::uint32_t logical_cpus = 0;
  std::string compiler;      ///< compiler that built libnnprof
  std::string command_line;  ///< of the profiled process
  std::int64_t pid = 0;
  std::uint64_t duration_ns = 0;  ///< from the session's start to the snapshot
  ClockCalibration clock;

  bool operator==(const Metadata&) const = default;
};

struct ThreadInfo {
  std::uint32_t id = 0;     ///< index in Profile::threads
  std::int64_t os_tid = 0;  ///< kernel thread id
  std::string name;
  bool exited = false;      ///< the thread had ended when the profile was taken
  std::uint64_t scopes_recorded = 0;  ///< closed scopes on this thread
  std::uint64_t top_level_ns = 0;     ///< time in this thread's top-level scopes
  std::uint32_t rank = 0;             ///< index into Profile::ranks (0 unless the profile merges ranks)

  bool operator==(const ThreadInfo&) const = default;
};

/// Streaming statistics of one set of durations, in nanoseconds. Percentiles come from a
/// log-linear histogram whose buckets are at most 1/16 of their value wide (error <= 3.2%).
struct DurationStats {
  std::uint64_t count = 0;
  std::uint64_t sum_ns = 0;  ///< sum of all durations (nested recursive calls counted again)
  std::uint64_t min_ns = 0;
  std::uint64_t max_ns = 0;
  double mean_ns = 0.0;
  double stddev_ns = 0.0;  ///< sample standard deviation (n - 1)
  std::uint64_t p50_ns = 0;
  std::uint64_t p95_ns = 0;
  std::uint64_t p99_ns = 0;

  bool operator==(const DurationStats&) const = default;
};

/// Bytes and counts attributed to a scope while it was the innermost open one.
struct MemoryAttribution {
  std::uint64_t alloc_bytes = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t free_count = 0;

  bool operator==(const MemoryAttribution&) const = default;
};

/// Heap blocks (malloc, new) attributed to a scope by automatic heap tracking
/// (nnprof::MemoryTracking, `nnprof record --memory`). Kept apart from MemoryAttribution, which
/// counts what the program reports itself, so that one allocation is never counted twice.
struct HeapAttribution {
  std::uint64_t alloc_bytes = 0;      ///< requested bytes allocated while this was the innermost scope
  std::uint64_t alloc_count = 0;
  std::uint64_t free_bytes = 0;       ///< bytes freed while this was the innermost scope
  std::uint64_t free_count = 0;
  std::uint64_t retained_bytes = 0;   ///< allocated here and still live when the profile was taken
  std::uint64_t retained_blocks = 0;
  std::uint64_t peak_live_bytes = 0;  ///< the most bytes allocated here that were live at one time

  bool operator==(const HeapAttribution&) const = default;
};

/// A node of the call tree merged over all threads (node 0 is the root; it has no name).
struct CallTreeNode {
  std::uint32_t id = 0;
  std::uint32_t parent = kNone;
  StringId name = kNone;
  std::uint32_t depth = 0;
  std::vector<std::uint32_t> children;
  DurationStats time;
  std::uint64_t self_ns = 0;  ///< time in this node minus time in its children
  std::uint32_t thread_count = 0;  ///< threads on which this path ran
  MemoryAttribution memory;
  HeapAttribution heap;
  double flops = 0.0;       ///< FLOPs declared (add_flops) while this node was the innermost scope
  std::uint64_t bytes = 0;  ///< bytes moved declared with them

  bool operator==(const CallTreeNode&) const = default;
};

/// Statistics of every scope with one name, wherever in the tree and on whichever thread.
struct ScopeStats {
  StringId name = kNone;
  std::uint64_t total_ns = 0;  ///< inclusive time; nested calls of the same name counted once
  std::uint64_t self_ns = 0;
  DurationStats time;          ///< per-call statistics over every call
  std::uint32_t thread_count = 0;
  MemoryAttribution memory;
  HeapAttribution heap;
  std::uint64_t items = 0;     ///< work items the program reported for this name (add_items)
  /// FLOPs and bytes moved declared (add_flops, NNPROF_SCOPE_FLOPS) in this scope or any scope
  /// inside it: the work its inclusive time paid for (nested calls of the same name counted once).
  double flops = 0.0;
  std::uint64_t bytes = 0;

  /// Items processed per second of inclusive time, or 0 when no items were reported.
  [[nodiscard]] double items_per_second() const noexcept {
    return total_ns == 0 ? 0.0 : static_cast<double>(items) * 1e9 / static_cast<double>(total_ns);
  }
  /// FLOPs per second of inclusive time (divide by 1e9 for GFLOP/s); 0 without FLOPs.
  [[nodiscard]] double flops_per_second() const noexcept {
    return total_ns == 0 ? 0.0 : flops * 1e9 / static_cast<double>(total_ns);
  }
  [[nodiscard]] double gflops_per_second() const noexcept { return flops_per_second() / 1e9; }
  /// Bytes moved per second of inclusive time; 0 without bytes.
  [[nodiscard]] double bytes_per_second() const noexcept {
    return total_ns == 0 ? 0.0 : static_cast<double>(bytes) * 1e9 / static_cast<double>(total_ns);
  }
  [[nodiscard]] double gbytes_per_second() const noexcept { return bytes_per_second() / 1e9; }
  /// Arithmetic intensity, FLOPs per byte moved; 0 when no bytes were declared.
  [[nodiscard]] double arithmetic_intensity() const noexcept {
    return bytes == 0 ? 0.0 : flops / static_cast<double>(bytes);
  }

  bool operator==(const ScopeStats&) const = default;
};

/// One recorded scope execution. Times are nanoseconds since the session's start.
struct Span {
  std::uint32_t thread = 0;
  StringId name = kNone;
  std::uint32_t node = 0;   ///< CallTreeNode id
  std::uint32_t depth = 0;  ///< 1 for a top-level scope
  std::uint64_t start_ns = 0;
  std::uint64_t end_ns = 0;

  bool operator==(const Span&) const = default;
};

/// A key/value argument the program attached to one span (ProfileGuard::arg, Profiler::arg):
/// an input's shape, a batch size, a file name. The Chrome trace shows it in the slice's
/// "args"; the .nnprof file keeps it in the `args` table.
struct SpanArg {
  enum class Type : std::uint8_t { String, Int, Real };
  std::uint32_t span = 0;  ///< index into Profile::spans
  std::string key;
  Type type = Type::String;
  std::string string_value;   ///< Type::String
  std::int64_t int_value = 0;  ///< Type::Int
  double real_value = 0.0;     ///< Type::Real

  bool operator==(const SpanArg&) const = default;
};

/// A memory counter fed by record_alloc/record_free under one name.
struct MemoryCounter {
  StringId name = kNone;
  std::int64_t current_bytes = 0;
  std::uint64_t peak_bytes = 0;
  std::uint64_t alloc_bytes = 0;
  std::uint64_t freed_bytes = 0;
  std::uint64_t alloc_count = 0;
  std::uint64_t free_count = 0;
  std::uint64_t largest_alloc_bytes = 0;  ///< the largest single record_alloc

  bool operator==(const MemoryCounter&) const = default;
};

/// One record_alloc/record_free, for the memory timeline.
struct MemoryEvent {
  std::uint64_t time_ns = 0;
  std::uint32_t thread = 0;
  std::uint32_t counter = 0;  ///< index in Profile::memory_counters
  std::int64_t delta_bytes = 0;

  bool operator==(const MemoryEvent&) const = default;
};

struct MemorySummary {
  std::int64_t current_bytes = 0;   ///< sum over counters
  std::uint64_t peak_bytes = 0;     ///< highest sum over counters
  std::uint64_t peak_time_ns = 0;   ///< when it was reached

  bool operator==(const MemorySummary&) const = default;
};

/// One symbolized code address of the profiled process. Where the compiler inlined
/// functions, one address gives several frames: the inlined ones (innermost first, `inlined`
/// set) followed by the function they were inlined into, all with the same address.
struct StackFrame {
  std::uint64_t address = 0;   ///< as it was in the profiled process (differs per run: ASLR)
  StringId function = kNone;   ///< demangled name; kNone when no symbol covers the address
  StringId file = kNone;       ///< source file from DWARF line tables; kNone without debug info
  std::uint32_t line = 0;
  StringId module = kNone;     ///< executable or shared object that holds the address
  std::uint64_t module_offset = 0;  ///< the address in the module's own ELF address space (for addr2line, pprof)
  bool inlined = false;        ///< inlined into the next frame of the stack (which has the same address)

  bool operator==(const StackFrame&) const = default;
};

/// Whether `frame` is a frame of Python code (CPU samples of a CPython 3.11 process) rather
/// than machine code: its address carries 0x7EC0 in the top 16 bits, which no code address
/// has; its function is "qualname (file.py:first line)", its file the .py file, its line the
/// line that was running.
constexpr bool is_python_frame(const StackFrame& frame) noexcept { return (frame.address >> 48) == 0x7EC0; }

/// A call stack, innermost frame first, as indices into Profile::frames.
struct CallStack {
  std::vector<std::uint32_t> frames;

  bool operator==(const CallStack&) const = default;
};

/// One sample of the CPU sampling profiler (nnprof::CpuProfiler, `nnprof record --sample-hz`):
/// where a thread was when the sampler interrupted it.
struct CpuSample {
  std::uint64_t time_ns = 0;     ///< since the session's start
  std::uint32_t thread = 0;      ///< index in Profile::threads
  std::uint32_t stack = kNone;   ///< Profile::stacks, innermost first, inlined frames expanded; kNone: no stack
  std::uint32_t node = 0;        ///< innermost open instrumented scope (call-tree node); 0: outside any scope
  std::uint64_t weight_ns = 0;   ///< CPU (or wall) time this sample stands for: the sampling period

  bool operator==(const CpuSample&) const = default;
};

/// How CPU sampling ran, and how complete its samples are.
struct CpuProfileSummary {
  bool sampled = false;              ///< sampling ran; everything below is meaningful only then
  std::string mode;                  ///< "cpu" (CPU time of each thread) or "wall" (elapsed time)
  std::string mechanism;             ///< "perf_event", "thread-cpu-timer" or "wall-timer"
  std::string unwinder;              ///< "libunwind", "frame-pointer" or "none" (call graph off)
  double requested_hz = 0.0;         ///< samples per second of CPU (wall) time per thread asked for
  std::uint64_t period_ns = 0;       ///< CPU (wall) time between two samples of one thread
  std::uint64_t samples = 0;         ///< samples taken (Profile::cpu_samples holds them all)
  std::uint64_t samples_dropped = 0; ///< lost because the sample buffer was full
  std::uint64_t truncated_stacks = 0;  ///< stacks deeper than the depth limit, cut at their outer end
  std::uint32_t threads_sampled = 0; ///< threads that had a sampling timer at some point

  bool operator==(const CpuProfileSummary&) const = default;
};

/// What a flow stands for (nnprof/flow.hpp).
enum class FlowKind : std::uint8_t {
  Handoff,     ///< flow_begin -> flow_end: work handed over starts on the receiving thread
  Completion,  ///< flow_done -> flow_wait_end: the waiting thread goes on once the work is complete
};

/// One end of a flow: where and when a thread marked it.
struct FlowEndpoint {
  std::uint32_t thread = 0;     ///< index in Profile::threads
  std::uint64_t time_ns = 0;    ///< since the session's start
  std::uint32_t node = 0;       ///< innermost open scope then (call-tree node; 0: outside any scope)
  std::uint32_t span = kNone;   ///< innermost span open then (Profile::spans); kNone when not kept

  bool operator==(const FlowEndpoint&) const = default;
};

/// A dependency between threads: `in` could not happen before `out`.
struct Flow {
  std::uint64_t id = 0;  ///< the FlowId the program used
  FlowKind kind = FlowKind::Handoff;
  FlowEndpoint out;      ///< flow_begin (Handoff) or flow_done (Completion)
  FlowEndpoint in;       ///< flow_end (Handoff) or flow_wait_end (Completion)
  /// When the receiving thread began waiting (flow_wait_begin, FlowWait); kNoWaitMarked when
  /// it did not say.
  std::uint64_t wait_begin_ns = kNoWaitMarked;
  static constexpr std::uint64_t kNoWaitMarked = ~std::uint64_t{0};

  bool operator==(const Flow&) const = default;
};

/// Heap in use and process memory at one moment of the memory timeline.
struct HeapSample {
  std::uint64_t time_ns = 0;
  std::uint64_t heap_bytes = 0;      ///< live bytes of tracked heap blocks
  std::uint64_t rss_bytes = 0;       ///< resident set size (VmRSS)
  std::uint64_t rss_peak_bytes = 0;  ///< highest RSS so far (VmHWM)

  bool operator==(const HeapSample&) const = default;
};

/// Heap blocks still allocated when the profile was taken, grouped by where they were allocated.
struct LeakSite {
  std::uint32_t node = 0;        ///< call-tree node that was the innermost scope; 0: outside any scope
  std::uint32_t caller = kNone;  ///< frame that called malloc/new (index into Profile::frames)
  std::uint32_t stack = kNone;   ///< a sampled full stack of one of the blocks (Profile::stacks), if any
  bool reachable = false;        ///< still referenced from global data or a thread's stack
  std::uint64_t blocks = 0;
  std::uint64_t bytes = 0;

  bool operator==(const LeakSite&) const = default;
};

/// What automatic heap tracking saw over the whole session.
struct HeapSummary {
  bool tracked = false;               ///< heap tracking ran; everything below is meaningful only then
  std::string source;                 ///< "in-process" (nnprof::MemoryTracking) or "preload" (nnprof record)
  std::uint64_t alloc_bytes = 0;      ///< requested bytes of every tracked allocation
  std::uint64_t alloc_count = 0;
  std::uint64_t free_bytes = 0;
  std::uint64_t free_count = 0;
  std::uint64_t current_bytes = 0;    ///< live when the profile was taken
  std::uint64_t current_blocks = 0;
  std::uint64_t peak_bytes = 0;       ///< highest heap in use
  std::uint64_t peak_time_ns = 0;
  std::uint32_t peak_thread = kNone;  ///< thread whose allocation reached the peak
  std::uint32_t peak_node = 0;        ///< its innermost scope then (call-tree node; 0: none)
  std::uint64_t peak_resolution_bytes = 0;  ///< the peak is exact to within this many bytes
  std::uint64_t untracked_frees = 0;  ///< frees of blocks allocated before tracking started
  std::uint64_t untracked_allocs = 0; ///< allocations the live table could not hold
  std::uint64_t leaked_bytes = 0;     ///< live and unreachable: nothing points to them any more
  std::uint64_t leaked_blocks = 0;
  std::uint64_t reachable_bytes = 0;  ///< live and still referenced (globals, thread stacks)
  std::uint64_t reachable_blocks = 0;
  bool reachability_checked = false;  ///< false: leaked/reachable were not computed
  std::uint64_t stack_sample_bytes = 0;  ///< mean bytes between allocations with a full stack; 0: none
  std::uint64_t sample_interval_ns = 0;  ///< period of the memory timeline
  std::uint64_t rss_initial_bytes = 0;
  std::uint64_t rss_peak_bytes = 0;   ///< VmHWM: the highest RSS of the process's life
  std::uint64_t rss_final_bytes = 0;
  std::uint64_t largest_alloc_bytes = 0;  ///< the largest single block requested (malloc size, new size)

  bool operator==(const HeapSummary&) const = default;
};

enum class DiagnosticKind : std::uint8_t {
  SpansDropped,        ///< memory cap reached (keep-first) or buffers exhausted
  SpansOverwritten,    ///< flight recorder replaced the oldest spans
  EventsDropped,       ///< memory events lost to the cap
  StopWithoutStart,    ///< stop(name) with no open scope of that name on this thread
  StopOnOtherThread,   ///< stop(name) on a thread other than the one that started it
  ImplicitlyClosed,    ///< a scope closed because an enclosing scope stopped first
  UnclosedScope,       ///< still open when the profile was taken
  TooDeep,             ///< nesting beyond the supported depth was not recorded
  CallTreeFull,        ///< a thread's call tree reached its node limit
  NegativeMemory,      ///< record_free of more bytes than were recorded as allocated
  HeapTracking,        ///< heap tracking could not see everything (foreign allocator, fork, full table)
  CpuSampling,         ///< CPU sampling could not see everything (rate capped, buffer full, no unwinder)
  InstrumentationOverhead,
  Roofline,            ///< the machine's peaks could not be read, so no scope is placed on the roofline
  FlowsDropped,        ///< flow records lost to the memory cap or overwritten by the flight recorder
  FlowUnmatched,       ///< a flow_end/flow_wait_end without its flow_begin/flow_done, or the reverse
  MetricsIncomplete,   ///< metric points not kept, or metric calls ignored (wrong kind, non-finite value, too many names)
  GpuTracing,          ///< GPU tracing could not see everything (records dropped, clocks mapped, launches unmatched)
  SpanArgsDropped,     ///< span arguments past the per-thread limit, or whose span was not kept
  Distributed,         ///< the launcher's rank variables were unreadable or disagreed, or the clock could not be aligned to rank 0's
};

enum class Severity : std::uint8_t { Info, Warning, Error };

struct Diagnostic {
  DiagnosticKind kind = DiagnosticKind::SpansDropped;
  Severity severity = Severity::Warning;
  std::uint32_t thread = kNone;  ///< kNone when not tied to a thread
  StringId name = kNone;         ///< scope or counter concerned, if any
  std::uint64_t count = 0;
  std::string message;           ///< complete sentence a user can act on

  bool operator==(const Diagnostic&) const = default;
};

/// How complete the profile is and what recording it cost.
struct Completeness {
  std::uint64_t scopes_recorded = 0;   ///< closed scopes counted in the statistics (always complete)
  std::uint64_t spans_kept = 0;        ///< of those, kept as individual spans
  std::uint64_t spans_dropped = 0;
  std::uint64_t spans_overwritten = 0;
  std::uint64_t events_dropped = 0;
  bool spans_enabled = true;           ///< false: statistics-only session
  std::string buffer_policy;           ///< "keep-first" or "flight-recorder"
  std::uint64_t memory_cap_bytes = 0;
  std::uint64_t hot_path_allocations = 0;  ///< 64 KiB buffers a recording thread allocated because the
                                           ///< background drainer fell behind (each adds a page-fault stall)
  double overhead_per_scope_ns = 0.0;  ///< cost of one empty scope, measured at session start
  std::uint64_t overhead_total_ns = 0; ///< overhead_per_scope_ns x scopes_recorded

  bool operator==(const Completeness&) const = default;
};

class NNPROF_API Profile {
 public:
  Metadata meta;
  std::vector<std::string> strings;
  std::vector<ThreadInfo> threads;
  std::vector<CallTreeNode> call_tree;  ///< [0] is the root
  std::vector<ScopeStats> scopes;       ///< one per name, sorted by total time, longest first
  std::vector<Span> spans;              ///< sorted by thread, then start
  std::vector<SpanArg> span_args;       ///< sorted by span, then in the order attached
  std::vector<MemoryCounter> memory_counters;
  std::vector<MemoryEvent> memory_events;  ///< sorted by time
  MemorySummary memory;
  HeapSummary heap;
  std::vector<HeapSample> heap_samples;  ///< the memory timeline, sorted by time
  std::vector<LeakSite> leaks;           ///< live blocks at the end, largest first
  std::vector<StackFrame> frames;        ///< symbolized addresses, shared by every stack
  std::vector<CallStack> stacks;
  CpuProfileSummary cpu;
  std::vector<CpuSample> cpu_samples;    ///< sorted by time
  std::vector<Flow> flows;               ///< dependencies between threads (nnprof/flow.hpp), by `in` time
  Completeness completeness;
  std::vector<Diagnostic> diagnostics;
  std::vector<MetricSeries> metrics;     ///< counters, gauges and histograms by name, sorted by name
  /// Peaks of the machine the profile was recorded on, for the roofline: read from the
  /// `nnprof machine` cache when the profile was taken (measured_unix 0: not known).
  MachinePeaks machine;
  /// What the program said about the run (Profiler::annotate): git commit, batch size, the
  /// models it ran (nnprof/model_info.hpp). Keys are non-empty printable ASCII.
  std::map<std::string, std::string> annotations;
  /// What CUPTI traced on NVIDIA GPUs (nnprof/gpu.hpp); gpu.summary.traced is false without it.
  GpuProfile gpu;
  /// What the system monitor sampled (nnprof/system.hpp): counter tracks of the process, the
  /// machine, its cgroup and GPUs, and energy per domain; system.monitored is false without one.
  SystemProfile system;
  /// The rank of a distributed job this profile was recorded in (nnprof/distributed.hpp): empty
  /// for a process that is not a rank, one entry for a rank, one per rank for a merged profile.
  std::vector<RankInfo> ranks;
  /// Trends and anomalies over the windows of a continuous run (nnprof/continuous_profile.hpp).
  ContinuousProfile continuous;

  [[nodiscard]] const std::string& str(StringId id) const;
  /// The statistics of scopes named `name`, or nullptr.
  [[nodiscard]] const ScopeStats* find_scope(std::string_view name) const;
  /// Sum of top-level scope time over all threads: the denominator of report percentages.
  [[nodiscard]] std::uint64_t instrumented_ns() const;
  /// Path of names from the root to `node`, joined by " > ".
  [[nodiscard]] std::string node_path(std::uint32_t node) const;
  [[nodiscard]] bool empty() const {
    return scopes.empty() && memory_counters.empty() && spans.empty() && !heap.tracked && cpu_samples.empty() &&
           metrics.empty() && !gpu.summary.traced && !system.monitored;
  }

  /// Writes the profile to `path` as a .nnprof file: a SQLite database whose schema is in
  /// docs/FORMAT.md. A `path` ending in a report format's extension (".json", ".html", ".md",
  /// ".txt", ".csv", ".trace.json", ".folded", ".pb.gz", ".svg") gets that report instead, as
  /// Report::export_to writes it: only a .nnprof file loads back. The file appears complete
  /// or not at all. Throws nnprof::Error.
  void save(const std::string& path) const;
  /// Reads a .nnprof file written by this or an older nnprof; every field round-trips
  /// exactly. Throws nnprof::Error saying which file, what is wrong and what to do.
  [[nodiscard]] static Profile load(const std::string& path);

  bool operator==(const Profile&) const = default;
};

/// The result of an SQL query over a .nnprof file, as text.
struct QueryResult {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

/// How long a query may run by default, in seconds.
inline constexpr double kDefaultQueryTimeoutSeconds = 30.0;

/// Runs one SQL statement against the .nnprof file at `path`, read-only: only reading is
/// authorized (SELECT, WITH, table-info pragmas; no ATTACH, VACUUM, writes or schema changes),
/// more than one statement is refused, and it is stopped after `timeout_seconds` (0: no
/// limit) or when its result passes 256 MiB. Throws nnprof::Error saying why.
NNPROF_API QueryResult query_profile(const std::string& path, const std::string& sql,
                                     double timeout_seconds = kDefaultQueryTimeoutSeconds);
/// Writes a query result as an aligned text table.
NNPROF_API void write_query_result(const QueryResult& result, std::ostream& out);

NNPROF_API const char* to_string(DiagnosticKind kind) noexcept;
NNPROF_API const char* to_string(Severity severity) noexcept;

}  // namespace nnprof
