#include "io/sentence_markup.hpp"

#include <cstdint>
#include <type_traits>
#include <variant>

#include "io/format.hpp"

namespace nnprof::io {
namespace {

// The part's number as the output reads it, with its unit.
std::string format_number(const analysis::Part& part) {
  using Kind = analysis::Part::Kind;
  return std::visit(
      [&](auto value) -> std::string {
        using T = decltype(value);
        switch (part.kind) {
          case Kind::Duration:
            return format_duration(value);
          case Kind::Share:
            return format_percent(static_cast<double>(value));
          case Kind::Bytes:
            if constexpr (std::is_same_v<T, double>) {
              return format_bytes(static_cast<std::int64_t>(value));
            } else {
              return format_bytes(value);
            }
          case Kind::Rate:
            return format_rate(static_cast<double>(value), part.text);
          case Kind::ByteRate:
            return format_byte_rate(static_cast<double>(value));
          case Kind::Si:
            return format_si(static_cast<double>(value), part.text);
          case Kind::Ratio:
            return format_ratio(static_cast<double>(value), part.text);
          case Kind::Count:
          default:
            return format_count(static_cast<std::uint64_t>(value));
        }
      },
      part.number);
}

}  // namespace

std::string unmarked(std::string_view text) { return std::string(text); }

const Markup kPlainText{unmarked, unmarked, unmarked, unmarked};

std::string render(const Profile& profile, const analysis::Sentence& sentence, const Markup& markup) {
  using Kind = analysis::Part::Kind;
  std::string out;
  for (const analysis::Part& part : sentence.parts()) {
    switch (part.kind) {
      case Kind::Words:
        out += markup.text(part.text);
        break;
      case Kind::Code:
        out += markup.code(part.text);
        break;
      case Kind::Scope:
        out += markup.scope(profile.str(part.scope));
        break;
      default: {
        const std::string number = markup.text(format_number(part));
        out += part.key ? markup.key(number) : number;
      }
    }
  }
  return out;
}

}  // namespace nnprof::io
