// MappedFile: the whole file mapped, pages given back, and parts read by copy (pread) the
// same as they are mapped.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/mapped_file.hpp"

namespace cudatool {
namespace {

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char pattern[] = "/tmp/cudatool-mapped-XXXXXX";
    const int fd = ::mkstemp(pattern);
    ASSERT_GE(fd, 0);
    ::close(fd);
    path_ = pattern;
    // Three pages and a bit, each byte a function of its offset.
    bytes_.resize(3 * 4096 + 123);
    for (std::size_t i = 0; i < bytes_.size(); ++i)
      bytes_[i] = static_cast<std::uint8_t>(i * 7 + i / 251);
    std::ofstream(path_, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()),
               static_cast<std::streamsize>(bytes_.size()));
  }
  void TearDown() override { ::unlink(path_.c_str()); }

  std::string path_;
  std::vector<std::uint8_t> bytes_;
};

TEST_F(MappedFileTest, CopyReadsWhatIsMapped) {
  const MappedFile file(path_);
  const auto all = file.bytes();
  ASSERT_EQ(all.size(), bytes_.size());
  EXPECT_TRUE(std::equal(all.begin(), all.end(), bytes_.begin()));
  for (const auto& [offset, length] : std::vector<std::pair<std::size_t, std::size_t>>{
           {0, 1}, {0, bytes_.size()}, {4095, 2}, {5000, 7000}, {bytes_.size() - 1, 1}, {17, 0}}) {
    std::vector<std::uint8_t> into(length + 1, 0xee);
    file.copy(all.subspan(offset, length), into.data());
    EXPECT_TRUE(std::equal(into.begin(), into.begin() + static_cast<long>(length),
                           bytes_.begin() + static_cast<long>(offset)))
        << offset << "+" << length;
    EXPECT_EQ(into[length], 0xee) << "nothing written past the part";
  }
  // Pages given back read the same again, by mapping and by copy.
  file.release(all);
  EXPECT_TRUE(std::equal(all.begin(), all.end(), bytes_.begin()));
  std::vector<std::uint8_t> again(bytes_.size());
  file.copy(all, again.data());
  EXPECT_EQ(again, bytes_);
}

TEST_F(MappedFileTest, CopyOfWhatIsNotInTheFileOrAShrunkFileIsAnError) {
  MappedFile file(path_);
  std::vector<std::uint8_t> into(bytes_.size() + 16);
  const std::vector<std::uint8_t> elsewhere(8);
  EXPECT_THROW(file.copy(elsewhere, into.data()), UsageError);
  // The file cut short after it was mapped: a read past its new end names the offset.
  ASSERT_EQ(::truncate(path_.c_str(), 4096), 0);
  try {
    file.copy(file.bytes().subspan(4000, 200), into.data());
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("offset 4096"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(path_), std::string::npos) << e.what();
  }
  // Without its descriptor, from the mapping.
  MappedFile again(path_);
  again.close_descriptor();
  again.copy(again.bytes().subspan(100, 3000), into.data());
  EXPECT_TRUE(std::equal(into.begin(), into.begin() + 3000, bytes_.begin() + 100));
  // Moved: the new owner reads, the old one is empty.
  MappedFile moved(std::move(file));
  EXPECT_NO_THROW(moved.copy(moved.bytes().subspan(0, 100), into.data()));
}

}  // namespace
}  // namespace cudatool
