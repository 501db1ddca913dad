// `nnprof demo`: profiles the built-in transformer inference (or, with --workload training,
// the multi-threaded training loop), prints the text summary and writes the profile, every
// report, the Chrome trace and the flamegraph into one directory. As the seed's SmallMind
// profiler, it also takes `nnprof demo my-profile.md 5 100`: a report file named as the
// first argument (its format from its extension), then inferences and tokens per inference.
// `nnprof demo --gpu` runs the separate nnprof-gpu-demo program instead (see run_gpu_demo).
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <locale>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "demo_workload.hpp"
#include "kernels.hpp"
#include "nnprof/cpu_profiler.hpp"
#include "nnprof/memory.hpp"
#include "nnprof/nnprof.hpp"
#include "transformer_demo.hpp"

namespace nnprof::cli {

namespace {

struct DemoCommandOptions {
  std::string workload = "transformer";
  std::string model = "both";
  transformer::DemoOptions transformer;
  demo::DemoOptions training;
  std::string out_dir = "nnprof-demo";
  /// The report named as the first argument (`nnprof demo my-profile.md`), written besides
  /// the directory's files; empty: none.
  std::string report_file;
  int positional_inferences = 0, positional_tokens = 0;  ///< 0: not given
  bool sample = true;
  /// The sampler's maximum (CpuProfilerOptions::hz): the default 3 × 50 tokens of both models
  /// take about 0.1 s of CPU time, which then gives some 1,000 samples instead of 80 at 997 Hz.
  double sample_hz = 10000;
  bool gpu = false;
  int gpu_iterations = 10;
  int gpu_size = 1024;
};

/// `nnprof demo --gpu`: replaces this process with nnprof-gpu-demo from this executable's
/// directory (build/bin in the build tree, bin/ when installed). A separate program, so that
/// the CLI never needs libcudart or libcublas to start; its exit status is the command's
/// (3: no usable GPU here).
int run_gpu_demo(const DemoCommandOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  const fs::path demo = ec ? fs::path() : exe.parent_path() / "nnprof-gpu-demo";
  if (demo.empty() || !fs::exists(demo))
    throw Error(fmt::format("nnprof was built without the GPU demo (no CUDA toolkit found at build time): {} does "
                            "not exist; rebuild nnprof on a machine with the CUDA toolkit (nvcc, cuBLAS, CUPTI)",
                            demo.empty() ? std::string("nnprof-gpu-demo next to nnprof (/proc/self/exe is unreadable)")
                                         : demo.string()));
  std::vector<std::string> args{demo.string(), "--out", o.out_dir, "--iterations", std::to_string(o.gpu_iterations),
                                "--size", std::to_string(o.gpu_size)};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::cout.flush();
  std::cerr.flush();
  execv(argv[0], argv.data());
  throw Error(fmt::format("cannot run {}: {}", demo.string(), std::strerror(errno)));
}

/// 470528 → "470,528", as every report prints counts (fmt's {:L} with a locale that groups by three).
std::string with_separators(std::uint64_t n) {
  struct Thousands : std::numpunct<char> {
    char do_thousands_sep() const override { return ','; }
    std::string do_grouping() const override { return "\3"; }
  };
  static const std::locale grouped(std::locale::classic(), new Thousands);
  return fmt::format(grouped, "{:L}", n);
}

/// The machine's peaks for the roofline: cached, or measured once (about two seconds).
std::optional<MachinePeaks> peaks_for_roofline() {
  try {
    if (auto cached = cached_machine_peaks()) return cached;
    std::cerr << "nnprof: measuring this machine's peak FLOP/s and bandwidth once for the roofline (cached in "
              << default_machine_file() << ")\n";
    return machine_peaks();
  } catch (const Error& e) {
    std::cerr << "nnprof: the demo's reports have no roofline: " << e.what() << "\n";
    return std::nullopt;
  }
}

/// The format of the report file named as the demo's first argument, checked before anything
/// runs: a report format from its extension (the format table), or ".nnprof" for the profile.
/// Throws std::invalid_argument saying what to use instead.
void check_report_file(const std::string& path, bool sampling) {
  namespace fs = std::filesystem;
  if (path.ends_with(".nnprof")) return;
  const FormatInfo* format = find_format_for_path(path);
  if (format == nullptr) {
    std::string extensions;
    for (const FormatInfo& f : report_formats())
      if (f.renders(Document::Profile)) extensions += fmt::format("{} ", f.extension());
    throw std::invalid_argument(fmt::format("cannot tell the report format of '{}' from its extension: name it "
                                            "with one of {}or .nnprof (the profile itself)",
                                            path, extensions));
  }
  if (!sampling && (format->format == ReportFormat::Flamegraph || format->format == ReportFormat::Pprof ||
                    format->format == ReportFormat::Collapsed))
    throw std::invalid_argument(fmt::format("'{}' is a {} of the CPU samples, which --no-sampling turns off",
                                            path, format->name));
  const fs::path parent = fs::path(path).parent_path();
  std::error_code ec;
  if (!parent.empty() && !fs::is_directory(parent, ec))
    throw std::invalid_argument(fmt::format("cannot write '{}': the directory '{}' does not exist", path,
                                            parent.string()));
}

void print_transformer_summary(const transformer::DemoResult& r, const std::string& profile_path) {
  fmt::print("\nTransformer inference (kernels: {}):\n", transformer::kernels::to_string(transformer::kernels::active_isa()));
  fmt::print("  {:<8} {:>12} {:>6} {:>7} {:>6} {:>8} {:>11} {:>10} {:>12}\n", "model", "parameters", "d", "layers",
             "heads", "context", "inferences", "tokens/s", "ms/token");
  for (const auto& run : r.runs)
    fmt::print("  {:<8} {:>12} {:>6} {:>7} {:>6} {:>8} {:>11} {:>10.1f} {:>12.3f}\n", run.config.name,
               with_separators(run.parameters), run.config.d_model, run.config.layers, run.config.heads,
               run.config.context, run.inferences, run.tokens_per_second(),
               run.tokens > 0 ? run.seconds / run.tokens * 1e3 : 0.0);
  for (const auto& run : r.runs)
    if (run.context.slid_tokens > 0) fmt::print("  {}: {}.\n", run.config.name, run.context.describe());
  if (!r.layers.empty()) {
    fmt::print("\nPer-layer profile (mean of 20 calls at the last position):\n");
    fmt::print("  {:<8} {:>5} {:>9} {:>15} {:>10} {:>11}\n", "model", "layer", "position", "attention µs", "MLP µs",
               "GFLOP/s");
    for (const auto& l : r.layers)
      fmt::print("  {:<8} {:>5} {:>9} {:>15.2f} {:>10.2f} {:>11.2f}\n", l.model, l.layer, l.position, l.attention_us,
                 l.mlp_us, l.flops / ((l.attention_us + l.mlp_us) * 1e-6) / 1e9);
  }
  if (!r.kernels.empty()) {
    fmt::print("\nKernel microbenchmarks (one thread):\n");
    fmt::print("  {:<22} {:>8} {:>12} {:>10} {:>12}\n", "kernel", "calls", "µs/call", "GFLOP/s", "% of roof");
    for (const auto& k : r.kernels)
      fmt::print("  {:<22} {:>8} {:>12.2f} {:>10.2f} {:>12}\n", k.name, k.calls, k.seconds / k.calls * 1e6,
                 k.gflops_per_second(), k.roof_fraction >= 0 ? fmt::format("{:.1f}%", 100 * k.roof_fraction) : "-");
    fmt::print("  % of the one-core roof at each kernel's arithmetic intensity (`nnprof machine` measures the roofs).\n"
               "  Above 100%: the kernel's data stayed in cache, which is faster than the DRAM bandwidth roof.\n");
  }
  if (r.runs.size() >= 2)
    fmt::print("\nThe models compared (scaling efficiency, forward-pass breakdown): model-comparison.md, or\n"
               "  nnprof model-compare {}\n", profile_path);
}

}  // namespace

Action add_demo_command(CLI::App& app) {
  auto o = std::make_shared<DemoCommandOptions>();
  CLI::App* cmd = app.add_subcommand(
      "demo", "Profile the built-in transformer inference (Small and Medium models) and write every report. "
              "`nnprof demo my-profile.md 5 100` also writes the report my-profile.md, of 5 inferences of 100 "
              "tokens per model; the profile and the other reports go to --out");
  cmd->add_option("OUTPUT", o->report_file,
                  "Report file to write besides the --out directory, its format from its extension (.md .txt .json "
                  ".html .csv .trace.json .svg .pb.gz ...; .nnprof: the profile), like the seed's profile-report.md. "
                  "Without it, --out's report.md is that report");
  cmd->add_option("INFERENCES", o->positional_inferences, "Inferences per model (as --inferences)")
      ->check(CLI::Range(1, 10000));
  cmd->add_option("TOKENS", o->positional_tokens, "Tokens generated per inference (as --tokens)")
      ->check(CLI::Range(1, 65536));
  cmd->add_option("--workload", o->workload,
                  "transformer: decoder-only transformer inference; training: a multi-threaded training loop")
      ->check(CLI::IsMember({"transformer", "training"}))
      ->capture_default_str();
  cmd->add_option("--model", o->model, "Transformer model: small, medium or both")
      ->check(CLI::IsMember({"small", "medium", "both"}))
      ->capture_default_str();
  cmd->add_option("--inferences", o->transformer.inferences, "Inferences per model")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  cmd->add_option("--tokens", o->transformer.tokens,
                  "Tokens generated per inference. Past a model's context (64 small, 128 medium) a window of the "
                  "last <context> tokens slides: each further token encodes that window again (learned absolute "
                  "positions cannot be shifted in the KV cache), which the summary and the report annotations say")
      ->check(CLI::Range(1, 65536))
      ->capture_default_str();
  cmd->add_option("--top-k", o->transformer.sampling.top_k, "Sample from the k most likely tokens (1: greedy)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  cmd->add_flag("--deep", o->transformer.deep,
                "Add microbenchmarks of matmul, GEMV, softmax, GELU and layer norm with their GFLOP/s and % of the "
                "roofline, and a per-layer profile");
  cmd->add_option("--steps", o->training.steps, "Training workload: steps")->check(CLI::Range(1, 100000))->capture_default_str();
  cmd->add_option("--loaders", o->training.loader_threads, "Training workload: data-loader threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_option("--hidden", o->training.hidden, "Training workload: width of the dense layers")
      ->check(CLI::Range(8, 2048))
      ->capture_default_str();
  cmd->add_option("--layers", o->training.layers, "Training workload: dense layers")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  cmd->add_flag("!--no-sampling", o->sample, "Do not sample call stacks (no flamegraph)");
  cmd->add_option("--sample-hz", o->sample_hz,
                  "CPU samples per second of CPU time (the sampler's maximum by default, for about 1,000 samples "
                  "in the default run; each sample costs the workload some time: lower it for closer timings)")
      ->check(CLI::Range(1.0, 10000.0))
      ->capture_default_str();
  cmd->add_flag("--gpu", o->gpu,
                "Profile a small GPU training step instead (CUDA kernels, cuBLAS, copies on two streams) with the "
                "nnprof-gpu-demo program; exit status 3 when this machine has no usable NVIDIA GPU");
  cmd->add_option("--iterations", o->gpu_iterations, "GPU demo: training steps")
      ->check(CLI::Range(1, 100000))
      ->capture_default_str();
  cmd->add_option("--size", o->gpu_size, "GPU demo: dimension of the square SGEMM (vectors have size^2 elements)")
      ->check(CLI::Range(64, 8192))
      ->capture_default_str();
  cmd->add_option("--out", o->out_dir, "Directory for the profile and its reports")->capture_default_str();
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    for (const auto& [positional, option] : {std::pair{"INFERENCES", "--inferences"}, std::pair{"TOKENS", "--tokens"}})
      if (cmd->count(positional) > 0 && cmd->count(option) > 0)
        throw std::invalid_argument(fmt::format("{} given twice: as the argument {} and as {}", option + 2,
                                                positional, option));
    if (cmd->count("INFERENCES") > 0) o->transformer.inferences = o->positional_inferences;
    if (cmd->count("TOKENS") > 0) o->transformer.tokens = o->positional_tokens;
    for (const char* only : {"--iterations", "--size"})
      if (!o->gpu && cmd->count(only) > 0) throw std::invalid_argument(std::string(only) + " applies to --gpu only");
    if (o->gpu) {
      for (const char* cpu_only : {"--workload", "--model", "--inferences", "--tokens", "--top-k", "--deep", "--steps",
                                   "--loaders", "--hidden", "--layers", "--no-sampling", "--sample-hz", "OUTPUT",
                                   "INFERENCES", "TOKENS"})
        if (cmd->count(cpu_only) > 0)
          throw std::invalid_argument(std::string(cpu_only) + " does not apply to --gpu (the GPU demo takes --iterations, "
                                      "--size and --out)");
      return run_gpu_demo(*o);
    }
    const bool training = o->workload == "training";
    for (const char* only : {"--steps", "--loaders", "--hidden", "--layers"})
      if (!training && cmd->count(only) > 0)
        throw std::invalid_argument(std::string(only) + " applies to --workload training only");
    for (const char* only : {"--model", "--inferences", "--tokens", "--top-k", "--deep", "INFERENCES", "TOKENS"})
      if (training && cmd->count(only) > 0)
        throw std::invalid_argument(std::string(only) + " applies to the transformer workload only");
    if (cmd->count("--sample-hz") > 0 && !o->sample)
      throw std::invalid_argument("--sample-hz and --no-sampling contradict each other");
    o->transformer.models = transformer::models_named(o->model);
    // Checked before anything runs, so a wrong argument costs nothing.
    for (const auto& m : o->transformer.models) m.validate();
    if (!o->report_file.empty()) check_report_file(o->report_file, o->sample);

    std::error_code ec;
    std::filesystem::create_directories(o->out_dir, ec);
    if (ec) throw Error("cannot create the output directory '" + o->out_dir + "': " + ec.message());
    const std::filesystem::path dir(o->out_dir);
    const std::optional<MachinePeaks> peaks = peaks_for_roofline();

    Profiler profiler;
    set_thread_name("main");
    // Heap tracking shows where the workload's memory goes; a build whose allocator is replaced
    // (a sanitizer) runs the demo without it. Sampling gives the flamegraph and line-level
    // attribution; a process where it cannot run (every real-time signal taken, no timers) goes on without.
    std::optional<MemoryTracking> tracking;
    try {
      tracking.emplace(profiler);
    } catch (const Error& e) {
      std::cerr << "nnprof: the demo runs without heap tracking: " << e.what() << "\n";
    }
    std::optional<CpuProfiler> sampler;
    if (o->sample) {
      try {
        CpuProfilerOptions so;
        so.hz = o->sample_hz;
        sampler.emplace(profiler, so);
      } catch (const Error& e) {
        std::cerr << "nnprof: the demo runs without CPU sampling (no flamegraph): " << e.what() << "\n";
      }
    }
    const auto t0 = std::chrono::steady_clock::now();
    transformer::DemoResult transformer_result;
    demo::DemoResult training_result;
    if (training)
      training_result = demo::run_demo_workload(profiler, o->training);
    else
      transformer_result = transformer::run_demo(profiler, o->transformer, peaks ? &*peaks : nullptr);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (sampler) sampler->stop();
    if (tracking) tracking->stop();

    Profile profile = profiler.snapshot();
    if (profile.machine.measured_unix == 0 && peaks) profile.machine = *peaks;
    const Report report(profile);
    std::cout << report;

    std::vector<std::string> written;
    if (!o->report_file.empty()) {
      // The report the first argument names, where it names it (as the seed writes
      // profile-report.md); Profile::save writes a report for a report's extension.
      if (o->report_file.ends_with(".nnprof"))
        profile.save(o->report_file);
      else
        report.export_to(o->report_file);
      written.push_back(o->report_file);
    }
    const std::string profile_path = (dir / "profile.nnprof").string();
    profile.save(profile_path);
    written.push_back(profile_path);
    std::vector<std::pair<const char*, ReportFormat>> outputs{
        {"report.txt", ReportFormat::Text}, {"report.md", ReportFormat::Markdown}, {"report.json", ReportFormat::Json},
        {"report.html", ReportFormat::Html}, {"report.csv", ReportFormat::Csv},   {"trace.json", ReportFormat::Chrome}};
    if (!profile.cpu_samples.empty()) {
      outputs.emplace_back("flamegraph.svg", ReportFormat::Flamegraph);
      outputs.emplace_back("profile.pb.gz", ReportFormat::Pprof);
    }
    for (const auto& [file, format] : outputs) {
      report.export_to((dir / file).string(), format);
      written.push_back((dir / file).string());
    }
    if (!profile.metrics.empty()) {
      save_metrics(profile, (dir / "metrics.json").string());
      written.push_back((dir / "metrics.json").string());
      plot_metrics(profile, (dir / "metrics.png").string());
      written.push_back((dir / "metrics.png").string());
    }
    if (described_models(profile).size() >= 2) {
      // What `nnprof model-compare` prints, kept with the other reports.
      export_model_comparison(compare_models(profile), (dir / "model-comparison.md").string(), ReportFormat::Markdown);
      written.push_back((dir / "model-comparison.md").string());
    }
    std::cout << "\nFiles written" << (o->report_file.empty() ? "" : " (the named report, then --out " + o->out_dir + "/)")
              << ":\n";
    for (const auto& f : written) std::cout << "  " << f << '\n';
    std::cout << "Open trace.json in https://ui.perfetto.dev or chrome://tracing; report.html in a browser;\n"
                 "query the profile with: nnprof query "
              << profile_path << " \"select name, count(*), sum(dur) from slice group by name\"\n";
    if (training)
      fmt::print("\nDemo: {} training steps in {:.3f} s, final loss {:.4f}, {:.2f} GFLOP/s in the dense layers.\n",
                 o->training.steps, seconds, training_result.final_loss,
                 static_cast<double>(training_result.flops) / seconds / 1e9);
    else
      print_transformer_summary(transformer_result, profile_path);
    if (sampler) {
      // The figure that says whether the flame graph means something: a function's share of
      // n samples is known to about 1/sqrt(n) of it.
      const CpuProfilerStats stats = sampler->stats();
      fmt::print("\nCPU sampling: {} samples at {} Hz of CPU time ({}){}\n", with_separators(stats.samples),
                 with_separators(static_cast<std::uint64_t>(stats.effective_hz)), stats.mechanism,
                 stats.samples < 1000 ? "; fewer than 1,000: run more work (--inferences, --tokens) for a steadier "
                                        "flame graph"
                                      : "");
    }
    return 0;
  };
}

}  // namespace nnprof::cli
