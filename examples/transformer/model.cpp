#include "model.hpp"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "kernels.hpp"
#include "nnprof/flops.hpp"
#include "nnprof/scope.hpp"

namespace nnprof::transformer {
inline namespace NNPROF_TRANSFORMER_VARIANT {

namespace {

/// splitmix64: a tiny generator whose output is the same on every platform and standard
/// library, unlike std::normal_distribution, so the weights of a seed never change.
std::uint64_t splitmix64(std::uint64_t& state) noexcept {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) from the top 53 bits.
double unit_interval(std::uint64_t bits) noexcept { return static_cast<double>(bits >> 11) * 0x1.0p-53; }

std::size_t sz(int v) noexcept { return static_cast<std::size_t>(v); }

}  // namespace

ModelConfig ModelConfig::small() { return {"small", 128, 2, 4, 64, 256, 42}; }
ModelConfig ModelConfig::medium() { return {"medium", 256, 4, 8, 128, 512, 42}; }

std::uint64_t ModelConfig::parameter_count() const noexcept {
  const std::uint64_t d = static_cast<std::uint64_t>(d_model);
  const std::uint64_t v = static_cast<std::uint64_t>(vocab);
  const std::uint64_t c = static_cast<std::uint64_t>(context);
  const std::uint64_t block = 12 * d * d + 13 * d;
  return v * d + c * d + static_cast<std::uint64_t>(layers) * block + 2 * d + d * v;
}

std::uint64_t ModelConfig::kv_cache_bytes() const noexcept {
  return 2ull * static_cast<std::uint64_t>(layers) * static_cast<std::uint64_t>(context) *
         static_cast<std::uint64_t>(d_model) * sizeof(float);
}

void ModelConfig::validate() const {
  auto bad = [&](const std::string& what) {
    throw std::invalid_argument("model '" + name + "': " + what);
  };
  if (name.empty()) bad("the name is empty");
  for (const char ch : name)
    if (!std::isalnum(static_cast<unsigned char>(ch)) && ch != '_' && ch != '-')
      bad("the name may contain only letters, digits, '_' and '-'");
  if (d_model < 8 || d_model > 8192) bad("d_model must be 8 to 8192, not " + std::to_string(d_model));
  if (layers < 1 || layers > 256) bad("layers must be 1 to 256, not " + std::to_string(layers));
  if (heads < 1 || d_model % heads != 0)
    bad("heads must divide d_model (" + std::to_string(d_model) + "), not " + std::to_string(heads));
  if (context < 1 || context > 65536) bad("context must be 1 to 65536, not " + std::to_string(context));
  if (vocab < 2 || vocab > 1 << 20) bad("vocab must be 2 to 1048576, not " + std::to_string(vocab));
}

Model::Model(ModelConfig config, Profiler& profiler) : config_(std::move(config)), profiler_(&profiler) {
  config_.validate();
  NNPROF_SCOPE_IN(*profiler_, "load_weights");
  const int d = config_.d_model;
  const int ff = config_.d_ff();
  // Rows of a matrix 4 KiB apart (1024 floats) all map to the same L1 sets: pad them.
  auto stride_for = [](int cols) { return cols % 1024 == 0 ? cols + 16 : cols; };
  std::size_t padding = sz(d) * sz(stride_for(config_.vocab) - config_.vocab);
  padding += sz(config_.layers) * (sz(d) * sz(stride_for(3 * d) - 3 * d) + sz(d) * sz(stride_for(d) - d) +
                                   sz(d) * sz(stride_for(ff) - ff) + sz(ff) * sz(stride_for(d) - d));
  weights_.assign(config_.parameter_count() + padding, 0.0f);
  // Scaled uniform initialisation (variance 1/fan_in, as LeCun's): activations stay of order
  // one through the blocks, so softmax and GELU see realistic inputs.
  std::uint64_t state = config_.seed;
  std::size_t next = 0;
  auto take = [&](std::size_t count, float scale, float offset = 0.0f) {
    float* p = weights_.data() + next;
    for (std::size_t i = 0; i < count; ++i)
      p[i] = offset + scale * static_cast<float>(2.0 * unit_interval(splitmix64(state)) - 1.0);
    next += count;
    parameters_ += count;
    return static_cast<const float*>(p);
  };
  // A rows × cols matrix with its rows `ld` apart; the padding stays zero.
  auto take_matrix = [&](int rows, int cols, float scale, int& ld) {
    ld = stride_for(cols);
    const float* first = weights_.data() + next;
    for (int r = 0; r < rows; ++r) {
      (void)take(sz(cols), scale);
      next += sz(ld - cols);
    }
    return first;
  };
  const float embed_scale = 1.0f;
  const float in_scale = std::sqrt(3.0f / static_cast<float>(d));          // uniform: var = s²/3
  const float ff_scale = std::sqrt(3.0f / static_cast<float>(config_.d_ff()));
  const float small_scale = 0.02f;
  token_embedding_ = take(sz(config_.vocab) * sz(d), embed_scale);
  position_embedding_ = take(sz(config_.context) * sz(d), small_scale * 10);
  layers_.resize(sz(config_.layers));
  for (Layer& l : layers_) {
    l.ln1_gamma = take(sz(d), small_scale, 1.0f);
    l.ln1_beta = take(sz(d), small_scale);
    l.w_qkv = take_matrix(d, 3 * d, in_scale, l.ld_qkv);
    l.b_qkv = take(3 * sz(d), small_scale);
    l.w_out = take_matrix(d, d, in_scale, l.ld_out);
    l.b_out = take(sz(d), small_scale);
    l.ln2_gamma = take(sz(d), small_scale, 1.0f);
    l.ln2_beta = take(sz(d), small_scale);
    l.w_fc1 = take_matrix(d, ff, in_scale, l.ld_fc1);
    l.b_fc1 = take(sz(config_.d_ff()), small_scale);
    l.w_fc2 = take_matrix(ff, d, ff_scale, l.ld_fc2);
    l.b_fc2 = take(sz(d), small_scale);
  }
  final_gamma_ = take(sz(d), small_scale, 1.0f);
  final_beta_ = take(sz(d), small_scale);
  lm_head_ = take_matrix(d, config_.vocab, in_scale, ld_lm_head_);
  if (next != weights_.size() || parameters_ != config_.parameter_count())
    throw std::logic_error("transformer: parameter layout does not match the count");

  const std::size_t cache = sz(config_.layers) * sz(config_.context) * sz(d);
  key_cache_.assign(cache, 0.0f);
  value_cache_.assign(cache, 0.0f);
  x_.assign(sz(d), 0.0f);
  normed_.assign(sz(d), 0.0f);
  qkv_.assign(3 * sz(d), 0.0f);
  attended_.assign(sz(d), 0.0f);
  hidden_.assign(sz(config_.d_ff()), 0.0f);
  scores_.assign(sz(config_.heads) * sz(config_.context), 0.0f);
  logits_.assign(sz(config_.vocab), 0.0f);
  candidates_.reserve(sz(config_.vocab));
#if NNPROF_ENABLED
  time_per_token_ = profiler_->metrics().histogram(config_.name + ".time_per_token", "ms");
  tokens_per_second_ = profiler_->metrics().gauge(config_.name + ".tokens_per_s", "tokens/s");
#endif
}

void Model::linear(const float* x, const float* w, int ldw, const float* b, float* y, int in, int out) {
  NNPROF_SCOPE_COST_IN(*profiler_, "matmul",
                       b != nullptr ? flops::linear(1, static_cast<std::uint64_t>(in), static_cast<std::uint64_t>(out))
                                    : flops::matmul(1, static_cast<std::uint64_t>(out), static_cast<std::uint64_t>(in)));
  kernels::matmul(1, out, in, x, in, w, ldw, y, out);
  if (b != nullptr) kernels::add_bias(y, b, out);
}

void Model::layernorm(const float* x, const float* gamma, const float* beta, float* y) {
  NNPROF_SCOPE_COST_IN(*profiler_, "layernorm", flops::layernorm(1, static_cast<std::uint64_t>(config_.d_model)));
  kernels::layernorm(x, gamma, beta, y, config_.d_model);
}

void Model::attention(const Layer& layer, int index, int pos) {
  NNPROF_SCOPE_IN(*profiler_, "attention");
  const int d = config_.d_model;
  const int heads = config_.heads;
  const int hd = config_.head_dim();
  const int seen = pos + 1;  // causal: the new token attends to every cached position and itself
  [[maybe_unused]] const auto useen = static_cast<std::uint64_t>(seen);  // for the declared costs
  [[maybe_unused]] const auto uhd = static_cast<std::uint64_t>(hd);
  layernorm(x_.data(), layer.ln1_gamma, layer.ln1_beta, normed_.data());
  linear(normed_.data(), layer.w_qkv, layer.ld_qkv, layer.b_qkv, qkv_.data(), d, 3 * d);

  // Append this position's key and value to the cache (rows of d, heads side by side).
  float* keys = key_cache_.data() + sz(index) * sz(config_.context) * sz(d);
  float* values = value_cache_.data() + sz(index) * sz(config_.context) * sz(d);
  std::copy_n(qkv_.data() + d, d, keys + sz(pos) * sz(d));
  std::copy_n(qkv_.data() + 2 * d, d, values + sz(pos) * sz(d));

  const float scale = 1.0f / std::sqrt(static_cast<float>(hd));
  {
    // Per head q·Kᵀ over the cached keys, then the 1/√d scale.
    NNPROF_SCOPE_COST_IN(*profiler_, "attention_scores",
                         static_cast<double>(heads) * flops::matmul(1, useen, uhd) +
                             flops::elementwise(static_cast<std::uint64_t>(heads) * useen, 1.0));
    for (int h = 0; h < heads; ++h) {
      float* s = scores_.data() + sz(h) * sz(config_.context);
      kernels::matmul_bt(1, seen, hd, qkv_.data() + sz(h) * sz(hd), hd, keys + sz(h) * sz(hd), d, s, seen);
      for (int t = 0; t < seen; ++t) s[t] *= scale;
    }
  }
  {
    NNPROF_SCOPE_COST_IN(*profiler_, "softmax", flops::softmax(static_cast<std::uint64_t>(heads), useen));
    for (int h = 0; h < heads; ++h) kernels::softmax(scores_.data() + sz(h) * sz(config_.context), seen);
  }
  {
    NNPROF_SCOPE_COST_IN(*profiler_, "attention_values", static_cast<double>(heads) * flops::matmul(1, uhd, useen));
    for (int h = 0; h < heads; ++h)
      kernels::matmul(1, hd, seen, scores_.data() + sz(h) * sz(config_.context), seen, values + sz(h) * sz(hd), d,
                      attended_.data() + sz(h) * sz(hd), hd);
  }
  linear(attended_.data(), layer.w_out, layer.ld_out, layer.b_out, normed_.data(), d, d);
  kernels::add_inplace(x_.data(), normed_.data(), d);  // residual
}

void Model::mlp(const Layer& layer) {
  NNPROF_SCOPE_IN(*profiler_, "mlp");
  const int d = config_.d_model;
  const int ff = config_.d_ff();
  layernorm(x_.data(), layer.ln2_gamma, layer.ln2_beta, normed_.data());
  linear(normed_.data(), layer.w_fc1, layer.ld_fc1, layer.b_fc1, hidden_.data(), d, ff);
  {
    NNPROF_SCOPE_COST_IN(*profiler_, "gelu", flops::gelu(static_cast<std::uint64_t>(ff)));
    kernels::gelu(hidden_.data(), ff);
  }
  linear(hidden_.data(), layer.w_fc2, layer.ld_fc2, layer.b_fc2, normed_.data(), ff, d);
  kernels::add_inplace(x_.data(), normed_.data(), d);  // residual
}

std::span<const float> Model::forward(int token, int pos) {
  if (token < 0 || token >= config_.vocab)
    throw std::out_of_range("transformer: token " + std::to_string(token) + " is outside the vocabulary of " +
                            std::to_string(config_.vocab));
  if (pos < 0 || pos >= config_.context)
    throw std::out_of_range("transformer: position " + std::to_string(pos) + " is outside the context of " +
                            std::to_string(config_.context));
  NNPROF_SCOPE_IN(*profiler_, "forward");
  const int d = config_.d_model;
  {
    NNPROF_SCOPE_COST_IN(*profiler_, "embed", flops::elementwise(static_cast<std::uint64_t>(d), 1.0, 2));
    const float* te = token_embedding_ + sz(token) * sz(d);
    const float* pe = position_embedding_ + sz(pos) * sz(d);
    for (int i = 0; i < d; ++i) x_[sz(i)] = te[i] + pe[i];
  }
  for (int i = 0; i < config_.layers; ++i) {
    NNPROF_SCOPE_IN(*profiler_, "block");
    attention(layers_[sz(i)], i, pos);
    mlp(layers_[sz(i)]);
  }
  layernorm(x_.data(), final_gamma_, final_beta_, normed_.data());
  {
    NNPROF_SCOPE_IN(*profiler_, "lm_head");
    linear(normed_.data(), lm_head_, ld_lm_head_, nullptr, logits_.data(), d, config_.vocab);
  }
  return logits_;
}

void Model::layer_attention(int layer, int pos) {
  if (layer < 0 || layer >= config_.layers) throw std::out_of_range("transformer: no layer " + std::to_string(layer));
  if (pos < 0 || pos >= config_.context) throw std::out_of_range("transformer: position outside the context");
  attention(layers_[sz(layer)], layer, pos);
}

void Model::layer_mlp(int layer) {
  if (layer < 0 || layer >= config_.layers) throw std::out_of_range("transformer: no layer " + std::to_string(layer));
  mlp(layers_[sz(layer)]);
}

double Model::forward_flops(int pos) const {
  const auto d = static_cast<std::uint64_t>(config_.d_model);
  const auto ff = static_cast<std::uint64_t>(config_.d_ff());
  const auto heads = static_cast<std::uint64_t>(config_.heads);
  const auto hd = static_cast<std::uint64_t>(config_.head_dim());
  const auto seen = static_cast<std::uint64_t>(pos + 1);
  const double block = 2 * flops::layernorm(1, d).flops + flops::linear(1, d, 3 * d).flops +
                       static_cast<double>(heads) * flops::matmul(1, seen, hd).flops +
                       flops::elementwise(heads * seen, 1.0).flops + flops::softmax(heads, seen).flops +
                       static_cast<double>(heads) * flops::matmul(1, hd, seen).flops +
                       flops::linear(1, d, d).flops + flops::linear(1, d, ff).flops + flops::gelu(ff).flops +
                       flops::linear(1, ff, d).flops;
  return flops::elementwise(d, 1.0, 2).flops + static_cast<double>(config_.layers) * block +
         flops::layernorm(1, d).flops + flops::matmul(1, static_cast<std::uint64_t>(config_.vocab), d).flops;
}

int Model::sample(std::mt19937_64& rng, const SamplingOptions& sampling) {
  NNPROF_SCOPE_IN(*profiler_, "sample");
  const int vocab = config_.vocab;
  if (sampling.top_k <= 1)
    return static_cast<int>(std::max_element(logits_.begin(), logits_.end()) - logits_.begin());
  // Top-k: the k largest logits, a softmax over them at the temperature, one draw. Ties
  // break towards the lower token id, so the order (and the draw) is deterministic.
  const int k = std::min(sampling.top_k, vocab);
  candidates_.clear();
  for (int i = 0; i < vocab; ++i) candidates_.emplace_back(logits_[sz(i)], i);
  auto higher = [](const std::pair<float, int>& a, const std::pair<float, int>& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  };
  std::partial_sort(candidates_.begin(), candidates_.begin() + k, candidates_.end(), higher);
  const float t = sampling.temperature;
  const float top = candidates_[0].first;
  double total = 0.0;
  for (int i = 0; i < k; ++i) total += std::exp(static_cast<double>((candidates_[sz(i)].first - top) / t));
  double draw = unit_interval(rng()) * total;
  for (int i = 0; i < k; ++i) {
    draw -= std::exp(static_cast<double>((candidates_[sz(i)].first - top) / t));
    if (draw < 0.0) return candidates_[sz(i)].second;
  }
  return candidates_[sz(k - 1)].second;  // rounding left a sliver past the last candidate
}

ContextUse ModelConfig::context_use(int tokens) const noexcept {
  ContextUse use;
  use.tokens = tokens;
  use.context = context;
  use.slid_tokens = std::max(0, tokens - context);
  use.reencoded_positions = static_cast<std::uint64_t>(use.slid_tokens) * static_cast<std::uint64_t>(context - 1);
  return use;
}

namespace {
// "2,268", as the reports print counts.
std::string grouped(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (std::size_t i = digits.size(); i > 3; i -= 3) digits.insert(i - 3, 1, ',');
  return digits;
}
}  // namespace

std::string ContextUse::describe() const {
  if (slid_tokens == 0)
    return "context " + std::to_string(context) + ", generated " + std::to_string(tokens) +
           " tokens per inference: within the context";
  return "context " + std::to_string(context) + ", generated " + std::to_string(tokens) +
         " tokens per inference: sliding window of the last " + std::to_string(context) + " tokens for the last " +
         std::to_string(slid_tokens) + ", each re-encoding its window (" + grouped(reencoded_positions) +
         " extra forward passes in slide_window per inference: learned absolute positions cannot be shifted in "
         "the KV cache)";
}

std::vector<int> Model::generate(int tokens, const SamplingOptions& sampling) {
  if (tokens < 1) throw std::invalid_argument("model '" + config_.name + "': tokens per inference must be at least 1, not " +
                                              std::to_string(tokens));
  if (sampling.top_k < 1) throw std::invalid_argument("top-k must be at least 1 (1 is greedy)");
  if (!(sampling.temperature > 0.0f)) throw std::invalid_argument("the sampling temperature must be positive");
  NNPROF_SCOPE_IN(*profiler_, "inference");
  std::mt19937_64 rng(sampling.seed);
  std::vector<int> out;
  out.reserve(sz(tokens));
  const int context = config_.context;
  // Every token fed to the model: the beginning-of-sequence token 0, then each generated one.
  std::vector<int> inputs;
  inputs.reserve(sz(tokens));
  int token = 0;
#if NNPROF_ENABLED
  using Clock = std::chrono::steady_clock;
  const Clock::time_point first = Clock::now();
  Clock::time_point last = first;
#endif
  for (int step = 0; step < tokens; ++step) {
    NNPROF_SCOPE_IN(*profiler_, "generate_token");
    inputs.push_back(token);
    int pos = step;
    if (step >= context) {
      // The cache is full: the model sees the last `context` inputs only, as nanoGPT and the
      // seed's SmallMind crop their input to the block size. Each cached key and value carries
      // the learned embedding of its absolute position, so the cache cannot be shifted by one
      // (rotary embeddings could be): the window's other tokens are encoded again at positions
      // 0 to context-2, then the newest input goes at context-1.
      NNPROF_SCOPE_IN(*profiler_, "slide_window");
      const int window_start = step - context + 1;
      for (int p = 0; p < context - 1; ++p) forward(inputs[sz(window_start + p)], p);
      pos = context - 1;
    }
    forward(token, pos);
    token = sample(rng, sampling);
    out.push_back(token);
#if NNPROF_ENABLED
    const Clock::time_point now = Clock::now();
    time_per_token_.record(std::chrono::duration<double, std::milli>(now - last).count());
    last = now;
#endif
  }
#if NNPROF_ENABLED
  tokens_per_second_.set(tokens / std::chrono::duration<double>(last - first).count());
  // Tokens are the work items of both scopes: the reports' throughput columns then read
  // tokens/s (per inference, and per second spent generating) next to the time per token.
  profiler_->add_items("inference", static_cast<std::uint64_t>(tokens));
  profiler_->add_items("generate_token", static_cast<std::uint64_t>(tokens));
#endif
  return out;
}

}  // namespace NNPROF_TRANSFORMER_VARIANT
}  // namespace nnprof::transformer
