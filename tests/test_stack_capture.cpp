// capture_stack: frames in order, skip, truncation, many threads, and no allocation after init.
// FrameRules::unwind_copy: the CPU sampler's offline DWARF unwind of a stack copy.
#include <gtest/gtest.h>
#include <dlfcn.h>
#include <ucontext.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "collect/stack/frame_rules.hpp"
#include "collect/stack/stack_capture.hpp"
#include "no_frame_pointer.hpp"

#if !defined(NNPROF_SANITIZE_ADDRESS) && !defined(NNPROF_SANITIZE_THREAD)
#define NNPROF_TEST_COUNTS_ALLOCATIONS 1
// Counts allocations of the thread that asks (sanitizers replace malloc themselves, so the
// check runs in the plain build only).
#include "counting_malloc.hpp"
#endif

namespace {

using nnprof::collect::capture_stack;

#define NOINLINE __attribute__((noinline))
// Keeps a call from being a tail call (which would drop the caller's frame).
#define AFTER_CALL() asm volatile("" ::: "memory")

constexpr int kMax = 64;

// One capture through three known functions, with the return address each function has:
// chain.resume[i] is where level i+1's caller resumes, so a capture from level1 must read
// {inside level1, resume[0], resume[1], resume[2], ...}.
struct Chain {
  std::array<std::uintptr_t, kMax> frames{};
  int count = 0;
  std::array<std::uintptr_t, 3> resume{};
};

std::uintptr_t return_address(void* a) { return reinterpret_cast<std::uintptr_t>(a); }

NOINLINE void level1(Chain& c, int skip) {
  c.resume[0] = return_address(__builtin_return_address(0));
  c.count = capture_stack(c.frames.data(), kMax, skip);
  AFTER_CALL();
}
NOINLINE void level2(Chain& c, int skip) {
  c.resume[1] = return_address(__builtin_return_address(0));
  level1(c, skip);
  AFTER_CALL();
}
NOINLINE void level3(Chain& c, int skip) {
  c.resume[2] = return_address(__builtin_return_address(0));
  level2(c, skip);
  AFTER_CALL();
}

Chain run_chain(int skip) {
  Chain c;
  level3(c, skip);
  AFTER_CALL();
  return c;
}

class StackCapture : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { ASSERT_TRUE(nnprof::collect::stack_capture_init()); }
};

TEST_F(StackCapture, UsesLibunwindWhenInstalled) {
#ifdef NNPROF_SANITIZE_THREAD
  EXPECT_STREQ(nnprof::collect::stack_capture_method(), "backtrace") << "libunwind crashes TSan at thread exit";
#else
  void* lib = dlopen("libunwind.so.8", RTLD_LAZY | RTLD_LOCAL);
  const bool have_libunwind = lib != nullptr;
  if (lib != nullptr) dlclose(lib);
  EXPECT_STREQ(nnprof::collect::stack_capture_method(), have_libunwind ? "libunwind" : "backtrace");
#endif
}

TEST_F(StackCapture, KnownCallChainInOrder) {
  const Chain c = run_chain(0);
  ASSERT_GE(c.count, 5);
  // frames[0] is inside level1, just after its call to capture_stack.
  const auto level1_entry = reinterpret_cast<std::uintptr_t>(&level1);
  EXPECT_GT(c.frames[0], level1_entry);
  EXPECT_LT(c.frames[0], level1_entry + 4096);
  EXPECT_EQ(c.frames[1], c.resume[0]);
  EXPECT_EQ(c.frames[2], c.resume[1]);
  EXPECT_EQ(c.frames[3], c.resume[2]);
}

TEST_F(StackCapture, SkipDropsInnermostFrames) {
  // One call site for all, so that the frames above run_chain are the same too.
  std::array<Chain, 4> by_skip;
  for (int skip = 0; skip < 4; ++skip) by_skip[skip] = run_chain(skip);
  const Chain& full = by_skip[0];
  for (int skip = 1; skip < 4; ++skip) {
    const Chain& c = by_skip[skip];
    ASSERT_EQ(c.count, full.count - skip) << "skip " << skip;
    for (int i = 0; i < c.count; ++i)
      EXPECT_EQ(c.frames[i], full.frames[i + skip]) << "skip " << skip << " frame " << i;
  }
  EXPECT_EQ(by_skip[3].frames[0], full.resume[2]);
}

