// Making arbitrary bytes valid UTF-8, for formats that require it (XML, protobuf strings).
// Names come from threads (truncated by the kernel to 15 bytes, possibly mid-character),
// symbols and the program itself, so none of them can be assumed valid.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace nnprof::report {

/// The length of the well-formed UTF-8 sequence that starts `text` (1 to 4), or 0 when it
/// is not one (a stray continuation byte, a truncated, overlong or surrogate sequence, or
/// a code point above U+10FFFF). `text` must not be empty.
inline std::size_t utf8_sequence_length(std::string_view text) {
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  const unsigned char b0 = byte(0);
  if (b0 < 0x80) return 1;
  std::size_t n = 0;
  unsigned char lo = 0x80;  // bounds of the second byte (RFC 3629, section 4)
  unsigned char hi = 0xBF;
  if (b0 >= 0xC2 && b0 <= 0xDF) {
    n = 2;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    n = 3;
    if (b0 == 0xE0) lo = 0xA0;
    if (b0 == 0xED) hi = 0x9F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    n = 4;
    if (b0 == 0xF0) lo = 0x90;
    if (b0 == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (text.size() < n || byte(1) < lo || byte(1) > hi) return 0;
  for (std::size_t i = 2; i < n; ++i)
    if (byte(i) < 0x80 || byte(i) > 0xBF) return 0;
  return n;
}

/// `text` with every byte that does not belong to a well-formed UTF-8 sequence replaced by
/// U+FFFD; valid text comes back unchanged.
inline std::string valid_utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  while (!text.empty()) {
    const std::size_t n = utf8_sequence_length(text);
    if (n == 0) {
      out += "\xEF\xBF\xBD";
      text.remove_prefix(1);
    } else {
      out.append(text.substr(0, n));
      text.remove_prefix(n);
    }
  }
  return out;
}

}  // namespace nnprof::report
