// Cells and blocks the resource sections (memory, heap, CPU samples, GPU, metrics, critical
// path) build alike. Inline and private to these sections, so that they stand on their own;
// report/cells.hpp offers the shared forms to every section.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "analysis/bottleneck.hpp"
#include "io/format.hpp"
#include "report/document.hpp"

namespace nnprof::report::resource {

inline Cell name_cell(std::string shown, std::string full = {}) {
  Cell cell = Cell::words(std::move(shown));
  if (full != cell.text) cell.title = std::move(full);
  cell.name = true;
  return cell;
}

inline Cell rank_cell(std::size_t index) { return Cell::number(std::to_string(index + 1), static_cast<double>(index + 1)); }

template <typename T>
Cell duration_value(T ns) {
  return Cell::number(io::format_duration(ns), static_cast<double>(ns));
}
inline Cell bytes_value(std::uint64_t bytes) { return Cell::number(io::format_bytes(bytes), static_cast<double>(bytes)); }
inline Cell bytes_value(std::int64_t bytes) { return Cell::number(io::format_bytes(bytes), static_cast<double>(bytes)); }
inline Cell count_value(std::uint64_t count) { return Cell::number(io::format_count(count), static_cast<double>(count)); }
/// A share of a whole (0..1) with a bar; "n/a" and no value when it is NaN (a share of nothing).
inline Cell share_value(double fraction) {
  if (std::isnan(fraction)) return Cell::words("n/a");
  return Cell::share(io::format_percent(fraction), fraction);
}
/// "n/a" where a number is not known.
inline Cell not_known() { return Cell::words("n/a"); }

inline Column left(std::string header, std::string key) { return {std::move(header), Align::Left, std::move(key)}; }
inline Column right(std::string header, std::string key) { return {std::move(header), Align::Right, std::move(key)}; }

/// "Top 15 of 40 kernels." when a limit leaves rows out; nothing when every row is shown.
inline void say_top_of(Section& section, std::size_t shown, std::size_t all, std::string_view what) {
  if (shown >= all) return;
  section.say(Sentence().words("Top ").count(shown).words(" of ").count(all).words(fmt::format(" {}.", what)));
}

/// The bottlenecks as a Findings block; `none` is said when there is none.
inline Findings findings_block(const std::vector<analysis::Bottleneck>& found, Sentence none) {
  Findings block;
  block.none = std::move(none);
  for (const analysis::Bottleneck& b : found) {
    block.items.push_back({std::string(analysis::to_string(b.severity)), std::string(analysis::title(b.kind)),
                           b.description, b.suggestion});
  }
  return block;
}

}  // namespace nnprof::report::resource