TEST_F(StackCapture, MaxTruncatesAndBadArgumentsGiveNothing) {
  std::uintptr_t out[2] = {};
  EXPECT_EQ(capture_stack(out, 2, 0), 2);
  EXPECT_NE(out[0], 0u);
  EXPECT_NE(out[1], 0u);
  EXPECT_EQ(capture_stack(out, 0, 0), 0);
  EXPECT_EQ(capture_stack(nullptr, 2, 0), 0);
  EXPECT_EQ(capture_stack(out, 2, 100000), 0);
}

TEST_F(StackCapture, ManyThreadsAtOnce) {
  constexpr int kThreads = 8, kRounds = 2000;
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      while (!go.load()) std::this_thread::yield();
      for (int i = 0; i < kRounds; ++i) {
        const Chain c = run_chain(0);
        if (c.count < 4 || c.frames[1] != c.resume[0] || c.frames[2] != c.resume[1] || c.frames[3] != c.resume[2])
          failures.fetch_add(1);
      }
    });
  go.store(true);
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
}

// An offline unwind, as the CPU sampler does it: registers from getcontext (the state as if
// it had returned), a copy of at most `copy_limit` bytes of the stack from sp up, and the
// frame records beyond the copy, through three functions, the middle one without a frame
// pointer (as a frame-pointer walk would skip its caller).
struct CopyChain {
  std::array<std::uintptr_t, kMax> frames{};
  std::size_t count = 0;
  nnprof::collect::UnwindEnd end = nnprof::collect::UnwindEnd::Incomplete;
  std::array<std::uintptr_t, 3> resume{};
  std::size_t max = kMax;
  /// As the kernel-walked samples give it (Unwinder::Kernel): the copy ends just below the
  /// return address of the second frame record (unwind_level3's), and the records' return
  /// addresses come as the kernel's callchain, not as frame records.
  bool kernel = false;
};

NOINLINE void unwind_level1(CopyChain& c, std::size_t copy_limit, bool garbage) {
  c.resume[0] = return_address(__builtin_return_address(0));
  ucontext_t uc;
  getcontext(&uc);
  nnprof::collect::StackCopy copy;
  copy.pc = static_cast<std::uintptr_t>(uc.uc_mcontext.gregs[REG_RIP]);
  copy.sp = static_cast<std::uintptr_t>(uc.uc_mcontext.gregs[REG_RSP]);
  copy.fp = static_cast<std::uintptr_t>(uc.uc_mcontext.gregs[REG_RBP]);
  std::uintptr_t begin = 0, end = 0;
  ASSERT_TRUE(nnprof::collect::find_mapping(copy.sp, begin, end));
  std::vector<std::uint64_t> words(std::min<std::size_t>(copy_limit, end - copy.sp) / 8);
  nnprof::collect::copy_stack_words(copy.sp, words.data(), words.size());
  std::array<std::uint64_t, 3 * kMax> records{};
  copy.chain_frames = static_cast<std::size_t>(
      nnprof::collect::frame_records_from(copy.fp, copy.sp, copy.sp + words.size() * 8, end, records.data(), kMax));
  std::array<std::uint64_t, kMax> kernel_returns{};
  if (c.kernel) {
    const auto second_record = static_cast<std::uintptr_t>(*reinterpret_cast<const std::uint64_t*>(copy.fp));
    words.resize((second_record + 8 - copy.sp) / 8);
    const int all = nnprof::collect::frame_records_from(copy.fp, copy.sp, copy.sp, end, records.data(), kMax);
    for (int i = 0; i < all; ++i) kernel_returns[static_cast<std::size_t>(i)] = records[3 * static_cast<std::size_t>(i) + 2];
    copy.kernel_returns = kernel_returns.data();
    copy.kernel_return_count = static_cast<std::size_t>(all);
    copy.chain_frames = 0;
  }
  if (garbage) {
    for (std::size_t i = 0; i < words.size(); ++i) words[i] = i * 0x2545f4914f6cdd1dull + 11;
    for (std::size_t i = 0; i < records.size(); ++i) records[i] = i * 0x9e3779b97f4a7c15ull;
  }
  copy.bytes = reinterpret_cast<const unsigned char*>(words.data());
  copy.size = words.size() * 8;
  copy.chain = records.data();
  nnprof::collect::FrameRules rules;
  c.count = rules.unwind_copy(copy, c.frames.data(), c.max, c.end);
  AFTER_CALL();
}
NOINLINE NNPROF_TEST_NO_FRAME_POINTER void unwind_level2(CopyChain& c, std::size_t limit, bool garbage) {
  c.resume[1] = return_address(__builtin_return_address(0));
  unwind_level1(c, limit, garbage);
  AFTER_CALL();
}
NOINLINE void unwind_level3(CopyChain& c, std::size_t limit, bool garbage) {
  c.resume[2] = return_address(__builtin_return_address(0));
  unwind_level2(c, limit, garbage);
  AFTER_CALL();
}

