// CPU samples: how sampling ran, the flame graph, the hottest functions and who calls them,
// hot lines, each scope's samples, and what to fix. Percentages are of the samples.
#include <algorithm>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/cpu_profile.hpp"
#include "analysis/function_name.hpp"
#include "report/charts/html_charts.hpp"
#include "report/cells.hpp"
#include "report/sections.hpp"

namespace nnprof::report::sections {
namespace {

// "called from a (9 samples, 100.0%), b (...); calls c (4 samples, 44.4%)": who calls a function
// and whom it calls, at most `max_edges` of each, or "no caller or callee sampled".
std::string callers_summary(const analysis::CpuCallers& calls, std::size_t max_edges) {
  auto list = [&](const std::vector<analysis::CpuEdge>& edges) {
    std::string out;
    for (std::size_t i = 0; i < edges.size() && i < max_edges; ++i) {
      if (i > 0) out += ", ";
      out += fmt::format("{} ({}, {})", edges[i].function, report::format_count(edges[i].weight.samples, "sample", "samples"),
                         report::format_percent(edges[i].share));
    }
    if (edges.size() > max_edges) out += fmt::format(" and {} more", edges.size() - max_edges);
    return out;
  };
  std::string out;
  if (!calls.callers.empty()) out += "called from " + list(calls.callers);
  if (calls.outermost.samples > 0) {
    out += out.empty() ? "" : "; ";
    out += fmt::format("outermost frame in {}", report::format_count(calls.outermost.samples, "sample", "samples"));
  }
  if (!calls.callees.empty()) {
    out += out.empty() ? "" : "; ";
    out += "calls " + list(calls.callees);
  }
  return out.empty() ? "no caller or callee sampled" : out;
}


constexpr std::string_view kFlameHeading =
    "<h3>Flame graph</h3><p class=\"lead\">Every sampled stack merged, callers above callees (an icicle graph), "
    "each frame as wide as its samples. Instrumented scopes (blue) sit above the functions they ran.</p>";

void add_functions(const ReportData& data, Section& section) {
  const CpuData& cpu = data.cpu;
  const std::size_t shown = std::min(cpu.functions.size(), data.limits.cpu_functions);
  section.subheading("Top functions");
  say_top_of(section, shown, cpu.function_count, "functions");
  section.say(Sentence().words(
      "Self: samples whose innermost frame is the function; total: samples with the function anywhere on the "
      "stack, counted once per sample. Percentages are of every sample."));
  Table table;
  table.id = "cpu-functions-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter functions by name";
  table.columns = {right("#", "rank"),
                   left("Function", "function"),
                   left("Module", "module"),
                   right("Self (% of samples)", "self-pct"),
                   right("Self samples", "self"),
                   right("Self time", "self-ns"),
                   right("Total (% of samples)", "total-pct"),
                   right("Total samples", "total")};
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::CpuFunction& f = cpu.functions[i];
    table.row({rank_cell(i), function_cell(f.name, data.limits.full_names), Cell::words(f.module.empty() ? "?" : f.module),
               fraction_cell(f.self_share), count_cell(f.self.samples), duration_cell(f.self.ns),
               fraction_cell(f.total_share), count_cell(f.total.samples)});
  }
  section.add(std::move(table));
}

void add_callers(const ReportData& data, Section& section) {
  // Of the hottest functions the table shows.
  const std::size_t shown =
      std::min({data.cpu.callers.size(), data.limits.cpu_caller_functions, data.limits.cpu_functions});
  if (shown == 0) return;
  section.subheading("Who calls the hottest functions");
  Bullets bullets;
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::CpuCallers& calls = data.cpu.callers[i];
    bullets.items.push_back(Sentence()
                                .function(calls.function)
                                .words(": ")
                                .words(callers_summary(calls, data.limits.cpu_edges)));
  }
  section.add(std::move(bullets));
}

