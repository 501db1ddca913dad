// The human-readable reports of a profile, as exporters: text for a terminal, Markdown for a pull
// request or wiki, one self-contained HTML page. All three are the same document
// (report::profile_document of report::analyse), rendered by src/render; names are capped for
// reading first (render::with_capped_names).
#pragma once

#include <iosfwd>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof::io {

void write_text_report(const Profile& profile, std::ostream& out, const ReportOptions& options = {});
void write_markdown_report(const Profile& profile, std::ostream& out, const ReportOptions& options = {});
void write_html_report(const Profile& profile, std::ostream& out, const ReportOptions& options = {});

/// The "text" format: write_text_report.
class TextExporter final : public Exporter {
 public:
  TextExporter() noexcept : Exporter(ReportFormat::Text) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

/// The "markdown" format: write_markdown_report.
class MarkdownExporter final : public Exporter {
 public:
  MarkdownExporter() noexcept : Exporter(ReportFormat::Markdown) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

/// The "html" format: write_html_report.
class HtmlExporter final : public Exporter {
 public:
  HtmlExporter() noexcept : Exporter(ReportFormat::Html) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
