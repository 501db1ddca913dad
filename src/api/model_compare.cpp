// The public face of the model comparison (nnprof/model_compare.hpp).
#include "nnprof/model_compare.hpp"

#include <ostream>
#include <string>

#include <fmt/format.h>

#include "analysis/model_compare.hpp"
#include "io/model_compare_report.hpp"
#include "io/output_file.hpp"
#include "nnprof/error.hpp"
#include "record/internal_allocations.hpp"
#include "render/render.hpp"
#include "report/model_comparison.hpp"

namespace nnprof {

namespace {

bool writable(ReportFormat format) {
  return format == ReportFormat::Text || format == ReportFormat::Markdown || format == ReportFormat::Json ||
         format == ReportFormat::Html;
}

[[noreturn]] void unsupported(ReportFormat format) {
  throw Error(fmt::format("a model comparison is written as text, markdown, json or html, not {}", to_string(format)));
}

}  // namespace

const char* to_string(ScalingVerdict verdict) noexcept {
  switch (verdict) {
    case ScalingVerdict::Linear: return "linear";
    case ScalingVerdict::SubLinear: return "sub-linear";
    case ScalingVerdict::Poor: return "poor";
    case ScalingVerdict::Unknown: break;
  }
  return "unknown";
}

ModelComparison compare_models(const Profile& profile) {
  detail::InternalAllocations internal;
  return analysis::compare_models(profile);
}

void write_model_comparison(const ModelComparison& comparison, std::ostream& out, ReportFormat format) {
  detail::InternalAllocations internal;
  if (comparison.models.empty()) throw Error("the model comparison is empty: it compares no model");
  switch (format) {
    case ReportFormat::Text: render::write_text(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Markdown: render::write_markdown(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Html: render::write_html(report::model_comparison_document(comparison), out); break;
    case ReportFormat::Json: io::write_model_comparison_json(comparison, out); return;
    default: unsupported(format);
  }
  // A closed pipe or a full disk shows only when the buffer is written.
  out.flush();
  if (!out)
    throw Error("could not write the model comparison: the output stream failed (disk full, or a closed pipe?)");
}

void export_model_comparison(const ModelComparison& comparison, const std::string& path, ReportFormat format) {
  detail::InternalAllocations internal;
  if (format == ReportFormat::Auto) {
    format = io::document_format_for_path(path);
    if (format == ReportFormat::Auto)
      throw Error(fmt::format("cannot tell the model comparison's format from '{}': use a .txt, .md, .json or .html "
                              "file name, or name the format explicitly",
                              path));
  }
  // Checked before the file is created, so that a bad format leaves no file behind.
  if (!writable(format)) unsupported(format);
  io::write_file_atomically(path, [&](std::ostream& out) { write_model_comparison(comparison, out, format); });
}

}  // namespace nnprof
