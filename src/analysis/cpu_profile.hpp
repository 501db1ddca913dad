// What CPU sampling says about a profile, the same in every report: which functions take the
// CPU (self and total), who calls them, which source lines, how each instrumented scope spends
// its samples, and the merged tree of stacks that flame graphs draw. Pure functions of a
// Profile; everything here is empty when !profile.cpu.sampled or no sample was taken.
//
// Frames are grouped into functions by name and module. A frame without a symbol is its own
// function, "module+0x<offset>" (StackFrame::module_offset; the run's address when the offset
// is unknown), or "[unknown]" when not even the module is known (all such frames are one
// function). An inlined frame is a function of its own, called by the frame that
// follows it in the stack, so a hot inlined helper shows under its own name.
//
// Counting: a sample gives its weight to the innermost frame's function as self, and once to
// every distinct function of its stack as total (a recursive function is counted once per
// sample, so total <= samples). Shares are of every sample that passed the filter, including
// samples without a stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analysis/bottleneck.hpp"
#include "analysis/facts.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/sampling_profiler.hpp"

namespace nnprof::analysis {

/// Which samples an analysis counts: all of them by default.
struct CpuFilter {
  std::uint32_t thread = kNone;  ///< only this thread (index in Profile::threads); kNone: every thread
  std::uint32_t scope = 0;       ///< only samples in this call-tree node or below it; 0: everywhere

  bool operator==(const CpuFilter&) const = default;
};

/// Samples and the CPU (or wall) time they stand for.
struct SampleCount {
  std::uint64_t samples = 0;
  std::uint64_t ns = 0;  ///< sum of CpuSample::weight_ns

  bool operator==(const SampleCount&) const = default;
};

/// One function of the CPU profile.
struct CpuFunction {
  std::string name;             ///< demangled name, "libfoo.so+0x1a2b" (module offset), or "[unknown]"
  std::string module;           ///< file name of the module (no directory); empty when unknown
  StringId function = kNone;    ///< Profile string of the name; kNone when unsymbolized
  StringId module_id = kNone;
  std::uint64_t address = 0;    ///< for an unsymbolized function: its address in the profiled process; else 0
  SampleCount self;             ///< samples whose innermost frame is this function
  SampleCount total;            ///< samples with this function anywhere in the stack (once each)
  double self_share = 0.0;      ///< self.samples / samples counted (NaN when none was)
  double total_share = 0.0;

  bool operator==(const CpuFunction&) const = default;
};

/// The function `frame` (an index into Profile::frames) is grouped into, as CpuFunction::name;
/// "[unknown]" for an index out of range.
std::string cpu_frame_function(const Profile& profile, std::uint32_t frame);

/// Every function that appears in a counted sample, most self samples first; equal self by
/// most total, then by name.
std::vector<CpuFunction> cpu_functions(const Profile& profile, const CpuFilter& filter = {});

/// Samples that pass `filter` (with and without a stack).
SampleCount cpu_sample_total(const Profile& profile, const CpuFilter& filter = {});

// ---- call graph ----------------------------------------------------------------------

/// A caller or callee of a function, and how many samples have that call in their stack.
struct CpuEdge {
  std::string function;   ///< the caller's or callee's name (as CpuFunction::name)
  SampleCount weight;     ///< samples in which this call is on the stack (once per sample)
  double share = 0.0;     ///< weight.samples / the function's total samples

  bool operator==(const CpuEdge&) const = default;
};

/// Who calls a function and whom it calls: "who calls the hot function".
struct CpuCallers {
  std::string function;
  SampleCount self;
  SampleCount total;
  SampleCount outermost;          ///< samples in which it is the outermost frame (no caller seen)
  std::vector<CpuEdge> callers;   ///< most samples first; equal by name
  std::vector<CpuEdge> callees;   ///< most samples first; equal by name
};

/// The callers and callees of the function named `function` (as CpuFunction::name). A
/// recursive call of a function by itself is not an edge. Empty lists when it never ran.
CpuCallers cpu_callers(const Profile& profile, const std::string& function, const CpuFilter& filter = {});

// ---- lines ---------------------------------------------------------------------------

/// A source line and the samples whose innermost frame was on it.
struct CpuLine {
  std::string function;  ///< the function the line belongs to (as CpuFunction::name)
  std::string file;      ///< as the debug information names it
  std::uint32_t line = 0;
  SampleCount self;
  double share = 0.0;    ///< of every sample counted

