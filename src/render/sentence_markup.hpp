// Writes an report::Sentence in a report's markup: the numbers formatted with their units
// (io/format.hpp), names and code marked up and escaped the way the format needs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "report/document.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::render {

/// How one output format writes the parts of a sentence. Every function appends raw text to
/// `out`, escaped and marked up as the format needs.
struct Markup {
  void (*text)(std::string& out, std::string_view);   ///< words and formatted numbers
  void (*scope)(std::string& out, std::string_view);  ///< a scope name
  void (*code)(std::string& out, std::string_view);   ///< an identifier or call the user can type
  std::string_view key_open;                          ///< before the key figure
  std::string_view key_close;                         ///< after it
};

/// Plain text: everything through plain_text (report/format.hpp), so that no name drives the
/// terminal (the text report, and cells of tables that a renderer escapes itself).
extern const Markup kPlainText;

/// `profile` as the human-readable reports (text, Markdown, HTML) show it: `profile` itself
/// when no string is name_too_long for its limit, otherwise a copy, made in `storage`, whose names
/// are cut by capped_name to kNameDisplayLimit characters and free text to kTextDisplayLimit.
/// A 10 MB scope name then costs a report 200 characters wherever it appears, not 10 MB.
const Profile& with_capped_names(const Profile& profile, std::optional<Profile>& storage);

/// `sentence` in `markup`, appended to `out`.
void append_text_of(std::string& out, const Profile& profile, const report::Sentence& sentence,
                    const Markup& markup = kPlainText);
/// `sentence` in `markup`.
std::string text_of(const Profile& profile, const report::Sentence& sentence,
                   const Markup& markup = kPlainText);

}  // namespace nnprof::render
