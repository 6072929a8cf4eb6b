// The device cache's entry (lib/src/device/device_cache_entry.hpp) on bytes a damaged disk
// or another program wrote: numbers of the wrong kind are refused, never converted (a float
// out of int's range once reached an undefined conversion inside the JSON library; the
// fuzzer found it); a damaged, truncated, foreign or linked entry file is never used.
#include "device/device_cache_entry.hpp"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "base/cache_store.hpp"
#include "cudatool/device/device_cache.hpp"

namespace {

std::string corpus_payload() {
  std::ifstream in(std::string(CUDATOOL_SOURCE_DIR) +
                   "/fuzz/corpus/device_cache_entry/payload_only");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string replaced(std::string text, const std::string& from, const std::string& to) {
  const auto at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  if (at != std::string::npos) text.replace(at, from.size(), to);
  return text;
}

}  // namespace

TEST(DeviceCacheEntry, TheCorpusPayloadIsAFixedPoint) {
  const auto once = cudatool::detail::reformat_device_cache_payload(corpus_payload());
  ASSERT_TRUE(once.has_value());
  EXPECT_EQ(cudatool::detail::reformat_device_cache_payload(*once), once);
}

TEST(DeviceCacheEntry, NumbersOfTheWrongKindAreRefused) {
  const std::string good = corpus_payload();
  for (const auto& [from, to] : std::initializer_list<std::pair<std::string, std::string>>{
           {"\"cuda_version\":13000", "\"cuda_version\":1e300"},
           {"\"cuda_version\":13000", "\"cuda_version\":13000.5"},
           {"\"cuda_version\":13000", "\"cuda_version\":true"},
           {"\"cuda_version\":13000", "\"cuda_version\":99999999999"},
           {"[1,1024]", "[1,-1e300]"},
           {"[1,1024]", "[1e300,1024]"},
           {"[1,1024]", "[1,1024,5]"},
           {"\"total_memory\":85899345920", "\"total_memory\":-1"},
           {"\"total_memory\":85899345920", "\"total_memory\":8.5e10"},
       }) {
    EXPECT_FALSE(cudatool::detail::reformat_device_cache_payload(replaced(good, from, to)))
        << from << " -> " << to;
  }
}

namespace cudatool::detail {
namespace {
namespace fs = std::filesystem;

DeviceCacheEntry corpus_entry() {
  std::string why;
  auto entry = decode_device_cache_payload(corpus_payload(), why);
  EXPECT_TRUE(entry) << why;
  return entry.value_or(DeviceCacheEntry{});
}

TEST(DeviceCacheEntryFile, TheStoresFormatKeyedByTheEnvironment) {
  const std::string key = device_cache_key({"env CUDA_VISIBLE_DEVICES=0"});
  EXPECT_EQ(key.size(), 16u);
  EXPECT_TRUE(valid_cache_key(key));
  EXPECT_NE(key, device_cache_key({"env CUDA_VISIBLE_DEVICES=1"}));
  EXPECT_EQ(device_cache_file_name(key), key + ".entry");
  const std::string bytes = encode_device_cache_entry(corpus_entry(), key);
  EXPECT_TRUE(bytes.starts_with("cudatool-cache 2\nkey " + key + "\nsize "));
  std::string why;
  bool saw_unverified = false;
  const auto entry = decode_device_cache_entry(bytes, key, why, [&](const DeviceCacheEntry& e) {
    saw_unverified = !e.snapshot.devices.empty();
  });
  ASSERT_TRUE(entry) << why;
  EXPECT_TRUE(saw_unverified);
  EXPECT_EQ(encode_device_cache_entry(*entry, key), bytes);
  // The fuzz harness's round trip.
  EXPECT_EQ(reformat_device_cache_entry(bytes), bytes);
}

TEST(DeviceCacheEntryFile, DamageIsAMissWithItsReason) {
  const std::string key = "00000000000000aa";
  const std::string good = encode_device_cache_entry(corpus_entry(), key);
  auto why_of = [&](const std::string& bytes, const std::string& as = "00000000000000aa") {
    std::string why;
    EXPECT_FALSE(decode_device_cache_entry(bytes, as, why));
    return why;
  };
  std::string flipped = good;
  flipped[flipped.size() - 2] ^= 1;
  EXPECT_EQ(why_of(flipped), "entry damaged (checksum)");
  EXPECT_EQ(why_of(good.substr(0, good.size() - 1)), "entry truncated");
  EXPECT_EQ(why_of(good, "00000000000000bb"), "entry of another key");
  EXPECT_EQ(why_of(""), "entry damaged (no header)");
  EXPECT_EQ(why_of("cudatool device cache 1\nsha256 " + std::string(64, '0') + "\n{}"),
            "entry damaged (no header)");
  std::string future = good;
  future.replace(0, 16, "cudatool-cache 3");
  EXPECT_EQ(why_of(future), "entry of another format");
  // A whole entry of the store whose payload is not the device cache's.
  EXPECT_EQ(why_of(encode_cache_entry(key, "{}")), "entry damaged (content)");
}

class DeviceCacheEntryDirectory : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-entry-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    path_ = pattern;
    dir_ = open_cache_directory(path_);
    ASSERT_TRUE(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  std::string read_why() {
    std::string why;
    EXPECT_FALSE(read_device_cache_file(dir_.get(), key_, why));
    return why;
  }
  fs::path file() const { return path_ / device_cache_file_name(key_); }
  fs::path path_;
  UniqueFd dir_;
  const std::string key_ = "00000000000000aa";
};

TEST_F(DeviceCacheEntryDirectory, WrittenPrivateAndReadBack) {
  ASSERT_EQ(write_device_cache_file(dir_.get(), key_, "bytes"), 0);
  struct stat s {};
  ASSERT_EQ(::stat(file().c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
  std::string why;
  EXPECT_EQ(read_device_cache_file(dir_.get(), key_, why), "bytes") << why;
}

TEST_F(DeviceCacheEntryDirectory, NoneLinkedNotAFileOpenOrAnotherUsers) {
  EXPECT_EQ(read_why(), "no entry");
  std::ofstream(path_ / "elsewhere") << "bytes";
  fs::permissions(path_ / "elsewhere", fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(path_ / "elsewhere", file());
  EXPECT_EQ(read_why(), "entry is a symbolic link");
  fs::remove(file());
  fs::create_directory(file());
  EXPECT_EQ(read_why(), "entry is not a regular file");
  // The write replaces what is in the way with the entry.
  ASSERT_EQ(write_device_cache_file(dir_.get(), key_, "bytes"), 0);
  fs::permissions(file(), fs::perms::group_read, fs::perm_options::add);
  EXPECT_EQ(read_why(), "entry is open to others");
  if (::geteuid() == 0) {
    fs::permissions(file(), fs::perms::group_read, fs::perm_options::remove);
    ASSERT_EQ(::chown(file().c_str(), 65534, 65534), 0);
    EXPECT_EQ(read_why(), "entry is another user's");
  }
}

}  // namespace
}  // namespace cudatool::detail
