// `nnprof report`, `nnprof export` and `nnprof query`: reading .nnprof files.
#include <algorithm>
#include <iostream>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "commands.hpp"
#include "nnprof/nnprof.hpp"

namespace nnprof::cli {

Profile load_nonempty(const std::string& path) {
  Profile p = Profile::load(path);
  if (p.empty())
    throw Error("'" + path +
                "' holds an empty profile: no scopes, spans or memory counters were recorded. Check that the "
                "program ran instrumented code (NNPROF_SCOPE, start/stop) before the profile was saved.");
  return p;
}

namespace {

// "markdown, md": a format's name and its aliases, as the help lists them.
std::string names_of(const FormatInfo& info) {
  std::string names(info.name);
  for (const std::string_view alias : info.aliases) names += ", " + std::string(alias);
  return names;
}

// "a, b or c".
std::string sentence_list(const std::vector<std::string>& items) {
  std::string out;
  for (std::size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += i + 1 == items.size() ? " or " : ", ";
    out += items[i];
  }
  return out;
}

// The formats that render `document`, one a line in three columns: names, extensions, what
// it is. Without a final line break: a command's own footer follows after a blank line.
std::string formats_help(Document document) {
  struct Row {
    std::string names, extensions;
    std::string_view description;
  };
  std::vector<Row> rows;
  std::size_t names_width = 0, extensions_width = 0;
  for (const FormatInfo& info : report_formats()) {
    if (!info.renders(document)) continue;
    Row row{names_of(info), {}, info.description};
    for (const std::string_view extension : info.extensions)
      row.extensions += (row.extensions.empty() ? "" : ", ") + std::string(extension);
    names_width = std::max(names_width, row.names.size());
    extensions_width = std::max(extensions_width, row.extensions.size());
    rows.push_back(std::move(row));
  }
  std::string help = "Formats (FORMAT):";
  for (const Row& row : rows)
    help += fmt::format("\n  {:<{}}  {:<{}}  {}", row.names, names_width, row.extensions, extensions_width,
                        row.description);
  return help;
}

}  // namespace

void add_format_option(CLI::App* cmd, const std::string& names, ReportFormat& format, Document document,
                       const std::string& default_note) {
  std::vector<std::string> known;
  for (const FormatInfo& info : report_formats())
    if (info.renders(document)) known.emplace_back(info.name);
  cmd->add_option(names, format, fmt::format("{} ({})", sentence_list(known), default_note))
      ->transform(CLI::Validator(
          [document, known](std::string& input) -> std::string {
            const FormatInfo* info = find_format(input);
            if (info == nullptr)
              return fmt::format("unknown format '{}'; the formats are {}", input, sentence_list(known));
            if (!info->renders(document))
              return fmt::format("'{}' cannot write a {}; the formats are {}", input, to_string(document),
                                 sentence_list(known));
            input = std::to_string(static_cast<int>(info->format));
            return {};
          },
          "", "format"))
      ->type_name("FORMAT");
  cmd->footer([document] { return formats_help(document); });
}

namespace {

/// Writes `report` in `format` to `out_path`, or to stdout when it is empty or "-" (main
/// checks that standard output took it all).
void emit(const Report& report, ReportFormat format, const std::string& out_path) {
  if (out_path.empty() || out_path == "-") {
    report.write(std::cout, format);
    return;
  }
  report.export_to(out_path, format);
  std::cerr << "nnprof: wrote " << out_path << '\n';
}

/// What `report` and `export` both take: a profile, an output, and a format.
struct OutputOptions {
  std::string file, out;
  ReportFormat format = ReportFormat::Auto;
};

std::shared_ptr<OutputOptions> add_file_and_output(CLI::App* cmd) {
  auto o = std::make_shared<OutputOptions>();
  cmd->add_option("file", o->file, "Profile (.nnprof)")->required();
  cmd->add_option("-o,--output", o->out, "Output file (default: standard output)");
  return o;
}

}  // namespace

Action add_report_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("report", "Print or write a report of a .nnprof profile");
  auto o = add_file_and_output(cmd);
  add_format_option(cmd, "--format,-f", o->format, Document::Profile, "default: from -o's extension, else text");
  auto root = std::make_shared<std::string>();
  CLI::Option* critical = cmd->add_option("--critical-path", *root,
                                          "Print only the critical path: of the whole run, or of the scope ROOT")
                              ->expected(0, 1);
  auto options = std::make_shared<ReportOptions>();
  cmd->add_flag("--full-names", options->full_names,
                "Show functions' full signatures in tables (template arguments, parameters, clone suffixes) "
                "instead of their readable form; the HTML title and the JSON always hold them");
  cmd->add_option("--rows", options->rows,
                  "Rows of each ranking and list (hot paths, allocators, functions, kernels, call-tree lines); "
                  "default: 30 hot paths, 15 most called, 20 functions, ...")
      ->check(CLI::Range(std::size_t{1}, std::size_t{1000000}));
  cmd->add_option("--carbon-region", options->carbon.region,
                  "Where a monitored run's energy was used, for its carbon: an ISO 3166 code (FR, US, DE, ...; "
                  "default: NNPROF_CARBON_REGION, else the world average, said so in the report)");
  cmd->add_option("--pue", options->carbon.pue, "The data centre's power usage effectiveness (default 1.0)");
  cmd->add_option("--carbon-intensity", options->carbon.grams_per_kwh,
                  "Grid intensity in g CO2e/kWh, instead of the shipped table's (say where it comes from with "
                  "--carbon-source)");
  cmd->add_option("--carbon-source", options->carbon.source, "Where --carbon-intensity comes from");
  return [cmd, o, root, critical, options]() -> int {
    if (!cmd->parsed()) return -1;
    (void)carbon_estimate(SystemProfile{}, options->carbon);  // an unknown region or a PUE < 1: said now
    if (critical->count() > 0) {
      const Profile p = load_nonempty(o->file);
      write_critical_path(p, critical_path(p, *root), std::cout);
      return 0;
    }
    const Report report(load_nonempty(o->file), *options);
    ReportFormat format = o->format;
    if (format == ReportFormat::Auto && (o->out.empty() || o->out == "-")) format = ReportFormat::Text;
    emit(report, format, o->out);
    return 0;
  };
}

