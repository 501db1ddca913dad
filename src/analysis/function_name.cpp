#include "analysis/function_name.hpp"

#include <cstddef>

namespace nnprof::analysis {

namespace {

constexpr std::size_t kLongName = 72;  // beyond this, template arguments are elided

bool opens(char c) noexcept { return c == '(' || c == '<' || c == '[' || c == '{'; }
bool closes(char c) noexcept { return c == ')' || c == '>' || c == ']' || c == '}'; }

bool ends_with(std::string_view s, std::string_view suffix) noexcept {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

/// Index of the bracket that opens the one closing at `close`, or npos when unbalanced.
std::size_t matching_open(std::string_view s, std::size_t close) noexcept {
  int depth = 0;
  for (std::size_t i = close + 1; i-- > 0;) {
    if (closes(s[i])) ++depth;
    if (opens(s[i]) && --depth == 0) return i;
  }
  return std::string_view::npos;
}

/// Every bracket balanced and properly nested (operator<, operator>> and the like are not).
bool balanced(std::string_view s) noexcept {
  int depth = 0;
  for (const char c : s) {
    if (opens(c)) ++depth;
    if (closes(c) && --depth < 0) return false;
  }
  return depth == 0;
}

/// A Python frame's name as the CPU sampler writes it, "qualname (file.py:12)": already
/// readable, and no C++ signature (none ends in ":<digits>)").
bool python_frame_name(std::string_view s) noexcept {
  if (s.size() < 5 || s.back() != ')') return false;
  std::size_t i = s.size() - 1;
  while (i > 0 && s[i - 1] >= '0' && s[i - 1] <= '9') --i;
  if (i == s.size() - 1 || i < 2 || s[i - 1] != ':') return false;
  const std::size_t open = s.rfind(" (", i);
  return open != std::string_view::npos && open > 0;
}

}  // namespace

std::string readable_function(std::string_view name) {
  if (python_frame_name(name)) return std::string(name);
  std::string_view s = name;
  if (const std::size_t clone = s.find(" [clone "); clone != std::string_view::npos) s = s.substr(0, clone);
  if (s.find("operator") != std::string_view::npos && s.find("operator()") == std::string_view::npos) return std::string(s);
  if (!balanced(s)) return std::string(name);
  // Qualifiers of a member function, then its parameter list.
  for (bool again = true; again;) {
    again = false;
    for (const std::string_view q : {" const", " volatile", " &&", " &", " noexcept"})
      if (ends_with(s, q)) {
        s.remove_suffix(q.size());
        again = true;
      }
  }
  if (!s.empty() && s.back() == ')') {
    const std::size_t open = matching_open(s, s.size() - 1);
    if (open == std::string_view::npos || open == 0) return std::string(name);
    s = s.substr(0, open);
  }
  // The return type ends at the last space outside brackets ("(anonymous namespace)" and
  // template argument lists have spaces inside).
  int depth = 0;
  std::size_t start = 0;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (opens(s[i])) ++depth;
    if (closes(s[i])) --depth;
    if (s[i] == ' ' && depth == 0) start = i + 1;
  }
  s = s.substr(start);
  if (s.size() <= kLongName) return std::string(s);
  // Still long: keep the outermost template brackets, elide what is inside them.
  std::string out;
  depth = 0;
  for (const char c : s) {
    if (c == '<') {
      if (depth++ == 0) out += "<…";
      continue;
    }
    if (c == '>') {
      if (--depth == 0) out += '>';
      continue;
    }
    if (depth == 0) out += c;
  }
  return out;
}

}  // namespace nnprof::analysis
