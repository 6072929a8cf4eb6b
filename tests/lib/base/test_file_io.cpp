// The one input reader and the one atomic writer (issue 13, 5 and 6): files that are not
// what they seem never block, never grow memory without bound, and are never replaced.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fcntl.h>

#include <cerrno>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"

namespace fs = std::filesystem;

namespace cudatool {
namespace {

class FileIo : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cudatool-file-io-XXXXXX";
    dir_ = ::mkdtemp(pattern);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  static std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  static std::string message_of(auto&& call) {
    try {
      call();
    } catch (const UsageError& e) {
      return e.what();
    }
    return "(no error)";
  }
  fs::path dir_;
};

// The descriptor loops every reader and writer uses: whole writes and reads through a pipe
// whose other end moves a piece at a time.
TEST_F(FileIo, DescriptorLoopsWriteAndReadEverything) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string data(1 << 20, 'x');  // more than a pipe holds: the write blocks in pieces
  std::thread writer([&] {
    EXPECT_EQ(write_all(fds[1], data), 0);
    ::close(fds[1]);
  });
  std::string got(data.size() + 10, '\0');
  const ReadOutcome whole = read_full(fds[0], got);
  writer.join();
  EXPECT_EQ(whole.error, 0);
  EXPECT_EQ(whole.bytes, data.size());  // the end of the input, before the buffer is full
  EXPECT_EQ(got.substr(0, whole.bytes), data);
  char more[4];
  const ReadOutcome end = read_some(fds[0], more);
  EXPECT_EQ(end.bytes, 0u);
  EXPECT_EQ(end.error, 0);
  ::close(fds[0]);
  // Failures come back as the errno, not thrown.
  EXPECT_EQ(write_all(-1, "x"), EBADF);
  EXPECT_EQ(read_full(-1, more).error, EBADF);
  EXPECT_EQ(read_some(-1, more).error, EBADF);
  EXPECT_EQ(write_all(-1, ""), 0);  // nothing to write: no call
}

TEST_F(FileIo, ReadsARegularFile) {
  std::ofstream(dir_ / "a") << "hello";
  EXPECT_EQ(read_input_file(dir_ / "a", "source"), "hello");
  EXPECT_EQ(detail::read_file(dir_ / "a").value_or(""), "hello");
}

TEST_F(FileIo, RefusesWhatIsNotARegularFileWithoutBlocking) {
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  EXPECT_EQ(message_of([&] { read_input_file(dir_ / "fifo", "~/.cuda-device"); }),
            "~/.cuda-device \"" + (dir_ / "fifo").string() + "\": is a FIFO, not a regular file");
  EXPECT_FALSE(detail::read_file(dir_ / "fifo").has_value());
  EXPECT_NE(message_of([&] { read_input_file(dir_, "source"); }).find("is a directory"),
            std::string::npos);
  EXPECT_NE(message_of([] { read_input_file("/dev/zero", "source"); }).find("character device"),
            std::string::npos);
  EXPECT_NE(message_of([&] {
              read_input_file(dir_ / "missing", "source");
            }).find("cannot read: No such file or directory"),
            std::string::npos);
}

TEST_F(FileIo, BoundsWhatItReads) {
  std::ofstream(dir_ / "big") << std::string(kMaxConfigFileBytes + 1, '1');
  EXPECT_NE(message_of([&] {
              read_input_file(dir_ / "big", "~/.cuda-device", kMaxConfigFileBytes);
            }).find("larger than 4096 bytes"),
            std::string::npos);
  EXPECT_EQ(read_input_file(dir_ / "big", "x").size(), kMaxConfigFileBytes + 1);
}

TEST_F(FileIo, WritesAtomicallyAndLeavesNoTemporary) {
  write_atomically(dir_ / "out.cubin", "one");
  write_atomically(dir_ / "out.cubin", "two");
  EXPECT_EQ(slurp(dir_ / "out.cubin"), "two");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 1);
}

