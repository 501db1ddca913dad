// `nnprof machine [--force] [--json] [--file PATH]`: this machine's roofs (peak FLOP/s in fp32
// and fp64, memory bandwidth), measured once and cached for the roofline of every profile.
#include <ctime>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>
#include <fmt/chrono.h>

#include "commands.hpp"
#include "nnprof/roofline.hpp"

namespace nnprof::cli {

namespace {

std::string giga(double v, const char* unit) { return fmt::format("{:.1f} {}", v / 1e9, unit); }

void print_peaks(const MachinePeaks& p, const std::string& file, std::ostream& out) {
  out << fmt::format("Machine: {} ({} threads, {} kernels)\n\n", p.cpu_model.empty() ? "unknown CPU" : p.cpu_model,
                     p.threads, p.isa);
  const std::string all = fmt::format("all {} threads", p.threads);
  out << fmt::format("  {:<22} {:>16} {:>16}\n", "", "one thread", all);
  out << fmt::format("  {:<22} {:>16} {:>16}\n", "fp32 peak (FMA)", giga(p.fp32_flops_one_core, "GFLOP/s"),
                     giga(p.fp32_flops, "GFLOP/s"));
  out << fmt::format("  {:<22} {:>16} {:>16}\n", "fp64 peak (FMA)", giga(p.fp64_flops_one_core, "GFLOP/s"),
                     giga(p.fp64_flops, "GFLOP/s"));
  out << fmt::format("  {:<22} {:>16} {:>16}\n", "memory (STREAM triad)", giga(p.bandwidth_one_core, "GB/s"),
                     giga(p.bandwidth, "GB/s"));
  out << fmt::format("  {:<22} {:>16} {:>16}\n", "ridge point, fp32",
                     fmt::format("{:.1f} FLOP/B", p.ridge_point(Precision::Fp32, true)),
                     fmt::format("{:.1f} FLOP/B", p.ridge_point(Precision::Fp32)));
  out << fmt::format("  {:<22} {:>16} {:>16}\n\n", "ridge point, fp64",
                     fmt::format("{:.1f} FLOP/B", p.ridge_point(Precision::Fp64, true)),
                     fmt::format("{:.1f} FLOP/B", p.ridge_point(Precision::Fp64)));
  out << "Work below the ridge point (fewer FLOPs per byte moved) is memory-bound, above it compute-bound.\n";
  const std::time_t when = static_cast<std::time_t>(p.measured_unix);
  out << fmt::format("Measured {:%Y-%m-%d %H:%M} UTC; cached in {} (`nnprof machine --force` measures again).\n",
                     fmt::gmtime(when), file);
}

}  // namespace

Action add_machine_command(CLI::App& app) {
  struct Options {
    bool force = false, json = false;
    std::string file = default_machine_file();
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "machine", "Measure this machine's peak FLOP/s and memory bandwidth (the roofline), once; later runs read the cache");
  cmd->add_flag("--force", o->force, "Measure again even when the cache describes this machine");
  cmd->add_flag("--json", o->json, "Print the cached figures as JSON");
  cmd->add_option("--file", o->file, "Cache file (default: $NNPROF_MACHINE_FILE or ~/.cache/nnprof/machine.json)")
      ->capture_default_str();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (!o->json) std::cout << "Measuring (about two seconds) unless the cache describes this machine...\n" << std::flush;
    const MachinePeaks p = machine_peaks(o->force, o->file);
    if (o->json) {
      std::ifstream in(o->file);
      std::cout << in.rdbuf();
    } else {
      print_peaks(p, o->file, std::cout);
    }
    return 0;
  };
}

}  // namespace nnprof::cli
