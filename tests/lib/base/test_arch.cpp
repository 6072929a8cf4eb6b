// The one architecture grammar (base/arch.hpp) that every flag and file uses.
#include "cudatool/base/arch.hpp"

#include <gtest/gtest.h>

#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

TEST(Arch, SpellingsParseToOneValue) {
  struct Case {
    const char* text;
    Arch::Code code;
    int major, minor;
    Arch::Variant variant;
    const char* canonical;
  };
  using C = Arch::Code;
  using V = Arch::Variant;
  for (const Case& c : {Case{"sm_90", C::sass, 9, 0, V::none, "sm_90"},
                        Case{"sm_90a", C::sass, 9, 0, V::a, "sm_90a"},
                        Case{"sm_100f", C::sass, 10, 0, V::f, "sm_100f"},
                        Case{"sm_121", C::sass, 12, 1, V::none, "sm_121"},
                        Case{"compute_90", C::ptx, 9, 0, V::none, "compute_90"},
                        Case{"compute_100a", C::ptx, 10, 0, V::a, "compute_100a"},
                        Case{"9.0", C::sass, 9, 0, V::none, "sm_90"},
                        Case{"12.1", C::sass, 12, 1, V::none, "sm_121"},
                        Case{"sm_10", C::sass, 1, 0, V::none, "sm_10"},
                        Case{"sm_999", C::sass, 99, 9, V::none, "sm_999"},
                        Case{"99.9", C::sass, 99, 9, V::none, "sm_999"}}) {
    SCOPED_TRACE(c.text);
    const Arch arch = Arch::parse(c.text, "--arch");
    EXPECT_EQ(arch.code, c.code);
    EXPECT_EQ(arch.cc, (ComputeCapability{c.major, c.minor}));
    EXPECT_EQ(arch.variant, c.variant);
    EXPECT_EQ(arch.str(), c.canonical);
    EXPECT_EQ(Arch::parse(arch.str(), "--arch"), arch);  // the canonical spelling round-trips
  }
}

TEST(Arch, AnythingElseIsRefusedNamingTheSourceAndTheValue) {
  for (const char* text : {"",       "SM_90",  " sm_90", "sm_90 ",   "sm_9",   "sm_1234", "sm_090",
                           "sm_-90", "sm_+90", "sm_",    "compute_", "sm90",   "sm_90x",  "sm_90af",
                           "sm_90A", "9",      "9.",     ".0",       "9.10",   "09.0",    "0.0",
                           "100.0",  "-1.0",   "9.0a",   "sm_9.0",   "banana", "sm_90\n"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(Arch::try_parse(text), std::nullopt);
    try {
      Arch::parse(text, "--min-cc");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--min-cc " + quote_input(text) +
                                           ": expected an architecture such as sm_90, sm_90a, "
                                           "sm_100f, compute_90 or 9.0");
    }
  }
}

TEST(Arch, FiltersPassImagesOfTheirNumber) {
  auto passes = [](const char* image, const char* filter) {
    return Arch::parse(image, "image").passes(Arch::parse(filter, "filter"));
  };
  EXPECT_TRUE(passes("sm_90", "sm_90"));
  EXPECT_TRUE(passes("sm_90a", "sm_90"));
  EXPECT_TRUE(passes("sm_90a", "9.0"));
  EXPECT_TRUE(passes("compute_90", "sm_90"));
  EXPECT_TRUE(passes("compute_90", "compute_90"));
  EXPECT_FALSE(passes("sm_90", "sm_90a"));
  EXPECT_FALSE(passes("sm_90", "compute_90"));
  EXPECT_FALSE(passes("compute_90", "sm_90a"));
  EXPECT_FALSE(passes("sm_100", "sm_90"));
}

TEST(SplitList, SplitsOnCommasAndRefusesEmptyEntries) {
  EXPECT_EQ(split_list("sm_80,sm_90", "--arch", "sm_80,sm_90"),
            (std::vector<std::string>{"sm_80", "sm_90"}));
  EXPECT_EQ(split_list("x", "--arch", "a,b"), (std::vector<std::string>{"x"}));
  for (const char* bad : {"", ",", "a,", ",a", "a,,b"}) {
    SCOPED_TRACE(bad);
    try {
      split_list(bad, "--arch", "sm_80,sm_90");
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()), "--arch " + quote_input(bad) +
                                           ": an empty entry in the list (expected e.g. "
                                           "sm_80,sm_90)");
    }
  }
}

}  // namespace
}  // namespace cudatool
