// The live blocks of heap tracking without the hooks (so it also runs under sanitizers): the
// shared table, the per-thread caches in front of it, moving blocks from a cache to the table
// (eviction, flush), and frees from other threads racing with those moves.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "collect/heap/thread_cache.hpp"
#include "nnprof/detail/thread_state.hpp"

namespace {

using nnprof::collect::LiveBlockInfo;
using nnprof::collect::LiveBlocks;
using nnprof::collect::LiveTable;
using nnprof::collect::ThreadCache;
using nnprof::detail::Node;

// Fake block addresses: nothing dereferences them. 16-aligned, like malloc's.
constexpr std::uintptr_t address_of(std::uint64_t i) { return 0x7f0000000000ull + i * 16; }

LiveBlockInfo info_for(std::uintptr_t address, Node* node) {
  return LiveBlockInfo{address % 1000 + 1, node, address ^ 0x1234, 0};
}

std::map<std::uintptr_t, LiveBlockInfo> everything(const LiveBlocks& blocks) {
  std::map<std::uintptr_t, LiveBlockInfo> all;
  std::size_t seen = 0;
  blocks.for_each([&](std::uintptr_t a, const LiveBlockInfo& info) {
    all[a] = info;
    ++seen;
  });
  EXPECT_EQ(seen, all.size()) << "a block was seen twice";
  return all;
}

// What the fast path and the tracker do on an allocation and a free by the cache's owner.
void owner_alloc(LiveBlocks& blocks, ThreadCache& cache, std::uintptr_t a, const LiveBlockInfo& info,
                 std::uint32_t& claims) {
  if (!cache.put_if_empty(a, info)) {
    ASSERT_TRUE(blocks.put(cache, a, info, claims));
  }
}

bool owner_free(LiveBlocks& blocks, ThreadCache& cache, std::uintptr_t a, LiveBlockInfo& out) {
  Node* node = nullptr;
  if (cache.take_own(a, out.size, node)) {
    out.node = node;
    return true;
  }
  return blocks.take(&cache, a, out);
}

TEST(LiveTable, InsertRemoveAcrossGenerations) {
  LiveTable table;
  Node node;
  std::uint32_t claims = 0;
  constexpr std::uint64_t kBlocks = 300'000;  // several generations (the first has 16,384 slots)
  for (std::uint64_t i = 0; i < kBlocks; ++i) ASSERT_TRUE(table.insert(address_of(i), info_for(address_of(i), &node), claims));
  std::uint64_t seen = 0;
  table.for_each([&](std::uintptr_t a, const LiveBlockInfo& info) {
    EXPECT_EQ(info.size, info_for(a, &node).size);
    ++seen;
  });
  EXPECT_EQ(seen, kBlocks);
  for (std::uint64_t i = 0; i < kBlocks; i += 2) {
    LiveBlockInfo out;
    ASSERT_TRUE(table.remove(address_of(i), out));
    EXPECT_EQ(out.size, info_for(address_of(i), &node).size);
    EXPECT_EQ(out.node, &node);
    EXPECT_EQ(out.caller, info_for(address_of(i), &node).caller);
  }
  LiveBlockInfo out;
  EXPECT_FALSE(table.remove(address_of(0), out));
  EXPECT_FALSE(table.remove(address_of(kBlocks + 5), out));
  table.clear();
  seen = 0;
  table.for_each([&](std::uintptr_t, const LiveBlockInfo&) { ++seen; });
  EXPECT_EQ(seen, 0u);
}

TEST(LiveBlocks, OwnerPutsAndTakesWithoutTheTable) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  ASSERT_NE(cache, nullptr);
  ASSERT_GE(blocks.enlist(cache), 0);
  Node node;
  const std::uintptr_t a = address_of(1);
  ASSERT_TRUE(cache->put_if_empty(a, info_for(a, &node)));
  auto all = everything(blocks);
  ASSERT_EQ(all.count(a), 1u);
  EXPECT_EQ(all[a].size, info_for(a, &node).size);
  std::uint64_t size = 0;
  Node* owner = nullptr;
  ASSERT_TRUE(cache->take_own(a, size, owner));
  EXPECT_EQ(size, info_for(a, &node).size);
  EXPECT_EQ(owner, &node);
  EXPECT_FALSE(cache->take_own(a, size, owner));
  LiveBlockInfo out;
  EXPECT_FALSE(blocks.take(nullptr, a, out));  // freed: not tracked any more
  EXPECT_TRUE(everything(blocks).empty());
}

