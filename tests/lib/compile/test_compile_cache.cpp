// The on-disk compile cache (atomic entries, checksums, trimming, degrading when it cannot
// be written), the cache key (options, includes) and the in-process memo.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "compile_corpus.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/sha256.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compiler.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::TempDir;
namespace fs = std::filesystem;

CacheConfig config_at(const fs::path& dir) {
  CacheConfig c;
  c.dir = dir;
  return c;
}

std::string key_of(const std::string& text) {
  return sha256_hex(text);
}

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  Sha256 incremental;
  const std::string million(1000000, 'a');
  for (std::size_t i = 0; i < million.size(); i += 4099)
    incremental.update(million.substr(i, 4099));
  EXPECT_EQ(incremental.hex_digest(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST(CompileCache, StoresAndLoadsWholeEntries) {
  TempDir dir{"cudatool-cache-test"};
  CompileCache cache(config_at(dir.path));
  const std::string key = key_of("one");
  EXPECT_FALSE(cache.load(key));
  std::string payload = "binary\0payload\n", with_nul(payload.data(), 15);
  ASSERT_TRUE(cache.store(key, with_nul));
  EXPECT_EQ(cache.load(key), with_nul);
  EXPECT_TRUE(fs::exists(cache.entry_path(key)));
  EXPECT_EQ(cache.entry_path(key).parent_path().filename(), key.substr(0, 2));
  const auto stats = cache.stats();
  EXPECT_EQ(stats.entries, 1u);
  EXPECT_EQ(stats.bytes, fs::file_size(cache.entry_path(key)));
  EXPECT_TRUE(cache.warnings().empty());
  // No temporary file is left beside the entry.
  std::size_t files = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir.path)) files += e.is_regular_file();
  EXPECT_EQ(files, 1u);
}

TEST(CompileCache, CorruptedOrTruncatedEntriesReadAsMissesAndAreRemoved) {
  TempDir dir{"cudatool-cache-test"};
  CompileCache cache(config_at(dir.path));
  const std::string key = key_of("two");
  const std::string payload(5000, 'x');
  ASSERT_TRUE(cache.store(key, payload));
  const fs::path entry = cache.entry_path(key);
  const auto size = fs::file_size(entry);
  {  // flip one payload byte
    std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(static_cast<std::streamoff>(size - 100));
    f.put('y');
  }
  EXPECT_FALSE(cache.load(key));
  EXPECT_FALSE(fs::exists(entry));
  ASSERT_TRUE(cache.store(key, payload));
  fs::resize_file(entry, size - 1);  // truncated
  EXPECT_FALSE(cache.load(key));
  EXPECT_FALSE(fs::exists(entry));
  ASSERT_TRUE(cache.store(key, payload));
  { std::ofstream(entry, std::ios::binary) << "garbage"; }
  EXPECT_FALSE(cache.load(key));
  ASSERT_TRUE(cache.store(key, payload));
  EXPECT_EQ(cache.load(key), payload);
  EXPECT_TRUE(cache.warnings().empty());
}

TEST(CompileCache, TheEntryParserAcceptsOnlyWhatTheWriterWritesForThatKey) {
  const std::string key = key_of("parsed"), other = key_of("other");
  const std::string payload("cubin\0bytes\n", 12);
  const std::string entry = format_cache_entry(key, payload);
  ASSERT_TRUE(parse_cache_entry(entry, key));
  EXPECT_EQ(*parse_cache_entry(entry, key), payload);
  EXPECT_FALSE(parse_cache_entry(entry, other));  // an entry copied over another's name
  const std::string head = "cudatool-cache 2\nkey " + key + "\n";
  const std::string digest = "sha256 " + sha256_hex(payload) + "\n";
  for (const std::string& bad : {
           head + "size 123456789012345678901234567890\n" + digest + payload,
           head + "size 012\n" + digest + payload,
           head + "size -12\n" + digest + payload,
           head + "size 13\n" + digest + payload,
           head + "size \n" + digest + payload,
           head + "size 12\nsha256 " + std::string(64, 'g') + "\n" + payload,
           head + "size 12\n" + payload,
           "cudatool-cache 1\nsize 12\n" + digest + payload,
           entry.substr(0, entry.size() - 1),
           std::string(),
       })
    EXPECT_FALSE(parse_cache_entry(bad, key)) << bad;
}

