// The text summary: what a person reads first after a run (also `std::cout << report`).
#pragma once

#include <iosfwd>
#include <string_view>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Writes the text summary of `profile`: header, hot paths by total and self time, most
/// called scopes, the call hierarchy, memory, heap, CPU samples (when sampled), insights,
/// completeness and cost, diagnostics. Every number carries its unit; percentages are of the
/// profile's instrumented time, except in the CPU section, where they are of the samples.
void write_text_report(const Profile& profile, std::ostream& out);

/// The "text" format (".txt"): `write_text_report`.
class TextExporter final : public Exporter {
 public:
  TextExporter() noexcept : Exporter(ReportFormat::Text) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

}  // namespace nnprof::io
