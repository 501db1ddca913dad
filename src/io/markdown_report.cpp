#include "io/markdown_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/rankings.hpp"
#include "io/format.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

// Row limits follow the reports users know (top 30 hot paths, top 15 allocators and most
// called); a Markdown file is scrolled, not read on one terminal screen.
constexpr std::size_t kTopByTotal = 30;
constexpr std::size_t kTopBySelf = 30;
constexpr std::size_t kTopAllocators = 15;
constexpr std::size_t kTopCalled = 15;
constexpr std::size_t kConcentrationScopes = 5;
constexpr double kInflationFactor = 10.0;
// Insights name at most this many scopes each: a recommendation, not another table.
constexpr std::size_t kInsightScopes = 3;
constexpr std::uint64_t kHighFrequencyCalls = 1000;
// Same cut as the text report: deeper or longer trees are counted, not printed.
constexpr std::uint32_t kTreeMaxDepth = 12;
constexpr std::size_t kTreeMaxLines = 200;

constexpr std::string_view kNoScopesMessage =
    "No scopes were recorded: wrap code in `NNPROF_SCOPE(\"name\")` or "
    "`profiler.start`/`profiler.stop`.";

class PercentOf {
 public:
  explicit PercentOf(std::uint64_t denominator) : denominator_(denominator) {}
  std::string operator()(std::uint64_t value) const {
    if (denominator_ == 0) return "n/a";
    return format_percent(static_cast<double>(value) / static_cast<double>(denominator_));
  }

 private:
  std::uint64_t denominator_;
};

std::string plural(std::uint64_t count, std::string_view singular, std::string_view many) {
  return fmt::format("{} {}", format_count(count), count == 1 ? singular : many);
}

// A rate with its unit: thousands separators from 1,000 up, 3 significant digits below.
std::string format_rate(double per_second, std::string_view unit) {
  if (!std::isfinite(per_second)) return "n/a";
  if (per_second >= 1000.0) {
    return fmt::format("{} {}", format_count(static_cast<std::uint64_t>(std::llround(per_second))),
                       unit);
  }
  return fmt::format("{:.3g} {}", per_second, unit);
}

// A scope name as inline Markdown, bold so that it stands out in prose and list items
// (and so that a name starting with "-" or "#" cannot open a list or a heading).
std::string strong_name(const Profile& profile, StringId name) {
  return fmt::format("**{}**", markdown_escape(profile.str(name)));
}

void write_heading(std::ostream& out, std::string_view title) {
  out << "\n## " << title << "\n\n";
}

// A line under a heading when a ranking shows only part of the scopes.
void write_ranking_note(std::ostream& out, std::size_t shown, std::size_t total) {
  if (shown < total) out << fmt::format("Top {} of {} scopes.\n\n", shown, total);
}

// A GitHub-flavoured table of `table`'s cells, escaped, padded so that the raw file reads
// as a table too. Right-aligned columns get a "--:" rule.
void write_table(const TextTable& table, std::ostream& out) {
  const std::vector<TableColumn>& columns = table.columns();
  std::vector<std::string> header;
  std::vector<std::vector<std::string>> rows;
  std::vector<std::size_t> widths;
  for (const TableColumn& column : columns) {
    header.push_back(markdown_escape(column.header));
    widths.push_back(std::max<std::size_t>(3, display_width(header.back())));
  }
  for (const auto& row : table.rows()) {
    std::vector<std::string> escaped;
    for (std::size_t i = 0; i < row.size(); ++i) {
      escaped.push_back(markdown_escape(row[i]));
      widths[i] = std::max(widths[i], display_width(escaped.back()));
    }
    rows.push_back(std::move(escaped));
  }
  const auto write_row = [&](const std::vector<std::string>& cells) {
    std::string line = "|";
    for (std::size_t i = 0; i < cells.size(); ++i) {
      const std::string padding(widths[i] - display_width(cells[i]), ' ');
      line += ' ';
      line += columns[i].align == Align::Right ? padding + cells[i] : cells[i] + padding;
      line += " |";
    }
    out << line << '\n';
  };
  write_row(header);
  std::string rule = "|";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    rule += ' ';
    rule += columns[i].align == Align::Right ? std::string(widths[i] - 1, '-') + ":"
                                             : std::string(widths[i], '-');
    rule += " |";
  }
  out << rule << '\n';
  for (const auto& row : rows) write_row(row);
}

