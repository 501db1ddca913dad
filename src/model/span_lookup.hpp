// The innermost kept span of a thread open at a moment: what flow ends and GPU launches are
// attributed to.
#pragma once

#include <algorithm>
#include <cstdint>
#include <tuple>
#include <vector>

#include "nnprof/profile.hpp"

namespace nnprof::model {

/// Sets `e->span` of every endpoint (anything with `thread`, `time_ns` and `span`) to the
/// innermost span of its thread open at its time, or kNone: one sweep per thread over `spans`
/// (sorted by thread, then start, parents first) and the endpoints by time.
template <class Endpoint>
void assign_innermost_spans(const std::vector<Span>& spans, std::vector<Endpoint*> ends) {
  std::sort(ends.begin(), ends.end(), [](const Endpoint* a, const Endpoint* b) {
    return std::tie(a->thread, a->time_ns) < std::tie(b->thread, b->time_ns);
  });
  std::vector<std::uint32_t> open;
  std::size_t next = 0;
  std::uint32_t thread = kNone;
  for (Endpoint* e : ends) {
    if (e->thread == kNone) {
      e->span = kNone;
      continue;
    }
    if (e->thread != thread) {
      thread = e->thread;
      open.clear();
      next = static_cast<std::size_t>(
          std::lower_bound(spans.begin(), spans.end(), thread,
                           [](const Span& s, std::uint32_t t) { return s.thread < t; }) -
          spans.begin());
    }
    for (; next < spans.size() && spans[next].thread == thread && spans[next].start_ns <= e->time_ns; ++next) {
      while (!open.empty() && spans[open.back()].end_ns < spans[next].start_ns) open.pop_back();
      open.push_back(static_cast<std::uint32_t>(next));
    }
    while (!open.empty() && spans[open.back()].end_ns < e->time_ns) open.pop_back();
    e->span = open.empty() ? kNone : open.back();
  }
}

}  // namespace nnprof::model
