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
//
// Here: the pool and its allocations. Its options, bin rule and statistics are in
// pool_types.hpp; the state they share (detail::PoolCore) is in detail/pool_core.hpp, which
// is installed because the pool is a template, and is not API.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/memory/detail/pool_core.hpp"
#include "cudatool/memory/pool_types.hpp"

namespace cudatool {

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
