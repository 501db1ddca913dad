// ComputeProfiler: a Profiler seen as a table of operations. Every number comes from the
// Profiler's own queries (top_by_time, stats), so the two never disagree.
#include "nnprof/compute_profiler.hpp"

#include <limits>
#include <utility>

namespace nnprof {

namespace {
OperationStats operation_of(ScopeTiming timing) {
  return OperationStats{std::move(timing.name), timing.calls, timing.total, timing.flops, timing.bytes};
}
}  // namespace

ComputeProfiler::ComputeProfiler() = default;

ComputeProfiler::ComputeProfiler(const ProfilerOptions& options) : profiler_(options) {}

void ComputeProfiler::start(std::string_view name) noexcept { profiler_.start(name); }

void ComputeProfiler::start_with_flops(std::string_view name, double flops, std::uint64_t bytes) noexcept {
  profiler_.start_with_flops(name, flops, bytes);
}

void ComputeProfiler::add_flops(double flops, std::uint64_t bytes) noexcept { profiler_.add_flops(flops, bytes); }

void ComputeProfiler::stop(std::string_view name) noexcept { profiler_.stop(name); }

std::vector<OperationStats> ComputeProfiler::top_by_time(std::size_t n) const {
  std::vector<OperationStats> out;
  for (ScopeTiming& timing : profiler_.top_by_time(n)) out.push_back(operation_of(std::move(timing)));
  return out;
}

std::vector<OperationStats> ComputeProfiler::all_stats() const {
  return top_by_time(std::numeric_limits<std::size_t>::max());
}

std::optional<OperationStats> ComputeProfiler::stats(std::string_view name) const {
  // Profiler::stats reads only the call-tree nodes of `name`: no whole snapshot per question.
  const std::optional<ScopeStats> s = profiler_.stats(name);
  if (!s) return std::nullopt;
  return OperationStats{std::string(name), s->time.count, std::chrono::nanoseconds(s->total_ns), s->flops, s->bytes};
}

}  // namespace nnprof
