// MemoryProfiler: nnprof::MemoryTracking into a Profiler of its own, reported from the
// profile's heap summary.
#include "nnprof/memory_profiler.hpp"

#include <algorithm>
#include <utility>

#include "nnprof/error.hpp"

namespace nnprof {

namespace {
constexpr double kMiB = 1024.0 * 1024.0;
}

MemoryReport memory_report(const Profile& profile) {
  MemoryReport r;
  const HeapSummary& h = profile.heap;
  if (!h.tracked) {
    // The seed's memory API is record_alloc/record_free: their counters answer the same questions.
    if (profile.memory_counters.empty()) return r;
    r.source = "memory counters";
    r.peak_bytes = profile.memory.peak_bytes;
    for (const MemoryCounter& c : profile.memory_counters) {
      r.num_allocations += c.alloc_count;
      r.num_frees += c.free_count;
      r.allocated_bytes += c.alloc_bytes;
      r.largest_allocation_bytes = std::max(r.largest_allocation_bytes, c.largest_alloc_bytes);
    }
    r.current_bytes = profile.memory.current_bytes > 0 ? static_cast<std::uint64_t>(profile.memory.current_bytes) : 0;
    r.peak_mb = static_cast<double>(r.peak_bytes) / kMiB;
    r.largest_allocation_mb = static_cast<double>(r.largest_allocation_bytes) / kMiB;
    return r;
  }
  r.source = "heap tracking";
  r.peak_bytes = h.peak_bytes;
  r.peak_mb = static_cast<double>(h.peak_bytes) / kMiB;
  r.num_allocations = h.alloc_count;
  r.largest_allocation_bytes = h.largest_alloc_bytes;
  r.largest_allocation_mb = static_cast<double>(h.largest_alloc_bytes) / kMiB;
  r.allocated_bytes = h.alloc_bytes;
  r.num_frees = h.free_count;
  r.current_bytes = h.current_bytes;
  r.leaked_bytes = h.leaked_bytes;
  return r;
}

MemoryProfilerBuilder& MemoryProfilerBuilder::find_leaks(bool on) noexcept {
  options_.find_leaks = on;
  return *this;
}

MemoryProfilerBuilder& MemoryProfilerBuilder::timeline_interval(std::chrono::milliseconds interval) noexcept {
  options_.interval = interval;
  return *this;
}

MemoryProfilerBuilder& MemoryProfilerBuilder::options(const MemoryTrackingOptions& options) {
  options_ = options;
  return *this;
}

MemoryProfiler MemoryProfilerBuilder::build() const { return MemoryProfiler(options_); }

MemoryProfiler::MemoryProfiler(const MemoryTrackingOptions& options) : options_(options) {}
MemoryProfiler::~MemoryProfiler() = default;
MemoryProfiler::MemoryProfiler(MemoryProfiler&&) noexcept = default;
MemoryProfiler& MemoryProfiler::operator=(MemoryProfiler&&) noexcept = default;

void MemoryProfiler::start() {
  if (running()) throw Error("the memory profiler is running already: stop() it before starting it again");
  // A fresh profiler per run: the report covers this start() to stop() and nothing before.
  auto profiler = std::make_unique<Profiler>();
  tracking_ = std::make_unique<MemoryTracking>(*profiler, options_);
  profiler_ = std::move(profiler);
}

MemoryReport MemoryProfiler::stop() {
  if (tracking_ == nullptr) throw Error("the memory profiler was not started: call start() before stop()");
  tracking_->stop();
  tracking_.reset();
  Profile profile = profiler_->snapshot();
  MemoryReport report = memory_report(profile);
  report.profile = std::move(profile);
  return report;
}

Profiler& MemoryProfiler::profiler() {
  if (profiler_ == nullptr) throw Error("the memory profiler has no profile yet: call start() first");
  return *profiler_;
}

}  // namespace nnprof
