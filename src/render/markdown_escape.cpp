#include "render/markdown_escape.hpp"

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>

#include <fmt/format.h>

namespace nnprof::render {
namespace {

bool is_ascii_alnum(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

// An underscore between two letters or digits can neither open nor close emphasis
// (CommonMark's flanking rules), so "train_step" stays readable in the raw file.
bool intraword(std::string_view text, std::size_t i) {
  return i > 0 && i + 1 < text.size() && is_ascii_alnum(text[i - 1]) && is_ascii_alnum(text[i + 1]);
}

// Whether `c` goes into Markdown text as it is: not a control byte and not a character that
// could open emphasis, code, a link, HTML or split a table cell.
bool plain(char c) {
  const auto byte = static_cast<unsigned char>(c);
  if (byte < 0x20 || byte == 0x7F) return false;
  switch (c) {
    case '\\': case '`': case '*': case '_': case '[': case ']': case '<': case '>':
    case '|': case '~': case '&': case '$':
      return false;
    default:
      return true;
  }
}

}  // namespace


std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  append_markdown_escape(out, text);
  return out;
}

void append_markdown_escape(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Runs of characters that need nothing, most of any text, are copied as they are.
    std::size_t run = i;
    while (run < text.size() && plain(text[run])) ++run;
    out.append(text.substr(i, run - i));
    i = run;
    if (i == text.size()) return;
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '_' && intraword(text, i)) {
      out += c;
      continue;
    }
    // "\\n" in the source renders as the two characters \n.
    if (c == '\n') {
      out += "\\\\n";
    } else if (c == '\r') {
      out += "\\\\r";
    } else if (c == '\t') {
      out += "\\\\t";
    } else if (byte < 0x20 || byte == 0x7F) {
      fmt::format_to(std::back_inserter(out), "\\\\x{:02x}", byte);
    } else {
      out += '\\';  // one of the characters `plain` refuses
      out += c;
    }
  }
}


}  // namespace nnprof::render
