#include "collect/cpu/python_frames.hpp"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include <fmt/format.h>

#include "collect/cpu/python_layout_311.h"
#include "collect/stack/stack_capture.hpp"

namespace nnprof::collect {

namespace {

// What the handler reads: set before any timer is armed, while no handler runs.
struct HandlerPython {
  std::atomic<bool> on{false};
  std::uintptr_t runtime = 0;
  std::uintptr_t code_type = 0;
  pid_t pid = 0;
};
constinit HandlerPython g_python;
// Ids of code object descriptions, unique in the process so that the manager needs no
// per-thread tables (a slot reused by a later thread starts a fresh cache).
constinit std::atomic<std::uint32_t> g_next_description{1};

constexpr std::uint32_t kEntryBit = 1u << 31;
// In a section's trailer: (descriptions << 48) | whole chain bit | (frames << 32) | words.
constexpr std::uint64_t kWholeChainBit = std::uint64_t{1} << 47;
static_assert(sizeof PythonThreadCache::code_bytes[0] == NNPROF_PY311_CODE_HEAD_BYTES);
constexpr std::size_t kLineTableBytes = sizeof(PythonThreadCache::line_table);

// Reads `n` bytes of this process at `address` without faulting: process_vm_readv fails with
// EFAULT on an unmapped address where a load would raise SIGSEGV. A system call per read is
// the price of never crashing on a half-built frame or a freed thread state.
bool read_memory(std::uintptr_t address, void* out, std::size_t n) noexcept {
  if (address < 4096) return false;
  iovec local{out, n};
  iovec remote{reinterpret_cast<void*>(address), n};
  return process_vm_readv(g_python.pid, &local, 1, &remote, 1, 0) == static_cast<ssize_t>(n);
}

template <class T>
T load(const unsigned char* bytes, std::size_t offset) noexcept {
  T v;
  std::memcpy(&v, bytes + offset, sizeof v);
  return v;
}

// The PyThreadState of the calling thread: the one the gilstate key names (set for the main
// thread, threading's threads and PyGILState_Ensure callers, GIL held or not), else the one
// holding the GIL when it is this thread's.
std::uintptr_t current_thread_state() noexcept {
  const std::uintptr_t gilstate = g_python.runtime + NNPROF_PY311_RUNTIME_GILSTATE;
  // _PyRuntime lives in the interpreter's image: a plain load cannot fault.
  const auto* tss = reinterpret_cast<const unsigned char*>(gilstate + NNPROF_PY311_GILSTATE_AUTO_TSS_KEY);
  const int initialized = __atomic_load_n(reinterpret_cast<const int*>(tss + NNPROF_PY311_TSS_IS_INITIALIZED), __ATOMIC_RELAXED);
  if (initialized != 0) {
    const unsigned key = __atomic_load_n(reinterpret_cast<const unsigned*>(tss + NNPROF_PY311_TSS_KEY), __ATOMIC_RELAXED);
    // glibc's pthread_getspecific reads the thread descriptor: no lock, no allocation.
    if (void* state = pthread_getspecific(static_cast<pthread_key_t>(key))) return reinterpret_cast<std::uintptr_t>(state);
  }
  const std::uintptr_t holder = __atomic_load_n(
      reinterpret_cast<const std::uintptr_t*>(gilstate + NNPROF_PY311_GILSTATE_TSTATE_CURRENT), __ATOMIC_ACQUIRE);
  unsigned long thread_id = 0;
  if (holder != 0 && read_memory(holder + NNPROF_PY311_TSTATE_THREAD_ID, &thread_id, sizeof thread_id) &&
      thread_id == static_cast<unsigned long>(pthread_self()))
    return holder;
  return 0;
}

constexpr std::size_t kWays = PythonThreadCache::kWays;
std::size_t code_set(std::uintptr_t code) noexcept {
  return ((code >> 4) ^ (code >> 13)) % (PythonThreadCache::kCodes / kWays);
}
std::size_t line_set(std::uintptr_t code, std::uintptr_t instr) noexcept {
  return ((code >> 4) ^ (instr >> 1) ^ (code >> 15)) % (PythonThreadCache::kLines / kWays);
}

bool same_code(const PythonThreadCache::Code& a, const PythonThreadCache::Found& f) noexcept {
  return a.id != 0 && a.code == f.code && a.qualname == f.qualname && a.filename == f.filename &&
         a.linetable == f.linetable && a.firstlineno == f.firstlineno;
}

std::size_t put_utf8(char32_t c, char* out, std::size_t room) noexcept {
  if (c < 0x80 && room >= 1) {
    out[0] = static_cast<char>(c);
    return 1;
  }
  if (c < 0x800 && room >= 2) {
    out[0] = static_cast<char>(0xC0 | (c >> 6));
    out[1] = static_cast<char>(0x80 | (c & 0x3F));
    return 2;
  }
  if (c >= 0x800 && c < 0x10000 && room >= 3) {
    out[0] = static_cast<char>(0xE0 | (c >> 12));
    out[1] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[2] = static_cast<char>(0x80 | (c & 0x3F));
    return 3;
  }
  if (c >= 0x10000 && c < 0x110000 && room >= 4) {
    out[0] = static_cast<char>(0xF0 | (c >> 18));
    out[1] = static_cast<char>(0x80 | ((c >> 12) & 0x3F));
    out[2] = static_cast<char>(0x80 | ((c >> 6) & 0x3F));
    out[3] = static_cast<char>(0x80 | (c & 0x3F));
    return 4;
  }
  return 0;
}

// Copies a str object's text as UTF-8 into `out` (at most `cap` bytes); returns its length.
// An ASCII text longer than that keeps its end after "...": a path's end names the file.
std::size_t read_text(std::uintptr_t str, char* out, std::size_t cap, unsigned char* scratch,
                      std::size_t scratch_bytes) noexcept {
  unsigned char head[NNPROF_PY311_ASCII_DATA];
  if (!read_memory(str, head, sizeof head)) return 0;
  const auto length = load<std::int64_t>(head, NNPROF_PY311_UNICODE_LENGTH);
  const unsigned state = head[NNPROF_PY311_UNICODE_STATE];
  const unsigned kind = (state >> 2) & 7, compact = (state >> 5) & 1, ascii = (state >> 6) & 1;
  if (compact == 0 || length <= 0) return 0;
  const auto chars = static_cast<std::size_t>(length);
  if (ascii != 0) {
    if (chars <= cap) return read_memory(str + NNPROF_PY311_ASCII_DATA, out, chars) ? chars : 0;
    std::memcpy(out, "...", 3);
    const std::size_t tail = cap - 3;
    return read_memory(str + NNPROF_PY311_ASCII_DATA + chars - tail, out + 3, tail) ? cap : 0;
  }
  if (kind != 1 && kind != 2 && kind != 4) return 0;
  const std::size_t take = std::min(chars, scratch_bytes / kind);
  if (!read_memory(str + NNPROF_PY311_COMPACT_DATA, scratch, take * kind)) return 0;
  std::size_t used = 0;
  for (std::size_t i = 0; i < take; ++i) {
    char32_t c = kind == 1 ? scratch[i] : kind == 2 ? load<std::uint16_t>(scratch, 2 * i) : load<std::uint32_t>(scratch, 4 * i);
    const std::size_t wrote = put_utf8(c, out + used, cap - used);
    if (wrote == 0) break;
    used += wrote;
  }
  return used;
}

std::uint32_t varint(const unsigned char* table, std::size_t size, std::size_t& at) noexcept {
  std::uint32_t value = 0;
  unsigned shift = 0;
  while (at < size && shift < 32) {
    const unsigned char b = table[at++];
    value |= static_cast<std::uint32_t>(b & 63) << shift;
    shift += 6;
    if ((b & 64) == 0) break;
  }
  return value;
}

}  // namespace

std::uint32_t python311_line(const unsigned char* table, std::size_t size, std::int32_t firstlineno,
                             std::int64_t address) noexcept {
  // Objects/codeobject.c: each entry starts with a byte whose bit 7 is set; bits 3-6 are its
  // code, bits 0-2 its length in code units minus one. Codes 0-9 (short form) and 10-12 (one
  // line form, delta 0-2) keep or step the line; 13 (no columns) and 14 (long form) carry a
  // signed varint line delta; 15 means no line.
  if (address < 0) return firstlineno > 0 ? static_cast<std::uint32_t>(firstlineno) : 0;
  std::int64_t line = firstlineno, start = 0;
  std::size_t at = 0;
  while (at < size) {
    const unsigned char b = table[at];
    const unsigned code = (b >> 3) & 15;
    const std::int64_t length = ((b & 7) + 1) * 2;
    std::size_t next = at + 1;
    if (code == 13 || code == 14) {
      const std::uint32_t u = varint(table, size, next);
      line += (u & 1) != 0 ? -static_cast<std::int64_t>(u >> 1) : static_cast<std::int64_t>(u >> 1);
    } else if (code >= 10 && code <= 12) {
      line += code - 10;
    }
    if (address < start + length) return code == 15 || line <= 0 ? 0 : static_cast<std::uint32_t>(line);
    start += length;
    at = next;
    while (at < size && (table[at] & 128) == 0) ++at;
  }
  return 0;
}

PythonInterpreter find_python_interpreter() {
  PythonInterpreter interp;
  void* runtime = dlsym(RTLD_DEFAULT, "_PyRuntime");
  void* eval = dlsym(RTLD_DEFAULT, "_PyEval_EvalFrameDefault");
  if (runtime == nullptr || eval == nullptr) return interp;  // no CPython in the global scope
  const auto* version = static_cast<const unsigned long*>(dlsym(RTLD_DEFAULT, "Py_Version"));  // 3.11 and later
  if (version == nullptr) {
    interp.version = "older than 3.11";
  } else {
    interp.version = fmt::format("{}.{}.{}", (*version >> 24) & 0xFF, (*version >> 16) & 0xFF, (*version >> 8) & 0xFF);
  }
#if defined(__x86_64__)
  const bool supported = version != nullptr && (*version >> 16) == 0x030B;
#else
  const bool supported = false;  // the layout is checked on x86-64 only
#endif
  if (!supported) {
    interp.problem = fmt::format("this process runs CPython {}; nnprof reads the Python frames of CPython 3.11 on x86-64 "
                                 "only, so its samples show the interpreter's native frames instead",
                                 interp.version);
    return interp;
  }
  if (const char* off = std::getenv("NNPROF_PYTHON_FRAMES"); off != nullptr && std::string_view(off) == "0") {
    interp.problem = fmt::format("this process runs CPython {}; its Python frames were not read (NNPROF_PYTHON_FRAMES=0), "
                                 "so its samples show the interpreter's native frames",
                                 interp.version);
    return interp;
  }
  interp.runtime = reinterpret_cast<std::uintptr_t>(runtime);
  interp.code_type = reinterpret_cast<std::uintptr_t>(dlsym(RTLD_DEFAULT, "PyCode_Type"));
  Dl_info info{};
  ElfW(Sym)* sym = nullptr;
  if (dladdr1(eval, &info, reinterpret_cast<void**>(&sym), RTLD_DL_SYMENT) == 0 || sym == nullptr ||
      interp.code_type == 0) {
    interp.problem = "the CPython 3.11 interpreter's symbols could not be looked up: no Python frames in the samples";
    return interp;
  }
  interp.eval_begin = reinterpret_cast<std::uintptr_t>(eval);
  interp.eval_end = interp.eval_begin + sym->st_size;
  // The span of the loaded segments of the object holding the eval loop: the executable
  // (Debian's python3) or libpython3.11.so.
  struct Find {
    std::uintptr_t address, begin = 0, end = 0;
  } find{interp.eval_begin};
  dl_iterate_phdr(
      [](dl_phdr_info* object, std::size_t, void* data) {
        auto* f = static_cast<Find*>(data);
        std::uintptr_t lo = ~std::uintptr_t{0}, hi = 0;
        for (int i = 0; i < object->dlpi_phnum; ++i) {
          const ElfW(Phdr)& ph = object->dlpi_phdr[i];
          if (ph.p_type != PT_LOAD) continue;
          lo = std::min<std::uintptr_t>(lo, object->dlpi_addr + ph.p_vaddr);
          hi = std::max<std::uintptr_t>(hi, object->dlpi_addr + ph.p_vaddr + ph.p_memsz);
        }
        if (f->address < lo || f->address >= hi) return 0;
        f->begin = lo;
        f->end = hi;
        return 1;
      },
      &find);
  interp.module_begin = find.begin;
  interp.module_end = find.end;
  // The guarded reads need process_vm_readv on this process, which seccomp may refuse.
  long probe = 0, copy = 0;
  iovec local{&copy, sizeof copy}, remote{&probe, sizeof probe};
  if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != static_cast<ssize_t>(sizeof probe)) {
    interp.problem = fmt::format("this process runs CPython {}, but process_vm_readv, which nnprof reads its frames "
                                 "with, is not allowed here ({}): no Python frames in the samples",
                                 interp.version, std::strerror(errno));
    return interp;
  }
  interp.readable = true;
  return interp;
}

