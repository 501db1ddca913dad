// The GPU part of every report format (text, Markdown, JSON, HTML, CSV), on a profile whose
// scopes a real Profiler recorded and whose GPU part is filled by hand, so that every kernel
// time, byte and allocation is known exactly. No GPU is needed.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "io/csv_export.hpp"
#include "report/format.hpp"
#include "report/gpu_data.hpp"
#include "io/profile_reports.hpp"
#include "io/json_report.hpp"
#include "nnprof/nnprof.hpp"
#include "gpu_report_fixture.hpp"
#include "text_search.hpp"

namespace nnprof {
namespace {

constexpr std::uint64_t kUs = 1'000;
constexpr std::uint64_t kMiB = 1ULL << 20;

// Scopes "forward" and "backward", recorded by a Profiler; each lasts at least 1 ms, so that
// the GPU time's share of forward's CPU time has a non-zero denominator.
Profile recorded_scopes() {
  Profiler profiler;
  {
    NNPROF_SCOPE_IN(profiler, "forward");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  {
    NNPROF_SCOPE_IN(profiler, "backward");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return profiler.snapshot();
}

std::uint32_t node_named(const Profile& p, std::string_view name) {
  for (const CallTreeNode& n : p.call_tree)
    if (n.name != kNone && p.str(n.name) == name) return n.id;
  return 0;
}

// Scopes "forward" and "backward" recorded, the GPU part of gpu_report_fixture.hpp.
Profile gpu_profile() {
  Profile p = recorded_scopes();
  p.meta.duration_ns = 1'000 * kUs;
  testing::report_gpu::add_report_gpu(p, node_named(p, "forward"));
  return p;
}

std::string text_of(const Profile& p) {
  std::ostringstream out;
  io::write_text_report(p, out);
  return out.str();
}

std::string markdown_of(const Profile& p) {
  std::ostringstream out;
  io::write_markdown_report(p, out);
  return out.str();
}

std::string html_of(const Profile& p) {
  std::ostringstream out;
  io::write_html_report(p, out);
  return out.str();
}

std::string csv_of(const Profile& p) {
  std::ostringstream out;
  io::write_csv(p, out);
  return out.str();
}

nlohmann::json json_of(const Profile& p) {
  std::ostringstream out;
  io::write_json_report(p, out);
  return nlohmann::json::parse(out.str());
}

// The first line of `text` that contains every one of `parts`, or "" when none does.
std::string line_with(const std::string& text, const std::vector<std::string>& parts) {
  for (const std::string& line : testing::lines_of(text)) {
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
    if (all) return line;
  }
  return {};
}

std::string percent_of_cpu(const Profile& p, std::uint64_t gpu_ns) {
  return report::format_percent(static_cast<double>(gpu_ns) / static_cast<double>(p.find_scope("forward")->total_ns));
}

TEST(GpuReports, LostRecordsAreCounted) {
  Profile p = gpu_profile();
  p.gpu.summary.records_dropped = 12;
  p.gpu.summary.unmatched_correlations = 3;
  const std::string text = text_of(p);
  EXPECT_NE(line_with(text, {"Records lost:", "12 records dropped (CUPTI had no buffer), 3 ops whose launching call "
                                              "was not seen"}),
            "")
      << text;
  EXPECT_EQ(report::gpu_records_lost(GpuSummary{}), "none lost");
}

TEST(GpuReports, PeerCopiesAreShownWhenPresent) {
  Profile p = gpu_profile();
  GpuDevice second;
  second.id = 1;
  second.name = "Other GPU";
  p.gpu.devices.push_back(second);
  GpuMemcpy peer;
  peer.kind = MemcpyKind::PtoP;
  peer.bytes = 2'000'000;
  peer.src_device = 0;
  peer.dst_device = 1;
  p.gpu.memcpys.push_back(peer);
  GpuOp o;
  o.kind = GpuOpKind::Memcpy;
  o.stream = 1;
  o.start_ns = 900 * kUs;
  o.end_ns = 920 * kUs;
  o.detail = 1;
  p.gpu.ops.push_back(o);
  const std::string text = text_of(p);
  // 2 MB in 20 µs: 100 GB/s.
  EXPECT_NE(line_with(text, {"0: Test GPU", "1: Other GPU", "1.91 MiB", "20.0 µs", "100 GB/s"}), "") << text;
  EXPECT_NE(line_with(text, {"Memcpy PtoP", "1.91 MiB", "20.0 µs", "100 GB/s"}), "") << text;
}

TEST(GpuReports, MarkdownReportHasTheGpuTables) {
  const Profile p = gpu_profile();
  const std::string md = markdown_of(p);
  EXPECT_NE(md.find("\n## GPU\n"), std::string::npos);
  EXPECT_NE(md.find("\n## GPU time per scope\n"), std::string::npos);
  EXPECT_NE(md.find("\n### Top kernels\n"), std::string::npos);
  EXPECT_NE(line_with(md, {"| Records lost", "| none lost"}), "") << md;
  EXPECT_NE(line_with(md, {"| gemm_kernel", "|     3 |", "600 µs", "90.9%", "128×1×1", "256×1×1"}), "") << md;
  EXPECT_NE(line_with(md, {"| Memcpy HtoD", "1.00 MiB", "105 GB/s"}), "") << md;
  EXPECT_NE(line_with(md, {"| 0: Test GPU", "7 (default)", "75.0%"}), "") << md;
  EXPECT_NE(line_with(md, {"| 0: Test GPU", "| forward", "4.00 MiB"}), "") << md;
  EXPECT_NE(line_with(md, {"CUDA context, driver, library workspaces and other processes"}), "");
  EXPECT_NE(line_with(md, {"| forward", "650 µs", "660 µs", percent_of_cpu(p, 660 * kUs)}), "") << md;
  EXPECT_NE(line_with(md, {"| GPU time |"}), "");  // the rankings' column
}

TEST(GpuReports, JsonReportHasTheGpuObject) {
  const Profile p = gpu_profile();
  const nlohmann::json j = json_of(p);
  ASSERT_TRUE(j.contains("gpu")) << j.dump(2);
  const nlohmann::json& g = j["gpu"];

  EXPECT_EQ(g["summary"]["clock_source"], "monotonic-callback");
  EXPECT_EQ(g["summary"]["cupti_version"], 26);
  EXPECT_EQ(g["summary"]["driver_version"], 13000);
  EXPECT_EQ(g["summary"]["records_dropped"], 0);
  EXPECT_EQ(g["summary"]["nvml"], true);

  ASSERT_EQ(g["devices"].size(), 1u);
  const nlohmann::json& d = g["devices"][0];
  EXPECT_EQ(d["id"], 0);
  EXPECT_EQ(d["name"], "Test GPU");
  EXPECT_EQ(d["sms"], 80);
  EXPECT_EQ(d["memory_bytes"], 16ULL << 30);
  EXPECT_EQ(d["compute_capability"], "8.0");
  EXPECT_EQ(d["kernels"], 4);
  EXPECT_EQ(d["kernel_busy_ns"], 650 * kUs);
  EXPECT_DOUBLE_EQ(d["kernel_busy_fraction"].get<double>(), 0.65);
  EXPECT_EQ(d["overlap_ns"], 10 * kUs);
  EXPECT_DOUBLE_EQ(d["nvml_gpu_utilization_mean"].get<double>(), 60.0);
  EXPECT_DOUBLE_EQ(d["nvml_gpu_utilization_max"].get<double>(), 80.0);
  EXPECT_TRUE(d["nvml_memory_utilization_mean"].is_null());
  EXPECT_EQ(d["nvml_memory_used_max_bytes"], 1'500'000'000u);

  EXPECT_EQ(g["idle_gap_threshold_ns"], 20 * kUs);
  ASSERT_EQ(g["streams"].size(), 2u);
  const nlohmann::json& s7 = g["streams"][0];
  EXPECT_EQ(s7["stream_id"], 7);
  EXPECT_EQ(s7["default"], true);
  EXPECT_EQ(s7["ops"], 3);
  EXPECT_EQ(s7["busy_ns"], 600 * kUs);
  EXPECT_EQ(s7["idle_ns"], 200 * kUs);
  EXPECT_EQ(s7["idle_gaps"], 2);
  EXPECT_EQ(s7["longest_gap_ns"], 100 * kUs);
  EXPECT_DOUBLE_EQ(s7["efficiency"].get<double>(), 0.75);
  EXPECT_EQ(g["streams"][1]["stream_id"], 13);
  EXPECT_EQ(g["streams"][1]["busy_ns"], 60 * kUs);
  EXPECT_TRUE(g["peers"].empty());

  EXPECT_EQ(g["kernels"]["count"], 4);
  EXPECT_EQ(g["kernels"]["total_ns"], 650 * kUs);
  ASSERT_EQ(g["kernels"]["by_name"].size(), 2u);
  const nlohmann::json& gemm = g["kernels"]["by_name"][0];
  EXPECT_EQ(gemm["name"], "gemm_kernel");
  EXPECT_EQ(gemm["calls"], 3);
  EXPECT_EQ(gemm["total_ns"], 600 * kUs);
  EXPECT_DOUBLE_EQ(gemm["mean_ns"].get<double>(), 200.0 * kUs);
  EXPECT_EQ(gemm["min_ns"], 100 * kUs);
  EXPECT_EQ(gemm["max_ns"], 300 * kUs);
  EXPECT_DOUBLE_EQ(gemm["share"].get<double>(), 600.0 / 660.0);
  EXPECT_EQ(gemm["grid"], nlohmann::json::array({128, 1, 1}));
  EXPECT_EQ(gemm["block"], nlohmann::json::array({256, 1, 1}));
  EXPECT_EQ(gemm["config_calls"], 2);
  EXPECT_EQ(gemm["configs"], 2);
  EXPECT_EQ(gemm["registers_per_thread"], 32);
  EXPECT_DOUBLE_EQ(gemm["occupancy"].get<double>(), 0.5);
  const nlohmann::json& relu = g["kernels"]["by_name"][1];
  EXPECT_EQ(relu["name"], "relu_kernel");
  EXPECT_TRUE(relu["occupancy"].is_null());

  EXPECT_EQ(g["memcpy"]["count"], 1);
  EXPECT_EQ(g["memcpy"]["bytes"], kMiB);
  EXPECT_EQ(g["memcpy"]["total_ns"], 10 * kUs);
  EXPECT_EQ(g["memcpy"]["pageable"], 1);
  ASSERT_EQ(g["memcpy"]["by_kind"].size(), 1u);
  const nlohmann::json& htod = g["memcpy"]["by_kind"][0];
  EXPECT_EQ(htod["kind"], "HtoD");
  EXPECT_EQ(htod["count"], 1);
  EXPECT_EQ(htod["bytes"], kMiB);
  EXPECT_EQ(htod["pageable"], 1);
  EXPECT_DOUBLE_EQ(htod["gbytes_per_s"].get<double>(), static_cast<double>(kMiB) / (10.0 * kUs));
  EXPECT_EQ(g["memset"]["count"], 0);
  EXPECT_EQ(g["gpu_ns"], 660 * kUs);

  const nlohmann::json& m = g["memory"];
  EXPECT_EQ(m["untracked_frees"], 0);
  ASSERT_EQ(m["devices"].size(), 1u);
  EXPECT_EQ(m["devices"][0]["peak_bytes"], 6 * kMiB);
  EXPECT_EQ(m["devices"][0]["peak_time_ns"], 2 * kUs);
  EXPECT_EQ(m["devices"][0]["live_bytes"], 4 * kMiB);
  EXPECT_EQ(m["devices"][0]["alloc_count"], 2);
  EXPECT_EQ(m["devices"][0]["free_count"], 1);
  EXPECT_EQ(m["devices"][0]["nvml_used_max_bytes"], 1'500'000'000u);
  EXPECT_EQ(m["devices"][0]["unexplained_bytes"], 1'500'000'000u - 6 * kMiB);
  ASSERT_EQ(m["leaks"].size(), 1u);
  EXPECT_EQ(m["leaks"][0]["scope_path"], "forward");
  EXPECT_EQ(m["leaks"][0]["blocks"], 1);
  EXPECT_EQ(m["leaks"][0]["bytes"], 4 * kMiB);

  ASSERT_EQ(g["scopes"].size(), 1u);
  const nlohmann::json& fwd = g["scopes"][0];
  EXPECT_EQ(fwd["name"], "forward");
  EXPECT_EQ(fwd["kernels"], 4);
  EXPECT_EQ(fwd["kernel_ns"], 650 * kUs);
  EXPECT_EQ(fwd["memcpy_bytes"], kMiB);
  EXPECT_EQ(fwd["gpu_ns"], 660 * kUs);
  EXPECT_EQ(fwd["alloc_bytes"], 6 * kMiB);
  const std::uint64_t cpu_ns = p.find_scope("forward")->total_ns;
  EXPECT_EQ(fwd["cpu_total_ns"], cpu_ns);
  ASSERT_GT(cpu_ns, 0u);
  EXPECT_DOUBLE_EQ(fwd["gpu_per_cpu_time"].get<double>(), 660.0 * kUs / static_cast<double>(cpu_ns));
}

TEST(GpuReports, HtmlReportHasTheGpuSection) {
  // The GPU sections' facts are test_report_sections_resources' (GpuSection); here, what the page
  // adds: their places, sortable tables whose numbers carry raw values, the kernel bars.
  const Profile p = gpu_profile();
  const std::string html = html_of(p);
  EXPECT_NE(html.find("<a href=\"#gpu\">GPU</a><a href=\"#gpu-scopes\">GPU time per scope</a>"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"gpu\"><h2>GPU</h2>"), std::string::npos);
  EXPECT_NE(html.find("<section id=\"gpu-scopes\"><h2>GPU time per scope</h2>"), std::string::npos);
  EXPECT_NE(html.find("<dt>Records lost</dt><dd>none lost</dd>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"name\" title=\"gemm_kernel\">gemm_kernel</td><td class=\"num\" data-v=\"3\">3</td>"
                      "<td class=\"num\" data-v=\"600000\">600 µs</td>"),
            std::string::npos);
  EXPECT_NE(html.find("id=\"gpu-kernel-chart\""), std::string::npos);
  EXPECT_NE(html.find(" id=\"gpu-streams-table\"><thead>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"name\" title=\"forward\">forward</td><td class=\"num\" data-v=\"4\">4</td>"
                      "<td class=\"num\" data-v=\"650000\">650 µs</td>"),
            std::string::npos);
  // The hot-path table's GPU time column, keyed for links and sorted by its raw value.
  EXPECT_NE(html.find("<th class=\"num\" data-key=\"gpu\" data-type=\"num\">GPU time</th>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"num\" data-v=\"660000\">660 µs</td>"), std::string::npos);
  EXPECT_NE(html.find("<div class=\"k\">GPU time</div><div class=\"v\">660 µs</div>"), std::string::npos);
}

TEST(GpuReports, CsvHasGpuColumnsPerScope) {
  const Profile p = gpu_profile();
  const std::string csv = csv_of(p);
  const std::vector<std::string> lines = testing::lines_of(csv);
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[0], std::string(io::kCsvHeader) + std::string(io::kCsvGpuColumns) + "\r");
  const std::string forward = line_with(csv, {"forward,"});
  EXPECT_TRUE(forward.ends_with(",4,650000,1,10000,1048576,0,0,660000,6291456\r")) << forward;
  const std::string backward = line_with(csv, {"backward,"});
  EXPECT_TRUE(backward.ends_with(",0,0,0,0,0,0,0,0,0\r")) << backward;
}

TEST(GpuReports, KernelNamesAreEscaped) {
  Profile p = gpu_profile();
  p.strings[p.gpu.ops[0].name] = "void gemm<float>(float*, int)";
  const std::string html = html_of(p);
  // In the kernel table's cell and in the bars.
  EXPECT_NE(html.find(">void gemm&lt;float&gt;(float*, int)</td>"), std::string::npos);
  EXPECT_EQ(html.find("gemm<float>"), std::string::npos);
  EXPECT_EQ(testing::count(html, "<script"), 1u);
  EXPECT_NE(markdown_of(p).find("| void gemm\\<float\\>(float\\*, int) "), std::string::npos) << markdown_of(p);
}

TEST(GpuReports, TracedProfileWithoutScopedWork) {
  // What the sections say (no scope launched GPU work; "-" in the rankings) is
  // test_report_sections_resources' (GpuSection, ResourceRankings); here, the JSON report.
  Profile p = gpu_profile();
  p.gpu.scopes.clear();
  const nlohmann::json j = json_of(p);
  EXPECT_TRUE(j["gpu"]["scopes"].empty());
  EXPECT_EQ(j["gpu"]["kernels"]["count"], 4);
}

TEST(GpuReports, CpuOnlyProfilesHaveNoGpuPart) {
  const Profile p = recorded_scopes();
  ASSERT_FALSE(p.gpu.summary.traced);
  EXPECT_EQ(text_of(p).find("GPU"), std::string::npos) << text_of(p);
  EXPECT_EQ(markdown_of(p).find("GPU"), std::string::npos);
  EXPECT_EQ(html_of(p).find("GPU"), std::string::npos);
  EXPECT_FALSE(json_of(p).contains("gpu"));
  EXPECT_EQ(testing::lines_of(csv_of(p))[0], std::string(io::kCsvHeader) + "\r");
}

}  // namespace
}  // namespace nnprof
