// Memory pools after PyOpenCL's MemoryPool and PyCUDA's DeviceMemoryPool /
// PageLockedMemoryPool: one pool template over an allocator (allocators.hpp), which keeps
// the blocks its users return and hands them out again instead of calling the allocator.
//
// Bins. A request of `size` bytes is served from a bin, and every block in a bin has the
// same size, so blocks in a bin are interchangeable:
//   * size 0: an empty allocation (null pointer, size 0) that touches neither the pool nor
//     the allocator (PyOpenCL 2020.2 semantics).
//   * 1 <= size <= small_block_bytes (default 256 B, the alignment cuMemAlloc guarantees):
//     the one "small" bin, whose blocks are exactly small_block_bytes long. The rounding
//     overhead of such a request is below small_block_bytes bytes, not a percentage.
//   * size > small_block_bytes: with k = leading_bits_in_bin_id (default 4) and
//     e = floor(log2(size)), the bin is identified by e and the k bits that follow the
//     leading one bit (PyOpenCL's rule: its leading_bits_in_bin_id counts the bits after
//     the implicit leading one); the request is rounded up to the largest size sharing
//     those leading bits, that is, the low e - k bits are set to one. The block exceeds
//     the request by less than 2^(e-k) <= size / 2^k bytes: less than 6.25% for k = 4.
//     Where e <= k the size is its own bin (no rounding).
//
// Concurrency. The pool is sharded: each thread maps to one of `shards` shards (threads
// are assigned round-robin the first time they use any pool), each with a spin lock, its
// own free lists (one per bin) and its own counters, so threads that allocate and free on
// their own do not share a cache line. A block goes back to the shard that handed it out.
// A thread whose shard has no block of the wanted bin takes one from another shard before
// it calls the allocator. Statistics lock every shard and are an exact snapshot whenever
// no allocate runs at the same moment (one in flight may have memory from the allocator
// that is not counted yet).
//
// Out of memory. When the allocator throws MemoryError, the pool frees every block it
// holds (all shards) and retries once; if that fails too it throws a MemoryError naming
// the request, the block size and the pool's statistics. The pool stays usable.
//
// Lifetime. Allocations may outlive the MemoryPool object: destroying the pool frees what
// it holds and stops holding; the pool's shared state (and its allocator, with the CUDA
// context it keeps) lives on until the last allocation is returned, which frees it.
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

namespace cudatool {

struct PoolOptions {
  // Bits after the leading one bit that identify a bin (PyOpenCL's name). 0..12.
  unsigned leading_bits_in_bin_id = 4;
  // Requests of 1..small_block_bytes bytes share one bin of blocks of exactly this size.
  // 1..1 MiB.
  std::size_t small_block_bytes = 256;
  // Number of shards; 0 for one per hardware thread (a power of two, at most 64).
  unsigned shards = 0;
};

// The bin rule above, as pure functions.
class BinRule {
 public:
  static constexpr unsigned kMaxLeadingBits = 12;
  static constexpr std::size_t kMaxSmallBlockBytes = std::size_t{1} << 20;

  // Throws LogicError for values out of the ranges in PoolOptions.
  explicit BinRule(unsigned leading_bits_in_bin_id = 4, std::size_t small_block_bytes = 256);

  unsigned leading_bits() const noexcept { return bits_; }
  std::size_t small_block_bytes() const noexcept { return small_; }

  // The bin of a request of `size` >= 1 bytes; bin 0 is the small bin.
  std::uint32_t bin_of(std::size_t size) const noexcept {
    if (size <= small_) return 0;
    const unsigned e = static_cast<unsigned>(std::bit_width(size)) - 1;
    const std::size_t mantissa =
        e >= bits_ ? (size >> (e - bits_)) & mask_ : (size << (bits_ - e)) & mask_;
    return static_cast<std::uint32_t>((std::size_t{e} << bits_) | mantissa);
  }
  // The size of every block in `bin`.
  std::size_t block_size(std::uint32_t bin) const noexcept {
    if (bin == 0) return small_;
    const unsigned e = bin >> bits_;
    const std::size_t head = (std::size_t{1} << bits_) | (bin & mask_);
    if (e <= bits_) return head >> (bits_ - e);
    const unsigned shift = e - bits_;
    return (head << shift) | ((std::size_t{1} << shift) - 1);
  }
  // block_size(bin_of(size)); 0 for 0.
  std::size_t round_up(std::size_t size) const noexcept {
    return size == 0 ? 0 : block_size(bin_of(size));
  }
  // Exponent and mantissa of a bin: where its free list lives.
  unsigned exponent(std::uint32_t bin) const noexcept { return bin >> bits_; }
  std::size_t mantissa(std::uint32_t bin) const noexcept { return bin & mask_; }

