// Issue 21, goal 2: no cliff at the memory cap and no drops below it.
//
//   nnprof_cap_cliff [runs]
//
// 1. Drops below the cap: `runs` times (default 5), a fresh default profiler (keep-first,
//    256 MiB) records 10 M empty scopes in a tight loop, 240 MB of spans: below its cap, so
//    every span must be kept. Prints the spans dropped and the chunks the recording thread had
//    to allocate itself per run.
// 2. The cliff: per policy, one profiler below its cap and one past it (32 MiB, filled with
//    3 M scopes first) record batches of 100 k scopes in turn. Prints the median cost per scope
//    in each and their ratio: alternating batches in one run, so that a shared machine's load
//    falls on both alike. Statistics must stay complete: the program fails when they are not.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "nnprof/nnprof.hpp"

namespace {

constexpr std::uint64_t kTightLoopScopes = 10'000'000;

bool drops_below_cap(int runs) {
  bool ok = true;
  std::printf("drops below the cap: %llu scopes into a fresh default profiler (keep-first, 256 MiB)\n",
              static_cast<unsigned long long>(kTightLoopScopes));
  std::uint64_t total_dropped = 0;
  for (int run = 0; run < runs; ++run) {
    nnprof::Profiler profiler;
    for (std::uint64_t i = 0; i < kTightLoopScopes; ++i) {
      NNPROF_SCOPE_IN(profiler, "tight");
    }
    const nnprof::Profile p = profiler.snapshot();
    const auto& c = p.completeness;
    const auto* s = p.find_scope("tight");
    const std::uint64_t counted = s != nullptr ? s->time.count : 0;
    std::printf("  run %d: kept %llu, dropped %llu, chunks allocated on the recording thread %llu%s\n", run + 1,
                static_cast<unsigned long long>(c.spans_kept), static_cast<unsigned long long>(c.spans_dropped),
                static_cast<unsigned long long>(c.hot_path_allocations),
                counted == kTightLoopScopes ? "" : "  STATISTICS INCOMPLETE");
    total_dropped += c.spans_dropped;
    ok = ok && counted == kTightLoopScopes;
  }
  std::printf("  total dropped over %d runs: %llu\n", runs, static_cast<unsigned long long>(total_dropped));
  return ok && total_dropped == 0;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
  return v[v.size() / 2];
}

std::uint64_t count_of(const nnprof::Profile& p, const char* name) {
  const auto* s = p.find_scope(name);
  return s != nullptr ? s->time.count : 0;
}

/// The median cost per scope of `batches` batches into each of two profilers of `policy`, one
/// below its cap (256 MiB) and one past it (32 MiB, filled first), the batches alternating so
/// that both see the same load on a shared machine.
bool cliff(nnprof::BufferPolicy policy, const char* name) {
  constexpr std::uint64_t kBatch = 100'000, kBatches = 40, kFill = 3'000'000;
  auto options = [policy](std::size_t cap) {
    nnprof::ProfilerOptions o;
    o.memory_cap_bytes = cap;
    o.policy = policy;
    return o;
  };
  nnprof::Profiler below(options(std::size_t{256} << 20)), past(options(std::size_t{32} << 20));
  for (std::uint64_t i = 0; i < kFill; ++i) {  // about 1.4 M spans fit in 32 MiB
    NNPROF_SCOPE_IN(past, "capped");
  }
  for (std::uint64_t i = 0; i < kBatch; ++i) {  // creates the node and the first chunks
    NNPROF_SCOPE_IN(below, "capped");
  }
  auto time_batch = [](nnprof::Profiler& profiler) {
    const auto t0 = std::chrono::steady_clock::now();
    for (std::uint64_t i = 0; i < kBatch; ++i) {
      NNPROF_SCOPE_IN(profiler, "capped");
    }
    const auto t1 = std::chrono::steady_clock::now();
    return std::chrono::duration<double, std::nano>(t1 - t0).count() / kBatch;
  };
  std::vector<double> before, after;
  for (std::uint64_t b = 0; b < kBatches; ++b) {
    if (b % 2 == 0) {
      before.push_back(time_batch(below));
      after.push_back(time_batch(past));
    } else {
      after.push_back(time_batch(past));
      before.push_back(time_batch(below));
    }
  }
  const nnprof::Profile pb = below.snapshot(), pa = past.snapshot();
  const bool complete =
      count_of(pb, "capped") == kBatch * (kBatches + 1) && count_of(pa, "capped") == kFill + kBatch * kBatches;
  const bool below_kept_all = pb.completeness.spans_dropped == 0 && pb.completeness.spans_overwritten == 0;
  const bool past_the_cap = pa.completeness.spans_dropped + pa.completeness.spans_overwritten > 0;
  const double m_before = median(before), m_after = median(after);
  std::printf(
      "%-15s per scope below the cap %.1f ns, past it %.1f ns (medians of %llu alternating batches of %llu): "
      "past/below = %.2f; past the cap: kept %llu, dropped %llu, overwritten %llu%s%s\n",
      name, m_before, m_after, static_cast<unsigned long long>(kBatches), static_cast<unsigned long long>(kBatch),
      m_after / m_before, static_cast<unsigned long long>(pa.completeness.spans_kept),
      static_cast<unsigned long long>(pa.completeness.spans_dropped),
      static_cast<unsigned long long>(pa.completeness.spans_overwritten), complete ? "" : "  STATISTICS INCOMPLETE",
      below_kept_all && past_the_cap ? "" : "  NOT BELOW/PAST THE CAP AS INTENDED");
  return complete && below_kept_all && past_the_cap;
}

}  // namespace

int main(int argc, char** argv) {
  const int runs = argc > 1 ? std::max(1, std::atoi(argv[1])) : 5;
  bool ok = drops_below_cap(runs);
  ok = cliff(nnprof::BufferPolicy::KeepFirst, "keep-first") && ok;
  ok = cliff(nnprof::BufferPolicy::FlightRecorder, "flight-recorder") && ok;
  return ok ? 0 : 1;
}
