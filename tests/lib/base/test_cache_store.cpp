// The one cache store (lib/src/base/cache_store.hpp) on what a hostile or damaged cache
// directory holds: truncated and extended entries, bad checksums, another key's entry,
// files of another owner or open to others, symbolic links and directories where an entry
// should be, FIFOs, and many writers at once.
#include "base/cache_store.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cudatool/base/sha256.hpp"

namespace cudatool {
namespace {
namespace fs = std::filesystem;

const std::string kKey = "0123456789abcdef";

class CacheStore : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-cache-store-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_path_ = pattern;
    dir_ = open_cache_directory(dir_path_);
    ASSERT_TRUE(dir_);
  }
  void TearDown() override {
    dir_ = UniqueFd();
    std::error_code ec;
    fs::remove_all(dir_path_, ec);
  }
  void write_raw(const std::string& name, const std::string& bytes, fs::perms perms) {
    const fs::path p = dir_path_ / name;
    std::ofstream(p, std::ios::binary | std::ios::trunc) << bytes;
    fs::permissions(p, perms);
  }
  std::optional<std::string> read(const std::string& name) {
    const CacheFile file = open_cache_file_at(dir_.get(), name);
    if (!file.fd || untrusted(file.info, kTrustPrivate)) return std::nullopt;
    return read_cache_file(file, 1 << 20);
  }
  fs::path dir_path_;
  UniqueFd dir_;
};

TEST(CacheEntryFormat, DecodesExactlyWhatItEncodes) {
  for (const std::string& payload :
       {std::string(), std::string("x"), std::string(100000, '\0'), std::string("line\nline\n")}) {
    const std::string bytes = encode_cache_entry(kKey, payload);
    EXPECT_TRUE(bytes.starts_with("cudatool-cache 2\nkey " + kKey + "\nsize " +
                                  std::to_string(payload.size()) + "\nsha256 " +
                                  sha256_hex(payload) + "\n"));
    const DecodedCacheEntry entry = decode_cache_entry(bytes, kKey);
    ASSERT_TRUE(entry.ok());
    EXPECT_EQ(entry.payload, payload);
    EXPECT_EQ(claimed_cache_key(bytes), kKey);
  }
}

TEST(CacheEntryFormat, EveryDamageIsNamedAndNothingDamagedIsAccepted) {
  const std::string good = encode_cache_entry(kKey, "payload bytes");
  auto damage = [&](std::string_view bytes, std::string_view key = kKey) {
    return decode_cache_entry(bytes, key).damage;
  };
  EXPECT_EQ(damage(good), CacheEntryDamage::none);
  // Truncated anywhere: in the header, or in the payload.
  for (std::size_t n = 0; n < good.size(); ++n)
    EXPECT_NE(damage(good.substr(0, n)), CacheEntryDamage::none) << n;
  EXPECT_EQ(damage(good.substr(0, good.size() - 1)), CacheEntryDamage::size);
  EXPECT_EQ(damage(good + "x"), CacheEntryDamage::size);
  // One byte of the payload changed.
  std::string flipped = good;
  flipped.back() ^= 1;
  EXPECT_EQ(damage(flipped), CacheEntryDamage::checksum);
  // Another key's entry copied over this one's name.
  EXPECT_EQ(damage(good, "fedcba9876543210"), CacheEntryDamage::key);
  // Another store, another version, the device cache's format before the one store.
  EXPECT_EQ(damage("cudatool device cache 1\nsha256 " + std::string(64, '0') + "\n{}"),
            CacheEntryDamage::header);
  EXPECT_EQ(damage(""), CacheEntryDamage::header);
  std::string other_version = good;
  other_version.replace(0, 16, "cudatool-cache 3");
  EXPECT_EQ(damage(other_version), CacheEntryDamage::format);
  // Malformed fields: a size with a leading zero, too many digits, not a number; a short or
  // upper-case digest; a key that is not hex.
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string bytes = good;
    bytes.replace(bytes.find(from), from.size(), to);
    return bytes;
  };
  EXPECT_EQ(damage(replaced("size 13", "size 013")), CacheEntryDamage::fields);
  EXPECT_EQ(damage(replaced("size 13", "size 99999999999999999999")), CacheEntryDamage::fields);
  EXPECT_EQ(damage(replaced("size 13", "size -1")), CacheEntryDamage::fields);
  EXPECT_EQ(damage(replaced("size 13", "size 18446744073709551629")), CacheEntryDamage::fields);
  const std::string digest = sha256_hex("payload bytes");
  EXPECT_EQ(damage(replaced(digest, digest.substr(1))), CacheEntryDamage::fields);
  std::string upper = digest;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  EXPECT_EQ(damage(replaced(digest, upper)), CacheEntryDamage::fields);
  EXPECT_EQ(damage(replaced("key " + kKey, "key ../../etc"), "../../etc"),
            CacheEntryDamage::fields);
  // A header line without its end reads no further than 64 bytes.
  EXPECT_EQ(damage("cudatool-cache 2\nkey " + std::string(1 << 20, 'a')), CacheEntryDamage::fields);
}

