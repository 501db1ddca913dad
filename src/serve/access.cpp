#include "serve/access.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <arpa/inet.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::serve {

bool is_loopback_address(std::string_view address) noexcept {
  if (address == "localhost") return true;
  std::string text(address);
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  in_addr v4{};
  if (inet_pton(AF_INET, text.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6{};
  if (inet_pton(AF_INET6, text.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6) != 0;
  return false;
}

std::string generate_token() {
  unsigned char bytes[16];
  const int fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw Error(fmt::format("cannot open /dev/urandom to make an access token: {}", std::strerror(errno)));
  std::size_t got = 0;
  while (got < sizeof bytes) {
    const ssize_t n = ::read(fd, bytes + got, sizeof bytes - got);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ::close(fd);
      throw Error("cannot read /dev/urandom to make an access token; give one with NNPROF_TOKEN");
    }
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (const unsigned char b : bytes) {
    token += kHex[b >> 4];
    token += kHex[b & 15];
  }
  return token;
}

bool equal_in_constant_time(std::string_view a, std::string_view b) noexcept {
  // Every byte of the longer string is read whatever the contents, so the time tells an
  // attacker the length at most, never how many leading characters were right.
  const std::size_t n = a.size() > b.size() ? a.size() : b.size();
  unsigned difference = a.size() == b.size() ? 0u : 1u;
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    difference |= static_cast<unsigned>(x ^ y);
  }
  // Keeps the compiler from ending the loop at the first difference.
  volatile unsigned result = difference;
  return result == 0;
}

std::string_view presented_token(std::string_view authorization_header, std::string_view token_parameter) noexcept {
  constexpr std::string_view kBearer = "Bearer ";
  if (authorization_header.size() > kBearer.size()) {
    bool bearer = true;
    for (std::size_t i = 0; i < kBearer.size(); ++i) {
      const char c = authorization_header[i];
      const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      const char want = (kBearer[i] >= 'A' && kBearer[i] <= 'Z') ? static_cast<char>(kBearer[i] - 'A' + 'a') : kBearer[i];
      if (lower != want) bearer = false;
    }
    if (bearer) {
      std::string_view token = authorization_header.substr(kBearer.size());
      while (!token.empty() && token.front() == ' ') token.remove_prefix(1);
      while (!token.empty() && token.back() == ' ') token.remove_suffix(1);
      return token;
    }
  }
  return token_parameter;
}

bool token_accepted(std::string_view required, std::string_view presented) noexcept {
  if (required.empty()) return true;
  return equal_in_constant_time(required, presented);
}

namespace {
void check_token_text(std::string_view token, std::string_view origin) {
  for (const char c : token) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
                    c == '.' || c == '_' || c == '~';
    if (!ok)
      throw Error(fmt::format("the live server's token ({}) may hold only letters, digits and - . _ ~ "
                              "(it travels in a header and in the page's URL)",
                              origin));
  }
  if (token.size() < 16)
    throw Error(fmt::format("the live server's token ({}) has {} characters: use at least 16, or leave it "
                            "empty for a random one",
                            origin, token.size()));
}
}  // namespace

std::string required_token(std::string_view address, std::string_view given, bool generate, bool& generated) {
  generated = false;
  if (!given.empty()) {
    check_token_text(given, "given in the options");
    return std::string(given);
  }
  if (const char* env = std::getenv("NNPROF_TOKEN"); env != nullptr && *env != '\0') {
    check_token_text(env, "NNPROF_TOKEN");
    return env;
  }
  if (is_loopback_address(address)) return {};
  if (!generate)
    throw Error(fmt::format("refusing to serve the profile on {} without a token: anyone who can reach that "
                            "address could read it. Set NNPROF_TOKEN (16 or more of A-Z a-z 0-9 - . _ ~), give "
                            "LiveServerOptions::token, set LiveServerOptions::generate_token to have one made and "
                            "printed, or bind 127.0.0.1",
                            address));
  generated = true;
  return generate_token();
}

}  // namespace nnprof::serve
