#include "io/text_report.hpp"

#include <algorithm>
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

constexpr std::size_t kTopByTotal = 15;
constexpr std::size_t kTopBySelf = 15;
constexpr std::size_t kTopCalled = 10;
constexpr std::size_t kTopAllocating = 10;
constexpr std::size_t kConcentrationScopes = 5;
constexpr double kInflationFactor = 10.0;
// Beyond these the tree stops being readable in a terminal; the nodes left out are counted
// and the count printed, so a reader knows the tree is cut.
constexpr std::uint32_t kTreeMaxDepth = 12;
constexpr std::size_t kTreeMaxLines = 200;

constexpr std::string_view kNoScopesMessage =
    "No scopes were recorded: wrap code in NNPROF_SCOPE(\"name\") or profiler.start/stop.";

// Percentages of instrumented time. The denominator is computed once per report: how
// costly Profile::instrumented_ns() is, is the model's business, and rows are many.
class PercentOf {
 public:
  explicit PercentOf(std::uint64_t instrumented_ns) : instrumented_ns_(instrumented_ns) {}
  std::string operator()(std::uint64_t ns) const {
    if (instrumented_ns_ == 0) return "n/a";
    return format_percent(static_cast<double>(ns) / static_cast<double>(instrumented_ns_));
  }

 private:
  std::uint64_t instrumented_ns_;
};

std::string plural(std::uint64_t count, std::string_view singular, std::string_view many) {
  return fmt::format("{} {}", format_count(count), count == 1 ? singular : many);
}

void write_heading(std::ostream& out, std::string_view title) {
  out << '\n' << title << '\n' << std::string(display_width(title), '-') << '\n';
}

// A heading that says when a ranking shows only part of the scopes.
std::string ranking_title(std::string_view title, std::size_t shown, std::size_t total) {
  if (shown >= total) return std::string(title);
  return fmt::format("{} (top {} of {} scopes)", title, shown, total);
}

void write_field(std::ostream& out, std::string_view key, std::string_view value) {
  out << fmt::format("  {:<20}{}\n", fmt::format("{}:", key), value);
}

// ---- header -------------------------------------------------------------------------

void write_header(const Profile& profile, std::uint64_t instrumented_ns, std::ostream& out) {
  const Metadata& meta = profile.meta;
  out << "nnprof summary\n==============\n";
  std::string host = meta.hostname.empty() ? "unknown" : meta.hostname;
  if (!meta.os.empty()) host += fmt::format(" ({})", meta.os);
  write_field(out, "Host", host);
  std::string cpu = meta.cpu_model.empty() ? "unknown" : meta.cpu_model;
  if (meta.logical_cpus > 0) {
    cpu += fmt::format(", {}", plural(meta.logical_cpus, "logical CPU", "logical CPUs"));
  }
  write_field(out, "CPU", cpu);
  if (!meta.command_line.empty()) write_field(out, "Command", meta.command_line);
  write_field(out, "Threads", format_count(profile.threads.size()));
  write_field(out, "Session duration", format_duration(meta.duration_ns));
  write_field(out, "Clock source",
              fmt::format("{}, {:.4g} ns per tick", meta.clock.source, meta.clock.ns_per_tick));
  write_field(out, "Instrumented time", format_duration(instrumented_ns));
  out << "  (the sum over threads of top-level scope time; the denominator of every % below)\n";
}

// ---- rankings -----------------------------------------------------------------------

void write_hot_by_total(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const auto top = analysis::top_by_total(profile, kTopByTotal);
  write_heading(out, ranking_title("Hot paths by total time", top.size(), profile.scopes.size()));
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"% instr", Align::Right},
                   {"Avg", Align::Right},
                   {"Min", Align::Right},
                   {"Max", Align::Right},
                   {"p95", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_count(scope->time.count), format_duration(scope->total_ns),
                   percent(scope->total_ns),
                   format_duration(scope->time.mean_ns), format_duration(scope->time.min_ns),
                   format_duration(scope->time.max_ns), format_duration(scope->time.p95_ns)});
  }
  table.write(out);
}

