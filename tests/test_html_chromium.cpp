// HTML reports in a real browser: headless Chromium renders them, their script runs without
// errors and sorts and filters as a link asks, and a million-span report loads quickly.
// Set NNPROF_HTML_ARTIFACTS=<dir> to keep the reports and screenshots for a look.
#include <gtest/gtest.h>

#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gpu_profile_fixture.hpp"
#include "report/html_escape.hpp"
#include "io/profile_reports.hpp"
#include "test_directory.hpp"
#include "nnprof/profile.hpp"
#include "sample_profiles.hpp"
#include "text_search.hpp"

namespace nnprof {
namespace {

namespace fs = std::filesystem;

constexpr const char* kChromium = "/usr/bin/chromium";
constexpr double kMillionSpanLoadLimitS = 10.0;  // generous: the goal, < 2 s, is for docs/PERFORMANCE.md

struct TempDir : testing::ScratchDirectory {
  TempDir() : ScratchDirectory("nnprof-html") {}
};

std::string read_file(const fs::path& path) { return testing::read_whole_file(path); }

void write_file(const fs::path& path, std::string_view text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string shell_quote(std::string_view text) {
  std::string quoted = "'";
  for (const char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

struct BrowserRun {
  int exit_code = -1;
  double seconds = 0.0;
  std::string out;
  std::string err;
};

// One headless Chromium, in a fresh profile directory, with nothing that reaches a network.
BrowserRun run_chromium(const fs::path& dir, std::string_view mode, const std::string& url) {
  static int runs = 0;
  const fs::path profile_dir = dir / ("chromium-profile-" + std::to_string(++runs));
  const fs::path out = dir / "stdout.txt";
  const fs::path err = dir / "stderr.txt";
  const std::string command =
      std::string("timeout 120 ") + kChromium +
      " --headless --no-sandbox --disable-gpu --disable-quic --no-first-run --disable-background-networking"
      " --disable-component-update --disable-sync --enable-logging=stderr --v=0 --window-size=1400,2000"
      " --user-data-dir=" +
      shell_quote(profile_dir.string()) + " " + std::string(mode) + " " + shell_quote(url) + " >" +
      shell_quote(out.string()) + " 2>" + shell_quote(err.string());
  BrowserRun run;
  const auto start = std::chrono::steady_clock::now();
  const int status = std::system(command.c_str());
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  run.exit_code = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  run.out = read_file(out);
  run.err = read_file(err);
  return run;
}

std::string file_url(const fs::path& path) { return "file://" + path.string(); }

BrowserRun screenshot(const fs::path& dir, const fs::path& html, const fs::path& png) {
  return run_chromium(dir, "--screenshot=" + shell_quote(png.string()), file_url(html));
}

BrowserRun dump_dom(const fs::path& dir, const std::string& url) {
  return run_chromium(dir, "--dump-dom", url);
}

// Lines of Chromium's log that report JavaScript: uncaught exceptions and console output.
std::vector<std::string> script_messages(const std::string& log) {
  std::vector<std::string> found;
  std::istringstream in(log);
  for (std::string line; std::getline(in, line);) {
    if (line.find("Uncaught") != std::string::npos || line.find(":CONSOLE") != std::string::npos) {
      found.push_back(line);
    }
  }
  return found;
}

struct PngInfo {
  bool valid = false;
  std::uint32_t width = 0;
  std::uint32_t height = 0;
  std::uintmax_t bytes = 0;
};

// The PNG signature and the IHDR chunk that must follow it.
PngInfo png_info(const fs::path& path) {
  PngInfo info;
  const std::string data = read_file(path);
  info.bytes = data.size();
  constexpr std::string_view kSignature = "\x89PNG\r\n\x1a\n";
  if (data.size() < 24 || data.compare(0, 8, kSignature) != 0 || data.compare(12, 4, "IHDR") != 0)
    return info;
  const auto be32 = [&](std::size_t at) {
    std::uint32_t v = 0;
    for (std::size_t i = 0; i < 4; ++i) v = (v << 8) | static_cast<unsigned char>(data[at + i]);
    return v;
  };
  info.valid = true;
  info.width = be32(16);
  info.height = be32(20);
  return info;
}

using testing::count;

// The "data-v" of the third cell (calls, after rank and scope) of each row of the hot-path table,
// in DOM order.
std::vector<double> calls_column(std::string_view dom) {
  std::vector<double> calls;
  const std::size_t table = dom.find("id=\"hot-total\"");
  if (table == std::string_view::npos) return calls;
  const std::size_t end = dom.find("</tbody>", table);
  for (std::size_t row = dom.find("<tr", dom.find("<tbody>", table)); row < end; row = dom.find("<tr", row + 1)) {
    std::size_t cell = row;
    for (int i = 0; i < 3 && cell < end; ++i) cell = dom.find("<td", cell + 1);
    const std::size_t value = dom.find("data-v=\"", cell);
    if (cell >= end || value >= dom.find("</td>", cell)) break;
    calls.push_back(std::stod(std::string(dom.substr(value + 8, 32))));
  }
  return calls;
}

std::string tail(const std::string& text, std::size_t n = 3000) {
  return text.size() <= n ? text : text.substr(text.size() - n);
}

class HtmlInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kChromium))
      GTEST_SKIP() << "chromium not installed: apt-get install chromium (scripts/install-deps.sh does)";
  }