// ---- system information -------------------------------------------------------------

std::string or_unknown(const std::string& value) { return value.empty() ? "unknown" : value; }

void write_system_information(const Profile& profile, std::uint64_t instrumented_ns,
                              std::ostream& out) {
  const Metadata& meta = profile.meta;
  write_heading(out, "System information");
  TextTable table({{"Property", Align::Left}, {"Value", Align::Left}});
  table.add_row({"Host", or_unknown(meta.hostname)});
  table.add_row({"OS", or_unknown(meta.os)});
  table.add_row({"CPU", or_unknown(meta.cpu_model)});
  table.add_row({"Logical CPUs", meta.logical_cpus == 0 ? "unknown" : format_count(meta.logical_cpus)});
  table.add_row({"Compiler", or_unknown(meta.compiler)});
  table.add_row({"Command line", or_unknown(meta.command_line)});
  if (meta.pid != 0) table.add_row({"Process ID", std::to_string(meta.pid)});
  if (!meta.nnprof_version.empty()) table.add_row({"nnprof version", meta.nnprof_version});
  table.add_row({"Session duration", format_duration(meta.duration_ns)});
  table.add_row({"Clock source", fmt::format("{}, {:.4g} ns per tick", meta.clock.source,
                                             meta.clock.ns_per_tick)});
  table.add_row({"Threads", format_count(profile.threads.size())});
  table.add_row({"Instrumented time", format_duration(instrumented_ns)});
  write_table(table, out);
  out << "\nInstrumented time is the sum over threads of top-level scope time: the denominator "
         "of every \"% of instrumented time\" below.\n";
}

// ---- rankings -----------------------------------------------------------------------

void write_hot_by_total(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const auto top = analysis::top_by_total(profile, kTopByTotal);
  write_heading(out, "Hot paths by time");
  write_ranking_note(out, top.size(), profile.scopes.size());
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Total", Align::Right},
                   {"% of instrumented time", Align::Right},
                   {"Calls", Align::Right},
                   {"Avg", Align::Right},
                   {"Min", Align::Right},
                   {"Max", Align::Right},
                   {"p95", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_duration(scope->total_ns), percent(scope->total_ns),
                   format_count(scope->time.count), format_duration(scope->time.mean_ns),
                   format_duration(scope->time.min_ns), format_duration(scope->time.max_ns),
                   format_duration(scope->time.p95_ns)});
  }
  write_table(table, out);
}

std::string avg_self(const ScopeStats& scope) {
  if (scope.time.count == 0) return "n/a";
  return format_duration(static_cast<double>(scope.self_ns) /
                         static_cast<double>(scope.time.count));
}

void write_hot_by_self(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const auto top = analysis::top_by_self(profile, kTopBySelf);
  write_heading(out, "Hot paths by self time");
  write_ranking_note(out, top.size(), profile.scopes.size());
  out << "Self time is time in the scope itself, not in the scopes it opened.\n\n";
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Self", Align::Right},
                   {"% of instrumented time", Align::Right},
                   {"Calls", Align::Right},
                   {"Avg self", Align::Right},
                   {"Total", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_duration(scope->self_ns), percent(scope->self_ns),
                   format_count(scope->time.count), avg_self(*scope),
                   format_duration(scope->total_ns)});
  }
  write_table(table, out);
}

// Every byte allocated: by the named counters, or attributed to scopes if that is more (a
// collector may attribute allocations to scopes without feeding a named counter).
struct AllocationTotal {
  std::uint64_t bytes = 0;
  bool from_counters = true;
};

AllocationTotal allocation_total(const Profile& profile) {
  std::uint64_t counters = 0;
  for (const MemoryCounter& counter : profile.memory_counters) counters += counter.alloc_bytes;
  std::uint64_t scopes = 0;
  for (const ScopeStats& scope : profile.scopes) scopes += scope.memory.alloc_bytes;
  if (counters >= scopes) return {counters, true};
  return {scopes, false};
}

