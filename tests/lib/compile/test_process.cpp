// The process runner (compile/process.hpp): which arguments nvcc would hand to a shell in a
// form it acts on, the cap on a child's output, and signals forwarded to the child's
// process group (issue 20, items 5, 10 and 16). The children here are small shell scripts
// run as programs; tests/apps/test_cli_compile.cpp runs the real nvcc.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/compile/process.hpp"
#include "process.hpp"

namespace cudatool {
namespace {
namespace fs = std::filesystem;

class Process : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-process-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string script(const std::string& name, const std::string& body) const {
    const fs::path p = dir_ / name;
    std::ofstream(p) << "#!/bin/sh\n" << body;
    fs::permissions(p, fs::perms::owner_all);
    return p.string();
  }
  fs::path dir_;
};

TEST(NvccShellHazard, EachQuotingRefusesWhatAShellActsOnThere) {
  struct Row {
    std::string value;
    bool quoted, define, bare;  // refused under each quoting
  };
  for (const auto& row : std::vector<Row>{
           {"plain-value_1.0", false, false, false},
           {"a;touch m", false, false, true},
           {"a&&touch m", false, false, true},
           {"a|touch m", false, false, true},
           {"$(touch m)", true, true, true},
           {"${HOME}", true, true, true},
           {"`touch m`", true, true, true},
           {"a\ntouch m", true, true, true},
           {"a\\\"", true, true, true},
           {"say \"hi\"", true, false, true},
           {"with space", false, false, true},
           {"-O3", false, false, false},
       }) {
    SCOPED_TRACE(row.value);
    EXPECT_EQ(nvcc_shell_hazard(row.value, NvccQuoting::double_quoted).has_value(), row.quoted);
    EXPECT_EQ(nvcc_shell_hazard(row.value, NvccQuoting::define).has_value(), row.define);
    EXPECT_EQ(nvcc_shell_hazard(row.value, NvccQuoting::bare).has_value(), row.bare);
  }
}

TEST(NvccArgumentHazard, ArgumentsAreCheckedByTheQuotingNvccGivesThem) {
  EXPECT_FALSE(
      nvcc_argument_hazard({"-cubin", "-arch=sm_90", "-DX=a;b", "-DV=\"1\"", "-I/a b/c;d",
                            "--ptxas-options=-v", "-o", "/tmp/o u.cubin", "/tmp/src dir/k.cu"}));
  for (const std::vector<std::string>& bad : std::vector<std::vector<std::string>>{
           {"-DX=$(touch m)"},
           {"-D", "X=`id`"},
           {"-I/inc`touch m`"},
           {"-I", "/inc$(id)"},
           {"--ptxas-options=-v;touch m"},
           {"-Xcompiler=-Wall|id"},
           {"-o", "/tmp/$(id).cubin"},
           {"--keep-dir=/tmp/`id`"},
           {"/tmp/src`id`/k.cu"},
       }) {
    SCOPED_TRACE(bad.back());
    const auto problem = nvcc_argument_hazard(bad);
    ASSERT_TRUE(problem);
    EXPECT_NE(problem->find('"'), std::string::npos) << "the argument is quoted: " << *problem;
  }
}

TEST_F(Process, AnArgumentAShellWouldActOnIsRefusedAndNothingRuns) {
  const fs::path marker = dir_ / "ran";
  const std::string program = script("program", "touch '" + marker.string() + "'\n");
  EXPECT_THROW(run_nvcc_process({program, "-DX=$(touch m)"}), UsageError);
  EXPECT_FALSE(fs::exists(marker));
  EXPECT_EQ(run_nvcc_process({program, "-DX=a;b"}).status, 0);
  EXPECT_TRUE(fs::exists(marker));
}

TEST(CapCompilerOutput, KeepsTheHeadAndTheTailAndSaysWhatWasLeftOut) {
  EXPECT_EQ(cap_compiler_output("short", 100), "short");
  std::string big = "HEAD" + std::string(1000, 'x') + "TAIL";
  const std::string capped = cap_compiler_output(big, 100);
  EXPECT_TRUE(capped.starts_with("HEAD")) << capped;
  EXPECT_TRUE(capped.ends_with("TAIL")) << capped;
  EXPECT_NE(capped.find("[cudatool: 908 bytes of compiler output left out]"), std::string::npos)
      << capped;
  EXPECT_LT(capped.size(), 100u + 64);
}

TEST_F(Process, AChildsOutputIsCappedWhileItIsRead) {
  // 20 MB of output: what is kept is the bound, the head and the tail.
  const std::string program =
      script("chatty", "echo FIRST\nhead -c 20000000 /dev/zero | tr '\\0' x\necho; echo LAST\n");
  const ChildResult r = run_nvcc_process({program});
  EXPECT_EQ(r.status, 0);
  EXPECT_LE(r.output.size(), kMaxChildOutputBytes + 100);
  EXPECT_TRUE(r.output.starts_with("FIRST\n"));
  EXPECT_TRUE(r.output.ends_with("LAST\n"));
  EXPECT_NE(r.output.find("bytes of compiler output left out]"), std::string::npos);
}

TEST_F(Process, ASignalIsForwardedToTheChildsGroupAndEndsTheRunAsInterrupted) {
  // The child starts a grandchild (as nvcc starts cicc and ptxas) and waits for it.
  const fs::path pid_file = dir_ / "grandchild.pid";
  const std::string program =
      script("slow", "sleep 60 &\necho $! > '" + pid_file.string() + ".tmp'\nmv '" +
                         pid_file.string() + ".tmp' '" + pid_file.string() + "'\nwait\n");
  std::thread sender([&] {
    for (int i = 0; i < 200 && !fs::exists(pid_file); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(25));
    ::kill(::getpid(), SIGTERM);
  });
  try {
    run_nvcc_process({program});
    ADD_FAILURE() << "not interrupted";
  } catch (const InterruptedError& e) {
    EXPECT_EQ(e.signal_number(), SIGTERM);
    EXPECT_NE(std::string(e.what()).find("SIGTERM"), std::string::npos) << e.what();
  }
  sender.join();
  ASSERT_TRUE(fs::exists(pid_file));
  pid_t grandchild = 0;
  std::ifstream(pid_file) >> grandchild;
  ASSERT_GT(grandchild, 0);
  // The grandchild got the signal too (it is gone, or a zombie about to be reaped by init).
  EXPECT_TRUE(testing::wait_until_gone(grandchild))
      << "the grandchild " << grandchild << " still runs";
  // The handler is gone with the child: SIGTERM's disposition is what it was.
  struct sigaction now {};
  ::sigaction(SIGTERM, nullptr, &now);
  EXPECT_EQ(now.sa_handler, SIG_DFL);
}

}  // namespace
}  // namespace cudatool
