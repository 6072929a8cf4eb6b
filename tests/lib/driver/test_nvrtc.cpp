// NVRTC loaded at run time, the program handle, and the compiler front end (options,
// extern "C" wrapping, architectures, errors). Needs NVRTC, not a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <string>
#include <type_traits>
#include <utility>

#include "compile_corpus.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compiler.hpp"
#include "driver/nvrtc.hpp"

namespace cudatool {
namespace {

class Nvrtc : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::nvrtc_unavailable()) GTEST_SKIP() << *why;
  }
};

CompileRequest request(std::string source, const std::string& arch = "sm_90") {
  CompileRequest r;
  r.source = std::move(source);
  r.arch = Arch::parse(arch, "arch");
  return r;
}

TEST_F(Nvrtc, VersionAndArchitecturesComeFromTheLibrary) {
  const auto& api = driver::nvrtc::api();
  EXPECT_GE(api.major, 12);
  EXPECT_FALSE(api.library_path.empty());
  const auto archs = driver::nvrtc::supported_archs();
  EXPECT_NE(std::find(archs.begin(), archs.end(), 90), archs.end());
  EXPECT_FALSE(driver::nvrtc::locate_library().empty());
}

TEST_F(Nvrtc, ProgramIsMoveOnlyAndReportsFailureWithALog) {
  static_assert(!std::is_copy_constructible_v<driver::nvrtc::Program>);
  static_assert(std::is_nothrow_move_constructible_v<driver::nvrtc::Program>);
  driver::nvrtc::Program a("__global__ void k(int* p) { *p = undefined_name; }", "broken.cu");
  driver::nvrtc::Program b = std::move(a);
  EXPECT_EQ(a.handle(), nullptr);
  EXPECT_FALSE(b.compile({"--gpu-architecture=sm_90"}));
  EXPECT_NE(b.log().find("broken.cu(1): error"), std::string::npos) << b.log();
  EXPECT_TRUE(b.cubin().empty());
}

TEST_F(Nvrtc, SourceIsWrappedInExternCUnlessAskedNotTo) {
  const std::string source = "__global__ void plain(float* p) { p[threadIdx.x] = 1.0f; }";
  auto wrapped = compile_uncached(request(source));
  auto kernels = read_cubin({reinterpret_cast<const std::uint8_t*>(wrapped.image.data()),
                             wrapped.image.size()})
                     .kernels;
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "plain");
  auto r = request(source);
  r.extern_c = false;
  auto mangled = compile_uncached(r);
  kernels = read_cubin(
                {reinterpret_cast<const std::uint8_t*>(mangled.image.data()), mangled.image.size()})
                .kernels;
  ASSERT_EQ(kernels.size(), 1u);
  EXPECT_EQ(kernels[0].name, "_Z5plainPf");
  EXPECT_EQ(kernels[0].demangled, "plain(float*)");
}

TEST_F(Nvrtc, CompileErrorCarriesLogWithTheUsersLineOptionsAndVersion) {
  auto r = request("// line 1\n// line 2\n__global__ void k(int* p) { *p = nope; }\n");
  r.source_name = "user.cu";
  r.defines = {"ANSWER=42"};
  try {
    compile_uncached(r);
    FAIL() << "compiled";
  } catch (const CompileError& e) {
    // Line 3 of the user's file, although the wrapping added a line before it.
    EXPECT_NE(e.log().find("user.cu(3): error"), std::string::npos) << e.log();
    EXPECT_NE(std::string(e.what()).find("user.cu(3): error"), std::string::npos) << e.what();
    EXPECT_NE(std::find(e.options().begin(), e.options().end(), "-DANSWER=42"), e.options().end());
    EXPECT_EQ(e.compiler_version(), "NVRTC " + driver::nvrtc::api().version());
  }
}

TEST_F(Nvrtc, OptionsReachTheCompiler) {
  auto r = request(
      "#if !defined(FLAG) || VALUE != 7\n#error macros missing\n#endif\n"
      "__global__ void k(int* p) { *p = VALUE; }\n");
  r.defines = {"FLAG", "VALUE=7"};
  r.std = "c++20";
  r.maxrregcount = 40;
  const auto result = compile_uncached(r);
  EXPECT_FALSE(result.image.empty());
  const auto& o = result.options;
  EXPECT_NE(std::find(o.begin(), o.end(), "--std=c++20"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "--maxrregcount=40"), o.end());
  EXPECT_NE(std::find(o.begin(), o.end(), "--gpu-architecture=sm_90"), o.end());
  r.defines = {"FLAG"};
  EXPECT_THROW(compile_uncached(r), CompileError);
}

TEST_F(Nvrtc, PtxForVirtualArchitecturesAndOnRequest) {
  auto r = request("__global__ void k(int* p) { *p = 1; }", "compute_80");
  auto ptx = compile_uncached(r);
  EXPECT_EQ(ptx.output, OutputKind::ptx);
  EXPECT_NE(ptx.image.find(".target sm_80"), std::string::npos);
  r = request("__global__ void k(int* p) { *p = 1; }", "sm_90");
  r.output = OutputKind::ptx;
  EXPECT_NE(compile_uncached(r).image.find(".entry k"), std::string::npos);
  r = request("__global__ void k(int* p) { *p = 1; }", "compute_90");
  r.output = OutputKind::cubin;
  EXPECT_THROW(compile_uncached(r), UsageError);
}

}  // namespace
}  // namespace cudatool
