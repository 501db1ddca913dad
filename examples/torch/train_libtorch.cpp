// A small LibTorch training loop: a two-layer classifier with layer norm and GELU, trained on
// random data for a few SGD steps. Two ways to profile it:
//
//   nnprof record -- ./nnprof_train_libtorch            no code change: the preload agent
//                                                       records every operator
//   ./nnprof_train_libtorch --profile report.md         with nnprof::torch::OpObserver in
//                                                       the code, written as a report
//   ./nnprof_train_libtorch --torch-profiler-counts     under LibTorch's own profiler (shapes
//                                                       and FLOPs on), printing its count of
//                                                       each operator: what nnprof's must equal
//
// Either way each ATen operator (aten::linear > aten::addmm, AddmmBackward0, ...) is an nnprof
// scope with its input shapes and FLOPs, nested in the "train_step" scope below.
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"
#include "nnprof/torch.hpp"

namespace {

struct Classifier : torch::nn::Module {
  Classifier(int in, int hidden, int classes)
      : fc1(register_module("fc1", torch::nn::Linear(in, hidden))),
        norm(register_module("norm", torch::nn::LayerNorm(torch::nn::LayerNormOptions({hidden})))),
        fc2(register_module("fc2", torch::nn::Linear(hidden, classes))) {}
  torch::Tensor forward(const torch::Tensor& x) {
    // torch::linear as Python's nn.Linear calls it (the C++ module goes straight to addmm).
    torch::Tensor h = torch::linear(x, fc1->weight, fc1->bias);
    h = torch::gelu(norm->forward(h));
    return torch::linear(h, fc2->weight, fc2->bias);
  }
  torch::nn::Linear fc1;
  torch::nn::LayerNorm norm;
  torch::nn::Linear fc2;
};

int usage(const char* self) {
  std::cerr << "usage: " << self << " [--steps N] [--profile REPORT]\n"
            << "  --steps N         training steps (default 20)\n"
            << "  --profile REPORT  record the operators with nnprof and write REPORT (.md, .txt, .html, .json\n"
            << "                    or .nnprof)\n"
            << "  --torch-profiler-counts\n"
            << "                    run under LibTorch's profiler instead and print 'count name' per operator\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  std::optional<std::string> report;
  bool torch_counts = false;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
      if (steps <= 0) return usage(argv[0]);
    } else if (std::strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
      report = argv[++i];
    } else if (std::strcmp(argv[i], "--torch-profiler-counts") == 0) {
      torch_counts = true;
    } else {
      return usage(argv[0]);
    }
  }

  torch::manual_seed(0);
  torch::set_num_threads(1);
  auto model = std::make_shared<Classifier>(64, 128, 10);
  torch::optim::SGD optimizer(model->parameters(), torch::optim::SGDOptions(0.05));
  const torch::Tensor x = torch::randn({32, 64});
  const torch::Tensor y = torch::randint(0, 10, {32});

  std::unique_ptr<nnprof::torch::OpObserver> observer;
  if (report) observer = std::make_unique<nnprof::torch::OpObserver>();
  namespace legacy = torch::autograd::profiler;
  if (torch_counts)
    legacy::enableProfilerLegacy(legacy::ProfilerConfig(legacy::ProfilerState::CPU, /*report_input_shapes=*/true,
                                                        /*profile_memory=*/false, /*with_stack=*/false,
                                                        /*with_flops=*/true));
  float loss_value = 0.0f;
  for (int step = 0; step < steps; ++step) {
    NNPROF_SCOPE("train_step");
    optimizer.zero_grad();
    torch::Tensor loss = torch::nn::functional::cross_entropy(model->forward(x), y);
    loss.backward();
    optimizer.step();
    loss_value = loss.item<float>();
  }
  observer.reset();
  if (torch_counts) {
    std::map<std::string, int> counts;
    for (const auto& thread : legacy::disableProfilerLegacy())
      for (const auto& event : thread)
        if (event.kindStr() == "push") ++counts[event.name()];
    for (const auto& [name, count] : counts) std::cout << count << " " << name << "\n";
    return 0;
  }
  std::cout << "trained " << steps << " steps, loss " << loss_value << "\n";
  if (report) {
    nnprof::global_profiler().save(*report);
    std::cout << "report written to " << *report << "\n";
  }
  return 0;
}
