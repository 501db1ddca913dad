#include "analysis/gpu_streams.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <utility>

namespace nnprof::analysis {
namespace {

const GpuCounter* find_counter(const GpuProfile& gpu, std::uint32_t device, std::string_view name) {
  for (const GpuCounter& c : gpu.counters)
    if (c.device == device && c.name == name && !c.points.empty()) return &c;
  return nullptr;
}

// NVML samples come at a fixed interval, so the plain mean of the samples is the time average.
double counter_mean(const GpuCounter& c) {
  double sum = 0.0;
  for (const auto& point : c.points) sum += point.second;
  return sum / static_cast<double>(c.points.size());
}

double counter_max(const GpuCounter& c) {
  double best = -std::numeric_limits<double>::infinity();
  for (const auto& point : c.points) best = std::max(best, point.second);
  return best;
}

std::uint64_t to_bytes(double value) {
  if (!(value > 0.0)) return 0;
  if (value >= static_cast<double>(std::numeric_limits<std::uint64_t>::max()))
    return std::numeric_limits<std::uint64_t>::max();
  return static_cast<std::uint64_t>(std::llround(value));
}

const GpuMemcpy* memcpy_of(const GpuProfile& gpu, const GpuOp& op) {
  if (op.kind != GpuOpKind::Memcpy || op.detail >= gpu.memcpys.size()) return nullptr;
  return &gpu.memcpys[op.detail];
}

}  // namespace

std::vector<Interval> interval_union(std::vector<Interval> intervals) {
  std::sort(intervals.begin(), intervals.end(), [](const Interval& a, const Interval& b) {
    return std::tie(a.start_ns, a.end_ns) < std::tie(b.start_ns, b.end_ns);
  });
  std::vector<Interval> out;
  for (const Interval& iv : intervals) {
    if (iv.length() == 0) continue;  // an instant is no busy time, and would split nothing
    if (!out.empty() && iv.start_ns <= out.back().end_ns) {
      out.back().end_ns = std::max(out.back().end_ns, iv.end_ns);
    } else {
      out.push_back(iv);
    }
  }
  return out;
}

std::uint64_t total_length(const std::vector<Interval>& disjoint) {
  std::uint64_t sum = 0;
  for (const Interval& iv : disjoint) sum += iv.length();
  return sum;
}

std::uint64_t covered_by(const std::vector<std::vector<Interval>>& tracks, std::size_t at_least) {
  // (time, +1 at a start / -1 at an end); the depth between two distinct times is what counts,
  // so the order of events at one time does not matter.
  std::vector<std::pair<std::uint64_t, int>> events;
  for (const auto& track : tracks) {
    for (const Interval& iv : track) {
      if (iv.length() == 0) continue;
      events.emplace_back(iv.start_ns, 1);
      events.emplace_back(iv.end_ns, -1);
    }
  }
  std::sort(events.begin(), events.end());
  std::uint64_t covered = 0;
  std::uint64_t previous = 0;
  std::size_t depth = 0;
  for (const auto& [time, delta] : events) {
    if (depth >= at_least && time > previous) covered += time - previous;
    depth = delta > 0 ? depth + 1 : depth - 1;
    previous = time;
  }
  return covered;
}

Interval op_interval(const GpuOp& op) noexcept { return {op.start_ns, std::max(op.start_ns, op.end_ns)}; }

std::vector<std::uint32_t> device_ops(const GpuProfile& gpu, std::uint32_t device) {
  std::vector<std::uint32_t> out;
  for (std::uint32_t i = 0; i < gpu.ops.size(); ++i) {
    const std::uint32_t s = gpu.ops[i].stream;
    if (s < gpu.streams.size() && gpu.streams[s].device == device) out.push_back(i);
  }
  return out;
}

std::vector<std::uint32_t> gpu_device_ids(const GpuProfile& gpu) {
  std::set<std::uint32_t> ids;
  for (const GpuDevice& d : gpu.devices) ids.insert(d.id);
  for (const GpuStream& s : gpu.streams) ids.insert(s.device);
  for (const GpuMemoryEvent& e : gpu.memory_events) ids.insert(e.device);
  for (const GpuCounter& c : gpu.counters) ids.insert(c.device);
  return {ids.begin(), ids.end()};
}

std::vector<Interval> busy_union(const GpuProfile& gpu, const std::vector<std::uint32_t>& ops, bool kernels_only) {
  std::vector<Interval> intervals;
  intervals.reserve(ops.size());
  for (std::uint32_t i : ops) {
    const GpuOp& op = gpu.ops[i];
    if (kernels_only && op.kind != GpuOpKind::Kernel) continue;
    intervals.push_back(op_interval(op));
  }
  return interval_union(std::move(intervals));
}

StreamReport stream_report(const Profile& profile, std::uint64_t gap_threshold_ns) {
  StreamReport report;
  report.gap_threshold_ns = gap_threshold_ns;
  const GpuProfile& gpu = profile.gpu;
  if (!gpu.summary.traced) return report;

  // ---- streams
  std::vector<std::vector<std::uint32_t>> by_stream(gpu.streams.size());
  for (std::uint32_t i = 0; i < gpu.ops.size(); ++i)
    if (gpu.ops[i].stream < gpu.streams.size()) by_stream[gpu.ops[i].stream].push_back(i);
  std::vector<std::vector<Interval>> stream_busy(gpu.streams.size());
  for (std::uint32_t s = 0; s < gpu.streams.size(); ++s) {
    StreamStats st;
    st.stream = s;
    st.device = gpu.streams[s].device;
    st.stream_id = gpu.streams[s].stream;
    st.ops = by_stream[s].size();
    for (std::uint32_t i : by_stream[s]) st.kernels += gpu.ops[i].kind == GpuOpKind::Kernel ? 1 : 0;
    // Ops of one stream may overlap (CUPTI's concurrent records of graph nodes, clock jitter):
    // the union keeps each nanosecond once.
    stream_busy[s] = busy_union(gpu, by_stream[s]);
    if (!by_stream[s].empty()) {
      st.first_ns = std::numeric_limits<std::uint64_t>::max();
      for (std::uint32_t i : by_stream[s]) {
        const Interval iv = op_interval(gpu.ops[i]);
        st.first_ns = std::min(st.first_ns, iv.start_ns);
        st.last_ns = std::max(st.last_ns, iv.end_ns);
      }
    }
    st.busy_ns = total_length(stream_busy[s]);
    const std::uint64_t span = st.last_ns - st.first_ns;
    st.idle_ns = span - std::min(span, st.busy_ns);
    const auto& busy = stream_busy[s];
    for (std::size_t k = 1; k < busy.size(); ++k) {
      const std::uint64_t gap = busy[k].start_ns - busy[k - 1].end_ns;
      if (gap > gap_threshold_ns) ++st.idle_gaps;
      st.longest_gap_ns = std::max(st.longest_gap_ns, gap);
    }
    st.efficiency = span == 0 ? 0.0 : static_cast<double>(st.busy_ns) / static_cast<double>(span);
    report.streams.push_back(st);
  }
  std::stable_sort(report.streams.begin(), report.streams.end(), [](const StreamStats& a, const StreamStats& b) {
    return std::tie(a.device, a.stream_id) < std::tie(b.device, b.stream_id);
  });

  // ---- devices
  for (std::uint32_t id : gpu_device_ids(gpu)) {
    DeviceStats d;
    d.device = id;
    if (const GpuDevice* dev = gpu.device(id)) d.name = dev->name;
    const std::vector<std::uint32_t> ops = device_ops(gpu, id);
    for (std::uint32_t i : ops) {
      const GpuOp& op = gpu.ops[i];
      if (op.kind == GpuOpKind::Kernel) ++d.kernels;
      if (const GpuMemcpy* m = memcpy_of(gpu, op)) d.memcpy_bytes += m->bytes;
    }
    const std::vector<Interval> busy = busy_union(gpu, ops);
    d.busy_ns = total_length(busy);
    d.kernel_busy_ns = total_length(busy_union(gpu, ops, true));
    if (!busy.empty()) d.active_ns = busy.back().end_ns - busy.front().start_ns;
    d.kernel_busy_fraction = profile.meta.duration_ns == 0
                                 ? 0.0
                                 : static_cast<double>(d.kernel_busy_ns) / static_cast<double>(profile.meta.duration_ns);
    std::vector<std::vector<Interval>> tracks;
    for (std::uint32_t s = 0; s < gpu.streams.size(); ++s)
      if (gpu.streams[s].device == id) tracks.push_back(stream_busy[s]);
    d.overlap_ns = covered_by(tracks, 2);
    if (const GpuCounter* c = find_counter(gpu, id, "nvml_gpu_utilization")) {
      d.nvml_gpu_utilization_mean = counter_mean(*c);
      d.nvml_gpu_utilization_max = counter_max(*c);
    }
    if (const GpuCounter* c = find_counter(gpu, id, "nvml_memory_utilization"))
      d.nvml_memory_utilization_mean = counter_mean(*c);
    if (const GpuCounter* c = find_counter(gpu, id, "nvml_memory_used")) d.nvml_memory_used_max = to_bytes(counter_max(*c));
    report.devices.push_back(std::move(d));
  }

  // ---- peer-to-peer copies
  std::map<std::pair<std::uint32_t, std::uint32_t>, PeerBandwidth> peers;
  for (const GpuOp& op : gpu.ops) {
    const GpuMemcpy* m = memcpy_of(gpu, op);
    if (m == nullptr || m->kind != MemcpyKind::PtoP) continue;
    PeerBandwidth& p = peers[{m->src_device, m->dst_device}];
    p.src_device = m->src_device;
    p.dst_device = m->dst_device;
    ++p.copies;
    p.bytes += m->bytes;
    p.busy_ns += op.duration_ns();
  }
  for (auto& [key, p] : peers) {
    // Bytes per nanosecond is GB/s.
    p.gbytes_per_s = p.busy_ns == 0 ? 0.0 : static_cast<double>(p.bytes) / static_cast<double>(p.busy_ns);
    report.peers.push_back(p);
  }
  return report;
}

GpuMemoryReport gpu_memory_report(const Profile& profile) {
  GpuMemoryReport report;
  const GpuProfile& gpu = profile.gpu;
  if (!gpu.summary.traced) return report;

  struct Block {
    std::uint64_t bytes = 0;
    std::uint32_t node = 0;
  };
  struct State {
    GpuDeviceMemory memory;
    std::uint64_t current = 0;
  };
  std::map<std::uint32_t, State> devices;
  for (std::uint32_t id : gpu_device_ids(gpu)) devices[id].memory.device = id;
  std::map<std::pair<std::uint32_t, std::uint64_t>, Block> live;  // by (device, address)
  std::uint64_t untracked = 0;

  // The events are sorted by time; a stable sort keeps that promise for a hand-built profile
  // without reordering events at the same time (an allocation and the release after it).
  std::vector<const GpuMemoryEvent*> events;
  events.reserve(gpu.memory_events.size());
  for (const GpuMemoryEvent& e : gpu.memory_events) events.push_back(&e);
  std::stable_sort(events.begin(), events.end(),
                   [](const GpuMemoryEvent* a, const GpuMemoryEvent* b) { return a->time_ns < b->time_ns; });
  for (const GpuMemoryEvent* e : events) {
    State& state = devices[e->device];
    state.memory.device = e->device;
    const auto key = std::make_pair(e->device, e->address);
    if (e->alloc) {
      auto [it, inserted] = live.try_emplace(key, Block{e->bytes, e->launch.node});
      if (!inserted) {  // the old block's release was lost: this allocation replaces it
        state.current -= std::min(state.current, it->second.bytes);
        it->second = Block{e->bytes, e->launch.node};
      }
      state.current += e->bytes;
      ++state.memory.alloc_count;
      if (state.current > state.memory.peak_bytes) {
        state.memory.peak_bytes = state.current;
        state.memory.peak_time_ns = e->time_ns;
      }
    } else if (auto it = live.find(key); it != live.end()) {
      state.current -= std::min(state.current, it->second.bytes);
      ++state.memory.free_count;
      live.erase(it);
    } else {
      ++untracked;
    }
    report.timeline.push_back(GpuMemoryPoint{e->time_ns, e->device, state.current});
  }
  report.untracked_frees = std::max(untracked, gpu.summary.untracked_frees);

  // ---- leaks: what is still allocated, by device and allocating scope
  std::map<std::pair<std::uint32_t, std::uint32_t>, GpuLeak> leaks;
  for (const auto& [key, block] : live) {
    GpuLeak& leak = leaks[{key.first, block.node}];
    leak.device = key.first;
    leak.node = block.node;
    ++leak.blocks;
    leak.bytes += block.bytes;
  }
  for (const auto& entry : leaks) report.leaks.push_back(entry.second);
  std::stable_sort(report.leaks.begin(), report.leaks.end(),
                   [](const GpuLeak& a, const GpuLeak& b) { return a.bytes > b.bytes; });

  // ---- per device, with NVML's view at its highest sample
  for (auto& [id, state] : devices) {
    GpuDeviceMemory m = state.memory;
    m.live_bytes = state.current;
    if (const GpuCounter* used = find_counter(gpu, id, "nvml_memory_used")) {
      // The first sample at the maximum: what the allocations held then is the last timeline
      // point of this device at or before it.
      const auto top = std::max_element(used->points.begin(), used->points.end(),
                                        [](const auto& a, const auto& b) { return a.second < b.second; });
      m.nvml_used_max = to_bytes(top->second);
      std::uint64_t allocated = 0;
      for (const GpuMemoryPoint& point : report.timeline) {
        if (point.time_ns > top->first) break;
        if (point.device == id) allocated = point.allocated_bytes;
      }
      m.unexplained_bytes = m.nvml_used_max - std::min(m.nvml_used_max, allocated);
    }
    report.devices.push_back(m);
  }
  return report;
}

CudaTiming timing_statistics(std::string_view name, const std::vector<double>& ms) {
  CudaTiming t;
  t.name = std::string(name);
  t.count = static_cast<std::uint32_t>(ms.size());
  if (ms.empty()) return t;
  t.min_ms = *std::min_element(ms.begin(), ms.end());
  t.max_ms = *std::max_element(ms.begin(), ms.end());
  for (double v : ms) t.total_ms += v;
  t.mean_ms = t.total_ms / static_cast<double>(ms.size());
  if (ms.size() > 1) {
    // Two passes: the deviations from the mean, not E[x²] − E[x]², which cancels badly.
    double squares = 0.0;
    for (double v : ms) squares += (v - t.mean_ms) * (v - t.mean_ms);
    t.std_ms = std::sqrt(squares / static_cast<double>(ms.size() - 1));
  }
  return t;
}

}  // namespace nnprof::analysis
