// What the renderers share: the profile that resolves a document's scope names.
#pragma once

#include "nnprof/profile.hpp"
#include "report/document.hpp"

namespace nnprof::render {

/// The profile whose string table resolves the document's Sentence scope parts; an empty one
/// when the document names no scope by id.
inline const Profile& names_of(const report::Document& document) {
  static const Profile kNoNames;
  return document.strings != nullptr ? *document.strings : kNoNames;
}

}  // namespace nnprof::render
