// Comparing the models of one run (nnprof/model_info.hpp): their speed, work and memory, the
// ratios of each to the smallest, and whether time grows with work as it should.
//
//   const nnprof::ModelComparison c = nnprof::compare_models(nnprof::Profile::load("run.nnprof"));
//   nnprof::write_model_comparison(c, std::cout, nnprof::ReportFormat::Markdown);
//
// Scaling efficiency is (work ratio) / (time ratio) per token against the smallest model: the
// FLOPs-per-token ratio when kernels declared FLOPs, otherwise the parameter ratio. 1 means the
// larger model gets through its extra work at the same rate; above 1 it uses the machine
// better (larger matrices vectorise and amortise overheads); below 1 time grows faster than work.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "nnprof/config.hpp"
#include "nnprof/model_info.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"

namespace nnprof {

/// Scaling efficiency at or above this is linear or better: the larger model uses the machine
/// at least as well (within 10%: timing noise and fixed per-token costs).
inline constexpr double kLinearScaling = 0.9;
/// At or above this (and below kLinearScaling) it is sub-linear: the larger model pays more
/// per unit of work, but less than 1/0.6 = 1.67 times as much. Below it, poor.
inline constexpr double kSubLinearScaling = 0.6;

enum class ScalingVerdict : std::uint8_t {
  Unknown,    ///< not judged: a time, token count or size is missing on one side
  Linear,     ///< efficiency >= kLinearScaling
  SubLinear,  ///< kSubLinearScaling <= efficiency < kLinearScaling
  Poor,       ///< efficiency < kSubLinearScaling: time grows much faster than work
};

/// "unknown", "linear", "sub-linear", "poor".
NNPROF_API const char* to_string(ScalingVerdict verdict) noexcept;

/// Part of the forward passes of one model, aggregated by scope name.
struct ForwardPart {
  std::string name;
  std::uint64_t calls = 0;
  /// A component (child of `forward`): its inclusive time. An operation: its own (self) time.
  std::uint64_t time_ns = 0;
  double time_share = 0.0;  ///< of the forward passes' time
  /// A component: FLOPs declared in it and below. An operation: declared in it directly.
  double flops = 0.0;
  std::optional<double> flops_share;  ///< of the forward passes' FLOPs; none when none were declared
};

/// What one model did in the run. Optional figures are absent when what they derive from
/// was not recorded (the `notes` say what).
struct ModelRun {
  ModelInfo info;
  std::uint32_t scope_nodes = 0;  ///< call-tree nodes named model:<name>; 0: the model never ran
  std::uint64_t scope_ns = 0;     ///< time in them
  std::uint64_t inferences = 0;   ///< calls of `inference` inside them
  std::uint64_t inference_ns = 0;
  std::optional<double> inference_mean_ns;
  std::optional<double> inference_stddev_ns;  ///< sample standard deviation; needs 2 inferences
  std::uint64_t tokens = 0;       ///< calls of `generate_token` inside model:<name>
  /// The time rates are taken over: inference_ns, or scope_ns when no `inference` was recorded.
  std::uint64_t timed_ns = 0;
  bool timed_inferences = false;  ///< timed_ns is inference_ns
  std::optional<double> tokens_per_second;
  std::optional<double> ns_per_token;
  double flops = 0.0;             ///< declared in the timed scopes and below
  std::uint64_t bytes = 0;
  std::optional<double> flops_per_token;
  std::optional<double> flops_per_second;
  /// Heap tracking ran: heap blocks allocated while a scope of model:<name> or below was innermost.
  bool heap_tracked = false;
  std::uint64_t heap_alloc_bytes = 0;
  std::uint64_t heap_alloc_count = 0;
  std::uint64_t heap_retained_bytes = 0;  ///< still live when the profile was taken
  /// The sum of the peaks of each scope inside: the model never had more live at once.
  std::uint64_t heap_peak_bound_bytes = 0;
  std::uint64_t forward_calls = 0;
  std::uint64_t forward_ns = 0;
  double forward_flops = 0.0;
  std::vector<ForwardPart> components;  ///< children of `forward` by name, longest first
  /// Own time of every scope name inside `forward` (forward's own included): where the
  /// forward pass's time goes, summing to all of it. Longest first.
  std::vector<ForwardPart> operations;
  std::vector<std::string> notes;  ///< what was not recorded, and what follows from it

  /// weight_bytes + kv_cache_bytes of the description.
  [[nodiscard]] std::uint64_t model_bytes() const noexcept { return info.weight_bytes + info.kv_cache_bytes; }
};

/// One model against the baseline (the smallest). A ratio is absent when either side lacks it.
struct ModelRatio {
  std::string model;
  std::string baseline;
  std::optional<double> parameters;
  std::optional<double> total_time;  ///< timed_ns: total inference time
  std::optional<double> flops_per_token;
  std::optional<double> time_per_token;
  std::optional<double> tokens_per_second;
  std::optional<double> model_bytes;       ///< weights + KV cache
  std::optional<double> heap_alloc_bytes;  ///< both with heap tracking
  std::optional<double> efficiency_flops;       ///< flops_per_token / time_per_token
  std::optional<double> efficiency_parameters;  ///< parameters / time_per_token
  /// From efficiency_flops when FLOPs were declared by both, else from efficiency_parameters.
  ScalingVerdict verdict = ScalingVerdict::Unknown;
  std::string basis;   ///< "FLOPs per token", "parameters", or "" when Unknown
  std::string reason;  ///< one sentence with the numbers
};

struct NNPROF_API ModelComparison {
  std::vector<ModelRun> models;    ///< by parameters, smallest first (then by name)
  std::vector<ModelRatio> ratios;  ///< each model after the first against models[0]
  std::vector<std::string> notes;  ///< about the comparison as a whole

  [[nodiscard]] const ModelRun& baseline() const { return models.front(); }
};

/// Compares the models described in `profile` (described_models). Pure. Throws nnprof::Error
/// when none is described, or when a description is malformed.
NNPROF_API ModelComparison compare_models(const Profile& profile);

/// Writes `comparison` to `out` as Text, Markdown, Json (docs/JSON_SCHEMA.md,
/// "nnprof-model-comparison") or Html (one self-contained page); other formats throw nnprof::Error.
NNPROF_API void write_model_comparison(const ModelComparison& comparison, std::ostream& out, ReportFormat format);

/// Writes `comparison` to `path` in `format`, or in the one its extension names (.txt, .md,
/// .json, .html). The file appears complete or not at all. Throws nnprof::Error.
NNPROF_API void export_model_comparison(const ModelComparison& comparison, const std::string& path,
                                        ReportFormat format = ReportFormat::Auto);

}  // namespace nnprof
