// MemoryPool without a GPU: the bin rule, statistics, out-of-memory retry, stop_holding,
// allocations that outlive their pool, and a threaded stress test (run it under the
// sanitizer builds: -DCUDATOOL_SANITIZE=ON, or -fsanitize=thread).
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/memory/allocators.hpp"
#include "cudatool/memory/memory_pool.hpp"

namespace cudatool {
namespace {

// What a test allocator has handed out, and how it is told to fail.
struct Ledger {
  std::mutex m;
  std::map<void*, std::size_t> live;
  std::size_t outstanding = 0;
  std::size_t budget = SIZE_MAX;  // MemoryError beyond this many outstanding bytes
  int fail_next = 0;              // this many calls fail with MemoryError
  bool logic_error_next = false;  // the next call throws LogicError
  std::uint64_t allocations = 0;
  std::uint64_t frees = 0;
  std::uint64_t failures = 0;
  std::uint64_t bad_frees = 0;  // a pointer or size the ledger does not know
};

class TestAllocator {
 public:
  using pointer_type = void*;
  explicit TestAllocator(std::shared_ptr<Ledger> ledger) : ledger_(std::move(ledger)) {}
  void* allocate(std::size_t bytes) {
    std::lock_guard lock(ledger_->m);
    if (ledger_->logic_error_next) {
      ledger_->logic_error_next = false;
      throw LogicError("test allocator: logic error");
    }
    if (ledger_->fail_next > 0 || ledger_->outstanding + bytes > ledger_->budget) {
      if (ledger_->fail_next > 0) --ledger_->fail_next;
      ++ledger_->failures;
      throw MemoryError("test allocator: out of memory for " + std::to_string(bytes) + " bytes");
    }
    void* p = std::malloc(bytes);
    if (!p) throw MemoryError("malloc failed");
    ledger_->live[p] = bytes;
    ledger_->outstanding += bytes;
    ++ledger_->allocations;
    return p;
  }
  void deallocate(void* p, std::size_t bytes) noexcept {
    std::lock_guard lock(ledger_->m);
    auto it = ledger_->live.find(p);
    if (it == ledger_->live.end() || it->second != bytes) {
      ++ledger_->bad_frees;
      return;
    }
    ledger_->outstanding -= bytes;
    ledger_->live.erase(it);
    ++ledger_->frees;
    std::free(p);
  }
  std::string describe() const { return "test memory"; }

