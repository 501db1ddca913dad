// What the renderers share: the profile that resolves a document's scope names.
#pragma once

#include <variant>

#include "nnprof/profile.hpp"
#include "report/document.hpp"

namespace nnprof::render {

/// The profile whose string table resolves the document's Sentence scope parts; an empty one
/// when the document names no scope by id.
inline const Profile& names_of(const report::Document& document) {
  static const Profile kNoNames;
  return document.strings != nullptr ? *document.strings : kNoNames;
}

/// Whether a section holds nothing but pictures: formats without pictures leave it out.
inline bool only_pictures(const report::Section& section) {
  for (const report::Block& block : section.blocks)
    if (!std::holds_alternative<report::Picture>(block)) return false;
  return true;
}

}  // namespace nnprof::render