TEST(CompileCache, ACacheDirectoryThatIsAFileDisablesTheCacheWithOneWarning) {
  TempDir dir{"cudatool-cache-test"};
  const fs::path file = dir.path / "not-a-directory";
  { std::ofstream(file) << "x"; }
  CompileCache cache(config_at(file));
  EXPECT_FALSE(cache.load(key_of("a")));
  EXPECT_FALSE(cache.store(key_of("a"), "payload"));
  EXPECT_FALSE(cache.store(key_of("b"), "payload"));
  EXPECT_FALSE(cache.enabled());
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find(file.string()), std::string::npos) << cache.warnings()[0];
}

TEST(CompileCache, AnUnwritableDirectoryDisablesTheCache) {
  // /proc refuses new directories even to root, unlike a chmod'ed directory.
  CompileCache cache(config_at("/proc/self/cudatool-cache"));
  EXPECT_FALSE(cache.store(key_of("a"), "payload"));
  EXPECT_EQ(cache.warnings().size(), 1u);
}

TEST(CompileCache, TrimRemovesTheLeastRecentlyUsedFirstAndClearRemovesAll) {
  TempDir dir{"cudatool-cache-test"};
  CompileCache cache(config_at(dir.path));
  const std::string payload(1000, 'p');
  std::vector<std::string> keys;
  for (int i = 0; i < 5; ++i) {
    keys.push_back(key_of("entry" + std::to_string(i)));
    ASSERT_TRUE(cache.store(keys.back(), payload));
    // Distinct ages: entry 0 oldest.
    fs::last_write_time(cache.entry_path(keys.back()),
                        fs::file_time_type::clock::now() - std::chrono::hours(10 - i));
  }
  ASSERT_TRUE(cache.load(keys[0]));  // a hit makes entry 0 the most recent
  const auto entry_size = fs::file_size(cache.entry_path(keys[1]));
  EXPECT_EQ(cache.trim(3 * entry_size), 2u);
  EXPECT_TRUE(fs::exists(cache.entry_path(keys[0])));
  EXPECT_FALSE(fs::exists(cache.entry_path(keys[1])));
  EXPECT_FALSE(fs::exists(cache.entry_path(keys[2])));
  EXPECT_EQ(cache.stats().entries, 3u);
  EXPECT_EQ(cache.clear(), 3u);
  EXPECT_EQ(cache.stats().entries, 0u);
}

TEST(CompileCache, TheSizeBoundIsKeptOnStore) {
  TempDir dir{"cudatool-cache-test"};
  CacheConfig config = config_at(dir.path);
  config.max_bytes = 3500;
  CompileCache cache(config);
  for (int i = 0; i < 10; ++i)
    ASSERT_TRUE(cache.store(key_of(std::to_string(i)), std::string(1000, 'q')));
  EXPECT_LE(cache.stats().bytes, 3500u);
  EXPECT_GE(cache.stats().entries, 2u);
}

mode_t mode_of(const fs::path& p) {
  struct stat info {};
  return ::lstat(p.c_str(), &info) == 0 ? info.st_mode & 07777 : 0;
}

// Issue 20, item 6: what cudatool creates is private; what someone else could have written
// is not trusted (as ssh treats its files).
TEST(CompileCache, WhatTheCacheCreatesIsPrivate) {
  TempDir dir{"cudatool-cache-test"};
  const fs::path root = dir.path / "new" / "cache";
  CompileCache cache(config_at(root));
  const std::string key = key_of("private");
  ASSERT_TRUE(cache.store(key, "payload"));
  EXPECT_EQ(mode_of(dir.path / "new"), 0700u);
  EXPECT_EQ(mode_of(root), 0700u);
  EXPECT_EQ(mode_of(root / "v2"), 0700u);
  EXPECT_EQ(mode_of(cache.entry_path(key).parent_path()), 0700u);
  EXPECT_EQ(mode_of(cache.entry_path(key)), 0600u);
}

