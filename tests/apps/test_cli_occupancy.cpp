// End-to-end tests of `cudatool occupancy` through the real binary: --arch with no driver
// at all, the text and JSON renderings, sweeps, every bad input's exit code and message,
// the device path through the fake driver, and (GpuTest) a real device against its row.
#include <gtest/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cudatool/occupancy/device_data.hpp"
#include "gpu_test.hpp"
#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;

namespace {

ProcessResult occupancy(std::vector<std::string> args,
                        const ProcessOptions& options = without_driver()) {
  args.insert(args.begin(), "occupancy");
  return run_cudatool(args, options);
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(CliOccupancy, ArchNeedsNoDriverAndExplainsTheLimits) {
  const auto r =
      occupancy({"--arch", "sm_90", "--threads", "256", "--regs", "37", "--smem", "10K"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_TRUE(contains(r.out, "sm_90 (compute capability 9.0, Hopper")) << r.out;
  EXPECT_TRUE(contains(r.out, "Active blocks per SM:  6")) << r.out;
  EXPECT_TRUE(contains(r.out, "Active warps per SM:   48 of 64")) << r.out;
  EXPECT_TRUE(contains(r.out, "Occupancy:             75.0%")) << r.out;
  EXPECT_TRUE(contains(r.out, "Limited by:            regs")) << r.out;
  for (const char* row : {"device       32", "warps         8", "regs          6",
                          "smem         20", "barriers     64"})
    EXPECT_TRUE(contains(r.out, row)) << row << "\n" << r.out;
  EXPECT_TRUE(contains(r.out, "5 fewer registers per thread (32) would give 2 more blocks per SM"))
      << r.out;
}

TEST(CliOccupancy, JsonHasTheRecordTheLimitsAndTheDevice) {
  const auto r =
      occupancy({"--arch", "9.0", "--threads", "256", "--regs", "37", "--smem", "10240", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("tb_per_mp"), 6);
  EXPECT_EQ(j.at("limited_by"), "regs");
  EXPECT_EQ(j.at("warps_per_mp"), 48);
  EXPECT_DOUBLE_EQ(j.at("occupancy").get<double>(), 0.75);
  const json& limits = j.at("block_limits");
  EXPECT_EQ(limits.at("device"), 32);
  EXPECT_EQ(limits.at("warps"), 8);
  EXPECT_EQ(limits.at("regs"), 6);
  EXPECT_EQ(limits.at("smem"), 20);
  EXPECT_EQ(limits.at("barriers"), 64);
  EXPECT_EQ(j.at("device").at("name"), "sm_90");
  EXPECT_EQ(j.at("device").at("origin"), "architecture_table");
  ASSERT_EQ(j.at("improvements").size(), 1u);
  EXPECT_EQ(j.at("improvements")[0].at("resource"), "regs");
  EXPECT_EQ(j.at("improvements")[0].at("value"), 32);
}

// sm_88 is a CUDA 13 target whose limits no document gives: the answer is "unknown",
// naming the values and the reason, never a number (exit 0: it is an answer, not an error).
TEST(CliOccupancy, ArchWithUnknownValuesSaysWhichAndGivesNoNumber) {
  const auto text = occupancy({"--arch", "sm_88", "--threads", "256", "--regs", "32"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_EQ(text.err, "");
  EXPECT_TRUE(contains(text.out, "sm_88 (compute capability 8.8; from cudatool's architecture"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "Occupancy: unknown")) << text.out;
  EXPECT_TRUE(contains(text.out, "  max_threads_per_multiprocessor\n")) << text.out;
  EXPECT_TRUE(contains(text.out, "Why: ")) << text.out;
  EXPECT_FALSE(contains(text.out, "Active blocks per SM")) << text.out;

  for (const std::vector<std::string>& mode :
       {std::vector<std::string>{"--threads", "256"}, std::vector<std::string>{"--sweep"},
        std::vector<std::string>{"--threads", "128", "--sweep-regs"},
        std::vector<std::string>{"--threads", "128", "--sweep-smem"}}) {
    std::vector<std::string> args = {"--arch", "sm_88a", "--json"};
    args.insert(args.end(), mode.begin(), mode.end());
    SCOPED_TRACE(mode.back());
    const auto r = occupancy(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_TRUE(j.at("tb_per_mp").is_null());
    EXPECT_TRUE(j.at("occupancy").is_null());
    EXPECT_EQ(j.at("unknown").at("architecture"), "sm_88");
    const auto& fields = j.at("unknown").at("unknown_fields");
    EXPECT_NE(std::find(fields.begin(), fields.end(), "warp_size"), fields.end()) << fields;
    EXPECT_FALSE(j.at("unknown").at("reason").get<std::string>().empty());
    EXPECT_TRUE(j.at("device").at("warp_size").is_null());
    EXPECT_EQ(j.at("device").at("max_blocks_per_multiprocessor"), 16);
    if (mode.front() != "--threads" || mode.size() > 2) {
      EXPECT_TRUE(j.at("records").empty());
    }
  }
}

// CUDA 12.8/12.9 named Thor sm_101; CUDA 13 renumbered it sm_110. Suffixed names images
// carry map to the base row.
TEST(CliOccupancy, FormerAndSuffixedNames) {
  const auto base = occupancy({"--arch", "sm_110", "--threads", "256", "--regs", "40", "--json"});
  ASSERT_EQ(base.exit_code, 0) << base.err;
  for (const char* name : {"sm_101", "sm_101a", "sm_110f", "compute_110a"}) {
    const auto r = occupancy({"--arch", name, "--threads", "256", "--regs", "40", "--json"});
    ASSERT_EQ(r.exit_code, 0) << name << ": " << r.err;
    EXPECT_EQ(json::parse(r.out), json::parse(base.out)) << name;
  }
  const auto r = occupancy({"--arch", "sm_121a", "--threads", "256", "--regs", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "sm_121 (compute capability 12.1, Blackwell")) << r.out;
  EXPECT_TRUE(contains(r.out, "Active warps per SM:   48 of 48")) << r.out;
}

TEST(CliOccupancy, SizeSuffixes) {
  for (const char* smem : {"48K", "48KiB", "49152", "48k"}) {
    const auto r = occupancy({"--arch", "sm_80", "--threads", "128", "--smem", smem, "--json"});
    ASSERT_EQ(r.exit_code, 0) << smem << ": " << r.err;
    EXPECT_EQ(json::parse(r.out).at("shared_mem"), 49152) << smem;
  }
  // Above 48 KiB the kernel is taken as opted in.
  const auto r = occupancy({"--arch", "sm_80", "--threads", "128", "--smem", "100000", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out).at("opted_in"), true);
}

TEST(CliOccupancy, BadInputIsOneLineOnStderrAndExitTwo) {
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Bad> cases = {
      {{"--arch", "sm_90", "--threads", "0"}, "--threads \"0\": expected a whole number 1..1024"},
      {{"--arch", "sm_90", "--threads", "-1"}, "--threads \"-1\""},
      {{"--arch", "sm_90", "--threads", "1025"},
       "--threads \"1025\": expected a whole number 1..1024"},
      {{"--arch", "sm_90", "--threads", "abc"}, "--threads \"abc\""},
      {{"--arch", "sm_90", "--threads", "1.5"}, "--threads \"1.5\""},
      {{"--arch", "sm_90", "--threads", "256", "--regs", "256"}, "256 is above the maximum of 255"},
      {{"--arch", "sm_90", "--threads", "256", "--regs", "-3"}, "--regs \"-3\""},
      {{"--arch", "sm_90", "--threads", "256", "--smem", "228K"}, "opt-in maximum of 232448"},
      {{"--arch", "sm_75", "--threads", "256", "--smem", "65537"}, "opt-in maximum of 65536"},
      {{"--arch", "sm_90", "--threads", "256", "--smem", "-1"}, "--smem \"-1\""},
      {{"--arch", "sm_90", "--threads", "256", "--smem", "12 parsecs"}, "--smem"},
      {{"--arch", "sm_13", "--threads", "256"},
       "--arch \"sm_13\": compute capability 1.3 is not in"},
      {{"--arch", "banana", "--threads", "256"}, "--arch \"banana\": expected an architecture"},
      {{"--arch", "sm_90", "--device", "0", "--threads", "256"}, "--arch and --device exclude"},
      {{"--arch", "sm_90", "--sweep", "64,,128"},
       "--sweep \"64,,128\": an empty entry in the list (expected e.g. 64,128,256)"},
      {{"--arch", "sm_90", "--sweep", "64,abc"}, "entry \"abc\""},
      {{"--arch", "sm_90", "--sweep", "64,0"}, "entry \"0\""},
      {{"--arch", "sm_90", "--sweep", "64,"},
       "--sweep \"64,\": an empty entry in the list (expected e.g. 64,128,256)"},
      {{"--arch", "sm_90", "--sweep", "64,2048"},
       "entry \"2048\" is not a block size (a whole number 1..1024)"},
      {{"--arch", "sm_90", "--sweep", "--threads", "64"}, "leave out --threads"},
      {{"--arch", "sm_90"}, "--threads is required"},
      {{"--arch", "sm_90", "--sweep-regs"}, "--sweep-regs needs --threads"},
      {{"--arch", "sm_90", "--sweep-smem", "--smem", "1K"}, "--sweep-smem needs --threads"},
      {{"--arch", "sm_90", "--threads", "64", "--sweep-regs", "--sweep-smem"}, "one at a time"},
      {{"--arch", "sm_90", "--threads", "64", "--barriers", "17"}, "barriers 17"},
      {{"--arch", "sm_90", "--threads", "64", "--sms", "0"}, "--sms \"0\""},
  };
  for (const auto& bad : cases) {
    std::string joined;
    for (const auto& a : bad.args) joined += a + " ";
    SCOPED_TRACE(joined);
    const auto r = occupancy(bad.args);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_TRUE(r.err.starts_with("cudatool: ")) << r.err;
    EXPECT_TRUE(contains(r.err, bad.says)) << "expected '" << bad.says << "' in: " << r.err;
    EXPECT_EQ(r.out, "");
  }
}

TEST(CliOccupancy, JsonErrorObjectForBadInput) {
  const auto r = occupancy({"--arch", "sm_90", "--threads", "1025", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("error").at("exit_code"), 2);
  EXPECT_EQ(j.at("error").at("status"), "usage");
  EXPECT_TRUE(contains(j.at("error").at("message").get<std::string>(), "1025"));
}

TEST(CliOccupancy, BlockSizeSweepTableChartAndSuggestion) {
  const auto r = occupancy({"--arch", "sm_90", "--sweep", "--regs", "40"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "threads  blocks/SM  warps/SM  occupancy  limited by")) << r.out;
  // 32 rows, 32 to 1024; the bar of a 75% row is 24 of 32 characters.
  EXPECT_TRUE(contains(r.out, "\n     32         32        32      50.0%  device")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n   1024          1        32      50.0%  regs")) << r.out;
  EXPECT_TRUE(contains(r.out, std::string(24, '#') + std::string(8, '.'))) << r.out;
  EXPECT_TRUE(contains(r.out, "Suggested block size: 768 threads")) << r.out;
  EXPECT_TRUE(contains(r.out, "The smallest block at that occupancy: 64 threads.")) << r.out;
  EXPECT_TRUE(contains(r.out, "One full wave: 264 blocks on 132 SMs (H100 SXM5).")) << r.out;

  const auto j = occupancy({"--arch", "sm_90", "--sweep", "--regs", "40", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json sweep = json::parse(j.out);
  EXPECT_EQ(sweep.at("parameter"), "threads");
  ASSERT_EQ(sweep.at("records").size(), 32u);
  EXPECT_EQ(sweep.at("records")[0].at("threads"), 32);
  EXPECT_EQ(sweep.at("records")[31].at("threads"), 1024);
  EXPECT_EQ(sweep.at("suggestion").at("block_size"), 768);
  EXPECT_EQ(sweep.at("suggestion").at("min_grid_size"), 264);
}

TEST(CliOccupancy, SweepOfAGivenList) {
  const auto r = occupancy({"--arch", "sm_90", "--sweep", "96,160,1024", "--regs", "40", "--json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  std::vector<int> threads;
  for (const auto& record : j.at("records")) threads.push_back(record.at("threads"));
  EXPECT_EQ(threads, (std::vector<int>{96, 160, 1024}));
  EXPECT_EQ(j.at("suggestion").at("block_size"), 96);
  // --sms overrides the SM count the grid size is computed from.
  const auto sms = occupancy({"--arch", "sm_86", "--sweep", "128,256", "--sms", "84", "--json"});
  ASSERT_EQ(sms.exit_code, 0) << sms.err;
  // 128 threads: 12 blocks; 256: 6 blocks; the same 48 warps, so the larger block wins.
  const json suggestion = json::parse(sms.out).at("suggestion");
  EXPECT_EQ(suggestion.at("block_size"), 256);
  EXPECT_EQ(suggestion.at("smallest_block_size"), 128);
  EXPECT_EQ(suggestion.at("min_grid_size"), 6 * 84);
}

TEST(CliOccupancy, RegisterSweepShowsTheCliffs) {
  const auto r = occupancy({"--arch", "sm_90", "--threads", "256", "--regs", "37", "--sweep-regs"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\n0-32               8        64     100.0%  warps")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n33-40              6        48      75.0%  regs")) << r.out;
  EXPECT_TRUE(contains(r.out, "<- --regs 37")) << r.out;
  EXPECT_TRUE(contains(r.out, "\n129-255            1         8      12.5%  regs")) << r.out;
  EXPECT_TRUE(contains(r.out, "5 fewer registers per thread (32) would give 2 more blocks"))
      << r.out;

  const auto j = occupancy({"--arch", "sm_90", "--threads", "256", "--sweep-regs", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json sweep = json::parse(j.out);
  EXPECT_EQ(sweep.at("records").size(), 256u);
  EXPECT_EQ(sweep.at("steps").size(), 7u);
  EXPECT_TRUE(sweep.at("improvement").is_null());  // no --regs given
}

TEST(CliOccupancy, SharedMemorySweep) {
  const auto r = occupancy(
      {"--arch", "sm_86", "--threads", "128", "--regs", "32", "--smem", "20000", "--sweep-smem"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(contains(r.out, "\n0-7424                    12")) << r.out;
  EXPECT_TRUE(contains(r.out, "<- --smem 20000")) << r.out;
  EXPECT_TRUE(contains(r.out,
                       "544 fewer bytes of shared memory per block (19456 B) would give 1 "
                       "more block per SM"))
      << r.out;
  const auto j = occupancy(
      {"--arch", "sm_86", "--threads", "128", "--smem", "20000", "--sweep-smem", "--json"});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const json sweep = json::parse(j.out);
  EXPECT_EQ(sweep.at("parameter"), "shared_mem");
  EXPECT_EQ(sweep.at("steps").back().at("last"), 101376);
  EXPECT_EQ(sweep.at("improvement").at("value"), 19456);
}

TEST(CliOccupancy, WithoutArchTheDriverIsNeeded) {
  const auto r = occupancy({"--threads", "256"});
  EXPECT_EQ(r.exit_code, 3) << r.err;
  EXPECT_EQ(count_lines(r.err), 1) << r.err;
}

// The device path with the fake driver: the attributes come from the driver, and the
// compute capability must be one the table knows.
TEST(CliOccupancy, DevicePathThroughTheFakeDriver) {
  const auto r = occupancy({"--device", "0", "--threads", "32", "--json"},
                           with_fake_driver({{"FAKE_CUDA_DEVICES", "9.0"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("device").at("origin"), "device");
  EXPECT_EQ(j.at("device").at("compute_capability"), "9.0");
  EXPECT_EQ(j.at("device").at("sm_count"), 100);  // the fake's multiprocessor count
  EXPECT_TRUE(j.contains("tb_per_mp"));

  const auto text =
      occupancy({"--threads", "32"}, with_fake_driver({{"FAKE_CUDA_DEVICES", "9.0"}}));
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(text.out.starts_with("device 0: ")) << text.out;

  const auto unknown =
      occupancy({"--threads", "32"}, with_fake_driver({{"FAKE_CUDA_DEVICES", "13.0"}}));
  EXPECT_EQ(unknown.exit_code, 4) << unknown.err;
  EXPECT_TRUE(contains(unknown.err, "compute capability 13.0")) << unknown.err;

  // A device of 8.8: the driver's values are known, the per-thread register limit (which
  // no driver attribute reports) is not, so occupancy is unknown rather than guessed.
  const auto partial =
      occupancy({"--threads", "32", "--json"}, with_fake_driver({{"FAKE_CUDA_DEVICES", "8.8"}}));
  ASSERT_EQ(partial.exit_code, 0) << partial.err;
  const json p = json::parse(partial.out);
  EXPECT_TRUE(p.at("tb_per_mp").is_null());
  EXPECT_EQ(p.at("unknown").at("unknown_fields"), json::array({"max_registers_per_thread"}));
  EXPECT_EQ(p.at("device").at("origin"), "device");

  const auto missing = occupancy({"--device", "7", "--threads", "32"},
                                 with_fake_driver({{"FAKE_CUDA_DEVICES", "9.0"}}));
  EXPECT_EQ(missing.exit_code, 4) << missing.err;
}

TEST(CliOccupancy, HelpListsTheOptions) {
  const auto r = run_cudatool({"occupancy", "--help"});
  EXPECT_EQ(r.exit_code, 0);
  for (const char* option : {"--threads", "--regs", "--smem", "--arch", "--device", "--sweep",
                             "--sweep-regs", "--sweep-smem", "--json"})
    EXPECT_TRUE(contains(r.out, option)) << option;
}

// On a real GPU: the device's answers are its architecture row's, for every field the
// rendering shows (the SM count aside: the row's is a reference part's).
class CliOccupancyGpu : public cudatool::testing::GpuTest {};

TEST_F(CliOccupancyGpu, DeviceAgreesWithItsArchitectureRow) {
  const auto cc = device().compute_capability();
  if (!cudatool::find_architecture(cc))
    GTEST_SKIP() << "compute capability " << cc.str() << " not in the table";
  const std::vector<std::vector<std::string>> runs = {
      {"--threads", "256", "--regs", "37", "--smem", "10K"},
      {"--threads", "96", "--regs", "200", "--smem", "100000", "--barriers", "3"},
      {"--sweep", "--regs", "40", "--smem", "20K"},
      {"--threads", "128", "--smem", "30000", "--sweep-regs"},
      {"--threads", "512", "--regs", "64", "--sweep-smem"},
  };
  for (const auto& args : runs) {
    std::vector<std::string> live_args = {"--device", std::to_string(device().ordinal()), "--json"};
    std::vector<std::string> arch_args = {"--arch", cc.sm(), "--json"};
    live_args.insert(live_args.end(), args.begin(), args.end());
    arch_args.insert(arch_args.end(), args.begin(), args.end());
    const auto live = occupancy(live_args, ProcessOptions{});
    const auto arch = occupancy(arch_args);
    ASSERT_EQ(live.exit_code, 0) << live.err;
    ASSERT_EQ(arch.exit_code, 0) << arch.err;
    json a = json::parse(live.out), b = json::parse(arch.out);
    EXPECT_EQ(a.at("device").at("origin"), "device");
    a.erase("device");
    b.erase("device");
    if (a.contains("suggestion")) {
      a["suggestion"].erase("min_grid_size");
      b["suggestion"].erase("min_grid_size");
    }
    EXPECT_EQ(a, b) << args[0] << " " << args[1];
  }
}

}  // namespace

namespace {

// --cluster: the clusters the whole GPU holds, from the product's measured GPCs (issue 36's
// figures, which the driver gave on an H100 and two H200 boards).
TEST(CliOccupancy, ClustersFromTheProductsMeasuredGpcs) {
  for (const auto& [size, clusters] :
       {std::pair{"1", 1056}, std::pair{"2", 528}, std::pair{"3", 327}, std::pair{"16", 58}}) {
    const auto r = occupancy({"--arch", "sm_90", "--threads", "256", "--regs", "8", "--cluster",
                              size, "--non-portable", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j.at("max_active_clusters"), clusters) << size;
    EXPECT_EQ(j.at("max_potential_cluster_size"), 16);
    EXPECT_EQ(j.at("cluster").at("product"), "H200");
    EXPECT_EQ(j.at("cluster").at("sizes").size(), 16u);
    EXPECT_EQ(j.at("cluster").at("reason"), nullptr);
  }
  const auto text =
      occupancy({"--arch", "sm_90", "--threads", "256", "--regs", "8", "--cluster", "2,2,1"});
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_TRUE(contains(text.out, "Clusters of 2x2x1 (4 blocks)")) << text.out;
  EXPECT_TRUE(contains(text.out, "Active clusters on the GPU:  248 (992 blocks in 8 GPCs)"))
      << text.out;
  EXPECT_TRUE(contains(text.out, "Largest cluster size:        8 (portable; up to 16")) << text.out;
  EXPECT_TRUE(contains(text.out, "GPCs of H200:  18, 18, 16 x5, 8, 2 x4 SMs (132)")) << text.out;
  // --product: the same GPCs for the H100 SXM.
  const auto h100 = occupancy(
      {"--product", "h100-sxm", "--threads", "256", "--regs", "8", "--cluster", "3", "--json"});
  ASSERT_EQ(h100.exit_code, 0) << h100.err;
  EXPECT_EQ(json::parse(h100.out).at("max_active_clusters"), 327);
  EXPECT_EQ(json::parse(h100.out).at("cluster").at("product"), "H100 SXM");
}

// No product measured: null numbers and the reason, never an estimate.
TEST(CliOccupancy, ClustersUnknownWhereNoProductIsMeasured) {
  for (const std::vector<std::string>& where :
       {std::vector<std::string>{"--arch", "sm_100"},
        std::vector<std::string>{"--arch", "sm_90", "--sms", "114"}}) {
    std::vector<std::string> args = where;
    for (const char* a : {"--threads", "256", "--cluster", "2", "--json"}) args.push_back(a);
    const auto r = occupancy(args);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const json j = json::parse(r.out);
    EXPECT_EQ(j.at("max_active_clusters"), nullptr);
    EXPECT_EQ(j.at("max_potential_cluster_size"), nullptr);
    EXPECT_TRUE(contains(j.at("cluster").at("reason").get<std::string>(), "unknown")) << r.out;
  }
  const auto text = occupancy({"--arch", "sm_100", "--threads", "256", "--cluster", "2"});
  EXPECT_TRUE(contains(text.out, "No number is given rather than a guess.")) << text.out;
}

TEST(CliOccupancy, ClusterFlagsThatContradict) {
  struct Bad {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Bad> cases = {
      {{"--arch", "sm_90", "--threads", "256", "--cluster", "9"}, "add --non-portable"},
      {{"--arch", "sm_90", "--threads", "256", "--cluster", "0"}, "--cluster \"0\""},
      {{"--arch", "sm_90", "--threads", "256", "--cluster", "2,2"}, "N or X,Y,Z"},
      {{"--arch", "sm_90", "--threads", "256", "--cluster", "x"}, "--cluster \"x\""},
      {{"--arch", "sm_90", "--sweep", "--cluster", "2"}, "--cluster answers one launch"},
      {{"--product", "H200", "--arch", "sm_90", "--threads", "256"}, "leave out --arch"},
      {{"--product", "H100 PCIe", "--threads", "256"}, "no measurement of this product's GPCs"},
  };
  for (const auto& c : cases) {
    const auto r = occupancy(c.args);
    EXPECT_EQ(r.exit_code, 2) << c.says << "\n" << r.err;
    EXPECT_TRUE(contains(r.err, c.says)) << c.says << "\n" << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace

namespace {

// --device --cluster with a driver that cannot answer (the fake has no
// cuOccupancyMaxActiveClusters) on a product nobody measured: null numbers, and both reasons.
TEST(CliOccupancy, DeviceClustersWithoutTheDriversAnswer) {
  const auto r = occupancy({"--device", "0", "--threads", "256", "--cluster", "2", "--json"},
                           with_fake_driver({{"FAKE_CUDA_DEVICES", "9.0"}}));
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json j = json::parse(r.out);
  EXPECT_EQ(j.at("max_active_clusters"), nullptr);
  EXPECT_EQ(j.at("cluster").at("source"), nullptr);
  EXPECT_EQ(j.at("cluster").at("driver"), nullptr);
  EXPECT_TRUE(contains(j.at("cluster").at("driver_error").get<std::string>(),
                       "cuOccupancyMaxActiveClusters"))
      << r.out;
  EXPECT_TRUE(contains(j.at("cluster").at("reason").get<std::string>(), "unknown")) << r.out;
}

}  // namespace
