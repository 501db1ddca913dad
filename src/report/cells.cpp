#include "report/cells.hpp"

#include <string>
#include <unordered_map>
#include <utility>

#include <fmt/format.h>

#include "analysis/function_name.hpp"
#include "analysis/rankings.hpp"
#include "report/format.hpp"
#include "report/gpu_data.hpp"

namespace nnprof::report {
namespace {

// Words that stand for a number that does not exist ("n/a", "-"): sorted as `value`.
Cell absent(std::string_view text, double value = 0.0) { return Cell::number(std::string(text), value); }

// "8.00 MiB in 4 blocks"; just "0 B" for none.
std::string bytes_in_blocks(std::uint64_t bytes, std::uint64_t blocks) {
  if (blocks == 0) return report::format_bytes(bytes);
  return fmt::format("{} in {}", report::format_bytes(bytes), report::format_count(blocks, "block", "blocks"));
}

Column column_of(ScopeColumn column) {
  switch (column) {
    case ScopeColumn::Rank: return {"#", Align::Right, "rank"};
    case ScopeColumn::Name: return {"Scope", Align::Left, "scope"};
    case ScopeColumn::Calls: return {"Calls", Align::Right, "calls"};
    case ScopeColumn::Total: return {"Total", Align::Right, "total"};
    case ScopeColumn::TotalShare: return {"% of instrumented time", Align::Right, "pct"};
    case ScopeColumn::Self: return {"Self", Align::Right, "self"};
    case ScopeColumn::SelfShare: return {"% of instrumented time", Align::Right, "self-pct"};
    case ScopeColumn::Avg: return {"Avg", Align::Right, "mean"};
    case ScopeColumn::AvgSelf: return {"Avg self", Align::Right, "mean-self"};
    case ScopeColumn::Min: return {"Min", Align::Right, "min"};
    case ScopeColumn::Max: return {"Max", Align::Right, "max"};
    case ScopeColumn::P50: return {"p50", Align::Right, "p50"};
    case ScopeColumn::P95: return {"p95", Align::Right, "p95"};
    case ScopeColumn::P99: return {"p99", Align::Right, "p99"};
    case ScopeColumn::Items: return {"Items", Align::Right, "item-count"};
    // "items": the key the HTML report's links used for its Items/s column.
    case ScopeColumn::Throughput: return {"Items/s", Align::Right, "items"};
    case ScopeColumn::Allocated: return {"Allocated", Align::Right, "alloc"};
    case ScopeColumn::AllocShare: return {"% of all allocations", Align::Right, "alloc-pct"};
    case ScopeColumn::Allocs: return {"Allocations", Align::Right, "allocs"};
    case ScopeColumn::AllocPerCall: return {"Avg per call", Align::Right, "alloc-per-call"};
    case ScopeColumn::HeapAllocated: return {"Allocated", Align::Right, "heap-alloc"};
    case ScopeColumn::HeapShare: return {"% of heap allocated", Align::Right, "heap-pct"};
    case ScopeColumn::HeapAllocs: return {"Allocations", Align::Right, "heap-allocs"};
    case ScopeColumn::HeapPerCall: return {"Avg per call", Align::Right, "heap-per-call"};
    case ScopeColumn::HeapRetained: return {"Retained at end", Align::Right, "retained"};
    case ScopeColumn::HeapPeakLive: return {"Peak live", Align::Right, "peak-live"};
    case ScopeColumn::GpuTime: return {"GPU time", Align::Right, "gpu"};
  }
  return {"", Align::Right, ""};
}

// What every row of one scope table shares: the wholes of its shares, the GPU time by name.
struct Wholes {
  std::uint64_t time = 0;
  std::uint64_t allocations = 0;
  std::uint64_t heap = 0;
  std::unordered_map<StringId, std::uint64_t> gpu_ns;
};

Cell scope_column_cell(const Profile& profile, const Wholes& wholes, std::size_t rank, const ScopeStats& s,
                       ScopeColumn column) {
  switch (column) {
    case ScopeColumn::Rank: return count_cell(rank);
    case ScopeColumn::Name: return scope_cell(profile, s.name);
    case ScopeColumn::Calls: return count_cell(s.time.count);
    case ScopeColumn::Total: return duration_cell(s.total_ns);
    case ScopeColumn::TotalShare: return share_cell(s.total_ns, wholes.time);
    case ScopeColumn::Self: return duration_cell(s.self_ns);
    case ScopeColumn::SelfShare: return share_cell(s.self_ns, wholes.time);
    case ScopeColumn::Avg: return duration_cell(s.time.mean_ns);
    case ScopeColumn::AvgSelf: {
      const auto per_call = analysis::self_per_call(s);
      return per_call ? duration_cell(*per_call) : absent("n/a");
    }
    case ScopeColumn::Min: return duration_cell(s.time.min_ns);
    case ScopeColumn::Max: return duration_cell(s.time.max_ns);
    case ScopeColumn::P50: return duration_cell(s.time.p50_ns);
    case ScopeColumn::P95: return duration_cell(s.time.p95_ns);
    case ScopeColumn::P99: return duration_cell(s.time.p99_ns);
    // "-": the program reported no items for the scope, which 0 items/s would not say.
    case ScopeColumn::Items: return s.items > 0 ? count_cell(s.items) : absent("-");
    case ScopeColumn::Throughput: {
      const double rate = s.items_per_second();
      return s.items > 0 ? Cell::number(report::format_rate(rate, "items/s"), rate) : absent("-");
    }
    case ScopeColumn::Allocated: return bytes_cell(s.memory.alloc_bytes);
    case ScopeColumn::AllocShare: return share_cell(s.memory.alloc_bytes, wholes.allocations);
    case ScopeColumn::Allocs: return count_cell(s.memory.alloc_count);
    case ScopeColumn::AllocPerCall: {
      const auto per_call = analysis::alloc_bytes_per_call(s);
      return per_call ? bytes_cell(*per_call) : absent("n/a");
    }
    case ScopeColumn::HeapAllocated: return bytes_cell(s.heap.alloc_bytes);
    case ScopeColumn::HeapShare: return share_cell(s.heap.alloc_bytes, wholes.heap);
    case ScopeColumn::HeapAllocs: return count_cell(s.heap.alloc_count);
    case ScopeColumn::HeapPerCall: {
      const auto per_call = analysis::heap_bytes_per_call(s);
      return per_call ? bytes_cell(*per_call) : absent("n/a");
    }
    case ScopeColumn::HeapRetained:
      return Cell::number(bytes_in_blocks(s.heap.retained_bytes, s.heap.retained_blocks),
                          static_cast<double>(s.heap.retained_bytes));
    case ScopeColumn::HeapPeakLive: return bytes_cell(s.heap.peak_live_bytes);
    case ScopeColumn::GpuTime: {
      // "-": no GPU work was launched in it, which a duration of 0 ns would not say.
      const auto it = wholes.gpu_ns.find(s.name);
      return it == wholes.gpu_ns.end() ? absent("-") : duration_cell(it->second);
    }
  }
  return Cell::words("");
}

bool uses(const std::vector<ScopeColumn>& columns, ScopeColumn wanted) {
  for (const ScopeColumn column : columns) {
    if (column == wanted) return true;
  }
  return false;
}

}  // namespace

Cell duration_cell(std::uint64_t ns) { return Cell::number(report::format_duration(ns), static_cast<double>(ns)); }
Cell duration_cell(double ns) { return Cell::number(report::format_duration(ns), ns); }
Cell bytes_cell(std::uint64_t bytes) { return Cell::number(report::format_bytes(bytes), static_cast<double>(bytes)); }
Cell count_cell(std::uint64_t count) { return Cell::number(report::format_count(count), static_cast<double>(count)); }

Cell share_cell(std::uint64_t part, std::uint64_t whole) {
  // A share of nothing is not 0%: "n/a", sorted as 0, without a bar.
  if (whole == 0) return absent("n/a");
  return fraction_cell(static_cast<double>(part) / static_cast<double>(whole));
}

Cell fraction_cell(double fraction) {
  if (std::isnan(fraction)) return absent("n/a");
  return Cell::share(report::format_percent(fraction), fraction);
}

Cell name_cell(std::string_view shown, std::string_view full) {
  std::string capped = report::capped_name(shown);
  // The title shows what the cell cannot: the full form, or the name the cap cut. Both are
  // capped too, so that a 10 MB name costs a report no more than a page of text.
  std::string title = !full.empty()                   ? report::capped_name(full, report::kTextDisplayLimit)
                      : capped.size() != shown.size() ? report::capped_name(shown, report::kTextDisplayLimit)
                                                      : std::string();
  Cell cell = Cell::named(std::move(capped));
  cell.title = std::move(title);
  return cell;
}

Cell scope_cell(const Profile& profile, StringId name, std::string_view path) { return name_cell(profile.str(name), path); }

Cell rank_cell(std::size_t index) { return count_cell(index + 1); }
Cell not_known() { return absent("n/a"); }
Cell signed_bytes_cell(std::int64_t bytes) {
  return Cell::number(report::format_bytes(bytes), static_cast<double>(bytes));
}

Column left(std::string header, std::string key) { return {std::move(header), Align::Left, std::move(key)}; }
Column right(std::string header, std::string key) { return {std::move(header), Align::Right, std::move(key)}; }

void say_top_of(Section& section, std::size_t shown, std::size_t total, std::string_view noun) {
  if (shown < total) section.say(top_of(shown, total, noun));
}

Cell function_cell(std::string_view demangled, bool full_names) {
  std::string full = report::capped_name(demangled, report::kTextDisplayLimit);
  if (full_names) return Cell::named(std::move(full));
  return Cell::named(report::capped_name(analysis::readable_function(demangled)), std::move(full));
}


analysis::Sentence top_of(std::size_t shown, std::size_t total, std::string_view noun) {
  analysis::Sentence said;
  if (shown >= total) return said;
  said.words("Top ").count(shown).words(" of ").count(total).words(" ").words(noun).words(".");
  return said;
}

Findings findings_of(const std::vector<analysis::Bottleneck>& found, analysis::Sentence none) {
  Findings findings;
  findings.none = std::move(none);
  for (const analysis::Bottleneck& b : found) {
    findings.items.push_back(
        Finding{std::string(analysis::to_string(b.kind)), analysis::to_string(b.severity),
                std::string(analysis::title(b.kind)), b.description, b.suggestion});
  }
  return findings;
}

Table scope_table(const ReportData& data, std::string id, const std::vector<const ScopeStats*>& scopes,
                  std::initializer_list<ScopeColumn> columns) {
  const Profile& profile = *data.profile;
  std::vector<ScopeColumn> wanted(columns);
  if (profile.gpu.summary.traced && !uses(wanted, ScopeColumn::GpuTime)) wanted.push_back(ScopeColumn::GpuTime);
  Table table;
  table.id = std::move(id);
  for (const ScopeColumn column : wanted) table.columns.push_back(column_of(column));
  // Each whole only when a column needs it: they walk the whole profile.
  Wholes wholes;
  wholes.time = data.instrumented_ns;
  if (uses(wanted, ScopeColumn::AllocShare)) wholes.allocations = analysis::allocation_total(profile).bytes;
  wholes.heap = profile.heap.alloc_bytes;
  if (uses(wanted, ScopeColumn::GpuTime)) wholes.gpu_ns = report::gpu_time_by_scope(profile);
  std::size_t rank = 0;
  for (const ScopeStats* scope : scopes) {
    ++rank;
    std::vector<Cell> cells;
    cells.reserve(wanted.size());
    for (const ScopeColumn column : wanted) cells.push_back(scope_column_cell(profile, wholes, rank, *scope, column));
    table.row(std::move(cells));
  }
  return table;
}

}  // namespace nnprof::report
