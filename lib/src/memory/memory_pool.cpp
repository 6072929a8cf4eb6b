#include "cudatool/memory/memory_pool.hpp"

#include <algorithm>
#include <thread>

#include "cudatool/base/units.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace cudatool {

BinRule::BinRule(unsigned leading_bits_in_bin_id, std::size_t small_block_bytes)
    : bits_(leading_bits_in_bin_id),
      mask_((std::size_t{1} << leading_bits_in_bin_id) - 1),
      small_(small_block_bytes) {
  if (leading_bits_in_bin_id > kMaxLeadingBits)
    throw LogicError("MemoryPool: leading_bits_in_bin_id must be 0.." +
                     std::to_string(kMaxLeadingBits) + ", not " +
                     std::to_string(leading_bits_in_bin_id));
  if (small_block_bytes < 1 || small_block_bytes > kMaxSmallBlockBytes)
    throw LogicError("MemoryPool: small_block_bytes must be 1.." +
                     std::to_string(kMaxSmallBlockBytes) + ", not " +
                     std::to_string(small_block_bytes));
}

namespace {

std::string blocks(std::size_t n) {
  return std::to_string(n) + (n == 1 ? " block" : " blocks");
}

}  // namespace

std::string describe(const PoolStatistics& s) {
  std::string text = "held " + blocks(s.held_blocks) + " (" + format_bytes(s.held_bytes) +
                     "), active " + blocks(s.active_blocks) + " (" + format_bytes(s.active_bytes) +
                     " requested, " + format_bytes(s.active_block_bytes) + " in blocks), managed " +
                     format_bytes(s.managed_bytes) + " (peak " +
                     format_bytes(s.peak_managed_bytes) + ")";
  if (!s.holding) text += ", not holding";
  return text;
}

namespace detail {

void SpinLock::lock_slow() noexcept {
  for (unsigned spins = 0;; ++spins) {
    if (!locked_.load(std::memory_order_relaxed) &&
        !locked_.exchange(true, std::memory_order_acquire))
      return;
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      _mm_pause();
#endif
    } else {
      // The holder may have been preempted: let it run.
      std::this_thread::yield();
    }
  }
}

unsigned assign_shard_seed() noexcept {
  static std::atomic<unsigned> next{0};
  unsigned seed = next.fetch_add(1, std::memory_order_relaxed) + 1;
  if (seed == 0) seed = next.fetch_add(1, std::memory_order_relaxed) + 1;  // wrapped
  return seed;
}

unsigned default_shard_count() noexcept {
  const unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  return std::min(64u, std::bit_ceil(hw));
}

void throw_pool_out_of_memory(const std::string& allocator, std::size_t size, std::size_t block,
                              const PoolStatistics& stats, std::size_t freed_blocks,
                              const std::string& cause) {
  throw MemoryError(
      "out of memory: cannot allocate " + format_bytes(size) + " (" + std::to_string(size) +
      " bytes, a block of " + std::to_string(block) + " bytes) from the pool of " + allocator +
      ", also after freeing " + std::to_string(freed_blocks) + " held " +
      (freed_blocks == 1 ? "block" : "blocks") + ": " + cause + "; pool: " + describe(stats));
}

}  // namespace detail
}  // namespace cudatool
