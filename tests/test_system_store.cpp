// The system tables of a .nnprof file (io/system_store.cpp, docs/FORMAT.md "System tables"): an
// exact round trip of Profile::system with values not read (NaN) kept as absent rows, the
// tracks queryable in SQL, files without a monitor, and damaged rows named in the error.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <sstream>
#include <string>

#include "edit_store.hpp"
#include "io/chrome_trace.hpp"
#include "nnprof/nnprof.hpp"
#include "test_directory.hpp"

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

nnprof::Profile monitored_profile() {
  nnprof::Profile p;
  p.strings = {"step", "forward"};
  p.call_tree.resize(1);  // the root
  p.threads.push_back(nnprof::ThreadInfo{0, 4242, "main", false, 0, 0});
  nnprof::SystemProfile& s = p.system;
  s.monitored = true;
  s.interval_ms = 250;
  s.limits = nnprof::SystemLimits{8, 2.5, 16ULL << 30, 4ULL << 30, "/user.slice/job"};
  s.sample_ns = {0, 250'000'000, 500'000'000};
  s.sample_scope = {nnprof::kNone, 1, 0};
  s.scope_thread = 0;
  s.tracks = {{"energy.package-0.power", "W", {kNaN, 31.25, 40.5}},
              {"process.cpu.user", "percent", {kNaN, 99.5, 100.25}},
              {"process.memory.rss", "bytes", {1.5e9, 1.75e9, 2e9}}};
  s.energy = {{"package-0", "cpu", nnprof::EnergyMethod::Rapl, 17.9375, 0.05, "energy.package-0.power", "wrapped once"},
              {"memory (modelled)", "dram", nnprof::EnergyMethod::Modelled, 0.25, 0.5, "", "0.3725 W/GiB"}};
  s.notes = {"no NVML: no GPU metrics"};
  return p;
}

class SystemStore : public nnprof::testing::TestDirectory {
 protected:
  SystemStore() : TestDirectory("system_store") {}

  static std::string load_error(const std::string& file) {
    try {
      (void)nnprof::Profile::load(file);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "no error";
  }
};

TEST_F(SystemStore, EverySystemFieldRoundTripsExactlyWithValuesNotReadKeptAsNaN) {
  const nnprof::Profile original = monitored_profile();
  original.save(path("system.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("system.nnprof"));
  EXPECT_TRUE(loaded.system.monitored);
  EXPECT_EQ(loaded.system.limits, original.system.limits);
  EXPECT_EQ(loaded.system.sample_ns, original.system.sample_ns);
  EXPECT_EQ(loaded.system.sample_scope, original.system.sample_scope);
  ASSERT_EQ(loaded.system.tracks.size(), 3u);
  EXPECT_TRUE(std::isnan(loaded.system.tracks[0].values[0]));
  EXPECT_EQ(loaded.system.tracks[1].values[2], 100.25);
  EXPECT_EQ(loaded.system.energy, original.system.energy);
  EXPECT_EQ(loaded.system.energy[0].method, nnprof::EnergyMethod::Rapl);
  EXPECT_EQ(loaded.system.notes, original.system.notes);
  EXPECT_TRUE(loaded.system == original.system);
  EXPECT_TRUE(loaded == original);
}

TEST_F(SystemStore, TracksAreQueryableAsCountersWithTheirTimes) {
  monitored_profile().save(path("system.nnprof"));
  const nnprof::QueryResult r = nnprof::query_profile(
      path("system.nnprof"), "select ts, value from system_counter_at where track = 'process.cpu.user' order by ts");
  ASSERT_EQ(r.rows.size(), 2u);  // the first sample was not read: no row
  EXPECT_EQ(r.rows[0][0], "250000000");
  EXPECT_EQ(r.rows[1][1], "100.25");
  const nnprof::QueryResult e =
      nnprof::query_profile(path("system.nnprof"), "select name, method from energy_domain order by id");
  ASSERT_EQ(e.rows.size(), 2u);
  EXPECT_EQ(e.rows[1][1], "modelled");
}

TEST_F(SystemStore, AProfileWithoutAMonitorLoadsUnmonitored) {
  nnprof::Profile p;
  p.strings = {"a"};
  p.call_tree.resize(1);
  p.save(path("plain.nnprof"));
  EXPECT_FALSE(nnprof::Profile::load(path("plain.nnprof")).system.monitored);
}

TEST_F(SystemStore, DamagedRowsAreNamed) {
  monitored_profile().save(path("method.nnprof"));
  nnprof::testing::run_sql(path("method.nnprof"), "UPDATE energy_domain SET method = 'guessed' WHERE id = 1");
  EXPECT_NE(load_error(path("method.nnprof")).find("energy_domain row 1 has an unknown method 'guessed'"),
            std::string::npos)
      << load_error(path("method.nnprof"));

  monitored_profile().save(path("sample.nnprof"));
  nnprof::testing::run_sql(path("sample.nnprof"), "UPDATE system_counter SET sample_id = 9 WHERE sample_id = 2");
  EXPECT_NE(load_error(path("sample.nnprof")).find("refers to a missing system_sample"), std::string::npos)
      << load_error(path("sample.nnprof"));

  monitored_profile().save(path("keys.nnprof"));
  nnprof::testing::run_sql(path("keys.nnprof"), "DELETE FROM system_info WHERE key = 'interval_ms'");
  EXPECT_NE(load_error(path("keys.nnprof")).find("system_info table lacks"), std::string::npos)
      << load_error(path("keys.nnprof"));
}

TEST_F(SystemStore, TheChromeTraceHasACounterTrackPerSystemTrackWithoutNaN) {
  std::ostringstream out;
  nnprof::io::write_chrome_trace(monitored_profile(), out);
  const std::string trace = out.str();
  EXPECT_NE(trace.find(R"j("name":"system: process.cpu.user (percent)","args":{"value":100.25})j"), std::string::npos)
      << trace;
  EXPECT_EQ(trace.find("NaN"), std::string::npos);
  EXPECT_EQ(trace.find("nan"), std::string::npos);
}

}  // namespace
