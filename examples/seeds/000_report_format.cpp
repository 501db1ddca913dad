// Seed 000 (axonml-profile), Report Formats: Text (console output), JSON (programmatic
// analysis), Markdown (documentation), HTML (browser viewing). Writes the report of a short
// run in the format named on the command line; text also goes to the console.
#include <nnprof/nnprof.hpp>

#include <filesystem>
#include <iostream>
#include <string_view>

#include "workload.hpp"

int main(int argc, char** argv) try {
  const nnprof::FormatInfo* format = argc == 2 ? nnprof::find_format(std::string_view(argv[1])) : nullptr;
  if (format == nullptr) {
    std::cerr << "usage: " << argv[0] << " text|json|markdown|html\n";
    return 2;
  }

  nnprof::Profiler profiler;
  const seeds::Model model(48);
  seeds::Matrix x = seeds::Matrix::ramp(48);
  for (int step = 0; step < 2; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    x = model.forward(x);
  }

  const nnprof::Report report = profiler.summary();
  if (format->format == nnprof::ReportFormat::Text) report.write(std::cout, nnprof::ReportFormat::Text);
  const std::string path = "profile" + std::string(format->extension());
  report.export_to(path, format->format);
  std::cout << "wrote " << path << " as " << format->name << " (" << std::filesystem::file_size(path)
            << " bytes; checksum " << seeds::checksum(x) << ")\n";
  return 0;
} catch (const nnprof::Error& e) {
  std::cerr << "error: " << e.what() << "\n";
  return 1;
}
