#include "report/format.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cctype>
#include <cmath>
#include <functional>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

#include "report/utf8.hpp"

namespace nnprof::report {
namespace {

// Decimals that give 3 significant digits for a value in [0, 1000).
int decimals_for(double value) {
  if (value < 10.0) return 2;
  if (value < 100.0) return 1;
  return 0;
}

// `value` (>= 0) rounded to 3 significant digits, with the decimals to print it. Rounding
// can carry into the next decade (9.996 -> 10.0), which then needs one decimal fewer.
std::pair<double, int> round_3_digits(double value) {
  const int decimals = decimals_for(value);
  constexpr std::array<double, 3> kScale{1.0, 10.0, 100.0};
  const double scale = kScale[static_cast<std::size_t>(decimals)];
  const double rounded = std::round(value * scale) / scale;
  return {rounded, decimals_for(rounded)};
}

std::string format_minutes(double seconds) {
  // Round once, to tenths of a second, so that 179.96 s reads "3 min 0.0 s", not "2 min 60.0 s".
  const auto tenths = static_cast<std::uint64_t>(std::llround(seconds * 10.0));
  const std::uint64_t minutes = tenths / 600;
  if (minutes >= 120) {
    return fmt::format("{} h {} min", minutes / 60, minutes % 60);
  }
  return fmt::format("{} min {:.1f} s", minutes, static_cast<double>(tenths % 600) / 10.0);
}

std::string format_nonnegative_duration(double ns) {
  double value = ns;
  for (const std::string_view unit : {"ns", "µs", "ms"}) {
    // Decide the unit after rounding: 999.6 ns reads "1.00 µs", not "1000 ns".
    const auto [rounded, decimals] = round_3_digits(value);
    if (rounded < 1000.0) return fmt::format("{:.{}f} {}", rounded, decimals, unit);
    value /= 1000.0;
  }
  if (value > 120.0) return format_minutes(value);
  const auto [rounded, decimals] = round_3_digits(value);
  return fmt::format("{:.{}f} s", rounded, decimals);
}

std::string format_nonnegative_bytes(std::uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  constexpr std::array<std::string_view, 6> units{"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  double value = static_cast<double>(bytes) / 1024.0;
  std::size_t unit = 0;
  for (;; ++unit) {
    // [1000, 1024) stays in this unit as "1000 KiB": "0.98 MiB" would break the
    // 3-significant-digit pattern for no gain.
    const auto [rounded, decimals] = round_3_digits(value);
    const double shown = rounded >= 1000.0 ? std::round(value) : rounded;
    if (shown < 1024.0 || unit == units.size() - 1) {
      return fmt::format("{:.{}f} {}", shown, rounded >= 1000.0 ? 0 : decimals, units[unit]);
    }
    value /= 1024.0;
  }
}

}  // namespace

std::string format_duration(std::uint64_t ns) {
  // Whole nanoseconds print without decimals: "850 ns", never "850.00 ns".
  if (ns < 1000) return fmt::format("{} ns", ns);
  return format_nonnegative_duration(static_cast<double>(ns));
}

std::string format_duration(double ns) {
  if (!std::isfinite(ns)) return "n/a";
  // fmt rather than "-" + std::string: g++ 12 raises a false -Wrestrict on the latter at -O3.
  if (ns < 0.0) return fmt::format("-{}", format_nonnegative_duration(-ns));
  if (ns == 0.0) return "0 ns";
  return format_nonnegative_duration(ns);
}

std::string format_bytes(std::uint64_t bytes) { return format_nonnegative_bytes(bytes); }

std::string format_bytes(std::int64_t bytes) {
  if (bytes >= 0) return format_nonnegative_bytes(static_cast<std::uint64_t>(bytes));
  // Negate in unsigned arithmetic: -INT64_MIN does not fit in int64_t.
  return fmt::format("-{}", format_nonnegative_bytes(0 - static_cast<std::uint64_t>(bytes)));
}

std::string format_count(std::uint64_t count) {
  const std::string digits = std::to_string(count);
  std::string out;
  out.reserve(digits.size() + digits.size() / 3);
  for (std::size_t i = 0; i < digits.size(); ++i) {
    if (i > 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string format_count(std::uint64_t count, std::string_view one, std::string_view many) {
  return fmt::format("{} {}", format_count(count), count == 1 ? one : many);
}

std::string format_rate(double per_second, std::string_view unit) {
  if (!std::isfinite(per_second)) return "n/a";
  if (per_second >= 1000.0) {
    return fmt::format("{} {}", format_count(static_cast<std::uint64_t>(std::llround(per_second))),
                       unit);
  }
  return fmt::format("{:.3g} {}", per_second, unit);
}

std::string format_si(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  static constexpr const char* kPrefixes[] = {"", "k", "M", "G", "T", "P", "E"};
  std::size_t p = 0;
  double v = value;
  while (std::fabs(v) >= 999.5 && p + 1 < std::size(kPrefixes)) {
    v /= 1000.0;
    ++p;
  }
  const std::string suffix = fmt::format("{}{}", kPrefixes[p], unit);
  return suffix.empty() ? fmt::format("{:.3g}", v) : fmt::format("{:.3g} {}", v, suffix);
}

std::string format_ratio(double value, std::string_view unit) {
  if (!std::isfinite(value)) return "n/a";
  const bool spaced = !unit.empty() && std::isalpha(static_cast<unsigned char>(unit.front()));
  return fmt::format("{:.3g}{}{}", value, spaced ? " " : "", unit);
}

std::string format_byte_rate(double bytes_per_second) {
  if (!std::isfinite(bytes_per_second)) return "n/a";
  return fmt::format("{}/s", format_bytes(static_cast<std::int64_t>(std::llround(bytes_per_second))));
}

std::string format_percent(double fraction) {
  if (!std::isfinite(fraction)) return "n/a";
  const double percent = fraction * 100.0;
  if (percent > 0.0 && percent < 0.05) return "<0.1%";
  if (percent < 0.0 && percent > -0.05) return ">-0.1%";
  return fmt::format("{:.1f}%", percent);
}

std::size_t display_width(std::string_view utf8) {
  std::size_t width = 0;
  for (const char c : utf8) {
    // Continuation bytes (10xxxxxx) belong to the code point started before them.
    if ((static_cast<unsigned char>(c) & 0xC0U) != 0x80U) ++width;
  }
  return width;
}

namespace {

// The code point of the well-formed `n`-byte UTF-8 sequence at the start of `text`.
char32_t code_point(std::string_view text, std::size_t n) {
  const auto b = [&](std::size_t i) { return static_cast<char32_t>(static_cast<unsigned char>(text[i])); };
  if (n == 1) return b(0);
  if (n == 2) return ((b(0) & 0x1FU) << 6) | (b(1) & 0x3FU);
  if (n == 3) return ((b(0) & 0x0FU) << 12) | ((b(1) & 0x3FU) << 6) | (b(2) & 0x3FU);
  return ((b(0) & 0x07U) << 18) | ((b(1) & 0x3FU) << 12) | ((b(2) & 0x3FU) << 6) | (b(3) & 0x3FU);
}

// Code points a terminal acts on rather than shows: controls, and the bidirectional
// embeddings, overrides and isolates that reorder what follows them on the line.
bool escaped_code_point(char32_t c) {
  return c < 0x20 || (c >= 0x7F && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069);
}

}  // namespace

void append_plain_text(std::string& out, std::string_view text) {
  while (!text.empty()) {
    // Runs of printable ASCII, most of any name, are copied as they are.
    std::size_t run = 0;
    while (run < text.size() && text[run] >= 0x20 && text[run] < 0x7F) ++run;
    out.append(text.substr(0, run));
    text.remove_prefix(run);
    if (text.empty()) return;
    const std::size_t n = utf8_sequence_length(text);
    if (n == 0) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned char>(text[0]));
      text.remove_prefix(1);
      continue;
    }
    const char32_t c = code_point(text, n);
    if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c == 0x7F) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", static_cast<unsigned>(c));
    } else if (escaped_code_point(c)) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
    } else {
      out.append(text.substr(0, n));
    }
    text.remove_prefix(n);
  }
}

