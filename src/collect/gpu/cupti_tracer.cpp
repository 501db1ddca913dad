#include "collect/gpu/cupti_tracer.hpp"

#include <algorithm>
#include <cstdlib>
#include <span>
#include <string_view>

#include <fmt/format.h>

#include "collect/gpu/nvml_sampler.hpp"
#include "nnprof/detail/clock_read.hpp"
#include "record/raw_gpu.hpp"
#include "record/session.hpp"

namespace nnprof::detail {

namespace {

// CUPTI's buffer callbacks carry no user pointer: they reach the one active tracer through this.
std::atomic<CuptiTracer*> g_tracer{nullptr};

// The runtime call in flight on this thread, so that the driver calls it makes are neither
// recorded twice nor lose their occupancy to the wrong id.
thread_local std::uint32_t tl_runtime_depth = 0;
thread_local std::uint32_t tl_runtime_correlation = 0;
thread_local bool tl_in_callback = false;

std::uint64_t CUPTIAPI monotonic_timestamp() { return monotonic_ns(); }

void CUPTIAPI api_callback(void* userdata, CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const void* data) {
  static_cast<CuptiTracer*>(userdata)->on_api(domain, cbid, static_cast<const CUpti_CallbackData*>(data));
}

void CUPTIAPI buffer_requested(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) {
  if (CuptiTracer* t = g_tracer.load(std::memory_order_acquire)) {
    t->on_buffer_request(buffer, size, max_records);
  } else {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
  }
}

void CUPTIAPI buffer_completed(CUcontext, std::uint32_t, std::uint8_t* buffer, std::size_t, std::size_t valid) {
  if (CuptiTracer* t = g_tracer.load(std::memory_order_acquire))
    t->on_buffer_complete(buffer, valid);
  else
    std::free(buffer);
}

// The API calls that issue GPU work, allocate or release device memory, or wait for the GPU:
// those get a launch record (and, in the driver domain, a callback at all). Matched on the
// names CUPTI gives, which carry version suffixes ("cudaLaunchKernel_v7000").
bool issues_gpu_work(std::string_view name, bool driver) {
  static constexpr std::string_view kRuntime[] = {"cudaLaunch", "cudaMemcpy", "cudaMemset", "cudaMalloc", "cudaFree",
                                                  "cudaGraphLaunch", "cudaDeviceSynchronize", "cudaStreamSynchronize",
                                                  "cudaEventSynchronize", "cudaStreamWaitEvent"};
  static constexpr std::string_view kDriver[] = {"cuLaunch", "cuMemcpy", "cuMemset", "cuMemAlloc", "cuMemFree",
                                                 "cuGraphLaunch", "cuCtxSynchronize", "cuStreamSynchronize",
                                                 "cuEventSynchronize", "cuStreamWaitEvent"};
  const std::span<const std::string_view> prefixes = driver ? std::span(kDriver) : std::span(kRuntime);
  return std::any_of(prefixes.begin(), prefixes.end(), [name](std::string_view p) { return name.starts_with(p); });
}

bool is_kernel_launch(CUpti_CallbackId cbid) {
  switch (cbid) {
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel:
    case CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz:
      return true;
    default:
      return false;
  }
}

}  // namespace

BufferPool::~BufferPool() {
  for (std::uint8_t* b : free_) std::free(b);
}

std::uint8_t* BufferPool::take() {
  {
    std::lock_guard lock(mu_);
    if (!free_.empty()) {
      std::uint8_t* b = free_.back();
      free_.pop_back();
      return b;
    }
  }
  auto* b = static_cast<std::uint8_t*>(std::aligned_alloc(8, (bytes_ + 7) / 8 * 8));
  if (b != nullptr) {
    std::lock_guard lock(mu_);
    ++allocated_;
  }
  return b;
}

void BufferPool::give_back(std::uint8_t* buffer) {
  if (buffer == nullptr) return;
  std::lock_guard lock(mu_);
  free_.push_back(buffer);
}

std::size_t BufferPool::allocated() const {
  std::lock_guard lock(mu_);
  return allocated_;
}

CuptiTracer::CuptiTracer(Session& session, const CudaProfilerOptions& options, const CuptiApi& cupti,
                         const DriverApi& driver)
    : session_(session), options_(options), cupti_(cupti), driver_(driver), buffers_(options.buffer_bytes) {
  parse_.api_name = [this](bool drv, std::uint32_t cbid) { return api_name(drv, cbid); };
}

CuptiTracer::~CuptiTracer() { stop(); }

std::string CuptiTracer::api_name(bool driver, std::uint32_t cbid) {
  // Called with mu_ held (from parsing) or before tracing starts.
  const std::uint64_t key = (std::uint64_t{driver} << 32) | cbid;
  if (auto it = api_names_.find(key); it != api_names_.end()) return it->second;
  const char* name = nullptr;
  cupti_.get_callback_name(driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name);
  std::string s = name != nullptr ? name : "";
  // "cudaLaunchKernel_v7000" reads better without the version suffix.
  if (const std::size_t v = s.rfind("_v"); v != std::string::npos && v + 2 < s.size() &&
                                            s.find_first_not_of("0123456789", v + 2) == std::string::npos && !driver)
    s.resize(v);
  api_names_.emplace(key, s);
  return s;
}

void CuptiTracer::read_devices() {
  int count = 0;
  driver_.device_get_count(&count);
  for (int i = 0; i < count; ++i) {
    CUdevice dev = 0;
    if (driver_.device_get(&dev, i) != CUDA_SUCCESS) continue;
    GpuDevice d;
    d.id = static_cast<std::uint32_t>(i);
    char name[256] = {};
    driver_.device_get_name(name, sizeof name, dev);
    d.name = name;
    char bus[64] = {};
    if (driver_.device_get_pci_bus_id(bus, sizeof bus, dev) == CUDA_SUCCESS) d.pci_bus_id = bus;
    auto attr = [&](CUdevice_attribute a) {
      int v = 0;
      driver_.device_get_attribute(&v, a, dev);
      return static_cast<std::uint32_t>(v < 0 ? 0 : v);
    };
    d.cc_major = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
    d.cc_minor = attr(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
    d.sms = attr(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
    const std::uint32_t threads_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
    d.max_warps_per_sm = threads_per_sm / 32;
    d.max_threads_per_block = attr(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
    d.max_registers_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
    d.max_shared_bytes_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
    d.max_blocks_per_sm = attr(CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
    d.core_clock_khz = attr(CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
    std::size_t bytes = 0;
    if (driver_.device_total_mem(&bytes, dev) == CUDA_SUCCESS) d.memory_bytes = bytes;
    // Peak DRAM bandwidth: two transfers per memory clock (DDR) over the bus width.
    const std::uint64_t mem_khz = attr(CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
    const std::uint64_t bus_bits = attr(CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
    d.bandwidth_bytes_per_s = 2 * mem_khz * 1000 * bus_bits / 8;
    if (max_threads_per_sm_.size() <= d.id) max_threads_per_sm_.resize(d.id + 1, 0);
    max_threads_per_sm_[d.id] = threads_per_sm;
    raw_.devices.push_back(std::move(d));
  }
}

GpuStatus CuptiTracer::start() {
  CuptiTracer* expected = nullptr;
  if (!g_tracer.compare_exchange_strong(expected, this))
    return {GpuStatusCode::AlreadyRunning, "another CudaProfiler is tracing this process: GPU collection disabled here"};
  auto fail = [this](std::string message) {
    if (subscriber_ != nullptr) cupti_.unsubscribe(subscriber_);
    subscriber_ = nullptr;
    for (CUpti_ActivityKind k : enabled_kinds_) cupti_.activity_disable(k);
    enabled_kinds_.clear();
    g_tracer.store(nullptr, std::memory_order_release);
    return GpuStatus{GpuStatusCode::CuptiError, std::move(message)};
  };
  cupti_.get_version(&raw_.cupti_version);
  raw_.driver_version = driver_state().version;
  read_devices();

  // Subscribing first is what CUPTI's documentation asks; it fails when another tool (Nsight
  // Systems, a framework's profiler) holds the subscriber.
  if (const CUptiResult r = cupti_.subscribe(&subscriber_, &api_callback, this); r != CUPTI_SUCCESS) {
    subscriber_ = nullptr;
    return fail(fmt::format("CUPTI refused the subscription ({}): another profiler (Nsight Systems, "
                            "torch.profiler) may be attached; GPU collection disabled",
                            cupti_.error_text(r)));
  }
  cupti_.set_thread_id_type(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);  // thread ids as gettid(), like ThreadInfo::os_tid
  // Timestamps on the session's clock: only before any activity kind is enabled.
  if (cupti_.register_timestamp_callback(&monotonic_timestamp) == CUPTI_SUCCESS) {
    parse_.clock = GpuClockMap{};
  } else {
    const auto bracket = bracket_clock(
        [this] {
          std::uint64_t t = 0;
          cupti_.get_timestamp(&t);
          return t;
        },
        [] { return monotonic_ns(); });
    parse_.clock = map_clocks(bracket);
    raw_.warnings.push_back(
        "CUPTI did not accept nnprof's clock: GPU timestamps were mapped from CUPTI's clock (CLOCK_REALTIME) at the "
        "start of tracing, so they may be off by up to the uncertainty shown and drift if the system time is stepped");
  }
  if (const CUptiResult r = cupti_.register_callbacks(&buffer_requested, &buffer_completed); r != CUPTI_SUCCESS)
    return fail(fmt::format("CUPTI refused the activity buffer callbacks ({}): GPU collection disabled",
                            cupti_.error_text(r)));

  std::vector<CUpti_ActivityKind> kinds = {CUPTI_ACTIVITY_KIND_CONTEXT, CUPTI_ACTIVITY_KIND_STREAM,
                                           CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION};
  if (options_.kernels) kinds.push_back(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  if (options_.memcpy) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY);
    kinds.push_back(CUPTI_ACTIVITY_KIND_MEMCPY2);
  }
  if (options_.memset) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMSET);
  if (options_.memory) kinds.push_back(CUPTI_ACTIVITY_KIND_MEMORY2);
  if (options_.api_calls) {
    kinds.push_back(CUPTI_ACTIVITY_KIND_RUNTIME);
    kinds.push_back(CUPTI_ACTIVITY_KIND_DRIVER);
  }
  if (options_.synchronization) kinds.push_back(CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
  for (CUpti_ActivityKind k : kinds) {
    const CUptiResult r = cupti_.activity_enable(k);
    if (r == CUPTI_SUCCESS) {
      enabled_kinds_.push_back(k);
    } else if (k == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL || k == CUPTI_ACTIVITY_KIND_MEMCPY) {
      return fail(fmt::format("CUPTI could not enable activity kind {} ({}): GPU collection disabled",
                              static_cast<int>(k), cupti_.error_text(r)));
    } else {
      raw_.warnings.push_back(fmt::format("CUPTI could not trace activity kind {} ({}); the rest is traced",
                                          static_cast<int>(k), cupti_.error_text(r)));
    }
  }
  if (options_.memory) cupti_.enable_allocation_source(1);

  // Callbacks only for the calls that issue GPU work: a callback per cudaGetLastError would
  // cost time and tell nothing.
  for (const bool driver : {false, true}) {
    const CUpti_CallbackDomain domain = driver ? CUPTI_CB_DOMAIN_DRIVER_API : CUPTI_CB_DOMAIN_RUNTIME_API;
    const std::uint32_t size = driver ? static_cast<std::uint32_t>(CUPTI_DRIVER_TRACE_CBID_SIZE)
                                      : static_cast<std::uint32_t>(CUPTI_RUNTIME_TRACE_CBID_SIZE);
    for (std::uint32_t cbid = 1; cbid < size; ++cbid) {
      const char* name = nullptr;
      if (cupti_.get_callback_name(domain, cbid, &name) != CUPTI_SUCCESS || name == nullptr) continue;
      if (issues_gpu_work(name, driver)) cupti_.enable_callback(1, subscriber_, domain, cbid);
    }
  }
  if (options_.flush_period_ms > 0) cupti_.flush_period(options_.flush_period_ms);

  if (options_.nvml) {
    std::vector<std::pair<std::uint32_t, std::string>> buses;
    for (const GpuDevice& d : raw_.devices) buses.emplace_back(d.id, d.pci_bus_id);
    nvml_ = std::make_unique<NvmlSampler>(load_nvml().api, std::move(buses), options_.nvml_interval_ms);
    if (!nvml_->error().empty()) raw_.warnings.push_back(nvml_->error());
  }
  raw_.traced = true;
  raw_.clock_source = parse_.clock.source;
  raw_.clock_offset_ns = parse_.clock.offset_ns;
  raw_.clock_slope = parse_.clock.slope;
  raw_.clock_uncertainty_ns = parse_.clock.uncertainty_ns;
  raw_.status = fmt::format("tracing {} GPU(s) with CUPTI {} ({}), driver {}.{}", raw_.devices.size(),
                            raw_.cupti_version, cupti_.path, raw_.driver_version / 1000, raw_.driver_version % 1000 / 10);
  active_.store(true, std::memory_order_release);
  return {GpuStatusCode::Tracing, raw_.status};
}

void CuptiTracer::on_api(CUpti_CallbackDomain domain, CUpti_CallbackId cbid, const CUpti_CallbackData* data) noexcept {
  if (data == nullptr || tl_in_callback) return;
  const bool driver = domain == CUPTI_CB_DOMAIN_DRIVER_API;
  if (data->callbackSite == CUPTI_API_EXIT) {
    if (!driver && tl_runtime_depth > 0) --tl_runtime_depth;
    return;
  }
  if (!driver) {
    ++tl_runtime_depth;
    tl_runtime_correlation = data->correlationId;
  }
  if (driver && options_.occupancy && is_kernel_launch(cbid))
    record_occupancy(tl_runtime_depth > 0 ? tl_runtime_correlation : data->correlationId, data->functionParams, cbid);
  // Driver calls made by a runtime call get a record too: some activity records (device
  // allocations, copies of some kinds) carry the driver call's correlation id, not the runtime's.
  record_gpu_launch(session_, data->correlationId, domain, cbid);
}

void record_gpu_launch(Session& session, std::uint32_t correlation_id, std::uint32_t domain,
                       std::uint32_t cbid) noexcept {
  if (!session.recording()) return;
  ThreadState* ts = session.calling_thread();
  if (ts == nullptr || !ts->keep_spans) return;
  write_record(ts, read_ticks(), pack_gpu_launch(correlation_id, domain, cbid),
               ts->top->node.load(std::memory_order_relaxed)->index, RecordKind::GpuLaunch);
}

void CuptiTracer::record_occupancy(std::uint32_t correlation, const void* params, CUpti_CallbackId cbid) noexcept {
  if (params == nullptr) return;
  CUfunction f = nullptr;
  std::uint32_t threads = 0, shared = 0;
  if (cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx || cbid == CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz) {
    const auto* p = static_cast<const cuLaunchKernelEx_params*>(params);
    if (p->config == nullptr) return;
    f = p->f;
    threads = p->config->blockDimX * p->config->blockDimY * p->config->blockDimZ;
    shared = p->config->sharedMemBytes;
  } else {
    // cuLaunchKernel and cuLaunchCooperativeKernel share this parameter layout.
    const auto* p = static_cast<const cuLaunchKernel_params*>(params);
    f = p->f;
    threads = p->blockDimX * p->blockDimY * p->blockDimZ;
    shared = p->sharedMemBytes;
  }
  if (f == nullptr || threads == 0) return;
  try {
    const OccupancyKey key{f, threads, shared};
    double occ = -1.0;
    bool cached = false;
    {
      std::lock_guard lock(mu_);
      if (auto it = occupancy_cache_.find(key); it != occupancy_cache_.end()) {
        occ = it->second;
        cached = true;
      }
    }
    if (!cached) {
      // Outside the lock: a driver call must never wait while CUPTI's thread waits for mu_.
      tl_in_callback = true;  // the driver calls below must not come back here
      int blocks = 0;
      CUdevice dev = 0;
      if (driver_.occupancy_max_active_blocks(&blocks, f, static_cast<int>(threads), shared) == CUDA_SUCCESS &&
          driver_.ctx_get_device(&dev) == CUDA_SUCCESS && static_cast<std::size_t>(dev) < max_threads_per_sm_.size() &&
          max_threads_per_sm_[static_cast<std::size_t>(dev)] > 0) {
        const double warps = static_cast<double>(blocks) * ((threads + 31) / 32);
        occ = std::min(1.0, warps / (max_threads_per_sm_[static_cast<std::size_t>(dev)] / 32.0));
      }
      tl_in_callback = false;
    }
    std::lock_guard lock(mu_);
    if (!cached) occupancy_cache_.emplace(key, occ);
    if (occ >= 0.0) occupancy_.insert_or_assign(correlation, occ);
  } catch (...) {
    tl_in_callback = false;  // out of memory: this launch goes without occupancy
  }
}

void CuptiTracer::on_buffer_request(std::uint8_t** buffer, std::size_t* size, std::size_t* max_records) noexcept {
  *buffer = buffers_.take();
  *size = *buffer != nullptr ? buffers_.bytes() : 0;
  *max_records = 0;  // as many as fit
}

void CuptiTracer::add_dropped() noexcept {
  std::size_t dropped = 0;
  if (cupti_.get_num_dropped_records(nullptr, 0, &dropped) == CUPTI_SUCCESS && dropped > 0) {
    std::lock_guard lock(mu_);
    raw_.dropped += dropped;
  }
}

void CuptiTracer::on_buffer_complete(std::uint8_t* buffer, std::size_t valid_bytes) noexcept {
  try {
    std::lock_guard lock(mu_);
    const std::uint64_t budget = options_.max_records > records_ ? options_.max_records - records_ : 0;
    const DrainCounts c = drain_buffer(buffer, valid_bytes, cupti_.get_next_record, parse_, raw_, budget);
    records_ += c.records;
    raw_.untimed += c.untimed;
    raw_.incomplete += c.incomplete;
    raw_.refused += c.refused;
    ++buffers_completed_;
  } catch (...) {
    // Out of memory while parsing: what this buffer held is lost, and said so.
    std::lock_guard lock(mu_);
    raw_.warnings.push_back("an activity buffer could not be parsed (out of memory): its records are missing");
  }
  buffers_.give_back(buffer);
  add_dropped();
}

void CuptiTracer::stop() noexcept {
  if (!active_.exchange(false, std::memory_order_acq_rel)) return;
  if (options_.synchronize_at_stop) {
    // Work still queued on a device would be missing from the profile: wait for it.
    for (const GpuDevice& d : raw_.devices) {
      CUdevice dev = 0;
      CUcontext ctx = nullptr;
      if (driver_.device_get(&dev, static_cast<int>(d.id)) != CUDA_SUCCESS) continue;
      if (driver_.primary_ctx_retain(&ctx, dev) != CUDA_SUCCESS) continue;
      if (driver_.ctx_push_current(ctx) == CUDA_SUCCESS) {
        driver_.ctx_synchronize();
        CUcontext popped = nullptr;
        driver_.ctx_pop_current(&popped);
      }
      driver_.primary_ctx_release(dev);
    }
  }
  cupti_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  add_dropped();
  for (CUpti_ActivityKind k : enabled_kinds_) cupti_.activity_disable(k);
  enabled_kinds_.clear();
  cupti_.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  if (subscriber_ != nullptr) {
    cupti_.enable_domain(0, subscriber_, CUPTI_CB_DOMAIN_RUNTIME_API);
    cupti_.enable_domain(0, subscriber_, CUPTI_CB_DOMAIN_DRIVER_API);
    cupti_.unsubscribe(subscriber_);
    subscriber_ = nullptr;
  }
  if (nvml_) nvml_->stop();
  g_tracer.store(nullptr, std::memory_order_release);
}

CudaProfilerStats CuptiTracer::stats() const {
  std::lock_guard lock(mu_);
  return CudaProfilerStats{records_, raw_.dropped, raw_.refused, buffers_completed_};
}

void CuptiTracer::snapshot_gpu(RawGpu& out) {
  if (active()) cupti_.flush_all(0);  // hand over the buffers CUPTI has completed, without waiting for the GPU
  std::vector<GpuCounter> counters;
  if (nvml_) counters = nvml_->counters();
  std::lock_guard lock(mu_);
  out = raw_;
  out.counters = std::move(counters);
  // Occupancy: the driver's calculator at launch where it ran, else estimated from the limits.
  for (const RawGpuOp& op : out.ops) {
    if (op.kind != GpuOpKind::Kernel || op.detail >= out.kernels.size()) continue;
    GpuKernel& k = out.kernels[op.detail];
    if (auto it = occupancy_.find(op.correlation_id); it != occupancy_.end()) {
      k.occupancy = it->second;
      k.occupancy_estimated = false;
    } else if (auto d = std::find_if(out.devices.begin(), out.devices.end(),
                                     [&](const GpuDevice& x) { return x.id == op.device; });
               d != out.devices.end()) {
      k.occupancy = estimate_occupancy(k, *d);
      k.occupancy_estimated = k.occupancy >= 0.0;
    }
  }
}

}  // namespace nnprof::detail
