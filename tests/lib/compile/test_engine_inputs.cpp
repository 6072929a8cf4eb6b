// What an engine is given (lib/src/compile/engine_inputs.cpp): the request's output and
// target, the options for NVRTC and for nvcc, the prepared source with its #line name (any
// bytes in a file name), the stem of intermediate files, the intermediate files themselves
// (written whole or not at all, never through a symbolic link) and the compile failure.
// Needs neither NVRTC nor a GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compile/compiler.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::TempDir;

namespace fs = std::filesystem;
namespace engine = cudatool::detail;  // the one use of the internal namespace

CompileRequest request(std::string source, const std::string& arch = "sm_90") {
  CompileRequest r;
  r.source = std::move(source);
  r.arch = Arch::parse(arch, "arch");
  return r;
}

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// The position of `option` in `options`, or -1.
long position(const std::vector<std::string>& options, const std::string& option) {
  const auto it = std::find(options.begin(), options.end(), option);
  return it == options.end() ? -1 : static_cast<long>(it - options.begin());
}

TEST(CompileRequestChecks, PreparedSourceKeepsLineNumbers) {
  auto r = request("int x;\n");
  r.source_name = "a \"q\".cu";
  EXPECT_EQ(prepared_source(r), "extern \"C\" {\n#line 1 \"a \\\"q\\\".cu\"\nint x;\n}\n");
  r.extern_c = false;
  EXPECT_EQ(prepared_source(r), "#line 1 \"a \\\"q\\\".cu\"\nint x;\n");
}

TEST(EngineInputs, ASourceWithoutAFinalNewlineStillClosesItsWrap) {
  auto r = request("int x;");
  EXPECT_EQ(prepared_source(r), "extern \"C\" {\n#line 1 \"kernel.cu\"\nint x;\n}\n");
}

TEST(EngineInputs, LineDirectiveNamesAreOneStringLiteralWhateverTheBytes) {
  EXPECT_EQ(engine::line_directive_name("dir\\k.cu"), "dir\\\\k.cu");
  EXPECT_EQ(engine::line_directive_name("a\nb\r\x7f.cu"), "a?b??.cu");
  EXPECT_EQ(engine::line_directive_name("k\xc3\xa9rnel.cu"), "k\xc3\xa9rnel.cu");  // UTF-8 kept
  EXPECT_EQ(engine::line_directive_name("\xe2\x82\xac.cu"), "\xe2\x82\xac.cu");
  EXPECT_EQ(engine::line_directive_name("bad\xff\xc3.cu"), "bad??.cu");  // not UTF-8
  EXPECT_EQ(engine::line_directive_name("cut\xe2\x82"), "cut??");        // ends mid-character
  EXPECT_EQ(engine::line_directive_name("\xf0\x9f\x98"), "???");
  // Whatever the name, the directive is one line and one literal: no bare quote survives.
  std::string every_byte;
  for (int b = 1; b < 256; ++b) every_byte += static_cast<char>(b);
  const std::string name = engine::line_directive_name(every_byte);
  EXPECT_EQ(name.find('\n'), std::string::npos);
  for (std::size_t i = 0; i < name.size(); ++i)
    if (name[i] == '"') {
      EXPECT_EQ(name[i - 1], '\\') << i;
    }
}

TEST(EngineInputs, StemsAreSafeFileNames) {
  EXPECT_EQ(engine::stem_of("dir/saxpy.cu"), "saxpy");
  EXPECT_EQ(engine::stem_of("my kernel;rm -rf.cu"), "my_kernel_rm_-rf");
  EXPECT_EQ(engine::stem_of(""), "kernel");
  EXPECT_EQ(engine::stem_of(".hidden.cu"), "kernel.hidden");
  EXPECT_EQ(engine::stem_of("$(x)`y`.cu"), "__x__y_");
}

TEST(EngineInputs, OutputAndTargetFollowTheArchitecture) {
  auto r = request("", "sm_90");
  EXPECT_EQ(engine::output_of(r), OutputKind::cubin);
  EXPECT_EQ(engine::target_of(r).str(), "sm_90");
  r.output = OutputKind::ptx;  // PTX of a real architecture: compiled for its virtual one
  EXPECT_EQ(engine::target_of(r).str(), "compute_90");
  r = request("", "compute_100");
  EXPECT_EQ(engine::output_of(r), OutputKind::ptx);
  EXPECT_EQ(engine::target_of(r).str(), "compute_100");
  r = request("", "sm_90a");
  EXPECT_EQ(engine::target_of(r).str(), "sm_90a");
}

