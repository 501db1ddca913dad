// `nnprof report`, `nnprof export` and `nnprof query`: reading .nnprof files.
#include <cctype>
#include <iostream>
#include <memory>
#include <string>

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

void add_format_option(CLI::App* cmd, const std::string& names, ReportFormat& format,
                       const std::map<std::string, ReportFormat>& formats, const std::string& help) {
  cmd->add_option(names, format, help)
      ->transform(CLI::Validator(
          [&formats](std::string& input) -> std::string {
            std::string key = input;
            for (char& c : key) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
            const auto it = formats.find(key);
            if (it == formats.end()) {
              std::string known;
              for (const auto& entry : formats) known += (known.empty() ? "" : ", ") + entry.first;
              return "unknown format '" + input + "'; the formats are " + known;
            }
            input = std::to_string(static_cast<int>(it->second));
            return {};
          },
          "", "format"))
      ->type_name("FORMAT");
}

namespace {

const std::map<std::string, ReportFormat> kReportFormats = {
    {"text", ReportFormat::Text}, {"md", ReportFormat::Markdown}, {"markdown", ReportFormat::Markdown},
    {"json", ReportFormat::Json}, {"html", ReportFormat::Html},     {"csv", ReportFormat::Csv},
    {"chrome", ReportFormat::Chrome}, {"collapsed", ReportFormat::Collapsed}, {"folded", ReportFormat::Collapsed},
    {"pprof", ReportFormat::Pprof},   {"flamegraph", ReportFormat::Flamegraph}, {"svg", ReportFormat::Flamegraph}};

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
  add_format_option(cmd, "--format,-f", o->format, kReportFormats,
                    "text, md, json, html or csv (default: from -o's extension, else text)");
  auto root = std::make_shared<std::string>();
  CLI::Option* critical = cmd->add_option("--critical-path", *root,
                                          "Print only the critical path: of the whole run, or of the scope ROOT")
                              ->expected(0, 1);
  return [cmd, o, root, critical]() -> int {
    if (!cmd->parsed()) return -1;
    if (critical->count() > 0) {
      const Profile p = load_nonempty(o->file);
      write_critical_path(p, critical_path(p, *root), std::cout);
      return 0;
    }
    const Report report(load_nonempty(o->file));
    ReportFormat format = o->format;
    if (format == ReportFormat::Auto && (o->out.empty() || o->out == "-")) format = ReportFormat::Text;
    emit(report, format, o->out);
    return 0;
  };
}

Action add_export_command(CLI::App& app) {
  CLI::App* cmd = app.add_subcommand("export", "Convert a .nnprof profile to another tool's format");
  auto o = add_file_and_output(cmd);
  add_format_option(cmd, "--to", o->format, kReportFormats,
                    "chrome (Chrome/Perfetto trace JSON), pprof (.pb.gz), flamegraph (.svg), collapsed (.folded), "
                    "json, csv, md, html or text (default: from -o's extension)");
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
