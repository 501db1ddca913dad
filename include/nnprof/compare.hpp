// Comparing two runs: did a change make things faster, slower, or neither?
//
//   nnprof::Comparison c = nnprof::compare(nnprof::Profile::load("before.nnprof"),
//                                          nnprof::Profile::load("after.nnprof"));
//   nnprof::write_comparison(c, std::cout, nnprof::ReportFormat::Text);
//
// Scopes are matched by name, the way every report ranks them (Profile::scopes is one entry
// per name): a scope that moved under another parent between the two runs still matches, and
// a name called from several places is judged over all its calls. A verdict is never a raw
// percentage: each scope's per-call durations are compared with a Mann-Whitney U test, and a
// change counts only when it is both significant and large enough to matter.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof {

/// What a comparison concludes about one scope, or about the whole run.
enum class Verdict : std::uint8_t {
  Stable,      ///< no significant change, or one smaller than CompareOptions::min_change
  Improved,    ///< significantly and relevantly faster in B
  Regressed,   ///< significantly and relevantly slower in B
  Unreliable,  ///< too few calls (or no per-call data) on a side for a test
};

/// "stable", "improved", "regressed", "unreliable".
NNPROF_API const char* to_string(Verdict verdict) noexcept;

/// Which test gave a scope's p-value.
enum class CompareTest : std::uint8_t {
  None,         ///< no test: the verdict is Unreliable
  MannWhitney,  ///< Mann-Whitney U on every call's duration (both profiles kept every span)
  Welch,        ///< Welch's test on every call's mean and standard deviation (spans missing)
};

/// "none", "mann-whitney", "welch".
NNPROF_API const char* to_string(CompareTest test) noexcept;

struct CompareOptions {
  /// Significance level of the two-sided test: p below it is a significant change.
  double alpha = 0.05;
  /// Calls each side needs for a verdict (the exact Mann-Whitney test with 5 and 5 calls can
  /// reach p = 0.008; with 3 and 3 it cannot go below 0.1). Fewer: Unreliable.
  std::uint64_t min_calls = 5;
  /// Relative change of the mean time per call below which a significant shift is Stable:
  /// with a million calls a 0.1% shift is significant but not worth a reader's time.
  double min_change = 0.05;
};

/// One scope's figures in one run.
struct CompareSide {
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;   ///< inclusive time, recursive calls counted once
  std::uint64_t self_ns = 0;
  double mean_ns = 0.0;         ///< per call, over every call
  double stddev_ns = 0.0;
  std::uint64_t median_ns = 0;  ///< exact from the spans when every call kept one; else the histogram's p50 (within 3.2%)
  std::uint64_t spans = 0;      ///< calls kept as individual spans (per-call durations)
};

/// A scope present in both runs.
struct ScopeChange {
  std::string name;
  CompareSide a, b;
  /// Mean time per call in B over that in A: 2.0 is twice as slow, 0.5 twice as fast.
  /// 0 when A's mean is 0 (no ratio exists).
  double ratio = 0.0;
  /// ratio - 1: +0.25 is 25% slower per call.
  double change = 0.0;
  /// Inclusive time in B minus in A (what the rankings of improvements and regressions use).
  std::int64_t total_delta_ns = 0;
  CompareTest test = CompareTest::None;
  double p_value = 1.0;  ///< two-sided; 1 when no test ran
  /// Probability that a call in B takes longer than a call in A (ties count 1/2): the
  /// Mann-Whitney common-language effect size; 0.5 is no tendency. 0.5 unless test is MannWhitney.
  double prob_b_slower = 0.5;
  Verdict verdict = Verdict::Unreliable;
  /// Whether this scope's calls are long enough to decide the run's verdict: a mean per call of
  /// at least 10x the instrumentation cost of one scope and 10x the clock's tick, in both runs.
  /// A shorter scope keeps its own verdict, but what it measures is mostly the profiler.
  bool decides = true;
  /// Why the verdict is Unreliable, what the test had to use instead of every span, or why the
  /// scope does not decide; empty otherwise.
  std::string note;
};

