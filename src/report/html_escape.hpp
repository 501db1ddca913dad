// Writing HTML into a string, shared by the HTML report and its SVG charts: escaping of user
// strings (scope, thread and counter names, the command line) for HTML text and attribute
// values, and formatted appends of markup.
#pragma once

#include <cstddef>
#include <iterator>
#include <string>
#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace nnprof::report::html {

/// Appends `text` to `out` with the five HTML-special characters replaced by entities, so
/// that it reads as text in element content and in quoted attribute values alike. C0
/// control characters other than tab and newlines (which HTML forbids) become U+FFFD.
inline void append_escaped(std::string& out, std::string_view text) {
  const auto as_is = [](char c) {
    return c != '&' && c != '<' && c != '>' && c != '"' && c != '\'' &&
           (static_cast<unsigned char>(c) >= 0x20 || c == '\t' || c == '\n' || c == '\r');
  };
  for (std::size_t i = 0; i < text.size(); ++i) {
    // Runs that need nothing, most of any text, are copied as they are.
    std::size_t run = i;
    while (run < text.size() && as_is(text[run])) ++run;
    out.append(text.substr(i, run - i));
    if (run == text.size()) return;
    i = run;
    switch (text[i]) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += "\xEF\xBF\xBD";
    }
  }
}

/// `text` escaped for HTML (see append_escaped).
inline std::string escape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  append_escaped(out, text);
  return out;
}

/// Appends `format` formatted with `args` to `out`. Arguments go in as they are: escape
/// user strings first.
template <typename... Args>
void append(std::string& out, fmt::format_string<Args...> format, Args&&... args) {
  fmt::format_to(std::back_inserter(out), format, std::forward<Args>(args)...);
}

}  // namespace nnprof::report::html
