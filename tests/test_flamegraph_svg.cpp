// The flame graph SVG, parsed back with a real XML parser (tinyxml2): well-formed, the
// expected frames at the expected widths, names escaped, and the interactive parts present.
#include "io/flamegraph_svg.hpp"

#include <gtest/gtest.h>
#include <tinyxml2.h>

#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cpu_export_fixture.hpp"
#include "io/exporter_registry.hpp"
#include "report/utf8.hpp"
#include "nnprof/error.hpp"

#include <nlohmann/json.hpp>

namespace nnprof {
namespace {

struct Frame {
  std::string name;     // the first line of its <title>
  std::string title;    // the whole tooltip
  std::uint64_t start = 0;
  std::uint64_t value = 0;
  int depth = 0;
  double x = 0;
  double width = 0;
  double y = 0;
  std::string fill;
  std::string label;    // the text drawn in the box
  std::string readable; // data-l: the name the box shows, where it is not the full name
};

class ParsedSvg {
 public:
  explicit ParsedSvg(const std::string& svg) : text(svg) {
    parsed = doc.Parse(svg.c_str(), svg.size());
    if (parsed != tinyxml2::XML_SUCCESS) return;
    const tinyxml2::XMLElement* root = doc.RootElement();
    if (root == nullptr) return;
    width = root->DoubleAttribute("width");
    height = root->DoubleAttribute("height");
    for (const tinyxml2::XMLElement* e = root->FirstChildElement(); e != nullptr; e = e->NextSiblingElement()) {
      const char* id = e->Attribute("id");
      if (id != nullptr) by_id[id] = e;
      if (std::string(e->Name()) == "script" && e->GetText() != nullptr) script = e->GetText();
    }
    const tinyxml2::XMLElement* group = by_id.contains("frames") ? by_id["frames"] : nullptr;
    if (group == nullptr) return;
    for (const tinyxml2::XMLElement* g = group->FirstChildElement("g"); g != nullptr; g = g->NextSiblingElement("g")) {
      Frame f;
      const tinyxml2::XMLElement* title = g->FirstChildElement("title");
      const tinyxml2::XMLElement* rect = g->FirstChildElement("rect");
      const tinyxml2::XMLElement* label = g->FirstChildElement("text");
      if (title == nullptr || rect == nullptr || label == nullptr) {
        ADD_FAILURE() << "a frame without title, rect or text";
        continue;
      }
      f.title = title->GetText() != nullptr ? title->GetText() : "";
      f.name = f.title.substr(0, f.title.find('\n'));
      f.start = g->Unsigned64Attribute("data-s");
      f.value = g->Unsigned64Attribute("data-v");
      f.depth = g->IntAttribute("data-d");
      f.x = rect->DoubleAttribute("x");
      f.width = rect->DoubleAttribute("width");
      f.y = rect->DoubleAttribute("y");
      f.fill = rect->Attribute("fill") != nullptr ? rect->Attribute("fill") : "";
      f.label = label->GetText() != nullptr ? label->GetText() : "";
      f.readable = g->Attribute("data-l") != nullptr ? g->Attribute("data-l") : "";
      frames.push_back(f);
    }
  }

  [[nodiscard]] const Frame* find(const std::string& name, int depth) const {
    for (const Frame& f : frames)
      if (f.name == name && f.depth == depth) return &f;
    return nullptr;
  }

  [[nodiscard]] std::string text_of(const std::string& id) const {
    const auto it = by_id.find(id);
    return it == by_id.end() || it->second->GetText() == nullptr ? "" : it->second->GetText();
  }

