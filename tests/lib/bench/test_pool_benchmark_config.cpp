// the bench-pool engine's names, their parsers and the validation of a Config
// (lib/src/bench/pool_benchmark_config.cpp), without a GPU.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/bench/pool_benchmark.hpp"
#include "cudatool/memory/allocators.hpp"
#include "pool_benchmark_config.hpp"

namespace cudatool::bench {
namespace {

using test_support::host_config;

template <class F>
std::string usage_message(F f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no UsageError)";
}

TEST(PoolBenchmark, ParsesNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(parse_backend("device", "--backend"), Backend::device);
  EXPECT_EQ(parse_backend("pinned", "--backend"), Backend::pinned);
  EXPECT_EQ(parse_size_distribution("log-uniform", "--workload"), SizeDistribution::log_uniform);
  EXPECT_EQ(parse_interleaving("random", "--order"), Interleaving::random);
  EXPECT_EQ(parse_allocator_kind("stream", "--allocators"), AllocatorKind::stream);
  const std::string m = usage_message([] { parse_backend("gpu", "--backend"); });
  EXPECT_NE(m.find("unknown backend \"gpu\""), std::string::npos) << m;
  EXPECT_NE(m.find("device, pinned, host"), std::string::npos) << m;
  EXPECT_THROW(parse_size_distribution("normal", "--workload"), UsageError);
  EXPECT_THROW(parse_interleaving("fifo", "--order"), UsageError);
  EXPECT_THROW(parse_allocator_kind("cub", "--allocators"), UsageError);
  EXPECT_EQ(parse_host_alloc_flags("none", "f"), 0u);
  EXPECT_EQ(parse_host_alloc_flags("portable,writecombined", "f"),
            unsigned{PageLockedAllocator::kPortable | PageLockedAllocator::kWriteCombined});
  EXPECT_THROW(parse_host_alloc_flags("portable,mapped", "f"), UsageError);
  EXPECT_EQ(parse_host_alloc_flags("", "f"), 0u);  // as none
  EXPECT_EQ(usage_message([] { parse_host_alloc_flags("portable,", "--pinned-flags"); }),
            "--pinned-flags \"portable,\": an empty entry in the list (expected e.g. "
            "portable,devicemap)");
}

TEST(PoolBenchmark, ValidateRejectsWhatCannotRun) {
  auto bad = [](auto change) {
    Config c = host_config();
    change(c);
    return usage_message([&] { validate(c); });
  };
  auto bad_flag = [](auto change) {
    Config c = host_config();
    c.names.benchmark = "bench-pool";
    c.names.threads = "--threads";
    c.names.size = "--size";
    c.names.min_size = "--min-size";
    c.names.max_size = "--max-size";
    c.names.live = "--live";
    c.names.iterations = "--iterations";
    c.names.duration = "--duration";
    c.names.leading_bits = "--leading-bits";
    change(c);
    return usage_message([&] { validate(c); });
  };
  EXPECT_NO_THROW(validate(host_config()));
  // Messages name the settings as the caller does (the CLI: its flags), else by their fields.
  EXPECT_EQ(bad([](Config& c) { c.threads = 0; }), "threads 0: must be 1..1024");
  EXPECT_EQ(bad([](Config& c) {
              c.iterations.reset();
              c.duration_s.reset();
            }),
            "pool benchmark: give iterations or duration_s");
  EXPECT_NE(bad_flag([](Config& c) { c.threads = 0; }).find("--threads 0"), std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.size = 0; }).find("--size"), std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.size = kMaxRequestBytes + 1; }).find("absurd"),
            std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) {
              c.distribution = SizeDistribution::uniform;
              c.min_size = 2000;
              c.max_size = 1000;
            }).find("larger than --max-size"),
            std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.live = 0; }).find("--live"), std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.iterations.reset(); }).find("--iterations or --duration"),
            std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.duration_s = -1; }).find("--duration"), std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.allocators = {AllocatorKind::stream}; }).find("not offered"),
            std::string::npos);
  EXPECT_NE(bad_flag([](Config& c) { c.pool.leading_bits_in_bin_id = 40; }).find("--leading-bits"),
            std::string::npos);
  // A valid config that asks for more than the machine has is out of memory, not usage.
  Config huge = host_config();
  huge.size = kMaxRequestBytes;
  EXPECT_THROW(run(huge, nullptr), MemoryError);
  // The device backend without a context is a programming error.
  Config device = host_config();
  device.backend = Backend::device;
  EXPECT_THROW(run(device, nullptr), LogicError);
}

}  // namespace
}  // namespace cudatool::bench
