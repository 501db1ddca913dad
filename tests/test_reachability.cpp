// Conservative reachability: roots in globals, in blocks (transitively), interior pointers,
// thread stacks; overwritten pointers; unreadable memory in roots and blocks.
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/heap/reachability.hpp"

namespace {

using nnprof::collect::anonymous_mappings;
using nnprof::collect::find_reachable;
using nnprof::collect::MappedRoots;
using nnprof::collect::LiveBlock;
using nnprof::collect::MemoryRange;

// Zeroed blocks (no stale pointers inside), sizes multiples of 16 (so the allocator's next
// chunk starts exactly at a block's end, outside it), freed at the end of the test.
class Heap {
 public:
  Heap() = default;
  Heap(const Heap&) = delete;
  Heap& operator=(const Heap&) = delete;
  ~Heap() {
    for (const auto& b : blocks_) std::free(reinterpret_cast<void*>(b.address));
  }
  void** make(std::size_t size = 64) {
    void* p = std::calloc(1, size);
    blocks_.push_back({reinterpret_cast<std::uintptr_t>(p), size});
    return static_cast<void**>(p);
  }
  // Sorted, as find_reachable wants.
  std::vector<LiveBlock> sorted() const {
    auto v = blocks_;
    std::sort(v.begin(), v.end(), [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; });
    return v;
  }
  // Whether the block at p was found reachable in `result` (computed over sorted()).
  bool reachable(const std::vector<bool>& result, const void* p) const {
    const auto v = sorted();
    for (std::size_t i = 0; i < v.size(); ++i)
      if (v[i].address == reinterpret_cast<std::uintptr_t>(p)) return result.at(i);
    ADD_FAILURE() << "not a block";
    return false;
  }

