// What recording PyTorch operators costs per operator, in one process: nothing, nnprof's
// observer (with and without shapes), and the PyTorch profiler's own recording with
// record_shapes and with_flops (the legacy CPU profiler: Debian's torch has no Kineto, and
// torch.profiler falls back to it), on a tiny elementwise add (the cost per operator shows
// alone) and on a small MLP forward (what a model step sees).
//
//   nnprof_bench_torch --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// The PyTorch profiler's post-processing (building events, key_averages) happens in Python
// after the run and is not in these figures; bench/torch_overhead.py measures it.
#include <benchmark/benchmark.h>
#include <torch/csrc/autograd/profiler_legacy.h>
#include <torch/torch.h>

#include <memory>

#include "nnprof/profiler.hpp"
#include "nnprof/torch.hpp"

namespace {

enum class Recorder { None, Nnprof, NnprofNoShapes, TorchProfiler };

// Records for the lifetime of the object, as chosen.
class Recording {
 public:
  explicit Recording(Recorder r) : recorder_(r) {
    if (r == Recorder::Nnprof || r == Recorder::NnprofNoShapes)
      observer_ = std::make_unique<nnprof::torch::OpObserver>(profiler_, nnprof::torch::OpObserverOptions{r == Recorder::Nnprof});
    if (r == Recorder::TorchProfiler) {
      using namespace torch::autograd::profiler;
      enableProfilerLegacy(ProfilerConfig(ProfilerState::CPU, /*report_input_shapes=*/true, /*profile_memory=*/false,
                                          /*with_stack=*/false, /*with_flops=*/true));
    }
  }
  ~Recording() {
    observer_.reset();
    if (recorder_ == Recorder::TorchProfiler) (void)torch::autograd::profiler::disableProfilerLegacy();
  }

 private:
  Recorder recorder_;
  nnprof::Profiler profiler_;
  std::unique_ptr<nnprof::torch::OpObserver> observer_;
};

void BM_TorchAdd(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  const torch::Tensor a = torch::ones({4}), b = torch::ones({4});
  Recording recording(static_cast<Recorder>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(torch::add(a, b));
  state.SetItemsProcessed(state.iterations());  // one operator per iteration
}

void BM_TorchMlpForward(benchmark::State& state) {
  torch::NoGradGuard no_grad;
  torch::manual_seed(0);
  torch::set_num_threads(1);
  torch::nn::Linear fc1(64, 128), fc2(128, 10);
  torch::nn::LayerNorm norm(torch::nn::LayerNormOptions({128}));
  const torch::Tensor x = torch::randn({32, 64});
  Recording recording(static_cast<Recorder>(state.range(0)));
  for (auto _ : state) {
    torch::Tensor h = torch::gelu(norm->forward(torch::linear(x, fc1->weight, fc1->bias)));
    benchmark::DoNotOptimize(torch::softmax(torch::linear(h, fc2->weight, fc2->bias), -1));
  }
}

void recorders(benchmark::internal::Benchmark* b) {
  b->ArgName("recorder");
  for (Recorder r : {Recorder::None, Recorder::Nnprof, Recorder::NnprofNoShapes, Recorder::TorchProfiler})
    b->Arg(static_cast<int>(r));
}

// recorder: 0 none, 1 nnprof, 2 nnprof without shapes, 3 the PyTorch profiler (shapes, FLOPs).
BENCHMARK(BM_TorchAdd)->Apply(recorders);
BENCHMARK(BM_TorchMlpForward)->Apply(recorders);

}  // namespace

BENCHMARK_MAIN();
