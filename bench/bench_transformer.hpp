// The compiled-out transformer (bench_transformer_bare.cpp), seen from the benchmark.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace bench_transformer {

struct BareModel;
/// "small" or "medium", with nnprof compiled out (NNPROF_ENABLED=0).
std::shared_ptr<BareModel> make_bare_model(const std::string& which);
/// One inference of `tokens` tokens (greedy).
std::vector<int> run_bare_inference(BareModel& model, int tokens);

}  // namespace bench_transformer