 private:
  std::shared_ptr<Ledger> ledger_;
};

using TestPool = MemoryPool<TestAllocator>;

std::size_t outstanding(const std::shared_ptr<Ledger>& l) {
  std::lock_guard lock(l->m);
  return l->outstanding;
}

// ----------------------------------------------------------------------------------------
// The bin rule

TEST(BinRule, KnownValuesWithFourBits) {
  const BinRule r(4, 256);
  EXPECT_EQ(r.round_up(0), 0u);
  EXPECT_EQ(r.round_up(1), 256u);
  EXPECT_EQ(r.round_up(256), 256u);
  EXPECT_EQ(r.round_up(257), 271u);    // 1 0000 0001 -> 1 0000 1111
  EXPECT_EQ(r.round_up(1000), 1023u);  // 11 1110 1000 -> 11 1111 1111
  EXPECT_EQ(r.round_up(4096), 4351u);  // the largest size sharing 1 0000: 4096 + 255
  EXPECT_EQ(r.round_up(4351), 4351u);
  EXPECT_EQ(r.round_up(4352), 4607u);
  EXPECT_EQ(r.round_up(std::size_t{1} << 30), (std::size_t{1} << 30) + (std::size_t{1} << 26) - 1);
  EXPECT_EQ(r.bin_of(4096), r.bin_of(4351));
  EXPECT_NE(r.bin_of(4351), r.bin_of(4352));
}

TEST(BinRule, SmallSizesShareOneExactBin) {
  const BinRule r(4, 256);
  for (std::size_t s = 1; s <= 256; ++s) {
    EXPECT_EQ(r.bin_of(s), 0u) << s;
    EXPECT_EQ(r.round_up(s), 256u) << s;
  }
  // With a small block of one byte the sizes below 2^(k+1) are their own bins.
  const BinRule exact(4, 1);
  for (std::size_t s = 1; s < 32; ++s) EXPECT_EQ(exact.round_up(s), s) << s;
  EXPECT_EQ(exact.round_up(33), 33u);
  EXPECT_EQ(exact.round_up(34), 35u);
}

TEST(BinRule, PropertiesForEveryBitCount) {
  std::mt19937_64 rng(7);
  for (unsigned k = 0; k <= BinRule::kMaxLeadingBits; ++k) {
    for (std::size_t small : {std::size_t{1}, std::size_t{256}, std::size_t{4096}}) {
      const BinRule r(k, small);
      for (int i = 0; i < 20000; ++i) {
        // Log-uniform sizes up to 2^50, plus exact powers of two and their neighbours.
        const unsigned e = static_cast<unsigned>(rng() % 50);
        std::size_t s = (std::size_t{1} << e) + (rng() % (std::size_t{1} << e));
        if (i % 3 == 1) s = std::size_t{1} << e;
        if (i % 3 == 2) s = (std::size_t{1} << e) - 1 + (e == 0);
        const std::uint32_t bin = r.bin_of(s);
        const std::size_t block = r.block_size(bin);
        ASSERT_GE(block, s) << "k=" << k << " s=" << s;
        ASSERT_EQ(r.bin_of(block), bin) << "k=" << k << " s=" << s;  // same bin
        if (s <= small) {
          ASSERT_EQ(block, small);
          continue;
        }
        // The block is the largest size of its bin ...
        ASSERT_NE(r.bin_of(block + 1), bin) << "k=" << k << " s=" << s;
        // ... and exceeds the request by less than 1/2^k of it.
        ASSERT_LT(static_cast<double>(block - s), std::ldexp(static_cast<double>(s), -int(k)))
            << "k=" << k << " s=" << s;
        // Bins are ordered like their sizes.
        if (s > small + 1) {
          ASSERT_LE(r.bin_of(s - 1), bin);
        }
      }
    }
  }
}

TEST(BinRule, RejectsOptionsOutOfRange) {
  EXPECT_THROW(BinRule(13, 256), LogicError);
  EXPECT_THROW(BinRule(4, 0), LogicError);
  EXPECT_THROW(BinRule(4, (std::size_t{1} << 20) + 1), LogicError);
  EXPECT_THROW(TestPool(TestAllocator(std::make_shared<Ledger>()), {13, 256, 0}), LogicError);
}

// ----------------------------------------------------------------------------------------
// The pool, one thread

TEST(MemoryPool, ReusesBlocksOfTheSameBin) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  void* first = nullptr;
  {
    auto a = pool.allocate(4000);
    ASSERT_TRUE(a);
    EXPECT_EQ(a.size(), 4000u);
    EXPECT_EQ(a.block_size(), 4095u);
    std::memset(a.get(), 0x5a, a.block_size());
    first = a.get();
    EXPECT_EQ(pool.active_blocks(), 1u);
    EXPECT_EQ(pool.held_blocks(), 0u);
  }
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.held_blocks(), 1u);
  auto b = pool.allocate(3970);  // same bin: 1111 1000 0010 -> 1111 1111 1111
  EXPECT_EQ(b.get(), first);
  auto c = pool.allocate(3970);  // the bin is empty now: a new block
  EXPECT_NE(c.get(), first);
  EXPECT_EQ(ledger->allocations, 2u);
  const auto st = pool.statistics();
  EXPECT_EQ(st.allocator_allocations, 2u);
  EXPECT_EQ(st.active_bytes, 2 * 3970u);
  EXPECT_EQ(st.active_block_bytes, 2 * 4095u);
  EXPECT_EQ(st.managed_bytes, 2 * 4095u);
  EXPECT_EQ(st.peak_managed_bytes, 2 * 4095u);
}

TEST(MemoryPool, ZeroSizeAllocationsSucceedWithoutMemory) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  auto z = pool.allocate(0);
  EXPECT_FALSE(z);
  EXPECT_EQ(z.get(), nullptr);
  EXPECT_EQ(z.size(), 0u);
  EXPECT_EQ(z.block_size(), 0u);
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(ledger->allocations, 0u);
  z.free();
  z.free();
  EXPECT_EQ(pool.active_blocks(), 0u);

  HostMemoryPool host{HostAllocator{}};
  EXPECT_EQ(host.allocate(0).get(), nullptr);
  EXPECT_EQ(HostAllocator{}.allocate(0), nullptr);
}

