// `cudatool check`: the compute check's judgement and the embedded kernel's form
// (lib/src/check/compute.cpp), from plain structs (no GPU).
#include <gtest/gtest.h>

#include <string>

#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

TEST(CheckCompute, MismatchFailsAndMissingSmsWarn) {
  EXPECT_EQ(compute_result(0, 16777216, 132, 132, "SASS sm_90", "").verdict, Verdict::pass);
  const auto bad = compute_result(1, 16777216, 132, 132, "SASS sm_90", "element 8 is 0x1");
  EXPECT_EQ(bad.verdict, Verdict::fail);
  EXPECT_NE(bad.reason.find("first: element 8 is 0x1"), std::string::npos);
  EXPECT_EQ(compute_result(0, 16777216, 100, 132, "SASS sm_90", "").verdict, Verdict::warn);
}

TEST(CheckCompute, KernelFormFollowsTheDriversChoice) {
  const int sass[] = {75, 80, 86, 89, 90, 100, 120};
  EXPECT_EQ(kernel_form({9, 0}, sass, 75), "SASS sm_90");
  EXPECT_EQ(kernel_form({8, 7}, sass, 75), "SASS sm_86");  // Orin runs 8.6 code
  EXPECT_EQ(kernel_form({12, 1}, sass, 75), "SASS sm_120");
  EXPECT_EQ(kernel_form({11, 0}, sass, 75), "PTX compute_75 (JIT)");
  EXPECT_EQ(kernel_form({7, 0}, sass, 75).rfind("none", 0), 0u);
}

TEST(CheckCompute, PatternIsTheKernelsFunction) {
  // Fixed values: a change on one side only (host or check_kernels.cu) shows here and on the GPU.
  EXPECT_EQ(pattern(0, 0), 0u);
  EXPECT_NE(pattern(1, 0x9e3779b9u), pattern(2, 0x9e3779b9u));
  EXPECT_NE(pattern(1ull << 32, 0), pattern(0, 0));
}
