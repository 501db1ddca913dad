// JSON: the whole profile summary for programs (dashboards, CI checks, notebooks). The
// schema is documented, field by field with units, in docs/JSON_SCHEMA.md.
#pragma once

#include <iosfwd>
#include <string_view>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::report {
struct ReportData;
}  // namespace nnprof::report

namespace nnprof::io {

/// The value of the document's "schema" field.
inline constexpr std::string_view kJsonSchemaName = "nnprof-report";
/// The value of its "schema_version" field: raised whenever a field changes meaning or is
/// removed (adding a field does not raise it).
inline constexpr int kJsonSchemaVersion = 1;

/// Writes `profile` as one JSON document (docs/JSON_SCHEMA.md): metadata, per-scope timing,
/// memory, throughput, the call tree, threads, completeness and diagnostics. Times are
/// integer nanoseconds, sizes bytes; text that is not valid UTF-8 has its invalid bytes
/// replaced by U+FFFD, so the output is always valid JSON.
/// Runs report::analyse once (with the default ReportLimits) and writes its ReportData.
void write_json_report(const Profile& profile, std::ostream& out);

/// Writes `data` (report::analyse of a profile) as that document: for a caller that has the
/// analysis already, as the other formats do.
void write_json_report(const report::ReportData& data, std::ostream& out);

/// The "json" format (".json"): `write_json_report`.
class JsonExporter final : public Exporter {
 public:
  JsonExporter() noexcept : Exporter(ReportFormat::Json) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
