// Human formatting of durations, sizes, counts and percentages, and a plain-text table.
#pragma once

#include <algorithm>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace nnprof::report {

/// A duration with an automatic unit and 3 significant digits: "850 ns", "12.3 µs",
/// "1.23 ms", "4.57 s"; above 120 s "2 min 3.4 s", above 120 min "3 h 25 min".
std::string format_duration(std::uint64_t ns);
/// Same for a fractional or negative duration (a mean, a difference): "12.3 ns", "-1.23 ms".
std::string format_duration(double ns);
/// Any other integer type. Without it `format_duration(850)` would be ambiguous between
/// the two overloads above.
template <std::integral T>
  requires(!std::same_as<T, std::uint64_t> && !std::same_as<T, bool>)
std::string format_duration(T ns) {
  if constexpr (std::is_signed_v<T>) {
    return format_duration(static_cast<double>(ns));
  } else {
    return format_duration(static_cast<std::uint64_t>(ns));
  }
}

/// A size in binary units: "512 B", "1.50 KiB", "3.00 MiB", "1.20 GiB" (3 significant digits).
std::string format_bytes(std::uint64_t bytes);
/// A size that may be negative (a balance, a difference): "-1.50 KiB".
std::string format_bytes(std::int64_t bytes);
/// Any other integer type (resolves the ambiguity of `format_bytes(512)`).
template <std::integral T>
  requires(!std::same_as<T, std::uint64_t> && !std::same_as<T, std::int64_t> &&
           !std::same_as<T, bool>)
std::string format_bytes(T bytes) {
  if constexpr (std::is_signed_v<T>) {
    return format_bytes(static_cast<std::int64_t>(bytes));
  } else {
    return format_bytes(static_cast<std::uint64_t>(bytes));
  }
}

/// A count with thousands separators: "1,234,567".
std::string format_count(std::uint64_t count);
/// A count and the noun it counts, singular for exactly one: "1 call", "1,000 calls".
std::string format_count(std::uint64_t count, std::string_view one, std::string_view many);

/// A rate with its unit: thousands separators from 1,000 up ("3,200 items/s"), 3
/// significant digits below ("4.5 calls/s"); "n/a" when not finite.
std::string format_rate(double per_second, std::string_view unit);

/// A quantity with a decimal (SI) prefix and 3 significant digits: format_si(1.23e10,
/// "FLOP/s") is "12.3 GFLOP/s", format_si(4e9, "B/s") "4 GB/s"; "n/a" when not finite.
std::string format_si(double value, std::string_view unit);

/// A real number with 3 significant digits followed by `unit` ("2.5×", "0.125 FLOP/byte");
/// a unit that starts with a letter is set off by a space; "n/a" when not finite.
std::string format_ratio(double value, std::string_view unit);

/// Bytes per second, binary units as format_bytes: "1.50 MiB/s", "-512 B/s"; "n/a" when not finite.
std::string format_byte_rate(double bytes_per_second);

/// A fraction as a percentage with one decimal: 0.123 -> "12.3%"; a tiny non-zero
/// fraction that would round to zero is "<0.1%", so it is not mistaken for nothing.
std::string format_percent(double fraction);

/// Percentages of one whole (the instrumented time, all bytes allocated), computed once per
/// report: rows are many.
class PercentOf {
 public:
  explicit PercentOf(std::uint64_t whole) : whole_(whole) {}
  /// `part` as a fraction of the whole; 0 when the whole is 0.
  [[nodiscard]] double fraction(std::uint64_t part) const {
    return whole_ == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole_);
  }
  /// `format_percent` of the fraction; "n/a" when the whole is 0.
  [[nodiscard]] std::string operator()(std::uint64_t part) const {
    return whole_ == 0 ? std::string("n/a") : format_percent(fraction(part));
  }

 private:
  std::uint64_t whole_;
};

/// Columns a UTF-8 string occupies on a terminal, counted as code points ("µs" is 2).
/// East Asian wide characters and combining marks are not special-cased: scope names and
/// units are what tables hold.
std::size_t display_width(std::string_view utf8);

/// `text` as plain-text output shows it, so that a name cannot drive the terminal it is
/// printed on (clear the screen, set the title, forge lines): tab, CR and LF become \t, \r
/// and \n; other C0 controls, DEL and bytes that are not UTF-8 \xHH; C1 controls (U+0080 to
/// U+009F, as UTF-8) and the bidirectional overrides and isolates \uHHHH. Anything else comes
/// back as it is, so applying it twice changes nothing. Every plain-text writer passes names
/// through it (TextTable::write, kPlainText, and the lines they print themselves).
std::string plain_text(std::string_view text);
/// plain_text appended to `out`, without a string of its own.
void append_plain_text(std::string& out, std::string_view text);

