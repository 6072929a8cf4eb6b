// The kernel-name filter (RE2) of kernels --kernel and occupancy --kernel (issue 20, item 3).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/binary/kernel_filter.hpp"

namespace cudatool {
namespace {

TEST(KernelFilter, SearchesAnywhereInTheName) {
  const KernelNameFilter filter("gemm", "--kernel");
  EXPECT_TRUE(filter.matches("_Z10sgemm_128PKf"));
  EXPECT_FALSE(filter.matches("_Z6reducePf"));
  const KernelNameFilter anchored("^gemm_[0-9]+$", "--kernel");
  EXPECT_TRUE(anchored.matches("gemm_128"));
  EXPECT_FALSE(anchored.matches("sgemm_128"));
  EXPECT_FALSE(anchored.matches("gemm_128x"));
}

TEST(KernelFilter, MatchesTheMangledOrTheDemangledName) {
  KernelResources k;
  k.name = "_Z6kernelPfi";
  k.demangled = "kernel(float*, int)";
  EXPECT_TRUE(KernelNameFilter("_Z6kernel", "--kernel").matches(k));
  EXPECT_TRUE(KernelNameFilter(R"(kernel\(float\*)", "--kernel").matches(k));
  EXPECT_FALSE(KernelNameFilter("double", "--kernel").matches(k));
}

// std::regex recursed once per character: `.*` on a 50,000-character name overflowed the
// stack (SIGSEGV). RE2 matches these in linear time on a bounded stack.
TEST(KernelFilter, LongNamesNeitherOverflowNorTakeLong) {
  const std::string name(1 << 22, 'a');  // 4 MiB
  EXPECT_TRUE(KernelNameFilter(".*", "--kernel").matches(name));
  EXPECT_TRUE(KernelNameFilter("(a|b)*", "--kernel").matches(name));
  EXPECT_FALSE(KernelNameFilter("(a|b)*c", "--kernel").matches(name));
  EXPECT_FALSE(KernelNameFilter("(a*)*b", "--kernel").matches(name));  // exponential elsewhere
  EXPECT_TRUE(KernelNameFilter("a{1000}$", "--kernel").matches(std::string(50000, 'a')));
}

TEST(KernelFilter, AnInvalidPatternIsAUsageErrorOfOneLine) {
  for (const std::string& pattern :
       std::vector<std::string>{"(", "[", "a{2,1}", "*", "\\", "[\x1b", "(?=a)", "(a)\\1",
                                std::string("\xff"), std::string(200, '(')}) {
    try {
      KernelNameFilter filter(pattern, "--kernel");
      ADD_FAILURE() << "accepted: " << pattern;
    } catch (const UsageError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind("--kernel \"", 0), 0u) << what;
      EXPECT_NE(what.find("not a regular expression (RE2: "), std::string::npos) << what;
      EXPECT_EQ(what.find_first_of("\n\x1b"), std::string::npos) << what;
      EXPECT_LT(what.size(), 400u) << what;
    }
  }
}

}  // namespace
}  // namespace cudatool
