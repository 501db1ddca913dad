// A small LibTorch training loop: a two-layer classifier with layer norm and GELU, trained on
// random data for a few SGD steps. Two ways to profile it:
//
//   nnprof record -- ./nnprof_train_libtorch            no code change: the preload agent
//                                                       records every operator
//   ./nnprof_train_libtorch --profile report.md         with nnprof::torch::OpObserver in
//                                                       the code, written as a report
//
// Either way each ATen operator (aten::linear > aten::addmm, AddmmBackward0, ...) is an nnprof
// scope with its input shapes and FLOPs, nested in the "train_step" scope below.
#include <torch/torch.h>

#include <cstdlib>
#include <cstring>
#include <iostream>
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
            << "                    or .nnprof)\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  int steps = 20;
  std::optional<std::string> report;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--steps") == 0 && i + 1 < argc) {
      steps = std::atoi(argv[++i]);
      if (steps <= 0) return usage(argv[0]);
    } else if (std::strcmp(argv[i], "--profile") == 0 && i + 1 < argc) {
      report = argv[++i];
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
  std::cout << "trained " << steps << " steps, loss " << loss_value << "\n";
  if (report) {
    nnprof::global_profiler().save(*report);
    std::cout << "report written to " << *report << "\n";
  }
  return 0;
}
