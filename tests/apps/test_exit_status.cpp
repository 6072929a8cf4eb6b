// The executable's exit codes (apps/cudatool/exit_status.hpp): the one map from the library's
// error hierarchy to them.
#include <gtest/gtest.h>

#include <new>
#include <stdexcept>

#include "cudatool/base/error.hpp"
#include "exit_status.hpp"

namespace cudatool::app {
namespace {

TEST(ExitStatus, MapsEachErrorClassToItsCode) {
  EXPECT_EQ(exit_status_for(UsageError("x")), ExitStatus::usage);
  // A malformed file keeps the usage code it always had (the JSON error document too).
  EXPECT_EQ(exit_status_for(InputError("x")), ExitStatus::usage);
  EXPECT_EQ(exit_status_for(LibraryNotFoundError("x", "libcuda.so.1")), ExitStatus::no_driver);
  EXPECT_EQ(exit_status_for(DeviceNotFoundError("x")), ExitStatus::no_device);
  EXPECT_EQ(exit_status_for(RequirementError("x")), ExitStatus::no_device);
  EXPECT_EQ(exit_status_for(CompileError("x", "log", {}, "13.0")), ExitStatus::compile_error);
  EXPECT_EQ(
      exit_status_for(MemoryError("cuMemAlloc", 2, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory")),
      ExitStatus::out_of_memory);
  EXPECT_EQ(exit_status_for(LaunchError("cuLaunchKernel", 719, "CUDA_ERROR_LAUNCH_FAILED", "")),
            ExitStatus::cuda_error);
  // Only a driver call's failure (it carries a CUresult) is a CUDA error (issue 13).
  EXPECT_EQ(exit_status_for(LogicError("x")), ExitStatus::failure);
  EXPECT_EQ(exit_status_for(RuntimeError("cannot write /x: No space left on device")),
            ExitStatus::failure);
  EXPECT_EQ(exit_status_for(Error("cuda_occupancy.h cannot compute")), ExitStatus::failure);
  EXPECT_EQ(exit_status_for(RuntimeError("cuCtxCreate", 999, "CUDA_ERROR_UNKNOWN", "")),
            ExitStatus::cuda_error);
  EXPECT_EQ(exit_status_for(LogicError("cuCtxSetCurrent", 201, "CUDA_ERROR_INVALID_CONTEXT", "")),
            ExitStatus::cuda_error);
  EXPECT_EQ(exit_status_for(std::runtime_error("x")), ExitStatus::failure);
}

TEST(ExitStatus, NamesAreStable) {
  EXPECT_EQ(exit_status_name(ExitStatus::no_driver), "no_driver");
  EXPECT_EQ(to_int(ExitStatus::usage), 2);
  EXPECT_EQ(to_int(ExitStatus::no_driver), 3);
  EXPECT_EQ(to_int(ExitStatus::no_device), 4);
}

// A failed allocation is out of memory, not an internal error (issue 20, item 11).
TEST(ExitStatus, BadAllocIsOutOfMemory) {
  EXPECT_EQ(exit_status_for(std::bad_alloc()), ExitStatus::out_of_memory);
  EXPECT_EQ(exit_status_for(MemoryError("x: out of memory reading ...")),
            ExitStatus::out_of_memory);
}

}  // namespace
}  // namespace cudatool::app
