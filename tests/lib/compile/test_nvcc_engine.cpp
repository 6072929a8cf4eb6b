// The nvcc engine (lib/src/compile/nvcc_engine.cpp): which nvcc it finds, its version, the
// text nvcc is given (the prepared source, or the user's file where it is), its output read
// back, its failures (a compile error with nvcc's first error line, an nvcc that writes
// nothing, a file edited while it compiled), --keep, and no temporary directory left behind.
// Against fake nvccs (shell scripts in a temporary directory, named by CUDATOOL_NVCC); the
// real nvcc is the CLI's and the GPU tests' (test_cli_compile.cpp, test_compile_gpu.cpp).
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compile/compiler.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::ScopedEnv;
using cudatool::testing::TempDir;

namespace fs = std::filesystem;
namespace engine = cudatool::detail;  // the one use of the internal namespace

// Sets an environment variable for one scope, restoring what was there.

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  { std::ofstream(path, std::ios::binary) << text; }
  if (executable) fs::permissions(path, fs::perms::owner_all);
}

// A fake nvcc at `dir`/`name`: answers --version as nvcc 13.0.88 does, records its
// arguments in `dir`/args, then runs `body` with $out (the -o file) and $src (the input).
fs::path fake_nvcc(const fs::path& dir, const std::string& name, const std::string& body) {
  const fs::path path = dir / name;
  write_file(path,
             "#!/bin/sh\n"
             "if [ \"$1\" = --version ]; then\n"
             "  echo 'nvcc: NVIDIA (R) Cuda compiler driver'\n"
             "  echo 'Cuda compilation tools, release 13.0, V13.0.88'\n"
             "  exit 0\n"
             "fi\n"
             "out=; prev=; src=\n"
             "for a in \"$@\"; do [ \"$prev\" = -o ] && out=$a; prev=$a; src=$a; done\n"
             "printf '%s\\n' \"$@\" > \"$(dirname \"$0\")/args\"\n" +
                 body + "\n",
             true);
  return path;
}

CompileRequest request(std::string source, const std::string& arch = "sm_90") {
  CompileRequest r;
  r.source = std::move(source);
  r.source_name = "saxpy.cu";
  r.arch = Arch::parse(arch, "arch");
  return r;
}

TEST(NvccEngine, CudatoolNvccFirstThenTheToolkitRootsThenPath) {
  TempDir dir{"cudatool-nvcc-test"};
  const fs::path named = fake_nvcc(dir.path, "nvcc-named", "exit 0");
  fs::create_directories(dir.path / "home/bin");
  const fs::path home = fake_nvcc(dir.path / "home/bin", "nvcc", "exit 0");
  fs::create_directories(dir.path / "path-a");
  fs::create_directories(dir.path / "path-b");
  const fs::path on_path = fake_nvcc(dir.path / "path-b", "nvcc", "exit 0");
  write_file(dir.path / "path-a/nvcc", "not executable");
  {
    ScopedEnv nvcc("CUDATOOL_NVCC", named.string()),
        cuda_home("CUDA_HOME", (dir.path / "home").string());
    EXPECT_EQ(engine::find_nvcc(), named.string());
  }
  {
    ScopedEnv nvcc("CUDATOOL_NVCC", std::nullopt),
        cuda_home("CUDA_HOME", (dir.path / "home").string()), cuda_path("CUDA_PATH", std::nullopt);
    EXPECT_EQ(engine::find_nvcc(), home.string());
  }
  {
    ScopedEnv nvcc("CUDATOOL_NVCC", std::nullopt), cuda_home("CUDA_HOME", std::nullopt),
        cuda_path("CUDA_PATH", (dir.path / "nowhere").string()),
        path("PATH", (dir.path / "path-a").string() + "::" + (dir.path / "path-b").string());
    // /usr/local/cuda comes before PATH: only where there is none is PATH's found.
    const std::string found = engine::find_nvcc();
    const std::string expected =
        fs::exists("/usr/local/cuda/bin/nvcc") ? "/usr/local/cuda/bin/nvcc" : on_path.string();
    EXPECT_EQ(found, expected) << "path-a's nvcc is not executable";
  }
  {
    ScopedEnv nvcc("CUDATOOL_NVCC", (dir.path / "path-a/nvcc").string());
    try {
      engine::find_nvcc();
      ADD_FAILURE() << "a CUDATOOL_NVCC that cannot run is not replaced by another nvcc";
    } catch (const LibraryNotFoundError& e) {
      EXPECT_NE(std::string(e.what()).find("nvcc not found (CUDATOOL_NVCC="), std::string::npos);
      EXPECT_EQ(e.library(), "nvcc");
    }
  }
  ScopedEnv nvcc("CUDATOOL_NVCC", dir.path.string());  // a directory
  EXPECT_THROW(engine::find_nvcc(), LibraryNotFoundError);
}

