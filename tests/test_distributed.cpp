// Issue 24, merge and analysis: `nnprof merge` of rank profiles (clock mapping, refusals,
// bounded memory), and the analysis of the merged job (straggler, waits, overlap, the
// cross-rank critical path) on synthetic ranks with known timings.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/distributed.hpp"
#include "cli_run.hpp"
#include "io/chrome_trace.hpp"
#include "io/json_report.hpp"
#include "io/rank_merge.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profile.hpp"
#include "nnprof/report.hpp"
#include "test_directory.hpp"

namespace {

using nnprof::ClockAlignment;
using nnprof::kNone;
using nnprof::Profile;
using nnprof::RankInfo;
using nnprof::SpanArg;

constexpr std::uint64_t kMs = 1'000'000;
constexpr std::uint64_t kUs = 1'000;

// One rank's profile built by hand: one thread, spans given on the true (rank 0) clock and
// stored on the rank's own clock, which its ClockAlignment describes.
class RankBuilder {
 public:
  RankBuilder(int rank, int world, ClockAlignment clock = {}) : clock_(clock) {
    p.call_tree.resize(1);
    p.call_tree[0].parent = kNone;
    p.meta.hostname = "node" + std::to_string(rank / 2);
    p.meta.pid = 1000 + rank;
    p.meta.command_line = "train.py";
    p.meta.nnprof_version = "test";
    p.threads.push_back({0, 5000 + rank, "main", false, 0, 0});
    p.ranks.push_back(RankInfo{rank, world, rank % 2, "mpirun", p.meta.hostname, p.meta.pid, clock});
  }

  // The local time whose mapping t - (offset + drift * (t - reference)) is `true_ns`.
  [[nodiscard]] std::uint64_t local(std::uint64_t true_ns) const {
    if (!clock_.aligned) return true_ns;
    const double drift = clock_.drift_ppb * 1e-9;
    const double t = (static_cast<double>(true_ns) + clock_.offset_ns - drift * static_cast<double>(clock_.reference_ns)) /
                     (1.0 - drift);
    return static_cast<std::uint64_t>(std::llround(t));
  }

  std::uint32_t node(std::uint32_t parent, const std::string& name) {
    for (std::uint32_t c : p.call_tree[parent].children)
      if (p.strings[p.call_tree[c].name] == name) return c;
    auto id = static_cast<std::uint32_t>(p.call_tree.size());
    p.call_tree.emplace_back();
    auto& n = p.call_tree.back();
    n.id = id;
    n.parent = parent;
    n.name = intern(name);
    n.depth = p.call_tree[parent].depth + 1;
    p.call_tree[parent].children.push_back(id);
    return id;
  }

  // Spans must be added in start order (parents before their children).
  std::uint32_t span(std::uint32_t node_id, std::uint64_t start_true, std::uint64_t end_true) {
    const auto& n = p.call_tree[node_id];
    p.spans.push_back({0, n.name, node_id, n.depth, local(start_true), local(end_true)});
    return static_cast<std::uint32_t>(p.spans.size() - 1);
  }

  std::uint32_t collective(std::uint32_t parent, std::uint64_t start_true, std::uint64_t end_true, std::int64_t seq,
                           const std::string& group = "world", const std::string& op = "allreduce",
                           const std::string& scope = "") {
    const std::uint32_t s = span(node(parent, scope.empty() ? op : scope), start_true, end_true);
    auto text = [&](const char* key, const std::string& v) {
      SpanArg a;
      a.span = s;
      a.key = key;
      a.type = SpanArg::Type::String;
      a.string_value = v;
      p.span_args.push_back(a);
    };
    auto integer = [&](const char* key, std::int64_t v) {
      SpanArg a;
      a.span = s;
      a.key = key;
      a.type = SpanArg::Type::Int;
      a.int_value = v;
      p.span_args.push_back(a);
    };
    text(nnprof::collective_arg::kOperation, op);
    text(nnprof::collective_arg::kGroup, group);
    integer(nnprof::collective_arg::kSequence, seq);
    integer(nnprof::collective_arg::kBytes, 4 << 20);
    integer(nnprof::collective_arg::kGroupSize, p.ranks.front().world_size);
    return s;
  }

  // Statistics from the spans, so that reports of the profile show its scopes.
  Profile finish() {
    std::map<nnprof::StringId, nnprof::ScopeStats> scopes;
    for (const auto& s : p.spans) {
      const std::uint64_t d = s.end_ns - s.start_ns;
      auto& n = p.call_tree[s.node];
      n.time.min_ns = n.time.count == 0 ? d : std::min(n.time.min_ns, d);
      n.time.max_ns = std::max(n.time.max_ns, d);
      ++n.time.count;
      n.time.sum_ns += d;
      n.time.mean_ns = static_cast<double>(n.time.sum_ns) / static_cast<double>(n.time.count);
      n.time.p50_ns = n.time.p95_ns = n.time.p99_ns = n.time.max_ns;
      n.self_ns += d;
      if (n.parent != 0 && n.parent != kNone) p.call_tree[n.parent].self_ns -= d;
      n.thread_count = 1;
      auto& st = scopes[s.name];
      st.name = s.name;
      st.total_ns += d;
      st.time = n.time;
      st.thread_count = 1;
      if (s.depth == 1) p.threads[0].top_level_ns += d;
    }
    for (auto& [name, st] : scopes) {
      for (const auto& n : p.call_tree)
        if (n.name == name) st.self_ns += n.self_ns;
      p.scopes.push_back(st);
    }
    std::ranges::sort(p.scopes, [](const auto& a, const auto& b) { return a.total_ns > b.total_ns; });
    p.threads[0].scopes_recorded = p.spans.size();
    p.completeness.scopes_recorded = p.completeness.spans_kept = p.spans.size();
    p.meta.duration_ns = p.spans.empty() ? 0 : p.spans.back().end_ns + kMs;
    for (const auto& s : p.spans) p.meta.duration_ns = std::max(p.meta.duration_ns, s.end_ns + kMs);
    return p;
  }

  Profile p;

 private:
  nnprof::StringId intern(const std::string& s) {
    for (std::size_t i = 0; i < p.strings.size(); ++i)
      if (p.strings[i] == s) return static_cast<nnprof::StringId>(i);
    p.strings.push_back(s);
    return static_cast<nnprof::StringId>(p.strings.size() - 1);
  }
  ClockAlignment clock_;
};

ClockAlignment aligned(double offset_ns, double drift_ppb, std::int64_t reference_ns, double residual_ns) {
  ClockAlignment c;
  c.aligned = true;
  c.method = "test";
  c.offset_ns = offset_ns;
  c.drift_ppb = drift_ppb;
  c.reference_ns = reference_ns;
  c.residual_ns = residual_ns;
  c.exchanges = 8;
  return c;
}

// A data-parallel job: `steps` steps, each "forward" then an allreduce on every rank, the
// allreduce ending 2 ms after the last rank arrives, the next step starting 100 us later.
// Rank `slow_rank` sleeps `sleep_ns` more in the forward of step `slow_step`. Each rank's
// forward also differs by a jitter of r * 10 us. Ranks 1.. have their own clocks (offset
// and drift) that their alignments undo.
struct Job {
  int world = 4;
  int steps = 5;
  int slow_rank = 2;
  int slow_step = 3;
  std::uint64_t sleep_ns = 50 * kMs;
  std::uint64_t forward_ns = 20 * kMs;
  double residual_ns = 20 * kUs;

