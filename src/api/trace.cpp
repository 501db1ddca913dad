// Tracer and the critical path by operation: a Profiler with spans (and optionally a
// CpuProfiler), read through critical_path().
#include "nnprof/trace.hpp"

#include <utility>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof {

std::vector<CriticalPathOperation> analyze_critical_path(const Profile& profile, std::string_view root) {
  const CriticalPath path = critical_path(profile, root);
  std::vector<CriticalPathOperation> out;
  out.reserve(path.by_scope.size());
  for (const CriticalPathScope& s : path.by_scope) {  // longest first already
    CriticalPathOperation op;
    op.name = s.kind == CriticalStepKind::Scope ? profile.str(s.name) : fmt::format("[{}]", to_string(s.kind));
    op.duration_us = static_cast<double>(s.duration_ns) / 1e3;
    op.percentage = s.share * 100.0;
    op.steps = s.steps;
    op.threads = s.threads;
    out.push_back(std::move(op));
  }
  return out;
}

TracerBuilder& TracerBuilder::sampling_rate(double hz) noexcept {
  hz_ = hz;
  return *this;
}

TracerBuilder& TracerBuilder::buffer_size(std::size_t bytes) noexcept {
  buffer_bytes_ = bytes;
  return *this;
}

Tracer TracerBuilder::build() const {
  if (!(hz_ == 0.0 || (hz_ >= 1.0 && hz_ <= 10'000.0)))
    throw Error(fmt::format("a sampling rate of {} Hz is out of range: choose 1 to 10000 samples per second, or 0 "
                            "for spans only",
                            hz_));
  if (buffer_bytes_ == 0) throw Error("a trace buffer of 0 bytes keeps no span: give it at least some KiB");
  return Tracer(hz_, buffer_bytes_);
}

Tracer::Tracer(double sampling_hz, std::size_t buffer_bytes) : sampling_hz_(sampling_hz), buffer_bytes_(buffer_bytes) {}
Tracer::~Tracer() = default;
Tracer::Tracer(Tracer&&) noexcept = default;
Tracer& Tracer::operator=(Tracer&&) noexcept = default;

void Tracer::start() {
  if (running_) throw Error("the tracer is running already: stop() it before starting it again");
  ProfilerOptions options;
  options.memory_cap_bytes = buffer_bytes_;
  options.record_spans = true;
  auto profiler = std::make_unique<Profiler>(options);
  std::unique_ptr<CpuProfiler> sampler;
  if (sampling_hz_ > 0.0) {
    CpuProfilerOptions cpu;
    cpu.hz = sampling_hz_;
    sampler = std::make_unique<CpuProfiler>(*profiler, cpu);
  }
  sampler_.reset();
  profiler_ = std::move(profiler);
  sampler_ = std::move(sampler);
  running_ = true;
}

Trace Tracer::stop() {
  if (!running_) throw Error("the tracer was not started: call start() before stop()");
  if (sampler_ != nullptr) sampler_->stop();
  sampler_.reset();
  running_ = false;
  return Trace(profiler_->snapshot());
}

Profiler& Tracer::profiler() {
  if (profiler_ == nullptr) throw Error("the tracer has no profile yet: call start() first");
  return *profiler_;
}

}  // namespace nnprof