/// A scope present in one run only.
struct ScopeOnly {
  std::string name;
  std::uint64_t calls = 0;
  std::uint64_t total_ns = 0;
};

/// One run's totals.
struct RunTotals {
  std::string command_line;
  std::string hostname;
  std::uint64_t duration_ns = 0;      ///< session wall time (Metadata::duration_ns)
  std::uint64_t instrumented_ns = 0;  ///< Profile::instrumented_ns: top-level scope time summed over threads
  std::uint64_t calls = 0;            ///< closed scopes recorded
  std::uint64_t spans = 0;            ///< of those, kept as spans
  bool spans_enabled = true;          ///< false: a statistics-only session (no per-call durations)
  /// Heap tracking (nnprof record --memory, nnprof::MemoryTracking) ran.
  bool heap_tracked = false;
  std::uint64_t heap_alloc_bytes = 0;
  std::uint64_t heap_alloc_count = 0;
  std::uint64_t heap_peak_bytes = 0;
  /// The program reported allocations itself (record_alloc counters).
  bool has_memory_counters = false;
  std::uint64_t counter_alloc_bytes = 0;
  std::uint64_t counter_alloc_count = 0;
  std::uint64_t counter_peak_bytes = 0;
};

/// Energy per step of two runs recorded with the system monitor (docs/SYSTEM.md): the first
/// scope of A (longest) that reported work items and has energy in both runs, each call's
/// energy judged with the test and thresholds the scopes' time uses.
struct EnergyPerStep {
  std::string step;
  double a_joules = 0.0, b_joules = 0.0;                    ///< per call, the mean over every call
  double a_joules_per_item = 0.0, b_joules_per_item = 0.0;  ///< 0 without items
  bool a_measured = true, b_measured = true;                ///< false: includes modelled energy
  std::uint64_t a_calls = 0, b_calls = 0;                   ///< calls whose own energy is known (spans kept)
  double ratio = 0.0;   ///< b_joules / a_joules; 0 when A's is 0
  double change = 0.0;  ///< ratio - 1: +0.10 is 10% more energy per step
  CompareTest test = CompareTest::None;  ///< MannWhitney on every call's energy, or None
  double p_value = 1.0;
  double prob_b_more = 0.5;  ///< probability that a call in B used more energy than one in A
  Verdict verdict = Verdict::Unreliable;
  std::string note;  ///< why there is no verdict, or what differs between the runs' methods
};

/// Everything `compare` found. Scopes are in order of the absolute change of their total
/// time, largest first; equal changes by name.
struct NNPROF_API Comparison {
  CompareOptions options;
  RunTotals a, b;
  /// What "runtime" means below: "session wall time" when both profiles have one, else
  /// "instrumented time" (for profiles built by hand, or sessions snapshotted at once).
  std::string runtime_basis;
  std::uint64_t runtime_a_ns = 0;
  std::uint64_t runtime_b_ns = 0;
  /// runtime A / runtime B: 1.25 means B finished in 80% of A's time; 0 when B's runtime is 0.
  double speedup = 0.0;

  std::vector<ScopeChange> scopes;  ///< in both runs
  std::vector<ScopeOnly> removed;   ///< only in A, longest first
  std::vector<ScopeOnly> added;     ///< only in B, longest first