TEST(LiveBlocks, AnotherThreadFreesABlockStillInTheOwnersCache) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  ASSERT_GE(blocks.enlist(cache), 0);
  Node node;
  std::uint32_t claims = 0;
  for (std::uint64_t i = 0; i < 10; ++i) owner_alloc(blocks, *cache, address_of(i), info_for(address_of(i), &node), claims);
  std::thread([&] {
    for (std::uint64_t i = 0; i < 10; ++i) {
      LiveBlockInfo out;
      ASSERT_TRUE(blocks.take(nullptr, address_of(i), out)) << i;
      EXPECT_EQ(out.size, info_for(address_of(i), &node).size);
      EXPECT_EQ(out.node, &node);
      EXPECT_EQ(out.caller, info_for(address_of(i), &node).caller);
    }
  }).join();
  EXPECT_TRUE(everything(blocks).empty());
  for (std::uint64_t i = 0; i < 10; ++i) {
    std::uint64_t size = 0;
    Node* owner = nullptr;
    EXPECT_FALSE(cache->take_own(address_of(i), size, owner));  // its slot was emptied
  }
}

TEST(LiveBlocks, EvictionUnderManyLiveBlocksKeepsEveryBlockOnce) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  ASSERT_GE(blocks.enlist(cache), 0);
  Node node;
  std::uint32_t claims = 0;
  constexpr std::uint64_t kBlocks = 20'000;  // far more than a cache holds
  for (std::uint64_t i = 0; i < kBlocks; ++i) owner_alloc(blocks, *cache, address_of(i), info_for(address_of(i), &node), claims);
  const auto all = everything(blocks);
  ASSERT_EQ(all.size(), kBlocks);
  for (const auto& [a, info] : all) EXPECT_EQ(info.size, info_for(a, &node).size);
  // Half freed by the owner (cache or table), half by another thread.
  for (std::uint64_t i = 0; i < kBlocks; i += 2) {
    LiveBlockInfo out;
    ASSERT_TRUE(owner_free(blocks, *cache, address_of(i), out)) << i;
    EXPECT_EQ(out.size, info_for(address_of(i), &node).size);
  }
  std::thread([&] {
    for (std::uint64_t i = 1; i < kBlocks; i += 2) {
      LiveBlockInfo out;
      ASSERT_TRUE(blocks.take(nullptr, address_of(i), out)) << i;
      EXPECT_EQ(out.size, info_for(address_of(i), &node).size);
    }
  }).join();
  EXPECT_TRUE(everything(blocks).empty());
}

TEST(LiveBlocks, FlushMovesACacheToTheTable) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  const int place = blocks.enlist(cache);
  ASSERT_GE(place, 0);
  Node node;
  std::uint32_t claims = 0;
  for (std::uint64_t i = 0; i < 100; ++i) owner_alloc(blocks, *cache, address_of(i), info_for(address_of(i), &node), claims);
  ASSERT_TRUE(blocks.flush(*cache));
  blocks.delist(place);
  blocks.recycle(cache);
  // The thread is gone; its blocks are all in the table, found by any thread.
  const auto all = everything(blocks);
  ASSERT_EQ(all.size(), 100u);
  for (std::uint64_t i = 0; i < 100; ++i) {
    LiveBlockInfo out;
    ASSERT_TRUE(blocks.table().remove(address_of(i), out));
    EXPECT_EQ(out.size, info_for(address_of(i), &node).size);
  }
  // A recycled cache comes back empty.
  ThreadCache* again = blocks.new_cache();
  EXPECT_EQ(again, cache);
  for (const auto& s : again->slots) EXPECT_EQ(s.key.load(), nnprof::collect::LiveSlot::kEmpty);
}

