// The pool benchmark's workloads: each thread's request stream (sizes, and victims for the
// random order) from a seed, the peak of live bytes it reaches, how the pool's bins round
// its requests, and the quantiles of the timings.
#include <algorithm>
#include <cmath>
#include <vector>

#include "cudatool/bench/pool_benchmark.hpp"
#include "cudatool/memory/memory_pool.hpp"

namespace cudatool::bench {

namespace {

// splitmix64: a small, fast generator whose output is the same everywhere.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) (n >= 1), by multiply-shift.
  std::uint64_t below(std::uint64_t n) {
    return static_cast<std::uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }  // [0, 1)
};

std::size_t stream_steps(const Config& c) {
  std::size_t steps = kMaxStreamSteps;
  if (c.iterations) steps = static_cast<std::size_t>(std::min<std::uint64_t>(steps, *c.iterations));
  if (c.interleaving == Interleaving::lifo) {
    // Whole rounds, so that rounds line up with the stream when it is cycled.
    steps = std::max<std::size_t>(c.live, steps / c.live * c.live);
  }
  return std::max<std::size_t>(steps, 1);
}

}  // namespace

Workload make_workload(const Config& c, unsigned thread) {
  Workload w;
  const std::size_t steps = stream_steps(c);
  Rng rng{c.seed * 0x2545f4914f6cdd1dull + thread + 1};
  w.sizes.resize(steps);
  const double log_min = std::log(static_cast<double>(c.min_size));
  const double log_max = std::log(static_cast<double>(c.max_size) + 1.0);
  for (auto& s : w.sizes) {
    switch (c.distribution) {
      case SizeDistribution::fixed:
        s = c.size;
        break;
      case SizeDistribution::uniform:
        s = c.min_size + rng.below(c.max_size - c.min_size + 1);
        break;
      case SizeDistribution::log_uniform: {
        const double v = std::exp(log_min + rng.unit() * (log_max - log_min));
        s = std::clamp(static_cast<std::uint64_t>(v), c.min_size, c.max_size);
        break;
      }
    }
  }
  if (c.interleaving == Interleaving::random) {
    w.victims.resize(steps);
    for (auto& v : w.victims) v = static_cast<std::uint32_t>(rng.below(c.live + 1));
  }
  return w;
}

std::uint64_t peak_live_bytes(const Config& c, const Workload& w, std::uint64_t pairs) {
  const std::size_t n = w.sizes.size();
  if (c.interleaving == Interleaving::lifo) {
    // Rounds of `live` requests, aligned with the stream: the peak is the largest round.
    std::uint64_t peak = 0;
    const std::uint64_t rounds = (pairs + c.live - 1) / c.live;
    const std::uint64_t distinct = std::min<std::uint64_t>(rounds, n / c.live);
    for (std::uint64_t r = 0; r < distinct; ++r) {
      std::uint64_t sum = 0;
      for (std::size_t i = 0; i < c.live; ++i) sum += w.sizes[r * c.live + i];
      peak = std::max(peak, sum);
    }
    return peak;
  }
  // Random: the first `live` requests fill the live set (slots 0..live-1), then each step
  // allocates into the empty slot and frees its victim, which becomes the empty slot.
  std::vector<std::uint64_t> slot(c.live + 1, 0);
  std::uint64_t live_bytes = 0;
  std::size_t pos = 0;
  for (std::size_t i = 0; i < c.live; ++i) {
    slot[i] = w.sizes[pos];
    live_bytes += slot[i];
    pos = pos + 1 == n ? 0 : pos + 1;
  }
  std::uint64_t peak = live_bytes;
  std::size_t empty = c.live;
  for (std::uint64_t step = 0; step < pairs; ++step) {
    slot[empty] = w.sizes[pos];
    live_bytes += slot[empty];
    peak = std::max(peak, live_bytes);
    const std::size_t victim = w.victims[pos];
    live_bytes -= slot[victim];
    slot[victim] = 0;
    empty = victim;
    pos = pos + 1 == n ? 0 : pos + 1;
  }
  return peak;
}

RoundingSummary rounding_summary(const Config& c, const std::vector<Workload>& workloads) {
  const BinRule rule(c.pool.leading_bits_in_bin_id, c.pool.small_block_bytes);
  RoundingSummary r;
  for (const auto& w : workloads) {
    for (std::size_t s : w.sizes) {
      const std::size_t block = rule.round_up(s);
      r.requested_bytes += s;
      r.block_bytes += block;
      ++r.requests;
      if (s <= rule.small_block_bytes()) {
        ++r.small_requests;
      } else {
        r.max_overhead_pct = std::max(
            r.max_overhead_pct, 100.0 * static_cast<double>(block - s) / static_cast<double>(s));
      }
    }
  }
  if (r.requested_bytes)
    r.overhead_pct = 100.0 * static_cast<double>(r.block_bytes - r.requested_bytes) /
                     static_cast<double>(r.requested_bytes);
  return r;
}

double quantile(std::vector<double> samples, double q) {
  if (samples.empty()) return 0;
  q = std::clamp(q, 0.0, 1.0);
  std::size_t rank = static_cast<std::size_t>(std::ceil(q * static_cast<double>(samples.size())));
  rank = std::clamp<std::size_t>(rank, 1, samples.size());
  std::nth_element(samples.begin(), samples.begin() + static_cast<std::ptrdiff_t>(rank - 1),
                   samples.end());
  return samples[rank - 1];
}

}  // namespace cudatool::bench