Action add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("export", "Convert a .nnprof profile to another tool's format");
  auto o = add_file_and_output(cmd);
  add_format_option(cmd, "--to", o->format, Document::Profile, "default: from -o's extension");
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    if (o->format == ReportFormat::Auto && (o->out.empty() || o->out == "-"))
      throw Error("say which format to export: --to FORMAT, or an output file whose extension names it (-o run.pb.gz)");
    emit(Report(load_nonempty(o->file)), o->format, o->out);
    return 0;
  };
}

Action add_query_command(CLI::App& app) {
  struct Options {
    std::string file, sql;
    double timeout_s = kDefaultQueryTimeoutSeconds;
  };
  auto o = std::make_shared<Options>();
  CLI::App* cmd = app.add_subcommand(
      "query", "Run SQL over a .nnprof profile (tables: thread, slice, scope_stats, scope_tree, counter, ...)");
  cmd->add_option("file", o->file, "Profile (.nnprof)")->required();
  cmd->add_option("sql", o->sql, "A read-only SQL query, e.g. \"select name, sum(dur) from slice group by name\"")
      ->required();
  cmd->add_option("--timeout", o->timeout_s,
                  "Stop the query after SECONDS (default 30; 0: no limit)")
      ->type_name("SECONDS")
      ->check(CLI::NonNegativeNumber);
  return [cmd, o]() -> int {
    if (!cmd->parsed()) return -1;
    write_query_result(query_profile(o->file, o->sql, o->timeout_s), std::cout);
    return 0;
  };
}

}  // namespace nnprof::cli