TEST(CacheEntryFormat, TheChecksumIsCheckedOnlyWhenAsked) {
  std::string bytes = encode_cache_entry(kKey, "payload");
  bytes.back() = 'X';
  DecodedCacheEntry entry = decode_cache_entry_unverified(bytes, kKey);
  ASSERT_TRUE(entry.ok());
  EXPECT_EQ(entry.payload, "payloaX");
  EXPECT_FALSE(verify_cache_entry(entry));
  EXPECT_EQ(entry.damage, CacheEntryDamage::checksum);
  EXPECT_TRUE(entry.payload.empty());
}

TEST(CacheEntryFormat, KeysAreOneToSixtyFourLowerCaseHexDigits) {
  EXPECT_TRUE(valid_cache_key("0"));
  EXPECT_TRUE(valid_cache_key(std::string(64, 'f')));
  EXPECT_FALSE(valid_cache_key(""));
  EXPECT_FALSE(valid_cache_key(std::string(65, 'f')));
  EXPECT_FALSE(valid_cache_key("ABC"));
  EXPECT_FALSE(valid_cache_key("a/b"));
}

TEST(CacheTrust, OwnerAndModeRules) {
  struct stat mine {};
  mine.st_uid = ::geteuid();
  mine.st_mode = S_IFREG | 0600;
  EXPECT_FALSE(untrusted(mine, kTrustPrivate));
  EXPECT_FALSE(untrusted(mine, kTrustNotWritableByOthers));
  // Readable by others: not private, still not writable by others.
  mine.st_mode = S_IFREG | 0644;
  EXPECT_EQ(untrusted(mine, kTrustPrivate)->reason, CacheDistrust::Reason::mode);
  EXPECT_FALSE(untrusted(mine, kTrustNotWritableByOthers));
  mine.st_mode = S_IFREG | 0620;
  ASSERT_TRUE(untrusted(mine, kTrustNotWritableByOthers));
  EXPECT_EQ(untrusted(mine, kTrustNotWritableByOthers)->message(),
            "writable by others (mode 0620)");
  // A sticky directory open to all: trusted as a cache's top directory only, and only by the
  // rule that allows it.
  struct stat tmp {};
  tmp.st_uid = ::geteuid();
  tmp.st_mode = S_IFDIR | 01777;
  EXPECT_FALSE(untrusted(tmp, kTrustNotWritableByOthers, true));
  EXPECT_TRUE(untrusted(tmp, kTrustNotWritableByOthers, false));
  EXPECT_TRUE(untrusted(tmp, kTrustPrivate, true));
  // Another user's; root's is trusted by the compile cache's rule only.
  struct stat theirs {};
  theirs.st_uid = ::geteuid() + 1;
  theirs.st_mode = S_IFREG | 0600;
  ASSERT_TRUE(untrusted(theirs, kTrustPrivate));
  EXPECT_EQ(untrusted(theirs, kTrustPrivate)->reason, CacheDistrust::Reason::owner);
  EXPECT_EQ(untrusted(theirs, kTrustNotWritableByOthers)->message(),
            "owned by uid " + std::to_string(theirs.st_uid) + ", not by you (uid " +
                std::to_string(::geteuid()) + ")");
  struct stat roots {};
  roots.st_uid = 0;
  roots.st_mode = S_IFREG | 0600;
  EXPECT_FALSE(untrusted(roots, kTrustNotWritableByOthers));
  EXPECT_EQ(static_cast<bool>(untrusted(roots, kTrustPrivate)), ::geteuid() != 0);
}

TEST_F(CacheStore, AWrittenEntryIsPrivateAndReadsBack) {
  const std::string data = encode_cache_entry(kKey, "payload");
  ASSERT_EQ(write_cache_file_at(dir_.get(), "e.entry", data).error, 0);
  struct stat s {};
  ASSERT_EQ(::stat((dir_path_ / "e.entry").c_str(), &s), 0);
  EXPECT_EQ(s.st_mode & 07777, 0600u);
  EXPECT_EQ(read("e.entry"), data);
  // Nothing is left beside it.
  EXPECT_EQ(list_directory(dir_.get()), std::vector<std::string>{"e.entry"});
}