  std::vector<Profile> build() const {
    std::vector<RankBuilder> ranks;
    for (int r = 0; r < world; ++r) {
      // Rank 1's session started 3 ms before rank 0's: its times map before rank 0's origin.
      const ClockAlignment clock =
          r == 0 ? ClockAlignment{} : aligned(r == 1 ? 3.0 * kMs : -0.2 * kMs * r, 40'000.0 * r, 5 * kMs, residual_ns);
      ranks.emplace_back(r, world, clock);
    }
    std::uint64_t t = 1 * kMs;
    std::int64_t seq = 0;
    for (int i = 0; i < steps; ++i) {
      std::vector<std::uint64_t> arrival(world);
      for (int r = 0; r < world; ++r)
        arrival[r] = t + forward_ns + static_cast<std::uint64_t>(r) * 10 * kUs +
                     (r == slow_rank && i == slow_step ? sleep_ns : 0);
      const std::uint64_t end = *std::ranges::max_element(arrival) + 2 * kMs;
      for (int r = 0; r < world; ++r) {
        RankBuilder& b = ranks[r];
        const std::uint32_t step = b.node(0, "train_step");
        b.span(step, t, end);
        b.span(b.node(step, "forward"), t, arrival[r]);
        b.collective(step, arrival[r], end, seq);
      }
      ++seq;
      t = end + 100 * kUs;
    }
    std::vector<Profile> out;
    for (RankBuilder& b : ranks) out.push_back(b.finish());
    return out;
  }
};

// The ranks' files: rankN.nnprof in a directory.
class RankFiles {
 public:
  std::vector<std::string> save(const std::vector<Profile>& ranks, const std::string& dir) {
    std::vector<std::string> paths;
    for (const Profile& p : ranks) {
      const std::string path = dir + "/rank" + std::to_string(p.ranks.front().rank) + ".nnprof";
      p.save(path);
      paths.push_back(path);
    }
    return paths;
  }
  void put(const std::string& path, const Profile& p) { p.save(path); }
};

class Distributed : public nnprof::testing::TestDirectory {
 protected:
  Distributed() : TestDirectory("distributed") {}
};

TEST_F(Distributed, MergeMapsEveryRankOntoRankZerosClock) {
  Job job;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  const auto result = nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
  EXPECT_EQ(result.world_size, 4u);
  EXPECT_EQ(result.ranks_merged, 4u);
  EXPECT_EQ(result.spans, 4u * 5u * 3u);
  EXPECT_EQ(result.collectives, 5u);
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();

  const Profile merged = Profile::load(path("job.nnprof"));
  ASSERT_EQ(merged.threads.size(), 4u);
  ASSERT_EQ(merged.spans.size(), 60u);
  // Rank 1's clock runs 3 ms ahead (and drifts 40 ppm from 5 ms): its local 0 maps to
  // -(3 ms + 40e-6 x (0 - 5 ms)) = -2,999,800 ns, the earliest time of the job, which becomes
  // the merged origin; rank 0's first span, at 1 ms on its clock, is that much later.
  std::vector<std::vector<nnprof::Span>> by_rank(4);
  for (const auto& s : merged.spans) by_rank[merged.threads[s.thread].rank].push_back(s);
  const std::uint64_t shift = by_rank[0].front().start_ns - 1 * kMs;
  EXPECT_NEAR(static_cast<double>(shift), 2'999'800.0, 2.0);
  // On the common clock every rank's steps start together (their offsets of -0.6 to +3 ms and
  // drifts of 40 to 120 ppm undone to within rounding, 2 ns), as the job started them.
  for (std::size_t r = 1; r < 4; ++r) {
    ASSERT_EQ(by_rank[r].size(), 15u);
    for (std::size_t i = 0; i < 15; i += 3)
      EXPECT_NEAR(static_cast<double>(by_rank[r][i].start_ns), static_cast<double>(by_rank[0][i].start_ns), 2.0)
          << "rank " << r << " span " << i;
  }
  // Strings re-interned, the call trees merged by path, statistics pooled.
  const auto* step = merged.find_scope("train_step");
  ASSERT_NE(step, nullptr);
  EXPECT_EQ(step->time.count, 20u);
  EXPECT_EQ(merged.call_tree.size(), 4u);  // root, train_step, forward, allreduce
  EXPECT_EQ(merged.completeness.spans_kept, 60u);
  // The collectives' arguments came through, one set per distinct call.
  EXPECT_EQ(merged.span_args.size(), 4u * 5u * 5u);
}

TEST_F(Distributed, RankMadeLateBySleepIsTheStragglerAndOthersWaitTheSleep) {
  Job job;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
  const Profile merged = Profile::load(path("job.nnprof"));
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(merged, {});
  ASSERT_NE(a.step_name, kNone);
  EXPECT_EQ(merged.str(a.step_name), "train_step");
  EXPECT_EQ(a.steps, 5u);
  ASSERT_NE(a.straggler, kNone);
  EXPECT_EQ(merged.ranks[a.straggler].rank, 2);
  // At the allreduce of the slow step every other rank waited the sleep, give or take the
  // jitter between ranks (at most 30 us) and the clocks' residual (20 us): tolerance 100 us.
  const auto slow = std::ranges::find(a.collectives, std::int64_t{3}, &nnprof::CollectiveCall::seq);
  ASSERT_NE(slow, a.collectives.end());
  EXPECT_EQ(merged.ranks[slow->last_rank].rank, 2);
  for (const auto& arrival : slow->arrivals) {
    if (merged.ranks[arrival.rank].rank == 2) {
      EXPECT_EQ(arrival.wait_ns, 0u);
      continue;
    }
    EXPECT_NEAR(static_cast<double>(arrival.wait_ns), static_cast<double>(job.sleep_ns), 100.0 * kUs)
        << "rank " << merged.ranks[arrival.rank].rank;
  }
  // The straggler's own work per step is a fifth of the sleep above the fastest rank's mean
  // (10 ms over 20 ms forwards plus 2 ms allreduce): about +45%.
  const auto& s = a.ranks[a.straggler];
  EXPECT_GT(s.straggler_vs_fastest, 0.3);
  EXPECT_GT(s.straggler_vs_own_best, 0.3);
  for (const auto& r : a.ranks)
    if (r.rank != a.straggler) {
      EXPECT_LT(r.straggler_vs_fastest, 0.05);
    }
  // Who waited for whom: the three others for rank 2, each about the sleep in all.
  ASSERT_FALSE(a.waits.empty());
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(merged.ranks[a.waits[i].waited_for].rank, 2);
    EXPECT_EQ(a.waits[i].operation, "allreduce");
    EXPECT_NEAR(static_cast<double>(a.waits[i].total_ns), static_cast<double>(job.sleep_ns), 100.0 * kUs);
  }
  // The slowest step is the slept one, and its critical path runs through rank 2's forward.
  EXPECT_EQ(a.slowest_step, 3u);
  bool through_sleep = false;
  for (const auto& seg : a.critical_path.segments)
    if (seg.kind == nnprof::RankPathKind::Compute && merged.ranks[seg.rank].rank == 2 &&
        seg.duration_ns() >= job.sleep_ns)
      through_sleep = true;
  EXPECT_TRUE(through_sleep);
}

// A step with a known dependency structure: three ranks, two allreduces.
//   rank 0: fwd [0,10]  c1 [10,35]  bwd [35,50]  c2 [50,82]  opt [82,100]
//   rank 1: fwd [0,30]  c1 [30,35]  bwd [35,40]  c2 [40,82]  opt [82,90]
//   rank 2: fwd [0,20]  c1 [20,35]  bwd [35,80]  c2 [80,82]  opt [82,95]
// Rank 0 ends last (100); c2 waited for rank 2 (arrived 80), whose bwd began at c1's end (35);
// c1 waited for rank 1 (arrived 30). The path: rank 1 fwd [0,30], c1 [30,35] on rank 2,
// rank 2 bwd [35,80], c2 [80,82] on rank 0, rank 0 opt [82,100].
Profile merge_by_hand(const std::vector<Profile>& ranks);

Profile known_dag() {
  struct Plan {
    std::uint64_t fwd_end, bwd_end, step_end;
  };
  const Plan plans[] = {{10, 50, 100}, {30, 40, 90}, {20, 80, 95}};
  std::vector<Profile> ranks;
  for (int r = 0; r < 3; ++r) {
    RankBuilder b(r, 3);
    const auto& plan = plans[r];
    const std::uint32_t step = b.node(0, "step");
    b.span(step, 0, plan.step_end);
    b.span(b.node(step, "fwd"), 0, plan.fwd_end);
    b.collective(step, plan.fwd_end, 35, 0);
    b.span(b.node(step, "bwd"), 35, plan.bwd_end);
    b.collective(step, plan.bwd_end, 82, 1);
    b.span(b.node(step, "opt"), 82, plan.step_end);
    ranks.push_back(b.finish());
  }
  return merge_by_hand(ranks);
}

TEST(DistributedAnalysis, TheStepIsTheRepeatedScopeAroundCollectivesNotTheOneAroundTheLoop) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t main = b.node(0, "main");
    b.span(main, 0, 1000);
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t t = 10 + 300 * static_cast<std::uint64_t>(i);
      const std::uint32_t step = b.node(main, "ProfilerStep#" + std::to_string(i));
      b.span(step, t, t + 250);
      b.collective(step, t + 100 + 10 * static_cast<std::uint64_t>(r), t + 200, i);
    }
    ranks.push_back(b.finish());
  }
  const Profile p = merge_by_hand(ranks);
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_NE(a.step_name, kNone);
  EXPECT_EQ(p.str(a.step_name).rfind("ProfilerStep#", 0), 0u);
  EXPECT_EQ(a.steps, 3u);
  EXPECT_EQ(a.ranks[1].steps[2].start_ns, 610u);
  // Rank 0 waited 10 ns for rank 1 at each step's collective.
  EXPECT_EQ(a.ranks[0].wait_ns, 30u);
  EXPECT_EQ(a.ranks[0].steps[1].wait_ns, 10u);
  // Named explicitly, by the key or by one of the names.
  nnprof::RankAnalysisOptions named;
  named.step = "ProfilerStep";
  EXPECT_EQ(nnprof::analysis::analyze_ranks(p, named).steps, 3u);
  named.step = "main";
  EXPECT_EQ(nnprof::analysis::analyze_ranks(p, named).steps, 1u);
  named.step = "no_such_scope";
  EXPECT_THROW((void)nnprof::analysis::analyze_ranks(p, named), nnprof::Error);
}

