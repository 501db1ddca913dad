// The critical path in the JSON report (docs/JSON_SCHEMA.md). The human-readable reports describe
// it in report/sections/critical_path.cpp.
#pragma once

#include <nlohmann/json.hpp>

#include "nnprof/critical_path.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// The JSON report's "critical_path" object.
nlohmann::ordered_json critical_path_json(const Profile& profile, const CriticalPath& path);

}  // namespace nnprof::io
