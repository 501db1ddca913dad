#include "record/metric_registry.hpp"

#include <bit>
#include <cmath>
#include <new>

#include "record/internal_allocations.hpp"
#include "record/thread_record.hpp"

namespace nnprof::detail {

MetricThread::~MetricThread() {
  for (auto& b : blocks) delete[] b.load(std::memory_order_relaxed);
}

MetricEntry* MetricRegistry::get(std::string_view name, MetricKind kind, std::string_view unit) {
  std::lock_guard lock(mu_);
  if (auto it = by_name_.find(name); it != by_name_.end()) return it->second.get();
  if (by_id_.size() >= kMaxMetrics) {
    refused_.fetch_add(1, std::memory_order_relaxed);
    return nullptr;
  }
  auto e = std::make_unique<MetricEntry>();
  e->name.assign(name);
  e->unit.assign(unit);
  e->kind = kind;
  e->id = static_cast<std::uint32_t>(by_id_.size());
  MetricEntry* raw = e.get();
  by_id_.push_back(raw);
  by_name_.emplace(std::string_view(raw->name), std::move(e));
  return raw;
}

const MetricEntry* MetricRegistry::find(std::string_view name) const {
  std::lock_guard lock(mu_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : it->second.get();
}

void MetricRegistry::snapshot(const std::vector<std::shared_ptr<ThreadRecord>>& threads, RawMetrics& out) const {
  constexpr auto rx = std::memory_order_relaxed;
  std::lock_guard lock(mu_);
  out.refused = refused_.load(rx);
  out.metrics.reserve(by_id_.size());
  for (const MetricEntry* e : by_id_) {
    RawMetric m;
    m.name = e->name;
    m.unit = e->unit;
    m.kind = e->kind;
    m.misuses = e->misuses.load(rx);
    for (const auto& rec : threads) {
      const MetricCell* c = rec->priv.metrics.cell(e->id);
      if (c == nullptr || c->count.load(rx) == 0) continue;
      RawMetricCell r;
      r.thread = rec->priv.index;
      r.count = c->count.load(rx);
      r.sum = c->sum.load(rx);
      r.min = c->min.load(rx);
      r.max = c->max.load(rx);
      r.shift = c->shift.load(rx);
      r.sum_dev = c->sum_dev.load(rx);
      r.sum_dev_sq = c->sum_dev_sq.load(rx);
      r.last = c->last.load(rx);
      r.last_ticks = c->last_ticks.load(rx);
      m.cells.push_back(r);
    }
    out.metrics.push_back(std::move(m));
  }
}

MetricEntry* metric_for_thread(ThreadState* ts, MetricRegistry& registry, std::string_view name, MetricKind kind,
                               std::string_view unit) noexcept {
  try {
    auto& cache = ts->priv->metrics.cache;
    MetricEntry* e = nullptr;
    if (auto it = cache.find(name); it != cache.end()) [[likely]] {
      e = it->second;
    } else {
      InternalAllocations internal;
      e = registry.get(name, kind, unit);
      if (e == nullptr) return nullptr;
      cache.emplace(std::string_view(e->name), e);
    }
    if (e->kind != kind) [[unlikely]] {
      e->misuses.fetch_add(1, std::memory_order_relaxed);
      return nullptr;
    }
    return e;
  } catch (...) {
    return nullptr;  // out of memory caching the name: this observation is lost
  }
}

namespace {
[[gnu::noinline]] MetricCell* add_cell_block(MetricThread& m, std::uint32_t id) noexcept {
  if (id >= kMaxMetrics) return nullptr;
  InternalAllocations internal;
  auto* block = new (std::nothrow) MetricCell[MetricThread::kCellsPerBlock];
  if (block == nullptr) return nullptr;
  m.blocks[id / MetricThread::kCellsPerBlock].store(block, std::memory_order_release);
  return block + id % MetricThread::kCellsPerBlock;
}
}  // namespace

void record_metric(ThreadState* ts, std::uint32_t id, double v) noexcept {
  MetricCell* c = ts->priv->metrics.cell(id);
  if (c == nullptr) [[unlikely]] {
    c = add_cell_block(ts->priv->metrics, id);
    if (c == nullptr) return;
  }
  const std::uint64_t now = read_ticks();
  constexpr auto rx = std::memory_order_relaxed;
  const std::uint64_t n = c->count.load(rx);
  if (n == 0) [[unlikely]] {
    c->shift.store(v, rx);
    c->min.store(v, rx);
    c->max.store(v, rx);
  } else {
    if (v < c->min.load(rx)) c->min.store(v, rx);
    if (v > c->max.load(rx)) c->max.store(v, rx);
  }
  c->count.store(n + 1, rx);
  single_writer_add(c->sum, v);
  const double dev = v - c->shift.load(rx);
  single_writer_add(c->sum_dev, dev);
  single_writer_add(c->sum_dev_sq, dev * dev);
  c->last.store(v, rx);
  c->last_ticks.store(now, rx);
  if (ts->keep_spans) write_record(ts, now, std::bit_cast<std::uint64_t>(v), id, RecordKind::Metric);
}

}  // namespace nnprof::detail
