// OccupancyRecord without a GPU: hand-computed cases for several architectures, the
// invariants every configuration must keep, errors, improvements, sweeps, suggestions.
//
// How the expectations are computed (CUDA C++ Programming Guide, occupancy rules as
// cuda_occupancy.h states them): registers are allocated per warp, regs x 32 rounded up
// to 256; the SM's 64K registers are split over 4 sub-partitions, each holding
// floor(16384 / per-warp allocation) warps. Shared memory per block is rounded up to the
// allocation granularity after adding the reserved 1 KiB (8.0 on). Warps per block are
// threads / 32 rounded up.
#include "cudatool/occupancy/occupancy.hpp"
#include "json_tree.hpp"
#include "occupancy_json.hpp"  // the renderer (apps/cudatool/)

#include <gtest/gtest.h>

#include <algorithm>
#include <climits>
#include <functional>
#include <string>
#include <tuple>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

struct Case {
  const char* arch;
  int threads;
  std::size_t smem;
  int regs;
  int barriers;
  int tb_per_mp;
  const char* limited_by;
  int warps_per_mp;
  double occupancy;
  BlockLimits limits;
};

// Each line: arch, threads, smem, regs, barriers -> blocks, limited by, warps, occupancy,
// limits {device, warps, regs, smem, barriers}.
const Case kCases[] = {
    // 37 regs: 1184 -> 1280 per warp, 16384 / 1280 = 12 warps per sub-partition, 48 per
    // SM, 48 / 8 = 6. smem: 10240 + 1024 = 11264, 233472 / 11264 = 20.
    {"sm_90", 256, 10240, 37, 1, 6, "regs", 48, 0.75, {32, 8, 6, 20, 64}},
    // 32 regs: 1024 per warp, 16 warps per sub-partition, 64 per SM: 8 blocks, tied with
    // the warp limit 64 / 8; smem only the reserved 1 KiB: 228 blocks.
    {"sm_90", 256, 0, 32, 1, 8, "warps", 64, 1.0, {32, 8, 8, 228, 64}},
    // One warp per block: the hardware's 32 blocks win; barriers 2 x 32 / 1.
    {"sm_90", 32, 0, 0, 1, 32, "device", 32, 0.5, {32, 64, std::nullopt, 228, 64}},
    // Four named barriers per block: 64 / 4 = 16 blocks.
    {"sm_90", 32, 0, 0, 4, 16, "barriers", 16, 0.25, {32, 64, std::nullopt, 228, 16}},
    // Opt-in beyond 48 KiB: 200 KiB + 1 KiB = 205 KiB, one per 228 KiB SM. 64 regs: 2048
    // per warp, 8 warps per sub-partition, 32 per SM, 8 blocks of 4 warps.
    {"sm_90", 128, 204800, 64, 1, 1, "smem", 4, 0.0625, {32, 16, 8, 1, 64}},
    // 20000 + 1024 = 21024 -> 21120; 102400 / 21120 = 4. 48 warps per SM.
    {"sm_86", 128, 20000, 32, 1, 4, "smem", 16, 1.0 / 3.0, {16, 12, 16, 4, std::nullopt}},
    // 7.5 has 32 warps per SM: 1024 threads, 64 regs fills it exactly (2048 per warp, 8
    // warps per sub-partition).
    {"sm_75", 1024, 0, 64, 1, 1, "warps", 32, 1.0, {16, 1, 1, std::nullopt, std::nullopt}},
    // 65 regs: 2080 -> 2304 per warp x 32 warps = 73728 > 65536 per block: cannot launch.
    {"sm_75", 1024, 0, 65, 1, 0, "regs", 0, 0.0, {16, 1, 0, std::nullopt, std::nullopt}},
    // 163 KiB + 1 KiB reserved on a 164 KiB SM.
    {"sm_80", 64, 166912, 0, 1, 1, "smem", 2, 2.0 / 64, {32, 32, std::nullopt, 1, std::nullopt}},
    // Maxwell: granularity 256, nothing reserved: 65536 / 12288 = 5; 6 warps per block.
    {"sm_50", 192, 12288, 0, 1, 5, "smem", 30, 30.0 / 64, {32, 10, std::nullopt, 5, std::nullopt}},
    // 255 regs: 8160 -> 8192 per warp, 2 warps per sub-partition, 8 per SM: 1 block of 8.
    {"sm_61", 256, 0, 255, 1, 1, "regs", 8, 0.125, {32, 8, 1, std::nullopt, std::nullopt}},
    // 5.3 has 32K registers per block: 16 warps x 2048 = 32768 fits (and the SM's 64K
    // hold two such blocks) ...
    {"sm_53", 512, 0, 64, 1, 2, "regs", 32, 0.5, {32, 4, 2, std::nullopt, std::nullopt}},
    // ... 32 warps x 2048 = 65536 does not.
    {"sm_53", 1024, 0, 64, 1, 0, "regs", 0, 0.0, {32, 2, 0, std::nullopt, std::nullopt}},
    // Volta opt-in to the whole 96 KiB.
    {"sm_70", 256, 98304, 0, 1, 1, "smem", 8, 0.125, {32, 8, std::nullopt, 1, std::nullopt}},
    // 12.x: one block barrier per hardware block slot, so barriers tie with the device.
    {"sm_120", 32, 0, 0, 1, 24, "device", 24, 0.5, {24, 48, std::nullopt, 100, 24}},
    // Ada: 24 blocks, 48 warps: 64 threads -> 24 blocks (device, tied with warps). 16
    // regs: 512 per warp, 32 warps per sub-partition, 128 per SM, 64 blocks of 2 warps.
    {"sm_89", 64, 0, 16, 1, 24, "device", 48, 1.0, {24, 24, 64, 100, std::nullopt}},
};

