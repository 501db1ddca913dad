#include "collect/system/nvml_probe.hpp"

#include <string>
#include <vector>

#include <fmt/format.h>

#include "collect/gpu/cuda_loader.hpp"

namespace nnprof::detail::system {

namespace {

// NVML documents its power sensor as "accurate to within +/- 5% of current power draw"
// (nvmlDeviceGetPowerUsage); the energy counter is that sensor accumulated by the driver, so
// it carries the same documented figure. It is the only figure NVIDIA publishes.
constexpr double kEnergyCounterUncertainty = 0.05;
// Integrating readings adds what sampling misses: the reading is a 1 s average on Ampere and
// later (except GA100) and, on A100 and H100, covers about 25 % of the time (Yang et al.,
// "Part-time Power Measurements: nvidia-smi's Lack of Attention", arXiv:2312.02741, SC24),
// so power transients between samples go uncounted. ±10 % doubles the sensor's band for it.
constexpr double kIntegratedPowerUncertainty = 0.10;

// A probe that only says, once, why no GPU is read.
class NoGpuProbe final : public Probe {
 public:
  explicit NoGpuProbe(std::string why) : why_(std::move(why)) {}
  void sample(std::uint64_t, SampleSink& sink) override {
    if (!noted_) sink.note(why_);
    noted_ = true;
  }

 private:
  std::string why_;
  bool noted_ = false;
};

enum class EnergySource { Undecided, Counter, Power, None };

struct Gpu {
  unsigned index = 0;
  nvml::Device handle = nullptr;
  std::string name;    // "NVIDIA H100 80GB HBM3"; empty where NVML could not say
  std::string prefix;  // "gpu0"
  EnergySource source = EnergySource::Undecided;
  unsigned long long previous_mj = 0;  // the counter at the last good read
  double previous_watts = 0.0;         // the power at the last good read
  std::uint64_t previous_ns = 0;
  double joules = 0.0;
  unsigned failed_reads = 0;
  unsigned counter_resets = 0;
};

class NvmlProbe final : public Probe {
 public:
  NvmlProbe(const NvmlApi* api, std::vector<Gpu> gpus) : api_(api), gpus_(std::move(gpus)) {}
  ~NvmlProbe() override { api_->shutdown(); }  // nvmlInit_v2 counts references: ours only
  NvmlProbe(const NvmlProbe&) = delete;
  NvmlProbe& operator=(const NvmlProbe&) = delete;

  void sample(std::uint64_t now_ns, SampleSink& sink) override {
    for (Gpu& g : gpus_) sample_gpu(g, now_ns, sink);
  }

  void energy(std::vector<EnergyDomain>& out) const override {
    for (const Gpu& g : gpus_) {
      if (g.source != EnergySource::Counter && g.source != EnergySource::Power) continue;
      std::string note = g.name.empty() ? std::string("unnamed device") : g.name;
      if (g.source == EnergySource::Power) note += "; no energy counter: power readings integrated";
      if (g.counter_resets > 0)
        note += fmt::format("; the energy counter went back {} time(s), those intervals left out", g.counter_resets);
      if (g.failed_reads > 0) note += fmt::format("; {} failed read(s), spanned by the next good one", g.failed_reads);
      const bool counter = g.source == EnergySource::Counter;
      out.push_back(EnergyDomain{g.prefix, "gpu", counter ? EnergyMethod::NvmlEnergy : EnergyMethod::NvmlPower, g.joules,
                                 counter ? kEnergyCounterUncertainty : kIntegratedPowerUncertainty,
                                 "energy." + g.prefix + ".power", std::move(note)});
    }
  }

 private:
  void sample_gpu(Gpu& g, std::uint64_t now_ns, SampleSink& sink) {
    const std::string& p = g.prefix;
    if (nvml::Utilization u{}; api_->get_utilization_rates(g.handle, &u) == 0) {
      sink.set(p + ".utilization", "percent", u.gpu);
      sink.set(p + ".memory_utilization", "percent", u.memory);
    }
    if (nvml::Memory m{}; api_->get_memory_info(g.handle, &m) == 0)
      sink.set(p + ".memory.used", "bytes", static_cast<double>(m.used));
    unsigned int value = 0;
    if (api_->get_temperature != nullptr && api_->get_temperature(g.handle, nvml::kTemperatureGpu, &value) == 0)
      sink.set(p + ".temperature", "celsius", value);
    if (api_->get_clock_info != nullptr && api_->get_clock_info(g.handle, nvml::kClockSm, &value) == 0)
      sink.set(p + ".clock.sm", "MHz", value);
    if (api_->get_clock_info != nullptr && api_->get_clock_info(g.handle, nvml::kClockMem, &value) == 0)
      sink.set(p + ".clock.memory", "MHz", value);
    bool have_power = false;
    double watts = 0.0;
    if (api_->get_power_usage != nullptr && api_->get_power_usage(g.handle, &value) == 0) {
      have_power = true;
      watts = value / 1000.0;
      sink.set(p + ".power", "W", watts);
    }
    switch (g.source) {
      case EnergySource::Undecided: decide(g, now_ns, have_power, watts, sink); break;
      case EnergySource::Counter: accumulate_counter(g, now_ns, sink); break;
      case EnergySource::Power: accumulate_power(g, now_ns, have_power, watts, sink); break;
      case EnergySource::None: break;
    }
  }

