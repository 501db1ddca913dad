// Model descriptions as run annotations (nnprof/model_info.hpp): the keys one description
// becomes, shared by the writer (describe_model) and the reader (described_models).
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "nnprof/model_info.hpp"

namespace nnprof {

/// Non-empty, letters, digits, '_' and '-' only: a name that cannot hide a '.' of the key.
bool is_valid_model_name(std::string_view name) noexcept;

/// The annotations describing `model`: ("model.<name>.<field>", decimal value), one per field.
std::vector<std::pair<std::string, std::string>> model_annotations(const ModelInfo& model);

}  // namespace nnprof
