// A mapped file that changes while it is read (issue 20, items 1 and 2): a read past the
// new end of a truncated file raised SIGBUS and killed the process; now the read sees
// zeros and the mapping reports the change.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "cudatool/base/error.hpp"
#include "cudatool/base/mapped_file.hpp"

namespace cudatool {
namespace {

namespace fs = std::filesystem;

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cudatool-mapped-XXXXXX";
    dir_ = ::mkdtemp(pattern);
    path_ = (dir_ / "file").string();
    std::ofstream(path_, std::ios::binary) << std::string(kSize, 'x');
  }
  void TearDown() override { fs::remove_all(dir_); }

  static constexpr std::size_t kSize = 5 * 65536;  // whole pages on 4 KiB and 64 KiB systems
  fs::path dir_;
  std::string path_;
};

// Killed by SIGBUS, or (under AddressSanitizer, whose handler was there first) by its report.
bool died_of_sigbus(int status) {
  return (WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS) ||
         (WIFEXITED(status) && WEXITSTATUS(status) != 0);
}

// A missing path is the caller's (UsageError); an empty file and one that changed while read
// are bad contents (InputError, still a UsageError).
TEST_F(MappedFileTest, BadContentsAreInputErrorsAMissingFileIsNot) {
  try {
    MappedFile missing((dir_ / "missing").string());
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    ADD_FAILURE() << "a missing file is no malformed one: " << e.what();
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()), (dir_ / "missing").string() + ": no such file");
  }
  std::ofstream((dir_ / "empty").string(), std::ios::binary);
  EXPECT_THROW(MappedFile((dir_ / "empty").string()), InputError);
  const MappedFile file(path_);
  ASSERT_EQ(::truncate(path_.c_str(), 100), 0);
  EXPECT_THROW(file.check_unchanged(), InputError);
}

TEST_F(MappedFileTest, AnUnchangedFileIsUnchanged) {
  const MappedFile file(path_);
  EXPECT_EQ(file.bytes().size(), kSize);
  EXPECT_EQ(file.bytes()[kSize - 1], 'x');
  EXPECT_FALSE(file.changed());
  EXPECT_NO_THROW(file.check_unchanged());
  // Another file renamed over the path leaves the mapped one whole.
  std::ofstream(dir_ / "other") << "other";
  fs::rename(dir_ / "other", path_);
  EXPECT_FALSE(file.changed());
}

// Truncated between mapping and reading: the read past the new end gets zeros instead of
// SIGBUS, and the change is reported with the file's name.
TEST_F(MappedFileTest, TruncatedWhileMappedReadsZerosAndReportsTheChange) {
  const MappedFile file(path_);
  ASSERT_EQ(::truncate(path_.c_str(), 100), 0);
  const auto bytes = file.bytes();
  EXPECT_EQ(bytes[10], 'x');  // still the file
  std::size_t sum = 0;
  for (std::size_t i = 65536; i < kSize; ++i) sum += bytes[i];  // every page past the end
  EXPECT_EQ(sum, 0u);
  EXPECT_TRUE(file.changed());
  try {
    file.check_unchanged();
    ADD_FAILURE() << "no error";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()),
              path_ +
                  ": the file changed while it was read (truncated or written to): read it "
                  "again once nothing writes it");
  }
  // Pages given back and read again stay zeros; a second mapping of the same file is whole.
  file.release(bytes.subspan(65536));
  EXPECT_EQ(bytes[kSize - 1], 0);
  std::ofstream(path_, std::ios::binary) << std::string(kSize, 'y');
  const MappedFile again(path_);
  EXPECT_FALSE(again.changed());
  EXPECT_EQ(again.bytes()[kSize - 1], 'y');
}

TEST_F(MappedFileTest, WrittenInPlaceIsAChange) {
  const MappedFile file(path_);
  const int fd = ::open(path_.c_str(), O_WRONLY);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::pwrite(fd, "z", 1, 7), 1);
  // A modification time the write could not have had in the same clock tick.
  const struct timespec times[2] = {{0, UTIME_OMIT}, {::time(nullptr) + 100, 0}};
  ASSERT_EQ(::futimens(fd, times), 0);
  ::close(fd);
  EXPECT_EQ(file.bytes()[7], 'z');
  EXPECT_TRUE(file.changed());
  EXPECT_THROW(file.check_unchanged(), UsageError);
}

// The handler takes only faults inside a live mapping: any other SIGBUS still kills.
TEST_F(MappedFileTest, OtherSigbusStillKills) {
  const MappedFile file(path_);  // the handler is installed
  EXPECT_EXIT(::raise(SIGBUS), died_of_sigbus, "");
  EXPECT_EXIT(
      {
        const int fd = ::open(path_.c_str(), O_RDONLY);
        const auto* p = static_cast<const volatile char*>(
            ::mmap(nullptr, kSize, PROT_READ, MAP_PRIVATE, fd, 0));
        if (::truncate(path_.c_str(), 0) != 0) std::_Exit(0);
        std::printf("%d\n", p[kSize - 1]);  // a mapping of its own: SIGBUS, as before
        std::_Exit(0);
      },
      died_of_sigbus, "");
}

}  // namespace
}  // namespace cudatool
