#include "render/sentence_markup.hpp"

#include <cstdint>
#include <map>
#include <type_traits>
#include <variant>

#include "report/format.hpp"

namespace nnprof::render {

using report::capped_name;
using report::format_byte_rate;
using report::format_bytes;
using report::format_count;
using report::format_duration;
using report::format_percent;
using report::format_rate;
using report::format_ratio;
using report::format_si;
using report::kNameDisplayLimit;
using report::kTextDisplayLimit;
using report::name_too_long;
namespace {

// The part's number as the output reads it, with its unit.
std::string format_number(const report::Part& part) {
  using Kind = report::Part::Kind;
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

const Markup kPlainText{report::append_plain_text, report::append_plain_text, report::append_plain_text, "", ""};

namespace {

// Calls `f` on every string of `p` that a report may print, with the limit for it.
template <typename P, typename F>
void for_each_shown_string(P& p, F&& f) {
  for (auto& s : p.strings) f(s, kNameDisplayLimit);
  for (auto& t : p.threads) f(t.name, kNameDisplayLimit);
  for (auto* s : {&p.meta.nnprof_version, &p.meta.hostname, &p.meta.os, &p.meta.cpu_model, &p.meta.compiler})
    f(*s, kNameDisplayLimit);
  f(p.meta.command_line, kTextDisplayLimit);
  for (auto* s : {&p.cpu.mode, &p.cpu.mechanism, &p.cpu.unwinder, &p.heap.source, &p.completeness.buffer_policy})
    f(*s, kNameDisplayLimit);
  for (auto& d : p.diagnostics) f(d.message, kTextDisplayLimit);
  for (auto& a : p.span_args) {
    f(a.key, kNameDisplayLimit);
    f(a.string_value, kTextDisplayLimit);
  }
  for (auto& m : p.metrics) f(m.unit, kNameDisplayLimit);
  f(p.gpu.summary.status, kTextDisplayLimit);
  f(p.gpu.summary.clock_source, kNameDisplayLimit);
  for (auto& d : p.gpu.devices) {
    f(d.name, kNameDisplayLimit);
    f(d.pci_bus_id, kNameDisplayLimit);
  }
  for (auto& c : p.gpu.counters) {
    f(c.name, kNameDisplayLimit);
    f(c.unit, kNameDisplayLimit);
  }
}

}  // namespace

const Profile& with_capped_names(const Profile& profile, std::optional<Profile>& storage) {
  bool long_string = false;
  for_each_shown_string(profile,
                        [&](const std::string& s, std::size_t limit) { long_string |= name_too_long(s, limit); });
  for (const auto& [key, value] : profile.annotations)
    long_string |= name_too_long(key, kNameDisplayLimit) || name_too_long(value, kTextDisplayLimit);
  if (!long_string) return profile;
  Profile& capped = storage.emplace(profile);
  for_each_shown_string(capped, [](std::string& s, std::size_t limit) {
    if (name_too_long(s, limit)) s = capped_name(s, limit);
  });
  std::map<std::string, std::string> annotations;
  for (const auto& [key, value] : capped.annotations)
    annotations.emplace(capped_name(key, kNameDisplayLimit), capped_name(value, kTextDisplayLimit));
  capped.annotations = std::move(annotations);
  return capped;
}

void append_text_of(std::string& out, const Profile& profile, const report::Sentence& sentence,
                    const Markup& markup) {
  using Kind = report::Part::Kind;
  for (const report::Part& part : sentence.parts()) {
    switch (part.kind) {
      case Kind::Words:
        markup.text(out, part.text);
        break;
      case Kind::Code:
        markup.code(out, part.text);
        break;
      case Kind::Scope:
        markup.scope(out, profile.str(part.scope));
        break;
      case Kind::Name:
        markup.scope(out, part.text);
        break;
      default:
        if (part.key) out += markup.key_open;
        markup.text(out, format_number(part));
        if (part.key) out += markup.key_close;
    }
  }
}

std::string text_of(const Profile& profile, const report::Sentence& sentence, const Markup& markup) {
  std::string out;
  append_text_of(out, profile, sentence, markup);
  return out;
}

}  // namespace nnprof::render