TEST(LiveBlocks, ClearDelistsCachesAndAtMostMaxCachesAreEnlisted) {
  LiveBlocks blocks;
  std::vector<ThreadCache*> caches;
  for (std::size_t i = 0; i < LiveBlocks::kMaxCaches; ++i) {
    caches.push_back(blocks.new_cache());
    ASSERT_EQ(blocks.enlist(caches.back()), static_cast<int>(i));
  }
  ThreadCache* extra = blocks.new_cache();
  EXPECT_EQ(blocks.enlist(extra), -1);
  blocks.delist(7);
  EXPECT_EQ(blocks.enlist(extra), 7);  // a place freed by a thread that ended is reused
  Node node;
  ASSERT_TRUE(caches[3]->put_if_empty(address_of(1), info_for(address_of(1), &node)));
  EXPECT_EQ(everything(blocks).size(), 1u);
  blocks.clear();
  EXPECT_TRUE(everything(blocks).empty());  // the stale cache is not searched any more
  LiveBlockInfo out;
  EXPECT_FALSE(blocks.take(nullptr, address_of(1), out));
  EXPECT_EQ(blocks.enlist(extra), 0);
}

// Owners allocate and free; each hands a share of its blocks to a consumer thread that frees
// them, and gets the addresses back for reuse (as an allocator would), so frees from other
// threads race with evictions and reuse of the same addresses. A snapshot thread reads all the
// while. Every block must be taken exactly once, with its own information.
TEST(LiveBlocks, ConcurrentOwnersConsumersAndSnapshots) {
  LiveBlocks blocks;
  constexpr int kOwners = 3;
  constexpr std::uint64_t kAddressesPerOwner = 2'000;  // several times a cache
  constexpr int kRounds = 200'000;
  std::mutex mu;
  std::deque<std::uintptr_t> to_consumer;
  std::vector<std::deque<std::uintptr_t>> returned(kOwners);
  std::atomic<int> owners_done{0};
  std::atomic<bool> stop_snapshots{false};
  std::atomic<std::uint64_t> failures{0};
  std::atomic<std::uint64_t> why[6] = {};  // failures by kind, for the message
  Node nodes[kOwners];

  std::vector<std::thread> threads;
  for (int o = 0; o < kOwners; ++o) {
    threads.emplace_back([&, o] {
      ThreadCache* cache = blocks.new_cache();
      const int place = blocks.enlist(cache);
      std::uint32_t claims = 0;
      std::vector<std::uintptr_t> free_addresses, live;
      for (std::uint64_t i = 0; i < kAddressesPerOwner; ++i) free_addresses.push_back(address_of(o * kAddressesPerOwner + i));
      std::uint64_t rng = 0x9E3779B97F4A7C15ull * (o + 1);
      for (int r = 0; r < kRounds; ++r) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        {
          std::lock_guard lock(mu);
          while (!returned[o].empty()) {
            free_addresses.push_back(returned[o].front());
            returned[o].pop_front();
          }
        }
        if (!free_addresses.empty() && (live.empty() || rng % 3 != 0)) {
          const std::uintptr_t a = free_addresses.back();
          free_addresses.pop_back();
          owner_alloc(blocks, *cache, a, info_for(a, &nodes[o]), claims);
          live.push_back(a);
        } else if (!live.empty()) {
          const std::size_t k = (rng >> 8) % live.size();
          const std::uintptr_t a = live[k];
          live[k] = live.back();
          live.pop_back();
          if (rng % 2 == 0) {
            std::lock_guard lock(mu);
            to_consumer.push_back(a);  // freed by the consumer
          } else {
            LiveBlockInfo out;
            if (!owner_free(blocks, *cache, a, out)) why[0].fetch_add(1), failures.fetch_add(1);
            else if (out.node != &nodes[o] || out.size != info_for(a, &nodes[o]).size) why[1].fetch_add(1), failures.fetch_add(1);
            free_addresses.push_back(a);
          }
        }
      }
      for (std::uintptr_t a : live) {
        LiveBlockInfo out;
        if (!owner_free(blocks, *cache, a, out)) why[2].fetch_add(1), failures.fetch_add(1);
      }
      // The thread ends: its cache goes to the table (empty by now but for the consumer's share).
      if (!blocks.flush(*cache)) failures.fetch_add(1);
      blocks.delist(place);
      blocks.recycle(cache);
      owners_done.fetch_add(1);
    });
  }
  threads.emplace_back([&] {  // the consumer
    for (;;) {
      std::uintptr_t a = 0;
      {
        std::lock_guard lock(mu);
        if (!to_consumer.empty()) {
          a = to_consumer.front();
          to_consumer.pop_front();
        }
      }
      if (a == 0) {
        if (owners_done.load() == kOwners) {
          std::lock_guard lock(mu);
          if (to_consumer.empty()) return;
          continue;
        }
        std::this_thread::yield();
        continue;
      }
      const int o = static_cast<int>((a - address_of(0)) / 16 / kAddressesPerOwner);
      LiveBlockInfo out;
      if (!blocks.take(nullptr, a, out)) why[3].fetch_add(1), failures.fetch_add(1);
      else if (out.node != &nodes[o] || out.size != info_for(a, &nodes[o]).size ||
          out.caller != info_for(a, &nodes[o]).caller)
        why[4].fetch_add(1), failures.fetch_add(1);
      std::lock_guard lock(mu);
      returned[o].push_back(a);
    }
  });
  // (A pass may see one address twice: in the table, then, freed and allocated again
  // meanwhile, in a cache. So only what each entry says is checked.)
  std::thread snapshots([&] {
    while (!stop_snapshots.load()) {
      blocks.for_each([&](std::uintptr_t a, const LiveBlockInfo& info) {
        const auto o = static_cast<int>((a - address_of(0)) / 16 / kAddressesPerOwner);
        if (a < address_of(0) || o >= kOwners || info.node != &nodes[o]) why[5].fetch_add(1), failures.fetch_add(1);
      });
    }
  });
  for (auto& t : threads) t.join();
  stop_snapshots.store(true);
  snapshots.join();
  EXPECT_EQ(failures.load(), 0u);
  for (int i = 0; i < 6; ++i) EXPECT_EQ(why[i].load(), 0u) << "failure kind " << i;
  EXPECT_TRUE(everything(blocks).empty());
}

