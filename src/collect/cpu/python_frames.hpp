// Python frames in CPU samples: CPython 3.11's frames read by the sampler's signal handler and
// spliced into the native stack by the manager thread.
//
// Supported: CPython 3.11.x on x86-64 (Debian's /usr/bin/python3 is 3.11.2), the interpreter
// found in the process at run time: libnnprof never links libpython. Other versions get no
// Python frames and one diagnostic in the profile (their samples show the interpreter's
// native frames, as before).
//
// In the handler (async-signal-safe: no allocation, no lock, no call into Python, never the
// GIL): the thread's PyThreadState comes from the gilstate thread-specific key
// (pthread_getspecific, which is what PyGILState_GetThisThreadState does, and holds also for a
// thread that released the GIL to run a native operator), else from the runtime's
// tstate_current when this thread holds the GIL. Its frame chain, tstate->cframe->current_frame
// -> previous, is walked innermost first, at most kMaxPythonFrames frames. Every read of the
// interpreter's heap goes through process_vm_readv on this process, which fails with EFAULT
// where a plain load would fault: 3.11 releases a returning frame's code object, and may free
// its datastack chunk, before current_frame moves back to the caller, and thread states of
// daemon threads are freed at exit while their key still names them, so a stale pointer must
// cost a wrong or missing frame, never the process. (Plain loads only for _PyRuntime, in the
// interpreter's image, and for the eval loop's _PyCFrame, within the thread's own stack
// mapping.) A system call per read is dear, so reads are batched: the thread state's fields in
// one, the live top of the thread's datastack chunk (where 3.11 puts the frames of plain
// calls) in one, every frame's code object in one call with an iovec each.
//
// Names are copied while the frame is known to be alive (it holds a strong reference to its
// code object): a per-thread cache, keyed by the code object's address together with the
// addresses of its qualname, filename and line table and its first line, says which code
// objects this thread already described; a code object it has not is described in the sample
// record itself (qualname, filename, first line), under a process-wide id. A freed code object
// whose address is reused by another matches all five only when it was compiled from the same
// source, and then its names are the same. The executing line is decoded from co_linetable in
// the handler (bounded; cached per code object and instruction).
#pragma once

#include <sys/types.h>
#include <sys/uio.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "record/raw_symbols.hpp"

namespace nnprof::collect {

constexpr int kMaxPythonFrames = 128;
constexpr std::size_t kPythonQualnameBytes = 128, kPythonFilenameBytes = 256;
/// Words a Python frame's description takes at most in a sample record.
constexpr std::size_t kPythonDefinitionWords = 2 + kPythonQualnameBytes / 8 + kPythonFilenameBytes / 8;

/// Stack entries that stand for Python frames: non-canonical x86-64 addresses, which no code
/// can have; the low bits index RawCpu::python_frames.
constexpr std::uintptr_t kPythonFrameTag = std::uintptr_t{0x7EC0} << 48;
constexpr bool is_python_frame_address(std::uintptr_t a) noexcept { return (a >> 48) == 0x7EC0; }

/// What the interpreter in this process is, found in ordinary context before sampling starts.
struct PythonInterpreter {
  bool readable = false;      ///< CPython 3.11 found: samples read its frames
  std::string version;        ///< "3.11.2"; empty when no CPython is loaded
  std::string problem;        ///< why frames cannot be read, for the profile; empty when readable or absent
  std::uintptr_t runtime = 0;             ///< &_PyRuntime
  std::uintptr_t code_type = 0;           ///< &PyCode_Type
  std::uintptr_t eval_begin = 0, eval_end = 0;      ///< _PyEval_EvalFrameDefault
  std::uintptr_t module_begin = 0, module_end = 0;  ///< the object holding the interpreter (executable or libpython)
};

/// Looks for CPython in the process (dlsym on the global scope). Not async-signal-safe.
PythonInterpreter find_python_interpreter();
/// Makes `interp` the one the handler reads (before timers are armed) or none (readable false).
void set_handler_python(const PythonInterpreter& interp) noexcept;

/// Per-thread handler state: code objects described already, lines decoded already, and the
/// handler's scratch memory (kept here rather than on the interrupted thread's stack, which may
/// be small). Only the thread's own handler touches it, except reset() before it is armed.
struct PythonThreadCache {
  struct Code {
    std::uintptr_t code = 0, qualname = 0, filename = 0, linetable = 0;
    std::int32_t firstlineno = 0;
    std::uint32_t id = 0;
  };
  struct Line {
    std::uintptr_t code = 0, instr = 0, linetable = 0;
    std::uint32_t line = 0;
  };
  struct Found {
    std::uintptr_t code = 0, qualname = 0, filename = 0, linetable = 0;  ///< code 0: a frame not started yet
    std::uintptr_t instr = 0;  ///< prev_instr
    std::int32_t firstlineno = 0;
    std::uint32_t line = 0;
    bool entry = false, generator = false;
  };
  /// Both caches are 4-way set associative: a stack 60 frames deep in a direct-mapped table
  /// had a few colliding code objects described again on every sample.
  static constexpr std::size_t kWays = 4, kCodes = 1024, kLines = 1024;
  Code codes[kCodes];
  Line lines[kLines];
  std::uint8_t code_victim[kCodes / kWays], line_victim[kLines / kWays];  ///< next way to replace, per set
  Found found[kMaxPythonFrames];
  bool whole_chain = false;  ///< collect() reached the outermost frame (the walk was not cut)
  unsigned char line_table[4096];  ///< co_linetable is decoded from its first 4 KiB
  char text[kPythonQualnameBytes + kPythonFilenameBytes];
  /// The top of the thread's frame stack (its current datastack chunk), copied in one read.
  alignas(8) unsigned char frame_stack[32 * 1024];
  /// Each frame's code object from its type pointer to its bytecode, read in one call.
  alignas(8) unsigned char code_bytes[kMaxPythonFrames][176];
  iovec local_io[kMaxPythonFrames], remote_io[kMaxPythonFrames];  ///< that call's vectors

