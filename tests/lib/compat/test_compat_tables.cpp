// The compiled-in tables (share/cuda-releases.json, share/gpus.json): well formed, ordered,
// and the lookups compat makes of them.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "cudatool/base/error.hpp"

#include "cudatool/compat/compat.hpp"

namespace cudatool {
namespace {

TEST(CompatTables, ReleasesAreOrderedByVersionDriverAndPtx) {
  const auto& r = cuda_releases();
  ASSERT_GT(r.size(), 20u);
  for (std::size_t i = 1; i < r.size(); ++i) {
    EXPECT_LT(std::pair(r[i - 1].major, r[i - 1].minor), std::pair(r[i].major, r[i].minor));
    EXPECT_LE(r[i - 1].ptx, r[i].ptx) << r[i].str();
    EXPECT_NE(cuda_release_for_driver(r[i].driver), nullptr);
    EXPECT_EQ(cuda_release_for_driver(r[i].driver)->str(), r[i].str());
  }
}

TEST(CompatTables, DriverVersionsMapToTheirCudaRelease) {
  EXPECT_EQ(cuda_release_for_driver("580.159.04")->str(), "13.0");
  EXPECT_EQ(cuda_release_for_driver("535.104.05")->str(), "12.2");
  EXPECT_EQ(cuda_release_for_driver("570.26")->str(), "12.8");
  EXPECT_EQ(cuda_release_for_driver("570.25")->str(), "12.7");
  EXPECT_EQ(cuda_release_for_driver("470.82.01")->str(), "11.4");
  EXPECT_EQ(cuda_release_for_driver("300.1"), nullptr);
  EXPECT_EQ(cuda_release_for_driver("abc"), nullptr);
  EXPECT_EQ(cuda_release_for_driver("580..1"), nullptr);
  EXPECT_EQ(cuda_release_for_driver(""), nullptr);
  EXPECT_EQ(cuda_release_for_driver("99999999999999999999"), nullptr);
}

TEST(CompatTables, PtxIsaVersionsFollowNvidiasTable) {
  EXPECT_EQ(cuda_release_named("13.0")->ptx, (PtxVersion{9, 0}));
  EXPECT_EQ(cuda_release_named("12.6")->ptx, (PtxVersion{8, 5}));
  EXPECT_EQ(cuda_release_named("12.8")->ptx, (PtxVersion{8, 7}));
  EXPECT_EQ(cuda_release_named("11.8")->ptx, (PtxVersion{7, 8}));
  EXPECT_EQ(first_release_for_ptx({8, 5})->str(), "12.5");
  EXPECT_EQ(first_release_for_ptx({9, 1})->driver, "590.44.01");
  EXPECT_EQ(cuda_release_named("x"), nullptr);
  EXPECT_EQ(cuda_release_named("8.0"), nullptr);
}

TEST(CompatTables, ProductsAreFoundByTheirNamesAsPeopleWriteThem) {
  EXPECT_EQ(find_gpu_product("H100")->cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(find_gpu_product("NVIDIA H100 80GB HBM3")->name, "H100");
  EXPECT_EQ(find_gpu_product("NVIDIA GeForce RTX 4090")->cc, (ComputeCapability{8, 9}));
  EXPECT_EQ(find_gpu_product("rtx-5090")->cc, (ComputeCapability{12, 0}));
  EXPECT_EQ(find_gpu_product("Jetson Orin")->cc, (ComputeCapability{8, 7}));
  EXPECT_EQ(find_gpu_product("B200")->cc, (ComputeCapability{10, 0}));
  EXPECT_EQ(find_gpu_product("A100")->cc, (ComputeCapability{8, 0}));
  EXPECT_EQ(find_gpu_product("L4")->cc, (ComputeCapability{8, 9}));
  EXPECT_EQ(find_gpu_product("NVIDIA"), nullptr);
  EXPECT_EQ(find_gpu_product("Voodoo 2"), nullptr);
  // Every name and alias is one product's only.
  std::map<std::string, std::string> seen;
  for (const GpuProduct& p : gpu_products()) {
    EXPECT_EQ(find_gpu_product(p.name), &p) << p.name;
    for (const std::string& a : p.aliases) EXPECT_EQ(find_gpu_product(a), &p) << a;
  }
}

}  // namespace
}  // namespace cudatool
