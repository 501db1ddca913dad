// The one exception type nnprof throws (never from the recording hot path).
#pragma once

#include <stdexcept>
#include <string>

#include "nnprof/config.hpp"

namespace nnprof {

/// Thrown when reading files or arguments fails; the message says what is wrong and what
/// to do about it, so the CLI can print it as is.
class NNPROF_API Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace nnprof