Profile merge_by_hand(const std::vector<Profile>& ranks) {
  {
    // Merged by hand: threads are ranks in order, strings shared by building them in one order.
    Profile m = ranks[0];
    m.threads[0].rank = 0;
    for (std::size_t r = 1; r < ranks.size(); ++r) {
      m.ranks.push_back(ranks[r].ranks.front());
      m.threads.push_back(ranks[r].threads.front());
      m.threads.back().id = static_cast<std::uint32_t>(r);
      m.threads.back().rank = static_cast<std::uint32_t>(r);
      const auto first = static_cast<std::uint32_t>(m.spans.size());
      for (auto s : ranks[r].spans) {
        s.thread = static_cast<std::uint32_t>(r);
        m.spans.push_back(s);
      }
      for (auto a : ranks[r].span_args) {
        a.span += first;
        m.span_args.push_back(a);
      }
    }
    return m;
  }
}

TEST(DistributedAnalysis, CrossRankCriticalPathOfAKnownDagIsExact) {
  const Profile p = known_dag();
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_EQ(a.steps, 1u);
  const auto& path = a.critical_path;
  EXPECT_EQ(path.start_ns, 0u);
  EXPECT_EQ(path.end_ns, 100u);
  struct Expect {
    nnprof::RankPathKind kind;
    std::uint32_t rank;
    std::uint64_t start, end;
    const char* name;
  };
  using K = nnprof::RankPathKind;
  const Expect expected[] = {{K::Compute, 1, 0, 30, "fwd"},
                             {K::Collective, 2, 30, 35, "allreduce"},
                             {K::Compute, 2, 35, 80, "bwd"},
                             {K::Collective, 0, 80, 82, "allreduce"},
                             {K::Compute, 0, 82, 100, "opt"}};
  ASSERT_EQ(path.segments.size(), std::size(expected));
  for (std::size_t i = 0; i < std::size(expected); ++i) {
    const auto& s = path.segments[i];
    EXPECT_EQ(s.kind, expected[i].kind) << i;
    EXPECT_EQ(s.rank, expected[i].rank) << i;
    EXPECT_EQ(s.start_ns, expected[i].start) << i;
    EXPECT_EQ(s.end_ns, expected[i].end) << i;
    ASSERT_NE(s.name, kNone) << i;
    EXPECT_EQ(p.str(s.name), expected[i].name) << i;
  }
  EXPECT_EQ(path.compute_ns, 93u);
  EXPECT_EQ(path.collective_ns, 7u);
  // Waits: at c1 ranks 0 and 2 waited 20 and 10 for rank 1; at c2 ranks 0 and 1 waited 30 and 40 for rank 2.
  std::map<std::pair<std::uint32_t, std::uint32_t>, std::uint64_t> waits;
  for (const auto& w : a.waits) waits[{w.waiter, w.waited_for}] = w.total_ns;
  EXPECT_EQ((waits[{0, 1}]), 20u);
  EXPECT_EQ((waits[{2, 1}]), 10u);
  EXPECT_EQ((waits[{0, 2}]), 30u);
  EXPECT_EQ((waits[{1, 2}]), 40u);
  // Rank 2 made the others wait 70 ns, rank 1 30 ns: rank 2 is the straggler.
  EXPECT_EQ(a.straggler, 2u);
  EXPECT_EQ(a.ranks[2].caused_wait_ns, 70u);
  EXPECT_EQ(a.ranks[1].caused_wait_ns, 30u);
}

TEST(DistributedAnalysis, OverlapCountsCommunicationThatRanWhileComputationDid) {
  // One rank: a compute thread busy [0,100]; a communication thread's allreduce [60,140].
  RankBuilder b0(0, 2);
  b0.span(b0.node(0, "compute"), 0, 100);
  Profile p = b0.finish();
  RankBuilder b1(1, 2);
  b1.span(b1.node(0, "compute"), 0, 100);
  Profile q = b1.finish();
  // Rank 0 gets a second thread with the collective.
  p.threads.push_back({1, 6000, "comm", false, 1, 80});
  const std::uint32_t coll = static_cast<std::uint32_t>(p.call_tree.size());
  p.call_tree.push_back({});
  p.call_tree[coll].id = coll;
  p.call_tree[coll].parent = 0;
  p.strings.push_back("allreduce");
  p.call_tree[coll].name = static_cast<nnprof::StringId>(p.strings.size() - 1);
  p.call_tree[coll].depth = 1;
  p.call_tree[0].children.push_back(coll);
  p.spans.push_back({1, p.call_tree[coll].name, coll, 1, 60, 140});
  for (auto [key, text] : {std::pair{"collective", "allreduce"}, std::pair{"group", "world"}}) {
    SpanArg a;
    a.span = 1;
    a.key = key;
    a.string_value = text;
    p.span_args.push_back(a);
  }
  SpanArg seq;
  seq.span = 1;
  seq.key = "seq";
  seq.type = SpanArg::Type::Int;
  p.span_args.push_back(seq);
  // Rank 1 as a second rank of the profile, with no collective.
  p.ranks.push_back(q.ranks.front());
  p.threads.push_back(q.threads.front());
  p.threads.back().id = 2;
  p.threads.back().rank = 1;
  p.spans.push_back({2, p.spans[0].name, p.spans[0].node, 1, 0, 100});
  const auto a = nnprof::analysis::analyze_ranks(p, {});
  EXPECT_EQ(a.ranks[0].communication_ns, 80u);
  EXPECT_EQ(a.ranks[0].computation_ns, 100u);
  EXPECT_EQ(a.ranks[0].overlap_ns, 40u);
  EXPECT_EQ(a.ranks[1].communication_ns, 0u);
}

// ---- nonblocking collectives (MPI_Iallreduce ... MPI_Wait / MPI_Test / MPI_Waitall) ----

// The span of a nonblocking collective's call: the collective arguments plus `nonblocking`.
std::uint32_t nonblocking_call(RankBuilder& b, std::uint32_t parent, std::uint64_t start, std::uint64_t end,
                               std::int64_t seq, const std::string& op = "allreduce") {
  const std::uint32_t s = b.collective(parent, start, end, seq, "world", op);
  SpanArg flag;
  flag.span = s;
  flag.key = nnprof::collective_arg::kNonblocking;
  flag.type = SpanArg::Type::Int;
  flag.int_value = 1;
  b.p.span_args.push_back(flag);
  return s;
}