  /// A cache in its own anonymous mapping (~150 KiB, zero: empty), whose pages are only
  /// touched by threads that run Python; nullptr when no memory could be mapped.
  static PythonThreadCache* create() noexcept;
  static void destroy(PythonThreadCache* cache) noexcept;
  /// Empties the cache and gives its pages back (MADV_DONTNEED), for a thread armed anew.
  void reset() noexcept;
  /// Handler: walks the calling thread's Python frames into `found`, innermost first; returns
  /// how many (0: it runs no Python) and sets `words` to the most the section will take.
  /// [stack_begin, stack_end): the thread's stack mapping, if known (0, 0: not), where the
  /// eval loop keeps its _PyCFrame: read there without a system call.
  int collect(std::uint32_t& words, std::uintptr_t stack_begin = 0, std::uintptr_t stack_end = 0) noexcept;
  /// Handler: writes the section for the `n` frames collect() found at `out`: descriptions of
  /// code objects new to this thread, one word per frame (id, entry bit, line), a trailer
  /// word. Returns the words written.
  std::uint32_t write(int n, std::uint64_t* out) noexcept;

 private:
  Code* find_code(const Found& f) noexcept;
};

struct PythonThreadCacheDeleter {
  void operator()(PythonThreadCache* cache) const noexcept { PythonThreadCache::destroy(cache); }
};
using PythonThreadCachePtr = std::unique_ptr<PythonThreadCache, PythonThreadCacheDeleter>;

/// Handler: whether the interpreter's frames are read at all.
bool handler_reads_python() noexcept;
/// Words the largest Python section takes.
constexpr std::uint32_t python_section_words_max() noexcept {
  return static_cast<std::uint32_t>(kMaxPythonFrames * (1 + kPythonDefinitionWords) + 1);
}
/// The words of the Python section at the end of a record of `words` words, from its trailer
/// (0 when malformed).
std::uint32_t python_section_words(const std::uint64_t* record, std::uint32_t words) noexcept;

/// Manager thread: turns Python sections into stack entries (kPythonFrameTag | index) and
/// splices them into native stacks. Not async-signal-safe.
class PythonStacks {
 public:
  void clear();
  void set_interpreter(const PythonInterpreter& interp) { interp_ = interp; }
  /// Splices the Python frames of `section` (python_section_words() words) into the native
  /// stack `native` (innermost first, `n` entries), writing at most `max` entries to `out`.
  ///
  /// The rule: 3.11 runs every Python-to-Python call inside one C-level call of
  /// _PyEval_EvalFrameDefault; a frame marked is_entry is the first one such a call ran. So
  /// the Python frames, innermost first, fall into groups that each end at an entry frame,
  /// and the k-th activation of _PyEval_EvalFrameDefault in the native stack (innermost
  /// first) ran the k-th group: it is replaced by that group. The interpreter's own native
  /// frames (those in the object that holds _PyEval_EvalFrameDefault: call dispatch,
  /// vectorcall, method wrappers, builtins' C code, the eval loop's helpers) are dropped
  /// while Python frames are still to come outward of them, so the stack reads main ->
  /// train -> forward (Python) -> at::addmm -> sgemm (native), with the time the interpreter
  /// spends on a Python line counted on that line; the interpreter's frames outward of the
  /// outermost Python frame (main, Py_RunMain, a thread's bootstrap) stay. Groups beyond the
  /// last activation found (a native stack cut short) go on the outer end. When the walk
  /// reached the outermost frame and the native stack has more activations than groups, the
  /// extra ones are innermost: an eval call entered before its first frame is linked, or
  /// leaving after the caller's frame is current again (py-spy's merge saw the same: "1 more
  /// native python frame", benfred/py-spy#129). Groups then match activations from the outer
  /// end, and the extra activations are hidden like the interpreter's other frames.
  std::size_t splice(const std::uint64_t* section, std::uint32_t section_words, const std::uintptr_t* native,
                     std::size_t n, std::uintptr_t* out, std::size_t max);
  /// The symbols of the entries splice() made, by index.
  [[nodiscard]] const std::vector<detail::Symbol>& frames() const { return frames_; }

 private:
  struct Function {
    std::string label, file;
  };
  std::uint32_t location(std::uint32_t function, std::uint32_t line);

  PythonInterpreter interp_;
  std::unordered_map<std::uint32_t, std::uint32_t> function_of_id_;     // description id -> functions_
  std::unordered_map<std::string, std::uint32_t> function_of_key_;      // label + file -> functions_
  std::vector<Function> functions_;
  std::unordered_map<std::uint64_t, std::uint32_t> location_of_;        // function << 32 | line -> frames_
  std::vector<detail::Symbol> frames_;
};

/// Decodes a CPython 3.11 location table (co_linetable) up to byte offset `address` of the
/// code: the line executing there, or 0 when it has none or the table ends first.
std::uint32_t python311_line(const unsigned char* table, std::size_t size, std::int32_t firstlineno,
                             std::int64_t address) noexcept;

}  // namespace nnprof::collect