TEST(CompileCache, ADirectoryWritableByOthersTurnsTheCacheOffWithOneWarning) {
  for (const std::string level : {"top", "v2", "sub"}) {
    SCOPED_TRACE(level);
    TempDir dir{"cudatool-cache-test"};
    CompileCache writer(config_at(dir.path));
    const std::string key = key_of("planted");
    ASSERT_TRUE(writer.store(key, "payload"));
    const fs::path target = level == "top"  ? dir.path
                            : level == "v2" ? dir.path / "v2"
                                            : writer.entry_path(key).parent_path();
    ::chmod(target.c_str(), 0777);
    CompileCache reader(config_at(dir.path));
    EXPECT_FALSE(reader.load(key));
    EXPECT_FALSE(reader.load(key));
    EXPECT_FALSE(reader.store(key_of("other"), "payload"));
    EXPECT_FALSE(reader.enabled());
    ASSERT_EQ(reader.warnings().size(), 1u);
    EXPECT_NE(reader.warnings()[0].find("writable by others (mode 0777)"), std::string::npos)
        << reader.warnings()[0];
    EXPECT_EQ(reader.stats().entries, 0u);
  }
}

TEST(CompileCache, ASharedStickyTopDirectoryIsUsableAndItsSubdirectoriesArePrivate) {
  TempDir dir{"cudatool-cache-test"};
  ::chmod(dir.path.c_str(), 01777);
  CompileCache cache(config_at(dir.path));
  const std::string key = key_of("shared");
  ASSERT_TRUE(cache.store(key, "payload"));
  EXPECT_EQ(cache.load(key), "payload");
  EXPECT_TRUE(cache.warnings().empty());
  EXPECT_EQ(mode_of(dir.path / "v2"), 0700u);
}

TEST(CompileCache, AnEntryWritableByOthersOrOwnedBySomeoneElseIsAMissAndIsReplaced) {
  TempDir dir{"cudatool-cache-test"};
  const std::string key = key_of("entry");
  {
    CompileCache writer(config_at(dir.path));
    ASSERT_TRUE(writer.store(key, "attacker's payload"));
  }
  const fs::path entry = CompileCache(config_at(dir.path)).entry_path(key);
  ::chmod(entry.c_str(), 0666);
  CompileCache cache(config_at(dir.path));
  EXPECT_FALSE(cache.load(key));
  EXPECT_FALSE(cache.load(key));
  ASSERT_EQ(cache.warnings().size(), 1u);
  EXPECT_NE(cache.warnings()[0].find("writable by others"), std::string::npos);
  EXPECT_TRUE(cache.enabled());
  ASSERT_TRUE(cache.store(key, "own payload"));
  EXPECT_EQ(cache.load(key), "own payload");
  // Owned by another user: only root can make one here.
  if (::geteuid() != 0) GTEST_SKIP() << "chown to another user needs root";
  ASSERT_EQ(::chown(entry.c_str(), 4242, 4242), 0);
  CompileCache victim(config_at(dir.path));
  EXPECT_FALSE(victim.load(key));
  ASSERT_EQ(victim.warnings().size(), 1u);
  EXPECT_NE(victim.warnings()[0].find("owned by uid 4242"), std::string::npos)
      << victim.warnings()[0];
  ASSERT_EQ(::chown(entry.parent_path().c_str(), 4242, 4242), 0);
  CompileCache victim2(config_at(dir.path));
  EXPECT_FALSE(victim2.load(key));
  EXPECT_FALSE(victim2.enabled());
}