TEST(MemoryPool, FreeIsIdempotentAndMovesTransferOwnership) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  auto a = pool.allocate(100);
  void* p = a.get();
  PooledAllocation<TestAllocator> b = std::move(a);
  EXPECT_FALSE(a);  // NOLINT(bugprone-use-after-move): moved-from is empty by contract
  EXPECT_EQ(b.get(), p);
  EXPECT_EQ(pool.active_blocks(), 1u);
  a.free();
  EXPECT_EQ(pool.active_blocks(), 1u);
  b.free();
  b.free();
  EXPECT_FALSE(b);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.held_blocks(), 1u);
  auto c = pool.allocate(100);
  auto d = pool.allocate(100);
  c = std::move(d);  // c's first block goes back to the pool
  EXPECT_EQ(pool.active_blocks(), 1u);
  EXPECT_EQ(pool.held_blocks(), 1u);
}

TEST(MemoryPool, StatisticsFollowEveryOperation) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger), PoolOptions{4, 256, 4}};
  std::mt19937_64 rng(11);
  std::vector<PooledAllocation<TestAllocator>> live;
  for (int step = 0; step < 5000; ++step) {
    const auto op = rng() % 10;
    if (op < 5 || live.empty()) {
      // Sizes from 0 to 1 MiB, log-uniform, zeros included.
      const std::size_t s = rng() % 50 == 0 ? 0 : (std::size_t{1} << (rng() % 20)) + rng() % 1000;
      live.push_back(pool.allocate(s));
    } else if (op < 9) {
      const std::size_t i = rng() % live.size();
      live[i].free();
      live.erase(live.begin() + static_cast<std::ptrdiff_t>(i));
    } else if (op == 9 && step % 7 == 0) {
      pool.free_held();
    }
    const auto st = pool.statistics();
    std::size_t sum = 0, blocks = 0, block_bytes = 0;
    for (const auto& a : live) {
      sum += a.size();
      blocks += a ? 1 : 0;
      block_bytes += a.block_size();
    }
    ASSERT_EQ(st.active_bytes, sum);
    ASSERT_EQ(st.active_blocks, blocks);
    ASSERT_EQ(st.active_block_bytes, block_bytes);
    ASSERT_EQ(st.managed_bytes, st.held_bytes + st.active_block_bytes);
    ASSERT_EQ(st.managed_bytes, outstanding(ledger));  // everything the allocator lent
    ASSERT_GE(st.peak_managed_bytes, st.managed_bytes);
    ASSERT_EQ(st.allocator_allocations - st.allocator_frees, st.held_blocks + st.active_blocks);
  }
  live.clear();
  EXPECT_EQ(pool.active_blocks(), 0u);
  EXPECT_EQ(pool.managed_bytes(), pool.held_bytes());
  EXPECT_EQ(ledger->bad_frees, 0u);
}

TEST(MemoryPool, FreeHeldReturnsHeldBlocksOnly) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  auto keep = pool.allocate(5000);
  for (int i = 0; i < 10; ++i) pool.allocate(1000 * (i + 1));  // freed at once: held
  EXPECT_EQ(pool.held_blocks(), 10u);
  EXPECT_EQ(pool.free_held(), 10u);
  const auto st = pool.statistics();
  EXPECT_EQ(st.held_blocks, 0u);
  EXPECT_EQ(st.held_bytes, 0u);
  EXPECT_EQ(st.active_blocks, 1u);
  EXPECT_EQ(outstanding(ledger), keep.block_size());
  std::memset(keep.get(), 1, keep.size());  // still usable (ASan would tell)
}

TEST(MemoryPool, StopHoldingReturnsEverything) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  std::vector<PooledAllocation<TestAllocator>> live;
  for (int i = 0; i < 20; ++i) live.push_back(pool.allocate(300 * (i + 1)));
  for (int i = 0; i < 10; ++i) live[static_cast<std::size_t>(i)].free();
  EXPECT_EQ(pool.held_blocks(), 10u);
  pool.stop_holding();
  EXPECT_EQ(pool.held_blocks(), 0u);
  EXPECT_FALSE(pool.statistics().holding);
  live.clear();  // returned blocks now go straight back
  EXPECT_EQ(pool.held_blocks(), 0u);
  EXPECT_EQ(pool.managed_bytes(), 0u);
  EXPECT_EQ(outstanding(ledger), 0u);
  // The pool still allocates, and does not hold.
  { auto a = pool.allocate(64); }
  EXPECT_EQ(pool.held_blocks(), 0u);
  EXPECT_EQ(outstanding(ledger), 0u);
  EXPECT_EQ(ledger->allocations, ledger->frees);
  EXPECT_EQ(ledger->bad_frees, 0u);
}

