// What `compat` reads (lib/src/compat/compat_inputs.cpp): the paths given, directories
// walked (each file and directory once, links followed, cycles not, sources and text never
// opened), Python interpreters' site-packages, the packages owning the files (a .dist-info's
// RECORD, read as the CSV it is, whatever bytes it holds) and the CUDA runtimes they ship.
// On trees made in a temporary directory; wheels are test_wheel.cpp's.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "compat/compat_inputs.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compat/compat.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::ScopedEnv;
using cudatool::testing::TempDir;

namespace fs = std::filesystem;
namespace inputs = cudatool::detail;  // the one use of the internal namespace

void write_file(const fs::path& path, const std::string& text, bool executable = false) {
  fs::create_directories(path.parent_path());
  { std::ofstream(path, std::ios::binary) << text; }
  fs::permissions(
      path, executable ? fs::perms::owner_all : fs::perms::owner_read | fs::perms::owner_write);
}

std::vector<std::string> shown(const inputs::Inputs& in) {
  std::vector<std::string> out;
  for (const auto& f : in.files) out.push_back(f.shown);
  return out;
}

TEST(CompatInputs, NamesACudaBinaryMayHave) {
  for (const char* name : {"libk.so", "libcudart.so.12", "libk.so.1.2.3", "k.o", "libk.a",
                           "k.cubin", "k.fatbin", "addon.node", "weights.bin"}) {
    EXPECT_TRUE(inputs::may_hold_cuda_code(name, false)) << name;
    EXPECT_TRUE(inputs::may_hold_cuda_code(name, true)) << name;
  }
  // An executable of any other name may be a program with kernels, unless it is a script or data.
  for (const char* name : {"tool", "a.out", "nvidia-smi", "run.x86_64"})
    EXPECT_TRUE(inputs::may_hold_cuda_code(name, true)) << name;
  for (const char* name : {"tool", "a.out", "README", "kernel.cu"})
    EXPECT_FALSE(inputs::may_hold_cuda_code(name, false)) << name;
  for (const char* name : {"setup.py", "stub.pyi", "m.pyc", "run.sh", "notes.txt", "meta.json",
                           "k.h", "k.cuh", "table.csv", "page.html", "conf.yaml"})
    EXPECT_FALSE(inputs::may_hold_cuda_code(name, true)) << name;
}

TEST(CompatInputs, RecordIsCsvWithQuotedFieldsAndOnlyItsFirstColumnCounts) {
  EXPECT_EQ(inputs::record_paths("torch/lib/libc10.so,sha256=abc,123\n"
                                 "\"odd,name/lib.so\",sha256=def,4\r\n"
                                 "\"q\"\"uote.so\",,\n"
                                 "\n"
                                 ",,\n"
                                 "torch-2.0.dist-info/RECORD,,\n"
                                 "no/newline/at/end.so"),
            (std::vector<std::string>{"torch/lib/libc10.so", "odd,name/lib.so", "q\"uote.so",
                                      "torch-2.0.dist-info/RECORD", "no/newline/at/end.so"}));
  EXPECT_TRUE(inputs::record_paths("").empty());
  EXPECT_TRUE(inputs::record_paths("\n\n\r\n").empty());
  // A NUL in a path names no file: the row is dropped, the next one read.
  EXPECT_EQ(inputs::record_paths(std::string("bad\0name.so,,\nok.so,,\n", 22)),
            (std::vector<std::string>{"ok.so"}));
  // A quote never closed takes the rest: one field, nothing read past the end.
  EXPECT_EQ(inputs::record_paths("\"never closed,x\nnext.so").size(), 1u);
  EXPECT_EQ(inputs::record_paths("\"").size(), 0u);
  EXPECT_EQ(inputs::record_paths("\"\"\"").size(), 1u);
}

TEST(CompatInputs, ATreeIsWalkedInNameOrderEachFileOnceAndTextNeverListed) {
  TempDir dir{"cudatool-inputs"};
  const fs::path& d = dir.path;
  write_file(d / "b/libk.so", "k");
  fs::create_symlink("libk.so", d / "b/libk.so.1");  // the same file: listed once
  write_file(d / "a/tool", "#!", true);
  write_file(d / "a/script.py", "print()", true);
  write_file(d / "a/notes.txt", "hello");
  write_file(d / "a/data", "no mode, no extension");
  write_file(d / "c/deeper/k.cubin", "cubin");
  fs::create_symlink("..", d / "c/deeper/up");  // a cycle: walked once
  fs::create_symlink("missing.so", d / "c/dangling.so");
  const auto in = inputs::expand_inputs({d.string()});
  EXPECT_EQ(shown(in),
            (std::vector<std::string>{(d / "a/tool").string(), (d / "b/libk.so").string(),
                                      (d / "c/deeper/k.cubin").string()}));
  for (const auto& f : in.files) {
    EXPECT_FALSE(f.named) << f.path;
    EXPECT_EQ(f.package, SIZE_MAX) << f.path << ": no .dist-info here";
    EXPECT_TRUE(f.member.empty());
  }
  EXPECT_EQ(in.files[2].size, 5u);
  EXPECT_TRUE(in.packages.empty());
}

