// Not API: the state a MemoryPool and its allocations share (shards, free lists, counters),
// behind memory_pool.hpp. MemoryPool is a template over its allocator, so this is in an
// installed header; it may change in any release. Include memory_pool.hpp, never this.
#pragma once

#include <array>
#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/memory/pool_types.hpp"

namespace cudatool {

template <class Allocator>
class PooledAllocation;

namespace detail {

// Test-and-test-and-set lock: uncontended it costs one exchange and one store.
class SpinLock {
 public:
  void lock() noexcept {
    if (!locked_.exchange(true, std::memory_order_acquire)) return;
    lock_slow();
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  void lock_slow() noexcept;
  std::atomic<bool> locked_{false};
};

// This thread's shard seed (1-based, assigned on first use) and the default shard count.
inline constinit thread_local unsigned t_shard_seed = 0;
unsigned assign_shard_seed() noexcept;
unsigned default_shard_count() noexcept;
// The MemoryError for a request that failed twice.
[[noreturn]] void throw_pool_out_of_memory(const std::string& allocator, std::size_t size,
                                           std::size_t block, const PoolStatistics& stats,
                                           std::size_t freed_blocks, const std::string& cause);

template <class Allocator>
class PoolCore {
 public:
  using pointer_type = typename Allocator::pointer_type;

  PoolCore(Allocator&& allocator, const PoolOptions& options)
      : allocator_(std::move(allocator)),
        rules_(options.leading_bits_in_bin_id, options.small_block_bytes) {
    unsigned n = options.shards ? options.shards : default_shard_count();
    n = std::bit_ceil(n);
    if (n > 256) throw LogicError("MemoryPool: at most 256 shards");
    shard_count_ = n;
    shards_ = std::make_unique<Shard[]>(n);
  }

  PoolCore(const PoolCore&) = delete;
  PoolCore& operator=(const PoolCore&) = delete;

  const BinRule& rules() const noexcept { return rules_; }
  const Allocator& allocator() const noexcept { return allocator_; }

  PooledAllocation<Allocator> allocate(std::size_t size) {
    PooledAllocation<Allocator> a;
    if (size == 0) return a;
    const std::uint32_t bin = rules_.bin_of(size);
    const std::uint32_t own = my_shard();
    Shard& s = shards_[own];
    s.lock.lock();
    if (auto* list = s.find(rules_, bin); list && !list->empty()) {
      a.ptr_ = list->back();
      list->pop_back();
      const std::size_t block = rules_.block_size(bin);
      s.take_held(block);
      s.add_active(size, block);
      s.lock.unlock();
      a.core_ = this;
      a.size_ = size;
      a.bin_ = bin;
      a.shard_ = own;
      return a;
    }
    s.lock.unlock();
    return allocate_slow(size, bin, own);
  }

