// A small decoder-only transformer inference engine (GPT-2 style): token and position
// embeddings, pre-norm blocks of multi-head causal self-attention with a KV cache and a GELU
// MLP, a final layer norm and a language-model head, with greedy or top-k sampling. Weights
// are drawn from a fixed seed, so a run is reproducible; there is no training and no
// tokenizer: the engine exists to be profiled, so it does the real arithmetic of inference.
//
// Every level is instrumented, with the FLOPs and bytes of each kernel declared:
//   inference → generate_token → forward → block → attention | mlp → kernel
// where the kernels are matmul (weight projections), attention_scores (q·Kᵀ over the
// cache), softmax, attention_values (P·V), gelu and layernorm; forward also has embed and
// the final layernorm and lm_head (a matmul), and generate_token has sample.
//
// The same source builds twice: instrumented (the default) and with nnprof compiled out
// (NNPROF_ENABLED=0, in the inline namespace `bare`), so that a benchmark can compare the
// two in one process.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "nnprof/metrics.hpp"
#include "nnprof/profiler.hpp"

#ifndef NNPROF_TRANSFORMER_VARIANT
#define NNPROF_TRANSFORMER_VARIANT instrumented
#endif

namespace nnprof::transformer {
inline namespace NNPROF_TRANSFORMER_VARIANT {

/// An allocator of 64-byte-aligned blocks: a row of weights then starts on a cache line, so
/// that a 512-bit load never straddles two (malloc gives 16 bytes, and where in the line a
/// large block starts depends on the heap: timings would vary between two copies of a model).
template <class T>
struct CacheAligned {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheAligned() = default;
  template <class U>
  CacheAligned(const CacheAligned<U>&) noexcept {}  // NOLINT(google-explicit-constructor): allocator rebind
  T* allocate(std::size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, std::size_t) noexcept { ::operator delete(p, kAlign); }
  template <class U>
  bool operator==(const CacheAligned<U>&) const noexcept { return true; }
};
using FloatBuffer = std::vector<float, CacheAligned<float>>;

struct ContextUse;

/// Shape of a model. The parameter count follows from it (see parameter_count()).
struct ModelConfig {
  std::string name;  ///< "small", "medium", or any [A-Za-z0-9_-]+ name
  int d_model = 0;
  int layers = 0;
  int heads = 0;
  int context = 0;  ///< positions the model attends over; longer generations slide a window of this many
  int vocab = 0;
  std::uint64_t seed = 42;  ///< weights are a pure function of the shape and this seed

  /// d=128, 2 layers, 4 heads, context 64, vocabulary 256: 470,528 parameters.
  static ModelConfig small();
  /// d=256, 4 layers, 8 heads, context 128, vocabulary 512: 3,454,464 parameters.
  static ModelConfig medium();

  [[nodiscard]] int head_dim() const noexcept { return d_model / heads; }
  [[nodiscard]] int d_ff() const noexcept { return 4 * d_model; }
  /// Embeddings V·d + C·d, per block 12d² + 13d (QKV, output, two MLP matrices with biases,
  /// two layer norms), final layer norm 2d, untied head d·V without bias.
  [[nodiscard]] std::uint64_t parameter_count() const noexcept;
  /// Keys and values of every layer for the whole context, fp32.
  [[nodiscard]] std::uint64_t kv_cache_bytes() const noexcept;
  /// Throws std::invalid_argument naming the field when the shape is unusable.
  void validate() const;
  /// What generating `tokens` tokens in one inference does with this context (see ContextUse).
  [[nodiscard]] ContextUse context_use(int tokens) const noexcept;
};

/// How one inference of `tokens` tokens fits a model's context. Past the context, generate()
/// slides a window of the last `context` tokens; since the learned absolute position
/// embeddings are part of every cached key and value, each such token re-encodes the window's
/// other context - 1 tokens (the `slide_window` scope) before its own forward pass.
struct ContextUse {
  int tokens = 0;
  int context = 0;
  int slid_tokens = 0;                    ///< tokens generated with a full window: max(0, tokens - context)
  std::uint64_t reencoded_positions = 0;  ///< extra forward passes: slid_tokens × (context - 1)
  /// "context 64, generated 100 tokens per inference: sliding window of the last 64 tokens ..."
  [[nodiscard]] std::string describe() const;
};

/// How the next token is chosen from the logits.
struct SamplingOptions {
  int top_k = 1;               ///< 1: greedy (argmax); k > 1: draw from the k most likely
  float temperature = 1.0f;    ///< divides the logits before the top-k softmax
  std::uint64_t seed = 1234;   ///< of the draw, reset at every generate()
};

class Model {
 public:
  /// Allocates and initialises the weights and the KV cache, recording into `profiler`.
  explicit Model(ModelConfig config, Profiler& profiler = global_profiler());
  // The layer pointers point into weights_: a copy would point into the original's weights.
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;
  Model(Model&&) noexcept = default;  // a moved vector keeps its buffer, so the pointers stay valid
  Model& operator=(Model&&) noexcept = default;

  [[nodiscard]] const ModelConfig& config() const noexcept { return config_; }
  /// Parameters actually allocated (equals config().parameter_count(); tests check both).
  [[nodiscard]] std::uint64_t parameters_allocated() const noexcept { return parameters_; }
  /// Bytes the weights occupy: 4 per parameter plus the padding of rows that would otherwise
  /// be a multiple of 4 KiB apart (reading such rows maps them all to the same L1 sets).
  [[nodiscard]] std::uint64_t weight_bytes() const noexcept { return weights_.size() * sizeof(float); }

  /// One inference: starting from the beginning-of-sequence token 0 with an empty cache,
  /// generates `tokens` tokens (at least 1), one forward pass each while they fit the context;
  /// past it, each token slides the window (ModelConfig::context_use). Returns them.
  std::vector<int> generate(int tokens, const SamplingOptions& sampling = {});

  /// One forward pass: appends `token` at position `pos` (0 ≤ pos < context; positions
  /// before it must already be in the cache) and returns the logits for the next token.
  std::span<const float> forward(int token, int pos);

  /// One layer's attention (then MLP) on the current activation at position `pos`, as
  /// forward() runs them: for per-layer profiling after a generate() has filled the cache up
  /// to `pos`. Throws std::out_of_range for a bad layer or position.
  void layer_attention(int layer, int pos);
  void layer_mlp(int layer);

  /// FLOPs of forward() at position `pos` as declared to the profiler (a test checks that the
  /// profile's FLOPs add up to this).
  [[nodiscard]] double forward_flops(int pos) const;

 private:
  struct Layer {
    const float *ln1_gamma, *ln1_beta, *w_qkv, *b_qkv, *w_out, *b_out;
    const float *ln2_gamma, *ln2_beta, *w_fc1, *b_fc1, *w_fc2, *b_fc2;
    int ld_qkv, ld_out, ld_fc1, ld_fc2;  // row strides of the matrices, in floats
  };

  void attention(const Layer& layer, int index, int pos);
  void mlp(const Layer& layer);
  void linear(const float* x, const float* w, int ldw, const float* b, float* y, int in, int out);
  void layernorm(const float* x, const float* gamma, const float* beta, float* y);
  int sample(std::mt19937_64& rng, const SamplingOptions& sampling);

  ModelConfig config_;
  Profiler* profiler_;
  FloatBuffer weights_;  // every parameter, in one allocation
  const float* token_embedding_ = nullptr;     // vocab × d
  const float* position_embedding_ = nullptr;  // context × d
  std::vector<Layer> layers_;
  const float* final_gamma_ = nullptr;
  const float* final_beta_ = nullptr;
  const float* lm_head_ = nullptr;  // d × vocab
  int ld_lm_head_ = 0;
  std::uint64_t parameters_ = 0;
  FloatBuffer key_cache_, value_cache_;  // layers × context × d
  // Activations of one token, allocated once: a forward pass allocates nothing.
  FloatBuffer x_, normed_, qkv_, attended_, hidden_, scores_, logits_;
  std::vector<std::pair<float, int>> candidates_;
  // Throughput metrics of generate(): "<name>.time_per_token" (ms, one point per token) and
  // "<name>.tokens_per_s" (one point per inference). Unused when nnprof is compiled out.
  Histogram time_per_token_;
  Gauge tokens_per_second_;
};

}  // namespace NNPROF_TRANSFORMER_VARIANT
}  // namespace nnprof::transformer