// Finds `count` addresses that share one cache set (same ThreadCache::index), starting after `from`.
std::vector<std::uintptr_t> same_set(std::size_t count, std::uint64_t from = 0) {
  std::vector<std::uintptr_t> out{address_of(from)};
  for (std::uint64_t i = from + 1; out.size() < count; ++i)
    if (ThreadCache::index(address_of(i)) == ThreadCache::index(out[0])) out.push_back(address_of(i));
  return out;
}

TEST(LiveBlocks, BothSlotsOfASetHoldBlocksAndAThirdDisplacesOneToTheTable) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  ASSERT_GE(blocks.enlist(cache), 0);
  Node node;
  std::uint32_t claims = 0;
  const std::vector<std::uintptr_t> a = same_set(3);
  // The set's two slots share one cache line.
  EXPECT_EQ(ThreadCache::index(a[0]) % ThreadCache::kWays, 0u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(cache->set(a[0])) % 64, 0u);
  ASSERT_TRUE(cache->put_if_empty(a[0], info_for(a[0], &node)));
  ASSERT_TRUE(cache->put_if_empty(a[1], info_for(a[1], &node)));
  EXPECT_FALSE(cache->put_if_empty(a[2], info_for(a[2], &node)));  // the set is full
  ASSERT_TRUE(blocks.put(*cache, a[2], info_for(a[2], &node), claims));
  // Exactly one of the first two went to the table; all three are found once.
  const auto all = everything(blocks);
  ASSERT_EQ(all.size(), 3u);
  for (const std::uintptr_t x : a) {
    ASSERT_EQ(all.count(x), 1u);
    EXPECT_EQ(all.at(x).size, info_for(x, &node).size);
    EXPECT_EQ(all.at(x).caller, info_for(x, &node).caller);
  }
  int in_cache = 0;
  for (const std::uintptr_t x : a) in_cache += cache->find(x) != nullptr ? 1 : 0;
  EXPECT_EQ(in_cache, 2);
  // Another thread frees them, wherever they are (either slot of the set, or the table).
  std::thread([&] {
    for (const std::uintptr_t x : a) {
      LiveBlockInfo out;
      ASSERT_TRUE(blocks.take(nullptr, x, out)) << x;
      EXPECT_EQ(out.size, info_for(x, &node).size);
      EXPECT_EQ(out.node, &node);
    }
  }).join();
  EXPECT_TRUE(everything(blocks).empty());
}