  // The first sample picks the source for the whole run, so that one GPU's figure never mixes
  // methods: the counter where it answers, else the power reading.
  void decide(Gpu& g, std::uint64_t now_ns, bool have_power, double watts, SampleSink& sink) {
    unsigned long long mj = 0;
    if (api_->get_total_energy != nullptr && api_->get_total_energy(g.handle, &mj) == 0) {
      g.source = EnergySource::Counter;
      g.previous_mj = mj;
    } else if (have_power) {
      g.source = EnergySource::Power;
      g.previous_watts = watts;
    } else {
      g.source = EnergySource::None;
      sink.note(fmt::format("{} ({}): NVML reads neither its energy counter nor its power: no energy figure for it",
                            g.prefix, g.name.empty() ? "unnamed device" : g.name));
    }
    g.previous_ns = now_ns;
  }

  void accumulate_counter(Gpu& g, std::uint64_t now_ns, SampleSink& sink) {
    unsigned long long mj = 0;
    if (api_->get_total_energy(g.handle, &mj) != 0) {
      ++g.failed_reads;
      return;
    }
    // The counter counts from the driver's load; going back means the driver reloaded (a GPU
    // reset): the interval is unknown and left out rather than guessed.
    if (mj < g.previous_mj) {
      ++g.counter_resets;
    } else if (now_ns > g.previous_ns) {
      const double joules = static_cast<double>(mj - g.previous_mj) / 1000.0;
      g.joules += joules;
      sink.set("energy." + g.prefix + ".power", "W", joules / (static_cast<double>(now_ns - g.previous_ns) / 1e9));
    }
    g.previous_mj = mj;
    g.previous_ns = now_ns;
  }

  void accumulate_power(Gpu& g, std::uint64_t now_ns, bool have_power, double watts, SampleSink& sink) {
    if (!have_power) {
      ++g.failed_reads;
      return;
    }
    if (now_ns > g.previous_ns) {
      // The trapezoid between two readings; its mean power is what the track shows, so that
      // the track integrates to the domain's joules.
      const double mean_watts = (g.previous_watts + watts) / 2.0;
      g.joules += mean_watts * (static_cast<double>(now_ns - g.previous_ns) / 1e9);
      sink.set("energy." + g.prefix + ".power", "W", mean_watts);
    }
    g.previous_watts = watts;
    g.previous_ns = now_ns;
  }

  const NvmlApi* api_;
  std::vector<Gpu> gpus_;
};

}  // namespace

std::unique_ptr<Probe> make_nvml_probe(const SystemOptions& options) {
  if (!options.gpus) return nullptr;
  const Loaded<NvmlApi> loaded = load_nvml();
  if (loaded.api == nullptr) {
    // A missing library is the common case (no NVIDIA driver); an incomplete one says what lacks.
    if (loaded.error.rfind("could not load", 0) == 0)
      return std::make_unique<NoGpuProbe>("NVML not found (libnvidia-ml.so.1): no GPU metrics");
    return std::make_unique<NoGpuProbe>(fmt::format("NVML is unusable ({}): no GPU metrics", loaded.error));
  }
  const NvmlApi* api = loaded.api;
  if (api->get_count == nullptr || api->get_handle_by_index == nullptr)
    return std::make_unique<NoGpuProbe>(
        "NVML cannot list devices (no nvmlDeviceGetCount_v2 or nvmlDeviceGetHandleByIndex_v2): no GPU metrics");
  if (const nvml::Return r = api->init(); r != 0)
    return std::make_unique<NoGpuProbe>(fmt::format("NVML did not initialise ({}): no GPU metrics", api->error_string(r)));
  unsigned int count = 0;
  if (const nvml::Return r = api->get_count(&count); r != 0) {
    std::string why = fmt::format("NVML could not count devices ({}): no GPU metrics", api->error_string(r));
    api->shutdown();
    return std::make_unique<NoGpuProbe>(std::move(why));
  }
  std::vector<Gpu> gpus;
  for (unsigned int i = 0; i < count; ++i) {
    Gpu g;
    g.index = i;
    g.prefix = fmt::format("gpu{}", i);
    if (api->get_handle_by_index(i, &g.handle) != 0) continue;  // a device NVML lists but may not open
    if (api->get_name != nullptr) {
      char name[nvml::kDeviceNameBufferSize] = {};
      if (api->get_name(g.handle, name, sizeof name) == 0) g.name = name;
    }
    gpus.push_back(std::move(g));
  }
  if (gpus.empty()) {
    api->shutdown();
    return std::make_unique<NoGpuProbe>(count == 0 ? "NVML sees no GPU: no GPU metrics"
                                                   : "NVML could open none of its devices: no GPU metrics");
  }
  return std::make_unique<NvmlProbe>(api, std::move(gpus));
}

}  // namespace nnprof::detail::system