TEST(OccupancyRecord, HandComputedCases) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(std::string(c.arch) + " threads=" + std::to_string(c.threads) +
                 " smem=" + std::to_string(c.smem) + " regs=" + std::to_string(c.regs) +
                 " barriers=" + std::to_string(c.barriers));
    const OccupancyRecord r(DeviceData(Arch::parse(c.arch, "test")), c.threads, c.smem, c.regs,
                            c.barriers);
    EXPECT_EQ(r.tb_per_mp, c.tb_per_mp);
    EXPECT_EQ(r.limited_by, c.limited_by);
    EXPECT_EQ(r.warps_per_mp, c.warps_per_mp);
    EXPECT_DOUBLE_EQ(r.occupancy, c.occupancy);
    EXPECT_EQ(r.limits, c.limits) << cudatool::test::json_tree(r.limits).dump();
  }
}

TEST(OccupancyRecord, PyCudaDefaultsAndTies) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  const OccupancyRecord r(d, 256);  // no shared memory, no registers
  EXPECT_EQ(r.shared_mem, 0u);
  EXPECT_EQ(r.registers, 0);
  EXPECT_EQ(r.block_barriers, 1);
  EXPECT_EQ(r.tb_per_mp, 8);
  EXPECT_EQ(r.limited_by, "warps");
  EXPECT_FALSE(r.opted_in);
  // 32 registers tie registers with warps; the first in the documented order is named.
  const OccupancyRecord tie(d, 256, 0, 32);
  EXPECT_EQ(tie.limiting_factors(), (std::vector<std::string_view>{"warps", "regs"}));
  EXPECT_EQ(tie.allocated_registers_per_block, 8 * 1024);
  EXPECT_EQ(tie.allocated_shared_mem_per_block, 1024u);
}

TEST(OccupancyRecord, OptInAboveTheDefaultPerBlockLimit) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  EXPECT_FALSE(OccupancyRecord(d, 128, 49152).opted_in);
  const OccupancyRecord above(d, 128, 49153);
  EXPECT_TRUE(above.opted_in);
  EXPECT_EQ(above.allocated_shared_mem_per_block, 49153u + 1024 + 127 - (49153 + 1024 + 127) % 128);
  EXPECT_EQ(above.tb_per_mp, static_cast<int>(233472 / above.allocated_shared_mem_per_block));
  EXPECT_EQ(OccupancyRecord(d, 128, 232448).tb_per_mp, 1);  // the whole opt-in limit
  // Maxwell has no opt-in: 48 KiB is the end.
  EXPECT_EQ(OccupancyRecord(DeviceData(Arch::parse("sm_52", "test")), 128, 49152).tb_per_mp, 2);
  EXPECT_THROW(OccupancyRecord(DeviceData(Arch::parse("sm_52", "test")), 128, 49153), UsageError);
}

