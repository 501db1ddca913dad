// Describing the models a run executes, so that `nnprof model-compare` can set their measured
// speed against their size.
//
//   nnprof::describe_model(profiler, {.name = "small", .parameters = 470'528, .d_model = 128, .layers = 2,
//                                     .heads = 4, .context = 64, .vocab = 256,
//                                     .weight_bytes = 4 * 470'528, .kv_cache_bytes = 131'072});
//   {
//     nnprof::ProfileGuard model(profiler, nnprof::model_scope_name("small"));  // "model:small"
//     for (int i = 0; i < runs; ++i) {
//       NNPROF_SCOPE_IN(profiler, "inference");
//       for (int t = 0; t < tokens; ++t) {
//         NNPROF_SCOPE_IN(profiler, "generate_token");
//         { NNPROF_SCOPE_IN(profiler, "forward"); /* blocks, attention, mlp, kernels */ }
//       }
//     }
//   }
//
// The convention the comparison reads (every name is exact):
//   - every run of model X is recorded inside a scope named `model:X` (model_scope_name(X));
//     several such scopes, on any thread or under any parent, are added up;
//   - inside it, each inference is a scope `inference`, each generated token a scope
//     `generate_token` holding one `forward`: tokens/s is the number of `generate_token` calls
//     over the time of the `inference` calls;
//   - the forward pass contains the model's parts (block, attention, mlp, lm_head, ...) down to
//     kernel scopes (matmul, softmax, gelu, layernorm, ...) that declare their FLOPs and bytes
//     (NNPROF_SCOPE_FLOPS, add_flops): FLOPs per token and GFLOP/s are the FLOPs declared in
//     the `inference` scopes and below;
//   - with automatic heap tracking (nnprof::MemoryTracking) the heap allocated inside `model:X`
//     is the model's; the weights and KV cache sizes come from the description.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/profile.hpp"

namespace nnprof {

class Profiler;

/// The size and shape of one model. Stored as run annotations "model.<name>.<field>", e.g.
/// "model.small.parameters" = "470528", one per field below, in decimal.
struct ModelInfo {
  std::string name;                  ///< "small": letters, digits, '_' and '-' only
  std::uint64_t parameters = 0;      ///< trainable parameters, exactly
  std::uint32_t d_model = 0;         ///< width of the residual stream
  std::uint32_t layers = 0;
  std::uint32_t heads = 0;
  std::uint32_t context = 0;         ///< positions attended over
  std::uint32_t vocab = 0;
  std::uint64_t weight_bytes = 0;    ///< bytes of the weights as stored (fp32: 4 x parameters)
  std::uint64_t kv_cache_bytes = 0;  ///< bytes of the KV cache; 0: no KV cache

  bool operator==(const ModelInfo&) const = default;
};

/// Records `model` as annotations of `profiler`'s run (Profiler::annotate); describing a model
/// again replaces its fields. Throws std::invalid_argument when the name is empty or has a
/// character other than [A-Za-z0-9_-].
NNPROF_API void describe_model(Profiler& profiler, const ModelInfo& model);

/// The models described in `profile`, ordered by name. Throws nnprof::Error naming the
/// annotation key when a value is not a decimal number in range, or when a model lacks its
/// "parameters" key. Annotations of other fields are ignored (written by a later nnprof).
NNPROF_API std::vector<ModelInfo> described_models(const Profile& profile);

/// "model:<name>": the scope every run of the model is recorded in.
NNPROF_API std::string model_scope_name(std::string_view model);

}  // namespace nnprof