// Issue 20, item 8: --cache-clear leaves a store that is under way alone.
TEST(CompileCache, ClearLeavesAFreshTemporaryAndRemovesAnAbandonedOne) {
  TempDir dir{"cudatool-cache-test"};
  CompileCache cache(config_at(dir.path));
  const std::string key = key_of("storing");
  ASSERT_TRUE(cache.store(key, "payload"));
  const fs::path sub = cache.entry_path(key).parent_path();
  // The cache store's temporaries, and those of versions before it.
  const fs::path fresh = sub / ("." + key + ".entry.99999.0.tmp");
  const fs::path abandoned = sub / ("." + key + ".entry.99999.1.tmp");
  const fs::path fresh_old = sub / (key + ".entry.tmp.99999.0");
  const fs::path abandoned_old = sub / (key + ".entry.tmp.99999.1");
  for (const fs::path& p : {fresh, abandoned, fresh_old, abandoned_old}) std::ofstream(p) << "half";
  for (const fs::path& p : {abandoned, abandoned_old})
    fs::last_write_time(p, fs::file_time_type::clock::now() - std::chrono::hours(2));
  EXPECT_EQ(cache.clear(), 1u);
  EXPECT_TRUE(fs::exists(fresh));
  EXPECT_FALSE(fs::exists(abandoned));
  EXPECT_TRUE(fs::exists(fresh_old));
  EXPECT_FALSE(fs::exists(abandoned_old));
  EXPECT_FALSE(fs::exists(cache.entry_path(key)));
}

TEST(CacheConfig, EnvironmentAndFlagsChooseTheDirectory) {
  const char* home = std::getenv("HOME");
  const std::string saved_home = home ? home : "";
  ::setenv("CUDATOOL_CACHE_DIR", "/env/dir", 1);
  ::setenv("XDG_CACHE_HOME", "/xdg", 1);
  ::unsetenv("CUDATOOL_DISABLE_CACHE");
  ::unsetenv("CUDATOOL_CACHE_MAX_SIZE");
  EXPECT_EQ(CacheConfig::from_environment(std::string("/flag"), false).dir, "/flag");
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).dir, "/env/dir");
  ::unsetenv("CUDATOOL_CACHE_DIR");
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).dir, "/xdg/cudatool");
  // Issue 20, item 14: a relative XDG_CACHE_HOME is ignored (XDG Base Directory spec).
  ::setenv("XDG_CACHE_HOME", "relative/cache", 1);
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).dir,
            "/home/someone/.cache/cudatool");
  ::unsetenv("XDG_CACHE_HOME");
  ::setenv("HOME", "/home/someone", 1);
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).dir,
            "/home/someone/.cache/cudatool");
  // A HOME that does not exist is not created: the cache is off, with a note.
  EXPECT_FALSE(CacheConfig::from_environment(std::nullopt, false).enabled);
  EXPECT_NE(CacheConfig::from_environment(std::nullopt, false).note.find("HOME=/home/someone"),
            std::string::npos);
  // The note names the caller's own way to give a directory, when it has one.
  EXPECT_NE(CacheConfig::from_environment(std::nullopt, false)
                .note.find("; set CUDATOOL_CACHE_DIR to use one"),
            std::string::npos);
  EXPECT_NE(CacheConfig::from_environment(std::nullopt, false, "--cache-dir")
                .note.find("; set CUDATOOL_CACHE_DIR or --cache-dir to use one"),
            std::string::npos);
  TempDir real_home{"cudatool-cache-test"};
  ::setenv("HOME", real_home.path.c_str(), 1);
  EXPECT_TRUE(CacheConfig::from_environment(std::nullopt, false).enabled);
  EXPECT_FALSE(CacheConfig::from_environment(std::nullopt, true).enabled);
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, true).disabled_by, "no_cache");
  ::setenv("CUDATOOL_DISABLE_CACHE", "1", 1);
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).disabled_by,
            "CUDATOOL_DISABLE_CACHE");
  ::setenv("CUDATOOL_DISABLE_CACHE", "0", 1);
  EXPECT_TRUE(CacheConfig::from_environment(std::nullopt, false).enabled);
  ::unsetenv("CUDATOOL_DISABLE_CACHE");
  ::setenv("CUDATOOL_CACHE_MAX_SIZE", "64M", 1);
  EXPECT_EQ(CacheConfig::from_environment(std::nullopt, false).max_bytes, 64ull << 20);
  ::setenv("CUDATOOL_CACHE_MAX_SIZE", "lots", 1);
  EXPECT_THROW(CacheConfig::from_environment(std::nullopt, false), UsageError);
  ::unsetenv("CUDATOOL_CACHE_MAX_SIZE");
  if (home)
    ::setenv("HOME", saved_home.c_str(), 1);
  else
    ::unsetenv("HOME");
}

