// SamplingProfiler: nnprof::CpuProfiler into a Profiler of its own, with the functions of the
// CPU analysis (analysis/cpu_profile.hpp) as its report.
#include "nnprof/sampling_profiler.hpp"

#include <cmath>
#include <utility>

#include <fmt/format.h>

#include "analysis/cpu_profile.hpp"
#include "nnprof/error.hpp"

namespace nnprof {

namespace {

double percent(double share) { return std::isfinite(share) ? share * 100.0 : 0.0; }

}  // namespace

std::vector<FunctionStats> function_stats(const Profile& profile) {
  std::vector<FunctionStats> out;
  for (const analysis::CpuFunction& f : analysis::cpu_functions(profile)) {
    FunctionStats s;
    s.name = f.name;
    s.module = f.module;
    s.self_samples = f.self.samples;
    s.total_samples = f.total.samples;
    s.self_time_ms = static_cast<double>(f.self.ns) / 1e6;
    s.total_time_ms = static_cast<double>(f.total.ns) / 1e6;
    s.percentage = percent(f.total_share);
    s.self_percentage = percent(f.self_share);
    out.push_back(std::move(s));
  }
  return out;
}

std::vector<PythonLineStats> python_line_stats(const Profile& profile) { return analysis::cpu_python_lines(profile); }

CpuProfilerBuilder& CpuProfilerBuilder::sample_rate(double hz) noexcept {
  options_.hz = hz;
  return *this;
}

CpuProfilerBuilder& CpuProfilerBuilder::enable_call_graph(bool on) noexcept {
  options_.call_graph = on;
  return *this;
}

CpuProfilerBuilder& CpuProfilerBuilder::clock(SamplingClock clock) noexcept {
  options_.clock = clock;
  return *this;
}

CpuProfilerBuilder& CpuProfilerBuilder::options(const CpuProfilerOptions& options) noexcept {
  options_ = options;
  return *this;
}

SamplingProfiler CpuProfilerBuilder::build() const {
  // Checked here, so that a wrong rate fails where it is set rather than at start().
  if (!(options_.hz >= 1.0 && options_.hz <= 10'000.0))
    throw Error(fmt::format("a CPU sampling rate of {} Hz is out of range: choose 1 to 10000 samples per second",
                            options_.hz));
  return SamplingProfiler(options_);
}

SamplingProfiler::SamplingProfiler(const CpuProfilerOptions& options) : options_(options) {}
SamplingProfiler::~SamplingProfiler() = default;
SamplingProfiler::SamplingProfiler(SamplingProfiler&&) noexcept = default;
SamplingProfiler& SamplingProfiler::operator=(SamplingProfiler&&) noexcept = default;

void SamplingProfiler::start() {
  if (running()) throw Error("the CPU profiler is running already: stop() it before starting it again");
  sampler_.reset();
  // A fresh profiler per run: the report covers this start() to stop() and nothing before.
  profiler_ = std::make_unique<Profiler>();
  sampler_ = std::make_unique<CpuProfiler>(*profiler_, options_);
  started_ = std::chrono::steady_clock::now();
}

CpuReport SamplingProfiler::stop() {
  if (sampler_ == nullptr) throw Error("the CPU profiler was not started: call start() before stop()");
  const auto stopped = std::chrono::steady_clock::now();
  const CpuProfilerStats stats = sampler_->stats();
  sampler_->stop();
  sampler_.reset();
  CpuReport report;
  report.total_time_ms = std::chrono::duration<double, std::milli>(stopped - started_).count();
  report.effective_hz = stats.effective_hz;
  report.profile = profiler_->snapshot();
  const analysis::SampleCount all = analysis::cpu_sample_total(report.profile);
  report.samples = all.samples;
  report.sampled_time_ms = static_cast<double>(all.ns) / 1e6;
  report.function_stats = function_stats(report.profile);
  return report;
}

bool SamplingProfiler::running() const noexcept { return sampler_ != nullptr; }

Profiler& SamplingProfiler::profiler() {
  if (profiler_ == nullptr) throw Error("the CPU profiler has no profile yet: call start() first");
  return *profiler_;
}

}  // namespace nnprof
