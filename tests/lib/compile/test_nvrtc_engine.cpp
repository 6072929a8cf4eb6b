// The NVRTC engine (lib/src/compile/nvrtc_engine.cpp): the prepared source compiled in this
// process to PTX or a CUBIN, an architecture this NVRTC cannot target refused before it is
// asked, the compile error with NVRTC's first error line, and with a keep directory the
// intermediates (the prepared text, the options, the log, the PTX and CUBIN). Skipped where
// there is no NVRTC (compile_corpus.hpp says why).
#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>

#include "compile/engines.hpp"
#include "compile_corpus.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compile/compiler.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::TempDir;

namespace fs = std::filesystem;
namespace engine = cudatool::detail;  // the one use of the internal namespace

#define CUDATOOL_REQUIRE_NVRTC() \
  if (auto why = testing::nvrtc_unavailable()) GTEST_SKIP() << *why

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

CompileRequest request(std::string source, const std::string& arch) {
  CompileRequest r;
  r.source = std::move(source);
  r.source_name = "scale.cu";
  r.arch = Arch::parse(arch, "--arch");
  r.sources.arch = "--arch";  // what the messages name the architecture by
  return r;
}

const char* const kKernel = "__global__ void scale(float* x, float a) { x[threadIdx.x] *= a; }\n";

TEST(NvrtcEngine, PtxForAVirtualArchitectureAndACubinForARealOne) {
  CUDATOOL_REQUIRE_NVRTC();
  const CompileResult ptx = engine::compile_nvrtc(request(kKernel, "compute_90"));
  EXPECT_EQ(ptx.output, OutputKind::ptx);
  EXPECT_EQ(ptx.compiler, "nvrtc");
  EXPECT_FALSE(ptx.compiler_version.empty());
  EXPECT_NE(ptx.image.find(".target sm_90"), std::string::npos) << ptx.image.substr(0, 400);
  // extern "C": the kernel keeps its name.
  EXPECT_NE(ptx.image.find(".entry scale("), std::string::npos) << ptx.image.substr(0, 400);

  const CompileResult cubin = engine::compile_nvrtc(request(kKernel, "sm_90"));
  EXPECT_EQ(cubin.output, OutputKind::cubin);
  ASSERT_GT(cubin.image.size(), 64u);
  EXPECT_EQ(cubin.image.substr(0, 4),
            "\x7f"
            "ELF");
  EXPECT_NE(cubin.image.find("scale"), std::string::npos);
}

TEST(NvrtcEngine, AnArchitectureNvrtcCannotTargetIsRefusedWithTheOnesItCan) {
  CUDATOOL_REQUIRE_NVRTC();
  try {
    engine::compile_nvrtc(request(kKernel, "sm_99"));
    ADD_FAILURE() << "NVRTC has no sm_99";
  } catch (const UsageError& e) {
    const std::string why = e.what();
    EXPECT_TRUE(why.starts_with("--arch sm_99: NVRTC ")) << why;
    EXPECT_NE(why.find("cannot target it (it supports "), std::string::npos) << why;
    EXPECT_NE(why.find("sm_90"), std::string::npos) << why;
  }
}

TEST(NvrtcEngine, ACompileErrorKeepsItsLogAndTheIntermediatesAreKept) {
  CUDATOOL_REQUIRE_NVRTC();
  TempDir keep{"cudatool-nvrtc-test"};
  auto bad = request("__global__ void k() { not_declared(); }\n", "sm_90");
  bad.keep_dir = keep.path;
  try {
    engine::compile_nvrtc(bad);
    ADD_FAILURE() << "the source does not compile";
  } catch (const CompileError& e) {
    const std::string why = e.what();
    EXPECT_TRUE(why.starts_with("scale.cu: compilation failed (NVRTC ")) << why;
    EXPECT_NE(why.find("scale.cu(1): error"), std::string::npos) << "the user's line: " << why;
    EXPECT_NE(e.log().find("not_declared"), std::string::npos);
  }
  EXPECT_EQ(read_all(keep.path / "scale.prepared.cu"), prepared_source(bad));
  EXPECT_NE(read_all(keep.path / "scale.log").find("not_declared"), std::string::npos);
  EXPECT_FALSE(fs::exists(keep.path / "scale.cubin")) << "no image from a failed compile";

  auto good = request(kKernel, "sm_90");
  good.keep_dir = keep.path;
  good.defines = {"SCALE=2"};
  const CompileResult result = engine::compile_nvrtc(good);
  std::string options;
  for (const auto& o : result.options) options += o + "\n";
  EXPECT_EQ(read_all(keep.path / "scale.options"), options);
  EXPECT_NE(options.find("-DSCALE=2\n"), std::string::npos);
  EXPECT_EQ(read_all(keep.path / "scale.cubin"), result.image);
  // The PTX is kept where NVRTC gives one for a real architecture.
  if (fs::exists(keep.path / "scale.ptx")) {
    EXPECT_NE(read_all(keep.path / "scale.ptx").find(".entry scale("), std::string::npos);
  }
  for (const char* name : {"scale.prepared.cu", "scale.options", "scale.log", "scale.cubin"})
    EXPECT_NE(
        std::find(result.kept_files.begin(), result.kept_files.end(), (keep.path / name).string()),
        result.kept_files.end())
        << name;
}

TEST(NvrtcEngine, TheLibrarysFileIsOneThatExists) {
  CUDATOOL_REQUIRE_NVRTC();
  const std::string file = engine::nvrtc_library_file();
  EXPECT_TRUE(fs::is_regular_file(file)) << file;
  EXPECT_NE(fs::path(file).filename().string().find("nvrtc"), std::string::npos) << file;
}

}  // namespace
}  // namespace cudatool
