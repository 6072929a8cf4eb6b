// compile --threads, kernels --threads and occupancy --kernel-from answer "the occupancy of
// this kernel at N threads on this architecture" alike (occupancy/kernel_occupancy.hpp):
// for kernels with launch bounds, __launch_bounds__ min-blocks, a required block size
// (reqntid), cluster dimensions, a stack frame, static shared memory and barriers, on
// architectures with and without gaps in the table (sm_88), at block sizes inside and
// outside what each kernel allows. The kernels are compiled by NVRTC from
// tests/data/occupancy/kernel_kinds.cu.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compile_corpus.hpp"
#include "process.hpp"

namespace cudatool::testing {
namespace {
namespace fs = std::filesystem;
using nlohmann::json;

class CliKernelOccupancy : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
    std::string pattern = (fs::temp_directory_path() / "cudatool-kernel-occupancy-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    if (!dir_.empty()) fs::remove_all(dir_, ec);
  }
  ProcessOptions options() const {
    ProcessOptions o = without_driver();
    o.env["CUDATOOL_CACHE_DIR"] = (dir_ / "cache").string();
    o.env["CUDATOOL_DEFAULT_NVRTC_FLAGS"] = std::nullopt;
    return o;
  }
  static std::string source() {
    return std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/occupancy/kernel_kinds.cu";
  }
  fs::path dir_;
};

// name -> its occupancy object, from a document's kernels array.
std::map<std::string, json> by_name(const json& document) {
  std::map<std::string, json> out;
  for (const auto& k : document.at("kernels")) out[k.at("name")] = k.at("occupancy");
  return out;
}

TEST_F(CliKernelOccupancy, CompileKernelsAndOccupancyGiveTheSameObject) {
  std::size_t compared = 0, with_number = 0, refused = 0, unknown = 0, with_clusters = 0;
  for (const std::string arch : {"sm_90", "sm_100", "sm_80", "sm_88"}) {
    const fs::path cubin = dir_ / (arch + ".cubin");
    auto r = run_cudatool({"compile", source(), "--arch", arch, "--no-cache", "-o", cubin.string()},
                          options());
    ASSERT_EQ(r.exit_code, 0) << r.err;
    for (const int threads : {32, 64, 128, 256, 1024}) {
      SCOPED_TRACE(arch + " at " + std::to_string(threads));
      const std::string n = std::to_string(threads);
      r = run_cudatool(
          {"compile", source(), "--arch", arch, "--no-cache", "--threads", n, "--json"}, options());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto from_compile = by_name(json::parse(r.out));
      r = run_cudatool({"kernels", cubin.string(), "--threads", n, "--json"}, options());
      ASSERT_EQ(r.exit_code, 0) << r.err;
      const auto from_kernels = by_name(json::parse(r.out));
      ASSERT_EQ(from_compile.size(), from_kernels.size());
      ASSERT_GE(from_kernels.size(), 4u);
      for (const auto& [name, expected] : from_kernels) {
        SCOPED_TRACE(name);
        ASSERT_TRUE(from_compile.count(name));
        EXPECT_EQ(from_compile.at(name), expected) << "compile differs from kernels";
        ++compared;
        r = run_cudatool({"occupancy", "--kernel-from", cubin.string(), "--kernel",
                          "^" + name + "$", "--threads", n, "--json"},
                         options());
        if (expected.at("reason").is_null()) {
          ++with_number;
          ASSERT_EQ(r.exit_code, 0) << r.err;
          const json doc = json::parse(r.out);
          for (const char* key :
               {"threads", "tb_per_mp", "warps_per_mp", "occupancy", "limited_by"})
            EXPECT_EQ(doc.at(key), expected.at(key)) << key << ": occupancy differs from kernels";
          // Compile-time cluster dimensions: the same clusters (occupancy applies them too).
          EXPECT_EQ(doc.value("max_active_clusters", json()), expected.at("max_active_clusters"));
          if (expected.at("max_active_clusters").is_number()) ++with_clusters;
        } else if (expected.at("reason").get<std::string>().find("is unknown") !=
                   std::string::npos) {
          // A gap in the table: occupancy's document has no numbers and says which values
          // are unknown, as kernels' reason does.
          ++unknown;
          ASSERT_EQ(r.exit_code, 0) << r.err;
          const json doc = json::parse(r.out);
          for (const char* key : {"tb_per_mp", "occupancy", "limited_by"})
            EXPECT_TRUE(doc.at(key).is_null()) << key;
          EXPECT_EQ(doc.at("unknown").at("architecture"), arch);
        } else {
          // The kernel cannot run this block size: exit 2 with the same reason.
          ++refused;
          EXPECT_EQ(r.exit_code, 2) << r.out;
          EXPECT_NE(r.out.find(expected.at("reason").get<std::string>()), std::string::npos)
              << r.out;
        }
      }
    }
  }
  // Every branch was taken: numbers, a block size a kernel refuses, a table gap.
  EXPECT_GT(with_number, 0u);
  EXPECT_GT(refused, 0u);
  EXPECT_GT(unknown, 0u);
  EXPECT_GT(with_clusters, 0u);  // __cluster_dims__(2, 1, 1) on sm_90
  EXPECT_GE(compared, 100u);
}

}  // namespace
}  // namespace cudatool::testing

