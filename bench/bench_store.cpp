// Saving, loading and exporting a large profile: 1,000,000 spans over 8 threads.
// Counters: spans per second, output bytes per second, and bytes per span of each format.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "nnprof/nnprof.hpp"
#include "sample_profiles.hpp"

namespace {

const nnprof::Profile& big_profile() {
  static const nnprof::Profile p = nnprof::testing::synthetic_profile(1'000'000, 8);
  return p;
}

std::string scratch(const char* name) {
  return (std::filesystem::temp_directory_path() / (std::string("nnprof_bench_") + std::to_string(getpid()) + name))
      .string();
}

void BM_SaveSqlite(benchmark::State& state) {
  const auto& p = big_profile();
  const std::string path = scratch(".nnprof");
  for (auto _ : state) p.save(path);
  const auto bytes = std::filesystem::file_size(path);
  state.counters["spans_per_s"] =
      benchmark::Counter(static_cast<double>(p.spans.size()), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["bytes_per_span"] = static_cast<double>(bytes) / static_cast<double>(p.spans.size());
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  std::filesystem::remove(path);
}
BENCHMARK(BM_SaveSqlite)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadSqlite(benchmark::State& state) {
  const auto& p = big_profile();
  const std::string path = scratch("_load.nnprof");
  p.save(path);
  for (auto _ : state) benchmark::DoNotOptimize(nnprof::Profile::load(path));
  state.counters["spans_per_s"] =
      benchmark::Counter(static_cast<double>(p.spans.size()), benchmark::Counter::kIsIterationInvariantRate);
  std::filesystem::remove(path);
}
BENCHMARK(BM_LoadSqlite)->Unit(benchmark::kMillisecond)->UseRealTime();

void export_benchmark(benchmark::State& state, nnprof::ReportFormat format) {
  const nnprof::Report report(big_profile());
  std::size_t bytes = 0;
  for (auto _ : state) {
    std::ostringstream out;
    report.write(out, format);
    bytes = out.tellp() > 0 ? static_cast<std::size_t>(out.tellp()) : 0;
    benchmark::DoNotOptimize(bytes);
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(bytes) * state.iterations());
  state.counters["bytes_per_span"] = static_cast<double>(bytes) / static_cast<double>(big_profile().spans.size());
  state.counters["output_MB"] = static_cast<double>(bytes) / 1e6;
}

void BM_ExportChrome(benchmark::State& state) { export_benchmark(state, nnprof::ReportFormat::Chrome); }
BENCHMARK(BM_ExportChrome)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_ReportHtml(benchmark::State& state) { export_benchmark(state, nnprof::ReportFormat::Html); }
BENCHMARK(BM_ReportHtml)->Unit(benchmark::kMillisecond)->UseRealTime();
// The other human-readable reports and the JSON report of the same profile: their analysis is
// what costs (the timeline is HTML's alone).
void BM_ReportText(benchmark::State& state) { export_benchmark(state, nnprof::ReportFormat::Text); }
BENCHMARK(BM_ReportText)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_ReportMarkdown(benchmark::State& state) { export_benchmark(state, nnprof::ReportFormat::Markdown); }
BENCHMARK(BM_ReportMarkdown)->Unit(benchmark::kMillisecond)->UseRealTime();
void BM_ReportJson(benchmark::State& state) { export_benchmark(state, nnprof::ReportFormat::Json); }
BENCHMARK(BM_ReportJson)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