std::string bytes_per_call(const ScopeStats& scope) {
  if (scope.time.count == 0) return "n/a";
  return format_bytes(scope.memory.alloc_bytes / scope.time.count);
}

void write_top_allocators(const Profile& profile, std::ostream& out) {
  const auto top = analysis::top_by_alloc_bytes(profile, kTopAllocators);
  if (top.empty()) return;
  std::size_t allocating = 0;
  for (const ScopeStats& scope : profile.scopes) allocating += scope.memory.alloc_bytes > 0 ? 1 : 0;
  const AllocationTotal total = allocation_total(profile);
  const PercentOf percent(total.bytes);
  write_heading(out, "Top allocators");
  write_ranking_note(out, top.size(), allocating);
  out << fmt::format(
      "Bytes allocated while the scope was the innermost open one. Percentages are of {} {}.\n\n",
      format_bytes(total.bytes),
      total.from_counters ? "allocated in all (every memory counter, inside scopes or not)"
                          : "allocated inside scopes");
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Allocated", Align::Right},
                   {"% of all allocations", Align::Right},
                   {"Allocations", Align::Right},
                   {"Avg per call", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_bytes(scope->memory.alloc_bytes), percent(scope->memory.alloc_bytes),
                   format_count(scope->memory.alloc_count), bytes_per_call(*scope)});
  }
  write_table(table, out);
}

void write_throughput(const Profile& profile, std::ostream& out) {
  TextTable table({{"Scope", Align::Left},
                   {"Items", Align::Right},
                   {"Total", Align::Right},
                   {"Throughput", Align::Right}});
  for (const ScopeStats& scope : profile.scopes) {
    if (scope.items == 0) continue;
    table.add_row({profile.str(scope.name), format_count(scope.items),
                   format_duration(scope.total_ns),
                   format_rate(scope.items_per_second(), "items/s")});
  }
  if (table.empty()) return;
  write_heading(out, "Throughput");
  out << "Work items the program reported for a scope, per second of its total time.\n\n";
  write_table(table, out);
}

void write_most_called(const Profile& profile, std::ostream& out) {
  const auto top = analysis::most_called(profile, kTopCalled);
  write_heading(out, "Most called");
  write_ranking_note(out, top.size(), profile.scopes.size());
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"Avg", Align::Right},
                   {"Self", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_count(scope->time.count), format_duration(scope->total_ns),
                   format_duration(scope->time.mean_ns), format_duration(scope->self_ns)});
  }
  write_table(table, out);
}

// ---- call hierarchy -----------------------------------------------------------------

// Children of `node` that exist, longest total time first, equal times by name.
std::vector<std::uint32_t> sorted_children(const Profile& profile, const CallTreeNode& node) {
  std::vector<std::uint32_t> children;
  for (const std::uint32_t child : node.children) {
    if (child < profile.call_tree.size() && child != 0) children.push_back(child);
  }
  std::sort(children.begin(), children.end(), [&](std::uint32_t a, std::uint32_t b) {
    const CallTreeNode& na = profile.call_tree[a];
    const CallTreeNode& nb = profile.call_tree[b];
    if (na.time.sum_ns != nb.time.sum_ns) return na.time.sum_ns > nb.time.sum_ns;
    return profile.str(na.name) < profile.str(nb.name);
  });
  return children;
}

std::string tree_item(const Profile& profile, const PercentOf& percent, const CallTreeNode& node,
                      std::uint32_t level) {
  // Two spaces per level: a nested "- " item must start within its parent's content column.
  return fmt::format("{}- {}: {}, total {} ({}), self {}, avg {}\n",
                     std::string(2 * static_cast<std::size_t>(level - 1), ' '),
                     strong_name(profile, node.name), plural(node.time.count, "call", "calls"),
                     format_duration(node.time.sum_ns), percent(node.time.sum_ns),
                     format_duration(node.self_ns), format_duration(node.time.mean_ns));
}

