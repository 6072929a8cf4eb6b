#include <gtest/gtest.h>

#include "cudatool/base/error.hpp"

using namespace cudatool;

TEST(Error, DriverErrorsCarryCallNameAndMessage) {
  const RuntimeError e("cuDeviceGetName", 101, "CUDA_ERROR_INVALID_DEVICE",
                       "invalid device ordinal");
  EXPECT_STREQ(e.what(),
               "cuDeviceGetName failed: CUDA_ERROR_INVALID_DEVICE (invalid device ordinal)");
  EXPECT_EQ(e.call(), "cuDeviceGetName");
  EXPECT_EQ(e.code(), 101);
  EXPECT_EQ(e.code_name(), "CUDA_ERROR_INVALID_DEVICE");
}

TEST(Error, HierarchyFollowsPyCuda) {
  // Every class is caught as Error; the tool's refinements as PyCUDA's classes.
  EXPECT_THROW(throw UsageError("x"), LogicError);
  EXPECT_THROW(throw LibraryNotFoundError("x", "y"), RuntimeError);
  EXPECT_THROW(throw DeviceNotFoundError("x"), RuntimeError);
  EXPECT_THROW(throw CompileError("x", "", {}, ""), Error);
  EXPECT_THROW(throw MemoryError("x"), Error);
  EXPECT_THROW(throw LaunchError("x"), Error);
}
