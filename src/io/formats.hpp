// The format table (nnprof::report_formats(), defined in formats.cpp) rendered into the
// sentences the library's error messages need.
#pragma once

#include <string>

#include "nnprof/report.hpp"

namespace nnprof::io {

/// The names of the formats that render `document`, as a sentence lists them: "text,
/// markdown, json or html".
std::string format_names(Document document);

/// Every extension of the formats that render `document`, as a sentence lists them: ".txt,
/// .md, .markdown, ... or .svg".
std::string format_extensions(Document document);

/// `format`, when it renders `document`; otherwise throws nnprof::Error saying which formats
/// do ("a comparison is written as text, markdown, json or html, not csv").
ReportFormat checked_format(ReportFormat format, Document document);

/// The format of `document` that `path`'s extension names; throws nnprof::Error listing the
/// extensions when none does ("cannot tell the comparison's format from 'x.pdf': use a .txt,
/// ... file name, or name the format explicitly"), or saying which formats write it when the
/// extension names one that does not ("a comparison is written as text, ..., not csv").
ReportFormat format_for_path(const std::string& path, Document document);

}  // namespace nnprof::io
