// The cost of the Python walk in a CPU sample (issue 20 item 4): what the sampler's handler
// adds per sample for a thread running CPython 3.11, against the work a native-only sample
// does in the same handler (DWARF unwinding: the frame records and a 16 KiB stack copy).
//
// Embeds CPython (this benchmark links libpython; libnnprof never does) and calls, from Python
// stacks of several depths, a C function that runs the handler's Python walk
// (PythonThreadCache::collect + write) and its native work N times each. Reported: ns per
// sample for each, warm (every code object described before) and cold (a fresh cache, as a
// thread's first sample).
#include <Python.h>
#include <signal.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <vector>

#include "collect/cpu/python_frames.hpp"
#include "collect/stack/stack_capture.hpp"

namespace {

using nnprof::collect::PythonThreadCache;

double ns_since(std::chrono::steady_clock::time_point t0, int n) {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count() / n;
}

PyObject* measure(PyObject*, PyObject* args) {
  int n = 0;
  if (!PyArg_ParseTuple(args, "i", &n)) return nullptr;
  nnprof::collect::PythonThreadCachePtr cache(PythonThreadCache::create());
  if (!cache) return PyErr_NoMemory();
  std::vector<std::uint64_t> record(nnprof::collect::python_section_words_max() + 4096);
  cache->reset();
  // The thread's stack mapping, as the handler knows it.
  const auto sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  std::uintptr_t begin = 0, end = 0;
  nnprof::collect::find_mapping(sp, begin, end);
  std::uint32_t words = 0;
  auto t0 = std::chrono::steady_clock::now();
  const int frames = cache->collect(words, begin, end);
  const std::uint32_t first_words = cache->write(frames, record.data());
  const double cold = ns_since(t0, 1);

  t0 = std::chrono::steady_clock::now();
  std::uint32_t section = 0;
  for (int i = 0; i < n; ++i) section = cache->write(cache->collect(words, begin, end), record.data());
  const double warm = ns_since(t0, n);

  // The native-only sample's handler work at up to 250 Hz (Unwinder::Dwarf).
  const std::size_t copy = std::min<std::uintptr_t>(16 * 1024, end - sp) & ~std::uintptr_t{7};
  std::vector<std::uint64_t> stack(3 * 128 + copy / 8);
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) {
    const int records = nnprof::collect::frame_records_from(sp, sp, sp + copy, end, stack.data(), 128);
    nnprof::collect::copy_stack_words(sp, stack.data() + 3 * records, copy / 8);
    asm volatile("" : : "r"(stack.data()) : "memory");
  }
  const double native = ns_since(t0, n);
  // What the kernel adds to every sample at the least: a signal sent to this thread and an
  // empty handler (a timer or perf interrupt comes on top).
  struct sigaction sa{}, old{};
  sa.sa_sigaction = [](int, siginfo_t*, void*) {};
  sa.sa_flags = SA_SIGINFO;
  sigaction(SIGRTMAX - 1, &sa, &old);
  const auto pid = getpid();
  const auto tid = static_cast<pid_t>(syscall(SYS_gettid));
  t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < n; ++i) syscall(SYS_tgkill, pid, tid, SIGRTMAX - 1);
  const double signal = ns_since(t0, n);
  sigaction(SIGRTMAX - 1, &old, nullptr);
  return Py_BuildValue("(iiidddd)", frames, first_words, section, cold, warm, native, signal);
}

PyMethodDef kMethods[] = {{"measure", measure, METH_VARARGS, "ns per sample of the Python walk"}, {nullptr, nullptr, 0, nullptr}};
PyModuleDef kModule = {PyModuleDef_HEAD_INIT, "nnprof_bench_python", nullptr, -1, kMethods, nullptr, nullptr, nullptr, nullptr};
PyObject* init_module() { return PyModule_Create(&kModule); }

const char* kScript = R"(
import nnprof_bench_python as b

def nest(depth, n):
    if depth <= 1:
        return b.measure(n)
    return nest(depth - 1, n)

print("python frames | section words (first / later) | cold walk ns | warm walk ns/sample | native work ns/sample | signal ns")
for depth in (1, 10, 30, 60, 120):
    frames, first, later, cold, warm, native, signal = nest(depth, 20000)
    print(f"{frames:13d} | {first:6d} / {later:<6d}             | {cold:12.0f} | {warm:19.0f} | {native:21.0f} | {signal:9.0f}")
)";

}  // namespace

int main() {
  PyImport_AppendInittab("nnprof_bench_python", &init_module);
  Py_Initialize();
  const nnprof::collect::PythonInterpreter interp = nnprof::collect::find_python_interpreter();
  if (!interp.readable) {
    std::fprintf(stderr, "no readable CPython 3.11: %s\n", interp.problem.c_str());
    return 1;
  }
  nnprof::collect::set_handler_python(interp);
  std::printf("CPython %s\n", interp.version.c_str());
  const int rc = PyRun_SimpleString(kScript);
  Py_Finalize();
  return rc == 0 ? 0 : 1;
}
