// `cudatool check`: the worst verdict of a device and of a run (lib/src/check/verdicts.cpp), from
// plain structs (no GPU).
#include <gtest/gtest.h>

#include <string>

#include "cudatool/check/check.hpp"

using namespace cudatool;
using namespace cudatool::check;

TEST(CheckVerdicts, WorstWinsAndMedianIsMiddle) {
  EXPECT_EQ(worse(Verdict::pass, Verdict::skipped), Verdict::pass);
  EXPECT_EQ(worse(Verdict::warn, Verdict::fail), Verdict::fail);
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 2, 3}), 2.5);
  EXPECT_EQ(median({}), 0);
}