  std::string text;
  tinyxml2::XMLDocument doc;
  tinyxml2::XMLError parsed = tinyxml2::XML_ERROR_EMPTY_DOCUMENT;
  double width = 0;
  double height = 0;
  std::map<std::string, const tinyxml2::XMLElement*> by_id;
  std::string script;
  std::vector<Frame> frames;
};

std::string flamegraph(const Profile& p, const io::FlameGraphOptions& options = {}) {
  std::ostringstream out;
  io::write_flamegraph_svg(p, out, options);
  return out.str();
}

constexpr double kChartWidth = 1200 - 2 * 10;  // the default width less the margins

TEST(FlameGraphSvg, IsWellFormedXmlWithTheExpectedFrames) {
  const ParsedSvg svg(flamegraph(testing::cpu_export_profile()));
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS) << svg.doc.ErrorStr();
  EXPECT_EQ(svg.width, 1200);
  // all (0), main/[no stack] (1), train_step/[unknown]/weird (2), libc/matmul (3), dot (4).
  EXPECT_EQ(svg.height, 60 + 5 * 16 + 34);
  ASSERT_EQ(svg.frames.size(), 9U);

  const Frame* all = svg.find("all", 0);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->value, 11U);
  EXPECT_NEAR(all->x, 10, 0.01);
  EXPECT_NEAR(all->width, kChartWidth, 0.01);

  // Widths are in proportion to samples; children sit inside their parent, left to right
  // in alphabetical order.
  const std::map<std::string, std::uint64_t> expected{
      {"main", 10}, {"[no stack]", 1}, {"train_step", 8}, {"[unknown]", 1}, {"libc.so.6+0x29234", 1},
      {"matmul", 7}, {"dot", 4}};
  for (const auto& [name, value] : expected) {
    const Frame* f = nullptr;
    for (const Frame& candidate : svg.frames)
      if (candidate.name == name) f = &candidate;
    ASSERT_NE(f, nullptr) << name;
    EXPECT_EQ(f->value, value) << name;
    EXPECT_NEAR(f->width, kChartWidth * static_cast<double>(value) / 11.0, 0.01) << name;
    EXPECT_NEAR(f->x, 10 + kChartWidth * static_cast<double>(f->start) / 11.0, 0.01) << name;
  }
  const Frame* no_stack = svg.find("[no stack]", 1);
  const Frame* main = svg.find("main", 1);
  ASSERT_NE(no_stack, nullptr);
  ASSERT_NE(main, nullptr);
  EXPECT_EQ(no_stack->start, 0U);  // '[' sorts before 'm'
  EXPECT_EQ(main->start, 1U);
  const Frame* dot = svg.find("dot", 4);
  ASSERT_NE(dot, nullptr);
  EXPECT_LT(dot->y, svg.find("matmul", 3)->y);  // callees above callers
  EXPECT_EQ(dot->title, "dot\n4 samples, 36.36%\nmodule: libml.so (inlined)");
  EXPECT_EQ(main->title, "main\n10 samples, 90.91%\nmodule: app");
  EXPECT_EQ(main->label, "main");
}

TEST(FlameGraphSvg, NamesAreEscapedAndReadBackExactly) {
  io::FlameGraphOptions options;
  options.title = "Flame <graph> & \"friends\"";
  const std::string text = flamegraph(testing::cpu_export_profile(), options);
  EXPECT_EQ(text.find("<T&>"), std::string::npos);  // only as &lt;T&amp;&gt;
  EXPECT_NE(text.find("&lt;T&amp;&gt;"), std::string::npos);
  const ParsedSvg svg(text);
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS) << svg.doc.ErrorStr();
  EXPECT_EQ(svg.text_of("title"), options.title);
  // ';' and the newline of the name became ':' and ' ' (as in the collapsed format).
  EXPECT_NE(svg.find("weird:name <T&> \"q\"", 2), nullptr);
}