class CompileThroughCache : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = testing::nvrtc_unavailable()) GTEST_SKIP() << *why;
    clear_compile_memo();
  }
  static CompileRequest request(const std::string& source) {
    CompileRequest r;
    r.source = source;
    r.arch = Arch::parse("sm_90", "arch");
    return r;
  }
};

TEST_F(CompileThroughCache, TheSameCompileTwiceInOneProcessCompilesOnce) {
  auto r = request("__global__ void memo_once(int* p) { *p = 11; }");
  const auto first = compile(r, nullptr);
  EXPECT_FALSE(first.memo_hit);
  EXPECT_GT(first.compile_seconds, 0.0);
  const auto size = compile_memo_size();
  const auto second = compile(r, nullptr);
  EXPECT_TRUE(second.memo_hit);
  EXPECT_EQ(second.image, first.image);
  EXPECT_EQ(compile_memo_size(), size);
  clear_compile_memo();
  EXPECT_EQ(compile_memo_size(), 0u);
  EXPECT_FALSE(compile(r, nullptr).memo_hit);
}

TEST_F(CompileThroughCache, AHitInANewProcessComesFromDiskAndACorruptEntryIsRecompiled) {
  TempDir dir{"cudatool-cache-test"};
  auto r = request("__global__ void on_disk(int* p) { *p = 12; }");
  CompileCache cache(config_at(dir.path));
  const auto cold = compile(r, &cache);
  EXPECT_FALSE(cold.cache_hit);
  ASSERT_FALSE(cold.cache_path.empty());
  clear_compile_memo();  // as a new process would start
  const auto hit = compile(r, &cache);
  EXPECT_TRUE(hit.cache_hit);
  EXPECT_EQ(hit.image, cold.image);
  EXPECT_EQ(hit.compiler_version, cold.compiler_version);
  EXPECT_EQ(hit.options, cold.options);
  clear_compile_memo();
  fs::resize_file(cold.cache_path, fs::file_size(cold.cache_path) / 2);
  const auto again = compile(r, &cache);
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.image, cold.image);
  EXPECT_TRUE(cache.warnings().empty());
  clear_compile_memo();
  EXPECT_TRUE(compile(r, &cache).cache_hit);  // healed
}

TEST_F(CompileThroughCache, KeysCoverOptionsArchitectureAndSource) {
  auto base = request("__global__ void keyed(int* p) { *p = 1; }");
  const std::string key = cache_key(base);
  EXPECT_EQ(key.size(), 64u);
  EXPECT_EQ(cache_key(base), key);
  auto r = base;
  r.defines = {"X"};
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.arch = Arch::parse("sm_80", "arch");
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.maxrregcount = 32;
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.extern_c = false;
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.source += " ";
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.output = OutputKind::ptx;
  EXPECT_NE(cache_key(r), key);
  r = base;
  r.extra_options = {"--use_fast_math"};
  EXPECT_NE(cache_key(r), key);
}

