#include "analysis/gpu_findings.hpp"

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <utility>

#include "analysis/compute.hpp"
#include "analysis/gpu_streams.hpp"
#include "analysis/memory_findings.hpp"

namespace nnprof::analysis {
namespace {

// How many launching scopes a finding names as evidence.
constexpr std::size_t kEvidenceScopes = 3;

double ratio_of(std::uint64_t part, std::uint64_t whole) {
  return whole == 0 ? 0.0 : static_cast<double>(part) / static_cast<double>(whole);
}

// Share of the session a finding acts on (Amdahl's p for the advisor), at most the whole run.
double session_share(const Profile& profile, std::uint64_t ns) {
  return std::min(1.0, ratio_of(ns, profile.meta.duration_ns));
}

// "GPU 0 (NVIDIA H100 80GB HBM3)", or "GPU 0" when the device is not described.
Sentence& append_device(Sentence& s, const GpuProfile& gpu, std::uint32_t id) {
  s.words("GPU ").words(std::to_string(id));
  if (const GpuDevice* d = gpu.device(id); d != nullptr && !d->name.empty()) s.words(" (").words(d->name).words(")");
  return s;
}

// The scope name of call-tree node `node`; kNone outside any scope or for a node the tree lacks.
StringId node_name(const Profile& profile, std::uint32_t node) {
  return node != 0 && node < profile.call_tree.size() ? profile.call_tree[node].name : kNone;
}

// Time per launching node, largest first (ties by node, for a stable order).
std::vector<std::pair<std::uint32_t, std::uint64_t>> by_time(const std::map<std::uint32_t, std::uint64_t>& per_node) {
  std::vector<std::pair<std::uint32_t, std::uint64_t>> out(per_node.begin(), per_node.end());
  std::stable_sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return out;
}

// "train_step > load (8 ms of idle time), forward (2 ms of idle time)": the launching scopes
// with the most time, `what` saying what the time is.
Sentence& append_launchers(Sentence& s, const Profile& profile,
                           const std::vector<std::pair<std::uint32_t, std::uint64_t>>& ranked, std::string_view what) {
  for (std::size_t i = 0; i < ranked.size() && i < kEvidenceScopes; ++i) {
    if (i > 0) s.words(", ");
    append_node_path(s, profile, ranked[i].first).words(" (").duration(ranked[i].second).words(what).words(")");
  }
  return s;
}

// ---- GpuIdle --------------------------------------------------------------------------

void add_gpu_idle(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const GpuProfile& gpu = profile.gpu;
  for (std::uint32_t id : gpu_device_ids(gpu)) {
    std::vector<std::uint32_t> ops = device_ops(gpu, id);
    // An op of no duration keeps nothing busy (as in the busy union) and ends no gap.
    std::erase_if(ops, [&](std::uint32_t i) { return op_interval(gpu.ops[i]).length() == 0; });
    if (ops.empty()) continue;
    // By start; at one start the earliest launched first, so that a gap counts as host-bound
    // only when every op that ends it was launched after it began.
    std::sort(ops.begin(), ops.end(), [&](std::uint32_t a, std::uint32_t b) {
      return std::tie(gpu.ops[a].start_ns, gpu.ops[a].launch.time_ns, a) <
             std::tie(gpu.ops[b].start_ns, gpu.ops[b].launch.time_ns, b);
    });
    const std::uint64_t first = gpu.ops[ops.front()].start_ns;
    std::uint64_t end = op_interval(gpu.ops[ops.front()]).end_ns;
    std::uint64_t idle = 0;
    std::uint64_t gaps = 0;
    std::map<std::uint32_t, std::uint64_t> after;  // host-bound gap time by the node that launched the next op
    for (std::size_t k = 1; k < ops.size(); ++k) {
      const GpuOp& op = gpu.ops[ops[k]];
      if (op.start_ns > end) {
        const std::uint64_t gap = op.start_ns - end;
        if (gap > t.gpu_idle_gap_ns && op.launch.time_ns > end) {
          idle += gap;
          ++gaps;
          after[op.launch.node] += gap;
        }
      }
      end = std::max(end, op_interval(op).end_ns);
    }
    const std::uint64_t active = end - first;
    const double share = ratio_of(idle, active);
    if (!(share > t.gpu_idle_share)) continue;
    const auto launchers = by_time(after);
    Bottleneck b;
    b.kind = BottleneckKind::GpuIdle;
    b.severity = severity_for(share, t.gpu_idle_share);
    b.scope = node_name(profile, launchers.front().first);
    b.value = share;
    b.threshold = t.gpu_idle_share;
    b.time_share = session_share(profile, idle);
    append_device(b.description, gpu, id).words(" sat idle waiting for the host for ").duration(idle).words(", ")
        .share(share).key().words(" of its active window of ").duration(active).words(" (threshold ")
        .share(t.gpu_idle_share).words("), in ").count(gaps, "gap", "gaps").words(" longer than ")
        .duration(t.gpu_idle_gap_ns).words(" that ended only when the host launched the next work; the work after ")
        .words(gaps == 1 ? "it" : "them").words(" was launched from ");
    append_launchers(b.description, profile, launchers, " of idle time").words(".");
    b.suggestion.words("Keep the launching thread ahead of the GPU: move data loading and preprocessing off it "
                       "(loader worker threads, prefetching the next batch into pinned memory while this one "
                       "computes), avoid synchronising calls inside the loop (")
        .code("cudaDeviceSynchronize").words(", reading device results on the host), and capture repeated launch "
                                             "sequences in a CUDA Graph so that one launch replaces many.");
    out.push_back(std::move(b));
  }
}

// ---- GpuLaunchBound -------------------------------------------------------------------

void add_launch_bound(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const GpuProfile& gpu = profile.gpu;
  std::vector<std::uint64_t> durations;
  std::uint64_t tiny = 0;
  std::uint64_t tiny_ns = 0;
  std::uint64_t api_ns = 0;
  std::uint64_t api_calls = 0;
  std::map<std::uint32_t, std::uint64_t> tiny_by_node;  // launching node: how many tiny kernels
  for (const GpuOp& op : gpu.ops) {
    if (op.kind != GpuOpKind::Kernel) continue;
    durations.push_back(op.duration_ns());
    if (op.duration_ns() < t.tiny_kernel_ns) {
      ++tiny;
      tiny_ns += op.duration_ns();
      ++tiny_by_node[op.launch.node];
    }
    if (op.launch.api < gpu.api_calls.size()) {
      const GpuApiCall& call = gpu.api_calls[op.launch.api];
      api_ns += call.end_ns > call.start_ns ? call.end_ns - call.start_ns : 0;
      ++api_calls;
    }
  }
  const std::uint64_t kernels = durations.size();
  if (kernels == 0 || kernels < t.gpu_launch_bound_kernels) return;
  const double share = ratio_of(tiny, kernels);
  if (!(share > t.tiny_kernel_share)) return;
  const auto mid = durations.begin() + static_cast<std::ptrdiff_t>(kernels / 2);
  std::nth_element(durations.begin(), mid, durations.end());
  double median = static_cast<double>(*mid);
  if (kernels % 2 == 0) median = (median + static_cast<double>(*std::max_element(durations.begin(), mid))) / 2.0;
  const auto top = by_time(tiny_by_node);
  Bottleneck b;
  b.kind = BottleneckKind::GpuLaunchBound;
  // High when at most half as many kernels as the threshold allows are long enough.
  b.severity = severity_below(1.0 - share, 1.0 - t.tiny_kernel_share);
  b.scope = node_name(profile, top.front().first);
  b.value = share;
  b.threshold = t.tiny_kernel_share;
  // The host time spent launching is what fusing saves; without traced API calls, the tiny
  // kernels' own time is the best bound there is.
  b.time_share = session_share(profile, api_calls > 0 ? api_ns : tiny_ns);
  b.description.share(share).key().words(" of the ").count(kernels, "kernel", "kernels").words(" ran shorter than ")
      .duration(t.tiny_kernel_ns).words(" (threshold ").share(t.tiny_kernel_share).words("); the median kernel took ")
      .duration(median);
  if (api_calls > 0)
    b.description.words(" and its launch call took ").duration(static_cast<double>(api_ns) / static_cast<double>(api_calls))
        .words(" on the host on average");
  b.description.words(", so launching the work costs about as much as running it. Most of the short kernels were "
                      "launched from ");
  append_node_path(b.description, profile, top.front().first).words(" (")
      .count(top.front().second, "kernel", "kernels").words(").");
  b.suggestion.words("Do more work per launch: fuse consecutive small kernels (")
      .code("torch.compile").words(", hand-written fused kernels), process larger batches, and capture the repeated "
                                   "launch sequence in a CUDA Graph (")
      .code("cudaStreamBeginCapture").words(" / ").code("cudaGraphLaunch")
      .words(") so that one launch replaces hundreds.");
  out.push_back(std::move(b));
}

// ---- PageableMemcpy -------------------------------------------------------------------

bool host_side(MemcpyKind kind) {
  return kind == MemcpyKind::HtoD || kind == MemcpyKind::DtoH || kind == MemcpyKind::HtoA ||
         kind == MemcpyKind::AtoH || kind == MemcpyKind::HtoH;
}

bool pinned_host(const GpuMemcpy& m) { return m.src == GpuMemoryKind::Pinned || m.dst == GpuMemoryKind::Pinned; }

void add_pageable_memcpy(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const GpuProfile& gpu = profile.gpu;
  for (std::uint32_t id : gpu_device_ids(gpu)) {
    const std::vector<std::uint32_t> ops = device_ops(gpu, id);
    const std::uint64_t busy = total_length(busy_union(gpu, ops));
    std::uint64_t slow_ns = 0, slow_bytes = 0, slow = 0, pageable = 0;
    std::uint64_t pinned_ns = 0, pinned_bytes = 0;
    std::map<std::uint32_t, std::uint64_t> by_node;
    for (std::uint32_t i : ops) {
      const GpuOp& op = gpu.ops[i];
      if (op.kind != GpuOpKind::Memcpy || op.detail >= gpu.memcpys.size()) continue;
      const GpuMemcpy& m = gpu.memcpys[op.detail];
      // A synchronous device-to-device copy does not hold the host the way a host copy does.
      if (m.pageable() || (!m.async && host_side(m.kind))) {
        slow_ns += op.duration_ns();
        slow_bytes += m.bytes;
        ++slow;
        pageable += m.pageable() ? 1 : 0;
        by_node[op.launch.node] += op.duration_ns();
      } else if (pinned_host(m)) {
        pinned_ns += op.duration_ns();
        pinned_bytes += m.bytes;
      }
    }
    const double share = ratio_of(slow_ns, busy);
    if (slow == 0 || !(share > t.memcpy_share)) continue;
    const auto launchers = by_time(by_node);
    Bottleneck b;
    b.kind = BottleneckKind::PageableMemcpy;
    b.severity = severity_for(share, t.memcpy_share);
    b.scope = node_name(profile, launchers.front().first);
    b.value = share;
    b.threshold = t.memcpy_share;
    b.time_share = session_share(profile, slow_ns);
    b.description.words("On ");
    append_device(b.description, gpu, id).words(", ").count(slow, "copy", "copies").words(" (")
        .count(pageable).words(" from or to pageable memory, ").count(slow - pageable).words(" synchronous) took ")
        .duration(slow_ns).words(", ").share(share).key().words(" of its busy time (threshold ").share(t.memcpy_share)
        .words("), moving ").bytes(slow_bytes).words(" at ").si(ratio_of(slow_bytes, slow_ns) * 1e9, "B/s");
    if (pinned_ns > 0)
      b.description.words(" where its asynchronous copies from pinned memory reached ")
          .si(ratio_of(pinned_bytes, pinned_ns) * 1e9, "B/s");
    b.description.words("; most were launched from ");
    append_launchers(b.description, profile, launchers, " of copies").words(".");
    b.suggestion.words("Allocate the host buffers pinned (").code("cudaMallocHost").words(", or ")
        .code("cudaHostRegister").words(" on existing ones; ").code("pin_memory=True")
        .words(" in a PyTorch DataLoader) and copy with ").code("cudaMemcpyAsync")
        .words(" on a non-default stream, so that the copies run at full bus speed and overlap with kernels and host "
               "work instead of blocking both.");
    out.push_back(std::move(b));
  }
}

// ---- LowOccupancy ---------------------------------------------------------------------

// Why few warps fit on an SM, from the device's limits (without them: unknown).
enum class Limiter : std::uint8_t { Unknown, Registers, SharedMemory, BlockSize, Warps };

Limiter occupancy_limiter(const GpuKernel& k, const GpuDevice* d) {
  const std::int64_t threads = k.threads_per_block();
  if (d == nullptr || d->max_warps_per_sm == 0 || threads <= 0) return Limiter::Unknown;
  const std::uint64_t warps = static_cast<std::uint64_t>((threads + 31) / 32);
  const std::uint64_t shared = static_cast<std::uint64_t>(std::max(0, k.static_shared_bytes)) +
                               static_cast<std::uint64_t>(std::max(0, k.dynamic_shared_bytes));
  constexpr std::uint64_t kNoLimit = std::numeric_limits<std::uint64_t>::max();
  // Resident blocks per SM each resource allows (allocation granularity ignored: the aim is to
  // name the tightest resource, not to recompute the occupancy).
  const std::array<std::pair<std::uint64_t, Limiter>, 4> limits{{
      {d->max_warps_per_sm / warps, Limiter::Warps},
      {d->max_blocks_per_sm > 0 ? d->max_blocks_per_sm : kNoLimit, Limiter::BlockSize},
      {k.registers_per_thread > 0 && d->max_registers_per_sm > 0
           ? d->max_registers_per_sm / (std::uint64_t{k.registers_per_thread} * warps * 32)
           : kNoLimit,
       Limiter::Registers},
      {shared > 0 && d->max_shared_bytes_per_sm > 0 ? d->max_shared_bytes_per_sm / shared : kNoLimit,
       Limiter::SharedMemory},
  }};
  const auto tightest = std::min_element(limits.begin(), limits.end(),
                                         [](const auto& a, const auto& b) { return a.first < b.first; });
  return tightest->second;
}

Sentence occupancy_suggestion(Limiter limiter) {
  Sentence s;
  switch (limiter) {
    case Limiter::Registers:
      return s.words("Registers limit it: cap them with ").code("__launch_bounds__(threads, minBlocks)")
          .words(" or ").code("-maxrregcount").words(", and keep fewer values live per thread (recompute cheap ones, "
                                                      "split the kernel), so that more warps fit on each SM.");
    case Limiter::SharedMemory:
      return s.words("Shared memory limits it: use smaller tiles or fewer pipeline stages per block, or reuse one "
                     "buffer, so that more blocks fit on each SM.");
    case Limiter::BlockSize:
      return s.words("Its blocks are too small: the SM's limit on resident blocks is reached before its warps are "
                     "used; launch larger blocks (128 to 256 threads) with fewer of them.");
    case Limiter::Warps:
    case Limiter::Unknown: break;
  }
  return s.words("Raise the warps resident per SM: fewer registers per thread (")
      .code("__launch_bounds__").words(", ").code("-maxrregcount")
      .words("), less shared memory per block, or a block size of 128 to 256 threads; check the limiter with ")
      .code("cudaOccupancyMaxActiveBlocksPerMultiprocessor").words(" or Nsight Compute.");
}

void add_low_occupancy(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const GpuProfile& gpu = profile.gpu;
  // A launch configuration: device, name, block and the per-block resources that set occupancy.
  using Key = std::tuple<std::uint32_t, StringId, std::int32_t, std::int32_t, std::int32_t, std::uint32_t, std::int64_t>;
  struct Group {
    std::uint64_t launches = 0;
    std::uint64_t ns = 0;
    const GpuKernel* kernel = nullptr;  ///< one with a known occupancy
  };
  std::map<Key, Group> groups;
  std::map<std::uint32_t, std::uint64_t> kernel_ns;  // by device
  for (const GpuOp& op : gpu.ops) {
    if (op.kind != GpuOpKind::Kernel || op.stream >= gpu.streams.size() || op.detail >= gpu.kernels.size()) continue;
    const GpuKernel& k = gpu.kernels[op.detail];
    const std::uint32_t device = gpu.streams[op.stream].device;
    kernel_ns[device] += op.duration_ns();
    Group& g = groups[Key{device, op.name, k.block[0], k.block[1], k.block[2], k.registers_per_thread,
                          std::int64_t{k.static_shared_bytes} + k.dynamic_shared_bytes}];
    ++g.launches;
    g.ns += op.duration_ns();
    if (g.kernel == nullptr && k.occupancy >= 0.0) g.kernel = &k;
  }
  std::vector<Bottleneck> found;
  for (const auto& [key, g] : groups) {
    if (g.kernel == nullptr) continue;
    const GpuKernel& k = *g.kernel;
    const std::uint32_t device = std::get<0>(key);
    const double share = ratio_of(g.ns, kernel_ns[device]);
    if (!(k.occupancy < t.low_occupancy) || !(share >= t.low_occupancy_min_share)) continue;
    const std::string& name = profile.str(std::get<1>(key));
    Bottleneck b;
    b.kind = BottleneckKind::LowOccupancy;
    b.severity = severity_below(k.occupancy, t.low_occupancy);
    b.function = name;
    b.value = k.occupancy;
    b.threshold = t.low_occupancy;
    b.time_share = session_share(profile, g.ns);
    b.description.words("Kernel ").function(name).words(" (block ")
        .words(std::to_string(k.block[0]) + "×" + std::to_string(k.block[1]) + "×" + std::to_string(k.block[2]))
        .words(", ").count(k.registers_per_thread, "register", "registers").words(" per thread, ");
    const std::uint64_t shared = static_cast<std::uint64_t>(std::max(0, k.static_shared_bytes)) +
                                 static_cast<std::uint64_t>(std::max(0, k.dynamic_shared_bytes));
    if (shared == 0) {
      b.description.words("no shared memory");
    } else {
      b.description.bytes(shared).words(" of shared memory per block");
    }
    b.description.words(") has a theoretical occupancy of ").share(k.occupancy).key();
    if (k.occupancy_estimated) b.description.words(" (estimated by nnprof)");
    b.description.words(" (threshold ").share(t.low_occupancy).words(") on ");
    append_device(b.description, gpu, device).words("; its ").count(g.launches, "launch", "launches").words(" took ")
        .duration(g.ns).words(", ").share(share).words(" of the device's kernel time.");
    b.suggestion = occupancy_suggestion(occupancy_limiter(k, gpu.device(device)));
    found.push_back(std::move(b));
  }
  // The largest share of kernel time first: where raising occupancy pays most.
  std::stable_sort(found.begin(), found.end(),
                   [](const Bottleneck& a, const Bottleneck& b) { return a.time_share > b.time_share; });
  for (Bottleneck& b : found) out.push_back(std::move(b));
}

// ---- GpuBelowRoofline -----------------------------------------------------------------

void add_below_roofline(const Profile& profile, const BottleneckThresholds& t, std::vector<Bottleneck>& out) {
  const GpuProfile& gpu = profile.gpu;
  // Kernel time by (scope name, device), each name once per op however deep it nests: the
  // device that ran most of a scope's kernels sets its roof.
  std::map<std::pair<StringId, std::uint32_t>, std::uint64_t> scope_device_ns;
  std::uint64_t all_kernel_ns = 0;
  for (const GpuOp& op : gpu.ops) {
    if (op.kind != GpuOpKind::Kernel) continue;
    all_kernel_ns += op.duration_ns();
    if (op.stream >= gpu.streams.size()) continue;
    std::vector<StringId> seen;
    for (std::uint32_t n = op.launch.node; n != 0 && n < profile.call_tree.size() && seen.size() <= profile.call_tree.size();
         n = profile.call_tree[n].parent) {
      const StringId name = profile.call_tree[n].name;
      if (std::find(seen.begin(), seen.end(), name) != seen.end()) continue;
      seen.push_back(name);
      scope_device_ns[{name, gpu.streams[op.stream].device}] += op.duration_ns();
    }
  }
  // Without the launching scopes of the ops, the fastest device is the roof (the lowest fraction
  // the scope can be held to is against the best memory it could have run on).
  const GpuDevice* fastest = nullptr;
  for (const GpuDevice& d : gpu.devices)
    if (fastest == nullptr || d.bandwidth_bytes_per_s > fastest->bandwidth_bytes_per_s) fastest = &d;

  for (const GpuScopeStats& gs : gpu.scopes) {
    if (gs.kernel_ns == 0) continue;
    const ScopeStats* s = nullptr;
    for (const ScopeStats& candidate : profile.scopes)
      if (candidate.name == gs.name) s = &candidate;
    if (s == nullptr || s->bytes == 0) continue;
    // A wrapper is judged through the scopes inside it, where its bytes were declared.
    std::uint64_t own = 0;
    bool in_tree = false;
    for (const CallTreeNode& n : profile.call_tree) {
      if (n.name != gs.name) continue;
      in_tree = true;
      own += n.bytes;
    }
    if (in_tree && ratio_of(own, s->bytes) < kOwnWorkShare) continue;
    const double kernel_share = ratio_of(gs.kernel_ns, all_kernel_ns);
    if (!(kernel_share >= t.roofline_min_share)) continue;
    const GpuDevice* device = fastest;
    std::uint64_t most = 0;
    for (const auto& [key, ns] : scope_device_ns) {
      if (key.first != gs.name || ns <= most) continue;
      if (const GpuDevice* d = gpu.device(key.second)) {
        device = d;
        most = ns;
      }
    }
    if (device == nullptr || device->bandwidth_bytes_per_s == 0) continue;
    const double achieved = static_cast<double>(s->bytes) * 1e9 / static_cast<double>(gs.kernel_ns);
    const double roof = static_cast<double>(device->bandwidth_bytes_per_s);
    const double fraction = achieved / roof;
    if (!(fraction < t.gpu_roofline_fraction)) continue;
    Bottleneck b;
    b.kind = BottleneckKind::GpuBelowRoofline;
    b.severity = severity_below(fraction, t.gpu_roofline_fraction);
    b.scope = gs.name;
    b.value = fraction;
    b.threshold = t.gpu_roofline_fraction;
    b.time_share = session_share(profile, gs.kernel_ns);
    b.description.scope(gs.name).words(" moved its declared ").bytes(s->bytes).words(" in ")
        .duration(gs.kernel_ns).words(" of GPU kernel time (")
        .count(gs.kernels, "kernel", "kernels").words("), ").si(achieved, "B/s").words(", ").share(fraction).key()
        .words(" of the memory bandwidth of ");
    append_device(b.description, gpu, device->id).words(", ").si(roof, "B/s").words(" (threshold ")
        .share(t.gpu_roofline_fraction).words(")");
    if (s->flops > 0.0)
      b.description.words("; it computed at ").si(s->flops * 1e9 / static_cast<double>(gs.kernel_ns), "FLOP/s");
    b.description.words(".");
    b.suggestion.words("Its kernels move data far slower than the GPU's memory can: fuse element-wise kernels so that "
                       "intermediates stay in registers or shared memory, make accesses coalesced (adjacent threads "
                       "reading adjacent addresses, 128-bit vector loads), use a smaller element type (fp16, bf16) "
                       "where accuracy allows, and launch enough blocks to cover every SM. Only the memory roof is "
                       "checked: if its kernels are compute-bound, compare its FLOP rate with the GPU's peak instead.");
    out.push_back(std::move(b));
  }
}

}  // namespace

std::vector<Bottleneck> gpu_bottlenecks(const Profile& profile, const BottleneckThresholds& thresholds) {
  std::vector<Bottleneck> out;
  if (!profile.gpu.summary.traced) return out;
  add_gpu_idle(profile, thresholds, out);
  add_launch_bound(profile, thresholds, out);
  add_pageable_memcpy(profile, thresholds, out);
  add_low_occupancy(profile, thresholds, out);
  add_below_roofline(profile, thresholds, out);
  return out;
}

Sentence no_gpu_bottlenecks(const Profile& profile, const BottleneckThresholds& t) {
  Sentence s;
  if (!profile.gpu.summary.traced) return s;
  return s.words("no GPU waited for the host more than ").share(t.gpu_idle_share)
      .words(" of its active window, no more than ").share(t.tiny_kernel_share).words(" of the kernels ran shorter than ")
      .duration(t.tiny_kernel_ns).words(", pageable or synchronous copies took no more than ").share(t.memcpy_share)
      .words(" of a GPU's busy time, no kernel with ").share(t.low_occupancy_min_share)
      .words(" of the kernel time had an occupancy below ").share(t.low_occupancy)
      .words(" and no scope's kernels ran below ").share(t.gpu_roofline_fraction).words(" of the memory bandwidth");
}

}  // namespace nnprof::analysis
