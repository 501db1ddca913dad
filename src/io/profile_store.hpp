// What profile_store.cpp offers beyond Profile::save and Profile::load: a save whose spans are
// streamed by the caller, and a load whose spans are read one at a time, rather than held in
// memory (nnprof merge of many ranks, each of any length).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "io/sqlite.hpp"
#include "nnprof/profile.hpp"

namespace nnprof::io {

/// Writes a .nnprof file at `path` as Profile::save does (atomically, one transaction), except
/// that `stream` first writes the rows of slice_data and args itself into the fresh database
/// (schema in docs/FORMAT.md; slice ids and arg set ids from 0) and then returns the rest of
/// the profile, which must hold no spans nor span arguments and is written after them. The
/// returned profile's completeness, flows and diagnostics must agree with the streamed rows.
void save_streamed(const std::string& path, const std::function<const Profile&(sqlite::Database&)>& stream);

/// Which thread each slice of a file ran on, for the checks of the tables that point at slices
/// (flows, GPU launches): the loaded spans' own, or, for a profile loaded without its spans,
/// read from the file by id (slice_data's id is its primary key: a lookup, no memory).
class SliceThreads {
 public:
  explicit SliceThreads(const Profile& loaded) : loaded_(&loaded) {}
  SliceThreads(sqlite::Database& db, std::uint64_t slices);
  ~SliceThreads();
  SliceThreads(const SliceThreads&) = delete;
  SliceThreads& operator=(const SliceThreads&) = delete;

  /// The thread of slice `slice`; nullopt when there is no such slice.
  [[nodiscard]] std::optional<std::uint32_t> thread_of(std::uint32_t slice) const;

 private:
  const Profile* loaded_ = nullptr;
  std::uint64_t slices_ = 0;
  std::unique_ptr<sqlite::Statement> lookup_;
};

/// A .nnprof file with everything but its spans and their arguments, checked as Profile::load
/// checks it; `slices` gets the number of spans the file holds, which a SpanReader gives.
[[nodiscard]] Profile load_without_spans(const std::string& path, std::uint64_t& slices);

/// Whether the .nnprof file at `path` holds a string starting with `prefix` (a scope name, an
/// argument key), without loading it: a cheap look before a pass that only some files need.
/// False for a file that cannot be read as a profile (its loading says why).
[[nodiscard]] bool holds_string_with_prefix(const std::string& path, std::string_view prefix) noexcept;

/// The spans of a .nnprof file (format 8 or later) and each one's arguments, one at a time in
/// the file's order, checked as Profile::load checks them. Memory: the file's distinct argument
/// sets, not its spans.
class SpanReader {
 public:
  /// `rest`: the same file's load_without_spans, whose call tree and threads the spans name.
  SpanReader(const std::string& path, const Profile& rest);
  ~SpanReader();
  SpanReader(const SpanReader&) = delete;
  SpanReader& operator=(const SpanReader&) = delete;

  /// The next span and its arguments (each SpanArg::span is the span's index); false at the
  /// end, after checking that every argument set of the file belonged to some span.
  bool next(Span& span, std::vector<SpanArg>& args);

 private:
  struct State;
  std::unique_ptr<State> state_;
};

}  // namespace nnprof::io