// The completion span the interposer records inside the wait or test that completed one.
void completion(RankBuilder& b, std::uint32_t wait_node, std::uint64_t at, std::int64_t seq, std::int64_t blocked_ns) {
  const std::uint32_t s = b.span(b.node(wait_node, "MPI_Iallreduce completed"), at, at);
  SpanArg group;
  group.span = s;
  group.key = nnprof::collective_arg::kCompletedGroup;
  group.string_value = "world";
  b.p.span_args.push_back(group);
  for (const auto& [key, value] : {std::pair{nnprof::collective_arg::kCompletedSequence, seq},
                                   std::pair{nnprof::collective_arg::kBlocked, blocked_ns}}) {
    SpanArg a;
    a.span = s;
    a.key = key;
    a.type = SpanArg::Type::Int;
    a.int_value = value;
    b.p.span_args.push_back(a);
  }
}

// Three ranks, one MPI_Iallreduce. Rank 0 is late: it computes [0,150], calls at 150 and waits
// [151,160] (completed at 159, blocked 8). Rank 1 calls at 10, computes [11,61] beside it and
// waits [61,160] (completed at 159, blocked 98). Rank 2 calls at 20, computes [21,101], then polls
// with MPI_Test until 158: only the successful test is a span ([158,159], completed at 158), the
// polls' time is in its blocked 57. Waits: rank 1 blocked from 61, released at 150: 89 (not the
// 140 between its arrival and rank 0's, 50 of which it computed); rank 2 from 101: 49.
Profile nonblocking_job() {
  std::vector<Profile> ranks;
  for (int r = 0; r < 3; ++r) {
    RankBuilder b(r, 3);
    const std::uint32_t step = b.node(0, "step");
    b.span(step, 0, r == 1 ? 210 : 200);
    if (r == 0) {
      b.span(b.node(step, "late_work"), 0, 150);
      nonblocking_call(b, step, 150, 151, 0);
      const std::uint32_t wait = b.node(step, "MPI_Wait");
      b.span(wait, 151, 160);
      completion(b, wait, 159, 0, 8);
    } else if (r == 1) {
      nonblocking_call(b, step, 10, 11, 0);
      b.span(b.node(step, "overlapped"), 11, 61);
      const std::uint32_t wait = b.node(step, "MPI_Wait");
      b.span(wait, 61, 160);
      completion(b, wait, 159, 0, 98);
    } else {
      nonblocking_call(b, step, 20, 21, 0);
      b.span(b.node(step, "overlapped"), 21, 101);
      const std::uint32_t test = b.node(step, "MPI_Test");
      b.span(test, 158, 159);
      completion(b, test, 158, 0, 57);
    }
    b.span(b.node(step, "opt"), 160, r == 1 ? 210 : 200);
    ranks.push_back(b.finish());
  }
  return merge_by_hand(ranks);
}

TEST(DistributedAnalysis, ANonblockingCollectiveWaitsOnlyWhileBlockedInItsWaitOrTest) {
  const Profile p = nonblocking_job();
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_EQ(a.collectives.size(), 1u);
  const nnprof::CollectiveCall& call = a.collectives[0];
  EXPECT_TRUE(call.nonblocking);
  ASSERT_EQ(call.arrivals.size(), 3u);
  EXPECT_EQ(call.last_rank, 0u);
  EXPECT_EQ(call.first_arrival_ns, 10u);
  EXPECT_EQ(call.last_arrival_ns, 150u);
  const std::uint64_t ends[] = {159, 159, 158}, blocked[] = {8, 98, 57}, waits[] = {0, 89, 49};
  for (std::uint32_t r = 0; r < 3; ++r) {
    const nnprof::CollectiveArrival& arrival = call.arrivals[r];
    EXPECT_TRUE(arrival.nonblocking) << r;
    EXPECT_EQ(arrival.end_ns, ends[r]) << r;
    EXPECT_EQ(arrival.blocked_ns, blocked[r]) << r;
    EXPECT_EQ(arrival.wait_ns, waits[r]) << r;
    EXPECT_EQ(a.ranks[r].wait_ns, waits[r]) << r;
  }
  EXPECT_EQ(a.straggler, 0u);
  EXPECT_EQ(a.ranks[0].caused_wait_ns, 138u);
  EXPECT_EQ(a.ranks[1].steps[0].wait_ns, 89u);
  EXPECT_EQ(a.ranks[1].steps[0].busy_ns(), 210u - 89u);
  // Rank 1: in flight [10,159] and its wait [61,160] are communication (150); computation is
  // what it did beside it, [11,61], and after, [160,210] (100); they overlap by 50.
  EXPECT_EQ(a.ranks[1].communication_ns, 150u);
  EXPECT_EQ(a.ranks[1].computation_ns, 100u);
  EXPECT_EQ(a.ranks[1].overlap_ns, 50u);
  // The step ended last on rank 1 (210); its allreduce was held by rank 0's arrival at 150,
  // so the path goes through rank 0's late work, and rank 1's overlapped work is not on it.
  const auto& path = a.critical_path;
  ASSERT_EQ(path.segments.size(), 3u);
  using K = nnprof::RankPathKind;
  EXPECT_EQ(path.segments[0].kind, K::Compute);
  EXPECT_EQ(path.segments[0].rank, 0u);
  EXPECT_EQ(path.segments[0].start_ns, 0u);
  EXPECT_EQ(path.segments[0].end_ns, 150u);
  EXPECT_EQ(p.str(path.segments[0].name), "late_work");
  EXPECT_EQ(path.segments[1].kind, K::Collective);
  EXPECT_EQ(path.segments[1].rank, 1u);
  EXPECT_EQ(path.segments[1].start_ns, 150u);
  EXPECT_EQ(path.segments[1].end_ns, 159u);
  EXPECT_EQ(path.segments[2].kind, K::Compute);
  EXPECT_EQ(path.segments[2].rank, 1u);
  EXPECT_EQ(path.segments[2].start_ns, 159u);
  EXPECT_EQ(path.segments[2].end_ns, 210u);
  EXPECT_EQ(p.str(path.segments[2].name), "opt");
  EXPECT_EQ(path.compute_ns, 201u);
  EXPECT_EQ(path.collective_ns, 9u);
}

// Two ranks. Rank 0 starts an allreduce (seq 0) at 0 and a broadcast (seq 1) at 2, computes
// [3,50] and waits for both in one MPI_Waitall [50,150] (both completed at 149, blocked 99
// each). Rank 1 arrives at the allreduce at 60 and at the broadcast at 140. Rank 0 was blocked
// [50,140] waiting for rank 1: [50,60] for the allreduce, [60,140] for the broadcast, 90 in all,
// not 99 twice. A barrier whose completion no rank saw (seq 2) ends at its call's end and waits 0.
TEST(DistributedAnalysis, AWaitallOverSeveralCollectivesCountsEachMomentOnce) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t step = b.node(0, "step");
    b.span(step, 0, 200);
    const std::uint32_t waitall = b.node(step, "MPI_Waitall");
    if (r == 0) {
      nonblocking_call(b, step, 0, 1, 0);
      nonblocking_call(b, step, 2, 3, 1, "broadcast");
      b.span(b.node(step, "overlapped"), 3, 50);
      b.span(waitall, 50, 150);
      completion(b, waitall, 149, 0, 99);
      completion(b, waitall, 149, 1, 99);
      nonblocking_call(b, step, 160, 161, 2, "barrier");
    } else {
      b.span(b.node(step, "overlapped"), 0, 60);
      nonblocking_call(b, step, 60, 61, 0);
      b.span(b.node(step, "more"), 61, 140);
      nonblocking_call(b, step, 140, 141, 1, "broadcast");
      b.span(waitall, 141, 150);
      completion(b, waitall, 149, 0, 8);
      completion(b, waitall, 149, 1, 8);
      nonblocking_call(b, step, 170, 171, 2, "barrier");
    }
    ranks.push_back(b.finish());
  }
  const Profile p = merge_by_hand(ranks);
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_EQ(a.collectives.size(), 3u);
  std::map<std::string, const nnprof::CollectiveCall*> by_op;
  for (const auto& c : a.collectives) by_op[c.operation] = &c;
  ASSERT_EQ(by_op.size(), 3u);
  EXPECT_EQ(by_op["allreduce"]->arrivals[0].wait_ns, 10u);
  EXPECT_EQ(by_op["broadcast"]->arrivals[0].wait_ns, 80u);
  EXPECT_EQ(by_op["allreduce"]->arrivals[1].wait_ns, 0u);
  EXPECT_EQ(by_op["broadcast"]->arrivals[1].wait_ns, 0u);
  EXPECT_EQ(by_op["broadcast"]->arrivals[0].end_ns, 149u);
  EXPECT_EQ(a.ranks[0].wait_ns, 90u);
  EXPECT_EQ(a.ranks[0].steps[0].wait_ns, 90u);
  EXPECT_EQ(a.ranks[1].caused_wait_ns, 90u);
  EXPECT_EQ(a.straggler, 1u);
  const nnprof::CollectiveCall& barrier = *by_op["barrier"];
  EXPECT_TRUE(barrier.nonblocking);
  EXPECT_EQ(barrier.arrivals[0].end_ns, 161u);
  EXPECT_EQ(barrier.arrivals[0].blocked_ns, 0u);
  EXPECT_EQ(barrier.arrivals[0].wait_ns, 0u);
  std::map<std::pair<std::uint32_t, std::string>, std::uint64_t> waits;
  for (const auto& w : a.waits) waits[{w.waited_for, w.operation}] += w.total_ns;
  EXPECT_EQ((waits[{1, "allreduce"}]), 10u);
  EXPECT_EQ((waits[{1, "broadcast"}]), 80u);
}

