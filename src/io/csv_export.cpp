#include "io/csv_export.hpp"

#include <ostream>
#include <string>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "analysis/cpu_profile.hpp"
#include "nnprof/error.hpp"

namespace nnprof::io {
namespace {

// RFC 4180 ends every record, the last included, with CRLF.
constexpr std::string_view kRecordEnd = "\r\n";

// GPU work by scope name; names without any are absent.
using GpuByName = std::unordered_map<StringId, const GpuScopeStats*>;

void write_record(const Profile& profile, const ScopeStats& scope,
                  const std::vector<analysis::CpuScopeName>& cpu, const GpuByName& gpu, std::ostream& out) {
  const DurationStats& t = scope.time;
  const MemoryAttribution& m = scope.memory;
  // "{}" prints a double in its shortest round-trip form (40000, 1.5, 1e+21), never with a
  // locale's separators: the reader gets back exactly the value the profile holds.
  out << csv_field(profile.str(scope.name))
      << fmt::format(",{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}", t.count, scope.total_ns,
                     scope.self_ns, t.mean_ns, t.stddev_ns, t.min_ns, t.max_ns, t.p50_ns, t.p95_ns,
                     t.p99_ns, scope.thread_count, scope.items, scope.items_per_second(),
                     m.alloc_bytes, m.alloc_count, m.free_bytes, m.free_count);
  if (profile.heap.tracked) {
    const HeapAttribution& h = scope.heap;
    out << fmt::format(",{},{},{},{},{},{},{}", h.alloc_bytes, h.alloc_count, h.free_bytes, h.free_count,
                       h.retained_bytes, h.retained_blocks, h.peak_live_bytes);
  }
  if (profile.cpu.sampled) {
    const analysis::CpuScopeName c = scope.name < cpu.size() ? cpu[scope.name] : analysis::CpuScopeName{};
    out << fmt::format(",{},{},{},{}", c.samples.samples, c.samples.ns, c.self.samples, c.self.ns);
  }
  if (profile.gpu.summary.traced) {
    const auto it = gpu.find(scope.name);
    const GpuScopeStats g = it == gpu.end() ? GpuScopeStats{} : *it->second;
    out << fmt::format(",{},{},{},{},{},{},{},{},{}", g.kernels, g.kernel_ns, g.memcpys, g.memcpy_ns, g.memcpy_bytes,
                       g.memsets, g.memset_ns, g.gpu_ns(), g.alloc_bytes);
  }
  out << kRecordEnd;
}

}  // namespace

std::string csv_field(std::string_view text) {
  // A spreadsheet runs a cell that starts with = + - @ (or tab, CR, which some strip before
  // looking) as a formula: such text gets a leading single quote (OWASP's advice), which
  // makes it text. Only names pass through here; numbers are written as they are.
  std::string neutral;
  if (!text.empty() && std::string_view("=+-@\t\r").find(text.front()) != std::string_view::npos) {
    neutral = "'";
    neutral += text;
    text = neutral;
  }
  const std::string_view field = text;
  if (field.find_first_of(",\"\r\n") == std::string_view::npos) return std::string(field);
  std::string quoted;
  quoted.reserve(field.size() + 2);
  quoted += '"';
  for (const char c : field) {
    if (c == '"') quoted += '"';
    quoted += c;
  }
  quoted += '"';
  return quoted;
}

void write_csv(const Profile& profile, std::ostream& out) {
  out << kCsvHeader;
  if (profile.heap.tracked) out << kCsvHeapColumns;
  if (profile.cpu.sampled) out << kCsvCpuColumns;
  if (profile.gpu.summary.traced) out << kCsvGpuColumns;
  out << kRecordEnd;
  const std::vector<analysis::CpuScopeName> cpu =
      profile.cpu.sampled ? analysis::cpu_by_scope_name(profile) : std::vector<analysis::CpuScopeName>{};
  GpuByName gpu;
  if (profile.gpu.summary.traced) {
    for (const GpuScopeStats& s : profile.gpu.scopes) gpu.emplace(s.name, &s);
  }
  for (const ScopeStats& scope : profile.scopes) write_record(profile, scope, cpu, gpu, out);
}

void CsvExporter::do_write(const Profile& profile, std::ostream& out, const ReportOptions& /*options: names are data here*/) const {
  write_csv(profile, out);
  if (!out) throw Error("could not write the CSV export: the output stream failed");
}

}  // namespace nnprof::io