  fs::path write_report(const Profile& profile, const std::string& name) {
    const fs::path path = dir_.path() / name;
    std::ofstream out(path, std::ios::binary);
    io::write_html_report(profile, out);
    return path;
  }

  // A screenshot of an empty page: what "nothing rendered" looks like at this window size.
  std::uintmax_t blank_png_bytes() {
    const fs::path html = dir_.path() / "blank.html";
    write_file(html, "<!DOCTYPE html><html><body></body></html>\n");
    const fs::path png = dir_.path() / "blank.png";
    const BrowserRun run = screenshot(dir_.path(), html, png);
    EXPECT_EQ(run.exit_code, 0) << tail(run.err);
    return png_info(png).bytes;
  }

  void expect_rendered(const fs::path& html, const fs::path& png) {
    const BrowserRun run = screenshot(dir_.path(), html, png);
    EXPECT_EQ(run.exit_code, 0) << tail(run.err);
    EXPECT_EQ(script_messages(run.err), std::vector<std::string>{});
    const PngInfo info = png_info(png);
    ASSERT_TRUE(info.valid) << png << " is not a PNG";
    EXPECT_EQ(info.width, 1400u);
    EXPECT_EQ(info.height, 2000u);
    const std::uintmax_t blank = blank_png_bytes();
    std::cout << "[ chromium ] " << png.filename().string() << ": " << info.bytes
              << " bytes (a blank page: " << blank << " bytes)\n";
    EXPECT_GT(info.bytes, 40'000u);
    EXPECT_GT(info.bytes, 3 * blank) << "the screenshot looks blank";
    keep(html);
    keep(png);
  }

  static void keep(const fs::path& file) {
    if (const char* dir = std::getenv("NNPROF_HTML_ARTIFACTS"); dir != nullptr && *dir != '\0') {
      fs::create_directories(dir);
      fs::copy_file(file, fs::path(dir) / file.filename(), fs::copy_options::overwrite_existing);
    }
  }

  TempDir dir_;
};

TEST_F(HtmlInChromium, RecordedReportRendersWithoutScriptErrors) {
  const fs::path html = write_report(testing::recorded_profile(), "recorded.html");
  expect_rendered(html, dir_.path() / "recorded.png");
}

TEST_F(HtmlInChromium, HeapReportRendersWithoutScriptErrors) {
  const fs::path html = write_report(testing::heap_profile(), "heap.html");
  expect_rendered(html, dir_.path() / "heap.png");
  const BrowserRun run = dump_dom(dir_.path(), file_url(html));
  ASSERT_EQ(run.exit_code, 0) << tail(run.err);
  EXPECT_EQ(script_messages(run.err), std::vector<std::string>{});
  EXPECT_NE(run.out.find("data-ready=\"1\""), std::string::npos) << "the script did not finish";
  EXPECT_NE(run.out.find("aria-label=\"Heap in use and RSS over time\""), std::string::npos);
  EXPECT_NE(run.out.find("id=\"leaks-table\""), std::string::npos);
}

TEST_F(HtmlInChromium, GpuReportRendersWithoutScriptErrors) {
  // Two devices, three streams, a kernel named like a template, a scope named like a script.
  const fs::path html = write_report(testing::gpu_profile(), "gpu.html");
  expect_rendered(html, dir_.path() / "gpu.png");
  const BrowserRun run = dump_dom(dir_.path(), file_url(html));
  ASSERT_EQ(run.exit_code, 0) << tail(run.err);
  EXPECT_EQ(script_messages(run.err), std::vector<std::string>{});
  EXPECT_NE(run.out.find("data-ready=\"1\""), std::string::npos) << "the script did not finish";
  EXPECT_NE(run.out.find("gemm_kernel&lt;float&gt;"), std::string::npos);
  EXPECT_EQ(count(run.out, "<script"), 1u);  // the scope named like a script stays text
}

TEST_F(HtmlInChromium, ScriptSortsAndFiltersAsTheLinkAsks) {
  const Profile profile = testing::recorded_profile();
  const fs::path html = write_report(profile, "recorded.html");
  const BrowserRun run = dump_dom(dir_.path(), file_url(html) + "#sort=calls:desc&filter=att");
  ASSERT_EQ(run.exit_code, 0) << tail(run.err);
  EXPECT_EQ(script_messages(run.err), std::vector<std::string>{});
  const std::string& dom = run.out;
  EXPECT_NE(dom.find("data-ready=\"1\""), std::string::npos) << "the script did not finish";
  EXPECT_NE(dom.find("data-sort=\"calls:desc\""), std::string::npos);
  EXPECT_NE(dom.find("aria-sort=\"descending\""), std::string::npos);
  const std::vector<double> calls = calls_column(dom);
  ASSERT_EQ(calls.size(), profile.scopes.size());
  EXPECT_TRUE(std::is_sorted(calls.rbegin(), calls.rend())) << "rows not sorted by calls, most first";
  // Only "attention" contains "att"; the other rows are hidden, not removed.
  EXPECT_NE(dom.find("data-shown=\"1\""), std::string::npos);
  EXPECT_EQ(count(dom, "<tr hidden=\"\">"), profile.scopes.size() - 1);
  EXPECT_NE(dom.find("<input type=\"search\" data-filter=\"hot-total\""), std::string::npos);
  EXPECT_NE(dom.find("<span class=\"muted\" id=\"hot-total-count\">1 of " + std::to_string(profile.scopes.size()) +
                     " rows match</span>"),
            std::string::npos);
  // The scope named like a script is text in the browser too: the page has one script.
  EXPECT_EQ(count(dom, "<script"), 1u);
  EXPECT_NE(dom.find("&lt;script&gt;alert(1)&lt;/script&gt;"), std::string::npos);
}

TEST_F(HtmlInChromium, MillionSpanReportLoadsQuickly) {
  const Profile profile = testing::million_span_profile();
  const fs::path html = write_report(profile, "million.html");
  const fs::path blank = dir_.path() / "blank.html";
  write_file(blank, "<!DOCTYPE html><html><body></body></html>\n");
  const BrowserRun baseline = dump_dom(dir_.path(), file_url(blank));
  const BrowserRun run = dump_dom(dir_.path(), file_url(html));
  ASSERT_EQ(run.exit_code, 0) << tail(run.err);
  EXPECT_EQ(script_messages(run.err), std::vector<std::string>{});
  EXPECT_NE(run.out.find("data-ready=\"1\""), std::string::npos) << "the script did not finish";
  std::cout << "[ chromium ] " << profile.spans.size() << " spans: " << fs::file_size(html)
            << " bytes of HTML, loaded (--dump-dom) in " << run.seconds << " s; a blank page takes "
            << baseline.seconds << " s\n";
  EXPECT_LT(run.seconds, kMillionSpanLoadLimitS);
  expect_rendered(html, dir_.path() / "million.png");
}

}  // namespace
}  // namespace nnprof
