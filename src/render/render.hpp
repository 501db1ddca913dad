// The renderers: a report::Document as plain text, GitHub-flavoured Markdown or one
// self-contained HTML page. They render blocks; they know neither the analysis nor which
// sections exist, so every document (a profile's report, a comparison, a model comparison)
// exists in every format, and a new section needs no renderer change.
#pragma once

#include <iosfwd>

#include "report/document.hpp"

namespace nnprof::render {

/// Aligned plain text for a terminal: every name passes through report::plain_text.
void write_text(const report::Document& document, std::ostream& out);
/// Only the sections of `document`, as write_text writes them (no title, no facts about the run):
/// one section of a report on its own, such as nnprof::write_critical_path.
void write_text_sections(const report::Document& document, std::ostream& out);
/// GitHub-flavoured Markdown: tables padded so that the raw file reads as a table too.
void write_markdown(const report::Document& document, std::ostream& out);
/// One HTML page that loads nothing from the network: sortable tables, bars, pictures.
void write_html(const report::Document& document, std::ostream& out);

}  // namespace nnprof::render