TEST_F(FileIo, AValid250CharacterNameWorks) {
  const fs::path target = dir_ / std::string(250, 'n');
  write_atomically(target, "data");
  EXPECT_EQ(slurp(target), "data");
  const fs::path longest = dir_ / std::string(255, 'm');
  write_atomically(longest, "data");
  EXPECT_EQ(slurp(longest), "data");
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()), 2);
}

TEST_F(FileIo, DevicesAreWrittenInPlaceNeverReplaced) {
  write_atomically("/dev/null", "discarded");
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  EXPECT_NE(message_of([] { write_atomically("/dev/full", "x"); }).find("No space left"),
            std::string::npos);
}

TEST_F(FileIo, AFifoIsWrittenInPlaceOrRefusedWithoutAReader) {
  const fs::path fifo = dir_ / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(message_of([&] { write_atomically(fifo, "x"); }).find("a FIFO with no reader"),
            std::string::npos);
  std::string received;
  std::thread reader([&] {
    const int fd = ::open(fifo.c_str(), O_RDONLY);
    char buffer[64];
    for (ssize_t n; (n = ::read(fd, buffer, sizeof buffer)) > 0;)
      received.append(buffer, static_cast<std::size_t>(n));
    ::close(fd);
  });
  // The reader's open() completes once a writer opens: retry until it has the FIFO open.
  for (int attempt = 0;; ++attempt) {
    try {
      write_atomically(fifo, "through the pipe");
      break;
    } catch (const UsageError&) {
      ASSERT_LT(attempt, 1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
  reader.join();
  EXPECT_EQ(received, "through the pipe");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(FileIo, ASymbolicLinkKeepsPointingAtTheNewContent) {
  std::ofstream(dir_ / "target") << "old";
  fs::create_symlink("target", dir_ / "link");
  write_atomically(dir_ / "link", "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_EQ(slurp(dir_ / "target"), "new");
}

// Issue 20, item 7: a dangling link is written through (its target created, the link
// kept), also through a chain of links and a relative target in another directory.
TEST_F(FileIo, ADanglingLinkIsWrittenThroughNotReplaced) {
  fs::create_directories(dir_ / "out");
  fs::create_symlink("out/made.cubin", dir_ / "link");
  fs::create_symlink("link", dir_ / "chain");
  write_atomically(dir_ / "chain", "new");
  EXPECT_TRUE(fs::is_symlink(dir_ / "link"));
  EXPECT_TRUE(fs::is_symlink(dir_ / "chain"));
  EXPECT_EQ(slurp(dir_ / "out" / "made.cubin"), "new");
  fs::create_symlink("self", dir_ / "self");
  EXPECT_NE(message_of([&] { write_atomically(dir_ / "self", "x"); }).find("symbolic links"),
            std::string::npos);
}

// Issue 20, item 7: a replaced file keeps its permission bits; a new one gets the umask's.
TEST_F(FileIo, AReplacedFileKeepsItsMode) {
  auto mode = [](const fs::path& p) {
    struct stat info {};
    ::stat(p.c_str(), &info);
    return info.st_mode & 07777;
  };
  for (const mode_t m : {0600u, 0640u, 0755u, 0400u}) {
    SCOPED_TRACE(m);
    const fs::path file = dir_ / ("mode" + std::to_string(m));
    std::ofstream(file) << "old";
    ::chmod(file.c_str(), m);
    write_atomically(file, "new");
    EXPECT_EQ(mode(file), m);
    EXPECT_EQ(slurp(file), "new");
  }
  const mode_t old_mask = ::umask(027);
  write_atomically(dir_ / "fresh", "new");
  ::umask(old_mask);
  EXPECT_EQ(mode(dir_ / "fresh"), 0640u);
}

TEST_F(FileIo, DirectoriesAreRefused) {
  EXPECT_NE(message_of([&] { write_atomically(dir_, "x"); }).find("is a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace cudatool
