// `nnprof demo`: profiles the built-in training workload and prints its text summary.
#include <chrono>
#include <iostream>
#include <filesystem>
#include <optional>
#include <memory>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "commands.hpp"
#include "nnprof/memory.hpp"
#include "demo_workload.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof::cli {

Action add_demo_command(CLI::App& app) {
  auto options = std::make_shared<demo::DemoOptions>();
  CLI::App* cmd = app.add_subcommand("demo", "Profile the built-in multi-threaded training workload and print "
                                             "its summary");
  cmd->add_option("--steps", options->steps, "Training steps")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--loaders", options->loader_threads, "Data-loader threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--hidden", options->hidden, "Width of the dense layers")
      ->check(CLI::Range(8, 2048))
      ->capture_default_str();
  cmd->add_option("--layers", options->layers, "Dense layers")->check(CLI::Range(1, 64))->capture_default_str();
  auto out_dir = std::make_shared<std::string>("nnprof-demo");
  cmd->add_option("--out", *out_dir, "Directory for the profile and its reports")->capture_default_str();
  return [cmd, options, out_dir]() -> int {
    if (!cmd->parsed()) return -1;
    Profiler profiler;
    set_thread_name("main");
    // Heap tracking shows where the workload's memory goes; a build whose allocator is replaced
    // (a sanitizer) runs the demo without it.
    std::optional<MemoryTracking> tracking;
    try {
      tracking.emplace(profiler);
    } catch (const Error& e) {
      std::cerr << "nnprof: the demo runs without heap tracking: " << e.what() << "\n";
    }
    const auto t0 = std::chrono::steady_clock::now();
    const demo::DemoResult r = demo::run_demo_workload(profiler, *options);
    if (tracking) tracking->stop();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    Profile profile = profiler.snapshot();
    // The demo declares its FLOPs: place them on this machine's roofline, measuring the peaks
    // once (about two seconds) when `nnprof machine` has not cached them yet.
    if (profile.machine.measured_unix == 0) {
      try {
        if (!cached_machine_peaks())
          std::cerr << "nnprof: measuring this machine's peak FLOP/s and bandwidth once for the roofline (cached in "
                    << default_machine_file() << ")\n";
        profile.machine = machine_peaks();
      } catch (const Error& e) {
        std::cerr << "nnprof: the demo's reports have no roofline: " << e.what() << "\n";
      }
    }
    const Report report(profile);
    std::cout << report;
    std::error_code ec;
    std::filesystem::create_directories(*out_dir, ec);
    if (ec) throw Error("cannot create the output directory '" + *out_dir + "': " + ec.message());
    const std::filesystem::path dir(*out_dir);
    std::vector<std::string> written;
    profile.save((dir / "profile.nnprof").string());
    written.push_back((dir / "profile.nnprof").string());
    for (const auto& [file, format] : {std::pair{"report.txt", ReportFormat::Text},
                                       std::pair{"report.md", ReportFormat::Markdown},
                                       std::pair{"report.json", ReportFormat::Json},
                                       std::pair{"report.html", ReportFormat::Html},
                                       std::pair{"report.csv", ReportFormat::Csv},
                                       std::pair{"trace.json", ReportFormat::Chrome}}) {
      report.export_to((dir / file).string(), format);
      written.push_back((dir / file).string());
    }
    std::cout << "\nFiles written:\n";
    for (const auto& f : written) std::cout << "  " << f << '\n';
    std::cout << "Open trace.json in https://ui.perfetto.dev or chrome://tracing; report.html in a browser;\n"
                 "query the profile with: nnprof query " << (dir / "profile.nnprof").string()
              << " \"select name, count(*), sum(dur) from slice group by name\"\n";
    fmt::print("\nDemo: {} training steps in {:.3f} s, final loss {:.4f}, {:.2f} GFLOP/s in the dense layers.\n",
               options->steps, seconds, r.final_loss, static_cast<double>(r.flops) / seconds / 1e9);
    return 0;
  };
}

}  // namespace nnprof::cli