TEST_F(CompileThroughCache, AChangedIncludedHeaderNeverLetsAStaleEntryThrough) {
  TempDir dir{"cudatool-cache-test"};
  const fs::path src = dir.path / "src";
  const fs::path inc = dir.path / "inc";
  fs::create_directories(src / "detail");
  fs::create_directories(inc);
  { std::ofstream(src / "tile.h") << "#include \"detail/size.h\"\n"; }
  { std::ofstream(src / "detail" / "size.h") << "#define TILE 64\n"; }
  { std::ofstream(inc / "scale.h") << "#define SCALE 2\n"; }
  auto r = request(
      "#include \"tile.h\"\n#include <scale.h>\n"
      "__global__ void tiled(float* p) { __shared__ float t[TILE]; t[threadIdx.x] = p[0] * "
      "SCALE; __syncthreads(); p[threadIdx.x] = t[threadIdx.x ^ 1]; }\n");
  r.source_dir = src;
  r.include_dirs = {inc.string()};
  CompileCache cache(config_at(dir.path / "cache"));
  auto shared_of = [](const CompileResult& c) {
    return read_cubin({reinterpret_cast<const std::uint8_t*>(c.image.data()), c.image.size()})
        .kernels.at(0)
        .shared_size_bytes;
  };
  // Cache format 2: the key is the request's; the entry records the headers, and a hit
  // checks them (deliberately changed from format 1, whose key hashed every header).
  const auto first = compile(r, &cache);
  EXPECT_EQ(shared_of(first), 64 * 4);
  EXPECT_EQ(first.includes.size(), 3u);
  clear_compile_memo();
  EXPECT_TRUE(compile(r, &cache).cache_hit);
  // The nested header changes: the entry is stale, a fresh compile, the new size.
  { std::ofstream(src / "detail" / "size.h") << "#define TILE 128\n"; }
  const auto second = compile(r, &cache);
  EXPECT_FALSE(second.cache_hit);
  EXPECT_EQ(shared_of(second), 128 * 4);
  // Within one process too: the memo checks the headers as well.
  { std::ofstream(src / "detail" / "size.h") << "#define TILE 32\n"; }
  const auto third = compile(r, &cache);
  EXPECT_FALSE(third.memo_hit);
  EXPECT_EQ(shared_of(third), 32 * 4);
  clear_compile_memo();
  // The same content again with a new mtime: the hash says it holds, still a hit.
  { std::ofstream(src / "detail" / "size.h") << "#define TILE 32\n"; }
  EXPECT_TRUE(compile(r, &cache).cache_hit);
  clear_compile_memo();
  { std::ofstream(inc / "scale.h") << "#define SCALE 3\n"; }
  EXPECT_FALSE(compile(r, &cache).cache_hit);
}

// Issue 39, defects 1-4: a hit is what a fresh compile would give, whatever happens to the
// files the compiler reads or would read. Each case compiles, changes the files, and
// compiles again as a new process would (the memo cleared): the shared memory of `tiled`
// says which header the compiler read.
class CacheDependencies : public CompileThroughCache {
 protected:
  void SetUp() override {
    CompileThroughCache::SetUp();
    if (IsSkipped()) return;
    src_ = dir_.path / "src";
    inc_ = dir_.path / "inc";
    fs::create_directories(src_);
    fs::create_directories(inc_);
  }
  CompileRequest tiled(const std::string& include) const {
    auto r = request(include +
                     "\n__global__ void tiled(float* p) { __shared__ float t[TILE]; "
                     "t[threadIdx.x] = p[0]; __syncthreads(); p[threadIdx.x] = t[threadIdx.x ^ "
                     "1]; }\n");
    r.source_dir = src_;
    r.include_dirs = {inc_.string()};
    return r;
  }
  static std::uint64_t shared_of(const CompileResult& c) {
    return read_cubin({reinterpret_cast<const std::uint8_t*>(c.image.data()), c.image.size()})
        .kernels.at(0)
        .shared_size_bytes;
  }
  CompileResult again(const CompileRequest& r) {
    clear_compile_memo();
    return compile(r, &cache_);
  }
  TempDir dir_{"cudatool-cache-test"};
  fs::path src_, inc_;
  CompileCache cache_{config_at(dir_.path / "cache")};
};

TEST_F(CacheDependencies, AHeaderThatNowShadowsTheOneReadIsAMiss) {
  { std::ofstream(inc_ / "cfg.h") << "#define TILE 8\n"; }
  const auto r = tiled("#include \"cfg.h\"");
  EXPECT_EQ(shared_of(compile(r, &cache_)), 8u * 4);
  EXPECT_TRUE(again(r).cache_hit);
  { std::ofstream(src_ / "cfg.h") << "#define TILE 48\n"; }  // beside the source: first
  const auto after = again(r);
  EXPECT_FALSE(after.cache_hit);
  EXPECT_EQ(shared_of(after), 48u * 4);
  EXPECT_EQ(after.includes, (std::vector<std::string>{(src_ / "cfg.h").string()}));
  // Within one process too.
  fs::remove(src_ / "cfg.h");
  EXPECT_EQ(shared_of(compile(r, &cache_)), 8u * 4);
}