// Self time per call; a scope with no calls has none.
std::string avg_self(const ScopeStats& scope) {
  if (scope.time.count == 0) return "n/a";
  return format_duration(static_cast<double>(scope.self_ns) /
                         static_cast<double>(scope.time.count));
}

void write_hot_by_self(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const auto top = analysis::top_by_self(profile, kTopBySelf);
  write_heading(out, ranking_title("Hot paths by self time", top.size(), profile.scopes.size()));
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Self", Align::Right},
                   {"% instr", Align::Right},
                   {"Calls", Align::Right},
                   {"Avg self", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_duration(scope->self_ns),
                   percent(scope->self_ns),
                   format_count(scope->time.count), avg_self(*scope)});
  }
  table.write(out);
}

void write_most_called(const Profile& profile, std::ostream& out) {
  const auto top = analysis::most_called(profile, kTopCalled);
  write_heading(out, ranking_title("Most called", top.size(), profile.scopes.size()));
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"Avg", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_count(scope->time.count), format_duration(scope->total_ns),
                   format_duration(scope->time.mean_ns)});
  }
  table.write(out);
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

struct TreeOmissions {
  std::size_t too_deep = 0;
  std::size_t over_line_cap = 0;
};

void add_tree_row(const Profile& profile, const PercentOf& percent, const CallTreeNode& node,
                  std::uint32_t level, TextTable& table) {
  const std::string indent(2 * static_cast<std::size_t>(level - 1), ' ');
  table.add_row({indent + profile.str(node.name), format_count(node.time.count),
                 format_duration(node.time.sum_ns), format_duration(node.self_ns),
                 format_duration(node.time.mean_ns), format_duration(node.time.min_ns),
                 format_duration(node.time.max_ns),
                 percent(node.time.sum_ns)});
}

// Depth-first, so that each node prints under its parent. Every non-root node is either
// printed or counted in exactly one omission bucket. `visited` guards against a malformed
// tree (from a file) whose child links form a cycle.
TreeOmissions fill_tree_table(const Profile& profile, const PercentOf& percent, TextTable& table) {
  TreeOmissions omitted;
  std::vector<bool> visited(profile.call_tree.size(), false);
  struct Pending {
    std::uint32_t node;
    std::uint32_t level;
  };
  std::vector<Pending> stack;
  const auto push_children = [&](std::uint32_t node, std::uint32_t level) {
    const auto children = sorted_children(profile, profile.call_tree[node]);
    // Pushed in reverse so that the longest child is popped, and printed, first.
    for (auto it = children.rbegin(); it != children.rend(); ++it) {
      stack.push_back({*it, level + 1});
    }
  };
  visited[0] = true;
  push_children(0, 0);
  while (!stack.empty()) {
    const Pending next = stack.back();
    stack.pop_back();
    if (visited[next.node]) continue;
    visited[next.node] = true;
    if (next.level > kTreeMaxDepth) {
      ++omitted.too_deep;
    } else if (table.rows().size() >= kTreeMaxLines) {
      ++omitted.over_line_cap;
    } else {
      add_tree_row(profile, percent, profile.call_tree[next.node], next.level, table);
    }
    push_children(next.node, next.level);
  }
  return omitted;
}

void write_call_hierarchy(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Call hierarchy");
  if (profile.call_tree.empty()) {
    out << "  No call tree was recorded.\n";
    return;
  }
  out << "  Merged over all threads; two spaces of indent per level; children by total time.\n";
  TextTable table({{"Scope", Align::Left},
                   {"Calls", Align::Right},
                   {"Total", Align::Right},
                   {"Self", Align::Right},
                   {"Avg", Align::Right},
                   {"Min", Align::Right},
                   {"Max", Align::Right},
                   {"% instr", Align::Right}});
  const TreeOmissions omitted = fill_tree_table(profile, percent, table);
  table.write(out);
  const std::size_t total_omitted = omitted.too_deep + omitted.over_line_cap;
  if (total_omitted == 0) return;
  std::vector<std::string> reasons;
  if (omitted.too_deep > 0) {
    reasons.push_back(fmt::format("{} deeper than {} levels", format_count(omitted.too_deep),
                                  kTreeMaxDepth));
  }
  if (omitted.over_line_cap > 0) {
    reasons.push_back(fmt::format("{} beyond the first {} lines",
                                  format_count(omitted.over_line_cap), kTreeMaxLines));
  }
  out << fmt::format("  {} not shown: {}.\n", plural(total_omitted, "node", "nodes"),
                     fmt::join(reasons, ", "));
}