void expect_usage_error(const std::function<void()>& make, const std::vector<std::string>& words) {
  try {
    make();
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    for (const auto& word : words)
      EXPECT_NE(std::string(e.what()).find(word), std::string::npos)
          << "'" << word << "' not in: " << e.what();
  }
}

// The one range of a block size a flag gives, every row's maximum, with one message.
TEST(BlockSize, OneRangeForEveryFlag) {
  EXPECT_EQ(parse_block_size("1", "--threads"), 1);
  EXPECT_EQ(parse_block_size("1024", "--threads"), kMaxBlockThreads);
  for (const char* text : {"0", "1025", "2048", "1048576", "2147483648", "-1", "x", ""}) {
    SCOPED_TRACE(text);
    try {
      parse_block_size(text, "--threads");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()),
                "--threads \"" + std::string(text) + "\": expected a whole number 1..1024");
    }
  }
  for (const DeviceProperties& row : known_architectures()) {
    if (row.max_threads_per_block != 0) {
      EXPECT_EQ(row.max_threads_per_block, kMaxBlockThreads) << row.name;
    }
  }
}

TEST(OccupancyRecord, ImpossibleBlocksAreUsageErrorsNamingLimitAndValue) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  expect_usage_error([&] { OccupancyRecord(d, 0); }, {"threads", "0"});
  expect_usage_error([&] { OccupancyRecord(d, -1); }, {"threads", "-1"});
  expect_usage_error([&] { OccupancyRecord(d, 1025); }, {"1025", "1024"});
  expect_usage_error([&] { OccupancyRecord(d, 256, 0, 256); }, {"256", "255", "registers"});
  expect_usage_error([&] { OccupancyRecord(d, 256, 0, -1); }, {"registers", "-1"});
  expect_usage_error([&] { OccupancyRecord(d, 256, 232449); }, {"232449", "232448", "opt-in"});
  expect_usage_error([&] { OccupancyRecord(d, 256, 0, 0, 17); }, {"barriers", "17", "16"});
  expect_usage_error([&] { OccupancyRecord(d, 256, 0, 0, -1); }, {"barriers", "-1"});
  expect_usage_error([&] { OccupancyRecord(DeviceData(Arch::parse("sm_75", "test")), 256, 65537); },
                     {"65537", "65536"});
}