// Depth-first with an explicit stack (trees can be 255 deep); every non-root node is
// either written or counted once. `visited` guards against a malformed tree with a cycle.
void write_call_hierarchy(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Call hierarchy");
  if (profile.call_tree.empty()) {
    out << "No call tree was recorded.\n";
    return;
  }
  out << "Merged over all threads; children by total time; percentages of instrumented time.\n\n";
  std::size_t too_deep = 0;
  std::size_t over_line_cap = 0;
  std::size_t lines = 0;
  std::vector<bool> visited(profile.call_tree.size(), false);
  struct Pending {
    std::uint32_t node;
    std::uint32_t level;
  };
  std::vector<Pending> stack;
  const auto push_children = [&](std::uint32_t node, std::uint32_t level) {
    const auto children = sorted_children(profile, profile.call_tree[node]);
    for (auto it = children.rbegin(); it != children.rend(); ++it) stack.push_back({*it, level + 1});
  };
  visited[0] = true;
  push_children(0, 0);
  while (!stack.empty()) {
    const Pending next = stack.back();
    stack.pop_back();
    if (visited[next.node]) continue;
    visited[next.node] = true;
    if (next.level > kTreeMaxDepth) {
      ++too_deep;
    } else if (lines >= kTreeMaxLines) {
      ++over_line_cap;
    } else {
      out << tree_item(profile, percent, profile.call_tree[next.node], next.level);
      ++lines;
    }
    push_children(next.node, next.level);
  }
  if (too_deep + over_line_cap == 0) return;
  std::vector<std::string> reasons;
  if (too_deep > 0) {
    reasons.push_back(fmt::format("{} deeper than {} levels", format_count(too_deep), kTreeMaxDepth));
  }
  if (over_line_cap > 0) {
    reasons.push_back(
        fmt::format("{} beyond the first {} lines", format_count(over_line_cap), kTreeMaxLines));
  }
  out << fmt::format("\n{} not shown: {}.\n", plural(too_deep + over_line_cap, "node", "nodes"),
                     fmt::join(reasons, ", "));
}

// ---- threads, memory ----------------------------------------------------------------

void write_threads(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Threads");
  TextTable table({{"Thread", Align::Left},
                   {"TID", Align::Right},
                   {"Scopes", Align::Right},
                   {"Top-level time", Align::Right},
                   {"% of instrumented time", Align::Right},
                   {"State", Align::Left}});
  for (const ThreadInfo& t : profile.threads) {
    table.add_row({t.name.empty() ? "[unnamed]" : t.name, std::to_string(t.os_tid),
                   format_count(t.scopes_recorded), format_duration(t.top_level_ns),
                   percent(t.top_level_ns), t.exited ? "exited" : "running"});
  }
  write_table(table, out);
}

void write_memory_counters(const Profile& profile, std::ostream& out) {
  write_heading(out, "Memory counters");
  TextTable table({{"Counter", Align::Left},
                   {"Current", Align::Right},
                   {"Peak", Align::Right},
                   {"Allocated", Align::Right},
                   {"Freed", Align::Right},
                   {"Allocations", Align::Right},
                   {"Frees", Align::Right}});
  for (const MemoryCounter& counter : profile.memory_counters) {
    table.add_row({profile.str(counter.name), format_bytes(counter.current_bytes),
                   format_bytes(counter.peak_bytes), format_bytes(counter.alloc_bytes),
                   format_bytes(counter.freed_bytes), format_count(counter.alloc_count),
                   format_count(counter.free_count)});
  }
  write_table(table, out);
  out << fmt::format("\nAll counters together: current {}, peak {} at {} after the session start.\n",
                     format_bytes(profile.memory.current_bytes),
                     format_bytes(profile.memory.peak_bytes),
                     format_duration(profile.memory.peak_time_ns));
}

// ---- insights -----------------------------------------------------------------------

std::string concentration_insight(const Profile& profile) {
  const analysis::Concentration c = analysis::hot_path_concentration(profile, kConcentrationScopes);
  const std::string share = format_percent(c.share);
  if (c.top_n == 1) {
    return fmt::format("The only scope accounts for {} of instrumented time by self time.", share);
  }
  return fmt::format("Top {} scopes by self time account for {} of instrumented time.", c.top_n,
                     share);
}

