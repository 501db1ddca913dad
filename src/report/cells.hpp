// Cells and blocks that many sections build the same way: numbers with their raw value, names
// in their readable form, findings, and the columns of a table of scopes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string_view>
#include <vector>

#include "analysis/bottleneck.hpp"
#include "report/document.hpp"
#include "report/report_data.hpp"

namespace nnprof::report {

Cell duration_cell(std::uint64_t ns);
Cell duration_cell(double ns);
Cell bytes_cell(std::uint64_t bytes);
Cell count_cell(std::uint64_t count);
/// `part` as a share of `whole`, with a bar; "n/a" (no bar) when `whole` is 0.
Cell share_cell(std::uint64_t part, std::uint64_t whole);
Cell fraction_cell(double fraction);
/// A name (a scope's, a path, a source line, a kernel, a frame): capped for display, with `full`
/// (or, when the cap cut it, the name itself, capped as free text) as the title.
Cell name_cell(std::string_view shown, std::string_view full = {});
/// A scope's name: name_cell of it, `path` (when given) as the title.
Cell scope_cell(const Profile& profile, StringId name, std::string_view path = {});
/// 1, 2, 3 ... for the row at `index`.
Cell rank_cell(std::size_t index);
/// Words that stand for a number that is not known ("n/a"), sorted as 0.
Cell not_known();
Cell signed_bytes_cell(std::int64_t bytes);
/// A demangled function name: its readable form (analysis::readable_function) shown, the full
/// signature as the title; the full signature shown when `full_names` (ReportLimits::full_names).
Cell function_cell(std::string_view demangled, bool full_names);

/// "Top 30 of 120 scopes.": what a table cut at a limit says, `noun` naming what it lists
/// (plural). Empty when `shown` is all of `total`.
Column left(std::string header, std::string key);
Column right(std::string header, std::string key);

analysis::Sentence top_of(std::size_t shown, std::size_t total, std::string_view noun);
/// Says top_of in `section` when a limit leaves rows out; nothing when every row is shown.
void say_top_of(Section& section, std::size_t shown, std::size_t total, std::string_view noun);

/// The bottlenecks as a Findings block, or `none` when there is none.
Findings findings_of(const std::vector<analysis::Bottleneck>& found, analysis::Sentence none);

/// What a column of a scope table holds (as io::ScopeColumn did). Shares of time are of the
/// instrumented time; AllocShare of analysis::allocation_total; HeapShare of every heap byte.
enum class ScopeColumn : std::uint8_t {
  Rank, Name, Calls, Total, TotalShare, Self, SelfShare, Avg, AvgSelf, Min, Max, P50, P95, P99,
  Items, Throughput, Allocated, AllocShare, Allocs, AllocPerCall,
  HeapAllocated, HeapShare, HeapAllocs, HeapPerCall, HeapRetained, HeapPeakLive, GpuTime,
};

/// A table with one row per scope of `scopes`, in that order, and `columns` in the order given;
/// GpuTime is appended when the profile has GPU tracing.
Table scope_table(const ReportData& data, std::string id, const std::vector<const ScopeStats*>& scopes,
                  std::initializer_list<ScopeColumn> columns);

}  // namespace nnprof::report
