#include "demo_workload.hpp"

#include <cmath>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "nnprof/flops.hpp"
#include "nnprof/metrics.hpp"
#include "nnprof/scope.hpp"

namespace nnprof::demo {

namespace {

using Matrix = std::vector<float>;  // row-major

struct Batch {
  Matrix inputs;   // batch x hidden
  Matrix targets;  // batch x hidden
};

/// A bounded queue between the loader threads and the training loop.
class BatchQueue {
 public:
  explicit BatchQueue(std::size_t capacity) : capacity_(capacity) {}
  void push(Batch b) {
    std::unique_lock lock(mu_);
    not_full_.wait(lock, [&] { return items_.size() < capacity_ || closed_; });
    if (closed_) return;
    items_.push_back(std::move(b));
    not_empty_.notify_one();
  }
  bool pop(Batch& out) {
    std::unique_lock lock(mu_);
    not_empty_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    out = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return true;
  }
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
    not_empty_.notify_all();
    not_full_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable not_empty_, not_full_;
  std::deque<Batch> items_;
  std::size_t capacity_;
  bool closed_ = false;
};

// c[m x n] (+)= a[m x k] * b[k x n], optionally with a or b transposed.
void matmul(const float* a, const float* b, float* c, int m, int k, int n, bool ta, bool tb, bool accumulate) {
  for (int i = 0; i < m; ++i) {
    float* crow = c + static_cast<std::ptrdiff_t>(i) * n;
    if (!accumulate)
      for (int j = 0; j < n; ++j) crow[j] = 0.f;
    for (int p = 0; p < k; ++p) {
      const float av = ta ? a[static_cast<std::ptrdiff_t>(p) * m + i] : a[static_cast<std::ptrdiff_t>(i) * k + p];
      if (tb) {
        for (int j = 0; j < n; ++j) crow[j] += av * b[static_cast<std::ptrdiff_t>(j) * k + p];
      } else {
        const float* brow = b + static_cast<std::ptrdiff_t>(p) * n;
        for (int j = 0; j < n; ++j) crow[j] += av * brow[j];
      }
    }
  }
}

float gelu(float x) { return 0.5f * x * (1.f + std::tanh(0.7978845608f * (x + 0.044715f * x * x * x))); }
float gelu_grad(float x) {
  const float t = std::tanh(0.7978845608f * (x + 0.044715f * x * x * x));
  return 0.5f * (1.f + t) + 0.5f * x * (1.f - t * t) * 0.7978845608f * (1.f + 3.f * 0.044715f * x * x);
}

void load_batches(Profiler& profiler, BatchQueue& queue, int index, int count, const DemoOptions& o) {
  set_thread_name("loader-" + std::to_string(index));
  std::mt19937 rng(1234u + static_cast<unsigned>(index));
  std::normal_distribution<float> noise(0.f, 1.f);
  const std::size_t elems = static_cast<std::size_t>(o.batch) * static_cast<std::size_t>(o.hidden);
  for (int i = 0; i < count; ++i) {
    Batch b;
    {
      NNPROF_SCOPE_IN(profiler, "load_batch");
      {
        NNPROF_SCOPE_IN(profiler, "decode");
        b.inputs.resize(elems);
        for (auto& v : b.inputs) v = noise(rng);
      }
      {
        NNPROF_SCOPE_IN(profiler, "augment");
        b.targets.resize(elems);
        for (std::size_t j = 0; j < elems; ++j) b.targets[j] = std::sin(b.inputs[j]) * 0.5f;
      }
    }
    queue.push(std::move(b));
  }
}

}  // namespace

DemoResult run_demo_workload(Profiler& profiler, const DemoOptions& o) {
  if (o.steps < 1 || o.loader_threads < 1 || o.hidden < 8 || o.layers < 1 || o.batch < 1)
    throw std::invalid_argument("demo options out of range: steps, loader threads, layers and batch must be >= 1, "
                                "hidden >= 8");
  const int h = o.hidden, bsz = o.batch, L = o.layers;
  const std::size_t wsize = static_cast<std::size_t>(h) * static_cast<std::size_t>(h);
  const std::size_t asize = static_cast<std::size_t>(bsz) * static_cast<std::size_t>(h);

  std::vector<Matrix> weights(static_cast<std::size_t>(L), Matrix(wsize));
  {
    NNPROF_SCOPE_IN(profiler, "init_weights");
    std::mt19937 rng(42);
    std::normal_distribution<float> init(0.f, 1.f / std::sqrt(static_cast<float>(h)));
    for (auto& w : weights)
      for (auto& v : w) v = init(rng);
    profiler.record_alloc("weights", wsize * sizeof(float) * static_cast<std::size_t>(L));
  }

  BatchQueue queue(4);
  std::vector<std::thread> loaders;
  for (int t = 0; t < o.loader_threads; ++t) {
    const int count = o.steps / o.loader_threads + (t < o.steps % o.loader_threads ? 1 : 0);
    loaders.emplace_back(load_batches, std::ref(profiler), std::ref(queue), t, count, std::cref(o));
  }

  DemoResult result;
  const double layer_flops = 2.0 * bsz * h * h;
  // The work of each operation, declared on its scope so that reports give FLOP/s and the
  // roofline (nnprof/flops.hpp counts the compulsory bytes: each operand read once).
  const nnprof::OpCost matmul_cost = nnprof::flops::matmul(bsz, h, h);
  const nnprof::OpCost gelu_cost = nnprof::flops::gelu(asize);
  const nnprof::OpCost grad_weights_cost = nnprof::flops::matmul(h, h, bsz);
  const nnprof::OpCost grad_inputs_cost = nnprof::flops::matmul(bsz, h, h);
  const nnprof::OpCost update_cost = nnprof::flops::elementwise(wsize, 2, 2);
  std::vector<Matrix> pre(static_cast<std::size_t>(L), Matrix(asize)), act(static_cast<std::size_t>(L + 1), Matrix(asize));
  Matrix grad(asize), grad_pre(asize), wgrad(wsize);
  const float lr = 0.01f;
  for (int step = 0; step < o.steps; ++step) {
    NNPROF_SCOPE_IN(profiler, "train_step");
    Batch batch;
    {
      NNPROF_SCOPE_IN(profiler, "wait_for_batch");
      if (!queue.pop(batch)) break;
    }
    const std::size_t activation_bytes = asize * sizeof(float) * static_cast<std::size_t>(2 * L + 1);
    profiler.record_alloc("activations", activation_bytes);
    {
      NNPROF_SCOPE_IN(profiler, "forward");
      act[0] = batch.inputs;
      for (int l = 0; l < L; ++l) {
        NNPROF_SCOPE_IN(profiler, "dense_layer");
        {
          NNPROF_SCOPE_FLOPS_IN(profiler, "matmul", matmul_cost.flops, matmul_cost.bytes);
          matmul(act[l].data(), weights[l].data(), pre[l].data(), bsz, h, h, false, false, false);
        }
        {
          NNPROF_SCOPE_FLOPS_IN(profiler, "gelu", gelu_cost.flops, gelu_cost.bytes);
          for (std::size_t j = 0; j < asize; ++j) act[l + 1][j] = gelu(pre[l][j]);
        }
      }
    }
    double loss = 0.0;
    {
      NNPROF_SCOPE_IN(profiler, "loss");
      for (std::size_t j = 0; j < asize; ++j) {
        const float d = act[L][j] - batch.targets[j];
        loss += static_cast<double>(d) * d;
        grad[j] = 2.f * d / static_cast<float>(asize);
      }
      loss /= static_cast<double>(asize);
    }
    {
      NNPROF_SCOPE_IN(profiler, "backward");
      for (int l = L - 1; l >= 0; --l) {
        NNPROF_SCOPE_IN(profiler, "dense_layer_grad");
        for (std::size_t j = 0; j < asize; ++j) grad_pre[j] = grad[j] * gelu_grad(pre[l][j]);
        {
          NNPROF_SCOPE_FLOPS_IN(profiler, "matmul_grad_weights", grad_weights_cost.flops, grad_weights_cost.bytes);
          matmul(act[l].data(), grad_pre.data(), wgrad.data(), h, bsz, h, true, false, false);
        }
        {
          NNPROF_SCOPE_FLOPS_IN(profiler, "matmul_grad_inputs", grad_inputs_cost.flops, grad_inputs_cost.bytes);
          matmul(grad_pre.data(), weights[l].data(), grad.data(), bsz, h, h, false, true, false);
        }
        {
          NNPROF_SCOPE_FLOPS_IN(profiler, "optimizer_update", update_cost.flops, update_cost.bytes);
          for (std::size_t j = 0; j < wsize; ++j) weights[l][j] -= lr * wgrad[j];
        }
      }
    }
    profiler.record_free("activations", activation_bytes);
    // Metrics: the loss as a gauge over time, samples seen as a counter.
    profiler.metrics().set("loss", loss);
    profiler.metrics().increment("samples", static_cast<double>(bsz));
    result.final_loss = loss;
    result.flops += static_cast<std::uint64_t>(3 * layer_flops * L);
  }
  queue.close();
  for (auto& t : loaders) t.join();
  return result;
}

}  // namespace nnprof::demo
