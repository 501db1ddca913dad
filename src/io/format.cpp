#include "io/format.hpp"

#include <algorithm>
#include <array>
#include <initializer_list>
#include <cctype>
#include <cmath>
#include <iterator>
#include <ostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include <fmt/format.h>

namespace nnprof::io {
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
  const double scale = std::pow(10.0, decimals);
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

void write_text_heading(std::ostream& out, std::string_view title) {
  out << '\n' << title << '\n' << std::string(display_width(title), '-') << '\n';
}

TextTable::TextTable(std::vector<TableColumn> columns) : columns_(std::move(columns)) {}

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
  for (const TableColumn& column : columns_) result.push_back(display_width(column.header));
  for (const auto& row : rows_) {
    for (std::size_t i = 0; i < row.size(); ++i) {
      result[i] = std::max(result[i], display_width(row[i]));
    }
  }
  return result;
}

namespace {

void write_line(std::ostream& out, std::string_view indent, const std::vector<TableColumn>& columns,
                const std::vector<std::size_t>& widths, const std::vector<std::string>& cells) {
  std::string line(indent);
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i > 0) line += "  ";
    // Padding by display width rather than bytes keeps "12.3 µs" aligned with "1.23 ms".
    const std::string padding(widths[i] - display_width(cells[i]), ' ');
    if (columns[i].align == Align::Right) {
      line += padding;
      line += cells[i];
    } else {
      line += cells[i];
      line += padding;
    }
  }
  // A left-aligned last column would leave trailing spaces, which diffs and tests trip on.
  line.erase(line.find_last_not_of(' ') + 1);
  out << line << '\n';
}

}  // namespace

void TextTable::write(std::ostream& out, std::string_view indent) const {
  const std::vector<std::size_t> column_widths = widths();
  std::vector<std::string> headers;
  std::vector<std::string> rule;
  for (std::size_t i = 0; i < columns_.size(); ++i) {
    headers.push_back(columns_[i].header);
    rule.emplace_back(column_widths[i], '-');
  }
  write_line(out, indent, columns_, column_widths, headers);
  write_line(out, indent, columns_, column_widths, rule);
  for (const auto& row : rows_) write_line(out, indent, columns_, column_widths, row);
}

std::string TextTable::str(std::string_view indent) const {
  std::ostringstream out;
  write(out, indent);
  return out.str();
}

}  // namespace nnprof::io