/// How many characters of a name human-readable reports (text, Markdown, HTML) show.
inline constexpr std::size_t kNameDisplayLimit = 200;
/// How many characters of free text (a command line, an annotation's value, a diagnostic
/// message) they show.
inline constexpr std::size_t kTextDisplayLimit = 2000;

/// Whether capped_name cuts `name`: it has more than `limit` + 40 characters (code points; a
/// byte that is not UTF-8 counts as one). The 40 leave room for the marker, so that a name
/// capped once is not cut again.
bool name_too_long(std::string_view name, std::size_t limit = kNameDisplayLimit);

/// `name` as a human-readable report shows it: when name_too_long, its first `limit`
/// characters, cut at a character boundary, then "… (N more bytes)"; otherwise unchanged.
/// The data formats (.nnprof, JSON, CSV, Chrome trace) keep names whole.
std::string capped_name(std::string_view name, std::size_t limit = kNameDisplayLimit);

enum class Align : std::uint8_t { Left, Right };

/// A table's column: its header and how its cells align; `key` names it in links and JSON ("total").
struct Column {
  std::string header;
  Align align = Align::Left;
  std::string key;
};

/// The cells of a table whose columns a renderer pads: each cell written once, escaped, into
/// one string and measured once (a string per cell cost more than the rest of a text report).
/// Cells come row by row, the header row first: cell k is row k / columns, column k % columns.
class CellArena {
 public:
  CellArena(std::size_t columns, std::size_t rows, std::size_t min_width = 0)
      : columns_(columns), column_width_(columns, min_width) {
    start_.reserve((rows + 1) * columns + 1);
    width_.reserve((rows + 1) * columns);
    start_.push_back(0);
  }
  /// The next cell: `write(text)` appends it, escaped as the format needs.
  template <typename Write>
  void add(Write&& write) {
    const std::size_t column = width_.size() % columns_;
    write(text_);
    width_.push_back(display_width(std::string_view(text_).substr(start_.back())));
    start_.push_back(text_.size());
    column_width_[column] = std::max(column_width_[column], width_.back());
  }
  [[nodiscard]] std::string_view cell(std::size_t row, std::size_t column) const {
    const std::size_t k = row * columns_ + column;
    return std::string_view(text_).substr(start_[k], start_[k + 1] - start_[k]);
  }
  /// Spaces that pad the cell to its column's width.
  [[nodiscard]] std::size_t padding(std::size_t row, std::size_t column) const {
    return column_width_[column] - width_[row * columns_ + column];
  }
  [[nodiscard]] std::size_t column_width(std::size_t column) const { return column_width_[column]; }

 private:
  std::size_t columns_;
  std::string text_;
  std::vector<std::size_t> start_;  // cell k is text_[start_[k], start_[k + 1])
  std::vector<std::size_t> width_;
  std::vector<std::size_t> column_width_;
};

/// Columns aligned as TextTable::write lays them out, for cells held elsewhere: `cell(out, r, c)`
/// appends row r's cell in column c (r < rows), escaped with append_plain_text, to `out`.
void append_text_table(std::string& out, const std::vector<Column>& columns, std::size_t rows,
                       const std::function<void(std::string&, std::size_t, std::size_t)>& cell,
                       std::string_view indent = "  ");

/// Rows of text cells under column headers. It keeps the cells as given, so other
/// renderers (Markdown) can reuse the same data; `write` renders aligned plain text:
///
///     #  Scope    Total
///     -  -------  ------
///     1  forward  1.00 s
class TextTable {
 public:
  explicit TextTable(std::vector<Column> columns);

  /// Appends a row; missing trailing cells are empty. More cells than columns throws
  /// std::invalid_argument (a programming error in the caller).
  void add_row(std::vector<std::string> cells);

  [[nodiscard]] const std::vector<Column>& columns() const noexcept { return columns_; }
  [[nodiscard]] const std::vector<std::vector<std::string>>& rows() const noexcept {
    return rows_;
  }
  [[nodiscard]] bool empty() const noexcept { return rows_.empty(); }

  /// Display width of each column: the widest of its header and cells.
  [[nodiscard]] std::vector<std::size_t> widths() const;

  /// Writes header, a rule of dashes and the rows, each line prefixed by `indent`, columns
  /// separated by two spaces, without trailing spaces; cells pass through plain_text.
  void write(std::ostream& out, std::string_view indent = "  ") const;
  /// `write` into a string.
  [[nodiscard]] std::string str(std::string_view indent = "  ") const;

 private:
  std::vector<Column> columns_;
  std::vector<std::vector<std::string>> rows_;
};

}  // namespace nnprof::report