TEST(UnwindCopy, WholeStackCopyGivesEveryCallerToTheOutermostFrame) {
  CopyChain c;
  unwind_level3(c, std::size_t{1} << 30, false);
  ASSERT_GE(c.count, 5u);
  const auto level1_entry = reinterpret_cast<std::uintptr_t>(&unwind_level1);
  EXPECT_GT(c.frames[0], level1_entry);
  EXPECT_LT(c.frames[0], level1_entry + 4096);
  // Callers are call sites: return address minus one.
  EXPECT_EQ(c.frames[1], c.resume[0] - 1);
  EXPECT_EQ(c.frames[2], c.resume[1] - 1) << "the caller of the function without a frame pointer";
  EXPECT_EQ(c.frames[3], c.resume[2] - 1);
  EXPECT_EQ(c.end, nnprof::collect::UnwindEnd::Complete) << c.count << " frames";
}

TEST(UnwindCopy, FrameRecordsBeyondTheCopyAreUsed) {
  CopyChain c;
  unwind_level3(c, 0, false);  // nothing copied: only the frame records of the chain
  ASSERT_GE(c.count, 2u);
  EXPECT_EQ(c.frames[1], c.resume[0] - 1);
}

// The kernel's frame-pointer walk goes from unwind_level1's record to unwind_level3's, past
// unwind_level2, which has no frame pointer: its rule, over the copy, puts it back, and the
// kernel's return addresses go on where the copy ends.
TEST(UnwindCopy, KernelChainGoesOnWhereTheCopyEnds) {
  CopyChain c;
  c.kernel = true;
  unwind_level3(c, std::size_t{1} << 30, false);
  ASSERT_GE(c.count, 5u);
  EXPECT_EQ(c.frames[1], c.resume[0] - 1);
  EXPECT_EQ(c.frames[2], c.resume[1] - 1) << "the caller of the function without a frame pointer";
  EXPECT_EQ(c.frames[3], c.resume[2] - 1) << "from the kernel's chain, beyond the copy";
  EXPECT_EQ(c.end, nnprof::collect::UnwindEnd::Complete);
}

TEST(UnwindCopy, DepthLimitSaysSo) {
  CopyChain c;
  c.max = 3;
  unwind_level3(c, std::size_t{1} << 30, false);
  ASSERT_EQ(c.count, 3u);
  EXPECT_EQ(c.frames[2], c.resume[1] - 1);
  EXPECT_EQ(c.end, nnprof::collect::UnwindEnd::Depth);
}

TEST(UnwindCopy, GarbageStackEndsWithoutCrashing) {
  for (std::size_t limit : {std::size_t{0}, std::size_t{64}, std::size_t{4096}, std::size_t{1} << 20}) {
    CopyChain c;
    unwind_level3(c, limit, true);
    EXPECT_GE(c.count, 1u);
    EXPECT_LE(c.count, static_cast<std::size_t>(kMax));
  }
}

#ifdef NNPROF_TEST_COUNTS_ALLOCATIONS
TEST_F(StackCapture, NoAllocationAfterInit) {
  const std::uint64_t before = tls_allocations;
  Chain c = run_chain(0);
  EXPECT_EQ(tls_allocations, before);
  EXPECT_GE(c.count, 4);

  // On another thread, the first capture may allocate libunwind's thread-local block (glibc
  // allocates dynamic TLS lazily); later ones allocate nothing.
  std::uint64_t first = 99, later = 99;
  std::thread([&] {
    std::uint64_t start = tls_allocations;
    c = run_chain(0);
    first = tls_allocations - start;
    start = tls_allocations;
    for (int i = 0; i < 100; ++i) c = run_chain(0);
    later = tls_allocations - start;
  }).join();
  EXPECT_LE(first, 2u);
  EXPECT_EQ(later, 0u);
  EXPECT_GE(c.count, 4);
}
#endif

}  // namespace
