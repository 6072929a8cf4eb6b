// `cudatool check`: the identity checks of each device and of the node
// (lib/src/check/identity.cpp), from plain structs (no GPU).
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

namespace {

DeviceInfo h100(int ordinal = 0) {
  return cudatool::testing::sample_h100(ordinal);
}

const CheckResult& find(const std::vector<CheckResult>& results, std::string_view name) {
  return cudatool::testing::find_result(results, name);
}

}  // namespace

TEST(CheckIdentity, RequirementsNameAndHeterogeneity) {
  DeviceRequirements req;
  req.min_compute_capability = ComputeCapability{10, 0};
  auto r = identity_result(h100(), req, std::nullopt);
  EXPECT_EQ(r.verdict, Verdict::fail);
  EXPECT_EQ(r.reason, "compute capability 9.0, need 10.0");
  EXPECT_EQ(identity_result(h100(), {}, std::string("H100")).verdict, Verdict::pass);
  EXPECT_EQ(identity_result(h100(), {}, std::string("H200")).verdict, Verdict::fail);

  DeviceInfo other = h100(1);
  other.name = "NVIDIA A100-SXM4-80GB";
  auto node = node_identity_results({h100(0), other}, {}, std::nullopt);
  EXPECT_EQ(find(node, "count").verdict, Verdict::pass);
  EXPECT_EQ(find(node, "homogeneous").verdict, Verdict::warn);
  node = node_identity_results({h100(0)}, {}, 2);
  EXPECT_EQ(find(node, "count").verdict, Verdict::fail);
  DeviceRequirements two;
  two.min_count = 2;
  EXPECT_EQ(find(node_identity_results({h100(0), h100(1)}, two, std::nullopt), "count").verdict,
            Verdict::pass);
  EXPECT_EQ(find(node_identity_results({h100(0)}, {}, std::nullopt), "homogeneous").verdict,
            Verdict::skipped);
}
