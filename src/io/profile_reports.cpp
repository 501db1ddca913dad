// The text, Markdown and HTML reports of a profile: its names capped for reading, analysed once
// (report::analyse), described once (report::profile_document), rendered by the format's
// renderer. Nothing here knows a section. The Markdown report also embeds its data for
// comparisons (io/report_import.hpp).
#include <optional>
#include <ostream>

#include "io/profile_reports.hpp"
#include "io/report_import.hpp"
#include "render/sentence_markup.hpp"
#include "render/render.hpp"
#include "report/documents.hpp"
#include "report/report_data.hpp"

namespace nnprof::io {
namespace {

template <typename Render>
void write_profile_document(const Profile& whole, const ReportOptions& options, std::ostream& out, Render write) {
  std::optional<Profile> storage;
  const Profile& profile = render::with_capped_names(whole, storage);
  report::ReportLimits limits = report::ReportLimits{}.with_rows(options.rows);
  limits.full_names = options.full_names;
  limits.carbon = options.carbon;
  const report::ReportData data = report::analyse(profile, limits);
  write(report::profile_document(data), out);
}

}  // namespace

void write_text_report(const Profile& profile, std::ostream& out, const ReportOptions& options) {
  write_profile_document(profile, options, out, render::write_text);
}
// The Markdown report of a profile, unlike other Markdown documents, ends with the figures
// compare and model-compare need, in a comment no viewer shows (io/report_import.hpp): a
// report pasted into a pull request can be compared later. The names there are uncapped.
void write_markdown_report(const Profile& profile, std::ostream& out, const ReportOptions& options) {
  write_profile_document(profile, options, out, render::write_markdown);
  write_markdown_data_block(profile, out);
}
void write_html_report(const Profile& profile, std::ostream& out, const ReportOptions& options) {
  write_profile_document(profile, options, out, render::write_html);
}

void TextExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const {
  write_text_report(profile, out, options);
}
void MarkdownExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const {
  write_markdown_report(profile, out, options);
}
void HtmlExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const {
  write_html_report(profile, out, options);
}

}  // namespace nnprof::io
