#include "io/report_tables.hpp"

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "analysis/memory_findings.hpp"
#include "analysis/rankings.hpp"
#include "io/gpu_report_tables.hpp"

namespace nnprof::io {
namespace {

std::string_view share_header(Headers headers) {
  return headers == Headers::Terminal ? "% instr" : "% of instrumented time";
}

std::string_view allocs_header(Headers headers) {
  return headers == Headers::Terminal ? "Allocs" : "Allocations";
}

TableColumn column_of(ScopeColumn column, Headers headers) {
  switch (column) {
    case ScopeColumn::Rank: return {"#", Align::Right};
    case ScopeColumn::Name: return {"Scope", Align::Left};
    case ScopeColumn::Calls: return {"Calls", Align::Right};
    case ScopeColumn::Total: return {"Total", Align::Right};
    case ScopeColumn::TotalShare:
    case ScopeColumn::SelfShare: return {std::string(share_header(headers)), Align::Right};
    case ScopeColumn::Self: return {"Self", Align::Right};
    case ScopeColumn::Avg: return {"Avg", Align::Right};
    case ScopeColumn::AvgSelf: return {"Avg self", Align::Right};
    case ScopeColumn::Min: return {"Min", Align::Right};
    case ScopeColumn::Max: return {"Max", Align::Right};
    case ScopeColumn::P95: return {"p95", Align::Right};
    case ScopeColumn::Allocated: return {"Allocated", Align::Right};
    case ScopeColumn::AllocShare: return {"% of all allocations", Align::Right};
    case ScopeColumn::Allocs: return {std::string(allocs_header(headers)), Align::Right};
    case ScopeColumn::AllocPerCall:
    case ScopeColumn::HeapPerCall: return {"Avg per call", Align::Right};
    case ScopeColumn::HeapAllocated: return {"Allocated", Align::Right};
    case ScopeColumn::HeapShare:
      return {headers == Headers::Terminal ? "% of heap" : "% of heap allocated", Align::Right};
    case ScopeColumn::HeapAllocs: return {std::string(allocs_header(headers)), Align::Right};
    case ScopeColumn::HeapRetained: return {"Retained at end", Align::Right};
    case ScopeColumn::HeapPeakLive: return {"Peak live", Align::Right};
    case ScopeColumn::GpuTime: return {"GPU time", Align::Right};
  }
  return {"", Align::Right};
}

// What every row of one table shares: the denominators of its percentages, and the GPU time
// of each scope name.
struct Shares {
  PercentOf of_time;
  PercentOf of_allocations;
  PercentOf of_heap;
  std::unordered_map<StringId, std::uint64_t> gpu_ns;
};

// "8.00 MiB in 4 blocks"; just "0 B" for none.
std::string bytes_in_blocks(std::uint64_t bytes, std::uint64_t blocks) {
  if (blocks == 0) return format_bytes(bytes);
  return fmt::format("{} in {}", format_bytes(bytes), format_count(blocks, "block", "blocks"));
}

std::string cell(const Profile& profile, const Shares& shares, std::size_t rank,
                 const ScopeStats& s, ScopeColumn column) {
  switch (column) {
    case ScopeColumn::Rank: return std::to_string(rank);
    case ScopeColumn::Name: return profile.str(s.name);
    case ScopeColumn::Calls: return format_count(s.time.count);
    case ScopeColumn::Total: return format_duration(s.total_ns);
    case ScopeColumn::TotalShare: return shares.of_time(s.total_ns);
    case ScopeColumn::Self: return format_duration(s.self_ns);
    case ScopeColumn::SelfShare: return shares.of_time(s.self_ns);
    case ScopeColumn::Avg: return format_duration(s.time.mean_ns);
    case ScopeColumn::AvgSelf: {
      const auto per_call = analysis::self_per_call(s);
      return per_call ? format_duration(*per_call) : "n/a";
    }
    case ScopeColumn::Min: return format_duration(s.time.min_ns);
    case ScopeColumn::Max: return format_duration(s.time.max_ns);
    case ScopeColumn::P95: return format_duration(s.time.p95_ns);
    case ScopeColumn::Allocated: return format_bytes(s.memory.alloc_bytes);
    case ScopeColumn::AllocShare: return shares.of_allocations(s.memory.alloc_bytes);
    case ScopeColumn::Allocs: return format_count(s.memory.alloc_count);
    case ScopeColumn::AllocPerCall: {
      const auto per_call = analysis::alloc_bytes_per_call(s);
      return per_call ? format_bytes(*per_call) : "n/a";
    }
    case ScopeColumn::HeapAllocated: return format_bytes(s.heap.alloc_bytes);
    case ScopeColumn::HeapShare: return shares.of_heap(s.heap.alloc_bytes);
    case ScopeColumn::HeapAllocs: return format_count(s.heap.alloc_count);
    case ScopeColumn::HeapPerCall: {
      const auto per_call = analysis::heap_bytes_per_call(s);
      return per_call ? format_bytes(*per_call) : "n/a";
    }
    case ScopeColumn::HeapRetained: return bytes_in_blocks(s.heap.retained_bytes, s.heap.retained_blocks);
    case ScopeColumn::HeapPeakLive: return format_bytes(s.heap.peak_live_bytes);
    case ScopeColumn::GpuTime: {
      // "-": no GPU work was launched in it, which a duration of 0 ns would not say.
      const auto it = shares.gpu_ns.find(s.name);
      return it == shares.gpu_ns.end() ? std::string("-") : format_duration(it->second);
    }
  }
  return {};
}

bool uses(const std::vector<ScopeColumn>& columns, ScopeColumn wanted) {
  for (const ScopeColumn column : columns) {
    if (column == wanted) return true;
  }
  return false;
}

}  // namespace

std::vector<ScopeColumn> with_gpu_time(const Profile& profile, std::initializer_list<ScopeColumn> columns) {
  std::vector<ScopeColumn> out(columns);
  if (profile.gpu.summary.traced) out.push_back(ScopeColumn::GpuTime);
  return out;
}

TextTable scope_table(const Profile& profile, const std::vector<const ScopeStats*>& scopes,
                      const std::vector<ScopeColumn>& columns, Headers headers) {
  std::vector<TableColumn> table_columns;
  for (const ScopeColumn column : columns) table_columns.push_back(column_of(column, headers));
  TextTable table(std::move(table_columns));
  // Each denominator only when a column needs it: both walk the whole profile.
  const bool time_share = uses(columns, ScopeColumn::TotalShare) || uses(columns, ScopeColumn::SelfShare);
  const Shares shares{
      PercentOf(time_share ? profile.instrumented_ns() : 0),
      PercentOf(uses(columns, ScopeColumn::AllocShare) ? analysis::allocation_total(profile).bytes : 0),
      PercentOf(profile.heap.alloc_bytes),
      uses(columns, ScopeColumn::GpuTime) ? gpu_time_by_scope(profile) : std::unordered_map<StringId, std::uint64_t>{}};
  std::size_t rank = 0;
  for (const ScopeStats* scope : scopes) {
    ++rank;
    std::vector<std::string> cells;
    for (const ScopeColumn column : columns) cells.push_back(cell(profile, shares, rank, *scope, column));
    table.add_row(std::move(cells));
  }
  return table;
}

TextTable compute_table(const Profile& profile, const std::vector<analysis::ScopeCompute>& scopes, Headers headers) {
  const bool doc = headers == Headers::Document;
  std::vector<TableColumn> columns{{"Scope", Align::Left},
                                   {"Calls", Align::Right},
                                   {"Total", Align::Right},
                                   {"FLOPs", Align::Right},
                                   {"FLOP/s", Align::Right},
                                   {"Bytes/s", Align::Right},
                                   {doc ? "FLOPs per byte" : "FLOP/B", Align::Right}};
  const bool roofs = analysis::machine_known(profile);
  if (roofs) {
    columns.push_back({"Bound", Align::Left});
    columns.push_back({doc ? "Attainable (roof)" : "Roof", Align::Right});
    columns.push_back({doc ? "% of roof" : "% roof", Align::Right});
  }
  TextTable table(std::move(columns));
  for (const analysis::ScopeCompute& c : scopes) {
    const ScopeStats& s = *c.scope;
    std::vector<std::string> row{profile.str(s.name),
                                 format_count(s.time.count),
                                 format_duration(s.total_ns),
                                 s.flops > 0.0 ? format_si(s.flops, "") : "-",
                                 s.flops > 0.0 ? format_si(c.flops_per_second, "FLOP/s") : "-",
                                 s.bytes > 0 ? format_si(c.bytes_per_second, "B/s") : "-",
                                 s.bytes > 0 && s.flops > 0.0 ? format_ratio(c.intensity, "") : "-"};
    if (roofs) {
      if (c.roofline) {
        const RooflinePoint& p = *c.roofline;
        row.push_back(std::string(p.bound == RooflineBound::Memory ? "memory" : "compute") +
                      (c.one_core ? " (1 core)" : " (all cores)"));
        row.push_back(format_si(p.attainable, "FLOP/s"));
        row.push_back(format_percent(p.fraction));
      } else {
        row.insert(row.end(), {"-", "-", "-"});
      }
    }
    table.add_row(std::move(row));
  }
  return table;
}

TextTable threads_table(const Profile& profile, Headers headers) {
  TextTable table({{"Thread", Align::Left},
                   {"TID", Align::Right},
                   {"Scopes", Align::Right},
                   {"Top-level time", Align::Right},
                   {std::string(share_header(headers)), Align::Right},
                   {"State", Align::Left}});
  const PercentOf percent(profile.instrumented_ns());
  for (const ThreadInfo& t : profile.threads) {
    table.add_row({t.name.empty() ? "[unnamed]" : t.name, std::to_string(t.os_tid),
                   format_count(t.scopes_recorded), format_duration(t.top_level_ns),
                   percent(t.top_level_ns), t.exited ? "exited" : "running"});
  }
  return table;
}

TextTable memory_counters_table(const Profile& profile, Headers headers) {
  TextTable table({{"Counter", Align::Left},
                   {"Current", Align::Right},
                   {"Peak", Align::Right},
                   {"Allocated", Align::Right},
                   {"Freed", Align::Right},
                   {std::string(allocs_header(headers)), Align::Right},
                   {"Frees", Align::Right}});
  for (const MemoryCounter& counter : profile.memory_counters) {
    table.add_row({profile.str(counter.name), format_bytes(counter.current_bytes),
                   format_bytes(counter.peak_bytes), format_bytes(counter.alloc_bytes),
                   format_bytes(counter.freed_bytes), format_count(counter.alloc_count),
                   format_count(counter.free_count)});
  }
  return table;
}

TextTable leak_sites_table(const Profile& profile, std::size_t max_rows, Headers headers) {
  TextTable table({{"#", Align::Right},
                   {"Scope", Align::Left},
                   {headers == Headers::Terminal ? "Allocated at" : "Allocated at (calling function)", Align::Left},
                   {"Blocks", Align::Right},
                   {"Bytes", Align::Right},
                   {"State", Align::Left}});
  const char* unreachable = profile.heap.reachability_checked ? "leaked" : "not checked";
  for (std::size_t i = 0; i < profile.leaks.size() && i < max_rows; ++i) {
    const LeakSite& site = profile.leaks[i];
    table.add_row({std::to_string(i + 1), analysis::scope_path_label(profile, site.node),
                   analysis::frame_label(profile, site.caller), format_count(site.blocks),
                   format_bytes(site.bytes), site.reachable ? "reachable" : unreachable});
  }
  return table;
}

// ---- CPU sampling ---------------------------------------------------------------------

TextTable cpu_functions_table(const std::vector<analysis::CpuFunction>& functions, Headers headers) {
  const bool terminal = headers == Headers::Terminal;
  TextTable table({{"#", Align::Right},
                   {"Function", Align::Left},
                   {"Module", Align::Left},
                   {terminal ? "Self %" : "Self (% of samples)", Align::Right},
                   {terminal ? "Self" : "Self samples", Align::Right},
                   {terminal ? "Self time" : "Self time", Align::Right},
                   {terminal ? "Total %" : "Total (% of samples)", Align::Right},
                   {terminal ? "Total" : "Total samples", Align::Right}});
  for (std::size_t i = 0; i < functions.size(); ++i) {
    const analysis::CpuFunction& f = functions[i];
    table.add_row({std::to_string(i + 1), f.name, f.module.empty() ? "?" : f.module, format_percent(f.self_share),
                   format_count(f.self.samples), format_duration(f.self.ns), format_percent(f.total_share),
                   format_count(f.total.samples)});
  }
  return table;
}

TextTable cpu_lines_table(const std::vector<analysis::CpuLine>& lines, Headers headers) {
  const bool terminal = headers == Headers::Terminal;
  TextTable table({{"#", Align::Right},
                   {"Line", Align::Left},
                   {"Function", Align::Left},
                   {terminal ? "Samples" : "Self samples", Align::Right},
                   {terminal ? "%" : "% of samples", Align::Right},
                   {"Time", Align::Right}});
  for (std::size_t i = 0; i < lines.size(); ++i) {
    const analysis::CpuLine& l = lines[i];
    table.add_row({std::to_string(i + 1), fmt::format("{}:{}", l.file, l.line), l.function,
                   format_count(l.self.samples), format_percent(l.share), format_duration(l.self.ns)});
  }
  return table;
}

TextTable cpu_scopes_table(const std::vector<analysis::CpuScope>& scopes, Headers headers) {
  const bool terminal = headers == Headers::Terminal;
  TextTable table({{"Scope", Align::Left},
                   {"Samples", Align::Right},
                   {terminal ? "%" : "% of samples", Align::Right},
                   {"Time", Align::Right},
                   {terminal ? "Top functions (self % of the scope)" : "Hottest functions (self, % of the scope's samples)",
                    Align::Left}});
  for (const analysis::CpuScope& scope : scopes) {
    std::string top;
    for (const analysis::CpuFunction& f : scope.top) {
      if (f.self.samples == 0) continue;
      if (!top.empty()) top += ", ";
      top += fmt::format("{} {}", f.name, format_percent(f.self_share));
    }
    table.add_row({scope.path, format_count(scope.samples.samples), format_percent(scope.share),
                   format_duration(scope.samples.ns), top.empty() ? "-" : top});
  }
  return table;
}

std::string cpu_callers_summary(const analysis::CpuCallers& calls, std::size_t max_edges) {
  auto list = [&](const std::vector<analysis::CpuEdge>& edges) {
    std::string out;
    for (std::size_t i = 0; i < edges.size() && i < max_edges; ++i) {
      if (i > 0) out += ", ";
      out += fmt::format("{} ({}, {})", edges[i].function, format_count(edges[i].weight.samples, "sample", "samples"),
                         format_percent(edges[i].share));
    }
    if (edges.size() > max_edges) out += fmt::format(" and {} more", edges.size() - max_edges);
    return out;
  };
  std::string out;
  if (!calls.callers.empty()) out += "called from " + list(calls.callers);
  if (calls.outermost.samples > 0) {
    out += out.empty() ? "" : "; ";
    out += fmt::format("outermost frame in {}", format_count(calls.outermost.samples, "sample", "samples"));
  }
  if (!calls.callees.empty()) {
    out += out.empty() ? "" : "; ";
    out += "calls " + list(calls.callees);
  }
  return out.empty() ? "no caller or callee sampled" : out;
}

}  // namespace nnprof::io
