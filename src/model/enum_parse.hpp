// The inverse of to_string for the model's enums (for readers of stored profiles).
#pragma once

#include <optional>
#include <string_view>

#include "nnprof/profile.hpp"

namespace nnprof {

std::optional<DiagnosticKind> parse_diagnostic_kind(std::string_view s) noexcept;
std::optional<Severity> parse_severity(std::string_view s) noexcept;

}  // namespace nnprof
