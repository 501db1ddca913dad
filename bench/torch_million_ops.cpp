// One million PyTorch operator calls recorded by nnprof's observer (issue 19): how long the
// profile takes to build and to save per operator event, how large it is, and the peak memory
// of the process (ru_maxrss, LibTorch's own included), with what the bounds dropped.
//
//   nnprof_bench_torch_million [OUT.nnprof] [CALLS] [grad]
//
// With "grad", the operands require gradients, so that every call carries an autograd
// sequence number (`seq`) as a training step's forward operators do: each call's argument set
// is then distinct, the case that costs the store most.
#include <sys/resource.h>
#include <torch/torch.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>

#include "nnprof/profiler.hpp"
#include "nnprof/torch.hpp"

int main(int argc, char** argv) {
  const std::string out = argc > 1 ? argv[1] : "torch_million_ops.nnprof";
  const long calls = argc > 2 ? std::atol(argv[2]) : 1'000'000;
  const bool grad = argc > 3 && std::string(argv[3]) == "grad";
  if (calls <= 0 || (argc > 3 && !grad)) {
    std::cerr << "usage: " << argv[0] << " [OUT.nnprof] [CALLS > 0] [grad]\n";
    return 2;
  }
  torch::set_num_threads(1);
  const torch::Tensor a = torch::ones({4}, torch::requires_grad(grad)), b = torch::ones({4});
  nnprof::Profiler profiler;
  const auto t0 = std::chrono::steady_clock::now();
  {
    nnprof::torch::OpObserver observer(profiler);
    for (long i = 0; i < calls; ++i) (void)torch::add(a, b);
  }
  const auto t1 = std::chrono::steady_clock::now();
  const nnprof::Profile profile = profiler.snapshot();
  const auto t2 = std::chrono::steady_clock::now();
  profile.save(out);
  const auto t3 = std::chrono::steady_clock::now();
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const auto us = [](auto d) { return std::chrono::duration<double, std::micro>(d).count(); };
  const double events = static_cast<double>(profile.spans.size());
  std::cout << "operator calls:        " << calls << " (recorded " << us(t1 - t0) / calls * 1000 << " ns each)\n"
            << "spans kept:            " << profile.spans.size() << "\n"
            << "span arguments kept:   " << profile.span_args.size() << "\n"
            << "build (snapshot):      " << us(t2 - t1) / 1e6 << " s, " << us(t2 - t1) / events << " us per event\n"
            << "save:                  " << us(t3 - t2) / 1e6 << " s, " << us(t3 - t2) / events << " us per event\n"
            << "file:                  " << std::filesystem::file_size(out) / (1 << 20) << " MiB\n"
            << "peak RSS:              " << usage.ru_maxrss / 1024 << " MiB\n";
  for (const auto& d : profile.diagnostics) std::cout << "diagnostic: " << d.message << "\n";
  return 0;
}
