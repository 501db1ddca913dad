// Reading back the reports nnprof writes, for `compare` and `model-compare`: the JSON report
// (docs/JSON_SCHEMA.md, "nnprof-report") holds every per-scope figure they use, and the
// Markdown report carries the part of it they need in an HTML comment at its end, which
// GitHub and other Markdown viewers do not show:
//
//   <!-- nnprof-data 1
//   {"schema":"nnprof-report", ...}
//   -->
//
// The JSON is on one line. An HTML comment ends at the first "-->", and "--" can only occur
// inside JSON strings, so every "--" there is written "-\u002d" (a JSON escape of the same
// text): the block is plain JSON that any JSON parser reads, and the comment cannot end early.
//
// What a report cannot give back is listed in ImportedRun::notes (no spans, so the rank test
// cannot run; see load_run in nnprof/compare.hpp).
#pragma once

#include <iosfwd>
#include <string>
#include <string_view>

#include "nnprof/compare.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// The first line of the embedded block, up to the format version.
inline constexpr std::string_view kMarkdownDataOpening = "<!-- nnprof-data";
/// The version after it: raised when the block's encoding (not the JSON schema) changes.
inline constexpr int kMarkdownDataVersion = 1;

/// Writes the block above for `profile`: its JSON report (with full, uncapped names) cut to
/// what comparisons read: metadata, annotations, timing, memory, heap totals, compute, the
/// call tree and completeness; each call-tree node also gets "std_ns", "flops" and "bytes"
/// (model-compare pools inference times and sums FLOPs over subtrees). Starts with a blank
/// line, so it never joins the text above.
void write_markdown_data_block(const Profile& profile, std::ostream& out);

/// Rebuilds from a JSON report (`text`, the whole document) the parts of a Profile that
/// compare and model-compare use. `source` names the file in error messages. Throws
/// nnprof::Error when the text is not JSON, not an nnprof report, of a later schema version,
/// or a field has the wrong type.
LoadedRun import_json_report(std::string_view text, const std::string& source);

/// The same from a Markdown report with the block above. Throws nnprof::Error when the block
/// is missing (a Markdown file nnprof did not write, or an older one), cut short or corrupt.
LoadedRun import_markdown_report(std::string_view text, const std::string& source);

}  // namespace nnprof::io
