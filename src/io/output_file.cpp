#include "io/output_file.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>
#include <ostream>
#include <random>
#include <streambuf>
#include <string_view>
#include <utility>

#include <fmt/format.h>

#include "nnprof/error.hpp"

namespace nnprof::io {

namespace {

[[noreturn]] void fail(const std::string& path, const std::string& why) {
  throw Error(fmt::format("cannot write '{}': {}", path, why));
}

/// An owned descriptor.
class Fd {
 public:
  explicit Fd(int fd = -1) noexcept : fd_(fd) {}
  Fd(Fd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  Fd& operator=(Fd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() { reset(); }
  [[nodiscard]] int get() const noexcept { return fd_; }
  /// Closes the descriptor: 0, or the errno of a failed close (NFS reports write errors here).
  int close() noexcept {
    if (fd_ < 0) return 0;
    const int rc = ::close(std::exchange(fd_, -1));
    return rc == 0 || errno == EINTR ? 0 : errno;
  }

 private:
  void reset() noexcept {
    if (fd_ >= 0) ::close(std::exchange(fd_, -1));
  }
  int fd_;
};

/// Writes all of [data, data + size) to `fd`: 0, or the errno of the failure.
int write_all(int fd, const char* data, std::size_t size) noexcept {
  while (size > 0) {
    const ssize_t n = ::write(fd, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    data += n;
    size -= static_cast<std::size_t>(n);
  }
  return 0;
}

/// A stream buffer over a descriptor that keeps the first write error, so that the message
/// can name the cause (ENOSPC, EIO) rather than "the stream failed".
class FdStreambuf final : public std::streambuf {
 public:
  explicit FdStreambuf(int fd) : fd_(fd) { reset_area(); }
  [[nodiscard]] int error() const noexcept { return error_; }

 protected:
  int_type overflow(int_type ch) override {
    if (!drain()) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    const auto room = static_cast<std::streamsize>(epptr() - pptr());
    if (n <= room) {
      std::memcpy(pptr(), s, static_cast<std::size_t>(n));
      pbump(static_cast<int>(n));
      return n;
    }
    if (!drain()) return 0;
    if (error_ == 0) error_ = write_all(fd_, s, static_cast<std::size_t>(n));
    return error_ == 0 ? n : 0;
  }
  int sync() override { return drain() ? 0 : -1; }

 private:
  void reset_area() { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  bool drain() {
    if (error_ == 0) error_ = write_all(fd_, pbase(), static_cast<std::size_t>(pptr() - pbase()));
    reset_area();
    return error_ == 0;
  }
  int fd_;
  int error_ = 0;
  std::array<char, 1 << 16> buffer_{};
};

/// Twelve characters no other process can guess, for temporary file names.
std::string random_suffix() {
  static constexpr std::string_view kAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  std::array<unsigned char, 12> bytes{};
  if (::getrandom(bytes.data(), bytes.size(), 0) != static_cast<ssize_t>(bytes.size())) {
    std::random_device rd;
    for (unsigned char& b : bytes) b = static_cast<unsigned char>(rd());
  }
  std::string s;
  for (const unsigned char b : bytes) s += kAlphabet[b % kAlphabet.size()];
  return s;
}

/// A temporary file created by this process: removed when destroyed unless renamed onto its target.
class TempFile {
 public:
  /// Creates a new file named after `base` (base + ".tmp-" + random) exclusively and without
  /// following a symlink, with `mode` less the umask; failures name `target`.
  TempFile(const std::string& target, const std::string& base, mode_t mode) {
    const std::filesystem::path b(base);
    // Beside a long name the suffix could pass NAME_MAX: a short name in the same directory.
    const bool short_name = b.filename().string().size() > 200;
    for (int attempt = 0; attempt < 100; ++attempt) {
      name_ = short_name ? (b.parent_path() / (".nnprof.tmp-" + random_suffix())).string()
                         : base + ".tmp-" + random_suffix();
      fd_ = Fd(::open(name_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, mode));
      if (fd_.get() >= 0) return;
      if (errno != EEXIST) {
        const int err = errno;
        name_.clear();
        const std::string dir = b.has_parent_path() ? b.parent_path().string() : ".";
        fail(target, fmt::format("cannot create a file in '{}': {} (check that the directory is writable)", dir,
                                 std::strerror(err)));
      }
    }
    name_.clear();
    fail(target, "could not find an unused temporary file name");
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!name_.empty()) ::unlink(name_.c_str());
  }
  [[nodiscard]] const std::string& name() const noexcept { return name_; }
  [[nodiscard]] Fd& fd() noexcept { return fd_; }
  /// Renames the file onto `target`; on failure it is removed and Error thrown.
  void rename_onto(const std::string& path, const std::string& target) {
    if (const int err = fd_.close(); err != 0) fail(path, std::strerror(err));
    if (std::rename(name_.c_str(), target.c_str()) != 0) fail(path, std::strerror(errno));
    name_.clear();
  }

 private:
  std::string name_;
  Fd fd_;
};

/// Where an output goes once `path` is resolved.
struct Target {
  /// Replace: the regular file (existing or not) that the temporary file is renamed onto.
  std::string file;
  std::optional<struct stat> existing;  ///< the file replaced, for its mode and owner
  /// Direct: the open descriptor written to (a device, a FIFO, a descriptor of this process).
  Fd direct;
};

/// N of "/dev/fd/N", "/proc/self/fd/N", "/proc/thread-self/fd/N" or "/proc/<own pid>/fd/N":
/// names of this process's own descriptors, written to as they are (as a shell redirection
/// would), not reopened or replaced.
std::optional<int> own_descriptor(std::string_view p) {
  std::string_view rest;
  for (const std::string& prefix : {std::string("/dev/fd/"), std::string("/proc/self/fd/"),
                                    std::string("/proc/thread-self/fd/"), fmt::format("/proc/{}/fd/", ::getpid())}) {
    if (p.starts_with(prefix)) {
      rest = p.substr(prefix.size());
      break;
    }
  }
  if (rest.empty() || rest.size() > 9 || rest.find_first_not_of("0123456789") != std::string_view::npos)
    return std::nullopt;
  int fd = 0;
  for (const char c : rest) fd = fd * 10 + (c - '0');
  return fd;
}

/// Follows `path` through symlinks (as open(2) would) to what the output must go to.
Target resolve(const std::string& path) {
  if (path.empty()) fail(path, "no file name given");
  std::string current = path;
  for (int hops = 0;; ++hops) {
    if (const auto fd = own_descriptor(current)) {
      const int dup = ::fcntl(*fd, F_DUPFD_CLOEXEC, 0);
      if (dup < 0) fail(path, fmt::format("descriptor {} is not open", *fd));
      return Target{{}, std::nullopt, Fd(dup)};
    }
    struct stat st {};
    if (::lstat(current.c_str(), &st) != 0) {
      if (errno == ENOENT) break;
      fail(path, std::strerror(errno));
    }
    if (S_ISLNK(st.st_mode)) {
      if (hops >= 40) fail(path, "too many levels of symbolic links");
      std::array<char, 4096> buf{};
      const ssize_t n = ::readlink(current.c_str(), buf.data(), buf.size());
      if (n < 0 || static_cast<std::size_t>(n) >= buf.size()) fail(path, "cannot read the symbolic link");
      const std::filesystem::path link(std::string(buf.data(), static_cast<std::size_t>(n)));
      current = link.is_absolute() ? link.string() : (std::filesystem::path(current).parent_path() / link).string();
      continue;
    }
    if (S_ISDIR(st.st_mode)) fail(path, "it is a directory; give a file name");
    if (S_ISREG(st.st_mode)) return Target{current, st, Fd()};
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
      Fd fd(::open(current.c_str(), O_WRONLY | O_NOCTTY | O_CLOEXEC));
      if (fd.get() < 0) fail(path, std::strerror(errno));
      struct stat opened {};
      // Swapped for a regular file since the lstat: replace that instead of writing into it.
      if (::fstat(fd.get(), &opened) == 0 && S_ISREG(opened.st_mode)) continue;
      return Target{{}, std::nullopt, std::move(fd)};
    }
    fail(path, S_ISBLK(st.st_mode) ? "it is a block device; give a file name" : "it is a socket; give a file name");
  }
  // A new file (possibly the missing target of a dangling symlink).
  const std::filesystem::path target(current);
  const std::filesystem::path dir = target.has_parent_path() ? target.parent_path() : ".";
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec))
    fail(path, fmt::format("the directory '{}' does not exist; create it or choose another output path",
                           dir.string()));
  return Target{current, std::nullopt, Fd()};
}

/// Gives a temporary file (created 0666 less the umask, as any new file) the mode and, where
/// permitted, the owner of the file it replaces.
void match_existing(TempFile& tmp, const Target& target) {
  if (!target.existing) return;
  ::fchmod(tmp.fd().get(), target.existing->st_mode & 07777);
  // Best effort: only root may give a file away; anyone else keeps their own.
  if (::fchown(tmp.fd().get(), target.existing->st_uid, target.existing->st_gid) != 0) {
  }
}

/// Raises the error of a writer whose stream failed: the descriptor's errno when there is one.
[[noreturn]] void stream_failed(const std::string& path, int err) {
  fail(path, err != 0 ? std::string(std::strerror(err)) : std::string("the output stream failed"));
}

/// Runs `writer` on a stream over `fd`; throws naming the cause of a write error.
void write_stream(const std::string& path, int fd, const std::function<void(std::ostream&)>& writer) {
  FdStreambuf buf(fd);
  std::ostream out(&buf);
  try {
    writer(out);
  } catch (const Error&) {
    // The writer's own message says only that its stream failed: name the cause instead.
    if (buf.error() != 0) stream_failed(path, buf.error());
    throw;
  }
  out.flush();
  if (!out || buf.error() != 0) stream_failed(path, buf.error());
}

/// Copies the file `from` to `fd`.
void copy_to(const std::string& path, const std::string& from, int fd) {
  Fd in(::open(from.c_str(), O_RDONLY | O_CLOEXEC));
  if (in.get() < 0) fail(path, std::strerror(errno));
  std::array<char, 1 << 16> buf{};
  for (;;) {
    const ssize_t n = ::read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(path, std::strerror(errno));
    if (n == 0) return;
    if (const int err = write_all(fd, buf.data(), static_cast<std::size_t>(n)); err != 0)
      fail(path, std::strerror(err));
  }
}

/// A private directory for a temporary file that is copied to a device afterwards.
std::string private_temp_base() {
  const char* env = std::getenv("TMPDIR");
  const std::filesystem::path dir = env != nullptr && *env != '\0' ? env : "/tmp";
  return (dir / "nnprof-output").string();
}

}  // namespace

void write_file_atomically(const std::string& path, const std::function<void(std::ostream&)>& writer) {
  Target target = resolve(path);
  if (target.direct.get() >= 0) {
    write_stream(path, target.direct.get(), writer);
    if (const int err = target.direct.close(); err != 0) fail(path, std::strerror(err));
    return;
  }
  TempFile tmp(path, target.file, 0666);
  match_existing(tmp, target);
  write_stream(path, tmp.fd().get(), writer);
  tmp.rename_onto(path, target.file);
}

void write_file_by_name(const std::string& path, const std::function<void(const std::string& file)>& writer) {
  Target target = resolve(path);
  if (target.direct.get() >= 0) {
    // Only the owner may read what is copied to the device.
    TempFile tmp(path, private_temp_base(), 0600);
    if (const int err = tmp.fd().close(); err != 0) fail(path, std::strerror(err));
    writer(tmp.name());
    copy_to(path, tmp.name(), target.direct.get());
    if (const int err = target.direct.close(); err != 0) fail(path, std::strerror(err));
    return;
  }
  TempFile tmp(path, target.file, 0666);
  match_existing(tmp, target);
  // The writer opens the file by name; this descriptor must not outlive its locks (closing
  // any descriptor of a file drops the process's POSIX locks on it).
  if (const int err = tmp.fd().close(); err != 0) fail(path, std::strerror(err));
  writer(tmp.name());
  tmp.rename_onto(path, target.file);
}

}  // namespace nnprof::io