  std::size_t improved = 0, regressed = 0, stable = 0, unreliable = 0;
  /// Geometric mean of `ratio` over the scopes with a verdict other than Unreliable (the
  /// summary row of Google Benchmark's compare.py): below 1 is faster overall. 0 when none.
  double geomean_ratio = 0.0;
  std::size_t geomean_scopes = 0;
  /// runtime B / runtime A - 1: +0.15 is 15% slower as a whole; 0 when A's runtime is 0.
  double runtime_change = 0.0;
  /// The part of that change the profiled code shows significantly: the change of the time
  /// spent inside the scopes that decide (ScopeChange::decides) and were judged Improved or
  /// Regressed (each call counted once, at its outermost such scope), over runtime A. A whole run is one measurement, so its change is significant
  /// only where scopes with a significant change account for it.
  double significant_change = 0.0;
  /// The run as a whole: Regressed (Improved) when the runtime grew (shrank) by at least
  /// options.min_change and the significant changes of deciding scopes account for at least
  /// that much in the same direction; Stable otherwise (a change that is not significant,
  /// however large, says so in `notes`); Unreliable when no deciding scope had a verdict.
  /// Per-scope verdicts stand beside it: a CI gate on single scopes uses worst_regression().
  Verdict verdict = Verdict::Unreliable;
  /// Caveats a reader must know: missing spans, dropped spans, different hosts, ...
  std::vector<std::string> notes;
  /// When both runs were monitored and share a step with energy: its energy per step.
  std::optional<EnergyPerStep> energy_per_step;

  /// Scopes judged Improved, largest saving of total time first, at most `n`.
  [[nodiscard]] std::vector<const ScopeChange*> top_improvements(std::size_t n = 10) const;
  /// Scopes judged Regressed, largest loss of total time first, at most `n`.
  [[nodiscard]] std::vector<const ScopeChange*> top_regressions(std::size_t n = 10) const;
  /// The Regressed scope that decides (ScopeChange::decides) with the largest `change`, or
  /// nullptr: what a CI threshold checks.
  [[nodiscard]] const ScopeChange* worst_regression() const;
};

/// A run read for a comparison (`nnprof compare`, `nnprof model-compare`).
struct LoadedRun {
  Profile profile;
  /// Rebuilt from a JSON or Markdown report nnprof wrote rather than loaded from a .nnprof
  /// file: it has each scope's count, totals, mean, standard deviation and percentiles, the
  /// call tree, metadata, annotations and heap totals, but no spans, samples or events.
  bool from_report = false;
  /// What the report lacked beyond spans (an older report's call tree without FLOPs, say) and
  /// what follows, one sentence each; empty for a .nnprof file. Callers add them to the
  /// comparison's notes (compare_report_note says what the missing spans mean for compare).
  std::vector<std::string> notes;
};

/// Reads `path` for a comparison, by its content: a .nnprof file (Profile::load); a JSON
/// report (`nnprof report -o r.json`); a Markdown report (`-o r.md`, nnprof demo's report.md)
/// from the data nnprof embeds at its end. Throws nnprof::Error naming the file when it is
/// none of these, or its embedded data is cut short or corrupt.
NNPROF_API LoadedRun load_run(const std::string& path);

/// The note a comparison of `run` (read from `path`) carries when it came from a report: its
/// scopes are tested by Welch's test on the means, not by the rank test. Empty otherwise.
NNPROF_API std::string compare_report_note(const LoadedRun& run, const std::string& path);

/// Compares run `a` (the baseline) with run `b`. Pure: reads both profiles, changes nothing.
NNPROF_API Comparison compare(const Profile& a, const Profile& b, const CompareOptions& options = {});

/// Writes `comparison` to `out` as Text, Markdown, Json (docs/JSON_SCHEMA.md,
/// "nnprof-comparison") or Html (one self-contained page). Other formats, Auto included,
/// throw nnprof::Error.
NNPROF_API void write_comparison(const Comparison& comparison, std::ostream& out, ReportFormat format);

/// Writes `comparison` to `path` in `format`, or in the one its extension names (.txt, .md,
/// .json, .html). The file appears complete or not at all. Throws nnprof::Error.
NNPROF_API void export_comparison(const Comparison& comparison, const std::string& path,
                                  ReportFormat format = ReportFormat::Auto);

}  // namespace nnprof