TEST(FlameGraphSvg, BoxesShowTheReadableNameAndTooltipsTheFullSignature) {
  Profile p = testing::cpu_export_profile();
  const std::string signature =
      "void nnprof::demo::matmul<float, 4>(float const*, float*, int) [clone .constprop.0]";
  p.strings[p.frames[testing::kMatmul].function] = signature;  // kMatmulLoop's too: one string
  p.strings[p.frames[testing::kDot].function] = "float dot(float const*, float const*, unsigned long)";
  const ParsedSvg svg(flamegraph(p));
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS) << svg.doc.ErrorStr();
  const Frame* matmul = svg.find(signature, 3);
  ASSERT_NE(matmul, nullptr) << "the tooltip's first line is the full signature";
  EXPECT_EQ(matmul->title, signature + "\n7 samples, 63.64%\nmodule: libml.so");
  EXPECT_EQ(matmul->readable, "nnprof::demo::matmul<float, 4>");
  EXPECT_EQ(matmul->label, "nnprof::demo::matmul<float, 4>");  // 7 of 11 samples: wide enough for all of it
  const Frame* dot = svg.find("float dot(float const*, float const*, unsigned long)", 4);
  ASSERT_NE(dot, nullptr);
  EXPECT_EQ(dot->readable, "dot");
  EXPECT_EQ(dot->label, "dot");
  // Plain names keep their text and need no data-l; neither do roots and frames without symbols.
  for (const char* plain : {"main", "train_step", "all", "[unknown]", "libc.so.6+0x29234"}) {
    bool seen = false;
    for (const Frame& f : svg.frames) {
      if (f.name != plain) continue;
      seen = true;
      EXPECT_EQ(f.readable, "") << plain;
    }
    EXPECT_TRUE(seen) << plain;
  }
  // A narrow box cuts the readable name, never the return type: "nnprof::demo..", not "void nnpr..".
  io::FlameGraphOptions narrow;
  narrow.width = 200;
  const ParsedSvg small(flamegraph(p, narrow));
  ASSERT_EQ(small.parsed, tinyxml2::XML_SUCCESS) << small.doc.ErrorStr();
  const Frame* cut = small.find(signature, 3);
  ASSERT_NE(cut, nullptr);
  ASSERT_TRUE(cut->label.ends_with("..")) << cut->label;
  EXPECT_TRUE(std::string_view("nnprof::demo::matmul<float, 4>").starts_with(cut->label.substr(0, cut->label.size() - 2)))
      << cut->label;
  // The script zooms and searches with both: it reads the label from data-l.
  EXPECT_NE(svg.script.find("getAttribute(\"data-l\")"), std::string::npos);
}

TEST(FlameGraphSvg, InvalidUtf8AndControlCharactersDoNotBreakTheDocument) {
  Profile p = testing::cpu_export_profile();
  p.strings[p.frames[testing::kMain].function] = "ma\xFFin\x01\xEF\xBF\xBE";
  p.threads[0].name = "cut\xE2\x82";
  io::FlameGraphOptions options;
  options.stacks.thread_roots = true;
  const std::string text = flamegraph(p, options);
  std::string_view rest = text;
  while (!rest.empty()) {
    const std::size_t n = report::utf8_sequence_length(rest);
    ASSERT_NE(n, 0U) << "invalid UTF-8 at byte " << text.size() - rest.size();
    rest.remove_prefix(n);
  }
  EXPECT_EQ(text.find("\xEF\xBF\xBE"), std::string::npos);  // U+FFFE is not an XML character
  const ParsedSvg svg(text);
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS) << svg.doc.ErrorStr();
  EXPECT_NE(svg.find("cut\xEF\xBF\xBD\xEF\xBF\xBD (tid 100)", 1), nullptr);
}

TEST(FlameGraphSvg, InteractiveScriptAndControls) {
  const ParsedSvg svg(flamegraph(testing::cpu_export_profile()));
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS) << svg.doc.ErrorStr();
  EXPECT_NE(svg.text.find("<script type=\"text/ecmascript\"><![CDATA["), std::string::npos);
  for (const char* part : {"function zoom(", "function unzoom(", "function search(", "keydown", "mouseover", "Matched: "})
    EXPECT_NE(svg.script.find(part), std::string::npos) << part;
  for (const char* id : {"details", "matched", "search", "unzoom", "title", "subtitle"})
    EXPECT_TRUE(svg.by_id.contains(id)) << id;
  EXPECT_EQ(svg.text_of("search"), "Search");
  EXPECT_EQ(svg.text_of("unzoom"), "Reset Zoom");
  EXPECT_EQ(svg.text_of("subtitle"), "11 samples at 1000 Hz of CPU time");
}

