// The human-readable reports of a profile, as exporters: text for a terminal, Markdown for a pull
// request or wiki, one self-contained HTML page. All three are the same document
// (report::profile_document of report::analyse), rendered by src/render; names are capped for
// reading first (io::with_capped_names).
#pragma once

#include <iosfwd>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

void write_text_report(const Profile& profile, std::ostream& out);
void write_markdown_report(const Profile& profile, std::ostream& out);
void write_html_report(const Profile& profile, std::ostream& out);

/// The "text" format: write_text_report.
class TextExporter final : public Exporter {
 public:
  TextExporter() noexcept : Exporter(ReportFormat::Text) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

/// The "markdown" format: write_markdown_report.
class MarkdownExporter final : public Exporter {
 public:
  MarkdownExporter() noexcept : Exporter(ReportFormat::Markdown) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

/// The "html" format: write_html_report.
class HtmlExporter final : public Exporter {
 public:
  HtmlExporter() noexcept : Exporter(ReportFormat::Html) {}
  void write(const Profile& profile, std::ostream& out) const override;
};

}  // namespace nnprof::io
