#include <gtest/gtest.h>

#include "cudatool/base/error.hpp"
#include "cudatool/base/units.hpp"

using namespace cudatool;

TEST(Units, ParsesSizes) {
  EXPECT_EQ(parse_size("49152", "--smem"), 49152u);
  EXPECT_EQ(parse_size("48K", "--smem"), 49152u);
  EXPECT_EQ(parse_size("48k", "--smem"), 49152u);
  EXPECT_EQ(parse_size("48KiB", "--smem"), 49152u);
  EXPECT_EQ(parse_size("1.5GiB", "x"), 1610612736u);
  EXPECT_EQ(parse_size("80GB", "x"), 80000000000u);
  EXPECT_EQ(parse_size("64M", "x"), 64u << 20);
  for (const char* bad : {"", "-1", "abc", "12Q", "1.2.3", "0.5", "99999999999T"})
    EXPECT_THROW(parse_size(bad, "--min-memory"), UsageError) << bad;
}

TEST(Units, FormatsBytes) {
  EXPECT_EQ(format_bytes(512), "512 B");
  EXPECT_EQ(format_bytes(49152), "48 KiB");
  EXPECT_EQ(format_bytes(85520809984ull), "79.6 GiB");
}

// Issue 39, defect 14: "has 80 GiB, need 80.0 GiB" for a device one byte short.
TEST(Units, FiguresComparedVisiblyDiffer) {
  const std::uint64_t gib80 = 80ull << 30;
  EXPECT_EQ(format_bytes_beside(gib80, gib80 + 1), "80 GiB (85899345920 bytes)");
  EXPECT_EQ(format_bytes_beside(gib80 + 1, gib80), "80.0 GiB (85899345921 bytes)");
  EXPECT_EQ(format_bytes_beside(gib80, 96ull << 30), "80 GiB");
  EXPECT_EQ(format_bytes_beside(gib80, gib80), "80 GiB");
  EXPECT_EQ(format_bytes_beside(85520809984ull, 85520809984ull + 4096),
            "79.6 GiB (85520809984 bytes)");
}