// Issue 21's pattern: a ring of 1,024 live blocks, each new block replacing the oldest.
// Every block is found exactly once, freed with its own information, and a ring of that size
// mostly stays in the owner's cache.
TEST(LiveBlocks, ARingOfLiveBlocksStaysMostlyInTheCache) {
  LiveBlocks blocks;
  ThreadCache* cache = blocks.new_cache();
  ASSERT_GE(blocks.enlist(cache), 0);
  Node node;
  std::uint32_t claims = 0;
  constexpr std::size_t kRing = 1024;
  constexpr std::uint64_t kAllocations = 50'000;
  std::deque<std::uintptr_t> ring;
  std::uint64_t rng = 88172645463325252ull;
  std::uint64_t next_address = 0;
  std::uint64_t displaced = 0;
  for (std::uint64_t i = 0; i < kAllocations; ++i) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    next_address += 1 + rng % 256;  // scattered 16-byte-aligned addresses, never reused
    const std::uintptr_t a = address_of(next_address);
    if (!cache->put_if_empty(a, info_for(a, &node))) {
      ++displaced;
      ASSERT_TRUE(blocks.put(*cache, a, info_for(a, &node), claims));
    }
    ring.push_back(a);
    if (ring.size() > kRing) {
      LiveBlockInfo out;
      ASSERT_TRUE(owner_free(blocks, *cache, ring.front(), out)) << i;
      EXPECT_EQ(out.size, info_for(ring.front(), &node).size);
      ring.pop_front();
    }
  }
  const auto all = everything(blocks);
  ASSERT_EQ(all.size(), kRing);
  for (const std::uintptr_t a : ring) EXPECT_EQ(all.count(a), 1u);
  // 1,024 blocks in 4,096 two-slot sets: a new block finds its set full a few times in a hundred.
  EXPECT_LT(displaced, kAllocations / 10);
  for (const std::uintptr_t a : ring) {
    LiveBlockInfo out;
    ASSERT_TRUE(owner_free(blocks, *cache, a, out));
  }
  EXPECT_TRUE(everything(blocks).empty());
}

// Blocks that come and go through the shared table, few alive at a time, used to fill every
// generation with tombstones and add a twice larger one each time (254 MiB of table after 4
// million blocks). Drained generations are now used again: the table stays small, and every
// block is still found, also with several threads inserting and removing while generations
// are emptied and reused.
TEST(LiveTable, ChurnWithFewLiveBlocksKeepsTheTableSmall) {
  LiveTable table;
  Node node;
  constexpr int kThreads = 3;
  constexpr std::uint64_t kPerThread = 400'000;
  constexpr std::size_t kAlive = 100;
  std::atomic<std::uint64_t> lost{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      std::uint32_t claims = 0;
      std::deque<std::uintptr_t> alive;
      for (std::uint64_t i = 0; i < kPerThread; ++i) {
        // Distinct addresses per thread, scattered.
        const std::uintptr_t a = address_of((i * kThreads + static_cast<std::uint64_t>(t)) * 37);
        if (!table.insert(a, info_for(a, &node), claims)) {
          lost.fetch_add(1);
          return;
        }
        alive.push_back(a);
        if (alive.size() > kAlive) {
          LiveBlockInfo out;
          if (!table.remove(alive.front(), out) || out.size != info_for(alive.front(), &node).size) lost.fetch_add(1);
          alive.pop_front();
        }
      }
      for (const std::uintptr_t a : alive) {
        LiveBlockInfo out;
        if (!table.remove(a, out)) lost.fetch_add(1);
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(lost.load(), 0u);
  std::size_t left = 0;
  table.for_each([&](std::uintptr_t, const LiveBlockInfo&) { ++left; });
  EXPECT_EQ(left, 0u);
  // 1.2 million blocks passed through; a few generations of the first size (512 KiB) suffice.
  EXPECT_LE(table.mapped_bytes(), std::uint64_t{4} << 20);
}

}  // namespace
