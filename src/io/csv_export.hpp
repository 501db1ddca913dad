// CSV: one row per scope, for spreadsheets, pandas and scripts.
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "io/exporter.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// The header row's field names, in column order (without the line ending).
inline constexpr std::string_view kCsvHeader =
    "scope,calls,total_ns,self_ns,mean_ns,std_ns,min_ns,max_ns,p50_ns,p95_ns,p99_ns,threads,"
    "items,items_per_second,alloc_bytes,alloc_count,free_bytes,free_count";

/// Fields appended to kCsvHeader, and to every record, when the profile has heap tracking
/// (Profile::heap.tracked): ScopeStats::heap, bytes and counts.
inline constexpr std::string_view kCsvHeapColumns =
    ",heap_alloc_bytes,heap_alloc_count,heap_free_bytes,heap_free_count,heap_retained_bytes,"
    "heap_retained_blocks,heap_peak_live_bytes";

/// Fields appended after those, when the profile has CPU samples (Profile::cpu.sampled): the
/// samples taken while the scope was open (nested calls of the same name counted once) and
/// the time they stand for, and those taken while it was the innermost open scope.
inline constexpr std::string_view kCsvCpuColumns = ",cpu_samples,cpu_sampled_ns,cpu_self_samples,cpu_self_sampled_ns";

/// Fields appended after those, when the profile has GPU tracing (Profile::gpu.summary.traced):
/// the GPU work launched while the scope was open (GpuScopeStats; nested calls of the same name
/// counted once), and its total GPU time; zeros for a scope that launched none.
inline constexpr std::string_view kCsvGpuColumns =
    ",gpu_kernels,gpu_kernel_ns,gpu_memcpys,gpu_memcpy_ns,gpu_memcpy_bytes,gpu_memsets,gpu_memset_ns,gpu_ns,"
    "gpu_alloc_bytes";

/// `text` (a name, never a number) as one RFC 4180 field: prefixed with a single quote when
/// it starts with =, +, -, @, tab or CR, so that a spreadsheet takes it as text rather than a
/// formula; then quoted when it contains a comma, a double quote, CR or LF, with every double
/// quote doubled; otherwise unchanged.
std::string csv_field(std::string_view text);

/// Writes a header and one record per entry of `profile.scopes`, in that order, with the
/// heap columns when the heap was tracked, the CPU columns when the CPU was sampled and the GPU
/// columns when the GPU was traced. Fields
/// follow RFC 4180 (CRLF after every record, quoting as `csv_field`); numbers are plain
/// (integers in nanoseconds, bytes or counts; fractions in the shortest form that reads
/// back to the same double), so that a program can read them without parsing units.
void write_csv(const Profile& profile, std::ostream& out);

/// The "csv" format (".csv"): `write_csv`.
class CsvExporter final : public Exporter {
 public:
  CsvExporter() noexcept : Exporter(ReportFormat::Csv) {}
 private:
  void do_write(const Profile& profile, std::ostream& out, const ReportOptions& options) const override;
};

}  // namespace nnprof::io