TEST(CompatInputs, FilesNamedAreReadWhateverTheirNameAndEachOnce) {
  TempDir dir{"cudatool-inputs"};
  write_file(dir.path / "notes.txt", "named: read even so");
  write_file(dir.path / "lib/libk.so", "k");
  const std::string notes = (dir.path / "notes.txt").string();
  const auto in = inputs::expand_inputs({notes, dir.path.string(), notes});
  ASSERT_EQ(in.files.size(), 2u);
  EXPECT_EQ(in.files[0].path, notes);
  EXPECT_TRUE(in.files[0].named);
  EXPECT_EQ(in.files[0].size, 19u);
  EXPECT_EQ(in.files[1].path, (dir.path / "lib/libk.so").string());
}

TEST(CompatInputs, WhatIsNoFileOrDirectoryIsAUsageErrorAndNeverWaitedOn) {
  TempDir dir{"cudatool-inputs"};
  ASSERT_EQ(::mkfifo((dir.path / "fifo").c_str(), 0600), 0);
  for (const std::string& bad : {(dir.path / "missing.so").string(), (dir.path / "fifo").string(),
                                 std::string("/dev/null")}) {
    try {
      inputs::expand_inputs({bad});
      ADD_FAILURE() << bad;
    } catch (const UsageError& e) {
      EXPECT_TRUE(std::string(e.what()).starts_with("\"" + bad + "\": ")) << e.what();
    }
  }
}

TEST(CompatInputs, PackagesOwnTheFilesTheirRecordNamesAndTheRuntimesTheyShip) {
  TempDir dir{"cudatool-inputs"};
  const fs::path site = dir.path / "site-packages";
  write_file(site / "torch/lib/libtorch_cuda.so", "t");
  write_file(site / "torch/lib/libstray.so", "not in the RECORD");
  write_file(site / "torch-2.11.0.dist-info/RECORD",
             "torch/lib/libtorch_cuda.so,sha256=x,1\n"
             "torch/__init__.py,sha256=y,2\n"
             "\"../bin/odd,name\",,\n");
  write_file(site / "nvidia_cuda_runtime_cu12-12.8.90.dist-info/RECORD",
             "nvidia/cuda_runtime/lib/libcudart.so.12,sha256=z,3\n");
  write_file(site / "nvidia/cuda_runtime/lib/libcudart.so.12", "rt");
  write_file(site / "unowned-1.0.dist-info/RECORD", std::string("\xff\xfe\0\"\n,\"", 7));
  const auto in = inputs::expand_inputs({site.string()});
  ASSERT_EQ(in.packages.size(), 3u);
  ASSERT_EQ(in.runtime_files.size(), 3u);
  std::size_t torch = SIZE_MAX, runtime = SIZE_MAX;
  for (std::size_t i = 0; i < in.packages.size(); ++i) {
    if (in.packages[i].name == "torch") torch = i;
    if (in.packages[i].name == "nvidia_cuda_runtime_cu12") runtime = i;
  }
  ASSERT_NE(torch, SIZE_MAX);
  ASSERT_NE(runtime, SIZE_MAX);
  EXPECT_EQ(in.packages[torch].version, "2.11.0");
  EXPECT_EQ(in.packages[torch].location, (site / "torch-2.11.0.dist-info").string());
  EXPECT_EQ(in.packages[runtime].version, "12.8.90");
  EXPECT_EQ(in.runtime_files[runtime], (std::vector<std::string>{"libcudart.so.12"}));
  EXPECT_TRUE(in.runtime_files[torch].empty());
  for (const auto& f : in.files) {
    const std::string name = fs::path(f.path).filename().string();
    const std::size_t expected = name == "libtorch_cuda.so"  ? torch
                                 : name == "libcudart.so.12" ? runtime
                                                             : SIZE_MAX;
    EXPECT_EQ(f.package, expected) << name;
  }
  EXPECT_EQ(in.files.size(), 3u);
}

TEST(CompatInputs, AnInterpreterIsReadAsItsSitePackages) {
  TempDir dir{"cudatool-inputs"};
  const fs::path venv = dir.path / "venv";
  write_file(venv / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
  write_file(venv / "bin/python3", "#!/bin/sh\n", true);
  write_file(venv / "lib/python3.12/site-packages/pkg/libp.so", "p");
  EXPECT_EQ(python_site_packages((venv / "bin/python3").string()),
            (std::vector<std::string>{(venv / "lib/python3.12/site-packages").string()}));
  const auto in = inputs::expand_inputs({(venv / "bin/python3").string()});
  EXPECT_EQ(
      shown(in),
      (std::vector<std::string>{(venv / "lib/python3.12/site-packages/pkg/libp.so").string()}));
  {
    ScopedEnv virtual_env("VIRTUAL_ENV", venv.string()), conda("CONDA_PREFIX", std::nullopt);
    EXPECT_EQ(active_python(), (venv / "bin/python3").string());
  }
  {
    ScopedEnv virtual_env("VIRTUAL_ENV", std::nullopt), conda("CONDA_PREFIX", std::nullopt),
        path("PATH", (dir.path / "nothing").string() + ":" + (venv / "bin").string());
    EXPECT_EQ(active_python(), (venv / "bin/python3").string());
  }
  // A venv without its site-packages: said, not an empty run.
  const fs::path empty = dir.path / "empty";
  write_file(empty / "pyvenv.cfg", "home = /usr/bin\n");
  write_file(empty / "bin/python3.12", "#!/bin/sh\n", true);
  EXPECT_THROW(inputs::expand_inputs({(empty / "bin/python3.12").string()}), UsageError);
}

}  // namespace
}  // namespace cudatool
