// Seed 000 (axonml-profile), Features: "Report Generation: Export reports in Text, JSON,
// Markdown, and HTML formats".
#include <nnprof/nnprof.hpp>

#include <filesystem>
#include <iostream>
#include <utility>

#include "workload.hpp"

int main() try {
  nnprof::Profiler profiler;
  const seeds::Model model(48);
  seeds::Matrix x = seeds::Matrix::ramp(48);
  for (int step = 0; step < 2; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    x = model.forward(x);
  }
  profiler.record_alloc("weights", model.weights.values.size() * sizeof(float));

  const nnprof::Report report = profiler.summary();
  const std::pair<const char*, nnprof::ReportFormat> exports[] = {
      {"report.txt", nnprof::ReportFormat::Text},
      {"report.json", nnprof::ReportFormat::Json},
      {"report.md", nnprof::ReportFormat::Markdown},
      {"report.html", nnprof::ReportFormat::Html},
  };
  for (const auto& [path, format] : exports) {
    report.export_to(path, format);
    std::cout << nnprof::to_string(format) << ": " << path << " (" << std::filesystem::file_size(path) << " bytes)\n";
  }
  std::cout << "checksum: " << seeds::checksum(x) << "\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