std::string plain_text(std::string_view text) {
  std::string out;
  append_plain_text(out, text);
  return out;
}

namespace {

// Room for the marker capped_name appends ("\u2026 (N more bytes)" is at most 35 characters), so
// that a capped name is not cut again: capping twice changes nothing.
constexpr std::size_t kMarkerRoom = 40;

// The bytes of the first `count` characters of `text` (all of it when it has fewer), a byte
// that is not UTF-8 counting as one character.
std::size_t prefix_bytes(std::string_view text, std::size_t count) {
  std::size_t cut = 0;
  for (std::size_t chars = 0; chars < count && cut < text.size(); ++chars) {
    const std::size_t n = utf8_sequence_length(text.substr(cut));
    cut += n == 0 ? 1 : n;
  }
  return cut;
}

}  // namespace

bool name_too_long(std::string_view name, std::size_t limit) {
  return name.size() > limit + kMarkerRoom && prefix_bytes(name, limit + kMarkerRoom) < name.size();
}

std::string capped_name(std::string_view name, std::size_t limit) {
  if (!name_too_long(name, limit)) return std::string(name);
  const std::size_t cut = prefix_bytes(name, limit);
  return fmt::format("{}\u2026 ({} more bytes)", name.substr(0, cut), name.size() - cut);
}