// Invariants over a grid of configurations on every architecture in the table.
TEST(OccupancyRecord, InvariantsOnEveryArchitecture) {
  int checked = 0;
  for (const auto& row : known_architectures()) {
    const DeviceData d(row);
    SCOPED_TRACE(row.name);
    if (occupancy_unknown(d)) continue;  // UnknownInputsGiveNoNumber covers those
    for (int threads : {1, 32, 33, 64, 96, 128, 200, 256, 384, 512, 640, 768, 1000, 1024}) {
      // Non-increasing in registers, each record consistent with its limits.
      int previous = INT_MAX;
      for (int regs = 0; regs <= row.max_registers_per_thread; regs += 3) {
        const OccupancyRecord r(d, threads, 4096, regs);
        ASSERT_LE(r.tb_per_mp, previous) << "threads=" << threads << " regs=" << regs;
        previous = r.tb_per_mp;
        const int warps_per_block = (threads + 31) / 32;
        ASSERT_EQ(r.warps_per_mp, r.tb_per_mp * warps_per_block);
        ASSERT_LE(r.warps_per_mp, d.warps_per_mp());
        ASSERT_DOUBLE_EQ(r.occupancy, static_cast<double>(r.warps_per_mp) / d.warps_per_mp());
        ASSERT_GE(r.occupancy, 0.0);
        ASSERT_LE(r.occupancy, 1.0);
        ASSERT_LE(r.tb_per_mp, d.thread_blocks_per_mp());
        const int smallest =
            std::min({r.limits.device, r.limits.warps, r.limits.regs.value_or(INT_MAX),
                      r.limits.smem.value_or(INT_MAX), r.limits.barriers.value_or(INT_MAX)});
        ASSERT_EQ(r.tb_per_mp, smallest);
        ASSERT_FALSE(r.limited_by.empty());
        ++checked;
      }
      // Non-increasing in shared memory.
      previous = INT_MAX;
      for (std::size_t smem = 0; smem <= row.shared_memory_per_block_optin; smem += 1000) {
        const OccupancyRecord r(d, threads, smem, 32);
        ASSERT_LE(r.tb_per_mp, previous) << "threads=" << threads << " smem=" << smem;
        previous = r.tb_per_mp;
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20000);
}

TEST(OccupancyImprovement, FewerRegistersForMoreBlocks) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  const OccupancyRecord r(d, 256, 0, 37);
  const auto better = fewer_registers_for_more_blocks(d, r);
  ASSERT_TRUE(better.has_value());
  EXPECT_EQ(better->resource, "regs");
  EXPECT_EQ(better->value, 32u);
  EXPECT_EQ(better->reduction, 5u);
  EXPECT_EQ(better->tb_per_mp, 8);
  EXPECT_DOUBLE_EQ(better->occupancy, 1.0);
  // Already at full occupancy: nothing to gain.
  EXPECT_FALSE(fewer_registers_for_more_blocks(d, OccupancyRecord(d, 256, 0, 32)).has_value());
  // The smallest cut: one register more than the answer gives no more blocks.
  const OccupancyRecord heavy(d, 128, 0, 100);
  const auto cut = fewer_registers_for_more_blocks(d, heavy);
  ASSERT_TRUE(cut.has_value());
  EXPECT_GT(OccupancyRecord(d, 128, 0, static_cast<int>(cut->value)).tb_per_mp, heavy.tb_per_mp);
  EXPECT_EQ(OccupancyRecord(d, 128, 0, static_cast<int>(cut->value) + 1).tb_per_mp,
            heavy.tb_per_mp);
}

TEST(OccupancyImprovement, LessSharedMemoryForMoreBlocks) {
  const DeviceData d(Arch::parse("sm_86", "test"));
  const OccupancyRecord r(d, 128, 20000, 32);
  const auto better = less_shared_memory_for_more_blocks(d, r);
  ASSERT_TRUE(better.has_value());
  // 19456 + 1024 = 20480 = 102400 / 5; one byte more rounds up to 20608.
  EXPECT_EQ(better->value, 19456u);
  EXPECT_EQ(better->reduction, 544u);
  EXPECT_EQ(better->tb_per_mp, 5);
  EXPECT_FALSE(less_shared_memory_for_more_blocks(d, OccupancyRecord(d, 128, 0, 32)).has_value());
  // Limited by warps, not shared memory: cutting shared memory does not help.
  EXPECT_FALSE(
      less_shared_memory_for_more_blocks(d, OccupancyRecord(d, 1024, 2048, 32)).has_value());
}

TEST(OccupancySweep, RegisterCliffsOnHopper) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  const OccupancySweep sweep = sweep_registers(d, 256);
  ASSERT_EQ(sweep.records.size(), 256u);
  const auto steps = sweep_steps(sweep);
  // floor(16384 / roundup(32 r, 256)) x 4 warps per SM, / 8 warps per block.
  const std::vector<std::tuple<std::size_t, std::size_t, int>> expected = {
      {0, 32, 8}, {33, 40, 6}, {41, 48, 5}, {49, 64, 4}, {65, 80, 3}, {81, 128, 2}, {129, 255, 1}};
  ASSERT_EQ(steps.size(), expected.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].first, std::get<0>(expected[i])) << i;
    EXPECT_EQ(steps[i].last, std::get<1>(expected[i])) << i;
    EXPECT_EQ(steps[i].tb_per_mp, std::get<2>(expected[i])) << i;
  }
}