TEST(MemoryPool, AllocationsMayOutliveThePool) {
  auto ledger = std::make_shared<Ledger>();
  std::vector<PooledAllocation<TestAllocator>> survivors;
  {
    TestPool pool{TestAllocator(ledger)};
    for (int i = 0; i < 5; ++i) survivors.push_back(pool.allocate(1000 + i));
    pool.allocate(77);  // held at destruction: freed with the pool
  }
  EXPECT_EQ(ledger->live.size(), 5u);
  for (auto& a : survivors) std::memset(a.get(), 0x11, a.size());  // still valid
  survivors.pop_back();
  EXPECT_EQ(ledger->live.size(), 4u);  // given back at once, not held
  survivors.clear();                   // the last one frees the pool's state (ASan/LSan check it)
  EXPECT_EQ(outstanding(ledger), 0u);
  EXPECT_EQ(ledger->bad_frees, 0u);

  // A moved pool keeps its blocks; the moved-from one refuses to work.
  TestPool a{TestAllocator(ledger)};
  auto x = a.allocate(10);
  TestPool b(std::move(a));
  EXPECT_THROW(a.allocate(1), LogicError);  // NOLINT(bugprone-use-after-move)
  x.free();
  EXPECT_EQ(b.held_blocks(), 1u);
}

// ----------------------------------------------------------------------------------------
// Out of memory

TEST(MemoryPool, OutOfMemoryFreesHeldBlocksAndRetries) {
  auto ledger = std::make_shared<Ledger>();
  ledger->budget = 10 * 4351;  // ten blocks of the 4 KiB bin
  TestPool pool{TestAllocator(ledger)};
  {
    std::vector<PooledAllocation<TestAllocator>> blocks;
    for (int i = 0; i < 10; ++i) blocks.push_back(pool.allocate(4096));
  }
  EXPECT_EQ(pool.held_blocks(), 10u);
  // Another bin: the allocator refuses, the pool frees its ten blocks and retries.
  auto big = pool.allocate(20000);
  ASSERT_TRUE(big);
  const auto st = pool.statistics();
  EXPECT_EQ(st.oom_retries, 1u);
  EXPECT_EQ(st.held_blocks, 0u);
  EXPECT_EQ(st.active_blocks, 1u);
  EXPECT_EQ(ledger->failures, 1u);
  EXPECT_EQ(outstanding(ledger), big.block_size());
}

TEST(MemoryPool, OutOfMemoryTwiceThrowsWithStatisticsAndThePoolStaysUsable) {
  auto ledger = std::make_shared<Ledger>();
  ledger->budget = 1 << 20;
  TestPool pool{TestAllocator(ledger)};
  auto a = pool.allocate(600000);
  pool.allocate(1000);  // held
  try {
    pool.allocate(700000);
    FAIL() << "expected MemoryError";
  } catch (const MemoryError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("700000 bytes"), std::string::npos) << what;
    EXPECT_NE(what.find("test memory"), std::string::npos) << what;
    EXPECT_NE(what.find("after freeing 1 held block"), std::string::npos) << what;
    EXPECT_NE(what.find("active 1 block"), std::string::npos) << what;
    EXPECT_NE(what.find("test allocator: out of memory"), std::string::npos) << what;
  }
  EXPECT_EQ(ledger->failures, 2u);
  EXPECT_EQ(pool.statistics().oom_retries, 1u);
  // Usable afterwards: the statistics are intact and memory freed by the user serves a
  // request that failed before.
  EXPECT_EQ(pool.active_blocks(), 1u);
  EXPECT_EQ(pool.active_bytes(), 600000u);
  a.free();
  auto b = pool.allocate(700000);
  EXPECT_TRUE(b);
  EXPECT_EQ(pool.statistics().oom_retries, 2u);  // the held 600000 block had to go
}

TEST(MemoryPool, FailuresOnDemandRetryOnceOnly) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger)};
  ledger->fail_next = 1;
  EXPECT_TRUE(pool.allocate(10000));  // first call fails, the retry succeeds
  ledger->fail_next = 2;
  EXPECT_THROW(pool.allocate(20000), MemoryError);  // it would have needed a third call
  EXPECT_EQ(ledger->failures, 3u);
  // Errors other than out-of-memory pass through without a retry.
  ledger->logic_error_next = true;
  EXPECT_THROW(pool.allocate(50000), LogicError);
  EXPECT_EQ(pool.statistics().oom_retries, 2u);
  EXPECT_EQ(pool.active_blocks(), 0u);
}

// ----------------------------------------------------------------------------------------
// Threads

