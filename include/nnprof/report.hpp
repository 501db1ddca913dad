// Report: a profile ready to be read by a person.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/system.hpp"

namespace nnprof {

/// Output formats of a report. Auto picks one from the file extension (report_formats()
/// lists each format's extensions: .txt .md .json .html .csv .trace.json .folded .pb.gz .svg
/// and their alternatives). Collapsed, Pprof and Flamegraph export the CPU samples
/// (docs/EXPORTS.md).
enum class ReportFormat : std::uint8_t { Auto, Text, Markdown, Json, Html, Csv, Chrome, Collapsed, Pprof, Flamegraph };

/// The format's name as users type it ("text", "markdown", ..., from report_formats());
/// "auto" for Auto.
NNPROF_API const char* to_string(ReportFormat format) noexcept;

/// The documents nnprof writes. Each format renders some of them (FormatInfo::renders).
enum class Document : std::uint8_t {
  Profile,          ///< the report of one profile (Report)
  Comparison,       ///< two profiles compared (nnprof compare, write_comparison)
  ModelComparison,  ///< the models of one profile compared (nnprof model-compare, write_model_comparison)
};

/// "profile report", "comparison", "model comparison".
NNPROF_API const char* to_string(Document document) noexcept;

/// One row of nnprof's format table. Every name, extension and help line of a format that
/// the library and the CLI show comes from this table, so they cannot disagree.
struct FormatInfo {
  ReportFormat format;
  /// The name as users type it (`--format markdown`); to_string(format) returns it.
  std::string_view name;
  /// Other names accepted for it, e.g. "md" for markdown.
  std::span<const std::string_view> aliases;
  /// The file extensions that select it, with their dot, ".html" then ".htm": the first is
  /// the one nnprof names files with.
  std::span<const std::string_view> extensions;
  /// One line for help texts: what the format is and what reads it.
  std::string_view description;
  /// Which documents it renders: bit `1 << Document`.
  std::uint8_t documents;

  [[nodiscard]] constexpr bool renders(Document document) const noexcept {
    return (documents & (1U << static_cast<unsigned>(document))) != 0;
  }
  /// The extension nnprof names files of this format with.
  [[nodiscard]] constexpr std::string_view extension() const noexcept { return extensions.front(); }
};

/// Every format, in the order help texts list them.
NNPROF_API std::span<const FormatInfo> report_formats() noexcept;
/// The row of `format`; nullptr for Auto.
NNPROF_API const FormatInfo* find_format(ReportFormat format) noexcept;
/// The format named `name` or one of its aliases (ASCII case-insensitive), or nullptr.
NNPROF_API const FormatInfo* find_format(std::string_view name) noexcept;
/// The format, among those that render `document`, whose extension ends `path` (ASCII
/// case-insensitive), or nullptr. The longest extension wins, so that "run.trace.json" is a
/// Chrome trace for a profile, and JSON for a comparison (no Chrome trace of a comparison).
NNPROF_API const FormatInfo* find_format_for_path(std::string_view path,
                                                  Document document = Document::Profile) noexcept;

/// How the human-readable reports (text, Markdown, HTML) present names.
struct ReportOptions {
  /// Tables show each function's full signature (template arguments, parameter lists, clone
  /// suffixes) instead of its readable form ("matmul<…>"). The full signature is always in the
  /// HTML title of the cell and in the JSON report. `nnprof report --full-names`.
  bool full_names = false;
  /// How many rows each ranking and list shows (hot paths, most called, allocators, leak sites,
  /// CPU functions and lines, kernels, critical-path steps, call-tree lines); 0: the defaults (30
  /// hot paths, 15 most called, ...). `nnprof report --rows N`.
  std::size_t rows = 0;
  /// Where a monitored run's energy was used and the data centre's PUE, for its carbon (the
  /// region defaults to NNPROF_CARBON_REGION, else the world average, and the report says so).
  /// `nnprof report --carbon-region FR --pue 1.2`.
  CarbonOptions carbon;
};

/// A snapshot of a profiler, rendered on demand. `std::cout << report` prints the text
/// summary: hot paths, most called, the call tree, memory and the profile's completeness.
class NNPROF_API Report {
 public:
  explicit Report(Profile profile, ReportOptions options = {});
  [[nodiscard]] const Profile& profile() const noexcept { return *profile_; }
  /// The text summary as a string.
  [[nodiscard]] std::string text() const;
  /// Writes the text summary to `out`.
  void write_text(std::ostream& out) const;
  /// Writes the report in `format` (not Auto) to `out`. Throws nnprof::Error on failure.
  void write(std::ostream& out, ReportFormat format) const;
  /// Writes the report to `path` in `format`, or in the format its extension names. The file
  /// appears complete or not at all (written to a temporary file, then renamed). Throws
  /// nnprof::Error with a message that names the file and what to do.
  void export_to(const std::string& path, ReportFormat format = ReportFormat::Auto) const;

 private:
  std::shared_ptr<const Profile> profile_;
  ReportOptions options_;
};

NNPROF_API std::ostream& operator<<(std::ostream& out, const Report& report);

}  // namespace nnprof
