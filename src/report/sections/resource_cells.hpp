// Cells and blocks the resource sections (memory, heap, CPU samples, GPU, metrics, critical
// path) build alike, on top of the shared ones of report/cells.hpp.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "report/format.hpp"
#include "report/cells.hpp"
#include "report/document.hpp"

namespace nnprof::report::resource {

/// A name that is not a scope's StringId (a path, a source line, a kernel, a frame): capped for
/// display, with `full` (or the name the cap cut) as the title.
inline Cell name_cell(std::string_view shown, std::string_view full = {}) {
  std::string capped = report::capped_name(shown);
  std::string title = !full.empty()                   ? report::capped_name(full, report::kTextDisplayLimit)
                      : capped.size() != shown.size() ? report::capped_name(shown, report::kTextDisplayLimit)
                                                      : std::string();
  return Cell::named(std::move(capped), std::move(title));
}

/// 1, 2, 3 ... for the row at `index`.
inline Cell rank_cell(std::size_t index) { return count_cell(index + 1); }

/// Words that stand for a number that is not known, sorted as 0 (as report/cells does).
inline Cell not_known() { return Cell::number("n/a", 0.0); }

inline Cell signed_bytes_cell(std::int64_t bytes) {
  return Cell::number(report::format_bytes(bytes), static_cast<double>(bytes));
}

inline Column left(std::string header, std::string key) { return {std::move(header), Align::Left, std::move(key)}; }
inline Column right(std::string header, std::string key) { return {std::move(header), Align::Right, std::move(key)}; }

/// Says "Top 15 of 40 kernels." when a limit leaves rows out; nothing when every row is shown.
inline void say_top_of(Section& section, std::size_t shown, std::size_t all, std::string_view what) {
  if (shown < all) section.say(top_of(shown, all, what));
}

}  // namespace nnprof::report::resource
