// End-to-end tests of `cudatool compat` through the real binary, on the -gencode matrix
// built with nvcc (tests/data/compat/make_matrix.sh): verdicts and exit codes, files that
// hold code for other GPUs beside code that runs, directories with links and packages,
// wheels, and bad input. Skips where nvcc was not there.
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "process.hpp"

using namespace cudatool::testing;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

fs::path matrix(const std::string& name) {
  return fs::path(CUDATOOL_COMPAT_DATA) / (name + ".fatbin");
}

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << bytes;
}

class CliCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(matrix("sm_80"))) GTEST_SKIP() << "no nvcc-built matrix";
    char pattern[] = "/tmp/cudatool-compat-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  // `compat ARGS` with no driver: targets come from --arch only.
  ProcessResult compat(std::vector<std::string> args) {
    args.insert(args.begin(), "compat");
    return run_cudatool(args, without_driver());
  }
  json compat_json(std::vector<std::string> args, int expected_exit) {
    args.push_back("--json");
    const ProcessResult r = compat(args);
    EXPECT_EQ(r.exit_code, expected_exit) << r.err;
    EXPECT_EQ(r.err, "");
    return json::parse(r.out);
  }
  fs::path dir_;
};

TEST_F(CliCompat, OlderCodeOnlyCannotRunAndSaysWhatToBuild) {
  const ProcessResult r = compat({"--arch", "sm_90", matrix("sm_80").string()});
  EXPECT_EQ(r.exit_code, 11) << r.err;
  EXPECT_NE(r.out.find("CANNOT RUN"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("hold only code for older GPUs (SASS sm_80; PTX none)"), std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("Fix: needs a build with sm_90 SASS or PTX of compute_90 or older"),
            std::string::npos)
      << r.out;
  // The same file on the GPUs it was built for.
  EXPECT_EQ(compat({"--arch", "sm_86,A100,RTX 4090", matrix("sm_80").string()}).exit_code, 0);
}

TEST_F(CliCompat, PtxRunsByJitAndRequireNativeFailsOnIt) {
  const json j = compat_json({"--arch", "sm_90", matrix("compute_80").string()}, 0);
  EXPECT_EQ(j["files"][0]["verdict"], "jit");
  EXPECT_EQ(j["files"][0]["verdicts"][0]["jit"], 1);
  EXPECT_GT(j["files"][0]["verdicts"][0]["jit_ptx_bytes"].get<int>(), 100);
  const ProcessResult r =
      compat({"--arch", "sm_90", "--require", "native", matrix("compute_80").string()});
  EXPECT_EQ(r.exit_code, 12);
  EXPECT_NE(r.out.find("JIT"), std::string::npos);
  EXPECT_EQ(compat({"--arch", "sm_80", "--require", "native", matrix("sm_80").string()}).exit_code,
            0);
}

TEST_F(CliCompat, PtxNewerThanTheDriverNamesTheDriverToInstall) {
  const json j =
      compat_json({"--arch", "sm_90", "--driver", "535.104.05", matrix("compute_90").string()}, 11);
  const json& v = j["files"][0]["verdicts"][0];
  EXPECT_EQ(v["reason"], "ptx_too_new");
  EXPECT_EQ(v["ptx_needed"], "9.0");
  EXPECT_EQ(v["fix"], "upgrade the driver to 580.65.06 or newer (CUDA 13.0)");
  EXPECT_EQ(j["driver"]["cuda_version"], "12.2");
  EXPECT_EQ(j["driver"]["source"], "--driver");
  // The same with --cuda, and PTX of an ISA no driver knows.
  EXPECT_EQ(compat({"--arch", "sm_90", "--cuda", "13.0", matrix("compute_90").string()}).exit_code,
            0);
  const json n = compat_json({"--arch", "sm_90", matrix("compute_80_isa99").string()}, 11);
  EXPECT_EQ(n["files"][0]["verdicts"][0]["reason"], "ptx_too_new");
}

TEST_F(CliCompat, ThePolicyFollowsTheEnvironmentAndTheFlag) {
  ProcessOptions o = without_driver();
  o.env["CUDA_FORCE_PTX_JIT"] = "1";
  ProcessResult r =
      run_cudatool({"compat", "--json", "--arch", "sm_90", matrix("sm_90").string()}, o);
  EXPECT_EQ(r.exit_code, 11) << r.out;
  EXPECT_EQ(json::parse(r.out)["ptx_jit"], "force_ptx_jit");
  EXPECT_EQ(
      compat({"--arch", "sm_90", "--ptx-jit", "disable", matrix("compute_90").string()}).exit_code,
      11);
  EXPECT_EQ(compat({"--arch", "sm_90", "--ptx-jit", "force", matrix("sm_90+compute_80").string()})
                .exit_code,
            0);
}

TEST_F(CliCompat, CodeForOtherGpusBesideCodeThatRunsIsNoFault) {
  // One file of two containers: sm_90 code, and a container for sm_100 only (a library's
  // Blackwell specialisation).
  write(dir_ / "libspecialised.so.1", read(matrix("sm_90")) + read(matrix("sm_100a")));
  const json j = compat_json({"--arch", "sm_90", (dir_ / "libspecialised.so.1").string()}, 0);
  const json& v = j["files"][0]["verdicts"][0];
  EXPECT_EQ(v["verdict"], "native");
  EXPECT_EQ(v["native"], 1);
  EXPECT_EQ(v["other_gpus"], 1);
  EXPECT_EQ(v["failed"], 0);
  // Every container for older GPUs only: a real gap.
  write(dir_ / "libold.so", read(matrix("sm_80")) + read(matrix("sm_75")));
  const json old = compat_json({"--arch", "sm_90", (dir_ / "libold.so").string()}, 11);
  EXPECT_EQ(old["files"][0]["verdicts"][0]["reason"], "predates");
  EXPECT_EQ(old["files"][0]["verdicts"][0]["failed"], 2);
  // Only newer code: not a specialisation either.
  write(dir_ / "libnew.so", read(matrix("sm_100a")));
  const json nw = compat_json({"--arch", "sm_90", (dir_ / "libnew.so").string()}, 11);
  EXPECT_EQ(nw["files"][0]["verdicts"][0]["reason"], "other_gpus_only");
  // LTO-IR alone loads nowhere.
  const json lto = compat_json({"--arch", "sm_80", matrix("lto_80").string()}, 11);
  EXPECT_EQ(lto["files"][0]["verdicts"][0]["reason"], "not_loadable");
  EXPECT_EQ(lto["files"][0]["lto_ir"][0], "compute_80");
}

TEST_F(CliCompat, DirectoriesAreWalkedOnceWithTheirPackages) {
  const fs::path site = dir_ / "site-packages";
  write(site / "fastpkg/lib/libfast.so", read(matrix("sm_90")));
  write(site / "oldpkg/liboldk.so.2", read(matrix("sm_80")));
  write(site / "oldpkg/__init__.py", "import os\n");
  write(site / "oldpkg/data.bin", "not a binary at all");
  write(site / "fastpkg-1.2.3.dist-info/RECORD",
        "fastpkg/lib/libfast.so,sha256=x,10\n\"fastpkg/__init__.py\",,\n");
  write(site / "oldpkg-0.9.dist-info/RECORD", "oldpkg/liboldk.so.2,,\n");
  fs::create_directory_symlink("..", site / "fastpkg/lib/loop");  // a cycle
  fs::create_symlink(site / "oldpkg/liboldk.so.2",
                     site / "oldpkg/liboldk.so");  // the same file again
  const json j = compat_json({"--arch", "H100", site.string()}, 11);
  ASSERT_EQ(j["files"].size(), 2u) << j.dump(1);
  std::map<std::string, json> by_name;
  for (const json& f : j["files"])
    by_name[fs::path(f["path"].get<std::string>()).filename().string()] = f;
  ASSERT_TRUE(by_name.count("libfast.so"));
  EXPECT_EQ(by_name["libfast.so"]["verdict"], "native");
  EXPECT_EQ(j["packages"][by_name["libfast.so"]["package"].get<int>()]["name"], "fastpkg");
  EXPECT_EQ(j["packages"][by_name["libfast.so"]["package"].get<int>()]["version"], "1.2.3");
  const std::string old_name = by_name.count("liboldk.so") ? "liboldk.so" : "liboldk.so.2";
  EXPECT_EQ(by_name[old_name]["verdict"], "cannot_run");
  EXPECT_EQ(j["summary"]["cannot_run"], 1);
  // Text: worst first, one line per file, the package beside it.
  const ProcessResult t = compat({"--arch", "H100", site.string()});
  EXPECT_EQ(t.out.find("CANNOT RUN"), t.out.find('\n', t.out.find('\n') + 1) + 1) << t.out;
  EXPECT_NE(t.out.find("[oldpkg 0.9]"), std::string::npos) << t.out;
}

TEST_F(CliCompat, AnInterpreterMeansItsSitePackages) {
  const fs::path venv = dir_ / "venv";
  fs::create_directories(venv / "bin");
  write(venv / "pyvenv.cfg", "home = /usr/bin\ninclude-system-site-packages = false\n");
  write(venv / "lib/python3.12/site-packages/pkg/libk.so", read(matrix("compute_80")));
  write(venv / "bin/python3.12", "#!/bin/sh\nexit 99\n");  // never run
  fs::permissions(venv / "bin/python3.12", fs::perms::owner_all);
  fs::create_symlink("python3.12", venv / "bin/python");
  const json j = compat_json({"--arch", "sm_90", (venv / "bin/python").string()}, 0);
  ASSERT_EQ(j["files"].size(), 1u);
  EXPECT_EQ(j["files"][0]["verdict"], "jit");
  // --python: the active environment.
  ProcessOptions o = without_driver();
  o.env["VIRTUAL_ENV"] = venv.string();
  const ProcessResult r = run_cudatool({"compat", "--python", "--arch", "sm_90", "--json"}, o);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(json::parse(r.out)["files"].size(), 1u);
}

TEST_F(CliCompat, WheelsAreReadInMemory) {
  const fs::path wheel = dir_ / "cudapkg-2.0-py3-none-manylinux_2_17_x86_64.whl";
  const ProcessResult made =
      run_process("/usr/bin/python3",
                  {"-c",
                   "import sys, zipfile\n"
                   "z = zipfile.ZipFile(sys.argv[1], 'w', zipfile.ZIP_DEFLATED)\n"
                   "z.writestr('cudapkg/lib/libold.so', open(sys.argv[2], 'rb').read())\n"
                   "z.writestr('cudapkg/lib/libjit.so.1', open(sys.argv[3], 'rb').read())\n"
                   "z.writestr('cudapkg/__init__.py', 'x = 1')\n"
                   "z.writestr('nvidia/cuda_runtime/lib/libcudart.so.12', b'a stub')\n"
                   "z.close()\n",
                   wheel.string(), matrix("sm_80").string(), matrix("compute_80").string()});
  ASSERT_EQ(made.exit_code, 0) << made.err;
  const ProcessResult r = compat({"--json", "--arch", "sm_90", wheel.string()});
  // Where libzip is missing at run time (exit 3) or its zip.h was at build time (a build
  // that reads no wheels, as on the GPU host's unpacked dependencies), there is nothing to test.
  if (r.exit_code == 3 || r.err.find("reads no wheels") != std::string::npos)
    GTEST_SKIP() << "no libzip: " << r.err;
  EXPECT_EQ(r.exit_code, 11) << r.err;
  const json j = json::parse(r.out);
  ASSERT_EQ(j["files"].size(), 2u);
  EXPECT_EQ(j["packages"][0]["name"], "cudapkg");
  EXPECT_EQ(j["packages"][0]["version"], "2.0");
  EXPECT_EQ(j["packages"][0]["cuda_runtime"], "12");
  EXPECT_EQ(j["files"][0]["path"], wheel.string() + "!cudapkg/lib/libold.so");
  // A file that is no zip is one line, exit 2.
  write(dir_ / "broken.whl", "PK\x03\x04 truncated");
  const ProcessResult b = compat({"--arch", "sm_90", (dir_ / "broken.whl").string()});
  EXPECT_EQ(b.exit_code, 2);
  EXPECT_EQ(count_lines(b.err), 1) << b.err;
}

TEST_F(CliCompat, BadInputIsOneLineAndAnExitCode) {
  write(dir_ / "notes.txt", "hello");
  for (const auto& [args, code] : std::vector<std::pair<std::vector<std::string>, int>>{
           {{"--arch", "sm_90", (dir_ / "notes.txt").string()}, 2},
           {{"--arch", "sm_90", (dir_ / "missing.so").string()}, 2},
           {{"--arch", "sm_9", matrix("sm_80").string()}, 2},
           {{"--arch", "Voodoo", matrix("sm_80").string()}, 2},
           {{"--arch", "sm_90", "--driver", "x.y", matrix("sm_80").string()}, 2},
           {{"--arch", "sm_90", "--driver", "535.1", "--cuda", "12.0", matrix("sm_80").string()},
            2},
           {{"--arch", "sm_90", "--require", "fast", matrix("sm_80").string()}, 2},
           {{"--arch", "sm_90"}, 2},
           {{matrix("sm_80").string()}, 3},  // no --arch, and no driver to ask
       }) {
    const ProcessResult r = compat(args);
    EXPECT_EQ(r.exit_code, code) << args.back() << ": " << r.err;
    EXPECT_EQ(count_lines(r.err), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  // A damaged file met in a walk is reported and fails the run (exit 10), the rest judged.
  std::string truncated = read(matrix("sm_90"));
  truncated.resize(truncated.size() / 2);
  write(dir_ / "walk/libbroken.so", truncated);
  write(dir_ / "walk/libfine.so", read(matrix("sm_90")));
  const json j = compat_json({"--arch", "sm_90", (dir_ / "walk").string()}, 10);
  EXPECT_EQ(j["summary"]["unreadable"], 1);
  EXPECT_EQ(j["summary"]["native"], 1);
}

TEST_F(CliCompat, ObjectsAreJudgedAsTheirDeviceLinkWillBe) {
  const json j = compat_json({"--arch", "sm_90", matrix("sm_90_relocatable").string()}, 0);
  EXPECT_EQ(j["files"][0]["verdict"], "native");
}

}  // namespace