std::string hottest_self_insight(const Profile& profile, const PercentOf& percent) {
  const ScopeStats& hottest = *analysis::top_by_self(profile, 1).front();
  return fmt::format("Highest self time: {}, {} ({} of instrumented time) in {}.",
                     strong_name(profile, hottest.name), format_duration(hottest.self_ns),
                     percent(hottest.self_ns), plural(hottest.time.count, "call", "calls"));
}

std::string inflation_insight(const Profile& profile) {
  const double overhead = profile.completeness.overhead_per_scope_ns;
  if (!(overhead > 0.0)) {
    return "Instrumentation overhead was not measured, so timings inflated by it cannot be "
           "flagged.";
  }
  const auto inflated = analysis::inflated_by_instrumentation(profile, kInflationFactor);
  if (inflated.empty()) {
    return fmt::format(
        "No scope is short enough for instrumentation cost ({} per scope) to dominate its timing.",
        format_duration(overhead));
  }
  std::vector<std::string> names;
  for (const ScopeStats* scope : inflated) names.push_back(strong_name(profile, scope->name));
  return fmt::format(
      "Timings dominated by instrumentation cost (mean below {:g} × {} = {} per call): {}.",
      kInflationFactor, format_duration(overhead), format_duration(kInflationFactor * overhead),
      fmt::join(names, ", "));
}

// Empty when no allocation was attributed to a scope.
std::string allocation_insight(const Profile& profile) {
  const auto top = analysis::top_by_alloc_bytes(profile, kInsightScopes);
  if (top.empty()) return {};
  const PercentOf percent(allocation_total(profile).bytes);
  std::vector<std::string> parts;
  for (const ScopeStats* scope : top) {
    parts.push_back(fmt::format("{} {} ({} of all allocations, {} per call)",
                                strong_name(profile, scope->name),
                                format_bytes(scope->memory.alloc_bytes),
                                percent(scope->memory.alloc_bytes), bytes_per_call(*scope)));
  }
  return fmt::format(
      "Highest allocation: {}. Allocating on every call costs time and memory pressure: "
      "consider reusing buffers (a pool or a preallocated workspace).",
      fmt::join(parts, "; "));
}

std::string frequency_insight(const Profile& profile) {
  std::vector<std::string> parts;
  for (const ScopeStats* scope : analysis::most_called(profile, kInsightScopes)) {
    if (scope->time.count < kHighFrequencyCalls) break;
    std::string rate;
    if (profile.meta.duration_ns > 0) {
      const double per_second = static_cast<double>(scope->time.count) * 1e9 /
                                static_cast<double>(profile.meta.duration_ns);
      rate = fmt::format(", {} over the session", format_rate(per_second, "calls/s"));
    }
    parts.push_back(fmt::format("{} {}{}, {} per call", strong_name(profile, scope->name),
                                plural(scope->time.count, "call", "calls"), rate,
                                format_duration(scope->time.mean_ns)));
  }
  if (parts.empty()) {
    return fmt::format("No scope was called {} times or more.", format_count(kHighFrequencyCalls));
  }
  return fmt::format(
      "High call frequency: {}. Per-call costs add up: consider batching the work into fewer "
      "calls or caching results.",
      fmt::join(parts, "; "));
}

void write_insights(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Insights");
  out << "- " << concentration_insight(profile) << '\n';
  out << "- " << hottest_self_insight(profile, percent) << '\n';
  out << "- " << inflation_insight(profile) << '\n';
  if (const std::string allocation = allocation_insight(profile); !allocation.empty()) {
    out << "- " << allocation << '\n';
  }
  out << "- " << frequency_insight(profile) << '\n';
}

// ---- completeness, diagnostics ------------------------------------------------------

