#include "collect/heap/reachability.hpp"

#include <fcntl.h>
#include <link.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <iterator>
#include <string>
#include <string_view>

#include "record/internal_allocations.hpp"

namespace nnprof::collect {

namespace {

constexpr std::uintptr_t kWord = sizeof(std::uintptr_t);
constexpr std::size_t kChunkBytes = 64 * 1024;  // per system call
constexpr std::size_t kMaxIov = 256;            // well under IOV_MAX (1024)
constexpr std::size_t kFailed = static_cast<std::size_t>(-1);

std::uintptr_t align_up(std::uintptr_t v, std::uintptr_t a) { return (v + a - 1) & ~(a - 1); }
std::uintptr_t align_down(std::uintptr_t v, std::uintptr_t a) { return v & ~(a - 1); }

// Reads our own memory without trusting it to be mapped: process_vm_readv fails with EFAULT
// where a plain load would crash (and it does not trip sanitizers on poisoned memory). Where
// the system call is refused (seccomp), pread on /proc/self/mem does the same with EIO.
// One system call costs ~1.1 us here for 64 bytes, ~1.3 us for 4 KiB, ~5 us for 64 KiB.
class MemoryReader {
 public:
  MemoryReader() = default;
  MemoryReader(const MemoryReader&) = delete;
  MemoryReader& operator=(const MemoryReader&) = delete;
  ~MemoryReader() {
    if (mem_fd_ >= 0) close(mem_fd_);
  }

  // Reads remote[0..n) in order, into one local buffer or into one local iovec per remote
  // one. Returns the bytes read from the front: it stops at the first unreadable page (0 when
  // that is the first), or kFailed when this process's memory cannot be read safely at all.
  std::size_t read(const iovec* local, std::size_t n_local, const iovec* remote, std::size_t n_remote) {
    if (mem_fd_ < 0 && !failed_) {
      const ssize_t n = process_vm_readv(pid_, local, n_local, remote, n_remote, 0);
      if (n >= 0) return static_cast<std::size_t>(n);
      if (errno == EFAULT || errno == ENOMEM) return 0;
      mem_fd_ = open("/proc/self/mem", O_RDONLY | O_CLOEXEC);
      failed_ = mem_fd_ < 0;
    }
    if (failed_) return kFailed;
    std::size_t done = 0;
    for (std::size_t i = 0; i < n_remote; ++i) {
      char* to = n_local == 1 ? static_cast<char*>(local[0].iov_base) + done : static_cast<char*>(local[i].iov_base);
      const ssize_t n = pread(mem_fd_, to, remote[i].iov_len,
                              static_cast<off_t>(reinterpret_cast<std::uintptr_t>(remote[i].iov_base)));
      if (n > 0) done += static_cast<std::size_t>(n);
      if (n != static_cast<ssize_t>(remote[i].iov_len)) break;
    }
    return done;
  }

  bool failed() const { return failed_; }

