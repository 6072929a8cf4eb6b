// compare_kernels (kernel_comparison.hpp) on scans made by hand: matching by name,
// architecture and copy, identical images counted once, the rules and their thresholds, the
// order by impact, the architectures and the totals.
#include "cudatool/occupancy/kernel_comparison.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cudatool {
namespace {

struct Builder {
  ScanResult scan;
  std::size_t image(const std::string& arch, std::uint64_t bytes = 1000,
                    std::optional<std::size_t> same = std::nullopt) {
    if (scan.files.empty()) scan.files.push_back({"lib.so", 1 << 20, true, "", 0, {}});
    ScannedImage i;
    i.kind = ImageKind::elf;
    i.arch = Arch::parse(arch, "test");
    i.file_bytes = bytes;
    i.same_bytes_as = same;
    scan.images.push_back(i);
    return scan.images.size() - 1;
  }
  KernelResources& kernel(std::size_t image, const std::string& name, int regs = 32) {
    ScannedKernel k;
    k.image = image;
    k.resources.name = k.resources.demangled = name;
    k.resources.num_regs = regs;
    k.resources.max_threads_per_block = 1024;
    k.resources.spill_store_bytes = k.resources.spill_load_bytes = 0;
    k.resources.code_size_bytes = 256;
    scan.kernels.push_back(k);
    return scan.kernels.back().resources;
  }
};

RegressionRule rule(RegressionRule::Kind kind, KernelMetric metric, double threshold = 0,
                    bool relative = false, const std::string& name = "rule") {
  return {kind, metric, threshold, relative, name};
}

KernelComparison compare(const Builder& a, const Builder& b,
                         std::vector<RegressionRule> rules = {}) {
  ArchitectureTable table;
  ComparisonOptions options;
  options.rules = std::move(rules);
  return compare_kernels(a.scan, b.scan, options, table);
}

TEST(KernelComparison, MatchesByNameAndArchitecture) {
  Builder old_build, new_build;
  const auto o90 = old_build.image("sm_90"), o80 = old_build.image("sm_80");
  old_build.kernel(o90, "a");
  old_build.kernel(o90, "gone");
  old_build.kernel(o80, "a");
  const auto n90 = new_build.image("sm_90"), n100 = new_build.image("sm_100");
  new_build.kernel(n90, "a", 40);
  new_build.kernel(n100, "a");
  const KernelComparison c = compare(old_build, new_build);
  EXPECT_EQ(c.changed, 1u);
  EXPECT_EQ(c.worsened, 1u);
  EXPECT_EQ(c.removed, 2u);  // gone on sm_90, a on sm_80
  EXPECT_EQ(c.added, 1u);    // a on sm_100
  EXPECT_EQ(c.unchanged, 0u);
  ASSERT_FALSE(c.changes.empty());
  EXPECT_EQ(c.changes[0].kind, KernelChange::Kind::changed);
  EXPECT_EQ((*c.changes[0].old_measures)[KernelMetric::registers], 32);
  EXPECT_EQ((*c.changes[0].new_measures)[KernelMetric::registers], 40);
  EXPECT_TRUE(c.broken_rules.empty());
  ASSERT_EQ(c.architectures.size(), 3u);
}

TEST(KernelComparison, IdenticalImagesCountOnceAndCopiesPairInOrder) {
  Builder old_build, new_build;
  const auto first = old_build.image("sm_90");
  old_build.kernel(first, "k");
  old_build.kernel(old_build.image("sm_90", 1000, first), "k");  // identical: not counted
  old_build.kernel(old_build.image("sm_90"), "k", 64);           // a second translation unit
  const auto n1 = new_build.image("sm_90"), n2 = new_build.image("sm_90");
  new_build.kernel(n1, "k");
  new_build.kernel(n2, "k", 64);
  const KernelComparison c = compare(old_build, new_build);
  EXPECT_EQ(c.old_kernels, 2u);
  EXPECT_EQ(c.unchanged, 2u);
  EXPECT_TRUE(c.changes.empty());
}

TEST(KernelComparison, RulesAndThresholds) {
  Builder old_build, new_build;
  old_build.kernel(old_build.image("sm_90"), "k", 32).spill_store_bytes = 0;
  KernelResources& k = new_build.kernel(new_build.image("sm_90", 1100), "k", 40);
  k.spill_store_bytes = 8;
  using K = RegressionRule::Kind;
  using M = KernelMetric;
  const auto broken = [&](RegressionRule r) {
    return !compare(old_build, new_build, {r}).broken_rules.empty();
  };
  EXPECT_TRUE(broken(rule(K::metric, M::registers)));
  EXPECT_TRUE(broken(rule(K::metric, M::registers, 7)));
  EXPECT_FALSE(broken(rule(K::metric, M::registers, 8)));
  EXPECT_TRUE(broken(rule(K::metric, M::registers, 20, true)));  // +25%
  EXPECT_FALSE(broken(rule(K::metric, M::registers, 25, true)));
  EXPECT_TRUE(broken(rule(K::spills, M::spill_stores)));
  EXPECT_FALSE(broken(rule(K::metric, M::shared)));
  EXPECT_FALSE(broken(rule(K::kernels_removed, M::registers)));
  EXPECT_TRUE(broken(rule(K::total_size, M::code_size, 5, true)));  // +10%
  EXPECT_FALSE(broken(rule(K::total_size, M::code_size, 10, true)));
  EXPECT_FALSE(broken(rule(K::total_size, M::code_size, 100)));
  // Improvements break nothing.
  EXPECT_TRUE(compare(new_build, old_build,
                      {rule(K::metric, M::registers), rule(K::spills, M::spill_stores),
                       rule(K::total_size, M::code_size)})
                  .broken_rules.empty());
}

TEST(KernelComparison, OccupancyAtTheBlockSizeAndUnknownSpills) {
  Builder old_build, new_build;
  KernelResources& before = old_build.kernel(old_build.image("sm_90"), "k", 32);
  before.spill_store_bytes.reset();  // an old toolkit's: unknown
  new_build.kernel(new_build.image("sm_90"), "k", 128);
  const KernelComparison c =
      compare(old_build, new_build,
              {rule(RegressionRule::Kind::metric, KernelMetric::occupancy, 0, false, "occupancy"),
               rule(RegressionRule::Kind::spills, KernelMetric::spill_stores, 0, false, "spills")});
  ASSERT_EQ(c.changes.size(), 1u);
  const auto& x = (*c.changes[0].old_measures)[KernelMetric::occupancy];
  const auto& y = (*c.changes[0].new_measures)[KernelMetric::occupancy];
  ASSERT_TRUE(x && y);
  EXPECT_GT(*x, *y);                                                 // 128 registers: fewer warps
  EXPECT_EQ(c.broken_rules, std::vector<std::string>{"occupancy"});  // unknown spills break nothing
}

TEST(KernelComparison, MostImpactFirst) {
  Builder old_build, new_build;
  const auto o = old_build.image("sm_90"), n = new_build.image("sm_90");
  for (const char* name : {"small", "big", "removed"}) old_build.kernel(o, name);
  new_build.kernel(n, "small", 34);
  new_build.kernel(n, "big", 96);
  new_build.kernel(n, "added");
  const KernelComparison c = compare(old_build, new_build);
  ASSERT_EQ(c.changes.size(), 4u);
  EXPECT_EQ(c.changes[0].name, "big");
  EXPECT_EQ(c.changes[1].name, "small");
  EXPECT_EQ(c.changes[2].kind, KernelChange::Kind::removed);
  EXPECT_EQ(c.changes[3].kind, KernelChange::Kind::added);
  const KernelComparison ruled = compare(
      old_build, new_build, {rule(RegressionRule::Kind::kernels_removed, KernelMetric::registers)});
  EXPECT_EQ(ruled.changes[0].kind, KernelChange::Kind::removed);  // regressions come first
}

}  // namespace
}  // namespace cudatool
