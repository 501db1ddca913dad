// Symbolizer: functions of this test and of libc, file:line (this file is built with -g),
// return-address semantics, unknown addresses, libraries loaded later, threads. The ASan build
// compiles this file with clang, which writes no .debug_aranges: there these tests check the
// symbolizer's own unit lookup (ModuleTable::units), and in the GCC builds libdw's.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <gnu/libc-version.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "collect/stack/stack_capture.hpp"
#include "collect/symbols/symbolizer.hpp"

#define NOINLINE __attribute__((noinline))
#define AFTER_CALL() asm volatile("" ::: "memory")

namespace nnprof_symbolizer_test {

NOINLINE std::uintptr_t my_return_address() {
  AFTER_CALL();
  return reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
}

// The call below must stay on line kCallLine: a return address resolves to its call's line.
constexpr std::uint32_t kFirstLine = __LINE__ + 1;
NOINLINE std::uintptr_t call_site_probe() {
  const std::uintptr_t ra = my_return_address();  // kCallLine
  AFTER_CALL();
  return ra;
}
constexpr std::uint32_t kCallLine = kFirstLine + 1;
constexpr std::uint32_t kLastLine = __LINE__ - 2;

std::uintptr_t g_noreturn_ra = 0;

[[noreturn]] NOINLINE void record_and_throw() {
  g_noreturn_ra = reinterpret_cast<std::uintptr_t>(__builtin_return_address(0));
  throw 42;
}

// Its last instruction is the call, so the return address may be the first byte after it
// (GCC often pads with a nop): only address - 1 is sure to be in it.
NOINLINE void ends_in_noreturn_call() { record_and_throw(); }

std::vector<std::uintptr_t> g_qsort_stack;

int compare_and_capture(const void* a, const void* b) {
  if (g_qsort_stack.empty()) {
    std::uintptr_t frames[64];
    const int n = nnprof::collect::capture_stack(frames, 64, 0);
    g_qsort_stack.assign(frames, frames + n);
  }
  return *static_cast<const int*>(a) - *static_cast<const int*>(b);
}

}  // namespace nnprof_symbolizer_test