 private:
  const pid_t pid_ = getpid();  // a system call each time in glibc
  int mem_fd_ = -1;
  bool failed_ = false;
};

std::uintptr_t page_size() {
  static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Large ranges (roots, big blocks): up to 64 KiB of consecutive segments per system call.
class RangeScanner {
 public:
  explicit RangeScanner(MemoryReader& reader) : reader_(reader), buffer_(kChunkBytes / kWord) {}
  template <class Cut>
  void own(Cut&& cut) const {
    cut(buffer_.data(), buffer_.size() * sizeof(std::uintptr_t));
  }

  // Calls visit(word) for every readable aligned word of the segments (each [begin, end),
  // both multiples of 8), skipping unreadable pages.
  template <class Visit>
  void scan(std::span<const MemoryRange> segments, Visit&& visit) {
    std::size_t index = 0;
    std::uintptr_t pos = segments.empty() ? 0 : segments[0].begin;
    iovec remote[kMaxIov];
    std::size_t segment_of[kMaxIov];
    while (index < segments.size()) {
      if (pos >= segments[index].end) {
        if (++index < segments.size()) pos = segments[index].begin;
        continue;
      }
      std::size_t n_iov = 0, bytes = 0;
      for (std::size_t i = index; i < segments.size() && n_iov < kMaxIov && bytes < kChunkBytes; ++i) {
        const std::uintptr_t from = i == index ? pos : segments[i].begin;
        const std::size_t len = std::min<std::size_t>(segments[i].end - from, kChunkBytes - bytes);
        if (len == 0) continue;
        remote[n_iov] = {reinterpret_cast<void*>(from), len};
        segment_of[n_iov++] = i;
        bytes += len;
      }
      iovec local{buffer_.data(), bytes};
      const std::size_t got = reader_.read(&local, 1, remote, n_iov);
      if (got == kFailed) return;
      for (std::size_t w = 0; w < got / kWord; ++w) visit(buffer_[w]);
      // Advance past what was read; when nothing was, the first page is unreadable: skip it.
      std::size_t left = got;
      for (std::size_t i = 0; i < n_iov; ++i) {
        index = segment_of[i];
        const auto base = reinterpret_cast<std::uintptr_t>(remote[i].iov_base);
        if (left < remote[i].iov_len) {
          pos = base + left;
          break;
        }
        left -= remote[i].iov_len;
        pos = base + remote[i].iov_len;
      }
      if (got == 0) pos = std::min(align_down(pos, page_) + page_, segments[index].end);
    }
  }

 private:
  MemoryReader& reader_;
  std::vector<std::uintptr_t> buffer_;
  const std::uintptr_t page_ = page_size();
};

// Small blocks: whole pages, kept in a direct-mapped cache, so neighbouring blocks (a list or
// tree allocated in order) share one read; the pages a batch of blocks misses are fetched
// together, 16 per system call, so scattered blocks share calls too.
class PageCache {
 public:
  explicit PageCache(MemoryReader& reader) : reader_(reader), data_(kSlots * page_size() / kWord), slots_(kSlots) {}
  template <class Cut>
  void own(Cut&& cut) const {
    cut(data_.data(), data_.size() * sizeof(std::uintptr_t));
    cut(slots_.data(), slots_.size() * sizeof(Slot));
  }

  void prefetch(std::span<const MemoryRange> ranges) {
    ++epoch_;
    std::size_t n = 0;
    iovec local[kGroup], remote[kGroup];
    std::size_t slot_of[kGroup];
    auto flush = [&] {
      std::size_t done = 0;
      while (done < n) {
        const std::size_t got = reader_.read(local + done, n - done, remote + done, n - done);
        if (got == kFailed) break;
        const std::size_t pages = got / page_;
        for (std::size_t i = done; i < done + pages; ++i) slots_[slot_of[i]].readable = true;
        done += pages + 1;  // the one after them is unreadable (it stays so)
      }
      n = 0;
    };
    for (const MemoryRange& r : ranges) {
      for (std::uintptr_t page = align_down(r.begin, page_); page < r.end; page += page_) {
        const std::size_t s = slot(page);
        // A slot another page of this batch is waiting for stays with it; visit() reads the
        // loser on its own.
        if (slots_[s].page == page || slots_[s].epoch == epoch_) continue;
        slots_[s] = {page, false, epoch_};
        local[n] = {buffer(s), page_};
        remote[n] = {reinterpret_cast<void*>(page), page_};
        slot_of[n++] = s;
        if (n == kGroup) flush();
      }
    }
    flush();
  }

  template <class Visit>
  void visit(const MemoryRange& r, Visit&& visit_word) {
    for (std::uintptr_t page = align_down(r.begin, page_); page < r.end; page += page_) {
      const std::size_t s = slot(page);
      if (slots_[s].page != page) {
        slots_[s] = {page, false, 0};
        iovec local{buffer(s), page_}, remote{reinterpret_cast<void*>(page), page_};
        slots_[s].readable = reader_.read(&local, 1, &remote, 1) == page_;
      }
      if (!slots_[s].readable) continue;
      const std::uintptr_t* words = static_cast<const std::uintptr_t*>(buffer(s));
      const std::uintptr_t from = std::max(r.begin, page), to = std::min(r.end, page + page_);
      for (std::uintptr_t a = from; a < to; a += kWord) visit_word(words[(a - page) / kWord]);
    }
  }

 private:
  static constexpr std::size_t kSlots = 256;  // 1 MiB of 4 KiB pages
  static constexpr std::size_t kGroup = 16;

  struct Slot {
    std::uintptr_t page = 0;  // 0: empty (page 0 is never mapped)
    bool readable = false;
    std::uint64_t epoch = 0;  // the prefetch that claimed it
  };

  std::size_t slot(std::uintptr_t page) const { return (page / page_) % kSlots; }
  void* buffer(std::size_t s) { return data_.data() + s * (page_ / kWord); }

  MemoryReader& reader_;
  const std::uintptr_t page_ = page_size();
  std::vector<std::uintptr_t> data_;
  std::vector<Slot> slots_;
  std::uint64_t epoch_ = 0;
};

// `ranges` less every byte of `cuts`: the pieces left, in address order.
std::vector<MemoryRange> subtract(std::span<const MemoryRange> ranges, std::vector<MemoryRange> cuts) {
  std::sort(cuts.begin(), cuts.end(), [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
  std::vector<MemoryRange> sorted(ranges.begin(), ranges.end());
  std::sort(sorted.begin(), sorted.end(), [](const MemoryRange& a, const MemoryRange& b) { return a.begin < b.begin; });
  std::vector<MemoryRange> out;
  std::size_t c = 0;
  for (const MemoryRange& r : sorted) {
    while (c < cuts.size() && cuts[c].end <= r.begin) ++c;
    std::uintptr_t pos = r.begin;
    for (std::size_t k = c; k < cuts.size() && cuts[k].begin < r.end; ++k) {
      if (cuts[k].end <= pos) continue;
      if (cuts[k].begin > pos) out.push_back({pos, cuts[k].begin});
      pos = std::max(pos, cuts[k].end);
    }
    if (pos < r.end) out.push_back({pos, r.end});
  }
  return out;
}

MemoryRange aligned(std::uintptr_t begin, std::uintptr_t end) {
  begin = align_up(begin, kWord);
  end = align_down(end, kWord);
  return {begin, std::max(begin, end)};
}

struct PhdrQuery {
  std::span<const std::uintptr_t> exclude;
  std::vector<MemoryRange>* out;  // null: count only
  std::size_t count = 0;
  bool overflow = false;
};

int visit_module(dl_phdr_info* info, std::size_t, void* arg) {
  auto* q = static_cast<PhdrQuery*>(arg);
  for (const std::uintptr_t a : q->exclude) {
    for (int i = 0; i < info->dlpi_phnum; ++i) {
      const ElfW(Phdr)& ph = info->dlpi_phdr[i];
      const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
      if (ph.p_type == PT_LOAD && a >= begin && a < begin + ph.p_memsz) return 0;
    }
  }
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_LOAD || (ph.p_flags & PF_W) == 0 || ph.p_memsz == 0) continue;
    ++q->count;
    if (q->out == nullptr) continue;
    // No allocation under the loader lock: the capacity was reserved by a counting pass.
    if (q->out->size() == q->out->capacity()) {
      q->overflow = true;
      continue;
    }
    const std::uintptr_t begin = info->dlpi_addr + ph.p_vaddr;
    q->out->push_back(aligned(begin, begin + ph.p_memsz));
  }
  return 0;
}

}  // namespace

std::vector<MemoryRange> global_data_ranges(std::span<const std::uintptr_t> exclude_modules_containing) {
  std::vector<MemoryRange> ranges;
  for (;;) {  // again if a library was loaded between counting and filling
    PhdrQuery count{exclude_modules_containing, nullptr};
    dl_iterate_phdr(visit_module, &count);
    ranges.clear();
    ranges.reserve(count.count + 16);
    PhdrQuery fill{exclude_modules_containing, &ranges};
    dl_iterate_phdr(visit_module, &fill);
    if (!fill.overflow) return ranges;
  }
}

__attribute__((noinline)) MemoryRange current_thread_stack() {
  // This function's frame lies just below the caller's; once it returns, the range starts
  // with the caller's frame.
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  const std::optional<MemoryRange> whole = thread_stack(pthread_self());
  if (!whole || here < whole->begin || here >= whole->end) return {here, here};
  return aligned(here, whole->end);
}

__attribute__((noinline)) void clear_dead_stack(std::size_t bytes) noexcept {
  const auto here = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  std::optional<MemoryRange> whole;
  {
    // pthread_getattr_np reads /proc/self/maps for the main thread, with a lock held: its
    // malloc must not reach the heap tracker, which would ask for the same lock.
    detail::InternalAllocations internal;
    whole = thread_stack(pthread_self());
  }
  if (!whole || here <= whole->begin || here > whole->end) return;
  // What memset and a signal handler arriving meanwhile need below the cleared part.
  constexpr std::size_t kMargin = 16 * 1024;
  const std::size_t room = here - whole->begin;
  if (room <= kMargin) return;
  const std::size_t n = std::min(bytes, room - kMargin) & ~std::size_t{63};
  auto* below = static_cast<unsigned char*>(__builtin_alloca(n));
  std::memset(below, 0, n);
  asm volatile("" : : "r"(below) : "memory");  // the stores must stay, dead as the memory is
}

std::optional<MemoryRange> thread_stack(pthread_t thread) {
  pthread_attr_t attr;
  if (pthread_getattr_np(thread, &attr) != 0) return std::nullopt;
  void* low = nullptr;
  std::size_t size = 0;
  const int rc = pthread_attr_getstack(&attr, &low, &size);
  pthread_attr_destroy(&attr);
  if (rc != 0 || low == nullptr) return std::nullopt;
  const auto begin = reinterpret_cast<std::uintptr_t>(low);
  return aligned(begin, begin + size);
}

std::vector<MemoryRange> anonymous_mappings(std::span<const MemoryRange> except) {
  std::vector<MemoryRange> out;
  const int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
  if (fd < 0) return out;
  std::string text;
  char buffer[16384];
  for (;;) {
    const ssize_t n = read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  close(fd);
  // start-end perms offset major:minor inode [path]
  std::size_t at = 0;
  while (at < text.size()) {
    std::size_t eol = text.find('\n', at);
    if (eol == std::string::npos) eol = text.size();
    const std::string_view line(text.data() + at, eol - at);
    at = eol + 1;
    std::uintptr_t begin = 0, end = 0;
    const char* p = line.data();
    const char* stop = line.data() + line.size();
    auto r = std::from_chars(p, stop, begin, 16);
    if (r.ec != std::errc() || r.ptr == stop || *r.ptr != '-') continue;
    r = std::from_chars(r.ptr + 1, stop, end, 16);
    if (r.ec != std::errc() || stop - r.ptr < 6) continue;
    const std::string_view perms(r.ptr + 1, 4);
    if (perms[0] != 'r' || perms[1] != 'w' || perms[3] != 'p') continue;
    // Fields 3-5 (offset, device, inode), then the path, which must be absent or [heap]/[anon:...].
    std::size_t field = 0;
    const char* q = r.ptr + 5;
    std::string_view inode, path;
    while (q < stop && field < 3) {
      while (q < stop && *q == ' ') ++q;
      const char* w = q;
      while (q < stop && *q != ' ') ++q;
      ++field;
      if (field == 3) inode = std::string_view(w, static_cast<std::size_t>(q - w));
    }
    while (q < stop && *q == ' ') ++q;
    path = std::string_view(q, static_cast<std::size_t>(stop - q));
    if (inode != "0") continue;
    if (!path.empty() && path != "[heap]" && path.substr(0, 6) != "[anon:") continue;
    if (end > begin) out.push_back(MemoryRange{begin, end});
  }
  // Cut out rather than dropped: the kernel merges neighbouring anonymous mappings, so one
  // line of maps may hold a thread stack or nnprof's table beside the program's own memory.
  out = subtract(out, std::vector<MemoryRange>(except.begin(), except.end()));
  return out;
}

std::vector<bool> find_reachable(std::span<const LiveBlock> blocks, std::span<const MemoryRange> roots,
                                 MappedRoots* mapped) {
  std::vector<bool> reachable(blocks.size(), false);
  if (blocks.empty()) return reachable;
  assert(std::is_sorted(blocks.begin(), blocks.end(),
                        [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; }));

  // Words outside [lowest, highest) fail one subtraction and compare, before any search.
  const std::uintptr_t lowest = blocks.front().address;
  std::uintptr_t highest = lowest;
  for (const LiveBlock& b : blocks)
    highest = std::max<std::uintptr_t>(highest, b.address + std::max<std::uint64_t>(b.size, 1));
  const std::uintptr_t span = highest - lowest;

  std::vector<std::size_t> worklist;
  auto visit = [&](std::uintptr_t word) {
    if (word - lowest >= span) return;
    auto it = std::upper_bound(blocks.begin(), blocks.end(), word,
                               [](std::uintptr_t w, const LiveBlock& b) { return w < b.address; });
    --it;  // exists: word >= lowest
    // A zero-size block still owns its address (malloc(0) returns a unique pointer).
    if (word - it->address >= std::max<std::uint64_t>(it->size, 1)) return;
    const auto index = static_cast<std::size_t>(it - blocks.begin());
    if (reachable[index]) return;
    reachable[index] = true;
    worklist.push_back(index);
  };

  MemoryReader reader;
  RangeScanner scanner(reader);
  PageCache pages(reader);
  std::vector<MemoryRange> segments, small;
  const std::size_t n_mapped = mapped != nullptr ? mapped->ranges.size() : 0;
  segments.reserve(std::max<std::size_t>(roots.size() + n_mapped, 64));
  small.reserve(64);
  for (const MemoryRange& r : roots)
    if (r.end > r.begin) segments.push_back(aligned(r.begin, r.end));
  if (mapped != nullptr) {
    // Every buffer of this scan that can hold a block's address (or a copy of a block's words)
    // is allocated by now, so a range holding one of them is known before it is scanned.
    // Cut out: this scan's buffers, and the pages of large blocks (each its own mapping in
    // glibc, which the kernel may merge with a neighbouring arena of the program's).
    std::vector<MemoryRange> cuts;
    const auto cut = [&](const void* p, std::size_t bytes) {
      const auto a = reinterpret_cast<std::uintptr_t>(p);
      cuts.push_back({a, a + bytes});
    };
    cut(blocks.data(), blocks.size_bytes());
    cut(roots.data(), roots.size_bytes());
    cut(segments.data(), segments.capacity() * sizeof(MemoryRange));
    cut(small.data(), small.capacity() * sizeof(MemoryRange));
    scanner.own(cut);
    pages.own(cut);
    cuts.insert(cuts.end(), mapped->own_buffers.begin(), mapped->own_buffers.end());
    constexpr std::uint64_t kLargeBlock = 64 * 1024;
    for (const LiveBlock& b : blocks)
      if (b.size >= kLargeBlock)
        cuts.push_back({align_down(b.address, page_size()), align_up(b.address + b.size, page_size())});
    // A mapping that holds a block below that size is an allocator's heap: not a root.
    const auto holds_small_block = [&](const MemoryRange& r) {
      auto it = std::lower_bound(blocks.begin(), blocks.end(), r.begin,
                                 [](const LiveBlock& b, std::uintptr_t a) { return b.address < a; });
      if (it != blocks.begin() && std::prev(it)->address + std::prev(it)->size > r.begin &&
          std::prev(it)->size < kLargeBlock)
        return true;
      for (; it != blocks.end() && it->address < r.end; ++it)
        if (it->size < kLargeBlock) return true;
      return false;
    };
    std::vector<MemoryRange> pieces;
    for (const MemoryRange& m : mapped->ranges)
      if (m.end > m.begin && !holds_small_block(m)) pieces.push_back(m);
    for (const MemoryRange& r : subtract(pieces, std::move(cuts))) {
      if (r.end <= r.begin) continue;
      const std::uint64_t bytes = r.end - r.begin;
      if (mapped->scanned_bytes + bytes > mapped->budget_bytes) {
        mapped->skipped_bytes += bytes;
        continue;
      }
      mapped->scanned_bytes += bytes;
      segments.push_back(aligned(r.begin, r.end));
    }
  }
  scanner.scan(segments, visit);

  // Marked blocks in batches: blocks up to a page through the page cache, larger ones in
  // 64 KiB reads. (A batch's blocks are taken off the worklist before visit() adds more.)
  while (!worklist.empty() && !reader.failed()) {
    segments.clear();
    small.clear();
    while (!worklist.empty() && small.size() < 64 && segments.size() < 64) {
      const LiveBlock& b = blocks[worklist.back()];
      worklist.pop_back();
      const MemoryRange r = aligned(b.address, b.address + b.size);
      if (r.end == r.begin) continue;
      (r.end - r.begin <= page_size() ? small : segments).push_back(r);
    }
    scanner.scan(segments, visit);
    pages.prefetch(small);
    for (const MemoryRange& r : small) pages.visit(r, visit);
  }
  return reachable;
}

}  // namespace nnprof::collect
