// The GPU tables of a .nnprof file (io/gpu_store.cpp, docs/FORMAT.md "GPU tables"): an exact
// round trip of every GpuProfile field, readable enums and joins in SQL, files without GPU
// data (no tracing, format version 5), and damaged tables rejected with the table and row named.
#include <gtest/gtest.h>

#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gpu_profile_fixture.hpp"
#include "io/chrome_trace.hpp"
#include "io/profile_store.hpp"
#include "nnprof/gpu.hpp"
#include "nnprof/nnprof.hpp"
#include "edit_store.hpp"
#include "test_directory.hpp"

namespace fs = std::filesystem;

namespace {

class GpuStore : public nnprof::testing::TestDirectory {
 protected:
  GpuStore() : TestDirectory("gpu_store") {}

  static void run_sql(const std::string& file, const std::string& sql) { nnprof::testing::run_sql(file, sql); }

  static std::string load_error(const std::string& file) {
    try {
      (void)nnprof::Profile::load(file);
    } catch (const nnprof::Error& e) {
      return e.what();
    }
    return "no error";
  }

  static std::vector<std::string> column(const nnprof::QueryResult& r, std::size_t c = 0) {
    std::vector<std::string> out;
    for (const auto& row : r.rows) out.push_back(row.at(c));
    return out;
  }

