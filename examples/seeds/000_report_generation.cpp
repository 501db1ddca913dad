// Seed 000 (axonml-profile), "Report Generation": print the summary, then export it as HTML,
// JSON and Markdown. Report::export is export_to in C++ (export is a keyword); it throws
// nnprof::Error where Rust returns Err.
#include <nnprof/nnprof.hpp>

#include <iostream>

#include "workload.hpp"

int main() try {
  nnprof::Profiler profiler;
  const seeds::Model model(64);
  seeds::Matrix x = seeds::Matrix::ramp(64);
  for (int step = 0; step < 3; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    x = model.forward(x);
    seeds::relu(x);
  }

  // Generate and print summary
  const nnprof::Report report = profiler.summary();
  std::cout << report << "\n";

  // Export to file
  report.export_to("profile.html", nnprof::ReportFormat::Html);
  report.export_to("profile.json", nnprof::ReportFormat::Json);
  report.export_to("profile.md", nnprof::ReportFormat::Markdown);
  std::cout << "wrote profile.html, profile.json, profile.md (checksum " << seeds::checksum(x) << ")\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