TEST(FlameGraphSvg, ColoursTellKindsApart) {
  const ParsedSvg svg(flamegraph(testing::cpu_export_profile()));
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS);
  const auto rgb = [](const std::string& fill) {
    int r = 0;
    int g = 0;
    int b = 0;
    EXPECT_EQ(std::sscanf(fill.c_str(), "rgb(%d,%d,%d)", &r, &g, &b), 3) << fill;
    return std::vector<int>{r, g, b};
  };
  const std::vector<int> dot = rgb(svg.find("dot", 4)->fill);  // inlined: aqua
  EXPECT_LT(dot[0], dot[1]);
  EXPECT_EQ(dot[1], dot[2]);
  const std::vector<int> matmul = rgb(svg.find("matmul", 3)->fill);  // code: warm
  EXPECT_GT(matmul[0], matmul[2]);
  EXPECT_GE(matmul[0], 205);
}

TEST(FlameGraphSvg, FiltersWeightsAndNarrowFrames) {
  io::FlameGraphOptions options;
  options.stacks.thread = 1;
  options.stacks.weight = io::CpuWeight::Nanoseconds;
  const ParsedSvg svg(flamegraph(testing::cpu_export_profile(), options));
  ASSERT_EQ(svg.parsed, tinyxml2::XML_SUCCESS);
  const Frame* all = svg.find("all", 0);
  ASSERT_NE(all, nullptr);
  EXPECT_EQ(all->value, 6'000'000U);
  EXPECT_EQ(all->title, "all\n6.00 ms, 100.00%");
  EXPECT_EQ(svg.find("[no stack]", 1), nullptr);  // a main-thread sample
  EXPECT_NE(svg.text_of("subtitle").find("thread worker<1> (tid 101)"), std::string::npos);

  // One sample among a million: narrower than 0.1 px, left out like flamegraph.pl does.
  Profile p = testing::cpu_export_profile();
  p.cpu_samples[0].weight_ns = 10'000'000'000'000;
  io::FlameGraphOptions ns;
  ns.stacks.weight = io::CpuWeight::Nanoseconds;
  const ParsedSvg narrow(flamegraph(p, ns));
  ASSERT_EQ(narrow.parsed, tinyxml2::XML_SUCCESS);
  EXPECT_EQ(narrow.find("[no stack]", 1), nullptr);
  EXPECT_NE(narrow.find("matmul", 3), nullptr);
}

// The script, run for real: headless Chromium (installed by scripts/install-deps.sh; the
// test skips without it) loads the SVG with a probe appended that clicks, hovers and
// searches through the page's own functions, then records what the page shows.
constexpr std::string_view kProbe = R"JS(<script type="text/ecmascript"><![CDATA[
var realInit = init;
init = function (evt) {
  realInit(evt);
  var r = {};
  function frame(name) { return frames.filter(function (g) { return g.fg.name === name; })[0]; }
  frame("matmul").dispatchEvent(new MouseEvent("click"));
  r.zoomed = [frame("matmul").fg.rect.getAttribute("x"), frame("matmul").fg.rect.getAttribute("width"),
              frame("dot").fg.rect.getAttribute("width"), frame("[no stack]").getAttribute("class"),
              frame("main").getAttribute("class"), frame("main").fg.rect.getAttribute("width"),
              unzoomButton.getAttribute("class")];
  frame("dot").dispatchEvent(new MouseEvent("mouseover"));
  r.details = details.nodeValue;
  search("^ma");
  r.search = [matched.firstChild.nodeValue, frame("main").fg.rect.getAttribute("fill"),
              frame("dot").fg.rect.getAttribute("fill") === frame("dot").fg.fill, searchButton.firstChild.nodeValue];
  resetSearch();
  unzoom();
  r.reset = [frame("matmul").fg.rect.getAttribute("width"), frame("[no stack]").getAttribute("class"),
             frame("main").fg.rect.getAttribute("fill") === frame("main").fg.fill, unzoomButton.getAttribute("class"),
             matched.firstChild.nodeValue];
  document.documentElement.setAttribute("data-probe", JSON.stringify(r));
};
]]></script>
</svg>
)JS";

