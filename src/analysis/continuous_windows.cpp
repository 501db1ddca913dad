#include "analysis/continuous_windows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "analysis/cpu_profile.hpp"
#include "analysis/energy.hpp"
#include "analysis/system_tracks.hpp"

namespace nnprof::analysis {
namespace {

constexpr std::string_view kOther = "[other]";

// Heap bytes of a string beyond the object itself (0 while it fits the small-string buffer).
std::size_t string_heap(const std::string& s) noexcept {
  return s.capacity() > std::string().capacity() ? s.capacity() + 1 : 0;
}

// A list cut to its `keep` largest entries by `key`, the rest summed into one "[other]" entry
// (placed last), so that the list's totals are unchanged. Entries already named "[other]"
// join the remainder.
template <typename Entry, typename Key, typename Add>
void keep_top(std::vector<Entry>& list, std::size_t keep, Key key, Add add) {
  Entry other;
  other.name = std::string(kOther);
  bool has_other = false;
  std::vector<Entry> kept;
  for (Entry& e : list) {
    if (e.name == kOther) {
      add(other, e);
      has_other = true;
    } else {
      kept.push_back(std::move(e));
    }
  }
  std::stable_sort(kept.begin(), kept.end(), [&](const Entry& a, const Entry& b) {
    if (key(a) != key(b)) return key(a) > key(b);
    return a.name < b.name;
  });
  if (kept.size() > keep) {
    for (std::size_t i = keep; i < kept.size(); ++i) add(other, kept[i]);
    kept.resize(keep);
    has_other = true;
  }
  if (has_other) kept.push_back(std::move(other));
  kept.shrink_to_fit();
  list = std::move(kept);
}

void add_scope(WindowScope& a, const WindowScope& b) {
  a.calls += b.calls;
  a.total_ns += b.total_ns;
  a.self_ns += b.self_ns;
  a.items += b.items;
}
void add_function(WindowFunction& a, const WindowFunction& b) {
  a.samples += b.samples;
  a.weight_ns += b.weight_ns;
}

// `b`'s entries added by name into `a`'s.
template <typename Entry, typename Add>
void merge_lists(std::vector<Entry>& a, const std::vector<Entry>& b, Add add) {
  std::unordered_map<std::string_view, std::size_t> index;
  for (std::size_t i = 0; i < a.size(); ++i) index.emplace(a[i].name, i);
  for (const Entry& e : b) {
    if (auto it = index.find(e.name); it != index.end()) {
      add(a[it->second], e);
    } else {
      a.push_back(e);
      index.clear();  // pointers into `a` may have moved
      for (std::size_t i = 0; i < a.size(); ++i) index.emplace(a[i].name, i);
    }
  }
}

// A NaN-aware sum: a measured value plus an unmeasured one is the measured one.
double add_measured(double a, double b) {
  if (std::isnan(a)) return b;
  if (std::isnan(b)) return a;
  return a + b;
}

std::uint64_t minus(std::uint64_t now, std::uint64_t before) { return now >= before ? now - before : 0; }

// The sum of the GPUs' memory.used tracks at the last sample at or before `end_ns`.
double gpu_memory_at(const SystemProfile& system, std::uint64_t start_ns, std::uint64_t end_ns) {
  if (!system.monitored || system.sample_ns.empty()) return ProfileWindow::kNotMeasured;
  const auto it = std::upper_bound(system.sample_ns.begin(), system.sample_ns.end(), end_ns);
  if (it == system.sample_ns.begin()) return ProfileWindow::kNotMeasured;
  const std::size_t i = static_cast<std::size_t>(it - system.sample_ns.begin()) - 1;
  if (system.sample_ns[i] < start_ns) return ProfileWindow::kNotMeasured;
  double sum = 0.0;
  bool any = false;
  for (const SystemTrack& t : system.tracks) {
    if (!t.name.starts_with("gpu") || !t.name.ends_with(".memory.used") || i >= t.values.size()) continue;
    if (std::isnan(t.values[i])) continue;
    sum += t.values[i];
    any = true;
  }
  return any ? sum : ProfileWindow::kNotMeasured;
}

}  // namespace

std::size_t WindowBaseline::bytes() const noexcept {
  // A red-black tree node: three pointers and a colour besides the value.
  constexpr std::size_t kNode = 4 * sizeof(void*) + sizeof(std::pair<const std::string, ScopeTotals>);
  std::size_t total = sizeof(*this);
  for (const auto& [name, totals] : scopes) total += kNode + string_heap(name);
  return total;
}

WindowBaseline window_baseline(const Profile& snapshot) {
  WindowBaseline b;
  for (const ScopeStats& s : snapshot.scopes) {
    WindowBaseline::ScopeTotals& t = b.scopes[snapshot.str(s.name)];
    t.calls += s.time.count;
    t.total_ns += s.total_ns;
    t.self_ns += s.self_ns;
    t.items += s.items;
  }
  b.heap_alloc_bytes = snapshot.heap.alloc_bytes;
  b.heap_free_bytes = snapshot.heap.free_bytes;
  if (!snapshot.cpu_samples.empty()) {
    b.samples_through_ns = snapshot.cpu_samples.back().time_ns;
    b.any_sample = true;
  }
  return b;
}

std::string default_step_scope(const Profile& snapshot) {
  for (const ScopeStats& s : snapshot.scopes)
    if (s.items > 0) return snapshot.str(s.name);
  return {};
}

ProfileWindow measure_window(const Profile& now, const WindowBaseline& before, std::uint64_t start_ns,
                             std::uint64_t end_ns, const std::string& step_scope, const WindowReadings& readings,
                             const RollupPolicy& policy) {
  ProfileWindow w;
  w.start_ns = start_ns;
  w.end_ns = end_ns;

  // Scope statistics are cumulative: the window's share is now minus the window's start.
  std::unordered_map<std::string_view, std::size_t> by_name;
  for (const ScopeStats& s : now.scopes) {
    const std::string& name = now.str(s.name);
    WindowBaseline::ScopeTotals prior;
    if (auto it = before.scopes.find(name); it != before.scopes.end()) prior = it->second;
    WindowScope d{name, minus(s.time.count, prior.calls), minus(s.total_ns, prior.total_ns),
                  minus(s.self_ns, prior.self_ns), minus(s.items, prior.items)};
    if (d.calls == 0 && d.total_ns == 0 && d.items == 0) continue;
    w.scope_calls += d.calls;
    if (!step_scope.empty() && name == step_scope) {
      w.steps = d.calls;
      w.step_ns = d.total_ns;
      w.items = d.items;
    }
    if (auto it = by_name.find(name); it != by_name.end()) {
      add_scope(w.scopes[it->second], d);
    } else {
      by_name.emplace(name, w.scopes.size());
      w.scopes.push_back(std::move(d));
    }
  }
  keep_top(w.scopes, policy.top_scopes, [](const WindowScope& s) { return s.total_ns; }, add_scope);

  // CPU samples not folded into an earlier window, by innermost function.
  std::unordered_map<std::string, std::size_t> by_function;
  for (const CpuSample& s : now.cpu_samples) {
    if (before.any_sample && s.time_ns <= before.samples_through_ns) continue;
    ++w.cpu_samples;
    w.cpu_sample_ns += s.weight_ns;
    std::string function = "[unknown]";
    if (s.stack != kNone && s.stack < now.stacks.size() && !now.stacks[s.stack].frames.empty())
      function = cpu_frame_function(now, now.stacks[s.stack].frames.front());
    auto [it, fresh] = by_function.emplace(std::move(function), w.functions.size());
    if (fresh) w.functions.push_back(WindowFunction{it->first, 0, 0});
    w.functions[it->second].samples += 1;
    w.functions[it->second].weight_ns += s.weight_ns;
  }
  keep_top(w.functions, policy.top_functions, [](const WindowFunction& f) { return f.samples; }, add_function);

  // Memory: the heap's totals are cumulative too; levels are those at the window's end.
  if (now.heap.tracked) {
    w.heap_live_bytes = now.heap.current_bytes;
    w.heap_alloc_bytes = minus(now.heap.alloc_bytes, before.heap_alloc_bytes);
    w.heap_free_bytes = minus(now.heap.free_bytes, before.heap_free_bytes);
  }
  w.rss_bytes = readings.rss_bytes;
  w.rss_peak_bytes = readings.rss_bytes;
  for (auto it = std::lower_bound(now.heap_samples.begin(), now.heap_samples.end(), start_ns,
                                  [](const HeapSample& h, std::uint64_t t) { return h.time_ns < t; });
       it != now.heap_samples.end() && it->time_ns <= end_ns; ++it) {
    w.rss_peak_bytes = std::max(w.rss_peak_bytes, it->rss_bytes);
    if (w.rss_bytes == 0) w.rss_bytes = it->rss_bytes;
  }
  if (const SystemTrack* rss = now.system.track("process.memory.rss")) {
    for (std::size_t i = 0; i < now.system.sample_ns.size() && i < rss->values.size(); ++i)
      if (now.system.sample_ns[i] >= start_ns && now.system.sample_ns[i] <= end_ns && !std::isnan(rss->values[i]))
        w.rss_peak_bytes = std::max(w.rss_peak_bytes, static_cast<std::uint64_t>(rss->values[i]));
  }

  // The system monitor: GPU memory at the end, energy and CPU use over the window.
  if (now.system.monitored && end_ns > start_ns) {
    w.gpu_memory_bytes = gpu_memory_at(now.system, start_ns, end_ns);
    const WindowSystem ws = system_between(now.system, start_ns, end_ns);
    if (ws.figures.samples > 0) {
      w.cpu_percent = ws.figures.process_cpu_percent;
      double joules = 0.0;
      bool any = false;
      for (const EnergyDomain& d : ws.domains) {
        if (!counts_towards_total(d)) continue;
        joules += d.joules;
        any = true;
      }
      if (any) w.energy_joules = joules;
    }
  }
  return w;
}

void merge_window(ProfileWindow& a, const ProfileWindow& b, const RollupPolicy& policy) {
  const double a_seconds = static_cast<double>(a.end_ns - a.start_ns);
  const double b_seconds = static_cast<double>(b.end_ns - b.start_ns);
  a.start_ns = std::min(a.start_ns, b.start_ns);
  a.end_ns = std::max(a.end_ns, b.end_ns);
  a.raw_windows += b.raw_windows;
  a.step_aligned = b.step_aligned;  // the merged window ends where b ended
  a.steps += b.steps;
  a.step_ns += b.step_ns;
  a.items += b.items;
  a.scope_calls += b.scope_calls;
  a.cpu_samples += b.cpu_samples;
  a.cpu_sample_ns += b.cpu_sample_ns;
  merge_lists(a.scopes, b.scopes, add_scope);
  keep_top(a.scopes, policy.top_scopes, [](const WindowScope& s) { return s.total_ns; }, add_scope);
  merge_lists(a.functions, b.functions, add_function);
  keep_top(a.functions, policy.top_functions, [](const WindowFunction& f) { return f.samples; }, add_function);
  if (b.rss_bytes != 0) a.rss_bytes = b.rss_bytes;
  a.rss_peak_bytes = std::max(a.rss_peak_bytes, b.rss_peak_bytes);
  a.heap_live_bytes = b.heap_live_bytes;
  a.heap_alloc_bytes += b.heap_alloc_bytes;
  a.heap_free_bytes += b.heap_free_bytes;
  if (!std::isnan(b.gpu_memory_bytes)) a.gpu_memory_bytes = b.gpu_memory_bytes;
  a.energy_joules = add_measured(a.energy_joules, b.energy_joules);
  // CPU use is a mean over time: weighted by each part's length.
  if (std::isnan(a.cpu_percent) || std::isnan(b.cpu_percent)) {
    a.cpu_percent = std::isnan(a.cpu_percent) ? b.cpu_percent : a.cpu_percent;
  } else if (a_seconds + b_seconds > 0.0) {
    a.cpu_percent = (a.cpu_percent * a_seconds + b.cpu_percent * b_seconds) / (a_seconds + b_seconds);
  }
}

std::size_t window_bytes(const ProfileWindow& w) noexcept {
  std::size_t total = sizeof(ProfileWindow);
  total += w.scopes.capacity() * sizeof(WindowScope);
  for (const WindowScope& s : w.scopes) total += string_heap(s.name);
  total += w.functions.capacity() * sizeof(WindowFunction);
  for (const WindowFunction& f : w.functions) total += string_heap(f.name);
  return total;
}

std::uint64_t WindowStore::bucket_for_age(std::uint64_t age_ns) const noexcept {
  const auto raw_for = static_cast<std::uint64_t>(policy_.raw_for.count());
  const auto medium_for = static_cast<std::uint64_t>(policy_.medium_for.count());
  if (age_ns < raw_for) return 0;
  if (age_ns < medium_for) return static_cast<std::uint64_t>(policy_.medium.count());
  return static_cast<std::uint64_t>(policy_.coarse.count());
}

WindowStore::Change WindowStore::add(ProfileWindow window) {
  Change change;
  list_bytes_ += window_bytes(window) - sizeof(ProfileWindow);
  windows_.push_back(std::move(window));
  ids_.push_back(next_id_++);
  std::vector<bool> changed(windows_.size(), false);
  changed.back() = true;
  const std::uint64_t newest_end = windows_.back().end_ns;
  const auto age_of = [&](const ProfileWindow& w) { return newest_end - std::min(newest_end, w.end_ns); };
  const auto merge_into = [&](std::size_t into, std::size_t from) {
    list_bytes_ -= window_bytes(windows_[into]) - sizeof(ProfileWindow);
    list_bytes_ -= window_bytes(windows_[from]) - sizeof(ProfileWindow);
    merge_window(windows_[into], windows_[from], policy_);
    list_bytes_ += window_bytes(windows_[into]) - sizeof(ProfileWindow);
    change.removed.push_back(ids_[from]);
    changed[into] = true;
  };

  // Windows are ordered by time and their tiers by age, so one pass merges each window into
  // the one before it when both are old enough for the same bucket and start in the same one.
  std::size_t out = 0;
  for (std::size_t i = 0; i < windows_.size(); ++i) {
    if (out > 0) {
      const std::uint64_t bucket = bucket_for_age(age_of(windows_[i]));
      if (bucket > 0 && windows_[out - 1].start_ns / bucket == windows_[i].start_ns / bucket) {
        merge_into(out - 1, i);
        continue;
      }
    }
    if (out != i) {
      windows_[out] = std::move(windows_[i]);
      ids_[out] = ids_[i];
      changed[out] = changed[i];
    }
    ++out;
  }
  windows_.resize(out);
  ids_.resize(out);
  changed.resize(out);

  // Past the cap, the two adjacent windows of the coarse tier covering the least time merge
  // (the oldest such pair): the coarse buckets double, and the count stays bounded.
  const auto coarse = static_cast<std::uint64_t>(policy_.coarse.count());
  while (windows_.size() > std::max<std::size_t>(policy_.max_windows, 2)) {
    const bool coarse_only = bucket_for_age(age_of(windows_[1])) == coarse;
    std::size_t best = 0;
    std::uint64_t best_span = std::numeric_limits<std::uint64_t>::max();
    for (std::size_t j = 0; j + 1 < windows_.size(); ++j) {
      if (coarse_only && bucket_for_age(age_of(windows_[j + 1])) != coarse) break;
      const std::uint64_t span = windows_[j + 1].end_ns - windows_[j].start_ns;
      if (span < best_span) {
        best_span = span;
        best = j;
      }
    }
    merge_into(best, best + 1);
    windows_.erase(windows_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    ids_.erase(ids_.begin() + static_cast<std::ptrdiff_t>(best) + 1);
    changed.erase(changed.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  for (std::size_t i = 0; i < changed.size(); ++i)
    if (changed[i]) change.written.push_back(i);
  return change;
}

std::size_t WindowStore::bytes() const noexcept {
  return sizeof(*this) + windows_.capacity() * sizeof(ProfileWindow) + ids_.capacity() * sizeof(std::uint64_t) +
         list_bytes_;
}

}  // namespace nnprof::analysis