// ---- memory -------------------------------------------------------------------------

void write_memory_counters(const Profile& profile, std::ostream& out) {
  TextTable table({{"Counter", Align::Left},
                   {"Current", Align::Right},
                   {"Peak", Align::Right},
                   {"Allocated", Align::Right},
                   {"Freed", Align::Right},
                   {"Allocs", Align::Right},
                   {"Frees", Align::Right}});
  for (const MemoryCounter& counter : profile.memory_counters) {
    table.add_row({profile.str(counter.name), format_bytes(counter.current_bytes),
                   format_bytes(counter.peak_bytes), format_bytes(counter.alloc_bytes),
                   format_bytes(counter.freed_bytes), format_count(counter.alloc_count),
                   format_count(counter.free_count)});
  }
  table.write(out);
  out << fmt::format("  All counters: current {}, peak {} at {} after the session start.\n",
                     format_bytes(profile.memory.current_bytes),
                     format_bytes(profile.memory.peak_bytes),
                     format_duration(profile.memory.peak_time_ns));
}

void write_top_allocating(const Profile& profile, std::ostream& out) {
  const auto top = analysis::top_by_alloc_bytes(profile, kTopAllocating);
  if (top.empty()) return;
  out << "\n  Top allocating scopes (bytes allocated while the scope was the innermost open "
         "one):\n";
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {"Allocated", Align::Right},
                   {"Allocs", Align::Right},
                   {"Avg per call", Align::Right}});
  std::size_t rank = 0;
  for (const ScopeStats* scope : top) {
    const std::uint64_t calls = scope->time.count;
    table.add_row({std::to_string(++rank), profile.str(scope->name),
                   format_bytes(scope->memory.alloc_bytes), format_count(scope->memory.alloc_count),
                   calls == 0 ? "n/a" : format_bytes(scope->memory.alloc_bytes / calls)});
  }
  table.write(out);
}

void write_memory(const Profile& profile, std::ostream& out) {
  write_heading(out, "Memory");
  write_memory_counters(profile, out);
  write_top_allocating(profile, out);
}

// ---- insights -----------------------------------------------------------------------

std::string concentration_insight(const Profile& profile) {
  const analysis::Concentration c = analysis::hot_path_concentration(profile, kConcentrationScopes);
  const std::string share = format_percent(c.share);
  if (c.top_n == 1) {
    return fmt::format("The only scope accounts for {} of instrumented time by self time.", share);
  }
  return fmt::format("The top {} scopes by self time account for {} of instrumented time.",
                     c.top_n, share);
}

std::string hottest_self_insight(const Profile& profile, const PercentOf& percent) {
  const ScopeStats& hottest = *analysis::top_by_self(profile, 1).front();
  return fmt::format("Highest self time: {}, {} ({} of instrumented time).",
                     profile.str(hottest.name), format_duration(hottest.self_ns),
                     percent(hottest.self_ns));
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
  for (const ScopeStats* scope : inflated) names.push_back(profile.str(scope->name));
  return fmt::format(
      "Timings dominated by instrumentation cost (mean below {:g} × {} = {} per call): {}.",
      kInflationFactor, format_duration(overhead), format_duration(kInflationFactor * overhead),
      fmt::join(names, ", "));
}

void write_insights(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Insights");
  out << "  - " << concentration_insight(profile) << '\n';
  out << "  - " << hottest_self_insight(profile, percent) << '\n';
  out << "  - " << inflation_insight(profile) << '\n';
}

