// Captured stacks are deduplicated by their addresses: the heap tracker and the CPU sampler
// both map each distinct stack to a small 1-based id.
#pragma once

#include <cstddef>
#include <cstdint>
#include <unordered_map>
#include <vector>

namespace nnprof::collect {

/// FNV-1a over the addresses of a stack.
struct StackHash {
  std::size_t operator()(const std::vector<std::uintptr_t>& s) const noexcept {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (std::uintptr_t pc : s) h = (h ^ pc) * 0x100000001b3ull;
    return static_cast<std::size_t>(h);
  }
};

/// Distinct stack -> its 1-based id.
using StackIds = std::unordered_map<std::vector<std::uintptr_t>, std::uint32_t, StackHash>;

}  // namespace nnprof::collect
