// Saving, loading and exporting a large profile: 1,000,000 spans over 8 threads.
// Counters: spans per second, output bytes per second, and bytes per span of each format.
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <sqlite3.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

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

// A PyTorch-like operator trace (issue 19): 1,000,000 operator calls over 4 threads, each
// with the five arguments operator capture attaches (op_scope, input_shapes, input_dtypes,
// flops, bytes); one call in four also carries a unique int "seq". 20 operators, each seen
// with 3 input shapes, so all calls without "seq" share 60 distinct argument sets. Recorded
// through Profiler start/arg/stop so the arguments are the ones the builder produces.
double operator_snapshot_seconds = 0;  // Profiler::snapshot of operator_profile: the build

const nnprof::Profile& operator_profile() {
  static const nnprof::Profile p = [] {
    constexpr int kThreads = 4;
    constexpr int kCallsPerThread = 250'000;
    nnprof::ProfilerOptions options;
    options.memory_cap_bytes = std::size_t{1} << 30;
    options.measure_overhead = false;
    nnprof::Profiler profiler(options);
    std::vector<std::string> ops, shapes;
    for (int op = 0; op < 20; ++op) ops.push_back("aten::op" + std::to_string(op));
    for (int s = 0; s < 3; ++s)
      shapes.push_back("[[" + std::to_string(32 << s) + ", 512], [512, 512], [512]]");
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&, t] {
        for (int i = 0; i < kCallsPerThread; ++i) {
          const std::string& op = ops[static_cast<std::size_t>(i % 20)];
          const int shape = (i / 20) % 3;
          profiler.start(op);
          profiler.arg("op_scope", "function");
          profiler.arg("input_shapes", shapes[static_cast<std::size_t>(shape)]);
          profiler.arg("input_dtypes", "[float, float, float]");
          profiler.arg("flops", 2.0 * (32 << shape) * 512 * 512);
          profiler.arg("bytes", std::int64_t{4} * ((32 << shape) * 512 + 512 * 512 + 512));
          if (i % 4 == 0) profiler.arg("seq", std::int64_t{t} * kCallsPerThread + i);
          profiler.stop(op);
        }
      });
    for (std::thread& t : threads) t.join();
    const auto start = std::chrono::steady_clock::now();
    nnprof::Profile built = profiler.snapshot();
    operator_snapshot_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return built;
  }();
  return p;
}

std::int64_t count_rows(const std::string& path, const char* table) {
  sqlite3* db = nullptr;
  std::int64_t rows = -1;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* st = nullptr;
    const std::string sql = std::string("SELECT count(*) FROM ") + table;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr) == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW)
      rows = sqlite3_column_int64(st, 0);
    sqlite3_finalize(st);
  }
  sqlite3_close(db);
  return rows;
}

// Saving the operator trace: what its ~5.25M span arguments cost in time and bytes.
void BM_SaveSqliteOperatorArgs(benchmark::State& state) {
  const auto& p = operator_profile();
  const std::string path = scratch("_ops.nnprof");
  for (auto _ : state) p.save(path);
  const auto bytes = std::filesystem::file_size(path);
  state.counters["spans"] = static_cast<double>(p.spans.size());
  state.counters["span_args"] = static_cast<double>(p.span_args.size());
  state.counters["args_rows"] = static_cast<double>(count_rows(path, "args"));
  state.counters["file_MB"] = static_cast<double>(bytes) / 1e6;
  state.counters["snapshot_ms"] = operator_snapshot_seconds * 1e3;
  state.counters["time_per_span"] = benchmark::Counter(static_cast<double>(p.spans.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  std::filesystem::remove(path);
}
BENCHMARK(BM_SaveSqliteOperatorArgs)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_LoadSqliteOperatorArgs(benchmark::State& state) {
  const auto& p = operator_profile();
  const std::string path = scratch("_ops_load.nnprof");
  p.save(path);
  for (auto _ : state) benchmark::DoNotOptimize(nnprof::Profile::load(path));
  state.counters["time_per_span"] = benchmark::Counter(static_cast<double>(p.spans.size()),
                                                     benchmark::Counter::kIsIterationInvariantRate |
                                                         benchmark::Counter::kInvert);
  std::filesystem::remove(path);
}
BENCHMARK(BM_LoadSqliteOperatorArgs)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