// A collective started near the end of one step and waited for in the next (two ranks, steps
// [0,100] and [100,200]): rank 0 calls at 90 and waits [110,150] (completed at 149, blocked 39);
// rank 1 calls at 140. Rank 0 waited 30 (110 to 140), in step 1, where it was blocked, not in
// step 0, where it called.
TEST(DistributedAnalysis, ANonblockingWaitCountsInTheStepItWasBlockedIn) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t step = b.node(0, "step");
    const std::uint32_t wait = b.node(step, "MPI_Wait");
    b.span(step, 0, 100);
    if (r == 0) nonblocking_call(b, step, 90, 91, 0);
    b.span(step, 100, 200);
    if (r == 0) {
      b.span(wait, 110, 150);
      completion(b, wait, 149, 0, 39);
    } else {
      nonblocking_call(b, step, 140, 141, 0);
      b.span(wait, 141, 150);
      completion(b, wait, 149, 0, 8);
    }
    ranks.push_back(b.finish());
  }
  const Profile p = merge_by_hand(ranks);
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_EQ(a.steps, 2u);
  ASSERT_EQ(a.collectives.size(), 1u);
  EXPECT_EQ(a.collectives[0].arrivals[0].wait_ns, 30u);
  EXPECT_EQ(a.ranks[0].steps[0].wait_ns, 0u);
  EXPECT_EQ(a.ranks[0].steps[1].wait_ns, 30u);
  EXPECT_EQ(a.straggler, 1u);
}

// Adds to a merged profile each rank's gloo worker thread with its work records
// ("gloo:all_reduce"): works[r] are rank r's (start, end) pairs, in start order.
void add_gloo_works(Profile& p, const std::vector<std::vector<std::pair<std::uint64_t, std::uint64_t>>>& works) {
  const auto name = static_cast<nnprof::StringId>(p.strings.size());
  p.strings.push_back("gloo:all_reduce");
  const auto node = static_cast<std::uint32_t>(p.call_tree.size());
  p.call_tree.emplace_back();
  p.call_tree.back().id = node;
  p.call_tree.back().parent = 0;
  p.call_tree.back().name = name;
  p.call_tree.back().depth = 1;
  p.call_tree[0].children.push_back(node);
  for (std::uint32_t r = 0; r < works.size(); ++r) {
    const auto thread = static_cast<std::uint32_t>(p.threads.size());
    p.threads.push_back({thread, 6000 + static_cast<std::int64_t>(r), "gloo", false, 0, 0});
    p.threads.back().rank = r;
    for (const auto& [start, end] : works[r]) p.spans.push_back({thread, name, node, 1, start, end});
  }
}

// torch.distributed with gloo: the c10d operator's span covers only the enqueue of the work;
// the collective runs as gloo's own record on a worker thread and has ended when that ends.
// Rank 0 enqueues at 100 and its work waits for rank 1, which arrives at 250; both works end at
// 300. Without the pairing rank 0's collective would end at 110, before rank 1 arrived, and its
// wait in work.wait() would be computation on the critical path.
TEST(DistributedAnalysis, ATorchCollectiveEndsWhenItsBackendsWorkEnds) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t step = b.node(0, "step");
    b.span(step, 0, r == 0 ? 400 : 380);
    const std::uint32_t forward = b.node(step, "forward");  // on both, so that names and nodes agree
    if (r == 1) b.span(forward, 0, 250);
    const std::uint64_t enqueue = r == 0 ? 100 : 250;
    b.collective(step, enqueue, enqueue + 10, 0, "gloo-2#0", "allreduce", "c10d::allreduce_");
    ranks.push_back(b.finish());
  }
  Profile p = merge_by_hand(ranks);
  add_gloo_works(p, {{{105, 300}}, {{252, 300}}});
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  ASSERT_EQ(a.collectives.size(), 1u);
  const auto& arrivals = a.collectives[0].arrivals;
  ASSERT_EQ(arrivals.size(), 2u);
  EXPECT_EQ(arrivals[0].end_ns, 300u);
  EXPECT_EQ(arrivals[1].end_ns, 300u);
  EXPECT_EQ(arrivals[0].wait_ns, 150u);  // arrivals decide the wait, as before
  EXPECT_EQ(a.straggler, 1u);
  // The worker's record is communication: rank 0 communicated from 100 to 300.
  EXPECT_GE(a.ranks[0].communication_ns, 195u);
  const auto& path = a.critical_path;
  ASSERT_EQ(path.segments.size(), 3u);
  using K = nnprof::RankPathKind;
  EXPECT_EQ(std::tie(path.segments[0].kind, path.segments[0].rank, path.segments[0].start_ns, path.segments[0].end_ns),
            std::make_tuple(K::Compute, 1u, std::uint64_t{0}, std::uint64_t{250}));
  EXPECT_EQ(p.str(path.segments[0].name), "forward");
  EXPECT_EQ(std::tie(path.segments[1].kind, path.segments[1].rank, path.segments[1].start_ns, path.segments[1].end_ns),
            std::make_tuple(K::Collective, 0u, std::uint64_t{250}, std::uint64_t{300}));
  EXPECT_EQ(std::tie(path.segments[2].kind, path.segments[2].rank, path.segments[2].start_ns, path.segments[2].end_ns),
            std::make_tuple(K::Compute, 0u, std::uint64_t{300}, std::uint64_t{400}));
}

// Communication is never the step: gloo's work records and the c10d operators repeat on every
// rank (in torch_gloo_ranks.py, a script with no scope of its own, gloo:all_reduce was chosen).
TEST(DistributedAnalysis, CommunicationIsNeverChosenAsTheStep) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t load = b.node(0, "load_batch");
    b.node(0, "c10d::allreduce_");  // the same nodes in the same order on both ranks
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t t = 1000 * static_cast<std::uint64_t>(i);
      b.span(load, t, t + 50);
      b.collective(0, t + 100, t + 110, i, "gloo-2#0", "allreduce", "c10d::allreduce_");
    }
    ranks.push_back(b.finish());
  }
  Profile p = merge_by_hand(ranks);
  const std::vector<std::pair<std::uint64_t, std::uint64_t>> works = {{105, 300}, {1105, 1300}, {2105, 2300}};
  add_gloo_works(p, {works, works});
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(p, {});
  // gloo:all_reduce repeats on every rank with the most time (3 x 195 ns against 3 x 50 ns),
  // and neither encloses a collective: the scope of the program's own is the step.
  ASSERT_NE(a.step_name, kNone);
  EXPECT_EQ(p.str(a.step_name), "load_batch");
  EXPECT_EQ(a.steps, 3u);
  EXPECT_EQ(a.collectives.size(), 3u);
}

