// Model descriptions stored as run annotations "model.<name>.<field>" (nnprof/model_info.hpp).
#include "model/model_info.hpp"

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <limits>
#include <map>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof {

namespace {

constexpr std::string_view kPrefix = "model.";
constexpr std::string_view kRequired = "parameters";

// Every field, in the order of ModelInfo; the 32-bit ones are range-checked when read back.
struct Field {
  std::string_view name;
  std::uint64_t ModelInfo::*wide = nullptr;
  std::uint32_t ModelInfo::*narrow = nullptr;
};
constexpr Field kFields[] = {
    {"parameters", &ModelInfo::parameters, nullptr},       {"d_model", nullptr, &ModelInfo::d_model},
    {"layers", nullptr, &ModelInfo::layers},               {"heads", nullptr, &ModelInfo::heads},
    {"context", nullptr, &ModelInfo::context},             {"vocab", nullptr, &ModelInfo::vocab},
    {"weight_bytes", &ModelInfo::weight_bytes, nullptr},   {"kv_cache_bytes", &ModelInfo::kv_cache_bytes, nullptr},
};

bool name_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

}  // namespace

bool is_valid_model_name(std::string_view name) noexcept {
  return !name.empty() && std::all_of(name.begin(), name.end(), name_char);
}

std::vector<std::pair<std::string, std::string>> model_annotations(const ModelInfo& model) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const Field& f : kFields) {
    const std::uint64_t value = f.wide != nullptr ? model.*f.wide : model.*f.narrow;
    out.emplace_back(fmt::format("{}{}.{}", kPrefix, model.name, f.name), std::to_string(value));
  }
  return out;
}

std::string model_scope_name(std::string_view model) { return fmt::format("model:{}", model); }

std::vector<ModelInfo> described_models(const Profile& profile) {
  std::map<std::string, ModelInfo, std::less<>> models;
  std::map<std::string, bool, std::less<>> has_required;
  // Keys are sorted, so every "model.*" key is in one range.
  for (auto it = profile.annotations.lower_bound(std::string(kPrefix));
       it != profile.annotations.end() && it->first.starts_with(kPrefix); ++it) {
    const std::string& key = it->first;
    const std::string_view rest = std::string_view(key).substr(kPrefix.size());
    const std::size_t dot = rest.find('.');
    if (dot == std::string_view::npos) continue;  // not a field of a model
    const std::string_view name = rest.substr(0, dot), field = rest.substr(dot + 1);
    if (!is_valid_model_name(name)) continue;
    const auto known = std::find_if(std::begin(kFields), std::end(kFields),
                                    [&](const Field& f) { return f.name == field; });
    if (known == std::end(kFields)) continue;  // a field of a later nnprof
    const std::string& text = it->second;
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
    const bool fits = known->wide != nullptr || value <= std::numeric_limits<std::uint32_t>::max();
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || !fits)
      throw Error(fmt::format("annotation '{}' is '{}', not a whole number{}: describe the model again with "
                              "nnprof::describe_model",
                              key, text, known->wide != nullptr ? "" : " below 2^32"));
    auto [entry, added] = models.try_emplace(std::string(name));
    if (added) entry->second.name = std::string(name);
    if (known->wide != nullptr)
      entry->second.*known->wide = value;
    else
      entry->second.*known->narrow = static_cast<std::uint32_t>(value);
    if (field == kRequired) has_required[std::string(name)] = true;
  }
  std::vector<ModelInfo> out;
  for (auto& [name, model] : models) {
    if (!has_required.contains(name))
      throw Error(fmt::format("model '{}' is described without annotation '{}{}.{}': describe it with "
                              "nnprof::describe_model, which writes every field",
                              name, kPrefix, name, kRequired));
    out.push_back(std::move(model));
  }
  return out;
}

}  // namespace nnprof