namespace {

using nnprof::collect::Symbol;
using nnprof::collect::Symbolizer;
namespace t = nnprof_symbolizer_test;

std::string self_path() {
  char buf[PATH_MAX];
  const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string();
}

std::string file_name(const std::string& path) { return std::filesystem::path(path).filename().string(); }

TEST(Symbolizer, ReturnAddressInThisTest) {
  Symbolizer s;
  ASSERT_TRUE(s.ok());
  const std::uintptr_t ra = t::call_site_probe();
  const Symbol sym = s.resolve(ra, true);
  EXPECT_EQ(sym.function, "nnprof_symbolizer_test::call_site_probe()");
  EXPECT_EQ(file_name(sym.file), "test_symbolizer.cpp");
  EXPECT_EQ(sym.line, t::kCallLine);
  EXPECT_EQ(std::filesystem::canonical(sym.module), std::filesystem::canonical(self_path()));
}

TEST(Symbolizer, FunctionEntryInThisTest) {
  Symbolizer s;
  const Symbol sym = s.resolve(reinterpret_cast<std::uintptr_t>(&t::call_site_probe), false);
  EXPECT_EQ(sym.function, "nnprof_symbolizer_test::call_site_probe()");
  EXPECT_EQ(file_name(sym.file), "test_symbolizer.cpp");
  EXPECT_GE(sym.line, t::kFirstLine);
  EXPECT_LE(sym.line, t::kLastLine);
}

TEST(Symbolizer, ReturnAddressOfNoreturnCall) {
  try {
    t::ends_in_noreturn_call();
  } catch (int) {
  }
  ASSERT_NE(t::g_noreturn_ra, 0u);
  Symbolizer s;
  EXPECT_EQ(s.resolve(t::g_noreturn_ra, true).function, "nnprof_symbolizer_test::ends_in_noreturn_call()");
  EXPECT_EQ(s.resolve(t::g_noreturn_ra - 1, false).function, "nnprof_symbolizer_test::ends_in_noreturn_call()");
}

TEST(Symbolizer, LibcFunction) {
  Symbolizer s;
  // Not intercepted by the sanitizers, so the address is libc's own.
  const Symbol sym = s.resolve(reinterpret_cast<std::uintptr_t>(&gnu_get_libc_version), false);
  EXPECT_EQ(sym.function, "gnu_get_libc_version");
  EXPECT_NE(sym.module.find("libc.so"), std::string::npos) << sym.module;
}

TEST(Symbolizer, CapturedStackThroughLibc) {
  ASSERT_TRUE(nnprof::collect::stack_capture_init());
  t::g_qsort_stack.clear();
  int values[] = {3, 1, 2};
  std::qsort(values, 3, sizeof(int), t::compare_and_capture);
  ASSERT_GE(t::g_qsort_stack.size(), 3u);
  Symbolizer s;
  const std::vector<Symbol> syms = s.resolve_all(t::g_qsort_stack, true);
  ASSERT_EQ(syms.size(), t::g_qsort_stack.size());
  EXPECT_EQ(syms[0].function, "nnprof_symbolizer_test::compare_and_capture(void const*, void const*)");
  EXPECT_EQ(file_name(syms[0].file), "test_symbolizer.cpp");
  bool in_libc = false, in_test_body = false;
  for (const Symbol& sym : syms) {
    in_libc = in_libc || (sym.module.find("libc.so") != std::string::npos && !sym.function.empty());
    in_test_body =
        in_test_body || sym.function.find("Symbolizer_CapturedStackThroughLibc_Test::TestBody") != std::string::npos;
  }
  EXPECT_TRUE(in_libc) << "qsort's frames";
  EXPECT_TRUE(in_test_body);
  // The batch gives what single lookups give.
  for (std::size_t i = 0; i < syms.size(); ++i) {
    const Symbol one = s.resolve(t::g_qsort_stack[i], true);
    EXPECT_EQ(one.function, syms[i].function);
    EXPECT_EQ(one.line, syms[i].line);
  }
}

int g_data_variable = 1;

TEST(Symbolizer, UnknownAddresses) {
  Symbolizer s;
  for (const std::uintptr_t a : {std::uintptr_t{0}, std::uintptr_t{16}, ~std::uintptr_t{0} - 4096}) {
    const Symbol sym = s.resolve(a, false);
    EXPECT_TRUE(sym.function.empty()) << a;
    EXPECT_TRUE(sym.module.empty()) << a;
    EXPECT_TRUE(sym.file.empty()) << a;
    EXPECT_EQ(sym.line, 0u);
  }
  int local = 0;
  const Symbol on_stack = s.resolve(reinterpret_cast<std::uintptr_t>(&local), false);
  EXPECT_TRUE(on_stack.function.empty());
  EXPECT_TRUE(on_stack.module.empty()) << on_stack.module;
  // Data of a known module: no function, but the module.
  const Symbol data = s.resolve(reinterpret_cast<std::uintptr_t>(&g_data_variable), false);
  EXPECT_TRUE(data.function.empty()) << data.function;
  EXPECT_EQ(std::filesystem::canonical(data.module), std::filesystem::canonical(self_path()));
}

TEST(Symbolizer, LibraryLoadedAfterConstruction) {
  Symbolizer s;
  // The test does not use libunwind; the symbolizer must find it once it is loaded.
  void* lib = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
  if (lib == nullptr) GTEST_SKIP() << "libunwind.so.8 is not installed";
  void* fn = dlsym(lib, "unw_backtrace");
  ASSERT_NE(fn, nullptr);
  const Symbol sym = s.resolve(reinterpret_cast<std::uintptr_t>(fn), false);
  EXPECT_EQ(sym.function, "unw_backtrace");
  EXPECT_NE(sym.module.find("libunwind"), std::string::npos) << sym.module;
  // Not closed: stack capture may be using the same handle.
}

TEST(Symbolizer, ConcurrentLookups) {
  Symbolizer s;
  const std::uintptr_t ra = t::call_site_probe();
  std::vector<std::thread> threads;
  std::vector<int> good(4, 0);
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&, i] {
      for (int k = 0; k < 200; ++k) {
        const Symbol sym = s.resolve(ra + static_cast<std::uintptr_t>(k % 3), true);
        good[i] += sym.function == "nnprof_symbolizer_test::call_site_probe()";
      }
    });
  for (auto& th : threads) th.join();
  for (int g : good) EXPECT_EQ(g, 200);
  EXPECT_EQ(s.resolve(ra, true).line, t::kCallLine);
}

TEST(Symbolizer, MovedFromIsEmptyButSafe) {
  Symbolizer a;
  Symbolizer b(std::move(a));
  EXPECT_TRUE(b.ok());
  EXPECT_FALSE(a.ok());  // NOLINT(bugprone-use-after-move): documented state
  EXPECT_TRUE(a.resolve(reinterpret_cast<std::uintptr_t>(&t::call_site_probe), false).function.empty());
  EXPECT_EQ(a.resolve_all(std::vector<std::uintptr_t>{1, 2}, false).size(), 2u);
}

}  // namespace
