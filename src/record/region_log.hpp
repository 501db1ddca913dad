// The results of a profiler's finished regions (Profiler::profile), in the order they finished.
#pragma once

#include <mutex>
#include <optional>
#include <string_view>
#include <vector>

#include "nnprof/session_metrics.hpp"

namespace nnprof::detail {

class RegionLog {
 public:
  void add(RegionMetrics m) {
    std::lock_guard lock(mu_);
    results_.push_back(std::move(m));
  }
  /// The last finished region named `name`, or of any name when `name` is empty.
  [[nodiscard]] std::optional<RegionMetrics> last(std::string_view name = {}) const {
    std::lock_guard lock(mu_);
    for (auto it = results_.rbegin(); it != results_.rend(); ++it)
      if (name.empty() || it->name == name) return *it;
    return std::nullopt;
  }
  [[nodiscard]] std::vector<RegionMetrics> all() const {
    std::lock_guard lock(mu_);
    return results_;
  }
  [[nodiscard]] bool empty() const {
    std::lock_guard lock(mu_);
    return results_.empty();
  }

 private:
  mutable std::mutex mu_;
  std::vector<RegionMetrics> results_;
};

}  // namespace nnprof::detail
