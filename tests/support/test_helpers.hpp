// Small helpers the end-to-end tests share.
#pragma once

#include <chrono>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

namespace nnprof::testing {

/// The whole file, byte for byte; empty when it cannot be read.
inline std::string slurp(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

/// Busy-waits `us` microseconds: a scope that takes at least that long, whatever the load
/// (a sleep would add the scheduler's wake-up latency, which varies much more).
inline void spin_us(int us) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(us);
  while (std::chrono::steady_clock::now() < until) {
  }
}

}  // namespace nnprof::testing
