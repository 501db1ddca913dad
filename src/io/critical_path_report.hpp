// The critical-path section of the text, Markdown, HTML and JSON reports, written once here
// so that each report adds it with one call. Reports show it when the profile has flows.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>

#include <nlohmann/json.hpp>

#include "io/format.hpp"
#include "io/report_tables.hpp"
#include "nnprof/critical_path.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Per scope name: rank, scope, time on the path, its share, steps, threads.
TextTable critical_path_scopes_table(const Profile& profile, const CriticalPath& path, std::size_t max_rows,
                                     Headers headers);

/// Steps in time order: start (since the session's start), step, thread, duration, share. With
/// more than `max_rows` steps, the `max_rows` longest (still in time order).
TextTable critical_path_steps_table(const Profile& profile, const CriticalPath& path, std::size_t max_rows,
                                    Headers headers);

/// The sections: a heading, the summary sentence, the two tables.
void write_critical_path_text(const Profile& profile, std::ostream& out);
/// The text section of `path`, a critical path of `profile` (nnprof::write_critical_path).
void write_critical_path_text(const Profile& profile, const CriticalPath& path, std::ostream& out);
void write_critical_path_markdown(const Profile& profile, std::ostream& out);
/// A <section id="critical-path"> to append to the HTML page.
void write_critical_path_html(const Profile& profile, std::string& out);
/// The JSON report's "critical_path" object (docs/JSON_SCHEMA.md).
nlohmann::ordered_json critical_path_json(const Profile& profile, const CriticalPath& path);

}  // namespace nnprof::io
