// The test hooks (lib/src/base/test_hooks.cpp): read only by a build configured to read them
// (CUDATOOL_TEST_HOOKS, which CMake passes to this test as CUDATOOL_EXPECT_TEST_HOOKS), and
// then only where set and not empty; never in a build without them, whatever is set.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>

#include "cudatool/base/test_hooks.hpp"

namespace cudatool {
namespace {

constexpr const char* kHook = "CUDATOOL_TEST_HOOK_UNDER_TEST";

TEST(TestHooks, OnExactlyWhereTheBuildWasConfiguredForThem) {
  EXPECT_EQ(test_hooks_enabled(), CUDATOOL_EXPECT_TEST_HOOKS != 0);
}

TEST(TestHooks, ReadWhereSetAndNotEmptyOnlyInABuildWithHooks) {
  ::unsetenv(kHook);
  EXPECT_EQ(test_hook(kHook), nullptr) << "unset";
  ::setenv(kHook, "", 1);
  EXPECT_EQ(test_hook(kHook), nullptr) << "empty";
  ::setenv(kHook, "/tmp/fake-proc", 1);
  const char* value = test_hook(kHook);
  if (CUDATOOL_EXPECT_TEST_HOOKS) {
    ASSERT_NE(value, nullptr);
    EXPECT_EQ(std::string(value), "/tmp/fake-proc");
  } else {
    EXPECT_EQ(value, nullptr) << "a release build ignores the hooks";
  }
  ::unsetenv(kHook);
  EXPECT_EQ(test_hook(kHook), nullptr) << "unset again";
}

}  // namespace
}  // namespace cudatool
