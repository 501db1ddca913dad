// nnprof's one format table: names, aliases, extensions, help lines and the documents each
// format renders. Report::export_to, the exporter registry, the comparisons and every CLI
// --format option read it.
#include "io/formats.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof {
namespace {

constexpr std::uint8_t bit(Document document) { return static_cast<std::uint8_t>(1U << static_cast<unsigned>(document)); }

// The report formats render every document; the formats of other tools only the profile,
// whose data they carry.
constexpr std::uint8_t kProfileOnly = bit(Document::Profile);
constexpr std::uint8_t kEveryDocument =
    bit(Document::Profile) | bit(Document::Comparison) | bit(Document::ModelComparison);

constexpr std::string_view kTextExtensions[] = {".txt"};
constexpr std::string_view kMarkdownAliases[] = {"md"};
constexpr std::string_view kMarkdownExtensions[] = {".md", ".markdown"};
constexpr std::string_view kJsonExtensions[] = {".json"};
constexpr std::string_view kHtmlExtensions[] = {".html", ".htm"};
constexpr std::string_view kCsvExtensions[] = {".csv"};
constexpr std::string_view kChromeExtensions[] = {".trace.json"};
constexpr std::string_view kCollapsedAliases[] = {"folded"};
constexpr std::string_view kCollapsedExtensions[] = {".folded", ".collapsed"};
constexpr std::string_view kPprofExtensions[] = {".pb.gz"};
constexpr std::string_view kFlamegraphAliases[] = {"svg"};
constexpr std::string_view kFlamegraphExtensions[] = {".svg"};

// The names are string literals: to_string(ReportFormat) hands out their data() as a C string.
constexpr std::array<FormatInfo, 9> kFormats{{
    {ReportFormat::Text, "text", {}, kTextExtensions,
     "plain text for a terminal", kEveryDocument},
    {ReportFormat::Markdown, "markdown", kMarkdownAliases, kMarkdownExtensions,
     "Markdown, for a pull request, an issue or a wiki", kEveryDocument},
    {ReportFormat::Json, "json", {}, kJsonExtensions,
     "JSON for scripts (docs/JSON_SCHEMA.md)", kEveryDocument},
    {ReportFormat::Html, "html", {}, kHtmlExtensions,
     "a self-contained web page with charts", kEveryDocument},
    {ReportFormat::Csv, "csv", {}, kCsvExtensions,
     "one row per scope, for spreadsheets and pandas", kProfileOnly},
    {ReportFormat::Chrome, "chrome", {}, kChromeExtensions,
     "Chrome trace JSON for ui.perfetto.dev and chrome://tracing", kProfileOnly},
    {ReportFormat::Collapsed, "collapsed", kCollapsedAliases, kCollapsedExtensions,
     "folded CPU stacks for flamegraph.pl, inferno and speedscope", kProfileOnly},
    {ReportFormat::Pprof, "pprof", {}, kPprofExtensions,
     "the CPU samples as a gzipped pprof profile (go tool pprof)", kProfileOnly},
    {ReportFormat::Flamegraph, "flamegraph", kFlamegraphAliases, kFlamegraphExtensions,
     "an interactive flame graph of the CPU samples (SVG)", kProfileOnly},
}};

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool iequals(std::string_view a, std::string_view b) {
  return std::ranges::equal(a, b, [](char x, char y) { return lower(x) == lower(y); });
}

bool iends_with(std::string_view text, std::string_view suffix) {
  return text.size() >= suffix.size() && iequals(text.substr(text.size() - suffix.size()), suffix);
}

}  // namespace

const char* to_string(ReportFormat format) noexcept {
  const FormatInfo* info = find_format(format);
  return info == nullptr ? "auto" : info->name.data();
}

const char* to_string(Document document) noexcept {
  switch (document) {
    case Document::Profile: return "profile report";
    case Document::Comparison: return "comparison";
    case Document::ModelComparison: return "model comparison";
  }
  return "document";
}

std::span<const FormatInfo> report_formats() noexcept { return kFormats; }

const FormatInfo* find_format(ReportFormat format) noexcept {
  const auto it = std::ranges::find(kFormats, format, &FormatInfo::format);
  return it == kFormats.end() ? nullptr : &*it;
}

const FormatInfo* find_format(std::string_view name) noexcept {
  for (const FormatInfo& info : kFormats) {
    if (iequals(info.name, name)) return &info;
    for (const std::string_view alias : info.aliases)
      if (iequals(alias, name)) return &info;
  }
  return nullptr;
}

const FormatInfo* find_format_for_path(std::string_view path, Document document) noexcept {
  const FormatInfo* best = nullptr;
  std::size_t best_length = 0;
  for (const FormatInfo& info : kFormats) {
    if (!info.renders(document)) continue;
    for (const std::string_view extension : info.extensions) {
      if (extension.size() > best_length && iends_with(path, extension)) {
        best = &info;
        best_length = extension.size();
      }
    }
  }
  return best;
}

namespace io {
namespace {

// "a, b or c".
std::string sentence_list(const std::vector<std::string_view>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// "the report format", "the comparison's format": how the messages name what they look for.
std::string format_of(Document document) {
  return document == Document::Profile ? std::string("the report format")
                                       : fmt::format("the {}'s format", to_string(document));
}

}  // namespace

std::string format_names(Document document) {
  std::vector<std::string_view> names;
  for (const FormatInfo& info : kFormats)
    if (info.renders(document)) names.push_back(info.name);
  return sentence_list(names);
}

std::string format_extensions(Document document) {
  std::vector<std::string_view> extensions;
  for (const FormatInfo& info : kFormats)
    if (info.renders(document)) extensions.insert(extensions.end(), info.extensions.begin(), info.extensions.end());
  return sentence_list(extensions);
}

ReportFormat checked_format(ReportFormat format, Document document) {
  const FormatInfo* info = find_format(format);
  if (info != nullptr && info->renders(document)) return format;
  throw Error(fmt::format("a {} is written as {}, not {}", to_string(document), format_names(document),
                          to_string(format)));
}

ReportFormat format_for_path(const std::string& path, Document document) {
  if (const FormatInfo* info = find_format_for_path(path, document); info != nullptr) return info->format;
  // An extension of a format that cannot write this document: say so, rather than that the
  // extension means nothing.
  if (const FormatInfo* other = find_format_for_path(path, Document::Profile); other != nullptr)
    throw Error(fmt::format("a {} is written as {}, not {} (the format of '{}'): use a {} file name, or name the "
                            "format explicitly",
                            to_string(document), format_names(document), other->name, path,
                            format_extensions(document)));
  throw Error(fmt::format("cannot tell {} from '{}': use a {} file name, or name the format explicitly",
                          format_of(document), path, format_extensions(document)));
}

}  // namespace io
}  // namespace nnprof