namespace cudatool::testing {
namespace {

// A required block size is not a bound on max_threads_per_block: the H100 driver reports
// 1024 for required64 (__block_size__((64, 1, 1)), 8 registers; tools/gpu-arch.sh's
// compile --load said "MISMATCH required64 max_threads_per_block: cubin 64, driver 1024"
// while the CUBIN reader capped it). The requirement stays in the kernel's block note, and
// occupancy refuses any other size.
TEST_F(CliKernelOccupancy, ARequiredBlockSizeIsNotTheMaxThreadsAttribute) {
  const fs::path cubin = dir_ / "sm_90.cubin";
  auto r = run_cudatool(
      {"compile", source(), "--arch", "sm_90", "--no-cache", "-o", cubin.string()}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = run_cudatool({"kernels", "--json", "--threads", "128", cubin.string()}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const json doc = json::parse(r.out);
  bool seen = false;
  for (const auto& k : doc.at("kernels")) {
    if (k.at("name") != "required64") continue;
    seen = true;
    EXPECT_EQ(k.at("max_threads_per_block"), 1024);
    EXPECT_EQ(k.at("occupancy").at("tb_per_mp"), nullptr);
    EXPECT_NE(k.at("occupancy").at("reason").get<std::string>().find("exactly 64 threads"),
              std::string::npos);
  }
  EXPECT_TRUE(seen) << r.out;
}

// One block-size range for every --threads (occupancy.hpp kMaxBlockThreads), with one
// message: compile took up to 2^20 and occupancy up to INT_MAX before.
TEST_F(CliKernelOccupancy, EveryThreadsFlagTakesTheSameRange) {
  const fs::path cubin = dir_ / "sm_90.cubin";
  auto r = run_cudatool(
      {"compile", source(), "--arch", "sm_90", "--no-cache", "-o", cubin.string()}, options());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string threads : {"0", "1025", "2048", "1048576"}) {
    SCOPED_TRACE(threads);
    const std::string says =
        "cudatool: --threads \"" + threads + "\": expected a whole number 1..1024\n";
    for (const std::vector<std::string>& args :
         {std::vector<std::string>{"compile", source(), "--arch", "sm_90", "--no-cache"},
          std::vector<std::string>{"kernels", cubin.string()},
          std::vector<std::string>{"occupancy", "--arch", "sm_90"},
          std::vector<std::string>{"occupancy", "--kernel-from", cubin.string(), "--kernel",
                                   "tiled", "--arch", "sm_90"}}) {
      std::vector<std::string> with = args;
      with.insert(with.end(), {"--threads", threads});
      SCOPED_TRACE(with.front());
      r = run_cudatool(with, options());
      EXPECT_EQ(r.exit_code, 2);
      EXPECT_EQ(r.err, says);
    }
  }
  // 1024 itself is a block size everywhere.
  r = run_cudatool({"occupancy", "--arch", "sm_90", "--threads", "1024"}, options());
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace
}  // namespace cudatool::testing