 private:
  std::vector<LiveBlock> blocks_;
};

MemoryRange range_of(const void* p, std::size_t bytes) {
  const auto a = reinterpret_cast<std::uintptr_t>(p);
  return {a, a + bytes};
}

// Roots the tests control: nothing else in the process points at their blocks' addresses.
void* g_roots[8];
void* g_in_data = nullptr;  // a real global, found through global_data_ranges

TEST(Reachability, PointerInGlobalData) {
  Heap heap;
  void** a = heap.make();
  heap.make();
  g_in_data = a;
  const auto ranges = nnprof::collect::global_data_ranges();
  ASSERT_FALSE(ranges.empty());
  const auto result = find_reachable(heap.sorted(), ranges);
  EXPECT_TRUE(heap.reachable(result, a));
  g_in_data = nullptr;
}

TEST(Reachability, GlobalRangesCoverDataAndExcludeModules) {
  const auto here = reinterpret_cast<std::uintptr_t>(&g_in_data);
  auto covers = [here](const std::vector<MemoryRange>& ranges) {
    return std::any_of(ranges.begin(), ranges.end(),
                       [here](const MemoryRange& r) { return here >= r.begin && here < r.end; });
  };
  EXPECT_TRUE(covers(nnprof::collect::global_data_ranges()));
  // Excluding this executable (named by any address in it, here a function's) drops its data.
  const std::uintptr_t code_here = reinterpret_cast<std::uintptr_t>(&range_of);
  const auto without_us = nnprof::collect::global_data_ranges(std::vector<std::uintptr_t>{code_here});
  EXPECT_FALSE(covers(without_us));
  EXPECT_FALSE(without_us.empty()) << "other modules keep theirs";
  for (const MemoryRange& r : without_us) {
    EXPECT_LT(r.begin, r.end);
    EXPECT_EQ(r.begin % 8, 0u);
  }
}

TEST(Reachability, TransitiveThroughBlocks) {
  Heap heap;
  void** a = heap.make();
  void** b = heap.make(128);
  void** c = heap.make(32);
  void** lone = heap.make();
  void** points_to_lone_but_unreachable = heap.make();
  g_roots[0] = a;
  a[3] = b;   // not at the start of the block
  b[15] = c;  // the last word of b
  points_to_lone_but_unreachable[0] = lone;
  const MemoryRange roots[] = {range_of(g_roots, sizeof g_roots)};
  const auto result = find_reachable(heap.sorted(), roots);
  EXPECT_TRUE(heap.reachable(result, a));
  EXPECT_TRUE(heap.reachable(result, b));
  EXPECT_TRUE(heap.reachable(result, c));
  EXPECT_FALSE(heap.reachable(result, lone));
  EXPECT_FALSE(heap.reachable(result, points_to_lone_but_unreachable));
  std::fill(std::begin(g_roots), std::end(g_roots), nullptr);
}

TEST(Reachability, InteriorPointersCountOnePastTheEndDoesNot) {
  Heap heap;
  void** a = heap.make(64);
  void** b = heap.make(64);
  void** empty = heap.make(0);  // malloc(0): a unique address of its own
  g_roots[0] = reinterpret_cast<char*>(a) + 40;
  g_roots[1] = reinterpret_cast<char*>(b) + 64;
  g_roots[2] = empty;
  const MemoryRange roots[] = {range_of(g_roots, sizeof g_roots)};
  const auto result = find_reachable(heap.sorted(), roots);
  EXPECT_TRUE(heap.reachable(result, a));
  EXPECT_FALSE(heap.reachable(result, b));
  EXPECT_TRUE(heap.reachable(result, empty));
  std::fill(std::begin(g_roots), std::end(g_roots), nullptr);
}

TEST(Reachability, OverwrittenPointerIsNotReachable) {
  Heap heap;
  void** a = heap.make();
  void** b = heap.make();
  g_roots[0] = a;
  a[0] = b;
  const MemoryRange roots[] = {range_of(g_roots, sizeof g_roots)};
  ASSERT_TRUE(heap.reachable(find_reachable(heap.sorted(), roots), b));
  a[0] = nullptr;
  const auto after = find_reachable(heap.sorted(), roots);
  EXPECT_TRUE(heap.reachable(after, a));
  EXPECT_FALSE(heap.reachable(after, b));
  g_roots[0] = nullptr;
  EXPECT_FALSE(heap.reachable(find_reachable(heap.sorted(), roots), a));
}

TEST(Reachability, PointerOnCurrentThreadStack) {
  Heap heap;
  void** a = heap.make();
  void* volatile on_stack = a;  // volatile: in this frame's memory, not only in a register
  const MemoryRange stack = nnprof::collect::current_thread_stack();
  ASSERT_LT(stack.begin, stack.end);
  const auto slot = reinterpret_cast<std::uintptr_t>(&on_stack);
  EXPECT_GE(slot, stack.begin);
  EXPECT_LT(slot, stack.end);
  const MemoryRange roots[] = {stack};
  EXPECT_TRUE(heap.reachable(find_reachable(heap.sorted(), roots), a));
  on_stack = nullptr;
}

TEST(Reachability, PointerOnAnotherThreadStack) {
  Heap heap;
  void** a = heap.make();
  std::mutex m;
  std::condition_variable cv;
  bool stored = false, done = false;
  std::thread worker([&] {
    void* volatile on_stack = a;
    {
      std::unique_lock lock(m);
      stored = true;
      cv.notify_all();
      cv.wait(lock, [&] { return done; });
    }
    static_cast<void>(on_stack);  // live until here
  });
  {
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return stored; });
  }
  const auto stack = nnprof::collect::thread_stack(worker.native_handle());
  ASSERT_TRUE(stack.has_value());
  const MemoryRange roots[] = {*stack};
  const bool found = heap.reachable(find_reachable(heap.sorted(), roots), a);
  {
    std::lock_guard lock(m);
    done = true;
  }
  cv.notify_all();
  worker.join();
  EXPECT_TRUE(found);
}

