// The sections of the documents. Each is one file under report/sections/ that reads ReportData
// (or the comparison it describes) and appends the section(s) it owns; a section it has nothing
// for is not added. The order of a document is its list in report/documents.cpp.
#pragma once

#include <vector>

#include "report/document.hpp"
#include "report/report_data.hpp"

namespace nnprof::report {

/// Appends a document's section(s) for `data`.
using SectionBuilder = void (*)(const ReportData& data, std::vector<Section>& out);

namespace sections {
// The profile report, in document order (report/documents.cpp).
/// Facts about the run shown under the title: host, CPU, command, threads, duration, clock, instrumented time, annotations.
Facts about(const ReportData& data);
void overview(const ReportData& data, std::vector<Section>& out);         ///< key numbers as cards; the no-scopes hint
void bottlenecks(const ReportData& data, std::vector<Section>& out);
void recommendations(const ReportData& data, std::vector<Section>& out);
void hot_paths(const ReportData& data, std::vector<Section>& out);        ///< by total time, by self time
void most_called(const ReportData& data, std::vector<Section>& out);
void throughput(const ReportData& data, std::vector<Section>& out);       ///< work items per second
void compute(const ReportData& data, std::vector<Section>& out);          ///< declared work, roofline
void allocators(const ReportData& data, std::vector<Section>& out);       ///< bytes allocated (memory counters)
void call_tree(const ReportData& data, std::vector<Section>& out);
void callers(const ReportData& data, std::vector<Section>& out);         ///< who calls each scope, how often
void operators(const ReportData& data, std::vector<Section>& out);       ///< framework operators by input shapes
void timeline(const ReportData& data, std::vector<Section>& out);         ///< picture only
void threads(const ReportData& data, std::vector<Section>& out);
void memory(const ReportData& data, std::vector<Section>& out);           ///< named memory counters
void heap(const ReportData& data, std::vector<Section>& out);
void cpu_samples(const ReportData& data, std::vector<Section>& out);
void gpu(const ReportData& data, std::vector<Section>& out);              ///< GPU, GPU time per scope
/// System and energy: counter tracks, energy per domain, carbon, energy per step and per scope.
void system_energy(const ReportData& data, std::vector<Section>& out);
/// Trends and anomalies of a continuous run: events with their window and numbers, slopes, windows.
void trends(const ReportData& data, std::vector<Section>& out);
void metrics(const ReportData& data, std::vector<Section>& out);
void critical_path(const ReportData& data, std::vector<Section>& out);
/// Ranks of a merged distributed job: step times, straggler, waits, collectives, cross-rank critical path.
void ranks(const ReportData& data, std::vector<Section>& out);
void insights(const ReportData& data, std::vector<Section>& out);
void annotations(const ReportData& data, std::vector<Section>& out);      ///< Profiler::annotate keys and values
void completeness(const ReportData& data, std::vector<Section>& out);
void diagnostics(const ReportData& data, std::vector<Section>& out);
}  // namespace sections

}  // namespace nnprof::report