TEST_F(CacheStore, AnEntryOpenToOthersIsNotTrusted) {
  write_raw("e.entry", encode_cache_entry(kKey, "p"),
            fs::perms::owner_read | fs::perms::owner_write | fs::perms::others_write);
  const CacheFile file = open_cache_file_at(dir_.get(), "e.entry");
  ASSERT_TRUE(file.fd);
  ASSERT_TRUE(untrusted(file.info, kTrustPrivate));
  EXPECT_EQ(untrusted(file.info, kTrustNotWritableByOthers)->message(),
            "writable by others (mode 0602)");
  EXPECT_EQ(untrusted_message(file.fd.get(), kTrustNotWritableByOthers),
            "writable by others (mode 0602)");
}

TEST_F(CacheStore, AnotherUsersEntryIsNotTrusted) {
  if (::geteuid() != 0) GTEST_SKIP() << "only root can give a file to another user";
  write_raw("e.entry", encode_cache_entry(kKey, "p"),
            fs::perms::owner_read | fs::perms::owner_write);
  ASSERT_EQ(::chown((dir_path_ / "e.entry").c_str(), 65534, 65534), 0);
  const CacheFile file = open_cache_file_at(dir_.get(), "e.entry");
  ASSERT_TRUE(file.fd);
  for (const CacheTrust& rule : {kTrustPrivate, kTrustNotWritableByOthers}) {
    const auto why = untrusted(file.info, rule);
    ASSERT_TRUE(why);
    EXPECT_EQ(why->reason, CacheDistrust::Reason::owner);
    EXPECT_EQ(why->message(), "owned by uid 65534, not by you (uid 0)");
  }
  // A write replaces it with one of the writer's own.
  ASSERT_EQ(write_cache_file_at(dir_.get(), "e.entry", "mine").error, 0);
  EXPECT_EQ(read("e.entry"), "mine");
}

TEST_F(CacheStore, ASymbolicLinkIsNeverFollowedAndIsReplacedByAWrite) {
  write_raw("elsewhere", encode_cache_entry(kKey, "p"),
            fs::perms::owner_read | fs::perms::owner_write);
  fs::create_symlink(dir_path_ / "elsewhere", dir_path_ / "e.entry");
  const CacheFile file = open_cache_file_at(dir_.get(), "e.entry");
  EXPECT_FALSE(file.fd);
  EXPECT_EQ(file.error, ELOOP);
  ASSERT_EQ(write_cache_file_at(dir_.get(), "e.entry", "new").error, 0);
  EXPECT_FALSE(fs::is_symlink(dir_path_ / "e.entry"));
  EXPECT_EQ(read("e.entry"), "new");
  EXPECT_EQ(read("elsewhere"), encode_cache_entry(kKey, "p"));  // the link's target untouched
  // A linked directory is not opened either.
  fs::create_directory(dir_path_ / "real");
  fs::create_directory_symlink(dir_path_ / "real", dir_path_ / "linked");
  EXPECT_FALSE(open_directory_at(dir_.get(), "linked"));
  EXPECT_TRUE(open_directory_at(dir_.get(), "real"));
}

TEST_F(CacheStore, ADirectoryOrAFifoWhereAnEntryShouldBe) {
  fs::create_directories(dir_path_ / "e.entry/deeper/still");
  EXPECT_FALSE(read("e.entry"));
  ASSERT_EQ(write_cache_file_at(dir_.get(), "e.entry", "data").error, 0);
  EXPECT_EQ(read("e.entry"), "data");
  // A FIFO: opening never blocks, and it is not read.
  ASSERT_EQ(::mkfifo((dir_path_ / "f.entry").c_str(), 0600), 0);
  const CacheFile fifo = open_cache_file_at(dir_.get(), "f.entry");
  ASSERT_TRUE(fifo.fd);
  EXPECT_FALSE(read_cache_file(fifo, 1 << 20));
  ASSERT_EQ(write_cache_file_at(dir_.get(), "f.entry", "data").error, 0);
  EXPECT_EQ(read("f.entry"), "data");
}