std::string spans_cell(const Completeness& c) {
  if (!c.spans_enabled) return "statistics only: no timeline recorded";
  const std::string policy = c.buffer_policy.empty() ? "unknown" : c.buffer_policy;
  const std::string cap = c.memory_cap_bytes == 0 ? "none" : format_bytes(c.memory_cap_bytes);
  return fmt::format("{} kept, {} dropped, {} overwritten (policy {}, memory cap {})",
                     format_count(c.spans_kept), format_count(c.spans_dropped),
                     format_count(c.spans_overwritten), policy, cap);
}

std::string overhead_cell(const Completeness& c, const PercentOf& percent) {
  if (!(c.overhead_per_scope_ns > 0.0)) return "not measured";
  return fmt::format("{} per scope × {} = {} ({} of instrumented time)",
                     format_duration(c.overhead_per_scope_ns),
                     plural(c.scopes_recorded, "scope", "scopes"),
                     format_duration(c.overhead_total_ns), percent(c.overhead_total_ns));
}

void write_completeness(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const Completeness& c = profile.completeness;
  write_heading(out, "Completeness and cost");
  TextTable table({{"Measure", Align::Left}, {"Value", Align::Left}});
  table.add_row({"Scopes recorded", format_count(c.scopes_recorded)});
  table.add_row({"Spans", spans_cell(c)});
  table.add_row({"Events dropped", plural(c.events_dropped, "memory event", "memory events")});
  table.add_row({"Hot-path buffer allocations",
                 plural(c.hot_path_allocations, "buffer of 64 KiB", "buffers of 64 KiB")});
  table.add_row({"Instrumentation", overhead_cell(c, percent)});
  write_table(table, out);
  out << "\nStatistics and the call tree are complete: they count every recorded scope, even "
         "when spans were dropped or overwritten.\n";
}

std::string thread_cell(const Profile& profile, std::uint32_t thread) {
  if (thread == kNone) return "n/a";
  if (thread >= profile.threads.size()) return fmt::format("#{}", thread);
  const ThreadInfo& t = profile.threads[thread];
  return fmt::format("{} (TID {})", t.name.empty() ? "[unnamed]" : t.name, t.os_tid);
}

void write_diagnostics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Diagnostics");
  if (profile.diagnostics.empty()) {
    out << "None.\n";
    return;
  }
  TextTable table({{"Severity", Align::Left},
                   {"Kind", Align::Left},
                   {"Thread", Align::Left},
                   {"Scope or counter", Align::Left},
                   {"Count", Align::Right},
                   {"Message", Align::Left}});
  for (const Diagnostic& d : profile.diagnostics) {
    table.add_row({to_string(d.severity), to_string(d.kind), thread_cell(profile, d.thread),
                   d.name == kNone ? "n/a" : profile.str(d.name), format_count(d.count),
                   d.message});
  }
  write_table(table, out);
}

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
          out += fmt::format("\\\\x{:02x}", byte);
        } else {
          out += c;
        }
    }
  }
  return out;
}

void write_markdown_report(const Profile& profile, std::ostream& out) {
  const std::uint64_t instrumented_ns = profile.instrumented_ns();
  const PercentOf percent(instrumented_ns);
  out << "# nnprof report\n";
  write_system_information(profile, instrumented_ns, out);
  if (profile.scopes.empty()) {
    out << '\n' << kNoScopesMessage << '\n';
  } else {
    write_hot_by_total(profile, percent, out);
    write_hot_by_self(profile, percent, out);
    write_top_allocators(profile, out);
    write_throughput(profile, out);
    write_most_called(profile, out);
    write_call_hierarchy(profile, percent, out);
    write_threads(profile, percent, out);
  }
  if (!profile.memory_counters.empty()) write_memory_counters(profile, out);
  if (!profile.scopes.empty()) write_insights(profile, percent, out);
  // As in the text report: an empty profile's zeros are noise, its diagnostics may not be.
  if (!profile.empty()) write_completeness(profile, percent, out);
  if (!profile.empty() || !profile.diagnostics.empty()) write_diagnostics(profile, out);
}

void MarkdownExporter::write(const Profile& profile, std::ostream& out) const {
  write_markdown_report(profile, out);
  if (!out) throw Error("could not write the Markdown report: the output stream failed");
}

}  // namespace nnprof::io
