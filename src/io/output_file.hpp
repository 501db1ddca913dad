// Writing an output file so that it appears complete or not at all.
#pragma once

#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>

#include "nnprof/report.hpp"

namespace nnprof::io {

/// Calls `writer` with a stream to a temporary file beside `path`, then renames it onto
/// `path`. On any failure the temporary file is removed, `path` is left untouched, and
/// nnprof::Error is thrown naming the file, the reason and what to do.
void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& writer);

/// The format of a document (a comparison, a model comparison) that `path`'s extension names,
/// ASCII case-insensitively: .txt Text, .md or .markdown Markdown, .json Json, .html or .htm
/// Html; Auto for any other extension.
ReportFormat document_format_for_path(std::string_view path);

}  // namespace nnprof::io
