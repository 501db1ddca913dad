// Escaping for Markdown text.
#pragma once

#include <string>
#include <string_view>

namespace nnprof::render {

/// `text` escaped for inline Markdown: characters that could start emphasis, code, links, HTML or
/// split a table cell get a backslash; an underscore between two letters or digits, which cannot
/// emphasise, is left as is ("train_step"). CR, LF, tab and other control characters are written
/// as visible escapes ("\n", "\x1b") so they cannot break a row or list item.
std::string markdown_escape(std::string_view text);
/// markdown_escape appended to `out`.
void append_markdown_escape(std::string& out, std::string_view text);

}  // namespace nnprof::render