std::string unescape_attribute(std::string text) {
  for (const auto& [entity, c] : {std::pair<std::string, std::string>{"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"},
                                  {"&amp;", "&"}}) {
    for (std::size_t at = text.find(entity); at != std::string::npos; at = text.find(entity, at + 1))
      text.replace(at, entity.size(), c);
  }
  return text;
}

TEST(FlameGraphSvg, ZoomHoverAndSearchWorkInChromium) {
  constexpr const char* kChromium = "/usr/bin/chromium";
  if (access(kChromium, X_OK) != 0)
    GTEST_SKIP() << "chromium not installed: apt-get install chromium (scripts/install-deps.sh does)";
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("nnprof_flamegraph_" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::string svg = flamegraph(testing::cpu_export_profile());
  svg.replace(svg.rfind("</svg>"), std::string::npos, kProbe);
  std::ofstream(dir / "probe.svg") << svg;
  const std::string command = std::string("timeout 120 ") + kChromium +
                              " --headless --no-sandbox --disable-gpu --no-first-run --disable-background-networking"
                              " --disable-component-update --disable-sync --enable-logging=stderr --v=0"
                              " --user-data-dir='" + (dir / "profile").string() + "' --dump-dom 'file://" +
                              (dir / "probe.svg").string() + "' >'" + (dir / "dom.txt").string() + "' 2>'" +
                              (dir / "log.txt").string() + "'";
  const int status = std::system(command.c_str());
  std::ifstream dom_file(dir / "dom.txt");
  const std::string dom((std::istreambuf_iterator<char>(dom_file)), std::istreambuf_iterator<char>());
  std::ifstream log_file(dir / "log.txt");
  const std::string log((std::istreambuf_iterator<char>(log_file)), std::istreambuf_iterator<char>());
  std::filesystem::remove_all(dir);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << log;
  EXPECT_EQ(log.find("Uncaught"), std::string::npos) << log;
  const std::size_t at = dom.find("data-probe=\"");
  ASSERT_NE(at, std::string::npos) << "the probe did not run\n" << log;
  const std::size_t begin = at + 12;
  const nlohmann::json r = nlohmann::json::parse(unescape_attribute(dom.substr(begin, dom.find('"', begin) - begin)));

  // Zoomed into matmul (7 of 11 samples): it spans the chart, dot (4 of its 7) in proportion,
  // its callers stay as faded full-width bars, the rest is hidden, "Reset Zoom" shows.
  EXPECT_EQ(r["zoomed"], nlohmann::json({"10.00", "1180.00", "674.29", "f hide", "f parent", "1180.00", ""}));
  EXPECT_EQ(r["details"], "dot (4 samples, 36.36%)");
  // "^ma" matches main and matmul; matmul lies inside main, so 10 of 11 samples.
  EXPECT_EQ(r["search"], nlohmann::json({"Matched: 90.91% (^ma)", "rgb(230,0,230)", true, "Reset Search"}));
  EXPECT_EQ(r["reset"], nlohmann::json({"750.91", "f", true, "hide", " "}));
}

TEST(FlameGraphSvg, RegisteredAsFlamegraphWithSvgExtension) {
  const io::Exporter* e = io::find_exporter("flamegraph");
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(e->extension(), ".svg");
  EXPECT_EQ(io::find_exporter_for_path("cpu.SVG"), e);
  std::ostringstream out;
  e->write(testing::cpu_export_profile(), out);
  EXPECT_EQ(out.str(), flamegraph(testing::cpu_export_profile()));
  std::ostringstream nothing;
  EXPECT_THROW(e->write(Profile{}, nothing), Error);
}

}  // namespace
}  // namespace nnprof