// ---- completeness, diagnostics ------------------------------------------------------

std::string spans_line(const Completeness& c) {
  if (!c.spans_enabled) return "statistics only: no timeline recorded";
  std::string line = fmt::format("{} kept, {} dropped, {} overwritten", format_count(c.spans_kept),
                                 format_count(c.spans_dropped), format_count(c.spans_overwritten));
  const std::string policy = c.buffer_policy.empty() ? "unknown" : c.buffer_policy;
  const std::string cap = c.memory_cap_bytes == 0 ? "none" : format_bytes(c.memory_cap_bytes);
  return line + fmt::format(" (policy {}, memory cap {})", policy, cap);
}

std::string overhead_line(const Profile& profile, const PercentOf& percent) {
  const Completeness& c = profile.completeness;
  if (!(c.overhead_per_scope_ns > 0.0)) return "not measured";
  return fmt::format("{} per scope × {} = {} ({} of instrumented time)",
                     format_duration(c.overhead_per_scope_ns),
                     plural(c.scopes_recorded, "scope", "scopes"),
                     format_duration(c.overhead_total_ns),
                     percent(c.overhead_total_ns));
}

void write_completeness(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  const Completeness& c = profile.completeness;
  write_heading(out, "Completeness and cost");
  write_field(out, "Scopes recorded", format_count(c.scopes_recorded));
  write_field(out, "Spans", spans_line(c));
  write_field(out, "Events dropped", plural(c.events_dropped, "memory event", "memory events"));
  write_field(out, "Instrumentation", overhead_line(profile, percent));
  out << "  Statistics and the call tree are complete: they count every recorded scope, even when\n"
         "  spans were dropped or overwritten.\n";
}

// Which threads did the work: the first thing to check in a multi-threaded program.
void write_threads(const Profile& profile, const PercentOf& percent, std::ostream& out) {
  write_heading(out, "Threads");
  TextTable table({{"Thread", Align::Left},
                   {"TID", Align::Right},
                   {"Scopes", Align::Right},
                   {"Top-level time", Align::Right},
                   {"%", Align::Right},
                   {"State", Align::Left}});
  for (const ThreadInfo& t : profile.threads) {
    table.add_row({t.name.empty() ? "[unnamed]" : t.name, std::to_string(t.os_tid), format_count(t.scopes_recorded),
                   format_duration(t.top_level_ns), percent(t.top_level_ns), t.exited ? "exited" : "running"});
  }
  table.write(out);
}

void write_diagnostics(const Profile& profile, std::ostream& out) {
  write_heading(out, "Diagnostics");
  if (profile.diagnostics.empty()) {
    out << "  none\n";
    return;
  }
  for (const Diagnostic& d : profile.diagnostics) {
    out << fmt::format("  [{}] {}\n", to_string(d.severity), d.message);
  }
}

}  // namespace

void write_text_report(const Profile& profile, std::ostream& out) {
  const std::uint64_t instrumented_ns = profile.instrumented_ns();
  const PercentOf percent(instrumented_ns);
  write_header(profile, instrumented_ns, out);
  if (profile.scopes.empty()) {
    out << '\n' << kNoScopesMessage << '\n';
  } else {
    write_hot_by_total(profile, percent, out);
    write_hot_by_self(profile, percent, out);
    write_most_called(profile, out);
    write_call_hierarchy(profile, percent, out);
    write_threads(profile, percent, out);
  }
  if (!profile.memory_counters.empty()) write_memory(profile, out);
  if (!profile.scopes.empty()) write_insights(profile, percent, out);
  // Zeros in an empty profile would only be noise; its diagnostics may say why it is empty.
  if (!profile.empty()) write_completeness(profile, percent, out);
  if (!profile.empty() || !profile.diagnostics.empty()) write_diagnostics(profile, out);
}

void TextExporter::write(const Profile& profile, std::ostream& out) const {
  write_text_report(profile, out);
  if (!out) throw Error("could not write the text report: the output stream failed");
}

}  // namespace nnprof::io
