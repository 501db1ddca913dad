// `nnprof demo`: profiles the built-in training workload and prints its text summary.
#include <chrono>
#include <iostream>
#include <memory>

#include <fmt/core.h>

#include "commands.hpp"
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
  return [cmd, options]() -> int {
    if (!cmd->parsed()) return -1;
    Profiler profiler;
    set_thread_name("main");
    const auto t0 = std::chrono::steady_clock::now();
    const demo::DemoResult r = demo::run_demo_workload(profiler, *options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << profiler.summary();
    fmt::print("\nDemo: {} training steps in {:.3f} s, final loss {:.4f}, {:.2f} GFLOP/s in the dense layers.\n",
               options->steps, seconds, r.final_loss, static_cast<double>(r.flops) / seconds / 1e9);
    return 0;
  };
}

}  // namespace nnprof::cli