void set_handler_python(const PythonInterpreter& interp) noexcept {
  // The guarded reads name this process by its pid, which a forked child must not inherit:
  // a child that starts sampling again would otherwise read its parent.
  static const bool forks_followed = [] {
    return pthread_atfork(nullptr, nullptr, [] { g_python.pid = getpid(); }) == 0;
  }();
  (void)forks_followed;
  g_python.on.store(false, std::memory_order_release);
  g_python.runtime = interp.runtime;
  g_python.code_type = interp.code_type;
  g_python.pid = getpid();
  g_python.on.store(interp.readable, std::memory_order_release);
}

bool handler_reads_python() noexcept { return g_python.on.load(std::memory_order_acquire); }

PythonThreadCache* PythonThreadCache::create() noexcept {
  void* p = mmap(nullptr, sizeof(PythonThreadCache), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : static_cast<PythonThreadCache*>(p);  // zero pages: every entry empty
}

void PythonThreadCache::destroy(PythonThreadCache* cache) noexcept {
  if (cache != nullptr) munmap(cache, sizeof(PythonThreadCache));
}

void PythonThreadCache::reset() noexcept {
  // Private anonymous pages read as zero again. A thread that runs no Python (a BLAS or
  // OpenMP worker) never touches them; one that does takes a few minor faults on its first
  // samples, which a signal handler may.
  if (madvise(this, sizeof *this, MADV_DONTNEED) != 0) std::memset(static_cast<void*>(this), 0, sizeof *this);
}

PythonThreadCache::Code* PythonThreadCache::find_code(const Found& f) noexcept {
  const std::size_t set = code_set(f.code);
  for (std::size_t way = 0; way < kWays; ++way)
    if (same_code(codes[set * kWays + way], f)) return &codes[set * kWays + way];
  return nullptr;
}

int PythonThreadCache::collect(std::uint32_t& words, std::uintptr_t stack_begin, std::uintptr_t stack_end) noexcept {
  // A system call per read would cost ~0.4 us a read, two reads a frame: 25 us for a stack 30
  // frames deep. So reads are batched: the thread state in one read, the live part of the
  // thread's frame stack (its current datastack chunk, where 3.11 allocates every frame of a
  // plain call) in one, and the code objects of all frames in one process_vm_readv with an
  // iovec each. Frames outside the chunk copy (generators', older chunks') are read one by one.
  words = 0;
  if (!handler_reads_python()) return 0;
  const std::uintptr_t state = current_thread_state();
  unsigned char ts[NNPROF_PY311_TSTATE_DATASTACK_TOP + 8 - NNPROF_PY311_TSTATE_CFRAME];
  if (state == 0 || !read_memory(state + NNPROF_PY311_TSTATE_CFRAME, ts, sizeof ts)) return 0;
  auto tstate_field = [&](std::size_t offset) { return load<std::uintptr_t>(ts, offset - NNPROF_PY311_TSTATE_CFRAME); };
  const std::uintptr_t cframe = tstate_field(NNPROF_PY311_TSTATE_CFRAME);
  const std::uintptr_t chunk = tstate_field(NNPROF_PY311_TSTATE_DATASTACK_CHUNK);
  const std::uintptr_t top = tstate_field(NNPROF_PY311_TSTATE_DATASTACK_TOP);
  std::uintptr_t frame = 0;
  const std::uintptr_t current = cframe + NNPROF_PY311_CFRAME_CURRENT_FRAME;
  if (current >= stack_begin && current + sizeof frame <= stack_end && (current & 7) == 0) {
    std::uint64_t word = 0;
    copy_stack_words(current, &word, 1);  // this thread's own mapped stack; invisible to ASan's redzones
    frame = static_cast<std::uintptr_t>(word);
  } else if (!read_memory(current, &frame, sizeof frame)) {
    return 0;
  }
  // The innermost frames are at the chunk's top: the copy keeps the top when the chunk's live
  // part is larger than it.
  std::uintptr_t copy_begin = 0, copy_end = 0;
  const std::uintptr_t data = chunk + NNPROF_PY311_CHUNK_DATA;
  if (chunk != 0 && top > data && top - data <= (std::uintptr_t{1} << 30)) {
    copy_begin = std::max(data, top - sizeof frame_stack);
    if (read_memory(copy_begin, frame_stack, top - copy_begin)) copy_end = top;
  }

  // The chain, innermost first: bounded by frames kept and by steps (a cycle in a corrupt
  // chain ends here too).
  int n = 0;
  for (int steps = 0; frame != 0 && n < kMaxPythonFrames && steps < 2 * kMaxPythonFrames; ++steps) {
    unsigned char copy[NNPROF_PY311_FRAME_SIZE];
    const unsigned char* f = nullptr;
    if (frame >= copy_begin && frame + sizeof copy <= copy_end) {
      f = frame_stack + (frame - copy_begin);
    } else if (read_memory(frame, copy, sizeof copy)) {
      f = copy;
    } else {
      break;
    }
    Found& out = found[n++];
    out.code = load<std::uintptr_t>(f, NNPROF_PY311_FRAME_CODE);
    out.instr = load<std::uintptr_t>(f, NNPROF_PY311_FRAME_PREV_INSTR);
    out.entry = f[NNPROF_PY311_FRAME_IS_ENTRY] != 0;
    out.generator = f[NNPROF_PY311_FRAME_OWNER] == NNPROF_PY311_FRAME_OWNED_BY_GENERATOR;
    frame = load<std::uintptr_t>(f, NNPROF_PY311_FRAME_PREVIOUS);
  }

  // The code objects, from their type pointer to the start of their bytecode, in one call.
  constexpr std::size_t kCodeBytes = sizeof code_bytes[0];
  int readable = 0;
  while (readable < n) {
    const int batch = n - readable;
    for (int i = 0; i < batch; ++i) {
      local_io[i] = iovec{code_bytes[readable + i], kCodeBytes};
      remote_io[i] = iovec{reinterpret_cast<void*>(found[readable + i].code + NNPROF_PY311_OBJECT_TYPE), kCodeBytes};
    }
    const ssize_t got = process_vm_readv(g_python.pid, local_io, static_cast<unsigned long>(batch), remote_io,
                                         static_cast<unsigned long>(batch), 0);
    if (got <= 0) break;
    readable += static_cast<int>(static_cast<std::size_t>(got) / kCodeBytes);
    if (static_cast<std::size_t>(got) < kCodeBytes * static_cast<std::size_t>(batch)) break;  // the next one is unreadable
  }
  // The stack ends at the first frame whose code object cannot be read or is not one: a stale
  // or half-built frame, beyond which nothing is trustworthy.
  whole_chain = frame == 0 && n < kMaxPythonFrames;
  int kept = 0, misses = 0;
  for (int i = 0; i < readable; ++i) {
    const unsigned char* c = code_bytes[i];
    auto field = [&](std::size_t offset) { return load<std::uintptr_t>(c, offset - NNPROF_PY311_OBJECT_TYPE); };
    if (field(NNPROF_PY311_OBJECT_TYPE) != g_python.code_type) {
      whole_chain = false;
      break;
    }
    Found& out = found[i];
    out.qualname = field(NNPROF_PY311_CODE_QUALNAME);
    out.filename = field(NNPROF_PY311_CODE_FILENAME);
    out.linetable = field(NNPROF_PY311_CODE_LINETABLE);
    out.firstlineno = load<std::int32_t>(c, NNPROF_PY311_CODE_FIRSTLINENO - NNPROF_PY311_OBJECT_TYPE);
    const std::uintptr_t first = out.code + NNPROF_PY311_CODE_CODE_ADAPTIVE;
    const auto traceable = load<std::int32_t>(c, NNPROF_PY311_CODE_FIRSTTRACEABLE - NNPROF_PY311_OBJECT_TYPE);
    kept = i + 1;
    if (!out.generator && out.instr < first + 2 * static_cast<std::uintptr_t>(std::max(traceable, 0))) {
      // Pushed but not started (CPython's _PyFrame_IsIncomplete; tracebacks skip it too). It
      // stays as a placeholder that shows nothing: an entry frame still closes its C call's group.
      out.code = 0;
      continue;
    }
    // The line at the last instruction started (prev_instr), as _PyInterpreterFrame_GetLine.
    const std::size_t set = line_set(out.code, out.instr);
    Line* cached = nullptr;
    for (std::size_t way = 0; way < kWays && cached == nullptr; ++way) {
      Line& l = lines[set * kWays + way];
      if (l.code == out.code && l.instr == out.instr && l.linetable == out.linetable && l.line != 0) cached = &l;
    }
    if (cached != nullptr) {
      out.line = cached->line;
    } else {
      const std::int64_t address = (static_cast<std::int64_t>(out.instr) - static_cast<std::int64_t>(first)) / 2 * 2;
      std::int64_t size = 0;
      out.line = 0;
      if (read_memory(out.linetable + NNPROF_PY311_BYTES_SIZE, &size, sizeof size) && size > 0) {
        const std::size_t take = std::min<std::size_t>(static_cast<std::size_t>(size), kLineTableBytes);
        if (read_memory(out.linetable + NNPROF_PY311_BYTES_SVAL, line_table, take))
          out.line = python311_line(line_table, take, out.firstlineno, address);
      }
      if (out.line == 0 && out.firstlineno > 0) out.line = static_cast<std::uint32_t>(out.firstlineno);
      lines[set * kWays + line_victim[set]] = Line{out.code, out.instr, out.linetable, out.line};
      line_victim[set] = static_cast<std::uint8_t>((line_victim[set] + 1) % kWays);
    }
    if (find_code(out) == nullptr) ++misses;
  }
  if (kept < n) whole_chain = false;
  words = static_cast<std::uint32_t>(kept + misses * kPythonDefinitionWords + 1);
  return kept;
}

std::uint32_t PythonThreadCache::write(int n, std::uint64_t* out) noexcept {
  if (n <= 0) return 0;
  std::uint32_t at = 0, descriptions = 0;
  // Descriptions of the code objects this thread has not described yet, then one word per
  // frame (description id, entry bit, line), then the trailer.
  std::uint32_t ids[kMaxPythonFrames];
  for (int i = 0; i < n; ++i) {
    const Found& f = found[i];
    if (f.code == 0) {
      ids[i] = 0;
      continue;
    }
    Code* slot = find_code(f);
    if (slot == nullptr) {
      char* qualname = text;
      char* filename = text + kPythonQualnameBytes;
      const std::size_t qlen = read_text(f.qualname, qualname, kPythonQualnameBytes, line_table, kLineTableBytes);
      const std::size_t flen = read_text(f.filename, filename, kPythonFilenameBytes, line_table, kLineTableBytes);
      const std::uint32_t id = g_next_description.fetch_add(1, std::memory_order_relaxed);
      out[at++] = (std::uint64_t{id} << 32) | (std::uint64_t{qlen} << 16) | flen;
      out[at++] = static_cast<std::uint32_t>(f.firstlineno);
      std::memset(out + at, 0, ((qlen + 7) / 8 + (flen + 7) / 8) * 8);
      std::memcpy(out + at, qualname, qlen);
      at += static_cast<std::uint32_t>((qlen + 7) / 8);
      std::memcpy(out + at, filename, flen);
      at += static_cast<std::uint32_t>((flen + 7) / 8);
      const std::size_t set = code_set(f.code);
      slot = &codes[set * kWays + code_victim[set]];
      code_victim[set] = static_cast<std::uint8_t>((code_victim[set] + 1) % kWays);
      *slot = Code{f.code, f.qualname, f.filename, f.linetable, f.firstlineno, id};
      ++descriptions;
    }
    ids[i] = slot->id;
  }
  for (int i = 0; i < n; ++i)
    out[at++] = (std::uint64_t{ids[i]} << 32) | (found[i].entry ? kEntryBit : 0u) | (found[i].line & ~kEntryBit);
  out[at] = (std::uint64_t{descriptions} << 48) | (whole_chain ? kWholeChainBit : 0) |
            (std::uint64_t(static_cast<std::uint32_t>(n)) << 32) | (at + 1);
  return at + 1;
}

std::uint32_t python_section_words(const std::uint64_t* record, std::uint32_t words) noexcept {
  if (words == 0) return 0;
  const auto section = static_cast<std::uint32_t>(record[words - 1] & 0xFFFFFFFF);
  return section >= 1 && section < words ? section : 0;
}

// ---- the manager's side ------------------------------------------------------------------

void PythonStacks::clear() {
  function_of_id_.clear();
  function_of_key_.clear();
  functions_.clear();
  location_of_.clear();
  frames_.clear();
}

std::uint32_t PythonStacks::location(std::uint32_t function, std::uint32_t line) {
  const std::uint64_t key = (std::uint64_t{function} << 32) | line;
  auto [it, inserted] = location_of_.try_emplace(key, static_cast<std::uint32_t>(frames_.size()));
  if (inserted) {
    detail::Symbol s;
    s.function = functions_[function].label;
    s.file = functions_[function].file;
    s.line = line;
    s.module = functions_[function].file;  // the .py file: where a reader looks the frame up
    frames_.push_back(std::move(s));
  }
  return it->second;
}

std::size_t PythonStacks::splice(const std::uint64_t* section, std::uint32_t section_words, const std::uintptr_t* native,
                                 std::size_t n, std::uintptr_t* out, std::size_t max) {
  auto copy_native = [&] {
    const std::size_t k = std::min(n, max);
    std::copy(native, native + k, out);
    return k;
  };
  if (section_words < 1) return copy_native();
  const std::uint64_t trailer = section[section_words - 1];
  const auto descriptions = static_cast<std::uint32_t>(trailer >> 48);
  const auto frame_count = static_cast<std::uint32_t>((trailer >> 32) & 0x7FFF);
  const bool whole_chain = (trailer & kWholeChainBit) != 0;
  std::uint32_t at = 0;
  for (std::uint32_t d = 0; d < descriptions; ++d) {
    if (at + 2 > section_words - 1) return copy_native();
    const std::uint64_t head = section[at];
    const auto id = static_cast<std::uint32_t>(head >> 32);
    const std::size_t qlen = (head >> 16) & 0xFFFF, flen = head & 0xFFFF;
    const auto firstlineno = static_cast<std::int32_t>(static_cast<std::uint32_t>(section[at + 1]));
    const std::uint32_t qwords = static_cast<std::uint32_t>((qlen + 7) / 8), fwords = static_cast<std::uint32_t>((flen + 7) / 8);
    if (at + 2 + qwords + fwords > section_words - 1) return copy_native();
    const std::string qualname(reinterpret_cast<const char*>(section + at + 2), qlen);
    const std::string file(reinterpret_cast<const char*>(section + at + 2 + qwords), flen);
    at += 2 + qwords + fwords;
    const std::size_t slash = file.rfind('/');
    const std::string base = slash == std::string::npos ? file : file.substr(slash + 1);
    // The defining line names the function, so that its lines add up to one frame in a flame
    // graph; the frame's own line is the one executing.
    std::string label = fmt::format("{} ({}:{})", qualname.empty() ? "<unknown>" : qualname, base, firstlineno);
    auto [it, inserted] = function_of_key_.try_emplace(label + '\0' + file, static_cast<std::uint32_t>(functions_.size()));
    if (inserted) functions_.push_back(Function{std::move(label), file});
    function_of_id_[id] = it->second;
  }
  if (at + frame_count + 1 != section_words) return copy_native();

  // The Python frames, innermost first, cut into the groups run by one C-level eval call each.
  struct Group {
    std::uint32_t begin, end;  // frame words [begin, end)
  };
  Group groups[kMaxPythonFrames];
  std::size_t group_count = 0;
  std::uint32_t begin = at;
  for (std::uint32_t i = at; i < at + frame_count; ++i) {
    if ((section[i] & kEntryBit) != 0 || i + 1 == at + frame_count) {
      groups[group_count++] = Group{begin, i + 1};
      begin = i + 1;
    }
  }
  auto is_eval = [&](std::uintptr_t pc) { return pc >= interp_.eval_begin && pc < interp_.eval_end; };
  std::size_t evals = 0;
  for (std::size_t i = 0; i < n; ++i) evals += is_eval(native[i]) ? 1 : 0;
  // Innermost activations with no group of their own (entering or leaving): skipped.
  std::size_t unmatched = whole_chain && evals > group_count ? evals - group_count : 0;
  std::size_t k = 0, g = 0;
  auto emit_group = [&](const Group& group) {
    for (std::uint32_t i = group.begin; i < group.end && k < max; ++i) {
      const auto id = static_cast<std::uint32_t>(section[i] >> 32);
      const auto found = function_of_id_.find(id);
      if (id == 0 || found == function_of_id_.end()) continue;  // a placeholder for a frame not started yet
      out[k++] = kPythonFrameTag | location(found->second, static_cast<std::uint32_t>(section[i] & ~std::uint64_t{kEntryBit} & 0xFFFFFFFF));
    }
  };
  for (std::size_t i = 0; i < n && k < max; ++i) {
    const std::uintptr_t pc = native[i];
    if (is_eval(pc) && unmatched > 0) {
      --unmatched;
      continue;
    }
    if (is_eval(pc) && g < group_count) {
      emit_group(groups[g++]);
      continue;
    }
    const bool interpreter = pc >= interp_.module_begin && pc < interp_.module_end;
    if (interpreter && g < group_count) continue;  // the interpreter's own work for a Python frame outward
    out[k++] = pc;
  }
  while (g < group_count && k < max) emit_group(groups[g++]);
  return k;
}

}  // namespace nnprof::collect
