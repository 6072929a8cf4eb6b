// A memory pool's plain types (memory_pool.hpp describes the pool): the options it is made
// with, the bin rule those options give (the request sizes that share a block size), and the
// statistics it reports.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <string>

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

}  // namespace cudatool