  bool operator==(const CpuLine&) const = default;
};

/// The `n` lines with the most self samples over all functions, most first; equal by file,
/// then line. Innermost frames without file and line are left out.
std::vector<CpuLine> cpu_hot_lines(const Profile& profile, std::size_t n, const CpuFilter& filter = {});

/// The line-level profile of one function: every line of `function` that was the innermost
/// frame of a sample, most self samples first.
std::vector<CpuLine> cpu_function_lines(const Profile& profile, const std::string& function,
                                        const CpuFilter& filter = {});

/// The Python lines of the samples (nnprof::python_line_stats): each sample counts as self for
/// the line of its innermost Python frame, and as total once for every line on its Python stack.
std::vector<PythonLineStats> cpu_python_lines(const Profile& profile, const CpuFilter& filter = {});

// ---- per instrumented scope ----------------------------------------------------------

/// The samples of one call-tree node (the node and everything below it) and where they went.
struct CpuScope {
  std::uint32_t node = 0;        ///< call-tree node; 0 stands for samples outside any scope
  std::string path;              ///< "train_step > forward", or "[outside any scope]"
  SampleCount samples;           ///< in this node or below it (for node 0: outside any scope)
  SampleCount self;              ///< with this node the innermost scope
  double share = 0.0;            ///< samples / every sample counted
  std::vector<CpuFunction> top;  ///< its hottest functions by self samples (shares of `samples`)
};

/// Every call-tree node with samples, most samples first (equal by path), each with its `top_n`
/// hottest functions; samples outside any scope come as node 0 when there are any.
std::vector<CpuScope> cpu_scopes(const Profile& profile, std::size_t top_n, const CpuFilter& filter = {});

/// Samples per scope name, wherever in the tree (as ScopeStats): `samples` counts a sample once
/// if any open scope has the name (nested calls of one name counted once), `self` when the
/// innermost scope has it.
struct CpuScopeName {
  SampleCount samples;
  SampleCount self;

  bool operator==(const CpuScopeName&) const = default;
};

/// Indexed by StringId (Profile::strings.size() entries); zero for names without samples.
std::vector<CpuScopeName> cpu_by_scope_name(const Profile& profile);

// ---- flame tree ----------------------------------------------------------------------

/// A node of the merged tree of stacks: one function called along one path from the root.
struct FlameNode {
  std::uint32_t parent = kNone;         ///< kNone for the root
  std::uint32_t depth = 0;              ///< 0 for the root
  std::string name;                     ///< function (as CpuFunction::name); "all" for the root
  std::string module;                   ///< module file name; empty when unknown
  bool scope = false;                   ///< an instrumented scope (flame_tree's include_scopes), not a function
  std::vector<std::uint32_t> children;  ///< scopes first, then by name, so the layout is the same for every run
  SampleCount total;                    ///< samples whose stack passes through this node
  SampleCount self;                     ///< samples whose stack ends here

  bool operator==(const FlameNode&) const = default;
};

/// Stacks merged root first (outermost frame at depth 1): what flame graphs (root at the
/// bottom) and icicle graphs (root at the top) draw, each node as wide as its total.
/// Samples without a stack are one child of the root, "[no stack]", so that the root's total
/// is every sample counted.
struct FlameTree {
  std::vector<FlameNode> nodes;  ///< [0] is the root; a parent comes before its children
  std::uint32_t max_depth = 0;   ///< deepest node

  bool operator==(const FlameTree&) const = default;
};

/// The flame tree of the samples that pass `filter`; with `include_scopes`, the instrumented
/// scope path of each sample (outermost first, nodes marked `scope`) sits between the root and the
/// outermost frame, so one tree shows scopes and functions together.
FlameTree flame_tree(const Profile& profile, const CpuFilter& filter = {}, bool include_scopes = false);

// ---- summary and findings ------------------------------------------------------------

/// How sampling ran: mode, rate and period, mechanism, unwinder, samples (and the time they
/// stand for), dropped samples, truncated stacks, samples without a stack, threads sampled.
std::vector<Fact> cpu_facts(const Profile& profile);

struct CpuFindingOptions {
  /// CpuHotspot: a function whose self samples exceed this share of every sample ...
  double hotspot_share = 0.40;
  /// ... when at least this many samples were taken (fewer say too little to act on).
  std::uint64_t min_samples = 20;
};

/// One CpuHotspot per function past options.hotspot_share (at most two can be), most first,
/// with the line, caller and kind of code to look at. Empty without CPU samples.
std::vector<Bottleneck> cpu_bottlenecks(const Profile& profile, const CpuFindingOptions& options = {});

/// What reports say when cpu_bottlenecks finds nothing: the threshold that was not passed.
Sentence no_cpu_bottlenecks(const Profile& profile, const CpuFindingOptions& options = {});

}  // namespace nnprof::analysis