TEST(OccupancySweep, SharedMemoryStepsCoverEveryByteCount) {
  const DeviceData d(Arch::parse("sm_86", "test"));
  const OccupancySweep sweep = sweep_shared_memory(d, 128, 32);
  EXPECT_EQ(sweep.records.front().shared_mem, 0u);
  EXPECT_EQ(sweep.records.back().shared_mem, d.properties().shared_memory_per_block_optin);
  const auto steps = sweep_steps(sweep);
  ASSERT_FALSE(steps.empty());
  EXPECT_EQ(steps.front().first, 0u);
  EXPECT_EQ(steps.back().last, d.properties().shared_memory_per_block_optin);
  for (std::size_t i = 1; i < steps.size(); ++i) {
    EXPECT_EQ(steps[i].first, steps[i - 1].last + 1);
    EXPECT_LT(steps[i].tb_per_mp, steps[i - 1].tb_per_mp);
    // Every byte count in a run has the run's blocks per SM: check both ends.
    EXPECT_EQ(OccupancyRecord(d, 128, steps[i].first, 32).tb_per_mp, steps[i].tb_per_mp);
    EXPECT_EQ(OccupancyRecord(d, 128, steps[i].last, 32).tb_per_mp, steps[i].tb_per_mp);
  }
  EXPECT_EQ(steps.front().tb_per_mp, 12);  // warps: 48 / 4
  EXPECT_EQ(steps.back().tb_per_mp, 1);
}

TEST(BlockSizeSuggestion, LargestBlockAtTheHighestOccupancy) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  // 40 regs: 48 warps per SM at best; 768 threads (2 x 24 warps) is the largest that
  // reaches it, 64 (24 x 2 warps) the smallest.
  const BlockSizeSuggestion s = suggest_block_size(d, 0, 40);
  EXPECT_EQ(s.block_size, 768);
  EXPECT_EQ(s.tb_per_mp, 2);
  EXPECT_DOUBLE_EQ(s.occupancy, 0.75);
  EXPECT_EQ(s.smallest_block_size, 64);
  EXPECT_EQ(s.min_grid_size, 2 * 132);
  // No SM count: no grid size.
  EXPECT_FALSE(suggest_block_size(DeviceData(Arch::parse("sm_86", "test")), 0, 40)
                   .min_grid_size.has_value());
}

// The rule applied to a sweep agrees with cuda_occupancy.h's own search.
TEST(BlockSizeSuggestion, SweepRuleAgreesWithTheCalculator) {
  for (const auto& row : known_architectures()) {
    const DeviceData d(row);
    if (occupancy_unknown(d)) continue;  // UnknownInputsGiveNoNumber covers those
    for (int regs : {0, 24, 40, 64, 96, 128, 200, 255}) {
      for (std::size_t smem : {std::size_t{0}, std::size_t{6000}, std::size_t{30000}}) {
        SCOPED_TRACE(row.name + " regs=" + std::to_string(regs) + " smem=" + std::to_string(smem));
        const auto sizes = default_block_sizes(d);
        const OccupancySweep sweep = sweep_block_sizes(d, sizes, smem, regs);
        const BlockSizeSuggestion from_header = suggest_block_size(d, smem, regs);
        const BlockSizeSuggestion from_sweep = suggest_block_size(d, sweep);
        EXPECT_EQ(from_sweep.block_size, from_header.block_size);
        EXPECT_EQ(from_sweep.tb_per_mp, from_header.tb_per_mp);
        EXPECT_EQ(from_sweep.smallest_block_size, from_header.smallest_block_size);
        EXPECT_EQ(from_sweep.min_grid_size, from_header.min_grid_size);
      }
    }
  }
}

TEST(BlockSizeSuggestion, GivenListChoosesAmongItsSizes) {
  const DeviceData d(Arch::parse("sm_90", "test"));
  const std::vector<int> sizes = {96, 160, 1024};
  const auto s = suggest_block_size(d, sweep_block_sizes(d, sizes, 0, 40));
  // 96: 16 blocks x 3 warps = 48; 160: 9 x 5 = 45; 1024: 1 x 32.
  EXPECT_EQ(s.block_size, 96);
  EXPECT_EQ(s.tb_per_mp, 16);
  EXPECT_THROW(suggest_block_size(d, OccupancySweep{"threads", {}}), LogicError);
}

TEST(OccupancyRecord, CustomPropertiesFlowThrough) {
  DeviceProperties p = DeviceData(Arch::parse("sm_90", "test")).properties();
  p.registers_per_multiprocessor = 32768;  // half the register file
  const DeviceData half(p);
  // 32 regs: 8192 per sub-partition / 1024 = 8 warps, 32 per SM, 4 blocks of 8 warps.
  const OccupancyRecord r(half, 256, 0, 32);
  EXPECT_EQ(r.tb_per_mp, 4);
  EXPECT_EQ(r.limited_by, "regs");
}