TEST(EngineInputs, EachEngineGetsItsOwnSpellingOfEveryOption) {
  auto r = request("__global__ void k() {}", "sm_90");
  r.nvrtc_options = {"--nvrtc-only"};
  r.nvcc_options = {"--nvcc-only"};
  r.extra_options = {"--extra"};
  r.rdc = r.device_debug = r.lineinfo = r.fast_math = true;
  r.ptxas_options = {"-v"};
  r.std = "c++17";
  r.maxrregcount = 64;
  r.defines = {"N=4"};
  r.source_dir = "/src/project";
  r.include_dirs = {"/opt/include"};
  const auto nvrtc = build_options(r, Engine::nvrtc);
  const auto nvcc = build_options(r, Engine::nvcc);
  for (const char* both : {"--extra", "-rdc=true", "-G", "-lineinfo", "--use_fast_math",
                           "--ptxas-options=-v", "--maxrregcount=64", "-DN=4", "-I/opt/include"}) {
    EXPECT_GE(position(nvrtc, both), 0) << both;
    EXPECT_GE(position(nvcc, both), 0) << both;
  }
  EXPECT_EQ(nvrtc.front(), "--nvrtc-only");
  EXPECT_EQ(position(nvrtc, "--nvcc-only"), -1);
  EXPECT_EQ(nvcc.front(), "--nvcc-only");
  EXPECT_EQ(position(nvcc, "--nvrtc-only"), -1);
  EXPECT_GE(position(nvrtc, "--gpu-architecture=sm_90"), 0);
  EXPECT_GE(position(nvrtc, "--std=c++17"), 0);
  EXPECT_GE(position(nvcc, "-cubin"), 0);
  EXPECT_GE(position(nvcc, "-arch=sm_90"), 0);
  EXPECT_GE(position(nvcc, "-std=c++17"), 0);
  // The source's directory is searched before any -I, as nvcc searches the including file's.
  EXPECT_GE(position(nvrtc, "-I/src/project"), 0);
  EXPECT_LT(position(nvrtc, "-I/src/project"), position(nvrtc, "-I/opt/include"));
  EXPECT_LT(position(nvcc, "-I/src/project"), position(nvcc, "-I/opt/include"));

  r = request("__global__ void k() {}", "compute_90");
  EXPECT_GE(position(build_options(r, Engine::nvcc), "-ptx"), 0);
  EXPECT_GE(position(build_options(r, Engine::nvrtc), "-I."), 0) << "no directory: the current one";
}

TEST(EngineInputs, NvccCompilesAPlainFileWhereItIsAndAnythingElseFromACopy) {
  TempDir dir{"cudatool-inputs"};
  auto r = request("__global__ void k() {}");
  EXPECT_FALSE(engine::compiles_in_place(r)) << "standard input";
  r.source_path = dir.path / "k.cu";
  r.source_dir = dir.path;
  r.extern_c = true;
  EXPECT_FALSE(engine::compiles_in_place(r)) << "the extern \"C\" wrap is a new text";
  r.extern_c = false;
  EXPECT_TRUE(engine::compiles_in_place(r));
  // nvcc finds the file's directory by itself: no -I for it.
  EXPECT_EQ(position(build_options(r, Engine::nvcc), "-I" + dir.path.string()), -1);
  EXPECT_GE(position(build_options(r, Engine::nvrtc), "-I" + dir.path.string()), 0);
  r.source_path = dir.path / "line\nbreak.cu";  // nvcc's shell would split it
  EXPECT_FALSE(engine::compiles_in_place(r));
  EXPECT_GE(position(build_options(r, Engine::nvcc), "-I" + dir.path.string()), 0);
}

TEST(EngineInputs, IntermediatesAreWrittenWholeAndNeverThroughALink) {
  TempDir dir{"cudatool-inputs"};
  const fs::path file = dir.path / "k.ptx";
  engine::write_intermediate(file, "first, longer text");
  engine::write_intermediate(file, "second");
  EXPECT_EQ(read_all(file), "second");
  EXPECT_THROW(engine::write_intermediate(dir.path / "missing" / "k.ptx", "x"), UsageError);
  // A link planted where an intermediate goes (a shared --keep directory): refused, and
  // its target is untouched.
  const fs::path target = dir.path / "victim";
  { std::ofstream(target) << "keep me"; }
  fs::create_symlink(target, dir.path / "k.cubin");
  EXPECT_THROW(engine::write_intermediate(dir.path / "k.cubin", "x"), UsageError);
  EXPECT_EQ(read_all(target), "keep me");
}

TEST(EngineInputs, ACompileFailureNamesTheSourceCompilerTargetAndFirstError) {
  auto r = request("", "sm_90");
  r.source_name = "saxpy.cu";
  const std::string log =
      "saxpy.cu(3): warning: unused\nsaxpy.cu(4): error: identifier \"y\" "
      "is undefined\nsaxpy.cu(5): error: second\n";
  try {
    engine::throw_compile_error(r, log, {"-arch=sm_90"}, "nvcc");
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(),
                 "saxpy.cu: compilation failed (nvcc, sm_90): saxpy.cu(4): error: "
                 "identifier \"y\" is undefined");
    EXPECT_EQ(e.log(), log);
    EXPECT_EQ(e.options(), std::vector<std::string>{"-arch=sm_90"});
  }
  try {
    engine::throw_compile_error(r, "no such word here\n", {}, "nvrtc");
  } catch (const CompileError& e) {
    EXPECT_STREQ(e.what(), "saxpy.cu: compilation failed (nvrtc, sm_90)");
  }
}

}  // namespace
}  // namespace cudatool