TEST(NvccEngine, NvccCompilesThePreparedTextAndItsOutputIsTheImage) {
  TempDir dir, tmp;
  // This nvcc's output is its input: the image shows the text nvcc was given.
  const fs::path nvcc = fake_nvcc(dir.path, "nvcc", "cp \"$src\" \"$out\"");
  ScopedEnv named("CUDATOOL_NVCC", nvcc.string()), tmpdir("TMPDIR", tmp.path.string());
  auto r = request("__global__ void k(float* x) { x[0] = 1; }\n");
  r.defines = {"N=4"};
  const CompileResult result = engine::compile_nvcc(r);
  EXPECT_EQ(result.image, prepared_source(r));
  EXPECT_EQ(result.compiler, "nvcc");
  EXPECT_EQ(result.compiler_version, "13.0.88");
  EXPECT_EQ(result.output, OutputKind::cubin);
  EXPECT_EQ(result.options, build_options(r, Engine::nvcc));
  const std::string args = read_all(dir.path / "args");
  EXPECT_NE(args.find("-DN=4\n"), std::string::npos) << args;
  EXPECT_NE(args.find("-cubin\n-arch=sm_90\n"), std::string::npos) << args;
  EXPECT_NE(args.find("/saxpy.cubin\n"), std::string::npos) << args;
  EXPECT_TRUE(fs::is_empty(tmp.path)) << "the temporary directory is removed";
  EXPECT_TRUE(result.kept_files.empty());
}

TEST(NvccEngine, AFileIsCompiledWhereItIsAndAnEditMeanwhileIsRefused) {
  TempDir dir, tmp;
  const std::string text = "__global__ void k() {}\n";
  write_file(dir.path / "k.cu", text);
  auto r = request(text);
  r.extern_c = false;
  r.source_path = dir.path / "k.cu";
  r.source_dir = dir.path;
  ScopedEnv tmpdir("TMPDIR", tmp.path.string());
  {
    ScopedEnv named("CUDATOOL_NVCC", fake_nvcc(dir.path, "nvcc", "cp \"$src\" \"$out\"").string());
    const CompileResult result = engine::compile_nvcc(r);
    EXPECT_EQ(result.image, text) << "the user's file, not a copy with a #line";
    EXPECT_NE(read_all(dir.path / "args").find((dir.path / "k.cu").string() + "\n"),
              std::string::npos);
  }
  ScopedEnv named("CUDATOOL_NVCC", fake_nvcc(dir.path, "nvcc-edits",
                                             "echo '// edited' >> \"$src\"; cp \"$src\" \"$out\"")
                                       .string());
  EXPECT_THROW(engine::compile_nvcc(r), InputError);
}

TEST(NvccEngine, FailuresAreTheCompilersOrNamedAsABrokenNvcc) {
  TempDir dir, tmp;
  ScopedEnv tmpdir("TMPDIR", tmp.path.string());
  const auto r = request("__global__ void k() { undefined(); }\n");
  {
    ScopedEnv named("CUDATOOL_NVCC",
                    fake_nvcc(dir.path, "nvcc-fails",
                              "echo 'saxpy.cu(1): warning: first'; echo 'saxpy.cu(1): error: "
                              "identifier \"undefined\" is undefined'; exit 2")
                        .string());
    try {
      engine::compile_nvcc(r);
      ADD_FAILURE() << "nvcc failed";
    } catch (const CompileError& e) {
      EXPECT_STREQ(e.what(),
                   "saxpy.cu: compilation failed (nvcc 13.0.88, sm_90): saxpy.cu(1): error: "
                   "identifier \"undefined\" is undefined");
      EXPECT_NE(e.log().find("warning: first"), std::string::npos);
    }
  }
  {
    ScopedEnv named("CUDATOOL_NVCC", fake_nvcc(dir.path, "nvcc-silent", "exit 0").string());
    try {
      engine::compile_nvcc(r);
      ADD_FAILURE() << "nvcc wrote nothing";
    } catch (const LibraryNotFoundError& e) {
      EXPECT_NE(std::string(e.what()).find("exited 0 but wrote no cubin"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_TRUE(fs::is_empty(tmp.path)) << "no temporary directory left after a failure";
  ScopedEnv named("CUDATOOL_NVCC", fake_nvcc(dir.path, "nvcc-ok", "cp \"$src\" \"$out\"").string());
  ScopedEnv no_tmp("TMPDIR", (dir.path / "no-such-dir").string());
  try {
    engine::compile_nvcc(r);
    ADD_FAILURE() << "no temporary directory can be made";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("TMPDIR="), std::string::npos) << e.what();
  }
}

TEST(NvccEngine, KeepDirHoldsNvccsIntermediatesListedInOrder) {
  TempDir dir, keep;
  ScopedEnv named(
      "CUDATOOL_NVCC",
      fake_nvcc(dir.path, "nvcc", "cp \"$src\" \"$out\"; : > \"$(dirname \"$out\")/saxpy.ii\"")
          .string());
  auto r = request("__global__ void k() {}\n", "compute_90");
  r.keep_dir = keep.path;
  const CompileResult result = engine::compile_nvcc(r);
  EXPECT_EQ(result.output, OutputKind::ptx);
  const std::string args = read_all(dir.path / "args");
  EXPECT_NE(args.find("--keep\n--keep-dir=" + keep.path.string() + "\n"), std::string::npos)
      << args;
  const std::vector<std::string> expected = {(keep.path / "saxpy.cu").string(),
                                             (keep.path / "saxpy.ii").string(),
                                             (keep.path / "saxpy.ptx").string()};
  EXPECT_EQ(result.kept_files, expected);
}

}  // namespace
}  // namespace cudatool
