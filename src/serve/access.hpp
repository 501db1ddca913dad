// Who may read the live server: the address rule (loopback without a token, anything else
// only with one) and the token check, kept apart from HTTP so that they can be tested alone.
#pragma once

#include <string>
#include <string_view>

namespace nnprof::serve {

/// 127.0.0.0/8, ::1, "localhost": reachable from this machine only.
[[nodiscard]] bool is_loopback_address(std::string_view address) noexcept;

/// 32 hex digits (128 bits) from /dev/urandom. Throws nnprof::Error when it cannot be read.
[[nodiscard]] std::string generate_token();

/// a == b, in time that depends on the lengths only, not on where they differ.
[[nodiscard]] bool equal_in_constant_time(std::string_view a, std::string_view b) noexcept;

/// The token a request carries: the "Authorization: Bearer <token>" header's, else the
/// `token` query parameter's; empty when neither is present.
[[nodiscard]] std::string_view presented_token(std::string_view authorization_header,
                                               std::string_view token_parameter) noexcept;

/// Whether a request presenting `presented` may be answered: always when `required` is empty.
[[nodiscard]] bool token_accepted(std::string_view required, std::string_view presented) noexcept;

/// The token the server will require: `given`, else NNPROF_TOKEN, else none for a loopback
/// address. A non-loopback address without one gets a generated token when `generate` is set
/// (`generated` then says so: it must be printed for the user to find it), and is refused
/// otherwise. Throws nnprof::Error saying what to do in that case, and for a token with
/// characters that cannot travel in a header or URL (only A-Z a-z 0-9 - . _ ~) or shorter than 16.
[[nodiscard]] std::string required_token(std::string_view address, std::string_view given, bool generate,
                                         bool& generated);

}  // namespace nnprof::serve
