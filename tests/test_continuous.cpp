// Continuous profiling (issue 23, parts 2 and 3): a simulated week of 60 s windows (memory
// bound, rollups whose totals equal the raw totals, a +20% step-time jump and a leak found in the
// window where they begin, nothing in a stationary run), window alignment to steps on a fake
// clock, the store round trip and the file mirrored window by window, a real SIGKILL in the
// middle of a run, the report section and the JSON report, and `nnprof record --continuous`.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "analysis/continuous_trends.hpp"
#include "analysis/continuous_windows.hpp"
#include "io/continuous_store.hpp"
#include "io/json_report.hpp"
#include "nnprof/continuous.hpp"
#include "nnprof/error.hpp"
#include "nnprof/profiler.hpp"
#include "nnprof/scope.hpp"
#include "render/render.hpp"
#include "report/documents.hpp"
#include "report/report_data.hpp"
#include "report/sections.hpp"
#include "report_blocks.hpp"

#ifdef NNPROF_CLI_PATH
#include "cli_run.hpp"
#endif

namespace nnprof {
namespace {

using namespace report_testing;
namespace fs = std::filesystem;

constexpr std::uint64_t kMinute = 60'000'000'000ull;
constexpr std::size_t kWeek = 7 * 24 * 60;  // 10,080 windows of 60 s
constexpr std::size_t kBoundBytes = std::size_t{32} << 20;

// A fresh directory for one test, removed at its end.
class TempDir {
 public:
  TempDir() {
    dir_ = fs::temp_directory_path() / ("nnprof_continuous_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  [[nodiscard]] std::string path(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// ---- a simulated run of synthetic windows ------------------------------------------------

struct Injection {
  std::size_t jump_at = SIZE_MAX;  // step time x1.2 from this window on
  std::size_t leak_at = SIZE_MAX;  // heap +0.1% of its base level per window from here on
};

// Raw windows of a training job: 100 ms steps (2% noise), 24 scopes and 16 functions (more
// than the top K kept), RSS and heap around 1 GiB and 512 MiB, about 2 J per step.
class Simulation {
 public:
  explicit Simulation(std::uint64_t seed, Injection injection) : rng_(seed), inject_(injection) {}

  ProfileWindow window(std::size_t i) {
    ProfileWindow w;
    w.start_ns = i * kMinute;
    w.end_ns = (i + 1) * kMinute;
    w.step_aligned = true;
    double step_ms = 100.0 * (1.0 + 0.02 * normal_(rng_));
    if (i >= inject_.jump_at) step_ms *= 1.2;
    w.steps = static_cast<std::uint64_t>(60'000.0 / step_ms);
    w.step_ns = static_cast<std::uint64_t>(static_cast<double>(w.steps) * step_ms * 1e6);
    w.items = w.steps * 32;
    for (int s = 0; s < 24; ++s) {
      WindowScope scope{s == 0 ? std::string("train_step") : "layer_" + std::to_string(s), w.steps,
                        w.step_ns / static_cast<std::uint64_t>(s + 1), w.step_ns / static_cast<std::uint64_t>(2 * (s + 1)),
                        s == 0 ? w.items : 0};
      w.scope_calls += scope.calls;
      w.scopes.push_back(std::move(scope));
    }
    for (int f = 0; f < 16; ++f) {
      const double expected = 3000.0 / (f + 1);
      const auto samples = static_cast<std::uint64_t>(std::max(0.0, expected + std::sqrt(expected) * normal_(rng_)));
      w.functions.push_back(WindowFunction{"kernel_function_number_" + std::to_string(f), samples, samples * 5'000'000});
      w.cpu_samples += samples;
      w.cpu_sample_ns += samples * 5'000'000;
    }
    w.rss_bytes = static_cast<std::uint64_t>((1 << 30) * (1.0 + 0.005 * normal_(rng_)));
    w.rss_peak_bytes = w.rss_bytes + 4096;
    double heap = (512 << 20) * (1.0 + 0.005 * normal_(rng_));
    if (i >= inject_.leak_at) heap += (512 << 20) * 0.001 * static_cast<double>(i - inject_.leak_at + 1);
    w.heap_live_bytes = static_cast<std::uint64_t>(heap);
    w.heap_alloc_bytes = 1'000'000 + i;
    w.heap_free_bytes = 999'000 + i;
    w.energy_joules = 2.0 * static_cast<double>(w.steps) * (1.0 + 0.02 * normal_(rng_));
    w.cpu_percent = 100.0 * (1.0 + 0.02 * normal_(rng_));
    return w;
  }

 private:
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_{0.0, 1.0};
  Injection inject_;
};

// What the raw windows add up to, to compare with the rolled-up store.
struct Totals {
  std::uint64_t raw = 0, steps = 0, step_ns = 0, items = 0, scope_calls = 0, cpu_samples = 0, cpu_sample_ns = 0;
  std::uint64_t heap_alloc = 0, heap_free = 0, scope_list_calls = 0, scope_list_ns = 0, function_samples = 0;
  double energy = 0.0;
  std::map<std::string, std::uint64_t> top_function;  // samples of the two largest functions

  void add(const ProfileWindow& w) {
    raw += w.raw_windows;
    steps += w.steps;
    step_ns += w.step_ns;
    items += w.items;
    scope_calls += w.scope_calls;
    cpu_samples += w.cpu_samples;
    cpu_sample_ns += w.cpu_sample_ns;
    heap_alloc += w.heap_alloc_bytes;
    heap_free += w.heap_free_bytes;
    energy += w.energy_joules;
    for (const WindowScope& s : w.scopes) {
      scope_list_calls += s.calls;
      scope_list_ns += s.total_ns;
    }
    for (const WindowFunction& f : w.functions) {
      function_samples += f.samples;
      if (f.name == "kernel_function_number_0" || f.name == "kernel_function_number_1") top_function[f.name] += f.samples;
    }
  }
};

// A raw window cut the way measure_window cuts its lists (top K plus "[other]").
ProfileWindow as_measured(const ProfileWindow& w, const RollupPolicy& policy) {
  // Merging into an empty window applies the same top-K cut and keeps every total.
  ProfileWindow zero;
  zero.start_ns = w.start_ns;
  zero.end_ns = w.start_ns;
  zero.raw_windows = 0;
  zero.gpu_memory_bytes = ProfileWindow::kNotMeasured;
  zero.energy_joules = ProfileWindow::kNotMeasured;
  zero.cpu_percent = ProfileWindow::kNotMeasured;
  analysis::merge_window(zero, w, policy);
  return zero;
}

struct WeekResult {
  std::vector<ProfileWindow> windows;
  std::size_t max_bytes = 0;
  Totals raw;
};

WeekResult simulate_week(std::uint64_t seed, Injection injection) {
  const RollupPolicy policy;
  analysis::WindowStore store(policy);
  Simulation sim(seed, injection);
  WeekResult result;
  for (std::size_t i = 0; i < kWeek; ++i) {
    ProfileWindow w = as_measured(sim.window(i), policy);
    result.raw.add(w);
    store.add(std::move(w));
    result.max_bytes = std::max(result.max_bytes, store.bytes());
  }
  result.windows = store.windows();
  return result;
}

// The index of the stored window that starts where raw window `raw` started.
std::size_t window_starting_at(const std::vector<ProfileWindow>& windows, std::size_t raw) {
  for (std::size_t i = 0; i < windows.size(); ++i)
    if (windows[i].start_ns == raw * kMinute) return i;
  ADD_FAILURE() << "no stored window starts at raw window " << raw;
  return SIZE_MAX;
}

TEST(ContinuousWeek, StaysUnderTheBoundAndRollupsKeepTheRawTotals) {
  const WeekResult week = simulate_week(1, {});
  EXPECT_LT(week.max_bytes, kBoundBytes);
  // Raw for the last day (1,440), 10-minute buckets for the six days before.
  EXPECT_LE(week.windows.size(), 1440u + 6u * 144u + 2u);
  EXPECT_GE(week.windows.size(), 1440u + 6u * 144u - 2u);
  Totals rolled;
  for (const ProfileWindow& w : week.windows) rolled.add(w);
  EXPECT_EQ(rolled.raw, kWeek);
  EXPECT_EQ(rolled.steps, week.raw.steps);
  EXPECT_EQ(rolled.step_ns, week.raw.step_ns);
  EXPECT_EQ(rolled.items, week.raw.items);
  EXPECT_EQ(rolled.scope_calls, week.raw.scope_calls);
  EXPECT_EQ(rolled.cpu_samples, week.raw.cpu_samples);
  EXPECT_EQ(rolled.cpu_sample_ns, week.raw.cpu_sample_ns);
  EXPECT_EQ(rolled.heap_alloc, week.raw.heap_alloc);
  EXPECT_EQ(rolled.heap_free, week.raw.heap_free);
  EXPECT_EQ(rolled.scope_list_calls, week.raw.scope_list_calls);
  EXPECT_EQ(rolled.scope_list_ns, week.raw.scope_list_ns);
  EXPECT_EQ(rolled.function_samples, week.raw.function_samples);
  EXPECT_EQ(rolled.top_function, week.raw.top_function);
  EXPECT_NEAR(rolled.energy, week.raw.energy, 1e-9 * week.raw.energy);
  // Each window keeps at most the top K and one "[other]".
  for (const ProfileWindow& w : week.windows) {
    EXPECT_LE(w.functions.size(), RollupPolicy{}.top_functions + 1);
    EXPECT_LE(w.scopes.size(), RollupPolicy{}.top_scopes + 1);
  }
  std::printf("simulated week: %zu windows, at most %.2f MiB of window state\n", week.windows.size(),
              static_cast<double>(week.max_bytes) / (1 << 20));
}

TEST(ContinuousWeek, BeyondAWeekHourlyBucketsAndTheCapKeepTheCountBounded) {
  RollupPolicy policy;
  policy.max_windows = 3000;
  analysis::WindowStore store(policy);
  Simulation sim(2, {});
  Totals raw;
  std::size_t max_windows = 0;
  for (std::size_t i = 0; i < 5 * kWeek; ++i) {  // five weeks
    ProfileWindow w = as_measured(sim.window(i), policy);
    raw.add(w);
    store.add(std::move(w));
    max_windows = std::max(max_windows, store.windows().size());
  }
  EXPECT_LE(max_windows, policy.max_windows);
  Totals rolled;
  for (const ProfileWindow& w : store.windows()) rolled.add(w);
  EXPECT_EQ(rolled.raw, 5 * kWeek);
  EXPECT_EQ(rolled.steps, raw.steps);
  EXPECT_EQ(rolled.function_samples, raw.function_samples);
  EXPECT_LT(store.bytes(), kBoundBytes);
  // Windows still follow one another without gaps or overlaps.
  for (std::size_t i = 1; i < store.windows().size(); ++i)
    EXPECT_EQ(store.windows()[i].start_ns, store.windows()[i - 1].end_ns);
}

TEST(ContinuousWeek, StepTimeJumpAndLeakAreFoundWhereTheyBegin) {
  // Both in the last day, where windows are raw: 9,000 and 9,300 of 10,080.
  const WeekResult week = simulate_week(3, Injection{9000, 9300});
  ContinuousProfile c;
  c.enabled = true;
  c.windows = week.windows;
  const PerformanceTrends t = analysis::continuous_trends(c);
  const std::size_t jump = window_starting_at(week.windows, 9000);
  const std::size_t leak = window_starting_at(week.windows, 9300);
  std::size_t step_events = 0;
  bool leak_found = false;
  for (const Anomaly& a : t.anomalies) {
    SCOPED_TRACE(a.description);
    if (a.metric == "step_time") {
      ++step_events;
      EXPECT_EQ(a.kind, AnomalyKind::LevelShift);
      EXPECT_EQ(a.window, jump);
      EXPECT_NEAR(a.magnitude, 0.20, 0.02);
    } else if (a.metric == "heap") {
      EXPECT_EQ(a.kind, AnomalyKind::Growth);
      EXPECT_LE(std::abs(static_cast<long>(a.window) - static_cast<long>(leak)), 6);
      leak_found = true;
    } else {
      // Fewer steps fit in a window after the jump: throughput drops at the same window.
      EXPECT_EQ(a.metric, "throughput");
      EXPECT_EQ(a.window, jump);
    }
  }
  EXPECT_EQ(step_events, 1u);
  EXPECT_TRUE(leak_found);
}

TEST(ContinuousWeek, StationaryRunYieldsNoEvent) {
  for (const std::uint64_t seed : {4, 5, 6}) {
    const WeekResult week = simulate_week(seed, {});
    ContinuousProfile c;
    c.enabled = true;
    c.windows = week.windows;
    const PerformanceTrends t = analysis::continuous_trends(c);
    for (const Anomaly& a : t.anomalies) ADD_FAILURE() << "seed " << seed << ": " << a.description;
    EXPECT_GE(t.series.size(), 7u);  // step time, throughput, RSS, heap, energy, CPU, shares
    EXPECT_FALSE(t.trends.empty());
  }
}

// ---- the profiler on a fake clock --------------------------------------------------------

struct FakeClock {
  std::uint64_t now = 1'000'000'000;
  ContinuousClock clock() {
    return [this] { return now; };
  }
};

void run_steps(Profiler& p, int n) {
  for (int i = 0; i < n; ++i) {
    NNPROF_SCOPE_IN(p, "step");
    p.add_items("step", 8);
  }
}

ContinuousOptions fake_clock_options(FakeClock& clock) {
  ContinuousOptions o;
  o.interval = std::chrono::seconds(60);
  o.metrics = {};
  o.clock = clock.clock();
  o.background = false;
  o.analyze_every = 0;
  return o;
}

TEST(ContinuousProfiler, WindowsCloseAtTheFirstStepEndAfterTheInterval) {
  ProfilerOptions po;
  po.record_spans = false;
  Profiler p(po);
  FakeClock clock;
  ContinuousOptions o = fake_clock_options(clock);
  o.step_scope = "step";
  ContinuousProfiler cp(p, o);
  cp.start();
  run_steps(p, 3);
  clock.now += 59 * 1'000'000'000ull;
  EXPECT_FALSE(cp.poll());  // not due
  clock.now += 2 * 1'000'000'000ull;
  EXPECT_FALSE(cp.poll());  // due, but no step has ended since
  run_steps(p, 1);
  EXPECT_TRUE(cp.poll());  // the step end closes it
  ContinuousProfile c = cp.current();
  ASSERT_EQ(c.windows.size(), 1u);
  EXPECT_TRUE(c.windows[0].step_aligned);
  EXPECT_EQ(c.windows[0].steps, 4u);
  EXPECT_EQ(c.windows[0].items, 32u);
  EXPECT_EQ(c.windows[0].end_ns - c.windows[0].start_ns, 61 * 1'000'000'000ull);
  // A step longer than half the interval: the window closes unaligned at 1.5 intervals.
  clock.now += 80 * 1'000'000'000ull;
  EXPECT_FALSE(cp.poll());
  clock.now += 11 * 1'000'000'000ull;
  EXPECT_TRUE(cp.poll());
  c = cp.current();
  ASSERT_EQ(c.windows.size(), 2u);
  EXPECT_FALSE(c.windows[1].step_aligned);
  EXPECT_EQ(c.windows[1].steps, 0u);
  const Profile done = cp.stop();
  EXPECT_TRUE(done.continuous.finished);
  EXPECT_EQ(done.continuous.step_scope, "step");
}

// The system monitor's samples are dropped once a window holds them (all but the last, the
// next rates' base), so a long run keeps a bounded number; the run's modelled energy stays whole.
TEST(ContinuousProfiler, SystemSamplesFoldedIntoWindowsAreNotKept) {
  ProfilerOptions po;
  po.record_spans = false;
  Profiler p(po);
  FakeClock clock;
  ContinuousOptions o = fake_clock_options(clock);
  o.step_scope = "step";
  o.metrics = {"system"};
  o.system_interval_ms = 20;
  ContinuousProfiler cp(p, o);
  cp.start();
  for (int window = 0; window < 4; ++window) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // about 5 samples
    clock.now += 61 * 1'000'000'000ull;
    run_steps(p, 1);
    ASSERT_TRUE(cp.poll());
  }
  const Profile now = p.statistics_snapshot();
  ASSERT_TRUE(now.system.monitored);
  EXPECT_LE(now.system.sample_ns.size(), 8u) << "about 20 taken over 4 windows";
  const Profile done = cp.stop();
  EXPECT_EQ(done.continuous.windows.size(), 4u);  // the fake clock has not moved since the last
  double windows_joules = 0.0;
  for (const ProfileWindow& w : done.continuous.windows)
    if (!std::isnan(w.energy_joules)) windows_joules += w.energy_joules;
  double run_joules = 0.0;
  for (const EnergyDomain& d : done.system.energy) run_joules += d.joules;
  EXPECT_GT(run_joules, 0.0);
  // Every window's energy is in the run's total (which also has the time before the first window).
  EXPECT_LE(windows_joules, run_joules * 1.0001);
  std::printf("windows %.6f J, run %.6f J\n", windows_joules, run_joules);
  for (const EnergyDomain& d : done.system.energy) std::printf("  %s %s %.6f J\n", d.name.c_str(), to_string(d.method), d.joules);
}

TEST(ContinuousProfiler, TheStepScopeDefaultsToTheScopeWithItems) {
  Profiler p;
  FakeClock clock;
  ContinuousProfiler cp(p, fake_clock_options(clock));
  cp.start();
  run_steps(p, 2);
  clock.now += 60 * 1'000'000'000ull;
  EXPECT_TRUE(cp.poll());  // no step scope was known at the start: closes at the interval
  const Profile done = cp.stop();
  EXPECT_EQ(done.continuous.step_scope, "step");
  ASSERT_FALSE(done.continuous.windows.empty());
  EXPECT_EQ(done.continuous.windows[0].steps, 2u);
}

TEST(ContinuousProfiler, SimulatedWeekOnAFakeClockStaysUnderTheBound) {
  ProfilerOptions po;
  po.record_spans = false;
  Profiler p(po);
  FakeClock clock;
  ContinuousOptions o = fake_clock_options(clock);
  o.step_scope = "step";
  ContinuousProfiler cp(p, o);
  cp.start();
  std::size_t max_bytes = 0;
  const auto began = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < kWeek; ++i) {
    run_steps(p, 3);
    clock.now += kMinute;
    run_steps(p, 1);  // the step end that closes the window
    ASSERT_TRUE(cp.poll()) << "window " << i;
    max_bytes = std::max(max_bytes, cp.state_bytes());
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
  const Profile done = cp.stop();
  EXPECT_LT(max_bytes, kBoundBytes);
  std::uint64_t steps = 0, raw = 0;
  for (const ProfileWindow& w : done.continuous.windows) {
    steps += w.steps;
    raw += w.raw_windows;
  }
  EXPECT_EQ(steps, p.call_count("step"));
  EXPECT_EQ(raw, kWeek);
  EXPECT_LE(done.continuous.windows.size(), 1440u + 6u * 144u + 2u);
  // Step time is constant work here: nothing to report, and the memory series are flat.
  std::printf("fake-clock week: %zu windows, at most %.2f MiB of state, %.2f ms per window\n",
              done.continuous.windows.size(), static_cast<double>(max_bytes) / (1 << 20),
              seconds * 1e3 / static_cast<double>(kWeek));
}

// ---- the store --------------------------------------------------------------------------

// A valid profile to carry the continuous part (a call tree with its root, the run's facts).
Profile recorded_profile() {
  Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "setup");
  }
  return profiler.snapshot();
}

Profile continuous_profile(std::size_t windows, Injection injection = {}) {
  // Raw for the last 4 hours, 5-minute buckets before: both kinds of window in the file.
  RollupPolicy policy;
  policy.raw_for = std::chrono::hours(4);
  policy.medium = std::chrono::minutes(5);
  policy.medium_for = std::chrono::hours(24);
  analysis::WindowStore store(policy);
  Simulation sim(7, injection);
  for (std::size_t i = 0; i < windows; ++i) store.add(as_measured(sim.window(i), policy));
  Profile p = recorded_profile();
  p.continuous.enabled = true;
  p.continuous.interval_ns = kMinute;
  p.continuous.step_scope = "train_step";
  p.continuous.finished = true;
  p.continuous.windows = store.windows();
  p.continuous.windows.back().gpu_memory_bytes = 3e9;  // one measured, the rest NaN
  const PerformanceTrends t = analysis::continuous_trends(p.continuous);
  p.continuous.anomalies = t.anomalies;
  p.continuous.trends = t.trends;
  return p;
}

// A forked child (a data-loader worker) inherits the profiler but not its window thread: its
// stop() is refused with a message, and destroying its copy neither waits on the parent's thread
// nor disturbs the parent, whose run goes on and stops normally.
TEST(ContinuousProfiler, AForkedChildLeavesTheParentsRunAlone) {
  ProfilerOptions po;
  po.record_spans = false;
  Profiler p(po);
  ContinuousOptions o;
  o.interval = std::chrono::milliseconds(20);
  o.metrics = {};
  o.step_scope = "step";
  std::optional<ContinuousProfiler> cp(std::in_place, p, o);
  cp->start();
  run_steps(p, 2);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    int code = 0;
    try {
      (void)cp->stop();
      code = 2;  // a child stopped the parent's run
    } catch (const Error& e) {
      if (std::string(e.what()).find("forked child") == std::string::npos) code = 3;
    } catch (...) {
      code = 4;
    }
    cp.reset();  // would wait for ever on the parent's thread without the guard
    _exit(code);
  }
  int status = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  pid_t waited = 0;
  while ((waited = waitpid(child, &status, WNOHANG)) == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  if (waited == 0) {
    kill(child, SIGKILL);
    waitpid(child, &status, 0);
    FAIL() << "the forked child hung destroying its copy of the ContinuousProfiler";
  }
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: stop() ran in the child; 3: its message did not say why; 4: not an Error";
  run_steps(p, 2);
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  run_steps(p, 1);
  const Profile done = cp->stop();
  EXPECT_TRUE(done.continuous.finished);
  std::uint64_t steps = 0;
  for (const ProfileWindow& w : done.continuous.windows) steps += w.steps;
  EXPECT_EQ(steps, 5u);
}

TEST(ContinuousStore, RoundTripsEveryWindowEventAndTrend) {
  const Profile p = continuous_profile(400, Injection{300, SIZE_MAX});
  ASSERT_FALSE(p.continuous.anomalies.empty());
  ASSERT_FALSE(p.continuous.trends.empty());
  ASSERT_GT(p.continuous.windows.front().raw_windows, 1u);  // rolled-up windows round-trip too
  TempDir dir;
  const std::string path = dir.path("run.nnprof");
  p.save(path);
  const Profile loaded = Profile::load(path);
  EXPECT_EQ(loaded.continuous, p.continuous);
  // A profile that is not a continuous run loads as one that is not.
  recorded_profile().save(dir.path("plain.nnprof"));
  EXPECT_FALSE(Profile::load(dir.path("plain.nnprof")).continuous.enabled);
}

TEST(ContinuousStore, TheWriterMirrorsTheStoreWindowByWindow) {
  RollupPolicy policy;
  policy.raw_for = std::chrono::minutes(10);
  policy.medium = std::chrono::minutes(5);
  policy.medium_for = std::chrono::minutes(40);
  policy.coarse = std::chrono::minutes(20);
  policy.max_windows = 12;
  analysis::WindowStore store(policy);
  TempDir dir;
  const std::string path = dir.path("live.nnprof");
  Profile first = recorded_profile();
  first.continuous.enabled = true;
  first.continuous.interval_ns = kMinute;
  first.save(path);
  Simulation sim(8, {});
  {
    io::ContinuousFileWriter writer(path);
    for (std::size_t i = 0; i < 200; ++i) {
      const analysis::WindowStore::Change change = store.add(as_measured(sim.window(i), policy));
      std::vector<io::ContinuousFileWriter::Row> rows;
      for (const std::size_t k : change.written) rows.push_back({store.ids()[k], &store.windows()[k]});
      writer.update(change.removed, rows, first.continuous);
      if (i % 50 == 49) {  // readable while the writer holds it
        const Profile now = Profile::load(path);
        EXPECT_EQ(now.continuous.windows, store.windows()) << "after window " << i;
      }
    }
  }
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_EQ(Profile::load(path).continuous.windows, store.windows());
  EXPECT_LE(store.windows().size(), 12u);
}

// ---- the report -------------------------------------------------------------------------

TEST(ContinuousReport, SectionShowsEachEventWithItsWindowAndNumbers) {
  const Profile p = continuous_profile(400, Injection{300, SIZE_MAX});
  const report::ReportData data = report::analyse(p);
  const std::vector<report::Section> sections = build(report::sections::trends, data);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_EQ(sections[0].title, "Trends and anomalies");
  const std::vector<Row> rows = rows_of(table_with_id(sections[0], "trends-anomalies"));
  const std::size_t jump = window_starting_at(p.continuous.windows, 300);
  bool found = false;
  for (const Row& row : rows)
    if (row[2] == "step_time") {
      EXPECT_EQ(row[0], std::to_string(jump));
      EXPECT_EQ(row[3], "level-shift");
      EXPECT_NE(row[6].find('+'), std::string::npos);
      found = true;
    }
  EXPECT_TRUE(found);
  EXPECT_FALSE(rows_of(table_with_id(sections[0], "trends-slopes")).empty());
  EXPECT_EQ(rows_of(table_with_id(sections[0], "trends-windows")).size(), 10u);

  // The text report includes the section; the JSON report the windows and events.
  std::ostringstream text;
  render::write_text(report::profile_document(data), text);
  EXPECT_NE(text.str().find("Trends and anomalies"), std::string::npos);
  std::ostringstream json;
  io::write_json_report(data, json);
  const nlohmann::json j = nlohmann::json::parse(json.str());
  ASSERT_TRUE(j.contains("continuous"));
  EXPECT_EQ(j["continuous"]["windows"].size(), p.continuous.windows.size());
  EXPECT_EQ(j["continuous"]["anomalies"].size(), p.continuous.anomalies.size());
  EXPECT_EQ(j["continuous"]["anomalies"][0]["window"], p.continuous.anomalies[0].window);
  EXPECT_TRUE(j["continuous"]["windows"][0]["gpu_memory_bytes"].is_null());
}

TEST(ContinuousReport, StationaryRunSaysNothingHappened) {
  Profile p = continuous_profile(120);
  p.continuous.anomalies.clear();
  const report::ReportData data = report::analyse(p);
  const std::vector<report::Section> sections = build(report::sections::trends, data);
  ASSERT_EQ(sections.size(), 1u);
  EXPECT_TRUE(says(p, sections[0], "No level shift, outlier or growth"));
}

TEST(ContinuousReport, AnUnfinishedRunGetsItsEventsComputed) {
  Profile p = continuous_profile(400, Injection{300, SIZE_MAX});
  p.continuous.finished = false;
  p.continuous.anomalies.clear();
  p.continuous.trends.clear();
  const report::ReportData data = report::analyse(p);
  ASSERT_TRUE(data.continuous.has_value());
  EXPECT_FALSE(data.continuous->anomalies.empty());
  const std::vector<report::Section> sections = build(report::sections::trends, data);
  EXPECT_TRUE(says(p, sections[0], "The run did not finish"));
}

TEST(ContinuousApi, AnalyzePerformanceTrendsOfAProfile) {
  const Profile p = continuous_profile(400, Injection{300, SIZE_MAX});
  const PerformanceTrends t = analyze_performance_trends(p);
  EXPECT_EQ(t.anomalies, p.continuous.anomalies);
  EXPECT_EQ(t.trends, p.continuous.trends);
  EXPECT_TRUE(analyze_performance_trends(Profile{}).anomalies.empty());
  // The seed's builder.
  const ContinuousProfilerBuilder builder =
      ContinuousProfilerBuilder().sampling_interval(std::chrono::seconds(60)).metrics({"cpu", "memory", "gpu"});
  EXPECT_EQ(builder.options().interval, std::chrono::seconds(60));
  EXPECT_THROW((void)ContinuousProfilerBuilder().metrics({"disk"}).build(), std::invalid_argument);
  EXPECT_THROW((void)ContinuousProfilerBuilder().sampling_interval(std::chrono::seconds(0)).build(),
               std::invalid_argument);
}

// ---- a real crash -----------------------------------------------------------------------

#ifdef CONTINUOUS_TRAIN_PATH
pid_t spawn(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// Windows in the file now, or -1 while it cannot be read.
long windows_in(const std::string& path) {
  try {
    return static_cast<long>(Profile::load(path).continuous.windows.size());
  } catch (const Error&) {
    return -1;
  }
}

TEST(ContinuousCrash, AKilledRunLeavesAFileWithItsWindows) {
  TempDir dir;
  const std::string path = dir.path("crash.nnprof");
  const pid_t pid = spawn({CONTINUOUS_TRAIN_PATH, "api", path, "100", "3"});
  ASSERT_GT(pid, 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (windows_in(path) < 4 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ASSERT_EQ(kill(pid, SIGKILL), 0);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status));
  const Profile p = Profile::load(path);
  EXPECT_TRUE(p.continuous.enabled);
  EXPECT_FALSE(p.continuous.finished);
  EXPECT_GE(p.continuous.windows.size(), 4u);
  EXPECT_EQ(p.continuous.step_scope, "step");
  std::uint64_t steps = 0;
  for (const ProfileWindow& w : p.continuous.windows) steps += w.steps;
  EXPECT_GT(steps, 0u);
  // The report of the file: the section, computed from the windows it holds.
  std::ostringstream text;
  render::write_text(report::profile_document(report::analyse(p)), text);
  EXPECT_NE(text.str().find("The run did not finish"), std::string::npos);
#ifdef NNPROF_CLI_PATH
  const CliRun r = run_cli("report " + path);
  EXPECT_EQ(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("Trends and anomalies"), std::string::npos) << r.output;
#endif
}
#endif

#if defined(NNPROF_CLI_PATH) && defined(CONTINUOUS_TRAIN_PATH)
TEST(ContinuousCli, RecordContinuousWritesWindowsAlignedToSteps) {
  TempDir dir;
  const std::string path = dir.path("rec.nnprof");
  const CliRun r = run_cli("record -q --continuous 200ms -o " + path + " -- " + CONTINUOUS_TRAIN_PATH + " plain 1500 5");
  ASSERT_EQ(r.status, 0) << r.output;
  const Profile p = Profile::load(path);
  ASSERT_TRUE(p.continuous.enabled) << r.output;
  EXPECT_TRUE(p.continuous.finished);
  EXPECT_EQ(p.continuous.interval_ns, 200'000'000u);
  EXPECT_EQ(p.continuous.step_scope, "step");
  EXPECT_GE(p.continuous.windows.size(), 4u);
  std::size_t aligned = 0;
  std::uint64_t steps = 0;
  for (const ProfileWindow& w : p.continuous.windows) {
    aligned += w.step_aligned ? 1 : 0;
    steps += w.steps;
  }
  EXPECT_GE(aligned, 2u);
  EXPECT_EQ(steps, p.find_scope("step")->time.count);
  const CliRun report = run_cli("report " + path);
  EXPECT_EQ(report.status, 0) << report.output;
  EXPECT_NE(report.output.find("Trends and anomalies"), std::string::npos);
}
#endif

}  // namespace
}  // namespace nnprof