TEST(MemoryPool, ThreadsTakeBlocksFromOtherShards) {
  auto ledger = std::make_shared<Ledger>();
  TestPool pool{TestAllocator(ledger), PoolOptions{4, 256, 8}};
  std::thread([&] {
    std::vector<PooledAllocation<TestAllocator>> v;
    for (int i = 0; i < 4; ++i) v.push_back(pool.allocate(8000));
  }).join();
  EXPECT_EQ(pool.held_blocks(), 4u);
  for (int t = 0; t < 3; ++t) {
    std::thread([&] {
      auto a = pool.allocate(8000);
      auto b = pool.allocate(8000);
      EXPECT_TRUE(a && b);
    }).join();
  }
  EXPECT_EQ(ledger->allocations, 4u);  // every later request found a held block
  EXPECT_EQ(pool.held_blocks(), 4u);
}

TEST(MemoryPool, ThreadedStress) {
  auto ledger = std::make_shared<Ledger>();
  ledger->budget = 64u << 20;  // low enough that out-of-memory retries happen
  std::optional<TestPool> pool(std::in_place, TestAllocator(ledger), PoolOptions{3, 256, 4});
  constexpr int kThreads = 8;
  constexpr int kSteps = 20000;
  // Blocks handed between threads, freed by a thread other than the one that got them.
  std::mutex exchange_mutex;
  std::vector<PooledAllocation<TestAllocator>> exchange;
  std::atomic<int> running{kThreads};
  std::atomic<std::uint64_t> corrupt{0}, failures{0};

  auto worker = [&](int id) {
    std::mt19937_64 rng(static_cast<std::uint64_t>(id) + 1);
    std::vector<PooledAllocation<TestAllocator>> mine;
    auto check_and_free = [&](PooledAllocation<TestAllocator>& a) {
      const auto* bytes = static_cast<const unsigned char*>(a.get());
      const auto tag = static_cast<unsigned char>(reinterpret_cast<std::uintptr_t>(a.get()) >> 4);
      if (a && (bytes[0] != tag || bytes[a.size() - 1] != tag)) ++corrupt;
      a.free();
    };
    for (int step = 0; step < kSteps; ++step) {
      const auto op = rng() % 16;
      if (op < 8 || mine.empty()) {
        const std::size_t s = (std::size_t{1} << (rng() % 17)) + rng() % 100;
        try {
          auto a = pool->allocate(s);
          // Tag both ends with the address: a block handed out twice shows up.
          const auto tag =
              static_cast<unsigned char>(reinterpret_cast<std::uintptr_t>(a.get()) >> 4);
          static_cast<unsigned char*>(a.get())[0] = tag;
          static_cast<unsigned char*>(a.get())[a.size() - 1] = tag;
          mine.push_back(std::move(a));
        } catch (const MemoryError&) {
          ++failures;  // the budget is shared: another thread may hold it all
          for (auto& a : mine) check_and_free(a);
          mine.clear();
        }
      } else if (op < 13) {
        const std::size_t i = rng() % mine.size();
        check_and_free(mine[i]);
        mine[i] = std::move(mine.back());
        mine.pop_back();
      } else if (op < 15) {
        std::lock_guard lock(exchange_mutex);
        if (!exchange.empty() && rng() % 2) {
          check_and_free(exchange.back());
          exchange.pop_back();
        } else {
          exchange.push_back(std::move(mine.back()));
          mine.pop_back();
        }
      } else if (rng() % 64 == 0) {
        pool->free_held();
      }
    }
    for (auto& a : mine) check_and_free(a);
    --running;
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(worker, t);
  // Statistics while the workers run: consistent enough to read, never torn by a data race.
  std::uint64_t torn = 0;
  while (running.load() > 0) {
    const auto st = pool->statistics();
    if (st.managed_bytes != st.held_bytes + st.active_block_bytes) ++torn;
    std::this_thread::yield();
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(torn, 0u);
  EXPECT_EQ(corrupt.load(), 0u);
  const auto st = pool->statistics();
  std::size_t exchanged = 0;
  for (const auto& a : exchange) exchanged += a.size();
  EXPECT_EQ(st.active_bytes, exchanged);
  EXPECT_EQ(st.active_blocks, exchange.size());
  EXPECT_EQ(st.managed_bytes, outstanding(ledger));
  // Some blocks outlive the pool; the last one frees its state.
  pool.reset();
  std::thread([&] { exchange.clear(); }).join();
  EXPECT_EQ(outstanding(ledger), 0u);
  EXPECT_EQ(ledger->bad_frees, 0u);
  EXPECT_EQ(ledger->allocations, ledger->frees);
}

}  // namespace
}  // namespace cudatool
