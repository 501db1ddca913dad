// The format table (nnprof::report_formats(), src/io/formats.cpp): every name, alias and
// extension leads back to its format, and what reads the table (to_string, the exporter
// registry, Report::export_to, the comparisons) agrees with it.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "io/exporter_registry.hpp"
#include "io/formats.hpp"
#include "nnprof/compare.hpp"
#include "nnprof/error.hpp"
#include "nnprof/model_compare.hpp"
#include "nnprof/report.hpp"
#include "sample_profiles.hpp"
#include "test_directory.hpp"

namespace nnprof {
namespace {

constexpr Document kDocuments[] = {Document::Profile, Document::Comparison, Document::ModelComparison};

// `stem` followed by `extension`. (Written out: GCC 12 warns, wrongly, of overlapping copies
// in `"x" + std::string(extension)` at -O3.)
std::string file(std::string_view stem, std::string_view extension) {
  std::string name(stem);
  name.append(extension);
  return name;
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

TEST(Formats, EveryEnumValueButAutoHasOneRow) {
  std::set<ReportFormat> seen;
  for (const FormatInfo& info : report_formats()) {
    EXPECT_NE(info.format, ReportFormat::Auto);
    EXPECT_TRUE(seen.insert(info.format).second) << info.name << " has two rows";
    EXPECT_FALSE(info.name.empty());
    EXPECT_FALSE(info.extensions.empty()) << info.name;
    EXPECT_FALSE(info.description.empty()) << info.name;
    EXPECT_TRUE(info.renders(Document::Profile)) << info.name << ": every format writes the profile";
  }
  EXPECT_EQ(seen.size(), static_cast<std::size_t>(ReportFormat::Flamegraph));
  EXPECT_EQ(find_format(ReportFormat::Auto), nullptr);
}

TEST(Formats, ToStringRoundTripsThroughTheTable) {
  EXPECT_STREQ(to_string(ReportFormat::Auto), "auto");
  for (const FormatInfo& info : report_formats()) {
    EXPECT_EQ(to_string(info.format), info.name);
    EXPECT_EQ(find_format(to_string(info.format)), &info) << info.name;
    EXPECT_EQ(find_format(upper(to_string(info.format))), &info) << info.name;
    EXPECT_EQ(find_format(info.format), &info) << info.name;
  }
  EXPECT_EQ(find_format("auto"), nullptr);
  EXPECT_EQ(find_format(""), nullptr);
  EXPECT_EQ(find_format("no-such-format"), nullptr);
}

TEST(Formats, NamesAliasesAndExtensionsAreUniqueAndLeadBack) {
  std::set<std::string> names, extensions;
  for (const FormatInfo& info : report_formats()) {
    EXPECT_TRUE(names.insert(std::string(info.name)).second) << info.name;
    for (const std::string_view alias : info.aliases) {
      EXPECT_TRUE(names.insert(std::string(alias)).second) << alias;
      EXPECT_EQ(find_format(alias), &info) << alias;
      EXPECT_EQ(find_format(upper(alias)), &info) << alias;
    }
    EXPECT_EQ(info.extension(), info.extensions.front());
    for (const std::string_view extension : info.extensions) {
      ASSERT_EQ(extension.front(), '.') << info.name;
      EXPECT_TRUE(extensions.insert(std::string(extension)).second) << extension;
      // Each extension names its format for every document the format renders.
      for (const Document document : kDocuments) {
        if (!info.renders(document)) continue;
        EXPECT_EQ(find_format_for_path(file("out/run", extension), document), &info)
            << extension << " for a " << to_string(document);
        EXPECT_EQ(find_format_for_path(file("RUN", upper(extension)), document), &info) << extension;
      }
    }
  }
  // The aliases users knew before the table.
  EXPECT_EQ(find_format("md")->format, ReportFormat::Markdown);
  EXPECT_EQ(find_format("folded")->format, ReportFormat::Collapsed);
  EXPECT_EQ(find_format("svg")->format, ReportFormat::Flamegraph);
}

TEST(Formats, TheAlternativeExtensionsSelectTheirFormatEverywhere) {
  for (const Document document : kDocuments) {
    EXPECT_EQ(find_format_for_path("notes.markdown", document)->format, ReportFormat::Markdown) << to_string(document);
    EXPECT_EQ(find_format_for_path("notes.MD", document)->format, ReportFormat::Markdown);
  }
  EXPECT_EQ(find_format_for_path("page.htm", Document::Profile)->format, ReportFormat::Html);
  EXPECT_EQ(find_format_for_path("page.HTM", Document::Comparison)->format, ReportFormat::Html);
  EXPECT_EQ(io::find_exporter_for_path("out/run.htm"), io::find_exporter(ReportFormat::Html));
  EXPECT_EQ(io::find_exporter_for_path("out/run.markdown"), io::find_exporter(ReportFormat::Markdown));
  EXPECT_EQ(io::find_exporter_for_path("out/run.collapsed"), io::find_exporter(ReportFormat::Collapsed));
}

TEST(Formats, TheLongestExtensionWinsAmongTheFormatsOfTheDocument) {
  EXPECT_EQ(find_format_for_path("run.trace.json", Document::Profile)->format, ReportFormat::Chrome);
  EXPECT_EQ(find_format_for_path("run.json", Document::Profile)->format, ReportFormat::Json);
  // No Chrome trace of a comparison: its .trace.json is JSON.
  EXPECT_EQ(find_format_for_path("diff.trace.json", Document::Comparison)->format, ReportFormat::Json);
  EXPECT_EQ(find_format_for_path("diff.svg", Document::Comparison), nullptr);
  EXPECT_EQ(find_format_for_path("run.pdf", Document::Profile), nullptr);
  EXPECT_EQ(find_format_for_path("txt", Document::Profile), nullptr);
  EXPECT_EQ(find_format_for_path("", Document::Profile), nullptr);
}

TEST(Formats, WhichDocumentsEachFormatRenders) {
  for (const ReportFormat f : {ReportFormat::Text, ReportFormat::Markdown, ReportFormat::Json, ReportFormat::Html})
    EXPECT_TRUE(find_format(f)->renders(Document::Comparison)) << to_string(f);
  for (const ReportFormat f : {ReportFormat::Text, ReportFormat::Markdown, ReportFormat::Json, ReportFormat::Html})
    EXPECT_TRUE(find_format(f)->renders(Document::ModelComparison)) << to_string(f);
  for (const ReportFormat f :
       {ReportFormat::Csv, ReportFormat::Chrome, ReportFormat::Collapsed, ReportFormat::Pprof, ReportFormat::Flamegraph}) {
    EXPECT_FALSE(find_format(f)->renders(Document::Comparison)) << to_string(f);
    EXPECT_FALSE(find_format(f)->renders(Document::ModelComparison)) << to_string(f);
  }
  EXPECT_EQ(io::format_names(Document::Comparison), "text, markdown, json or html");
  EXPECT_EQ(io::format_names(Document::ModelComparison), "text, markdown, json or html");
}

TEST(Formats, TheRegistryHasOneExporterPerFormatNamedByTheTable) {
  const std::vector<const io::Exporter*> exporters = io::all_exporters();
  ASSERT_EQ(exporters.size(), report_formats().size());
  for (std::size_t i = 0; i < exporters.size(); ++i) {
    const FormatInfo& info = report_formats()[i];
    const io::Exporter* e = exporters[i];
    EXPECT_EQ(e->format(), info.format) << "all_exporters() follows the table's order";
    EXPECT_EQ(e->name(), info.name);
    EXPECT_EQ(e->extension(), info.extensions.front());
    EXPECT_EQ(io::find_exporter(info.format), e);
    EXPECT_EQ(io::find_exporter(info.name), e);
    for (const std::string_view alias : info.aliases) EXPECT_EQ(io::find_exporter(alias), e) << alias;
    for (const std::string_view extension : info.extensions)
      EXPECT_EQ(io::find_exporter_for_path(file("x", extension)), e) << extension;
  }
  EXPECT_EQ(io::find_exporter(ReportFormat::Auto), nullptr);
  EXPECT_EQ(io::find_exporter("no-such-format"), nullptr);
}

class FormatsOnDisk : public testing::TestDirectory {
 protected:
  FormatsOnDisk() : TestDirectory("formats") {}
};

TEST_F(FormatsOnDisk, AnUnknownExtensionIsRefusedWithEveryExtensionOfTheTable) {
  const Report report(testing::export_profile());
  try {
    report.export_to(path("run.pdf"));
    FAIL() << "a .pdf report was written";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot tell the report format from"), std::string::npos) << message;
    for (const FormatInfo& info : report_formats())
      for (const std::string_view extension : info.extensions)
        EXPECT_NE(message.find(std::string(extension)), std::string::npos) << extension << " missing: " << message;
  }
  EXPECT_FALSE(std::filesystem::exists(path("run.pdf")));
  report.export_to(path("run.htm"));
  std::ifstream html(path("run.htm"));
  std::string first;
  std::getline(html, first);
  EXPECT_NE(first.find("<!DOCTYPE html>"), std::string::npos) << first;
}

TEST_F(FormatsOnDisk, TheComparisonsWriteExactlyTheFormatsTheTableGivesThem) {
  const Profile profile = testing::export_profile();
  const Comparison comparison = compare(profile, profile);
  ModelComparison models;
  models.models.emplace_back();
  models.models.back().info.name = "tiny";
  for (const FormatInfo& info : report_formats()) {
    std::ostringstream out;
    if (info.renders(Document::Comparison)) {
      EXPECT_NO_THROW(write_comparison(comparison, out, info.format)) << info.name;
      EXPECT_FALSE(out.str().empty()) << info.name;
      EXPECT_NO_THROW(export_comparison(comparison, path(file("diff", info.extension())))) << info.name;
    } else {
      EXPECT_THROW(write_comparison(comparison, out, info.format), Error) << info.name;
      EXPECT_THROW(export_comparison(comparison, path("diff.any"), info.format), Error) << info.name;
    }
    std::ostringstream model_out;
    if (info.renders(Document::ModelComparison)) {
      EXPECT_NO_THROW(write_model_comparison(models, model_out, info.format)) << info.name;
      EXPECT_FALSE(model_out.str().empty()) << info.name;
    } else {
      try {
        write_model_comparison(models, model_out, info.format);
        ADD_FAILURE() << "a model comparison was written as " << info.name;
      } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("a model comparison is written as text, markdown"), std::string::npos)
            << e.what();
      }
    }
  }
  EXPECT_FALSE(std::filesystem::exists(path("diff.any")));
  // An extension that names no format, and one that names a format that writes no comparison.
  try {
    export_comparison(comparison, path("diff.pdf"));
    ADD_FAILURE() << "a comparison was written to .pdf";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("cannot tell the comparison's format from"), std::string::npos) << message;
    EXPECT_NE(message.find(".txt, .md, .markdown, .json, .html or .htm"), std::string::npos) << message;
  }
  try {
    export_comparison(comparison, path("diff.svg"));
    ADD_FAILURE() << "a comparison was written to .svg";
  } catch (const Error& e) {
    const std::string message = e.what();
    EXPECT_NE(message.find("a comparison is written as text, markdown, json or html, not flamegraph"), std::string::npos)
        << message;
  }
  EXPECT_FALSE(std::filesystem::exists(path("diff.pdf")));
  EXPECT_FALSE(std::filesystem::exists(path("diff.svg")));
}

}  // namespace
}  // namespace nnprof