 private:
  unsigned bits_;
  std::size_t mask_;
  std::size_t small_;
};

struct PoolStatistics {
  std::size_t held_blocks = 0;              // unused blocks the pool keeps for reuse
  std::size_t held_bytes = 0;               // their block bytes
  std::size_t active_blocks = 0;            // live allocations (zero-size ones not counted)
  std::size_t active_bytes = 0;             // requested bytes of live allocations (sum of size())
  std::size_t active_block_bytes = 0;       // block bytes of live allocations
  std::size_t managed_bytes = 0;            // held_bytes + active_block_bytes: all the pool has
  std::size_t peak_managed_bytes = 0;       // high-water mark of bytes taken from the allocator
  std::uint64_t allocator_allocations = 0;  // calls of the allocator that succeeded
  std::uint64_t allocator_frees = 0;        // blocks given back to the allocator
  std::uint64_t oom_retries = 0;            // out-of-memory failures answered by free_held
  bool holding = true;                      // false after stop_holding()
};

// "held 3 blocks (12 KiB), active 2 blocks (8 KiB requested, 8.5 KiB in blocks), managed
// 20.5 KiB (peak 24 KiB)".
std::string describe(const PoolStatistics& stats);

template <class Allocator>
class MemoryPool;
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

// One allocation from a MemoryPool: move-only; the block goes back to the pool on free()
// or destruction (or to the allocator, once the pool stopped holding or was destroyed).
template <class Allocator>
class PooledAllocation {
 public:
  using pointer_type = typename Allocator::pointer_type;

  PooledAllocation() noexcept = default;
  PooledAllocation(PooledAllocation&& other) noexcept
      : core_(std::exchange(other.core_, nullptr)),
        ptr_(std::exchange(other.ptr_, pointer_type{})),
        size_(std::exchange(other.size_, 0)),
        bin_(other.bin_),
        shard_(other.shard_) {}
  PooledAllocation& operator=(PooledAllocation&& other) noexcept {
    if (this != &other) {
      free();
      core_ = std::exchange(other.core_, nullptr);
      ptr_ = std::exchange(other.ptr_, pointer_type{});
      size_ = std::exchange(other.size_, 0);
      bin_ = other.bin_;
      shard_ = other.shard_;
    }
    return *this;
  }
  PooledAllocation(const PooledAllocation&) = delete;
  PooledAllocation& operator=(const PooledAllocation&) = delete;
  ~PooledAllocation() { free(); }

  // The memory (a CUdeviceptr or a host pointer); null for a zero-size or freed allocation.
  pointer_type get() const noexcept { return ptr_; }
  // The size asked for (0 once freed).
  std::size_t size() const noexcept { return size_; }
  // The size of the block behind it (>= size(); 0 when it holds none).
  std::size_t block_size() const noexcept { return core_ ? core_->rules().block_size(bin_) : 0; }
  // Whether it holds a block (false for zero-size, moved-from and freed allocations).
  explicit operator bool() const noexcept { return core_ != nullptr; }

  // Returns the block to its pool now; afterwards the allocation is empty. Idempotent.
  void free() noexcept {
    if (core_ == nullptr) {
      size_ = 0;
      return;
    }
    std::exchange(core_, nullptr)->give_back(ptr_, size_, bin_, shard_);
    ptr_ = pointer_type{};
    size_ = 0;
  }

 private:
  friend class detail::PoolCore<Allocator>;
  detail::PoolCore<Allocator>* core_ = nullptr;
  pointer_type ptr_{};
  std::size_t size_ = 0;
  std::uint32_t bin_ = 0;
  std::uint32_t shard_ = 0;
};

// The pool. Allocator needs: pointer_type; pointer_type allocate(size_t) that throws
// MemoryError when out of memory; void deallocate(pointer_type, size_t) noexcept; and
// std::string describe() const. It must be safe to call from several threads at once.
template <class Allocator>
class MemoryPool {
 public:
  using allocator_type = Allocator;
  using allocation_type = PooledAllocation<Allocator>;
  using pointer_type = typename Allocator::pointer_type;

  explicit MemoryPool(Allocator allocator, PoolOptions options = {})
      : core_(new detail::PoolCore<Allocator>(std::move(allocator), options)) {}
  MemoryPool(MemoryPool&& other) noexcept : core_(std::exchange(other.core_, nullptr)) {}
  MemoryPool& operator=(MemoryPool&& other) noexcept {
    if (this != &other) {
      if (core_) core_->detach();
      core_ = std::exchange(other.core_, nullptr);
    }
    return *this;
  }
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;
  ~MemoryPool() {
    if (core_) core_->detach();
  }

  // A block of at least `size` bytes (see the bin rule above); throws MemoryError.
  allocation_type allocate(std::size_t size) { return core().allocate(size); }
  allocation_type operator()(std::size_t size) { return allocate(size); }

  // Frees every held block (blocks in use stay); returns how many were freed.
  std::size_t free_held() { return core().free_held(); }
  // From now on blocks returned to the pool go straight back to the allocator; frees
  // what is held.
  void stop_holding() { core().stop_holding(); }

  PoolStatistics statistics() const { return core().statistics(); }
  std::size_t held_blocks() const { return statistics().held_blocks; }
  std::size_t active_blocks() const { return statistics().active_blocks; }
  std::size_t managed_bytes() const { return statistics().managed_bytes; }
  std::size_t active_bytes() const { return statistics().active_bytes; }
  std::size_t held_bytes() const { return statistics().held_bytes; }

  const BinRule& bin_rule() const { return core().rules(); }
  const Allocator& allocator() const { return core().allocator(); }

 private:
  detail::PoolCore<Allocator>& core() const {
    if (core_ == nullptr) throw LogicError("MemoryPool: use of a moved-from pool");
    return *core_;
  }
  detail::PoolCore<Allocator>* core_;
};

}  // namespace cudatool
