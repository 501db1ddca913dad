// Markdown: the report to paste into a pull request, an issue or a wiki (GitHub-flavoured).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "io/exporter.hpp"
#include "io/format.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// `text` as literal inline Markdown: characters with a meaning in GitHub-flavoured
/// Markdown (\ ` * _ [ ] < > | ~ & $) are backslash-escaped, so a scope name neither
/// formats nor splits a table cell; an underscore between two letters or digits, which
/// cannot emphasise, is left as is ("train_step"). CR, LF, tab and other control characters
/// are written as visible escapes ("\n", "\x1b") so they cannot break a row or list item.
std::string markdown_escape(std::string_view text);

/// Writes `table` as a GitHub-flavoured table: cells escaped (markdown_escape), padded so that
/// the raw file reads as a table too, right-aligned columns ruled "--:".
void write_markdown_table(const TextTable& table, std::ostream& out);

/// Writes the Markdown report of `profile`: system information, hot paths by total and
/// self time, top allocators, throughput, most called scopes, the call hierarchy, threads,
/// memory counters, insights, completeness and cost, diagnostics. Every number carries its
/// unit; percentages of time are of the profile's instrumented time.
void write_markdown_report(const Profile& profile, std::ostream& out);

/// The "markdown" format (".md"): `write_markdown_report`.
class MarkdownExporter final : public Exporter {
 public:
  MarkdownExporter() noexcept : Exporter(ReportFormat::Markdown) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

}  // namespace nnprof::io
