// The compiler front end (lib/src/compile/compiler.cpp) apart from any engine: what a
// request must be (architectures CUDA 13 compiles, a text source, values in range), the
// default flags from the environment. Needs neither NVRTC nor a GPU.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <utility>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/compile/compiler.hpp"

namespace cudatool {
namespace {

CompileRequest request(std::string source, const std::string& arch = "sm_90") {
  CompileRequest r;
  r.source = std::move(source);
  r.arch = Arch::parse(arch, "arch");
  return r;
}

// Policy apart from the grammar (tests/lib/base/test_arch.cpp): CUDA 13 compiles sm_75 up.
TEST(CompileRequestChecks, ArchitecturesBelowCuda13sOldestAreRefused) {
  for (const char* old : {"sm_13", "sm_70", "compute_72", "7.0"})
    EXPECT_THROW(check_supported(Arch::parse(old, "--arch"), "--arch"), UsageError) << old;
  for (const char* ok : {"sm_75", "sm_90a", "compute_120", "10.0"})
    EXPECT_NO_THROW(check_supported(Arch::parse(ok, "--arch"), "--arch")) << ok;
  try {
    check_supported(Arch::parse("sm_13", "--arch"), "--arch");
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("1.3"), std::string::npos) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind("--arch sm_13", 0), 0u) << e.what();
  }
}

TEST(CompileRequestChecks, EmptySourceAndBadValuesAreUsageErrors) {
  auto r = request(" \n\t\n");
  EXPECT_THROW(compile_uncached(r), UsageError);
  r = request("__global__ void k() {}");
  r.maxrregcount = 300;
  EXPECT_THROW(compile_uncached(r), UsageError);
  r.maxrregcount = 0;
  r.std = "c++98";
  EXPECT_THROW(compile_uncached(r), UsageError);
}

TEST(CompileRequestChecks, DefaultFlagsComeFromTheEnvironment) {
  ::setenv("CUDATOOL_DEFAULT_NVRTC_FLAGS", "  -DA=1   --use_fast_math ", 1);
  const auto flags = default_flags_from_environment(Engine::nvrtc);
  ::unsetenv("CUDATOOL_DEFAULT_NVRTC_FLAGS");
  EXPECT_EQ(flags, (std::vector<std::string>{"-DA=1", "--use_fast_math"}));
  EXPECT_TRUE(default_flags_from_environment(Engine::nvrtc).empty());
  EXPECT_EQ(default_flags_variable(Engine::nvcc), "CUDATOOL_DEFAULT_NVCC_FLAGS");
}

// Bytes that are no text source are the file's fault: InputError (exit 2 as before), naming
// the source, the byte and where it is; a blank source too. Bad values stay UsageErrors.
TEST(CompileRequestChecks, ASourceThatIsNoTextIsAnInputError) {
  auto r = request("__global__ void k() {}\n");
  r.source.push_back('\xff');
  r.source_name = "k.cu";
  try {
    compile_uncached(r);
    FAIL() << "accepted";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("k.cu: byte 0xFF at line 2, column 1: ", 0), 0u)
        << e.what();
  }
  r = request("  \n");
  EXPECT_THROW(compile_uncached(r), InputError);
  r = request("__global__ void k() {}");
  r.maxrregcount = 300;
  try {
    compile_uncached(r);
    FAIL() << "accepted";
  } catch (const InputError&) {
    FAIL() << "a bad value is no bad file";
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "maxrregcount 300: expected 1 to 255");
  }
}

}  // namespace
}  // namespace cudatool
