// the bench-pool engine's workloads, their peak of live bytes, the pool's rounding and the
// quantiles (lib/src/bench/pool_benchmark_workload.cpp), without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <string>
#include <vector>

#include "cudatool/bench/pool_benchmark.hpp"
#include "pool_benchmark_config.hpp"

namespace cudatool::bench {
namespace {

using test_support::host_config;

TEST(PoolBenchmark, WorkloadsAreReproducibleAndInRange) {
  Config c = host_config();
  c.iterations = 100000;
  c.distribution = SizeDistribution::log_uniform;
  c.min_size = 256;
  c.max_size = 64ull << 20;
  c.interleaving = Interleaving::random;
  c.live = 100;
  const Workload a = make_workload(c, 0), b = make_workload(c, 0), other = make_workload(c, 1);
  EXPECT_EQ(a.sizes, b.sizes);
  EXPECT_EQ(a.victims, b.victims);
  EXPECT_NE(a.sizes, other.sizes);
  EXPECT_EQ(a.sizes.size(), kMaxStreamSteps);
  for (std::size_t s : a.sizes) ASSERT_TRUE(s >= c.min_size && s <= c.max_size) << s;
  for (auto v : a.victims) ASSERT_LE(v, c.live);
  // Log-uniform: about as many requests below the geometric mean (128 KiB) as above.
  const auto below =
      std::count_if(a.sizes.begin(), a.sizes.end(), [](std::size_t s) { return s < (128u << 10); });
  EXPECT_NEAR(static_cast<double>(below) / a.sizes.size(), 0.5, 0.02);
  Config seeded = c;
  seeded.seed = 2;
  EXPECT_NE(make_workload(seeded, 0).sizes, a.sizes);

  c.distribution = SizeDistribution::uniform;
  c.min_size = 1000;
  c.max_size = 1003;
  const Workload u = make_workload(c, 0);
  for (std::size_t v = 1000; v <= 1003; ++v) {
    const auto n = std::count(u.sizes.begin(), u.sizes.end(), v);
    EXPECT_NEAR(static_cast<double>(n) / u.sizes.size(), 0.25, 0.02) << v;
  }
  // LIFO streams are whole rounds, so cycling them keeps rounds aligned.
  c.interleaving = Interleaving::lifo;
  c.live = 1000;
  EXPECT_EQ(make_workload(c, 0).sizes.size() % 1000, 0u);
}

TEST(PoolBenchmark, PeakLiveBytes) {
  Config c = host_config();
  c.interleaving = Interleaving::lifo;
  c.live = 2;
  Workload w;
  w.sizes = {1, 2, 30, 4, 5, 6};
  EXPECT_EQ(peak_live_bytes(c, w, 2), 3u);
  EXPECT_EQ(peak_live_bytes(c, w, 4), 34u);
  EXPECT_EQ(peak_live_bytes(c, w, 1000), 34u);

  // Random: against a direct simulation with explicit sets.
  c.interleaving = Interleaving::random;
  c.live = 3;
  c.iterations = 50;
  c.distribution = SizeDistribution::uniform;
  c.min_size = 1;
  c.max_size = 1000;
  const Workload r = make_workload(c, 0);
  std::vector<std::uint64_t> slots;
  std::size_t pos = 0;
  for (int i = 0; i < 3; ++i) slots.push_back(r.sizes[pos++]);
  slots.push_back(0);
  std::size_t empty = 3;
  std::uint64_t peak = std::accumulate(slots.begin(), slots.end(), std::uint64_t{0});
  for (int step = 0; step < 120; ++step) {  // cycles the 50-step stream
    slots[empty] = r.sizes[pos % r.sizes.size()];
    peak = std::max(peak, std::accumulate(slots.begin(), slots.end(), std::uint64_t{0}));
    empty = r.victims[pos % r.sizes.size()];
    slots[empty] = 0;
    ++pos;
    if (pos == r.sizes.size()) pos = 0;
  }
  EXPECT_EQ(peak_live_bytes(c, r, 120), peak);
}

TEST(PoolBenchmark, RoundingStaysWithinTheBinBound) {
  for (unsigned bits : {2u, 4u, 6u}) {
    Config c = host_config();
    c.iterations = 65536;
    c.distribution = SizeDistribution::log_uniform;
    c.min_size = 1;
    c.max_size = 1ull << 30;
    c.pool.leading_bits_in_bin_id = bits;
    const auto r = rounding_summary(c, {make_workload(c, 0), make_workload(c, 1)});
    EXPECT_EQ(r.requests, 2u * 65536);
    EXPECT_GT(r.small_requests, 0u);
    EXPECT_LT(r.max_overhead_pct, 100.0 / (1 << bits));
    EXPECT_GT(r.max_overhead_pct, 0.0);
    EXPECT_GE(r.block_bytes, r.requested_bytes);
  }
}

TEST(PoolBenchmark, Quantiles) {
  EXPECT_EQ(quantile({}, 0.5), 0.0);
  std::vector<double> v;
  for (int i = 100; i >= 1; --i) v.push_back(i);
  EXPECT_EQ(quantile(v, 0.5), 50.0);
  EXPECT_EQ(quantile(v, 0.99), 99.0);
  EXPECT_EQ(quantile(v, 1.0), 100.0);
  EXPECT_EQ(quantile(v, 0.0), 1.0);
  EXPECT_EQ(quantile({7}, 0.99), 7.0);
}

}  // namespace
}  // namespace cudatool::bench