TEST(Reachability, UnmappedMemoryInRootsAndBlocks) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  Heap heap;
  void** a = heap.make();
  void** b = heap.make();
  void** c = heap.make();
  // Three pages: a pointer to `a` in the first, a hole, a pointer to `b` in the third.
  auto* region =
      static_cast<char*>(mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  *reinterpret_cast<void**>(region + 8) = a;
  *reinterpret_cast<void**>(region + 2 * page + 16) = b;
  ASSERT_EQ(munmap(region + page, page), 0);
  // A "block" whose memory is gone (freed and unmapped meanwhile) that would point at c.
  auto* gone = static_cast<char*>(mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(gone, MAP_FAILED);
  *reinterpret_cast<void**>(gone) = c;
  ASSERT_EQ(munmap(gone, page), 0);
  g_roots[0] = gone;
  // And an inaccessible mapping.
  void* sealed = mmap(nullptr, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(sealed, MAP_FAILED);

  auto blocks = heap.sorted();
  blocks.push_back({reinterpret_cast<std::uintptr_t>(gone), page});
  std::sort(blocks.begin(), blocks.end(), [](const LiveBlock& x, const LiveBlock& y) { return x.address < y.address; });
  const MemoryRange roots[] = {
      range_of(region, 3 * page), range_of(sealed, page), range_of(g_roots, sizeof g_roots), {0, 4096}};
  const auto result = find_reachable(blocks, roots);
  auto is_reachable = [&](const void* p) {
    for (std::size_t i = 0; i < blocks.size(); ++i)
      if (blocks[i].address == reinterpret_cast<std::uintptr_t>(p)) return static_cast<bool>(result[i]);
    return false;
  };
  EXPECT_TRUE(is_reachable(a));
  EXPECT_TRUE(is_reachable(b));
  EXPECT_TRUE(is_reachable(gone));
  EXPECT_FALSE(is_reachable(c));
  g_roots[0] = nullptr;
  munmap(region, page);
  munmap(region + 2 * page, page);
  munmap(sealed, page);
}

TEST(Reachability, LongListAndWideFanOut) {
  // Enough blocks to go through many batches and the page cache's evictions.
  constexpr int kList = 20000, kFan = 20000;
  Heap heap;
  void** head = heap.make();
  void** node = head;
  for (int i = 1; i < kList; ++i) {
    void** next = heap.make(i % 3 == 0 ? 48 : 6000);  // some blocks span pages
    node[1] = next;
    node = next;
  }
  void** fan = heap.make(kFan * sizeof(void*));
  std::vector<void**> leaves;
  for (int i = 0; i < kFan; ++i) {
    leaves.push_back(heap.make(16));
    fan[i] = leaves.back();
  }
  void** unreachable = heap.make();
  g_roots[0] = head;
  g_roots[1] = fan;
  const MemoryRange roots[] = {range_of(g_roots, sizeof g_roots)};
  const auto blocks = heap.sorted();
  const auto result = find_reachable(blocks, roots);
  EXPECT_EQ(std::count(result.begin(), result.end(), true), kList + 1 + kFan);
  EXPECT_FALSE(heap.reachable(result, unreachable));
  std::fill(std::begin(g_roots), std::end(g_roots), nullptr);
}

TEST(Reachability, NothingToFind) {
  EXPECT_TRUE(find_reachable({}, {}).empty());
  Heap heap;
  heap.make();
  const auto result = find_reachable(heap.sorted(), {});
  ASSERT_EQ(result.size(), 1u);
  EXPECT_FALSE(result[0]);
}

// Memory the program mapped itself (as pymalloc maps its arenas) is a root where it holds no
// block; a mapping that holds a block is an allocator's heap and is not.
TEST(Reachability, MemoryTheProgramMappedHoldsPointersWhenItHoldsNoBlock) {
#if defined(NNPROF_SANITIZE_ADDRESS) || defined(NNPROF_SANITIZE_THREAD)
  // The sanitizers' shadow memory and allocator regions are anonymous mappings too, holding
  // copies of every pointer; heap tracking never runs under them (their allocator wins).
  GTEST_SKIP() << "sanitizer runtimes map anonymous memory that holds copies of the test's pointers";
#endif
  constexpr std::size_t kBytes = 1 << 16;
  // Two mappings with an inaccessible gap, so that the kernel cannot merge them into one.
  char* both = static_cast<char*>(mmap(nullptr, 3 * kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(both, MAP_FAILED);
  ASSERT_EQ(mprotect(both + kBytes, kBytes, PROT_NONE), 0);
  void* arena = both;
  void* allocator_heap = both + 2 * kBytes;
  Heap heap;
  void** kept = heap.make();
  void** lost = heap.make();
  void** behind_heap = heap.make();
  static_cast<void**>(arena)[100] = kept;
  static_cast<void**>(allocator_heap)[100] = behind_heap;
  std::vector<LiveBlock> blocks = heap.sorted();
  const LiveBlock in_heap{reinterpret_cast<std::uintptr_t>(allocator_heap) + 4096, 64};
  blocks.insert(std::upper_bound(blocks.begin(), blocks.end(), in_heap,
                                 [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; }),
                in_heap);

  const std::vector<MemoryRange> mappings = anonymous_mappings();
  const auto listed = [&](const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return std::any_of(mappings.begin(), mappings.end(), [&](const MemoryRange& r) { return a >= r.begin && a < r.end; });
  };
  EXPECT_TRUE(listed(arena));
  EXPECT_TRUE(listed(allocator_heap));
  MappedRoots mapped{mappings};
  const std::vector<bool> result = find_reachable(blocks, {}, &mapped);
  std::vector<bool> mine;  // the result for heap.sorted(), without the block in allocator_heap
  for (std::size_t i = 0; i < blocks.size(); ++i)
    if (blocks[i].address != in_heap.address) mine.push_back(result[i]);
  EXPECT_TRUE(heap.reachable(mine, kept)) << "only the mapped arena points to it";
  EXPECT_FALSE(heap.reachable(mine, lost)) << "nothing points to it";
  EXPECT_FALSE(heap.reachable(mine, behind_heap)) << "an allocator's heap is not a root";
  EXPECT_GE(mapped.scanned_bytes, kBytes);
  EXPECT_EQ(mapped.skipped_bytes, 0u);

  // Without the mapped roots the arena's pointer is not seen; over the budget it is skipped.
  EXPECT_FALSE(heap.reachable(find_reachable(heap.sorted(), {}), kept));
  MappedRoots none{mappings, 0};
  EXPECT_FALSE(heap.reachable(find_reachable(heap.sorted(), {}, &none), kept));
  EXPECT_GE(none.skipped_bytes, kBytes);
  munmap(both, 3 * kBytes);
}

// The caller's own list of blocks lies in the allocator's heap; it must not split that heap
// into pieces tested for blocks one by one (a piece holding none, with stale addresses in
// freed bookkeeping, would be scanned as a root), and it is never scanned itself.
TEST(Reachability, OwnBuffersAreCutOutAfterTheTestForBlocks) {
  constexpr std::size_t kPage = 4096;
  char* region = static_cast<char*>(mmap(nullptr, 3 * kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(region, MAP_FAILED);
  Heap heap;
  void** stale = heap.make();   // its address lies in the allocator's heap's first page
  void** listed = heap.make();  // its address lies in the caller's list (the middle page)
  reinterpret_cast<void**>(region)[10] = stale;
  reinterpret_cast<void**>(region + kPage)[10] = listed;
  std::vector<LiveBlock> blocks = heap.sorted();
  const LiveBlock in_heap{reinterpret_cast<std::uintptr_t>(region) + 2 * kPage + 64, 64};  // the heap holds a block
  blocks.insert(std::upper_bound(blocks.begin(), blocks.end(), in_heap,
                                 [](const LiveBlock& a, const LiveBlock& b) { return a.address < b.address; }),
                in_heap);
  const std::vector<MemoryRange> ranges{range_of(region, 3 * kPage)};
  const MemoryRange own = range_of(region + kPage, kPage);
  MappedRoots mapped{ranges};
  mapped.own_buffers = {&own, 1};
  const std::vector<bool> result = find_reachable(blocks, {}, &mapped);
  for (std::size_t i = 0; i < blocks.size(); ++i) EXPECT_FALSE(result[i]) << "block " << i << ": the heap is not a root";
  EXPECT_EQ(mapped.scanned_bytes, 0u);

  // A mapping with no block is a root, less the caller's list.
  const std::vector<LiveBlock> only_heap = heap.sorted();
  MappedRoots arena{ranges};
  arena.own_buffers = {&own, 1};
  const std::vector<bool> found = find_reachable(only_heap, {}, &arena);
  EXPECT_TRUE(heap.reachable(found, stale)) << "the arena points to it";
  EXPECT_FALSE(heap.reachable(found, listed)) << "only the caller's own list points to it";
  EXPECT_EQ(arena.scanned_bytes, 2 * kPage);
  munmap(region, 3 * kPage);
}

TEST(Reachability, AnonymousMappingsLeaveOutWhatIsExcepted) {
  constexpr std::size_t kBytes = 1 << 16;
  void* region = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(region, MAP_FAILED);
  const auto a = reinterpret_cast<std::uintptr_t>(region);
  const MemoryRange except{a + 4096, a + 8192};
  bool before = false, after = false;
  for (const MemoryRange& r : anonymous_mappings({&except, 1})) {
    EXPECT_FALSE(r.begin < except.end && except.begin < r.end) << "the excepted bytes are cut out";
    before = before || (a >= r.begin && a < r.end);
    after = after || (except.end >= r.begin && except.end < r.end);
  }
  EXPECT_TRUE(before && after) << "the rest of the mapping stays";
  const auto stack = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0));
  for (const MemoryRange& r : anonymous_mappings())
    if (stack >= r.begin && stack < r.end) ADD_FAILURE() << "the main thread's [stack] is listed";
  munmap(region, kBytes);
}

}  // namespace