  static std::string fmt_table_info(const std::string& table) {
    return "select name from pragma_table_info('" + table + "') order by cid";
  }

};

TEST_F(GpuStore, EveryGpuFieldRoundTripsExactly) {
  const nnprof::Profile original = nnprof::testing::gpu_profile();
  original.save(path("gpu.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("gpu.nnprof"));
  const nnprof::GpuProfile& g = loaded.gpu;
  EXPECT_EQ(g.summary, original.gpu.summary);
  EXPECT_EQ(g.summary.clock_slope, 0.123456789);
  EXPECT_EQ(g.summary.clock_offset_ns, -123'456'789);
  EXPECT_EQ(g.devices, original.gpu.devices);
  EXPECT_EQ(g.streams, original.gpu.streams);
  EXPECT_EQ(g.api_calls, original.gpu.api_calls);
  EXPECT_EQ(g.api_calls[1].external_id, 0xFFFF'FFFF'FFFF'FFF0ULL);
  EXPECT_EQ(g.ops, original.gpu.ops);
  EXPECT_EQ(g.kernels, original.gpu.kernels);
  EXPECT_EQ(g.kernels[0].occupancy, 0.123456789);
  EXPECT_EQ(g.memcpys, original.gpu.memcpys);
  EXPECT_EQ(g.memsets, original.gpu.memsets);
  EXPECT_EQ(g.syncs, original.gpu.syncs);
  EXPECT_EQ(g.syncs[1].type, 200);
  EXPECT_EQ(g.memory_events, original.gpu.memory_events);
  EXPECT_EQ(g.memory_events[0].address, 0xFFFF'8000'0000'0000ULL);
  EXPECT_EQ(g.counters, original.gpu.counters);
  EXPECT_EQ(g.scopes, original.gpu.scopes);
  EXPECT_TRUE(loaded == original);
}

TEST_F(GpuStore, TablesAreQueryableWithReadableEnumsAndJoins) {
  nnprof::testing::gpu_profile().save(path("gpu.nnprof"));
  const std::string f = path("gpu.nnprof");
  EXPECT_EQ(column(nnprof::query_profile(f, "select value from meta where key = 'schema_version'")),
            std::vector<std::string>{"11"});
  EXPECT_EQ(column(nnprof::query_profile(f, "select value from meta where key = 'gpu_traced'")),
            std::vector<std::string>{"1"});
  EXPECT_EQ(column(nnprof::query_profile(f, "select kind from gpu_slice order by id")),
            (std::vector<std::string>{"memcpy", "kernel", "memset", "kernel", "memcpy"}));
  // A detail row names the first slice that uses it, so kernels join their slices.
  const auto kernels = nnprof::query_profile(
      f, "select s.id, str.str, k.block_x * k.block_y * k.block_z from gpu_kernel k join gpu_slice s on s.id = "
         "k.slice_id join strings str on str.id = s.name_id order by k.id");
  ASSERT_EQ(kernels.rows.size(), 2u);
  EXPECT_EQ(kernels.rows[0], (std::vector<std::string>{"3", "reduce \"sum\" kernel", "256"}));
  EXPECT_EQ(kernels.rows[1][0], "1");
  EXPECT_EQ(kernels.rows[1][2], "256");
  const auto copies = nnprof::query_profile(f, "select kind, src_memory, dst_memory, async, bytes from gpu_memcpy order by id");
  ASSERT_EQ(copies.rows.size(), 2u);
  EXPECT_EQ(copies.rows[0], (std::vector<std::string>{"HtoD", "pageable", "device", "0", "8388611"}));
  EXPECT_EQ(copies.rows[1], (std::vector<std::string>{"PtoP", "device", "device", "1", "1073741824"}));
  EXPECT_EQ(column(nnprof::query_profile(f, "select type from gpu_sync order by id")),
            (std::vector<std::string>{"stream_synchronize", "200"}));
  EXPECT_EQ(column(nnprof::query_profile(f, "select operation || ' ' || memory_kind from gpu_memory_event order by id")),
            (std::vector<std::string>{"alloc device", "alloc managed", "free device", "free device"}));
  // Streams by device, and the launching thread of each slice.
  EXPECT_EQ(column(nnprof::query_profile(f, "select d.name || '/' || t.stream_id from gpu_track t join gpu_device d "
                                            "on d.device_id = t.device_id order by t.id")),
            (std::vector<std::string>{"NVIDIA H100 80GB HBM3/7", "NVIDIA H100 80GB HBM3/13", "NVIDIA A100-SXM4-40GB/21"}));
  EXPECT_EQ(column(nnprof::query_profile(f, "select coalesce(th.name, 'NULL') from gpu_slice s left join thread th "
                                            "on th.utid = s.launch_utid order by s.id")),
            (std::vector<std::string>{"main", "main", "main", "loader-0", "NULL"}));
  EXPECT_EQ(column(nnprof::query_profile(f, "select c.value from gpu_counter c join gpu_counter_track t on t.id = "
                                            "c.track_id where t.name = 'nvml_gpu_utilization' order by c.ts")),
            (std::vector<std::string>{"0.0", "87.5"}));
  try {
    (void)nnprof::query_profile(f, "select * from no_such_table");
    ADD_FAILURE() << "an invalid query must throw";
  } catch (const nnprof::Error& e) {
    EXPECT_NE(std::string(e.what()).find("gpu_slice"), std::string::npos) << e.what();
  }
}

TEST_F(GpuStore, AProfileWithoutGpuLoadsUntraced) {
  const nnprof::Profile original = nnprof::testing::rich_profile();
  original.save(path("cpu.nnprof"));
  const nnprof::Profile loaded = nnprof::Profile::load(path("cpu.nnprof"));
  EXPECT_FALSE(loaded.gpu.summary.traced);
  EXPECT_EQ(loaded.gpu, nnprof::GpuProfile{});
  EXPECT_TRUE(loaded == original);
  // The tables exist, empty, so that queries over them work on every version-6 file.
  EXPECT_EQ(column(nnprof::query_profile(path("cpu.nnprof"), "select count(*) from gpu_slice")),
            std::vector<std::string>{"0"});
}

TEST_F(GpuStore, Version5FilesLoadWithAnEmptyGpu) {
  nnprof::Profile original = nnprof::testing::gpu_profile();
  original.save(path("v5.nnprof"));
  run_sql(path("v5.nnprof"),
          "DROP TABLE gpu_device; DROP TABLE gpu_track; DROP TABLE gpu_api_call; DROP TABLE gpu_slice; "
          "DROP TABLE gpu_kernel; DROP TABLE gpu_memcpy; DROP TABLE gpu_memset; DROP TABLE gpu_sync; "
          "DROP TABLE gpu_memory_event; DROP TABLE gpu_counter_track; DROP TABLE gpu_counter; DROP TABLE gpu_scope; "
          "DELETE FROM meta WHERE key GLOB 'gpu_*'; UPDATE meta SET value = 5 WHERE key = 'schema_version'; "
          "PRAGMA user_version = 5;");
  const nnprof::Profile loaded = nnprof::Profile::load(path("v5.nnprof"));
  EXPECT_EQ(loaded.gpu, nnprof::GpuProfile{});
  EXPECT_FALSE(loaded.gpu.summary.traced);
  original.gpu = nnprof::GpuProfile{};
  for (nnprof::MemoryCounter& c : original.memory_counters) c.largest_alloc_bytes = 0;  // recorded since version 7
  EXPECT_TRUE(loaded == original) << "everything but the GPU part is still there";
}

TEST_F(GpuStore, DamagedGpuTablesAreRejectedNamingTableAndRow) {
  const nnprof::Profile original = nnprof::testing::gpu_profile();
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"UPDATE gpu_slice SET track_id = 99 WHERE id = 0", "gpu_slice row 0 refers to a missing track (track_id)"},
      {"UPDATE gpu_slice SET launch_utid = 7 WHERE id = 1", "gpu_slice row 1 refers to a missing thread (launch_utid)"},
      {"UPDATE gpu_slice SET launch_node_id = 99 WHERE id = 3", "gpu_slice row 3 refers to a missing call-tree node"},
      {"UPDATE gpu_slice SET launch_slice_id = 6 WHERE id = 0", "gpu_slice row 0 refers to a missing slice, or to one on another thread"},
      {"UPDATE gpu_slice SET launch_slice_id = 1000 WHERE id = 0", "gpu_slice row 0 refers to a missing slice"},
      {"UPDATE gpu_slice SET api_id = 42 WHERE id = 0", "gpu_slice row 0 refers to a missing CUDA API call"},
      {"UPDATE gpu_slice SET name_id = 1000 WHERE id = 2", "gpu_slice row 2 names a missing string"},
      {"UPDATE gpu_slice SET kind = 'shader' WHERE id = 2", "gpu_slice row 2 has the unknown kind 'shader'"},
      {"UPDATE gpu_slice SET dur = -1 WHERE id = 0", "gpu_slice row 0 ends before it begins"},
      {"UPDATE gpu_slice SET ts = 0 WHERE id = 1", "gpu_slice row 1 is out of order"},
      {"UPDATE gpu_slice SET id = id + 10 WHERE id = 4", "gpu_slice row 4 has id 14: ids are not dense"},
      {"UPDATE gpu_kernel SET slice_id = NULL; UPDATE gpu_slice SET detail_id = 5 WHERE id = 1",
       "gpu_slice row 1 refers to a missing gpu_kernel row (detail_id 5)"},
      {"UPDATE gpu_kernel SET slice_id = 0 WHERE id = 1", "gpu_kernel row 1 refers to a missing kernel slice"},
      {"UPDATE gpu_kernel SET grid_x = 4294967296 WHERE id = 0", "gpu_kernel row 0 has grid_x = 4294967296, out of range"},
      {"UPDATE gpu_memcpy SET src_memory = 'floppy' WHERE id = 0", "gpu_memcpy row 0 has the unknown src_memory 'floppy'"},
      {"UPDATE gpu_memcpy SET kind = 'HtoX' WHERE id = 1", "gpu_memcpy row 1 has the unknown kind 'HtoX'"},
      {"UPDATE gpu_memset SET memory_kind = '' WHERE id = 0", "gpu_memset row 0 has the unknown memory_kind ''"},
      {"UPDATE gpu_track SET stream_id = -1 WHERE id = 2", "gpu_track row 2 has stream_id = -1, out of range"},
      {"UPDATE gpu_api_call SET utid = 2 WHERE id = 0", "gpu_api_call row 0 refers to a missing thread (utid)"},
      {"UPDATE gpu_api_call SET node_id = 5 WHERE id = 4", "gpu_api_call row 4 refers to a missing call-tree node"},
      {"UPDATE gpu_api_call SET external_kind = 256 WHERE id = 1", "gpu_api_call row 1 has external_kind = 256, out of range"},
      {"UPDATE gpu_sync SET type = 'nap' WHERE id = 0", "gpu_sync row 0 has the unknown type 'nap'"},
      {"UPDATE gpu_sync SET type = '3' WHERE id = 0", "gpu_sync row 0 has the unknown type '3'"},
      {"UPDATE gpu_sync SET track_id = 3 WHERE id = 0", "gpu_sync row 0 refers to a missing track"},
      {"UPDATE gpu_memory_event SET operation = 'leak' WHERE id = 2", "gpu_memory_event row 2 has the unknown operation 'leak'"},
      {"UPDATE gpu_memory_event SET source_id = 99 WHERE id = 1", "gpu_memory_event row 1 names a missing string (source_id)"},
      {"UPDATE gpu_memory_event SET launch_slice_id = 3 WHERE id = 3", "gpu_memory_event row 3 refers to a missing slice, or to one on another thread"},
      {"UPDATE gpu_memory_event SET ts = 0 WHERE id = 3", "gpu_memory_event row 3 is out of order"},
      {"UPDATE gpu_counter SET track_id = 3 WHERE id = 0", "gpu_counter row 0 refers to a missing gpu_counter_track"},
      {"UPDATE gpu_scope SET name_id = 16 WHERE rank = 2", "gpu_scope row 2 names a missing string"},
      {"UPDATE meta SET value = 99999999999 WHERE key = 'gpu_cupti_version'",
       "meta key gpu_cupti_version has the value 99999999999, out of range"},
      {"DROP TABLE gpu_scope", "the GPU tables are incomplete: it has gpu_device but no gpu_scope table"},
  };
  for (const auto& [sql, expected] : cases) {
    SCOPED_TRACE(sql);
    const std::string file = path("bad.nnprof");
    fs::remove(file);
    original.save(file);
    run_sql(file, sql);
    const std::string error = load_error(file);
    EXPECT_NE(error.find(expected), std::string::npos) << error;
    EXPECT_NE(error.find(file), std::string::npos) << error;
    EXPECT_NE(error.find("the file is damaged or was not written by nnprof, record the profile again"), std::string::npos)
        << error;
    if (sql.find("launch_slice_id") != std::string::npos) {
      // Loaded without its spans (nnprof merge), the slice is looked up in the file instead.
      std::string streamed;
      try {
        std::uint64_t slices = 0;
        (void)nnprof::io::load_without_spans(file, slices);
      } catch (const nnprof::Error& e) {
        streamed = e.what();
      }
      EXPECT_NE(streamed.find(expected), std::string::npos) << streamed;
    }
  }
}

// What the CI fuzzer does at random, column by column: whatever value a GPU column holds, the
// file loads as a valid profile that the GPU views and the Chrome trace can render, or is
// rejected with nnprof::Error; nothing else may escape (and, under ASan, nothing may be read
// out of bounds).
TEST_F(GpuStore, HostileValuesInAnyGpuColumnAreLoadedOrRejectedCleanly) {
  const std::string good = path("good.nnprof");
  nnprof::testing::gpu_profile().save(good);
  std::vector<std::pair<std::string, std::string>> columns;  // (table, column)
  for (const char* table : {"gpu_device", "gpu_track", "gpu_api_call", "gpu_slice", "gpu_kernel", "gpu_memcpy",
                            "gpu_memset", "gpu_sync", "gpu_memory_event", "gpu_counter_track", "gpu_counter",
                            "gpu_scope"})
    for (const auto& name : column(nnprof::query_profile(good, fmt_table_info(table)), 0)) columns.emplace_back(table, name);
  ASSERT_GT(columns.size(), 100u);
  const char* values[] = {"NULL", "-1", "4294967295", "4294967296", "9223372036854775807", "'x'", "0.5", "1e300"};
  std::size_t loaded = 0;
  std::size_t rejected = 0;
  for (const auto& [table, name] : columns) {
    for (const char* value : values) {
      SCOPED_TRACE(table + "." + name + " = " + value);
      const std::string file = path("hostile.nnprof");
      fs::copy_file(good, file, fs::copy_options::overwrite_existing);
      sqlite3* db = nullptr;
      ASSERT_EQ(sqlite3_open(file.c_str(), &db), SQLITE_OK);
      // Constraints (NOT NULL, unique ids, integer keys) may refuse the value: nothing to load then.
      const std::string sql = "UPDATE " + table + " SET " + name + " = " + value;
      const bool updated = sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
      sqlite3_close(db);
      if (!updated) continue;
      try {
        const nnprof::Profile p = nnprof::Profile::load(file);
        std::ostringstream trace;
        nnprof::io::write_chrome_trace(p, trace);
        (void)nnprof::stream_report(p);
        (void)nnprof::gpu_memory_report(p);
        ++loaded;
      } catch (const nnprof::Error& e) {
        EXPECT_NE(std::string(e.what()).find(file), std::string::npos) << e.what();
        ++rejected;
      }
    }
  }
  // Both outcomes happen: many values are harmless (a name, a count), many are not (an index).
  EXPECT_GT(loaded, 50u);
  EXPECT_GT(rejected, 100u);
}

}  // namespace
