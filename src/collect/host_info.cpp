#include "collect/host_info.hpp"

#include <fcntl.h>
#include <sched.h>

#include <algorithm>
#include <thread>

#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string_view>
#include <thread>

#include <fmt/format.h>

namespace nnprof::collect {

namespace {
std::uint64_t status_field_kib(std::string_view text, std::string_view key) {
  const auto at = text.find(key);
  if (at == std::string_view::npos) return 0;
  std::uint64_t v = 0;
  for (std::size_t i = at + key.size(); i < text.size() && text[i] != '\n'; ++i)
    if (text[i] >= '0' && text[i] <= '9') v = v * 10 + static_cast<std::uint64_t>(text[i] - '0');
  return v;
}

std::string cpu_model_name() {
  std::ifstream in("/proc/cpuinfo");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return {};
}

std::string process_command_line() {
  std::ifstream in("/proc/self/cmdline", std::ios::binary);
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  for (char& c : raw)
    if (c == '\0') c = ' ';
  return raw;
}

std::string compiler_name() {
#if defined(__clang__)
  return fmt::format("clang {}.{}.{}", __clang_major__, __clang_minor__, __clang_patchlevel__);
#elif defined(__GNUC__)
  return fmt::format("g++ {}.{}.{}", __GNUC__, __GNUC_MINOR__, __GNUC_PATCHLEVEL__);
#else
  return "unknown";
#endif
}
}  // namespace

const HostInfo& read_host_info() {
  // Read once and never destroyed: profiles are taken often, and also after main returns
  // (static destructors, the preload agent's atexit handler). A function-local static would
  // be destroyed before an atexit handler registered ahead of its first use runs, and that
  // handler would then read freed strings into the profile's metadata.
  static const HostInfo& cached = *new HostInfo([] {
    HostInfo h;
    utsname u{};
    if (uname(&u) == 0) {
      h.hostname = u.nodename;
      h.os = fmt::format("{} {} {}", u.sysname, u.release, u.machine);
    }
    h.cpu_model = cpu_model_name();
    h.logical_cpus = std::thread::hardware_concurrency();
    h.compiler = compiler_name();
    h.command_line = process_command_line();
    h.pid = static_cast<std::int64_t>(getpid());
    return h;
  }());
  return cached;
}

std::uint32_t usable_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return static_cast<std::uint32_t>(std::max(1, CPU_COUNT(&set)));
  return std::max(1u, std::thread::hardware_concurrency());
}

ProcessMemory read_process_memory() noexcept {
  char buf[4096];
  const int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  const ssize_t n = read(fd, buf, sizeof buf);
  close(fd);
  if (n <= 0) return {};
  const std::string_view text(buf, static_cast<std::size_t>(n));
  return {status_field_kib(text, "VmRSS:") * 1024, status_field_kib(text, "VmHWM:") * 1024};
}

}  // namespace nnprof::collect