// A scope called once per rank that encloses no collective (torch_gloo_ranks.py's aten::ones
// before its loop) is no step either: each rank's whole run is one.
TEST(DistributedAnalysis, AScopeThatNeitherRepeatsNorEnclosesACollectiveIsNoStep) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 2; ++r) {
    RankBuilder b(r, 2);
    const std::uint32_t setup = b.node(0, "aten::ones");
    b.node(0, "c10d::allreduce_");
    b.span(setup, 0, 500);
    for (int i = 0; i < 3; ++i) {
      const std::uint64_t t = 1000 * static_cast<std::uint64_t>(i + 1);
      b.collective(0, t + 100, t + 110, i, "gloo-2#0", "allreduce", "c10d::allreduce_");
    }
    ranks.push_back(b.finish());
  }
  const nnprof::RankAnalysis a = nnprof::analysis::analyze_ranks(merge_by_hand(ranks), {});
  EXPECT_EQ(a.step_name, kNone);
  EXPECT_EQ(a.steps, 1u);
  EXPECT_EQ(a.collectives.size(), 3u);
}

// A torch.distributed job of two ranks: four allreduces, rank 0 and rank 1 last in turn by
// `skew`, each ending on both ranks 50 us after the last enqueue, on the backend's worker thread
// (`backend`:all_reduce; none when `backend` is empty). Rank 1's clock runs exactly 3 ms ahead
// (`true_clock`) and is recorded as `recorded_clock`. No rank leaves a gloo allreduce before the
// other entered it, so with skew 2 ms the merge can narrow rank 1's offset to 3 ms ± 50 us.
struct TorchJob {
  std::string backend = "gloo";
  std::uint64_t skew = 2 * kMs;
  ClockAlignment true_clock = aligned(3.0 * kMs, 0.0, 0, 0.0);
  ClockAlignment recorded_clock = [] {
    ClockAlignment c = aligned(3.15 * kMs, 0.0, 0, 0.4 * kMs);  // round trips: 3.15 ms ± 0.4 ms
    c.method = "tcp-rendezvous";
    return c;
  }();

  std::vector<Profile> build() const {
    std::vector<Profile> ranks;
    for (int r = 0; r < 2; ++r) {
      RankBuilder b(r, 2, r == 0 ? ClockAlignment{} : true_clock);
      const std::uint32_t step = b.node(0, "step");
      std::vector<std::pair<std::uint64_t, std::uint64_t>> works;  // true start and end
      for (int i = 0; i < 4; ++i) {
        const std::uint64_t t = (1 + 10 * static_cast<std::uint64_t>(i)) * kMs;
        const bool rank0_last = i % 2 == 0;
        const std::uint64_t enqueue = t + (r == (rank0_last ? 0 : 1) ? skew : 0);
        const std::uint64_t end = t + skew + 50 * kUs;
        b.span(step, t - 100 * kUs, end + 100 * kUs);
        b.collective(step, enqueue, enqueue + 10 * kUs, i, "gloo-2#0", "allreduce", "c10d::allreduce_");
        works.emplace_back(enqueue + 5 * kUs, end);
      }
      if (!backend.empty()) {
        b.p.threads.push_back({1, 6000 + r, backend, false, 0, 0});
        const std::uint32_t work = b.node(0, backend + ":all_reduce");
        for (const auto& [start, end] : works)
          b.p.spans.push_back({1, b.p.call_tree[work].name, work, 1, b.local(start), b.local(end)});
      }
      Profile p = b.finish();
      if (r == 1) p.ranks.front().clock = recorded_clock;
      ranks.push_back(std::move(p));
    }
    return ranks;
  }
};

// The c10d enqueues of each allreduce, by rank, on the merged clock.
std::vector<std::vector<std::uint64_t>> enqueues(const Profile& merged) {
  std::vector<std::vector<std::uint64_t>> out(merged.ranks.size());
  for (const auto& s : merged.spans)
    if (merged.str(s.name) == "c10d::allreduce_") out[merged.threads[s.thread].rank].push_back(s.start_ns);
  return out;
}

TEST_F(Distributed, TorchCollectivesNarrowTheRoundTripsClockAtTheMerge) {
  RankFiles files;
  const auto result = nnprof::io::merge_rank_profiles(files.save(TorchJob{}.build(), dir_.string()), path("job.nnprof"), {});
  EXPECT_NEAR(result.clock_residual_ns, 50.0 * kUs, 1.0);
  EXPECT_TRUE(result.warnings.empty()) << result.warnings.front();
  const Profile merged = Profile::load(path("job.nnprof"));
  ASSERT_EQ(merged.ranks.size(), 2u);
  const ClockAlignment& clock = merged.ranks[1].clock;
  EXPECT_EQ(clock.method, "tcp-rendezvous+collectives");
  // Rank 0 last: the offset is at least 3 ms - 50 us; rank 1 last: at most 3 ms + 50 us.
  EXPECT_NEAR(clock.residual_ns, 50.0 * kUs, 1.0);
  EXPECT_NEAR(clock.offset_ns, 3.0 * kMs, 1.0);
  // On the merged clock rank 1's enqueues are where the job made them, not 150 us early as the
  // round trips alone would put them.
  const auto at = enqueues(merged);
  ASSERT_EQ(at[0].size(), 4u);
  ASSERT_EQ(at[1].size(), 4u);
  for (int i = 0; i < 4; ++i) {
    const double true_gap = i % 2 == 0 ? -2.0 * kMs : 2.0 * kMs;  // rank 1's enqueue minus rank 0's
    EXPECT_NEAR(static_cast<double>(at[1][i]) - static_cast<double>(at[0][i]), true_gap, 2.0) << i;
  }
}

// What proves nothing narrows nothing: c10d spans alone end at the enqueue (with simultaneous
// enqueues their ends would give a consistent and narrower, but false, window), and NCCL's work
// records end when the kernel is enqueued on the GPU.
TEST_F(Distributed, TorchCollectivesWithoutGlooWorksNarrowNothing) {
  TorchJob no_works;
  no_works.backend = "";
  no_works.skew = 0;
  TorchJob nccl;
  nccl.backend = "nccl";
  nnprof::RankMergeOptions options;
  options.allow_clock_residual = true;  // 0.4 ms kept, more than the waits judged: refused otherwise
  for (const TorchJob& job : {no_works, nccl}) {
    RankFiles files;
    const auto result = nnprof::io::merge_rank_profiles(files.save(job.build(), dir_.string()), path("job.nnprof"), options);
    EXPECT_EQ(result.clock_residual_ns, 0.4 * kMs) << job.backend;
    const Profile merged = Profile::load(path("job.nnprof"));
    EXPECT_EQ(merged.ranks[1].clock.method, "tcp-rendezvous") << job.backend;
    EXPECT_EQ(merged.ranks[1].clock.offset_ns, 3.15 * kMs) << job.backend;
  }
}

// A rank on another host without an alignment is placed by the wall clocks, here 50 ms off:
// outside the ±10 ms they are assumed to keep. Its gloo collectives with rank 0 still place it
// within 50 us of the truth, and the warning says so.
TEST_F(Distributed, TorchCollectivesPlaceARankTheWallClocksPutFarOff) {
  TorchJob job;
  job.true_clock = ClockAlignment{};  // rank 1's times are rank 0's: offset 0
  job.recorded_clock = ClockAlignment{};
  std::vector<Profile> ranks = job.build();
  ranks[1].meta.hostname = "node9";
  ranks[1].meta.clock.unix_origin_ns = ranks[0].meta.clock.unix_origin_ns + 50 * static_cast<std::int64_t>(kMs);
  RankFiles files;
  const auto result = nnprof::io::merge_rank_profiles(files.save(ranks, dir_.string()), path("job.nnprof"), {});
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("place it within ±50.0 µs"), std::string::npos) << result.warnings[0];
  const Profile merged = Profile::load(path("job.nnprof"));
  EXPECT_EQ(merged.ranks[1].clock.method, "merge: session start on the wall clock+collectives");
  EXPECT_NEAR(merged.ranks[1].clock.offset_ns, 0.0, 1.0);
  EXPECT_NEAR(merged.ranks[1].clock.residual_ns, 50.0 * kUs, 1.0);
}

