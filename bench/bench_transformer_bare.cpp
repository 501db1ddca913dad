// The transformer with nnprof compiled out, behind an opaque interface: this file sees the
// `bare` variant of model.hpp (nnprof_transformer_bare), bench_transformer.cpp the
// instrumented one, and the two variants are distinct types that cannot share a file.
#define NNPROF_TRANSFORMER_VARIANT bare
#include "model.hpp"

#include "bench_transformer.hpp"

namespace bench_transformer {

struct BareModel {
  nnprof::transformer::bare::Model model;
};

std::shared_ptr<BareModel> make_bare_model(const std::string& which) {
  using nnprof::transformer::bare::ModelConfig;
  return std::make_shared<BareModel>(BareModel{nnprof::transformer::bare::Model(
      which == "medium" ? ModelConfig::medium() : ModelConfig::small())});
}

std::vector<int> run_bare_inference(BareModel& m, int tokens) { return m.model.generate(tokens); }

}  // namespace bench_transformer
