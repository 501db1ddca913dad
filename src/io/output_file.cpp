#include "io/output_file.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {
[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(fmt::format("cannot write '{}': {}", path, why));
}

bool ends_with_ci(std::string_view s, std::string_view suffix) {
  if (s.size() < suffix.size()) return false;
  for (std::size_t i = 0; i < suffix.size(); ++i) {
    char c = s[s.size() - suffix.size() + i];
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    if (c != suffix[i]) return false;
  }
  return true;
}
}  // namespace

ReportFormat document_format_for_path(std::string_view path) {
  if (ends_with_ci(path, ".txt")) return ReportFormat::Text;
  if (ends_with_ci(path, ".md") || ends_with_ci(path, ".markdown")) return ReportFormat::Markdown;
  if (ends_with_ci(path, ".json")) return ReportFormat::Json;
  if (ends_with_ci(path, ".html") || ends_with_ci(path, ".htm")) return ReportFormat::Html;
  return ReportFormat::Auto;
}

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& writer) {
  if (path.empty()) fail(path, "no file name given");
  const std::filesystem::path target(path);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    fail(path, fmt::format("the directory '{}' does not exist; create it or choose another output path",
                           dir.string()));
  if (std::filesystem::is_directory(target, ec)) fail(path, "it is a directory; give a file name");
  const std::string tmp = fmt::format("{}.tmp-{}", path, static_cast<long>(getpid()));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out)
      fail(path, fmt::format("{} (check that '{}' is writable)", std::strerror(errno), dir.string()));
    try {
      writer(out);
      out.flush();
    } catch (...) {
      out.close();
      std::remove(tmp.c_str());
      throw;
    }
    if (!out) {
      const int err = errno;
      out.close();
      std::remove(tmp.c_str());
      fail(path, fmt::format("writing failed: {} (is the disk full?)", err ? std::strerror(err) : "I/O error"));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    fail(path, std::strerror(err));
  }
}

}  // namespace nnprof::io