// Round trips that put rank 1's offset at 3.6 ms ± 0.1 ms, where its collectives prove 3 ms ±
// 50 us: the placement is kept (which of the two is wrong cannot be told) and the merge warns.
TEST_F(Distributed, TorchCollectivesThatContradictTheRoundTripsAreWarnedAbout) {
  TorchJob job;
  job.recorded_clock = aligned(3.6 * kMs, 0.0, 0, 0.1 * kMs);
  job.recorded_clock.method = "tcp-rendezvous";
  RankFiles files;
  const auto result = nnprof::io::merge_rank_profiles(files.save(job.build(), dir_.string()), path("job.nnprof"), {});
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("put its offset in [2950000, 3050000] ns, outside"), std::string::npos)
      << result.warnings[0];
  const Profile merged = Profile::load(path("job.nnprof"));
  EXPECT_EQ(merged.ranks[1].clock.offset_ns, 3.6 * kMs);
}

// Ranks without a clock alignment are placed by their sessions' starts: exactly by
// CLOCK_MONOTONIC on rank 0's host, by the wall clocks (with a stated 10 ms residual and a
// warning) on another host.
TEST_F(Distributed, RanksWithoutAlignmentArePlacedBySessionStarts) {
  std::vector<Profile> ranks;
  for (int r = 0; r < 3; ++r) {
    RankBuilder b(r, 3);
    b.p.meta.hostname = r < 2 ? "node0" : "node9";
    b.p.meta.clock.monotonic_origin_ns = 1'000 * kMs + static_cast<std::uint64_t>(r) * 5 * kMs;
    b.p.meta.clock.unix_origin_ns = 7'000'000 * std::int64_t{kMs} + r * 7 * std::int64_t{kMs};
    const std::uint32_t step = b.node(0, "step");
    b.span(step, 10 * kMs, 100 * kMs);
    b.collective(step, 20 * kMs, 90 * kMs, 0);
    ranks.push_back(b.finish());
  }
  RankFiles files;
  auto paths = files.save(ranks, dir_.string());
  // Rank 0's file sorts last: the unaligned ranks wait for it.
  std::filesystem::rename(paths[0], path("z-rank0.nnprof"));
  files.put(path("z-rank0.nnprof"), ranks[0]);
  paths[0] = path("z-rank0.nnprof");
  // node9's residual is taken as 10 ms; the one collective's arrivals spread 14 ms: judged.
  const auto result = nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
  ASSERT_FALSE(result.warnings.empty());
  EXPECT_NE(result.warnings.front().find("has no clock alignment"), std::string::npos) << result.warnings.front();
  EXPECT_EQ(result.clock_residual_ns, 10.0 * kMs);
  Profile merged = Profile::load(path("job.nnprof"));
  ASSERT_EQ(merged.threads.size(), 3u);
  EXPECT_EQ(merged.threads[0].os_tid, 5000);  // rank 0 came first after all
  std::vector<std::uint64_t> first(3, ~0ull);
  for (const auto& s : merged.spans) {
    auto& f = first[merged.threads[s.thread].rank];
    f = std::min(f, s.start_ns);
  }
  // Rank 1's session began 5 ms after rank 0's on the same host, rank 2's 14 ms after by the wall clock.
  EXPECT_EQ(first[0], 10 * kMs);
  EXPECT_EQ(first[1], 15 * kMs);
  EXPECT_EQ(first[2], 24 * kMs);
}

TEST(DistributedMerge, InputsAreReadInNaturalOrder) {
  EXPECT_EQ(nnprof::io::natural_order({"run/rank10.nnprof", "run/rank2.nnprof", "run/rank0.nnprof", "run/rank1.nnprof"}),
            (std::vector<std::string>{"run/rank0.nnprof", "run/rank1.nnprof", "run/rank2.nnprof", "run/rank10.nnprof"}));
  EXPECT_EQ(nnprof::io::natural_order({"r-007.nnprof", "r-08.nnprof", "r-7a.nnprof"}),
            (std::vector<std::string>{"r-007.nnprof", "r-7a.nnprof", "r-08.nnprof"}));
}

TEST_F(Distributed, RefusesWhatIsNotOneJobsRanks) {
  Job job;
  job.world = 3;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  const auto merge = [&](const std::vector<std::string>& in, nnprof::RankMergeOptions o = {}) {
    return nnprof::io::merge_rank_profiles(in, path("job.nnprof"), o);
  };
  const auto message = [&](const std::vector<std::string>& in, nnprof::RankMergeOptions o = {}) -> std::string {
    try {
      merge(in, o);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "";
  };
  // A profile that is no rank.
  RankBuilder plain(0, 1);
  plain.span(plain.node(0, "x"), 0, 10);
  Profile not_rank = plain.finish();
  not_rank.ranks.clear();
  files.put(path("plain.nnprof"), not_rank);
  EXPECT_NE(message({paths[0], path("plain.nnprof")}).find("is not the profile of a rank"), std::string::npos);
  // The same rank twice.
  EXPECT_NE(message({paths[0], paths[1], paths[1]}).find("rank 1 appears twice"), std::string::npos);
  // A rank of another job size.
  Job other;
  other.world = 5;
  files.put(path("other.nnprof"), other.build()[3]);
  EXPECT_NE(message({paths[0], paths[1], path("other.nnprof")}).find("merge the ranks of one job at a time"),
            std::string::npos);
  // A missing rank: refused, or merged with a warning when allowed.
  EXPECT_NE(message({paths[0], paths[2]}).find("(rank 1)"), std::string::npos);
  nnprof::RankMergeOptions allow;
  allow.allow_missing_ranks = true;
  const auto partial = merge({paths[0], paths[2]}, allow);
  EXPECT_EQ(partial.missing_ranks, std::vector<std::int32_t>{1});
  ASSERT_FALSE(partial.warnings.empty());
}

TEST_F(Distributed, RefusesClocksWhoseResidualExceedsEveryWaitJudged) {
  Job job;
  job.world = 2;
  job.sleep_ns = 0;
  job.residual_ns = 5 * kMs;  // arrivals differ by 10 us: every wait is below the residual
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  try {
    nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
    FAIL() << "merged clocks 5 ms apart to judge 10 us waits";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the largest wait"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(path("job.nnprof")));  // nothing written
  nnprof::RankMergeOptions allow;
  allow.allow_clock_residual = true;
  const auto r = nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), allow);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_NE(r.warnings.front().find("could be clock error"), std::string::npos);
  // A residual between the median and the largest wait: merged, with a loud warning.
  Job some;
  some.world = 2;
  some.residual_ns = 20 * kUs;
  some.slow_rank = 1;
  some.sleep_ns = 30 * kMs;  // one wait of 30 ms, the others 10 us
  RankFiles files2;
  std::filesystem::create_directories(path("b"));
  const auto paths2 = files2.save(some.build(), path("b"));
  const auto warned = nnprof::io::merge_rank_profiles(paths2, path("b/job.nnprof"), {});
  ASSERT_EQ(warned.warnings.size(), 1u);
  EXPECT_NE(warned.warnings.front().find("more than the median wait"), std::string::npos);
}