void add_lines(const ReportData& data, Section& section) {
  const std::vector<analysis::CpuLine>& lines = data.cpu.hot_lines;
  const std::size_t shown = std::min(lines.size(), data.limits.hot_lines);
  if (shown == 0) return;
  section.subheading("Hot lines");
  section.say(Sentence().words("Samples whose innermost frame was on the line."));
  Table table;
  table.id = "cpu-lines-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter lines";
  table.columns = {right("#", "rank"), left("Line", "line"), left("Function", "function"),
                   right("Self samples", "samples"), right("% of samples", "pct"), right("Time", "ns")};
  for (std::size_t i = 0; i < shown; ++i) {
    const analysis::CpuLine& l = lines[i];
    table.row({rank_cell(i), name_cell(fmt::format("{}:{}", l.file, l.line)), function_cell(l.function, data.limits.full_names),
               count_cell(l.self.samples), fraction_cell(l.share), duration_cell(l.self.ns)});
  }
  section.add(std::move(table));
}

void add_scopes(const ReportData& data, Section& section) {
  const CpuData& cpu = data.cpu;
  const std::size_t rows = std::min(cpu.scopes.size(), data.limits.cpu_scopes);
  if (rows == 0) return;
  section.subheading("Samples per scope");
  say_top_of(section, rows, cpu.scope_count, "scopes");
  section.say(Sentence().words(
      "Each scope with everything below it, and its hottest functions by self samples (% of the scope's "
      "samples)."));
  Table table;
  table.id = "cpu-scopes-table";
  table.style = Table::Style::Sortable;
  table.filter_label = "Filter scopes by name";
  table.columns = {left("Scope", "scope"), right("Samples", "samples"), right("% of samples", "pct"),
                   right("Time", "ns"), left("Hottest functions (self, % of the scope's samples)", "top")};
  for (std::size_t i = 0; i < rows; ++i) {
    const analysis::CpuScope& scope = cpu.scopes[i];
    std::string top;
    std::string full;
    for (std::size_t j = 0; j < scope.top.size() && j < data.limits.cpu_scope_top; ++j) {
      const analysis::CpuFunction& f = scope.top[j];
      if (f.self.samples == 0) continue;
      const std::string_view separator = top.empty() ? "" : ", ";
      const std::string shown = data.limits.full_names ? f.name : analysis::readable_function(f.name);
      top += fmt::format("{}{} {}", separator, shown, report::format_percent(f.self_share));
      full += fmt::format("{}{} {}", separator, f.name, report::format_percent(f.self_share));
    }
    Cell hottest = Cell::words(top.empty() ? "-" : report::capped_name(top, report::kTextDisplayLimit));
    if (full != top) hottest.title = report::capped_name(full, report::kTextDisplayLimit);
    table.row({name_cell(scope.path), count_cell(scope.samples.samples), fraction_cell(scope.share),
               duration_cell(scope.samples.ns), std::move(hottest)});
  }
  section.add(std::move(table));
}

}  // namespace

void cpu_samples(const ReportData& data, std::vector<Section>& out) {
  const Profile& profile = *data.profile;
  if (!profile.cpu.sampled) return;
  Section section{"cpu", "CPU samples", {}};
  section.say(Sentence().words(
      "Where the threads were when the sampler interrupted them: each sample stands for one sampling period of CPU "
      "(or wall) time."));
  Facts facts;
  for (const analysis::Fact& fact : analysis::cpu_facts(profile)) facts.items.push_back({std::string(fact.label), fact.value});
  section.add(std::move(facts));
  if (data.cpu.function_count == 0) {
    section.say(Sentence().words("No sample has a stack: there is nothing to attribute to functions."));
    out.push_back(std::move(section));
    return;
  }
  // The heading and lead travel inside the picture: formats that cannot draw it say nothing of it.
  Picture flame;
  flame.style = report::html::kFlameStyle;
  flame.script = report::html::kFlameScript;
  flame.draw = [&profile](std::string& html) {
    html += kFlameHeading;
    report::html::write_flame_graph(analysis::flame_tree(profile, {}, true), html);
  };
  section.add(std::move(flame));

  add_functions(data, section);
  add_callers(data, section);
  add_lines(data, section);
  add_scopes(data, section);
  section.subheading("CPU findings");
  section.add(findings_of(data.cpu.findings, analysis::no_cpu_bottlenecks(profile)));
  out.push_back(std::move(section));
}

}  // namespace nnprof::report::sections
