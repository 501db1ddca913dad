// Writes an report::Sentence in a report's markup: the numbers formatted with their units
// (io/format.hpp), names and code marked up and escaped the way the format needs.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "report/document.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::render {

/// How one output format writes the parts of a sentence. Every function receives raw text
/// and returns it ready for the output, escaped as the format needs.
struct Markup {
  std::string (*text)(std::string_view);   ///< words and formatted numbers
  std::string (*scope)(std::string_view);  ///< a scope name
  std::string (*code)(std::string_view);   ///< an identifier or call the user can type
  std::string (*key)(std::string_view);    ///< the key figure, already passed through `text`
};

/// `text` as it stands: a Markup function for parts a format does not mark up.
std::string unmarked(std::string_view text);

/// Plain text: everything through plain_text (io/format.hpp), so that no name drives the
/// terminal (the text report, and cells of tables that a renderer escapes itself).
extern const Markup kPlainText;

/// `profile` as the human-readable reports (text, Markdown, HTML) show it: `profile` itself
/// when no string is name_too_long for its limit, otherwise a copy, made in `storage`, whose names
/// are cut by capped_name to kNameDisplayLimit characters and free text to kTextDisplayLimit.
/// A 10 MB scope name then costs a report 200 characters wherever it appears, not 10 MB.
const Profile& with_capped_names(const Profile& profile, std::optional<Profile>& storage);

/// `sentence` in `markup`.
std::string text_of(const Profile& profile, const report::Sentence& sentence,
                   const Markup& markup = kPlainText);

}  // namespace nnprof::render