TEST_F(Distributed, ChromeTraceHasAProcessPerRankOnTheCommonClock) {
  Job job;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
  const Profile merged = Profile::load(path("job.nnprof"));
  std::ostringstream out;
  nnprof::io::write_chrome_trace(merged, out);
  const auto trace = nlohmann::json::parse(out.str());
  std::map<int, std::string> names;
  std::map<int, std::vector<double>> allreduce_ts;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "process_name") names[e["pid"].get<int>()] = e["args"]["name"];
    if (e["ph"] == "X" && e["name"] == "allreduce") allreduce_ts[e["pid"].get<int>()].push_back(e["ts"].get<double>());
  }
  ASSERT_EQ(names.size(), 4u);
  EXPECT_EQ(names[0], "rank 0 (node0)");
  EXPECT_EQ(names[3], "rank 3 (node1)");
  // On the common clock each rank's 4th allreduce starts (r * 10 us of jitter apart) at the
  // same time, except rank 2's, 50 ms later; on the ranks' own clocks they were ms apart.
  ASSERT_EQ(allreduce_ts.size(), 4u);
  for (int r : {1, 3}) EXPECT_NEAR(allreduce_ts[r][1] - allreduce_ts[0][1], r * 10.0, 0.01) << r;
  EXPECT_NEAR(allreduce_ts[2][3] - allreduce_ts[0][3], 50'000.0 + 20.0, 0.01);
}

TEST_F(Distributed, MergedProfileLoadsAndEveryReportReadsIt) {
  Job job;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  const auto paths = files.save(inputs, dir_.string());
  nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
  const CliRun report = run_cli("report " + path("job.nnprof") + " -o " + path("job.txt"));
  EXPECT_EQ(report.status, 0) << report.output;
  const CliRun json = run_cli("report " + path("job.nnprof") + " -o " + path("job.json"));
  EXPECT_EQ(json.status, 0) << json.output;
  // With the ranks in memory, the report's Ranks section and the JSON's "ranks" say the same.
  const Profile merged = Profile::load(path("job.nnprof"));
  std::ostringstream out;
  nnprof::io::write_json_report(merged, out);
  const auto j = nlohmann::json::parse(out.str());
  ASSERT_TRUE(j.contains("ranks"));
  EXPECT_EQ(j["ranks"]["straggler"], 2);
  EXPECT_EQ(j["ranks"]["world_size"], 4);
  EXPECT_EQ(j["ranks"]["ranks"].size(), 4u);
  EXPECT_EQ(j["ranks"]["collectives"].size(), 5u);
  EXPECT_EQ(j["threads"][2]["rank"], 2);
  const std::string text = nnprof::Report(merged).text();
  EXPECT_NE(text.find("Ranks"), std::string::npos);
  EXPECT_NE(text.find("Straggler"), std::string::npos);
  EXPECT_NE(text.find("Critical path of the slowest step (step 3)"), std::string::npos);
  if (std::getenv("NNPROF_TEST_PRINT_RANKS") != nullptr) std::fputs(text.c_str(), stdout);
  // HTML and Markdown render the same section.
  nnprof::Report(merged).export_to(path("job.html"));
  nnprof::Report(merged).export_to(path("job.md"));
  for (const char* name : {"job.html", "job.md"}) {
    std::ifstream in(path(name));
    const std::string body((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(body.find("Who waited for whom"), std::string::npos) << name;
  }
}

TEST_F(Distributed, CliMergesRanks) {
  Job job;
  const std::vector<Profile> inputs = job.build();
  RankFiles files;
  auto paths = files.save(inputs, dir_.string());
  std::string args;
  for (auto it = paths.rbegin(); it != paths.rend(); ++it) args += " " + *it;  // order does not matter
  const CliRun merge = run_cli("merge" + args + " -o " + path("job.nnprof"));
  ASSERT_EQ(merge.status, 0) << merge.output;
  EXPECT_NE(merge.output.find("merged 4 of 4 ranks"), std::string::npos) << merge.output;
  const CliRun report = run_cli("report " + path("job.nnprof"));
  EXPECT_EQ(report.status, 0) << report.output;
  EXPECT_NE(report.output.find("Straggler:"), std::string::npos) << report.output;
  EXPECT_NE(report.output.find("rank 2 (node1): the others waited 150 ms"), std::string::npos) << report.output;
  const CliRun trace = run_cli("report " + path("job.nnprof") + " -o " + path("job.trace.json"));
  EXPECT_EQ(trace.status, 0) << trace.output;
  const Profile merged = Profile::load(path("job.nnprof"));
  ASSERT_EQ(merged.ranks.size(), 4u);
  EXPECT_EQ(merged.threads[3].rank, 3u);
  const CliRun missing = run_cli("merge " + paths[0] + " " + paths[1] + " -o " + path("part.nnprof"));
  EXPECT_EQ(missing.status, 2) << missing.output;
  EXPECT_NE(missing.output.find("--allow-missing-ranks"), std::string::npos) << missing.output;
}

// 64 ranks of 100,000 spans each (every 10th a collective with its arguments), merged in a
// child process whose peak RSS is read with getrusage: the merge holds one rank at a time, so
// its peak stays under a bound that loading every rank at once would pass.
// Sanitizer builds multiply memory and time, so they merge fewer ranks, in process, and assert
// what was merged rather than how much memory it took.
#if defined(NNPROF_SANITIZE_ADDRESS) || defined(NNPROF_SANITIZE_THREAD)
constexpr bool kMeasureMemory = false;
constexpr int kRanks = 8;
constexpr std::uint32_t kSpans = 20'000;
#else
constexpr bool kMeasureMemory = true;
constexpr int kRanks = 64;
constexpr std::uint32_t kSpans = 100'000;
#endif

TEST_F(Distributed, MergingSixtyFourRanksOfHundredThousandSpansStaysUnderMemoryBound) {
  // One rank's profile, saved 64 times with its rank changed (building is not what is measured).
  RankBuilder b(0, kRanks);
  const std::uint32_t step = b.node(0, "step");
  const std::uint32_t work = b.node(step, "work");
  std::uint64_t t = 0;
  std::int64_t seq = 0;
  for (std::uint32_t i = 0; i < kSpans / 10; ++i) {
    b.span(step, t, t + 10'000);
    for (int k = 0; k < 8; ++k) b.span(work, t + 1 + k * 1'000, t + 1'000 + k * 1'000);
    b.collective(step, t + 9'000, t + 9'999, seq++);
    t += 10'000;
  }
  Profile one = b.finish();
  RankFiles files;
  std::vector<std::string> paths;
  for (int r = 0; r < kRanks; ++r) {
    one.ranks.front().rank = r;
    one.ranks.front().clock = r == 0 ? ClockAlignment{} : aligned(1'000.0 * r, 0.0, 0, 100.0);
    const std::string p = path("rank" + std::to_string(r) + ".nnprof");
    files.put(p, one);
    paths.push_back(p);
  }
  std::uint64_t input_bytes = 0;
  for (const auto& p : paths) input_bytes += std::filesystem::file_size(p);
  if (!kMeasureMemory) {
    const auto r = nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
    EXPECT_EQ(r.spans, std::uint64_t{kRanks} * kSpans);
    return;
  }
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      const auto r = nnprof::io::merge_rank_profiles(paths, path("job.nnprof"), {});
      code = r.spans == std::uint64_t{kRanks} * kSpans ? 0 : 3;
      rusage self{};
      getrusage(RUSAGE_SELF, &self);
      if (FILE* f = std::fopen(path("peak_kib").c_str(), "w")) {
        std::fprintf(f, "%ld\n", self.ru_maxrss);
        std::fclose(f);
      }
    } catch (...) {
      code = 4;
    }
    std::_Exit(code);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  long peak_kib = 0;
  FILE* f = std::fopen(path("peak_kib").c_str(), "r");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(std::fscanf(f, "%ld", &peak_kib), 1);
  std::fclose(f);
  const double peak_mib = static_cast<double>(peak_kib) / 1024.0;
  const double input_mib = static_cast<double>(input_bytes) / (1024.0 * 1024.0);
  std::printf("merged %d ranks x %u spans: inputs %.1f MiB, peak RSS of the merging process %.1f MiB\n", kRanks, kSpans,
              input_mib, peak_mib);
  // The bound: 160 MiB for 6.4 M spans in 168 MiB of files (measured: 100 MiB). The peak
  // includes the forked test process itself (its image and the one-rank profile it built) and
  // SQLite's 64 MiB page cache. Loading every rank at once takes ~500 MiB (docs/PERFORMANCE.md).
  EXPECT_LT(peak_mib, 160.0);
  EXPECT_TRUE(std::filesystem::exists(path("job.nnprof")));
}

}  // namespace
