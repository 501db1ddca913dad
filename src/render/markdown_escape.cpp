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

}  // namespace


std::string markdown_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  append_markdown_escape(out, text);
  return out;
}

void append_markdown_escape(std::string& out, std::string_view text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    const auto byte = static_cast<unsigned char>(c);
    if (c == '_' && intraword(text, i)) {
      out += c;
      continue;
    }
    switch (c) {
      case '\\': case '`': case '*': case '_': case '[': case ']': case '<': case '>':
      case '|': case '~': case '&': case '$':
        out += '\\';
        out += c;
        break;
      // "\\n" in the source renders as the two characters \n.
      case '\n': out += "\\\\n"; break;
      case '\r': out += "\\\\r"; break;
      case '\t': out += "\\\\t"; break;
      default:
        if (byte < 0x20 || byte == 0x7F) {
          fmt::format_to(std::back_inserter(out), "\\\\x{:02x}", byte);
        } else {
          out += c;
        }
    }
  }
}


}  // namespace nnprof::render
