#include "analysis/sentence.hpp"

#include "analysis/function_name.hpp"

#include <limits>
#include <utility>

namespace nnprof::analysis {
namespace {

Part make_part(Part::Kind kind, std::variant<std::uint64_t, std::int64_t, double> number,
               std::string_view text = {}) {
  Part part;
  part.kind = kind;
  part.number = number;
  part.text = std::string(text);
  return part;
}

}  // namespace

Sentence& Sentence::add(Part part) {
  parts_.push_back(std::move(part));
  return *this;
}

Sentence& Sentence::words(std::string_view text) {
  // Adjacent words merge, so that a sentence is as few parts as it reads.
  if (!parts_.empty() && parts_.back().kind == Part::Kind::Words) {
    parts_.back().text += text;
    return *this;
  }
  return add(make_part(Part::Kind::Words, std::uint64_t{0}, text));
}

Sentence& Sentence::code(std::string_view text) {
  return add(make_part(Part::Kind::Code, std::uint64_t{0}, text));
}

Sentence& Sentence::function(std::string_view demangled) { return code(readable_function(demangled)); }

Sentence& Sentence::scope(StringId name) {
  Part part = make_part(Part::Kind::Scope, std::uint64_t{0});
  part.scope = name;
  return add(std::move(part));
}

Sentence Sentence::with_names(const Profile& profile) const {
  Sentence named = *this;
  for (Part& part : named.parts_) {
    if (part.kind != Part::Kind::Scope) continue;
    part.kind = Part::Kind::Name;
    part.text = profile.str(part.scope);
    part.scope = kNone;
  }
  return named;
}

Sentence& Sentence::name(std::string_view text) {
  return add(make_part(Part::Kind::Name, std::uint64_t{0}, text));
}

Sentence& Sentence::duration(std::uint64_t ns) { return add(make_part(Part::Kind::Duration, ns)); }
Sentence& Sentence::duration(double ns) { return add(make_part(Part::Kind::Duration, ns)); }
Sentence& Sentence::share(double fraction) { return add(make_part(Part::Kind::Share, fraction)); }
Sentence& Sentence::count(std::uint64_t n) { return add(make_part(Part::Kind::Count, n)); }

Sentence& Sentence::count(std::uint64_t n, std::string_view one, std::string_view many) {
  count(n);
  words(" ");
  return words(n == 1 ? one : many);
}

Sentence& Sentence::bytes(std::uint64_t bytes) { return add(make_part(Part::Kind::Bytes, bytes)); }
Sentence& Sentence::bytes(std::int64_t bytes) { return add(make_part(Part::Kind::Bytes, bytes)); }

Sentence& Sentence::rate(double per_second, std::string_view unit) {
  return add(make_part(Part::Kind::Rate, per_second, unit));
}

Sentence& Sentence::byte_rate(double bytes_per_second) {
  return add(make_part(Part::Kind::ByteRate, bytes_per_second));
}

Sentence& Sentence::si(double value, std::string_view unit) {
  return add(make_part(Part::Kind::Si, value, unit));
}

Sentence& Sentence::ratio(double value, std::string_view unit) {
  return add(make_part(Part::Kind::Ratio, value, unit));
}

Sentence& Sentence::key() {
  if (!parts_.empty()) parts_.back().key = true;
  return *this;
}

Sentence& Sentence::append(const Sentence& other) {
  for (const Part& part : other.parts_) {
    if (part.kind == Part::Kind::Words) {
      words(part.text);
    } else {
      add(part);
    }
  }
  return *this;
}

double share_of(std::uint64_t part, std::uint64_t whole) {
  if (whole == 0) return std::numeric_limits<double>::quiet_NaN();
  return static_cast<double>(part) / static_cast<double>(whole);
}

}  // namespace nnprof::analysis
