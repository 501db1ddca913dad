// How one rank's clock maps onto rank 0's, from NTP-style round trips (nnprof/rank_recording.hpp).
#include <algorithm>
#include <cmath>
#include <charconv>
#include <cstdlib>
#include <cstring>

#include "nnprof/rank_recording.hpp"

namespace nnprof {

std::optional<ClockOffsetSample> best_clock_offset(std::span<const ClockRoundTrip> trips) {
  const ClockRoundTrip* best = nullptr;
  for (const ClockRoundTrip& t : trips) {
    // Impossible trips (an answer before its question, a negative wait at rank 0) say the
    // times were mixed up; they would pass the minimum-round-trip filter first.
    if (t.t4 < t.t1 || t.t3 < t.t2 || t.round_trip_ns() < 0) continue;
    if (best == nullptr || t.round_trip_ns() < best->round_trip_ns()) best = &t;
  }
  if (best == nullptr) return std::nullopt;
  ClockOffsetSample s;
  s.offset_ns = best->offset_ns();
  s.local_ns = best->t1 + (best->t4 - best->t1) / 2;
  s.round_trip_ns = best->round_trip_ns();
  s.exchanges = static_cast<std::uint32_t>(trips.size());
  return s;
}

ClockAlignment align_clock(const ClockOffsetSample& start, const std::optional<ClockOffsetSample>& end,
                           std::string method) {
  ClockAlignment a;
  a.aligned = true;
  a.method = std::move(method);
  a.reference_ns = start.local_ns;
  a.offset_ns = start.offset_ns;
  a.exchanges = start.exchanges;
  // Each offset is known to within half its round trip (the two legs could be as unequal as
  // one taking all of it).
  const double start_error = 0.5 * static_cast<double>(start.round_trip_ns);
  a.residual_ns = start_error;
  if (!end || end->local_ns <= start.local_ns) return a;
  a.exchanges += end->exchanges;
  const double end_error = 0.5 * static_cast<double>(end->round_trip_ns);
  const double change = end->offset_ns - start.offset_ns;
  if (std::abs(change) > start_error + end_error) {
    // A drift the two exchanges' errors cannot explain: between them the interpolated offset is
    // wrong by at most the larger of the two errors.
    a.drift_ppb = change / static_cast<double>(end->local_ns - start.local_ns) * 1e9;
    a.residual_ns = std::max(start_error, end_error);
  } else if (end_error < start_error) {
    // No drift shows (one host shares one clock; a short run cannot tell drift from the
    // exchanges' errors, and dividing those by a few milliseconds would invent hundreds of
    // ppm): the offset is constant, taken from the tighter exchange.
    a.reference_ns = end->local_ns;
    a.offset_ns = end->offset_ns;
    a.residual_ns = end_error;
  }
  return a;
}

ClockBound collective_clock_bound(std::int64_t local_enter_ns, std::int64_t local_exit_ns, std::int64_t rank0_enter_ns,
                                  std::int64_t rank0_exit_ns) {
  // local_exit - offset >= rank0_enter, and rank0_exit >= local_enter - offset.
  ClockBound b;
  b.lower_ns = static_cast<double>(local_enter_ns - rank0_exit_ns);
  b.upper_ns = static_cast<double>(local_exit_ns - rank0_enter_ns);
  b.local_ns = local_enter_ns + (local_exit_ns - local_enter_ns) / 2;
  return b;
}

ClockAlignment refine_clock(const ClockAlignment& clock, std::span<const ClockBound> bounds, bool* narrowed) {
  if (narrowed != nullptr) *narrowed = false;
  if (!clock.aligned) return clock;
  double lower = clock.offset_ns - clock.residual_ns;
  double upper = clock.offset_ns + clock.residual_ns;
  for (const ClockBound& b : bounds) {
    const double shift = clock.drift_ppb * 1e-9 * static_cast<double>(b.local_ns - clock.reference_ns);
    lower = std::max(lower, b.lower_ns - shift);
    upper = std::min(upper, b.upper_ns - shift);
  }
  // Empty: the bounds contradict the round trips, so one of the assumptions (one steady clock
  // per rank, the drift) is wrong, and narrowing would only hide it.
  if (lower > upper || upper - lower >= 2.0 * clock.residual_ns) return clock;
  ClockAlignment refined = clock;
  refined.offset_ns = 0.5 * (lower + upper);
  refined.residual_ns = 0.5 * (upper - lower);
  refined.method += "+collectives";
  if (narrowed != nullptr) *narrowed = true;
  return refined;
}

std::int64_t injected_clock_offset_ns() {
  const char* text = std::getenv("NNPROF_TEST_CLOCK_OFFSET_NS");
  if (text == nullptr || *text == '\0') return 0;
  std::int64_t value = 0;
  const char* end = text + std::strlen(text);
  const auto [ptr, ec] = std::from_chars(text, end, value);
  return ec == std::errc{} && ptr == end ? value : 0;
}

}  // namespace nnprof
