// Collapsed ("folded") stacks: Brendan Gregg's text format of CPU samples, read by
// flamegraph.pl, inferno-flamegraph and speedscope. One line per distinct stack:
//
//     main;train_step;matmul;_mm256_fmadd_ps_[i] 42
//
// frames root-most first, separated by ';', then a space and the count. The grouping of
// samples into stacks (fold_cpu_samples) is shared with the flame graph SVG.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <string>
#include <vector>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// What a folded stack counts per sample.
enum class CpuWeight : std::uint8_t {
  Samples,      ///< 1 per sample (what flamegraph.pl calls "samples")
  Nanoseconds,  ///< CpuSample::weight_ns: CPU (or wall) time the sample stands for
};

/// Which CPU samples to fold, and how.
struct CpuStackOptions {
  std::uint32_t scope = 0;       ///< only samples taken in this call-tree node or below it; 0: all
  std::uint32_t thread = kNone;  ///< only this thread (index in Profile::threads); kNone: all
  bool thread_roots = false;     ///< put a root frame "name (tid N)" per thread under the stacks
  CpuWeight weight = CpuWeight::Samples;
};

enum class FoldedFrameKind : std::uint8_t {
  Function,      ///< a symbolized function
  Inlined,       ///< a function inlined into the frame below it (its caller)
  Unsymbolized,  ///< no symbol: "module+0x<offset>", or "[unknown]" without a module either
  Thread,        ///< the per-thread root frame (CpuStackOptions::thread_roots)
  NoStack,       ///< "[no stack]": a sample taken without a call stack
};

/// One frame of a folded stack, ready to print.
struct FoldedFrame {
  /// The demangled function name, "module+0x1a2b" (StackFrame::module_offset, the address in
  /// the module's ELF address space as addr2line takes it; the run's address when the offset
  /// is unknown), "[unknown]", a thread label or "[no stack]".
  /// Never empty, valid UTF-8, with no ';' (replaced by ':') and no control characters
  /// (replaced by spaces), so it fits the collapsed format unchanged.
  std::string name;
  std::string module;  ///< file name of the module that holds the code; empty when unknown
  FoldedFrameKind kind = FoldedFrameKind::Function;

  bool operator==(const FoldedFrame&) const = default;
};

/// One distinct stack and the samples (or nanoseconds) taken in it.
struct FoldedStack {
  std::vector<FoldedFrame> frames;  ///< root-most first; never empty
  std::uint64_t value = 0;

  bool operator==(const FoldedStack&) const = default;
};

/// The text of `frame` in the collapsed format: its name, with the "_[i]" suffix that
/// flamegraph.pl and inferno read as "inlined" (and colour aqua) on inlined frames.
std::string collapsed_frame_text(const FoldedFrame& frame);

/// Throws nnprof::Error, saying how to record samples, when the profile has none.
void require_cpu_samples(const Profile& profile);

/// The samples that pass `options`, grouped by stack: one entry per distinct collapsed line,
/// in the byte order of those lines. Frames without a symbol, and stack or frame indices
/// that do not resolve, become "[unknown]"-style frames rather than errors. Throws
/// nnprof::Error when the profile has no CPU samples, when `options` names a thread or
/// scope the profile does not have, or when no sample passes the filter.
std::vector<FoldedStack> fold_cpu_samples(const Profile& profile, const CpuStackOptions& options = {});

/// Writes fold_cpu_samples as collapsed stacks: "frame;frame;... value\n" per stack.
void write_collapsed(const Profile& profile, std::ostream& out, const CpuStackOptions& options = {});

/// Reads collapsed stacks: stack (frames root-most first, as written) -> count, counts of
/// repeated stacks added up. Blank lines are skipped and a CR before the line end is
/// ignored. Throws nnprof::Error naming the line number and what is wrong when a line has
/// no count, a count that is not a whole number (or two counts: a differential file), an
/// empty frame, or when a total overflows 64 bits.
std::map<std::vector<std::string>, std::uint64_t> parse_collapsed(std::istream& in);

/// The "collapsed" format (".folded"; ".collapsed" is accepted too): write_collapsed of every
/// sample, counted in samples.
class CollapsedExporter final : public Exporter {
 public:
  CollapsedExporter() noexcept : Exporter(ReportFormat::Collapsed) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
