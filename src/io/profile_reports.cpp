// The text, Markdown and HTML reports of a profile: its names capped for reading, analysed once
// (report::analyse), described once (report::profile_document), rendered by the format's
// renderer. Nothing here knows a section.
#include <optional>
#include <ostream>

#include "io/profile_reports.hpp"
#include "io/sentence_markup.hpp"
#include "render/render.hpp"
#include "report/documents.hpp"
#include "report/report_data.hpp"

namespace nnprof::io {
namespace {

template <typename Render>
void write_profile_document(const Profile& whole, std::ostream& out, Render render) {
  std::optional<Profile> storage;
  const Profile& profile = with_capped_names(whole, storage);
  const report::ReportData data = report::analyse(profile);
  render(report::profile_document(data), out);
}

}  // namespace

void write_text_report(const Profile& profile, std::ostream& out) {
  write_profile_document(profile, out, render::write_text);
}
void write_markdown_report(const Profile& profile, std::ostream& out) {
  write_profile_document(profile, out, render::write_markdown);
}
void write_html_report(const Profile& profile, std::ostream& out) {
  write_profile_document(profile, out, render::write_html);
}

void TextExporter::write(const Profile& profile, std::ostream& out) const { write_text_report(profile, out); }
void MarkdownExporter::write(const Profile& profile, std::ostream& out) const { write_markdown_report(profile, out); }
void HtmlExporter::write(const Profile& profile, std::ostream& out) const { write_html_report(profile, out); }

}  // namespace nnprof::io