  // Returns a live allocation's block (from PooledAllocation::free).
  void give_back(pointer_type ptr, std::size_t size, std::uint32_t bin,
                 std::uint32_t shard) noexcept {
    const std::size_t block = rules_.block_size(bin);
    Shard& s = shards_[shard];
    s.lock.lock();
    s.remove_active(size, block);
    const bool alive = alive_;
    if (alive && holding_.load(std::memory_order_relaxed)) {
      try {
        s.list(rules_, bin).push_back(ptr);
        s.add_held(block);
        s.lock.unlock();
        return;
      } catch (...) {
        // No memory for the free list: give the block back to the allocator instead.
      }
    }
    s.lock.unlock();
    release_to_allocator(ptr, block);
    if (!alive && orphans_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  // Frees every held block; returns how many there were.
  std::size_t free_held() noexcept {
    std::vector<std::pair<pointer_type, std::size_t>> blocks;
    for (unsigned i = 0; i < shard_count_; ++i) {
      Shard& s = shards_[i];
      s.lock.lock();
      try {
        s.drain(rules_, blocks);
      } catch (...) {
        // Could not collect the list (no memory): leave it held this time.
      }
      s.lock.unlock();
    }
    for (auto& [ptr, block] : blocks) release_to_allocator(ptr, block);
    return blocks.size();
  }

  void stop_holding() noexcept {
    // Published through the shard locks that free_held takes next: a later give_back on
    // any shard sees it.
    holding_.store(false, std::memory_order_relaxed);
    free_held();
  }

  PoolStatistics statistics() const noexcept {
    PoolStatistics st;
    lock_all();
    for (unsigned i = 0; i < shard_count_; ++i) {
      const Shard& s = shards_[i];
      st.held_blocks += s.held_blocks;
      st.held_bytes += s.held_bytes;
      st.active_blocks += s.active_blocks;
      st.active_bytes += s.active_bytes;
      st.active_block_bytes += s.active_block_bytes;
    }
    unlock_all();
    st.managed_bytes = st.held_bytes + st.active_block_bytes;
    st.peak_managed_bytes = peak_managed_.load(std::memory_order_relaxed);
    st.allocator_allocations = allocator_allocations_.load(std::memory_order_relaxed);
    st.allocator_frees = allocator_frees_.load(std::memory_order_relaxed);
    st.oom_retries = oom_retries_.load(std::memory_order_relaxed);
    st.holding = holding_.load(std::memory_order_relaxed);
    return st;
  }

  // The pool object goes away: free what is held, stop holding, and leave the state to
  // the live allocations (the last one deletes it), or delete it now if there are none.
  void detach() noexcept {
    std::vector<std::pair<pointer_type, std::size_t>> blocks;
    std::size_t live = 0;
    lock_all();
    alive_ = false;
    holding_.store(false, std::memory_order_relaxed);
    for (unsigned i = 0; i < shard_count_; ++i) {
      try {
        shards_[i].drain(rules_, blocks);
      } catch (...) {
        // Blocks that could not be collected are lost to the allocator until exit.
      }
      live += shards_[i].active_blocks;
    }
    orphans_.store(live, std::memory_order_relaxed);
    unlock_all();
    for (auto& [ptr, block] : blocks) release_to_allocator(ptr, block);
    if (live == 0) delete this;
  }

 private:
  using FreeList = std::vector<pointer_type>;

  struct alignas(64) Shard {
    SpinLock lock;
    std::size_t held_blocks = 0;
    std::size_t held_bytes = 0;
    std::size_t active_blocks = 0;
    std::size_t active_bytes = 0;
    std::size_t active_block_bytes = 0;
    // held_blocks, readable without the lock: where another shard looks for blocks.
    std::atomic<std::size_t> held_hint{0};
    // Free lists by exponent, then mantissa (2^k lists per exponent, made on first use).
    std::array<std::unique_ptr<FreeList[]>, 64> bins;

    FreeList* find(const BinRule& r, std::uint32_t bin) noexcept {
      FreeList* lists = bins[r.exponent(bin)].get();
      return lists ? &lists[r.mantissa(bin)] : nullptr;
    }
    FreeList& list(const BinRule& r, std::uint32_t bin) {
      auto& lists = bins[r.exponent(bin)];
      if (!lists) lists = std::make_unique<FreeList[]>(std::size_t{1} << r.leading_bits());
      return lists[r.mantissa(bin)];
    }
    void add_held(std::size_t block) noexcept {
      ++held_blocks;
      held_bytes += block;
      held_hint.store(held_blocks, std::memory_order_relaxed);
    }
    void take_held(std::size_t block) noexcept {
      --held_blocks;
      held_bytes -= block;
      held_hint.store(held_blocks, std::memory_order_relaxed);
    }
    void add_active(std::size_t size, std::size_t block) noexcept {
      ++active_blocks;
      active_bytes += size;
      active_block_bytes += block;
    }
    void remove_active(std::size_t size, std::size_t block) noexcept {
      --active_blocks;
      active_bytes -= size;
      active_block_bytes -= block;
    }
    // Moves every held block to `out` (with its block size).
    void drain(const BinRule& r, std::vector<std::pair<pointer_type, std::size_t>>& out) {
      if (held_blocks == 0) return;
      out.reserve(out.size() + held_blocks);
      for (unsigned e = 0; e < bins.size(); ++e) {
        if (!bins[e]) continue;
        const std::size_t lists = std::size_t{1} << r.leading_bits();
        for (std::size_t m = 0; m < lists; ++m) {
          FreeList& fl = bins[e][m];
          if (fl.empty()) continue;
          const auto bin = static_cast<std::uint32_t>((std::size_t{e} << r.leading_bits()) | m);
          const std::size_t block = r.block_size(bin);
          for (pointer_type p : fl) out.emplace_back(p, block);
          FreeList().swap(fl);
        }
      }
      held_blocks = 0;
      held_bytes = 0;
      held_hint.store(0, std::memory_order_relaxed);
    }
  };

  std::uint32_t my_shard() const noexcept {
    unsigned seed = t_shard_seed;
    if (seed == 0) seed = t_shard_seed = assign_shard_seed();
    return (seed - 1) & (shard_count_ - 1);
  }

  void lock_all() const noexcept {
    for (unsigned i = 0; i < shard_count_; ++i) shards_[i].lock.lock();
  }
  void unlock_all() const noexcept {
    for (unsigned i = shard_count_; i-- > 0;) shards_[i].lock.unlock();
  }

  PooledAllocation<Allocator> allocate_slow(std::size_t size, std::uint32_t bin,
                                            std::uint32_t own) {
    const std::size_t block = rules_.block_size(bin);
    PooledAllocation<Allocator> a;
    a.size_ = size;
    a.bin_ = bin;
    a.shard_ = own;
    // Another shard may hold a block of this bin: take it over (locks in index order).
    for (unsigned step = 1; step < shard_count_; ++step) {
      const unsigned other = (own + step) & (shard_count_ - 1);
      if (shards_[other].held_hint.load(std::memory_order_relaxed) == 0) continue;
      Shard& first = shards_[std::min(own, other)];
      Shard& second = shards_[std::max(own, other)];
      first.lock.lock();
      second.lock.lock();
      FreeList* list = shards_[other].find(rules_, bin);
      const bool found = list && !list->empty();
      if (found) {
        a.ptr_ = list->back();
        list->pop_back();
        shards_[other].take_held(block);
        shards_[own].add_active(size, block);
      }
      second.lock.unlock();
      first.lock.unlock();
      if (found) {
        a.core_ = this;
        return a;
      }
    }
    a.ptr_ = allocate_from_allocator(size, block);
    Shard& s = shards_[own];
    s.lock.lock();
    s.add_active(size, block);
    s.lock.unlock();
    a.core_ = this;
    return a;
  }

  pointer_type allocate_from_allocator(std::size_t size, std::size_t block) {
    pointer_type p{};
    try {
      p = allocator_.allocate(block);
    } catch (const MemoryError&) {
      oom_retries_.fetch_add(1, std::memory_order_relaxed);
      const std::size_t freed = free_held();
      try {
        p = allocator_.allocate(block);
      } catch (const MemoryError& again) {
        throw_pool_out_of_memory(allocator_.describe(), size, block, statistics(), freed,
                                 again.what());
      }
    }
    allocator_allocations_.fetch_add(1, std::memory_order_relaxed);
    const std::size_t managed = managed_.fetch_add(block, std::memory_order_relaxed) + block;
    std::size_t peak = peak_managed_.load(std::memory_order_relaxed);
    while (managed > peak &&
           !peak_managed_.compare_exchange_weak(peak, managed, std::memory_order_relaxed)) {
    }
    return p;
  }

  void release_to_allocator(pointer_type ptr, std::size_t block) noexcept {
    allocator_.deallocate(ptr, block);
    managed_.fetch_sub(block, std::memory_order_relaxed);
    allocator_frees_.fetch_add(1, std::memory_order_relaxed);
  }

  Allocator allocator_;
  BinRule rules_;
  unsigned shard_count_ = 1;
  std::unique_ptr<Shard[]> shards_;
  bool alive_ = true;  // written with every shard locked, read with one locked
  std::atomic<bool> holding_{true};
  std::atomic<std::size_t> orphans_{0};
  std::atomic<std::size_t> managed_{0};
  std::atomic<std::size_t> peak_managed_{0};
  std::atomic<std::uint64_t> allocator_allocations_{0};
  std::atomic<std::uint64_t> allocator_frees_{0};
  std::atomic<std::uint64_t> oom_retries_{0};
};

}  // namespace detail

}  // namespace cudatool
