// describe_model: a model's size and shape as annotations of the run (nnprof/model_info.hpp).
#include "nnprof/model_info.hpp"

#include <stdexcept>

#include "model/model_info.hpp"
#include "nnprof/profiler.hpp"

namespace nnprof {

void describe_model(Profiler& profiler, const ModelInfo& model) {
  if (!is_valid_model_name(model.name))
    throw std::invalid_argument("nnprof::describe_model: model name '" + model.name +
                                "' is invalid: use letters, digits, '_' and '-' only (it becomes the scope "
                                "'model:<name>' and the annotation keys 'model.<name>.<field>')");
  for (const auto& [key, value] : model_annotations(model)) profiler.annotate(key, value);
}

}  // namespace nnprof
