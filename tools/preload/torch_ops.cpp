// Zero-code PyTorch operators: when the recorded process loads LibTorch, the agent loads
// libnnprof_torch beside it and starts its observer into the global profiler.
//
// LibTorch arrives two ways. A LibTorch program links it, so it is loaded (and, the agent's
// constructor running after its libraries', initialised) when the agent starts. Python loads
// it long after start (`import torch` dlopens torch/_C*.so, which needs libtorch_cpu), so the
// agent interposes dlopen and looks again after every load by path. Interposing dlopen moves
// the caller glibc sees into the agent, and for a bare file name glibc searches the caller's
// RUNPATH: so a bare name is not wrapped at all: a few instructions jump straight to the real
// dlopen with the caller's return address intact (x86-64; elsewhere dlopen is not
// interposed, and only a program that links LibTorch has its operators recorded).
//
// Environment: NNPROF_RECORD_TORCH  1 (default): record operators; 0: do not (--no-torch-ops).
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>

#include "say.hpp"
#include "torch_ops.hpp"

namespace {

using DlopenFn = void* (*)(const char*, int);

DlopenFn real_dlopen() {
  static std::atomic<DlopenFn> real{nullptr};
  DlopenFn fn = real.load(std::memory_order_acquire);
  if (fn == nullptr) {
    fn = reinterpret_cast<DlopenFn>(dlsym(RTLD_NEXT, "dlopen"));
    real.store(fn, std::memory_order_release);
  }
  return fn;
}

using nnprof::agent::say;

// 0: watching for LibTorch; 1: it was found (started, or a message said why not); 2: off.
std::atomic<int> g_state{0};

std::string loaded_libtorch() {
  std::string found;
  dl_iterate_phdr(
      [](dl_phdr_info* info, size_t, void* out) -> int {
        const char* name = info->dlpi_name;
        if (name == nullptr || std::strstr(name, "/libtorch_cpu.so") == nullptr) return 0;
        *static_cast<std::string*>(out) = name;
        return 1;
      },
      &found);
  return found;
}

#ifdef NNPROF_TORCH_CPU_LIBRARY
std::string real_path(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) != nullptr ? std::string(buffer) : path;
}
#endif

void start_observer([[maybe_unused]] const std::string& libtorch) {
#ifndef NNPROF_TORCH_CPU_LIBRARY
  say("this process loaded LibTorch (" + libtorch +
      "), but this nnprof was built without LibTorch (install libtorch-dev and rebuild it): PyTorch operators are not "
      "recorded");
#else
  // The observer is linked against the LibTorch nnprof was built with; loading it beside
  // another would bring a second LibTorch into the process.
  if (real_path(libtorch) != real_path(NNPROF_TORCH_CPU_LIBRARY)) {
    say("this process loaded LibTorch from " + libtorch + ", but nnprof's operator observer was built against " +
        NNPROF_TORCH_CPU_LIBRARY + " (LibTorch " NNPROF_TORCH_VERSION
        "): PyTorch operators are not recorded (rebuild nnprof against this LibTorch, or pass --no-torch-ops)");
    return;
  }
  Dl_info self{};
  if (dladdr(reinterpret_cast<void*>(&start_observer), &self) == 0 || self.dli_fname == nullptr) {
    say("could not find nnprof's own directory: PyTorch operators are not recorded");
    return;
  }
  std::string observer = self.dli_fname;
  observer = observer.substr(0, observer.rfind('/') + 1) + "libnnprof_torch.so";
  void* handle = real_dlopen()(observer.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* error = dlerror();
    say("could not load nnprof's operator observer (" + std::string(error != nullptr ? error : observer) +
        "): PyTorch operators are not recorded");
    return;
  }
  using StartFn = int (*)(int, char*, unsigned long);
  const auto start = reinterpret_cast<StartFn>(dlsym(handle, "nnprof_torch_start"));
  char why[256] = {};
  if (start == nullptr) {
    say(observer + " has no nnprof_torch_start: PyTorch operators are not recorded");
  } else if (start(1, why, sizeof why) != 0) {
    say(std::string("PyTorch operators are not recorded: ") + why);
  }
#endif
}

void look_for_libtorch() noexcept {
  if (g_state.load(std::memory_order_acquire) != 0) return;
  try {
    const std::string libtorch = loaded_libtorch();
    if (libtorch.empty()) return;
    int watching = 0;
    if (!g_state.compare_exchange_strong(watching, 1, std::memory_order_acq_rel)) return;
    start_observer(libtorch);
  } catch (...) {
    // Out of memory: operators are not recorded; the program runs on.
  }
}

}  // namespace

namespace nnprof::agent {

void start_torch_ops() noexcept {
  const char* v = std::getenv("NNPROF_RECORD_TORCH");
  if (v != nullptr && std::strcmp(v, "0") == 0) {
    g_state.store(2, std::memory_order_release);
    return;
  }
  look_for_libtorch();
}

}  // namespace nnprof::agent

#if defined(__x86_64__)
// dlopen by path: the real one, then a look for LibTorch. glibc sees the agent as the caller,
// which matters only for the link namespace (dlmopen's, not used by the programs profiled).
extern "C" __attribute__((visibility("hidden"))) void* nnprof_dlopen_by_path(const char* file, int mode) {
  void* handle = real_dlopen()(file, mode);
  if (handle != nullptr) look_for_libtorch();
  return handle;
}

// Where the dlopen below jumps: the real dlopen for a bare name (or one with $ORIGIN-like
// tokens, expanded against the caller) and NULL, nnprof_dlopen_by_path for a path.
extern "C" __attribute__((visibility("hidden"))) void* nnprof_dlopen_target(const char* file) {
  if (g_state.load(std::memory_order_acquire) == 0 && file != nullptr && std::strchr(file, '/') != nullptr &&
      std::strchr(file, '$') == nullptr)
    return reinterpret_cast<void*>(&nnprof_dlopen_by_path);
  return reinterpret_cast<void*>(real_dlopen());
}

// dlopen(file, mode): asks nnprof_dlopen_target where to go, keeping the arguments, then
// jumps there, so that the callee's return address is still the program's. (endbr64: the
// PLT reaches it by an indirect jump, which a CPU enforcing indirect-branch tracking accepts
// only onto that instruction; elsewhere it is a no-op.)
asm(R"(
  .text
  .globl dlopen
  .type dlopen, @function
dlopen:
  .cfi_startproc
  endbr64
  pushq %rdi
  .cfi_adjust_cfa_offset 8
  pushq %rsi
  .cfi_adjust_cfa_offset 8
  subq $8, %rsp
  .cfi_adjust_cfa_offset 8
  call nnprof_dlopen_target
  addq $8, %rsp
  .cfi_adjust_cfa_offset -8
  popq %rsi
  .cfi_adjust_cfa_offset -8
  popq %rdi
  .cfi_adjust_cfa_offset -8
  jmp *%rax
  .cfi_endproc
  .size dlopen, .-dlopen
)");
#endif