// Where the table lacks a value occupancy needs, every entry point refuses to guess and
// names what is missing; nothing divides by an unknown value or loops on a zero step.
TEST(OccupancyUnknownValues, UnknownInputsGiveNoNumber) {
  const DeviceData d(Arch::parse("sm_88", "test"));
  const auto unknown = occupancy_unknown(d);
  ASSERT_TRUE(unknown.has_value());
  EXPECT_EQ(unknown->architecture, "sm_88");
  EXPECT_EQ(unknown->fields, d.unknown_occupancy_inputs());
  EXPECT_EQ(unknown->reason, d.properties().unknown_reason);
  const std::string message = unknown->message();
  EXPECT_NE(message.find("occupancy on sm_88 is unknown"), std::string::npos) << message;
  EXPECT_NE(message.find("max_threads_per_multiprocessor"), std::string::npos) << message;
  EXPECT_NE(message.find(unknown->reason), std::string::npos) << message;

  try {
    OccupancyRecord record(d, 256, 0, 32);
    ADD_FAILURE() << "gave " << record.tb_per_mp << " blocks";
  } catch (const UnknownValueError& e) {
    EXPECT_EQ(e.unknown().fields, unknown->fields);
    EXPECT_EQ(std::string(e.what()), message);
  }
  // A requirement unmet (exit status 4) for callers that do not check first.
  EXPECT_THROW(OccupancyRecord(d, 256), RequirementError);
  EXPECT_THROW(default_block_sizes(d), UnknownValueError);
  const int sizes[] = {64, 128};
  EXPECT_THROW(sweep_block_sizes(d, sizes), UnknownValueError);
  EXPECT_THROW(sweep_registers(d, 128), UnknownValueError);
  EXPECT_THROW(sweep_shared_memory(d, 128), UnknownValueError);
  EXPECT_THROW(suggest_block_size(d), UnknownValueError);
  EXPECT_THROW(suggest_block_size(d, OccupancySweep{"threads", {}}), UnknownValueError);

  const nlohmann::json j = cudatool::test::json_tree(*unknown);
  EXPECT_EQ(j.at("architecture"), "sm_88");
  EXPECT_EQ(j.at("unknown_fields").size(), unknown->fields.size());
  EXPECT_EQ(j.at("reason"), unknown->reason);

  // Every fully known row answers, the renamed one through its former name too.
  for (const auto& row : known_architectures())
    if (row.unknown_fields.empty()) {
      EXPECT_FALSE(occupancy_unknown(DeviceData(row))) << row.name;
    }
  EXPECT_EQ(OccupancyRecord(DeviceData(Arch::parse("sm_101a", "test")), 256, 0, 32).tb_per_mp,
            OccupancyRecord(DeviceData(Arch::parse("sm_110", "test")), 256, 0, 32).tb_per_mp);
}

TEST(OccupancyJson, RecordHasThePyCudaFieldsAndEveryLimit) {
  const nlohmann::json j = cudatool::test::json_tree(
      OccupancyRecord(DeviceData(Arch::parse("sm_90", "test")), 256, 10240, 37));
  for (const char* key : {"tb_per_mp", "limited_by", "warps_per_mp", "occupancy", "block_limits",
                          "limiting_factors", "threads", "registers", "shared_mem",
                          "allocated_registers_per_block", "allocated_shared_mem_per_block"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_EQ(j.at("tb_per_mp"), 6);
  EXPECT_EQ(j.at("limited_by"), "regs");
  EXPECT_EQ(j.at("block_limits").at("device"), 32);
  EXPECT_EQ(j.at("block_limits").at("warps"), 8);
  EXPECT_EQ(j.at("block_limits").at("regs"), 6);
  EXPECT_EQ(j.at("block_limits").at("smem"), 20);
  EXPECT_EQ(j.at("block_limits").at("barriers"), 64);
  const nlohmann::json none =
      cudatool::test::json_tree(OccupancyRecord(DeviceData(Arch::parse("sm_75", "test")), 256));
  EXPECT_TRUE(none.at("block_limits").at("regs").is_null());
  EXPECT_TRUE(none.at("block_limits").at("smem").is_null());
  EXPECT_TRUE(none.at("block_limits").at("barriers").is_null());
}

}  // namespace
}  // namespace cudatool
