// The occupancy of one compiled kernel at a block size (lib/src/occupancy/kernel_occupancy.cpp):
// the one answer compile --threads, kernels --threads and occupancy --kernel-from give. Each
// numbered rule of kernel_occupancy.hpp, and that the first that applies decides.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <string>

#include "cudatool/base/arch.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"

namespace cudatool {
namespace {

DeviceData table(const char* arch) {
  return DeviceData(Arch::parse(arch, "test"));
}

// A kernel as the CUBIN reader gives it: 32 registers, 1 KiB static shared memory, up to 1024
// threads (what its registers allow), no barrier recorded.
KernelResources plain_kernel() {
  KernelResources k;
  k.name = k.demangled = "k";
  k.num_regs = 32;
  k.shared_size_bytes = 1024;
  k.max_threads_per_block = 1024;
  return k;
}

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// 1. Relocatable code has no occupancy, whatever else is wrong with the block size.
TEST(KernelOccupancy, Rule1RelocatableCodeComesFirst) {
  KernelResources k = plain_kernel();
  k.max_threads_per_block = 96;
  KernelBounds b;
  b.reqntid = std::array<int, 3>{64, 1, 1};
  b.max_threads = 96;
  const auto problem = block_size_problem(k, b, true, 128);
  ASSERT_TRUE(problem);
  EXPECT_TRUE(has(*problem, "relocatable code")) << *problem;
  const KernelOccupancy o = occupancy_for_kernel(table("sm_90"), k, b, true, 128);
  EXPECT_FALSE(o.record);
  EXPECT_EQ(o.reason, *problem);
  EXPECT_EQ(o.threads, 128);
  // Before the table too: an architecture with gaps (rule 4) still says relocatable.
  EXPECT_TRUE(has(occupancy_for_kernel(table("sm_88"), k, b, true, 128).reason, "relocatable"));
}

// 2. A required block size admits exactly that many threads (x*y*z), before rule 3.
TEST(KernelOccupancy, Rule2ARequiredBlockSizeIsTheOnlyOne) {
  KernelResources k = plain_kernel();
  KernelBounds b;
  b.reqntid = std::array<int, 3>{32, 2, 1};
  for (const int threads : {32, 63, 65, 128}) {
    SCOPED_TRACE(threads);
    const auto problem = block_size_problem(k, b, false, threads);
    ASSERT_TRUE(problem);
    EXPECT_EQ(*problem, "the kernel requires blocks of exactly 64 threads (32x2x1)");
  }
  EXPECT_FALSE(block_size_problem(k, b, false, 64));
  EXPECT_TRUE(occupancy_for_kernel(table("sm_90"), k, b, false, 64).record);
  // Rule 2 before rule 3: above the kernel's maximum too, the required size is the reason.
  k.max_threads_per_block = 96;
  EXPECT_TRUE(has(*block_size_problem(k, b, false, 128), "exactly 64"));
}

// 3. More threads than the kernel allows: its launch bounds, or (without) its registers.
TEST(KernelOccupancy, Rule3TheKernelsMaximumSaysWhy) {
  KernelResources k = plain_kernel();
  k.max_threads_per_block = 256;
  KernelBounds b;
  EXPECT_EQ(*block_size_problem(k, b, false, 257),
            "the kernel allows at most 256 threads per block (its registers)");
  b.max_threads = 256;
  EXPECT_EQ(*block_size_problem(k, b, false, 257),
            "the kernel allows at most 256 threads per block (its launch bounds)");
  EXPECT_FALSE(block_size_problem(k, b, false, 256));
  const KernelOccupancy o = occupancy_for_kernel(table("sm_90"), k, b, false, 512);
  EXPECT_FALSE(o.record);
  EXPECT_TRUE(has(o.reason, "at most 256")) << o.reason;
  // Before the table: a block size the kernel refuses is refused on sm_88 alike.
  EXPECT_TRUE(has(occupancy_for_kernel(table("sm_88"), k, b, false, 512).reason, "at most 256"));
}

// 4. An architecture with gaps in the table: no number, the reason names what is unknown;
// one the table has no row for (through ArchitectureTable) says so.
TEST(KernelOccupancy, Rule4UnknownValuesGiveAReasonNotANumber) {
  const KernelResources k = plain_kernel();
  const KernelOccupancy o = occupancy_for_kernel(table("sm_88"), k, {}, false, 128);
  EXPECT_FALSE(o.record);
  EXPECT_EQ(o.reason, occupancy_unknown(table("sm_88"))->message());
  ArchitectureTable rows;
  const KernelOccupancy none =
      occupancy_for_kernel(rows, Arch::parse("sm_99", "test"), k, {}, false, 128);
  EXPECT_FALSE(none.record);
  EXPECT_EQ(none.reason.rfind("the architecture table has no sm_99 (", 0), 0u) << none.reason;
  EXPECT_TRUE(has(none.reason, "not in cudatool's table")) << none.reason;
  // Rules 1-3 still come first.
  EXPECT_TRUE(has(occupancy_for_kernel(rows, Arch::parse("sm_99", "test"), k, {}, true, 128).reason,
                  "relocatable"));
}

// 5. Otherwise the OccupancyRecord of the kernel's registers, static shared memory and
// barriers (at least the one every kernel has); a launch the record refuses gives its reason.
TEST(KernelOccupancy, Rule5TheRecordOfTheKernelsResources) {
  KernelResources k = plain_kernel();
  const DeviceData sm90 = table("sm_90");
  KernelOccupancy o = occupancy_for_kernel(sm90, k, {}, false, 256);
  ASSERT_TRUE(o.record) << o.reason;
  EXPECT_TRUE(o.reason.empty());
  const OccupancyRecord expected(sm90, 256, 1024, 32, 1);
  EXPECT_EQ(o.record->tb_per_mp, expected.tb_per_mp);
  EXPECT_EQ(o.record->block_barriers, 1) << "no barrier recorded is the one every kernel has";
  EXPECT_EQ(o.record->registers, 32);
  k.num_barriers = 3;
  EXPECT_EQ(occupancy_for_kernel(sm90, k, {}, false, 256).record->block_barriers, 3);
  // __launch_bounds__ min-blocks only bounded the registers: the record reads the registers.
  KernelBounds b;
  b.max_threads = 256;
  EXPECT_EQ(occupancy_for_kernel(sm90, k, b, false, 256).record->tb_per_mp,
            OccupancyRecord(sm90, 256, 1024, 32, 3).tb_per_mp);
  // Static shared memory above the opt-in limit: no record, the record's reason.
  k.shared_size_bytes = 300 * 1024;
  o = occupancy_for_kernel(sm90, k, {}, false, 256);
  EXPECT_FALSE(o.record);
  EXPECT_TRUE(has(o.reason, "opt-in maximum")) << o.reason;
  // The same answer through the table as from the DeviceData.
  ArchitectureTable rows;
  k = plain_kernel();
  EXPECT_EQ(occupancy_for_kernel(rows, Arch::parse("sm_90a", "test"), k, {}, false, 256)
                .record->tb_per_mp,
            expected.tb_per_mp);
}

// 6. Compile-time cluster dimensions add the clusters the GPU holds, or why it is unknown;
// no record, no clusters.
TEST(KernelOccupancy, Rule6ClusterDimensionsAddClustersOrTheirReason) {
  KernelResources k = plain_kernel();
  KernelBounds b;
  b.cluster = std::array<int, 3>{2, 1, 1};
  KernelOccupancy o = occupancy_for_kernel(table("sm_90"), k, b, false, 256);
  ASSERT_TRUE(o.record);
  ASSERT_TRUE(o.clusters) << o.cluster_reason;
  EXPECT_EQ(o.clusters->cluster.size(), 2);
  EXPECT_EQ(o.clusters->blocks_per_sm, o.record->tb_per_mp);
  EXPECT_GT(o.clusters->max_active_clusters, 0);
  // Dimensions of 0 (not given) count as 1.
  b.cluster = std::array<int, 3>{2, 0, 0};
  EXPECT_EQ(occupancy_for_kernel(table("sm_90"), k, b, false, 256).clusters->cluster.size(), 2);
  // A product whose GPCs nobody measured: the reason, no estimate.
  o = occupancy_for_kernel(table("sm_100"), k, b, false, 256);
  ASSERT_TRUE(o.record);
  EXPECT_FALSE(o.clusters);
  EXPECT_FALSE(o.cluster_reason.empty());
  // No record (rule 3 refused the block): neither clusters nor a cluster reason.
  k.max_threads_per_block = 128;
  o = occupancy_for_kernel(table("sm_90"), k, b, false, 256);
  EXPECT_FALSE(o.record);
  EXPECT_FALSE(o.clusters);
  EXPECT_TRUE(o.cluster_reason.empty());
  // Without dimensions nothing is added.
  o = occupancy_for_kernel(table("sm_90"), plain_kernel(), {}, false, 256);
  EXPECT_FALSE(o.clusters);
  EXPECT_TRUE(o.cluster_reason.empty());
}

// The table makes each architecture's DeviceData once: the same pointer for the same Arch,
// and the same reason for one it lacks.
TEST(ArchitectureTable, MakesEachRowOnce) {
  ArchitectureTable rows;
  std::string reason;
  const DeviceData* first = rows.find(Arch::parse("sm_90a", "test"), reason);
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(reason.empty());
  EXPECT_EQ(rows.find(Arch::parse("sm_90a", "test"), reason), first);
  EXPECT_EQ(first->properties(), table("sm_90").properties());
  EXPECT_EQ(rows.find(Arch::parse("sm_13", "test"), reason), nullptr);
  EXPECT_TRUE(has(reason, "sm_13")) << reason;
  std::string again;
  EXPECT_EQ(rows.find(Arch::parse("sm_13", "test"), again), nullptr);
  EXPECT_EQ(again, reason);
}

}  // namespace
}  // namespace cudatool
