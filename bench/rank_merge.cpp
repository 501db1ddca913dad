// Issue 24: the rank merge's throughput and peak memory against the total size of its inputs,
// and against baselines measured in the same run: loading every rank's profile at once, which
// any merge that is not streaming must at least do, and a merge in memory (load all, join,
// Profile::save). Each measurement runs in a forked child so
// that its peak RSS (getrusage RUSAGE_SELF, read in the child) is its own; merge and baseline
// alternate, three rounds each, and the medians are printed.
//
//   nnprof_bench_rank_merge [spans per rank] [rank counts...]   (default: 100000 16 32 64)
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "io/rank_merge.hpp"
#include "nnprof/distributed.hpp"
#include "nnprof/distributed_analysis.hpp"
#include "nnprof/profile.hpp"

namespace {

using nnprof::Profile;

// One rank: steps of 10 us holding 8 "work" scopes and one allreduce with the collective
// arguments, `spans` spans in all, as the test of the memory bound builds them.
Profile synthetic_rank(std::uint32_t spans, int world) {
  Profile p;
  p.strings = {"step", "work", "allreduce"};
  p.call_tree.resize(4);
  p.call_tree[0].parent = nnprof::kNone;
  for (std::uint32_t id = 1; id < 4; ++id) {
    auto& n = p.call_tree[id];
    n.id = id;
    n.parent = id == 1 ? 0 : 1;
    n.name = id - 1;
    n.depth = id == 1 ? 1 : 2;
    p.call_tree[n.parent].children.push_back(id);
  }
  p.threads.push_back({0, 4242, "main", false, spans, 0});
  p.meta.hostname = "node0";
  p.meta.command_line = "bench";
  std::uint64_t t = 0;
  std::int64_t seq = 0;
  for (std::uint32_t i = 0; i < spans / 10; ++i) {
    p.spans.push_back({0, 0, 1, 1, t, t + 10'000});
    for (std::uint64_t k = 0; k < 8; ++k) p.spans.push_back({0, 1, 2, 2, t + 1 + k * 1'000, t + 1'000 + k * 1'000});
    const auto span = static_cast<std::uint32_t>(p.spans.size());
    p.spans.push_back({0, 2, 3, 2, t + 9'000, t + 9'999});
    auto arg = [&](const char* key, nnprof::SpanArg::Type type, std::string text, std::int64_t value) {
      nnprof::SpanArg a;
      a.span = span;
      a.key = key;
      a.type = type;
      a.string_value = std::move(text);
      a.int_value = value;
      p.span_args.push_back(std::move(a));
    };
    arg(nnprof::collective_arg::kOperation, nnprof::SpanArg::Type::String, "allreduce", 0);
    arg(nnprof::collective_arg::kGroup, nnprof::SpanArg::Type::String, "world", 0);
    arg(nnprof::collective_arg::kSequence, nnprof::SpanArg::Type::Int, "", seq++);
    arg(nnprof::collective_arg::kBytes, nnprof::SpanArg::Type::Int, "", 4 << 20);
    arg(nnprof::collective_arg::kGroupSize, nnprof::SpanArg::Type::Int, "", world);
    t += 10'000;
  }
  p.meta.duration_ns = t;
  p.completeness.scopes_recorded = p.completeness.spans_kept = p.spans.size();
  p.ranks.push_back(nnprof::RankInfo{0, world, 0, "mpirun", "node0", 4242, {}});
  return p;
}

struct Measure {
  double seconds = 0.0;
  double peak_mib = 0.0;
};

// Runs `work` in a child; its wall time and peak RSS come back through a pipe.
template <class Work>
Measure in_child(Work&& work) {
  int fds[2];
  if (pipe(fds) != 0) std::exit(1);
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    const auto start = std::chrono::steady_clock::now();
    work();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    rusage self{};
    getrusage(RUSAGE_SELF, &self);
    const Measure m{seconds, static_cast<double>(self.ru_maxrss) / 1024.0};
    if (write(fds[1], &m, sizeof m) != sizeof m) std::_Exit(1);
    std::_Exit(0);
  }
  close(fds[1]);
  Measure m;
  if (read(fds[0], &m, sizeof m) != sizeof m) std::fprintf(stderr, "a measurement failed\n");
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return m;
}

double median(std::vector<double> v) {
  std::ranges::sort(v);
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  const std::uint32_t spans = argc > 1 ? static_cast<std::uint32_t>(std::atoi(argv[1])) : 100'000;
  std::vector<int> counts;
  for (int i = 2; i < argc; ++i) counts.push_back(std::atoi(argv[i]));
  if (counts.empty()) counts = {16, 32, 64};
  const int most = *std::ranges::max_element(counts);

  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("nnprof_rank_merge_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  Profile one = synthetic_rank(spans, most);
  std::vector<std::string> paths;
  for (int r = 0; r < most; ++r) {
    one.ranks.front().rank = r;
    nnprof::ClockAlignment& c = one.ranks.front().clock;
    c = {};
    if (r > 0) {
      c.aligned = true;
      c.method = "bench";
      c.offset_ns = 1'000.0 * r;
      c.residual_ns = 100.0;
    }
    const std::string path = (dir / ("rank" + std::to_string(r) + ".nnprof")).string();
    one.save(path);
    paths.push_back(path);
  }
  one = Profile{};
  const auto load = [](const std::string& path) { return Profile::load(path); };

  std::printf("ranks  spans      inputs MiB  merge s  Mspans/s  input MiB/s  merge peak MiB  load-all s  load-all peak MiB  "
              "in-memory merge s  in-memory peak MiB\n");
  for (const int n : counts) {
    std::vector<std::string> inputs(paths.begin(), paths.begin() + n);
    // The first n ranks of a world of `most`: the others are allowed to be missing.
    std::uint64_t bytes = 0;
    for (const auto& p : inputs) bytes += std::filesystem::file_size(p);
    const std::string out = (dir / "job.nnprof").string();
    std::vector<double> merge_s, merge_mib, all_s, all_mib, memory_s, memory_mib;
    for (int round = 0; round < 3; ++round) {
      const Measure m = in_child([&] {
        nnprof::RankMergeOptions options;
        options.allow_missing_ranks = true;
        nnprof::io::merge_rank_profiles(inputs, out, options);
      });
      merge_s.push_back(m.seconds);
      merge_mib.push_back(m.peak_mib);
      const Measure b = in_child([&] {
        std::vector<Profile> all;
        for (const auto& p : inputs) all.push_back(load(p));
      });
      all_s.push_back(b.seconds);
      all_mib.push_back(b.peak_mib);
      // An in-memory merge: every rank loaded, concatenated (the synthetic ranks share their
      // strings and call tree, so appending threads, spans and arguments is a merge) and saved.
      const Measure c = in_child([&] {
        std::vector<Profile> all;
        for (const auto& p : inputs) all.push_back(load(p));
        Profile merged = std::move(all.front());
        for (std::size_t r = 1; r < all.size(); ++r) {
          const auto thread = static_cast<std::uint32_t>(merged.threads.size());
          const auto first = static_cast<std::uint32_t>(merged.spans.size());
          merged.threads.push_back(all[r].threads.front());
          merged.threads.back().id = thread;
          merged.threads.back().rank = static_cast<std::uint32_t>(r);
          merged.ranks.push_back(all[r].ranks.front());
          for (nnprof::Span s : all[r].spans) {
            s.thread = thread;
            merged.spans.push_back(s);
          }
          for (nnprof::SpanArg a : all[r].span_args) {
            a.span += first;
            merged.span_args.push_back(std::move(a));
          }
          all[r] = Profile{};
        }
        merged.save(out);
      });
      memory_s.push_back(c.seconds);
      memory_mib.push_back(c.peak_mib);
    }
    const double total_spans = static_cast<double>(n) * spans;
    const double mib = static_cast<double>(bytes) / (1024.0 * 1024.0);
    std::printf("%5d  %9.0f  %10.1f  %7.2f  %8.2f  %11.1f  %14.1f  %10.2f  %17.1f  %17.2f  %18.1f\n", n, total_spans,
                mib, median(merge_s), total_spans / median(merge_s) / 1e6, mib / median(merge_s), median(merge_mib),
                median(all_s), median(all_mib), median(memory_s), median(memory_mib));
  }
  // The analysis of the largest merge.
  {
    std::vector<std::string> inputs(paths.begin(), paths.begin() + most);
    const std::string out = (dir / "job.nnprof").string();
    nnprof::io::merge_rank_profiles(inputs, out, {});
    auto start = std::chrono::steady_clock::now();
    Profile merged = Profile::load(out);
    const double load_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    start = std::chrono::steady_clock::now();
    const nnprof::RankAnalysis a = nnprof::analyze_ranks(merged);
    const double analyse_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("\n%d ranks merged: %zu spans, %zu collective calls; load %.2f s, analyze_ranks %.2f s\n", most,
                merged.spans.size(), a.collectives.size(), load_s, analyse_s);
  }
  std::filesystem::remove_all(dir);
  return 0;
}
