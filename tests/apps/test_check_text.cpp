// check's text (apps/cudatool/check_text.cpp) from plain structs: no GPU, no driver. The reports
// are tests/support/check_samples.hpp's.
#include <gtest/gtest.h>

#include <string>

#include "check_samples.hpp"
#include "cudatool/check/check.hpp"
#include "render_check.hpp"

using namespace cudatool;
using namespace cudatool::check;
using cudatool::app::check_text;
using cudatool::testing::occupancy_sample_report;
using cudatool::testing::sample_report;

namespace {

bool has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

}  // namespace

TEST(CheckText, HasABlockPerDeviceAndASummary) {
  const std::string text = check_text(sample_report());
  EXPECT_TRUE(has(text, "cudatool check on gpu-node-17 (CUDA driver 13.0; kernels: SASS sm_90"))
      << text;
  EXPECT_TRUE(has(text, "device 0  NVIDIA H100 80GB HBM3  sm_90")) << text;
  EXPECT_TRUE(has(text, "-> fail")) << text;
  EXPECT_TRUE(has(text, "fail    h2d              55 GB/s (>= 10000)")) << text;
  EXPECT_TRUE(has(text, "pass    peer->1          391 GB/s (>= 358.6)")) << text;
  EXPECT_TRUE(has(text, "summary: 1 device, 4 pass, 0 warn, 1 fail, 1 skipped in 0.53 s: fail"))
      << text;
}

TEST(CheckText, OccupancyListsTheOtherProcesses) {
  const Report report = occupancy_sample_report();
  const std::string text = check_text(report);
  EXPECT_TRUE(has(text, "warn    processes        2 processes (<= 0)")) << text;
  EXPECT_TRUE(
      has(text, "pid 4242 (python3, 77.7 GiB), pid 77 (Xorg, graphics, memory not reported)"))
      << text;
}