TEST_F(CacheStore, ALargeFileIsNotRead) {
  write_raw("big", std::string(4096, 'x'), fs::perms::owner_read | fs::perms::owner_write);
  const CacheFile file = open_cache_file_at(dir_.get(), "big");
  ASSERT_TRUE(file.fd);
  EXPECT_FALSE(read_cache_file(file, 4095));
  EXPECT_TRUE(read_cache_file(file, 4096));
}

TEST_F(CacheStore, MakeDirectoryReplacesALinkOrAFile) {
  fs::create_directory(dir_path_ / "target");
  fs::create_directory_symlink(dir_path_ / "target", dir_path_ / "v");
  write_raw("w", "x", fs::perms::owner_read | fs::perms::owner_write);
  for (const char* name : {"v", "w", "new"}) {
    UniqueFd made = make_directory_at(dir_.get(), name);
    ASSERT_TRUE(made) << name;
    struct stat s {};
    ASSERT_EQ(::lstat((dir_path_ / name).c_str(), &s), 0);
    EXPECT_TRUE(S_ISDIR(s.st_mode)) << name;
    EXPECT_EQ(s.st_mode & 0777, 0700u) << name;
  }
  EXPECT_TRUE(fs::is_directory(dir_path_ / "target"));  // the link's target untouched
}

TEST_F(CacheStore, TemporariesAreNamedForTheirTarget) {
  EXPECT_TRUE(is_temporary_for(".e.entry.123.0.tmp", "e.entry"));
  EXPECT_FALSE(is_temporary_for(".e.entry.123.tmp", "e.entry"));
  EXPECT_FALSE(is_temporary_for(".f.entry.123.0.tmp", "e.entry"));
  EXPECT_FALSE(is_temporary_for("e.entry.123.0.tmp", "e.entry"));
  EXPECT_FALSE(is_temporary_for(".e.entry.12x.0.tmp", "e.entry"));
}

TEST_F(CacheStore, ConcurrentWritersLeaveOneWholeEntryAndNoTemporary) {
  // Eight processes write their own entry under one name, many times; readers in between
  // see one of them whole, never a mix or a part.
  constexpr int kWriters = 8;
  constexpr int kRounds = 50;
  std::vector<std::string> versions;
  for (int w = 0; w < kWriters; ++w)
    versions.push_back(encode_cache_entry(kKey, std::string(20000 + w * 977, char('a' + w))));
  std::vector<pid_t> children;
  for (int w = 0; w < kWriters; ++w) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      UniqueFd dir = open_cache_directory(dir_path_);
      for (int r = 0; r < kRounds; ++r)
        if (write_cache_file_at(dir.get(), "e.entry", versions[w]).error != 0) ::_exit(1);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  int reads = 0;
  for (int i = 0; i < 200; ++i) {
    if (const auto bytes = read("e.entry")) {
      ++reads;
      EXPECT_TRUE(decode_cache_entry(*bytes, kKey).ok()) << "a torn entry of " << bytes->size();
    }
  }
  for (const pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const auto last = read("e.entry");
  ASSERT_TRUE(last);
  EXPECT_TRUE(decode_cache_entry(*last, kKey).ok());
  EXPECT_EQ(list_directory(dir_.get()), std::vector<std::string>{"e.entry"});
  (void)reads;
}

TEST(CacheHome, XdgWhenAbsoluteElseHome) {
  const char* xdg = std::getenv("XDG_CACHE_HOME");
  const char* home = std::getenv("HOME");
  const std::optional<std::string> saved_xdg = xdg ? std::optional<std::string>(xdg) : std::nullopt;
  const std::optional<std::string> saved_home =
      home ? std::optional<std::string>(home) : std::nullopt;
  ::setenv("XDG_CACHE_HOME", "/x/cache", 1);
  ::setenv("HOME", "/h", 1);
  EXPECT_EQ(cache_home().variable, "XDG_CACHE_HOME");
  EXPECT_EQ(cache_home().dir, "/x/cache");
  ::setenv("XDG_CACHE_HOME", "relative", 1);  // invalid: ignored
  EXPECT_EQ(cache_home().variable, "HOME");
  EXPECT_EQ(cache_home().value, "/h");
  EXPECT_EQ(cache_home().dir, "/h/.cache");
  ::unsetenv("XDG_CACHE_HOME");
  ::unsetenv("HOME");
  EXPECT_TRUE(cache_home().variable.empty());
  if (saved_xdg) ::setenv("XDG_CACHE_HOME", saved_xdg->c_str(), 1);
  if (saved_home) ::setenv("HOME", saved_home->c_str(), 1);
}

}  // namespace
}  // namespace cudatool
