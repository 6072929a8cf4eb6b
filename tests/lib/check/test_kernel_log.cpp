// Reading the kernel log (lib/src/check/kernel_log.cpp): /dev/kmsg's records (here a file in
// its format, CUDATOOL_TEST_KMSG), else journalctl's lines (a script, CUDATOOL_TEST_JOURNALCTL)
// run without a shell and stopped at a deadline; every source tried named where none reads.
// Needs a build with test hooks (base/test_hooks.hpp); skipped in one without. The parsing of
// one line is test_xid.cpp's.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>

#include "cudatool/base/test_hooks.hpp"
#include "cudatool/check/xid.hpp"

namespace cudatool::check {
namespace {

namespace fs = std::filesystem;

class KernelLogTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!test_hooks_enabled()) GTEST_SKIP() << "a build without test hooks";
    std::string pattern = (fs::temp_directory_path() / "cudatool-kmsg-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    ::unsetenv("CUDATOOL_TEST_KMSG");
    ::unsetenv("CUDATOOL_TEST_JOURNALCTL");
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  std::string write(const std::string& name, const std::string& text, bool executable = false) {
    { std::ofstream(dir_ / name, std::ios::binary) << text; }
    if (executable) fs::permissions(dir_ / name, fs::perms::owner_all);
    return (dir_ / name).string();
  }
  void sources(const std::string& kmsg, const std::string& journalctl) {
    ::setenv("CUDATOOL_TEST_KMSG", kmsg.c_str(), 1);
    ::setenv("CUDATOOL_TEST_JOURNALCTL", journalctl.c_str(), 1);
  }
  fs::path dir_;
};

// Records as /dev/kmsg gives them: a header, the message, continuation lines of KEY=value.
const std::string kRecords =
    "6,1,100000,-;Linux version 6.1.0\n"
    "6,900,5000000,-;NVRM: GPU at PCI:0000:01:00: GPU-10111213-1415-1617-1819-1a1b1c1d1e00\n"
    "4,901,5000100,-;NVRM: Xid (PCI:0000:01:00): 13, pid=4242, name=python3, Graphics SM "
    "Warp Exception\n"
    " SUBSYSTEM=pci\n"
    " DEVICE=+pci:0000:01:00.0\n"
    "4,903,6000000,-;NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has "
    "fallen off the bus.\n"
    "6,906,7100000,-;usb 1-1: new high-speed USB device number 2 using xhci_hcd";  // no newline

TEST_F(KernelLogTest, AKmsgFileIsReadWholeWithItsXidsAndGpus) {
  sources(write("kmsg", kRecords), (dir_ / "no-journalctl").string());
  const KernelLog log = read_kernel_log();
  EXPECT_TRUE(log.readable) << log.why_not;
  EXPECT_EQ(log.source, (dir_ / "kmsg").string());
  EXPECT_EQ(log.why_not, "");
  EXPECT_EQ(log.xids.lines, 7u) << "every line, continuation lines and the unended last one too";
  EXPECT_EQ(log.xids.bytes, kRecords.size() + 1) << "each line with its newline";
  ASSERT_EQ(log.xids.events.size(), 2u);
  EXPECT_EQ(log.xids.events[0].xid, 13u);
  EXPECT_EQ(log.xids.events[0].pci_device, "00000000:01:00");
  ASSERT_TRUE(log.xids.events[0].uptime_s.has_value());
  EXPECT_NEAR(*log.xids.events[0].uptime_s, 5.0001, 1e-9);
  EXPECT_EQ(log.xids.events[1].xid, 79u);
  EXPECT_EQ(log.xids.uuid_of.at("00000000:01:00"), "GPU-10111213-1415-1617-1819-1a1b1c1d1e00");
  EXPECT_FALSE(log.xids.truncated);
}

TEST_F(KernelLogTest, ALineLongerThanAMebibyteIsReadInPieces) {
  const std::string xid = "4,1,1000,-;NVRM: Xid (PCI:0000:01:00): 31, pid=1, name=x, MMU Fault\n";
  sources(write("kmsg", std::string(3u << 20, 'x') + "\n" + xid), (dir_ / "none").string());
  const KernelLog log = read_kernel_log();
  EXPECT_TRUE(log.readable) << log.why_not;
  ASSERT_EQ(log.xids.events.size(), 1u) << "the Xid after the long line is still read";
  EXPECT_EQ(log.xids.events[0].xid, 31u);
}

TEST_F(KernelLogTest, NoSourceReadsAndEachIsNamedWithItsError) {
  sources((dir_ / "no-kmsg").string(), (dir_ / "no-journalctl").string());
  KernelLog log = read_kernel_log();
  EXPECT_FALSE(log.readable);
  EXPECT_EQ(log.why_not, (dir_ / "no-kmsg").string() + ": No such file or directory; " +
                             (dir_ / "no-journalctl").string() + ": No such file or directory");
  EXPECT_TRUE(log.xids.events.empty());
  // An empty file is no log: the journal is asked, and a journalctl that is not executable
  // is not run.
  sources(write("empty", ""), write("journalctl-not-executable", "#!/bin/sh\necho x\n"));
  log = read_kernel_log();
  EXPECT_FALSE(log.readable);
  EXPECT_EQ(log.why_not, (dir_ / "empty").string() + ": empty; " +
                             (dir_ / "journalctl-not-executable").string() + ": Permission denied");
}

TEST_F(KernelLogTest, TheJournalWhereKmsgIsRefusedWithItsArguments) {
  write("journal.txt",
        "[    5.000100] node kernel: NVRM: Xid (PCI:0000:02:00): 119, pid=1, name=python, Timeout "
        "after 6s of waiting for RPC response from GPU1 GSP!\n"
        "[    6.000000] node kernel: usb 1-1: new device\n");
  const std::string journalctl =
      write("journalctl",
            "#!/bin/sh\n[ \"$*\" = \"-k -b 0 -o short-monotonic --no-pager -q\" ] || "
            "{ echo \"args: $*\" >&2; exit 1; }\ncat " +
                (dir_ / "journal.txt").string() + "\n",
            true);
  sources((dir_ / "no-kmsg").string(), journalctl);
  const KernelLog log = read_kernel_log();
  EXPECT_TRUE(log.readable) << log.why_not;
  EXPECT_EQ(log.source, journalctl + " -k -b 0");
  EXPECT_EQ(log.xids.lines, 2u);
  ASSERT_EQ(log.xids.events.size(), 1u);
  EXPECT_EQ(log.xids.events[0].xid, 119u);
  EXPECT_NEAR(log.xids.events[0].uptime_s.value_or(0), 5.0001, 1e-9);
}

TEST_F(KernelLogTest, AFailingOrSilentJournalIsSaidWithItsFirstErrorLine) {
  sources((dir_ / "no-kmsg").string(),
          write("journalctl-fails",
                "#!/bin/sh\necho 'Failed to open journal: Permission denied' >&2\necho second >&2\n"
                "exit 1\n",
                true));
  KernelLog log = read_kernel_log();
  EXPECT_FALSE(log.readable);
  EXPECT_NE(log.why_not.find(" -k -b 0 failed: Failed to open journal: Permission denied"),
            std::string::npos)
      << log.why_not;
  EXPECT_EQ(log.why_not.find("second"), std::string::npos) << "the first line only";
  sources((dir_ / "no-kmsg").string(), write("journalctl-silent", "#!/bin/sh\nexit 0\n", true));
  log = read_kernel_log();
  EXPECT_FALSE(log.readable);
  EXPECT_NE(log.why_not.find("showed no kernel message"), std::string::npos) << log.why_not;
}

TEST_F(KernelLogTest, AJournalThatHangsIsStoppedAtTheDeadlineWithWhatItGave) {
  sources((dir_ / "no-kmsg").string(),
          write("journalctl-hangs",
                "#!/bin/sh\necho '[ 1.0] k: NVRM: Xid (PCI:0000:01:00): 13, x'\nexec sleep 60\n",
                true));
  const auto start = std::chrono::steady_clock::now();
  const KernelLog log = read_kernel_log(0.5);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(seconds, 5.0) << "the deadline held";
  EXPECT_GE(seconds, 0.4);
  EXPECT_TRUE(log.readable) << "what was read before the deadline is used: " << log.why_not;
  EXPECT_TRUE(log.xids.truncated);
  EXPECT_NE(log.why_not.find("stopped after 0.5 s"), std::string::npos) << log.why_not;
  ASSERT_EQ(log.xids.events.size(), 1u);
  EXPECT_EQ(log.xids.events[0].xid, 13u);
}

}  // namespace
}  // namespace cudatool::check
