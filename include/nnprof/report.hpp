// Report: a profile ready to be read by a person.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

/// Output formats of a report. Auto picks one from the file extension (.txt .md .json .html
/// .csv; the Chrome trace has no unambiguous extension: ask for it by name).
/// Collapsed, Pprof and Flamegraph export the CPU samples (docs/EXPORTS.md).
enum class ReportFormat : std::uint8_t { Auto, Text, Markdown, Json, Html, Csv, Chrome, Collapsed, Pprof, Flamegraph };

/// "text", "markdown", "json", "html", "csv", "chrome", "collapsed", "pprof", "flamegraph"
/// ("auto" for Auto).
NNPROF_API const char* to_string(ReportFormat format) noexcept;

/// A snapshot of a profiler, rendered on demand. `std::cout << report` prints the text
/// summary: hot paths, most called, the call tree, memory and the profile's completeness.
class NNPROF_API Report {
 public:
  explicit Report(Profile profile);
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
};

NNPROF_API std::ostream& operator<<(std::ostream& out, const Report& report);

}  // namespace nnprof