TEST_F(CacheDependencies, AnIncludeThroughAMacroIsRecorded) {
  { std::ofstream(src_ / "cfg.h") << "#define TILE 8\n"; }
  const auto r = tiled("#define CFG \"cfg.h\"\n#include CFG");
  const auto first = compile(r, &cache_);
  EXPECT_EQ(shared_of(first), 8u * 4);
  EXPECT_EQ(first.includes, (std::vector<std::string>{(src_ / "cfg.h").string()}));
  EXPECT_TRUE(again(r).cache_hit);
  { std::ofstream(src_ / "cfg.h") << "#define TILE 48\n"; }
  const auto after = again(r);
  EXPECT_FALSE(after.cache_hit);
  EXPECT_EQ(shared_of(after), 48u * 4);
}

TEST_F(CacheDependencies, AnIncludeTheScanCannotFollowIsNotCached) {
  { std::ofstream(src_ / "cfg.h") << "#define TILE 8\n"; }
  const auto r = tiled("#define STR(x) #x\n#define NAME(x) STR(x.h)\n#include NAME(cfg)");
  const auto first = compile(r, &cache_);
  EXPECT_EQ(shared_of(first), 8u * 4);
  EXPECT_TRUE(first.cache_path.empty());
  EXPECT_FALSE(compile(r, &cache_).memo_hit);
  { std::ofstream(src_ / "cfg.h") << "#define TILE 48\n"; }
  const auto after = again(r);
  EXPECT_FALSE(after.cache_hit);
  EXPECT_EQ(shared_of(after), 48u * 4);
}

TEST_F(CacheDependencies, AHeaderReplacedWithTheSameSizeAndMtimeIsAMiss) {
  { std::ofstream(src_ / "cfg.h") << "#define TILE 22\n"; }
  const auto r = tiled("#include \"cfg.h\"");
  EXPECT_EQ(shared_of(compile(r, &cache_)), 22u * 4);
  const auto mtime = fs::last_write_time(src_ / "cfg.h");
  { std::ofstream(src_ / "cfg.h") << "#define TILE 48\n"; }
  fs::last_write_time(src_ / "cfg.h", mtime);  // as `cp -p` leaves it
  const auto after = again(r);
  EXPECT_FALSE(after.cache_hit);
  EXPECT_EQ(shared_of(after), 48u * 4);
}

TEST_F(CacheDependencies, AngleIncludesAreSearchedInTheCompilersOrder) {
  // NVRTC gets the source's folder as the first -I: <cfg.h> is src/cfg.h.
  { std::ofstream(src_ / "cfg.h") << "#define TILE 16\n"; }
  { std::ofstream(inc_ / "cfg.h") << "#define TILE 8\n"; }
  const auto r = tiled("#include <cfg.h>");
  const auto first = compile(r, &cache_);
  EXPECT_EQ(shared_of(first), 16u * 4);
  EXPECT_EQ(first.includes, (std::vector<std::string>{(src_ / "cfg.h").string()}));
  { std::ofstream(src_ / "cfg.h") << "#define TILE 48\n"; }
  const auto after = again(r);
  EXPECT_FALSE(after.cache_hit);
  EXPECT_EQ(shared_of(after), 48u * 4);
  // The shadowed one is recorded too: another engine's order could read it.
  { std::ofstream(inc_ / "cfg.h") << "#define TILE 4\n"; }
  EXPECT_FALSE(again(r).cache_hit);
}

TEST_F(CompileThroughCache, UnresolvedIncludesAreNamedInTheKey) {
  auto a = request("#include <cuda_fp16.h>\n__global__ void h(int* p) { *p = 1; }");
  auto b = request("#include <cuda_bf16.h>\n__global__ void h(int* p) { *p = 1; }");
  EXPECT_TRUE(find_includes(a).empty());
  EXPECT_NE(cache_key(a), cache_key(b));
}

}  // namespace
}  // namespace cudatool
