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

// A malformed file is its own class, and still what a caller of UsageError catches (exit code
// 2 and Python's UsageError are unchanged): catch InputError first to tell the two apart.
TEST(Error, InputErrorIsAUsageErrorOfItsOwn) {
  EXPECT_THROW(throw InputError("x"), UsageError);
  EXPECT_THROW(throw InputError("x"), LogicError);
  try {
    throw UsageError("--threads \"0\": ...");
  } catch (const InputError&) {
    ADD_FAILURE() << "a bad flag is no bad file";
  } catch (const UsageError&) {
  }
  const InputError file("lib.so: section header 3 at offset 0x40 runs past the end");
  EXPECT_NE(dynamic_cast<const UsageError*>(&file), nullptr);
  EXPECT_STREQ(file.what(), "lib.so: section header 3 at offset 0x40 runs past the end");
  EXPECT_EQ(file.code(), 0);
}