TextTable::TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}

void TextTable::add_row(std::vector<std::string> cells) {
  if (cells.size() > columns_.size()) {
    throw std::invalid_argument(fmt::format("TextTable row has {} cells for {} columns",
                                            cells.size(), columns_.size()));
  }
  cells.resize(columns_.size());
  rows_.push_back(std::move(cells));
}

std::vector<std::size_t> TextTable::widths() const {
  std::vector<std::size_t> result;
  result.reserve(columns_.size());
  for (const Column& column : columns_) result.push_back(display_width(column.header));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      result[i] = std::max(result[i], display_width(row[i]));
    }
  }
  return result;
}

void append_text_table(std::string& out, const std::vector<Column>& columns, std::size_t rows,
                       const std::function<void(std::string&, std::size_t, std::size_t)>& cell,
                       std::string_view indent) {
  const std::size_t n = columns.size();
  CellArena cells(n, rows);
  for (const Column& c : columns) cells.add([&](std::string& text) { append_plain_text(text, c.header); });
  for (std::size_t r = 0; r < rows; ++r)
    for (std::size_t c = 0; c < n; ++c) cells.add([&](std::string& text) { cell(text, r, c); });
  const auto line = [&](const auto& cell_text, const auto& padding_of) {
    const std::size_t line_start = out.size();
    out += indent;
    for (std::size_t i = 0; i < n; ++i) {
      if (i > 0) out += "  ";
      // Padding by display width rather than bytes keeps "12.3 µs" aligned with "1.23 ms".
      const std::size_t padding = padding_of(i);
      if (columns[i].align == Align::Right) out.append(padding, ' ');
      cell_text(i);
      if (columns[i].align != Align::Right) out.append(padding, ' ');
    }
    // A left-aligned last column would leave trailing spaces, which diffs and tests trip on.
    const std::size_t end = out.find_last_not_of(' ');
    out.resize(end == std::string::npos || end < line_start ? line_start : end + 1);
    out += '\n';
  };
  for (std::size_t r = 0; r <= rows; ++r) {
    line([&](std::size_t i) { out += cells.cell(r, i); }, [&](std::size_t i) { return cells.padding(r, i); });
    if (r == 0) line([&](std::size_t i) { out.append(cells.column_width(i), '-'); }, [](std::size_t) { return 0; });
  }
}

void TextTable::write(std::ostream& out, std::string_view indent) const {
  std::string lines;
  append_text_table(
      lines, columns_, rows_.size(),
      [&](std::string& cell, std::size_t r, std::size_t c) { append_plain_text(cell, rows_[r][c]); }, indent);
  out << lines;
}

std::string TextTable::str(std::string_view indent) const {
  std::ostringstream out;
  write(out, indent);
  return out.str();
}

}  // namespace nnprof::report
