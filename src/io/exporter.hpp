// Exporters: every output format of a profile is one implementation of this interface
// ("record once, export many"). The registry (exporter_registry.hpp) lists them; the format
// table (report_formats(), io/formats.cpp) names them.
#pragma once

#include <iosfwd>
#include <string_view>

#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof::io {

/// Writes a profile in one format. Implementations are stateless and receive their output
/// stream, so the same code writes to a file, a string in a test or an HTTP response.
class Exporter {
 public:
  explicit Exporter(ReportFormat format) noexcept : format_(format) {}
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;
  virtual ~Exporter() = default;

  [[nodiscard]] ReportFormat format() const noexcept { return format_; }
  /// The format's name as users type it, e.g. "text" (from the format table).
  [[nodiscard]] std::string_view name() const noexcept { return find_format(format_)->name; }
  /// The extension nnprof gives files of this format, with its dot, e.g. ".txt" (from the
  /// format table, which also lists the other extensions that select it).
  [[nodiscard]] std::string_view extension() const noexcept { return find_format(format_)->extension(); }
  /// Writes `profile` to `out`. Throws nnprof::Error if the stream fails.
  void write(const Profile& profile, std::ostream& out, const ReportOptions& options = {}) const {
    do_write(profile, out, options);
  }

 private:
  virtual void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const = 0;
  ReportFormat format_;
};

}  // namespace nnprof::io
