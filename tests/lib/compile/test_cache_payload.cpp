// A compile cache entry's payload (cache_payload.hpp): what encode writes decode reads back,
// anything else is refused without a throw, and the recorded headers hold until a header's
// content changes.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "cudatool/base/sha256.hpp"
#include "cudatool/compile/cache_payload.hpp"

namespace cudatool::detail {
namespace {
namespace fs = std::filesystem;

// A PTX image with bytes that are not text after its end, as an image may hold.
constexpr char kImage[] = "//\n.version 9.0\n.target sm_90\n\0\xff bytes";

CachedCompile sample() {
  CachedCompile c;
  c.result.arch = Arch::parse("compute_90", "test");
  c.result.output = OutputKind::ptx;
  c.result.image = std::string(kImage, sizeof kImage - 1);
  c.result.log = "warning: \xff not UTF-8";
  c.result.options = {"--gpu-architecture=compute_90", "-DN=4"};
  c.result.compiler = "nvrtc";
  c.result.compiler_version = "13.0";
  c.result.engine_reason = "device code only";
  c.dependencies = {{"/p/a.h", true, true, 12, 1700000000123456789, 1, std::string(64, 'a')},
                    {"/p/b.h", true, true, 0, -5, 2, std::string(64, 'b')},
                    {"/q/a.h", false, false, 0, 0, 0, ""},
                    {"/r/a.h", false, true, 3, 4, 5, std::string(64, 'c')}};
  return c;
}

TEST(CachePayload, DecodeReadsBackWhatEncodeWrote) {
  const CachedCompile c = sample();
  const std::string payload = encode_cache_payload(c);
  const auto back = decode_cache_payload(payload);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->result.arch, c.result.arch);
  EXPECT_EQ(back->result.output, OutputKind::ptx);
  EXPECT_EQ(back->result.image, c.result.image);
  EXPECT_EQ(back->result.log, "warning: \xef\xbf\xbd not UTF-8");  // JSON holds UTF-8
  EXPECT_EQ(back->result.options, c.result.options);
  EXPECT_EQ(back->result.compiler, "nvrtc");
  EXPECT_EQ(back->result.compiler_version, "13.0");
  EXPECT_EQ(back->result.engine_reason, "device code only");
  ASSERT_EQ(back->dependencies.size(), 4u);
  EXPECT_EQ(back->dependencies[0].path, "/p/a.h");
  EXPECT_EQ(back->dependencies[0].size, 12u);
  EXPECT_EQ(back->dependencies[0].mtime_ns, 1700000000123456789);
  EXPECT_EQ(back->dependencies[1].mtime_ns, -5);
  EXPECT_EQ(back->dependencies[1].sha256, std::string(64, 'b'));
  EXPECT_EQ(back->dependencies[1].ctime_ns, 2);
  EXPECT_FALSE(back->dependencies[2].exists);
  EXPECT_FALSE(back->dependencies[2].read);
  EXPECT_TRUE(back->dependencies[3].exists);
  EXPECT_FALSE(back->dependencies[3].read);
  EXPECT_EQ(back->dependencies[3].ctime_ns, 5);
  // Only the headers read are the result's includes; the places looked at are not.
  EXPECT_EQ(back->result.includes, (std::vector<std::string>{"/p/a.h", "/p/b.h"}));
}

TEST(CachePayload, AnythingMalformedIsRefused) {
  const std::string good = encode_cache_payload(sample());
  const std::size_t newline = good.find('\n');
  const std::string meta = good.substr(newline + 1, std::stoul(good.substr(0, newline)));
  auto with_meta = [](const std::string& json) {
    return std::to_string(json.size()) + "\n" + json + "image";
  };
  const std::vector<std::string> bad = {
      "",
      "\n",
      "12",
      "x\n{}",
      "99999999999999\n{}",
      good.substr(0, newline + 5),  // cut inside the JSON
      with_meta("{}"),
      with_meta("[1, 2]"),
      with_meta("not json"),
      with_meta(std::string(meta).replace(meta.find("\"nvrtc\""), 7, "\"clang\"")),
      with_meta(std::string(meta).replace(meta.find("\"compute_90\""), 12, "\"sm_1234\"")),
      with_meta(std::string(meta).replace(meta.find("\"ptx\""), 5, "\"elf\"")),
      with_meta(std::string(meta).replace(meta.find("\"size\":12"), 9, "\"size\":-1")),
      // Format 2's record (no ctime) is not read as this one.
      with_meta(std::string(meta).replace(meta.find("\"ctime_ns\":1,"), 13, "")),
  };
  for (const std::string& payload : bad) {
    EXPECT_FALSE(decode_cache_payload(payload)) << payload;
    std::vector<Dependency> fields;
    EXPECT_FALSE(decode_cache_payload(payload, &fields)) << payload;
  }
  EXPECT_TRUE(decode_cache_payload(with_meta(meta)));
}

TEST(CachePayload, ValidImages) {
  CompileResult r;
  r.output = OutputKind::ptx;
  r.image = "//\n.version 9.0\n";
  EXPECT_TRUE(valid_image(r));
  r.image = "not ptx";
  EXPECT_FALSE(valid_image(r));
  r.image.clear();
  EXPECT_FALSE(valid_image(r));
  r.output = OutputKind::cubin;
  r.image =
      "\x7f"
      "ELF garbage";
  EXPECT_FALSE(valid_image(r));
}

class RecordedFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cudatool-payload-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

TEST_F(RecordedFiles, HoldUntilTheirContentChanges) {
  const fs::path header = dir_ / "a.h";
  std::ofstream(header) << "#define A 1\n";
  const auto deps = record_dependencies({header});
  ASSERT_EQ(deps.size(), 1u);
  EXPECT_EQ(deps[0].path, header.string());
  EXPECT_TRUE(deps[0].exists);
  EXPECT_EQ(deps[0].size, 12u);
  EXPECT_EQ(deps[0].sha256, sha256_hex("#define A 1\n"));
  EXPECT_TRUE(dependencies_hold(deps));
  // A new mtime, the same content: the hash says it holds.
  fs::last_write_time(header, fs::last_write_time(header) + std::chrono::seconds(5));
  EXPECT_TRUE(dependencies_hold(deps));
  // The same size, other content.
  std::ofstream(header) << "#define A 2\n";
  fs::last_write_time(header, fs::last_write_time(header) + std::chrono::seconds(10));
  EXPECT_FALSE(dependencies_hold(deps));
  fs::remove(header);
  EXPECT_FALSE(dependencies_hold(deps));
  EXPECT_TRUE(dependencies_hold({}));
}

// Issue 39, defect 3: a header replaced by one of the same size and mtime (`cp -p`) with
// other text. Its ctime moved, so the content is compared.
TEST_F(RecordedFiles, ASameSizeAndMtimeReplacementIsSeen) {
  const fs::path header = dir_ / "cfg.h";
  std::ofstream(header) << "#define REGS 8\n";
  const auto deps = record_dependencies({header});
  const auto mtime = fs::last_write_time(header);
  std::ofstream(header) << "#define REGS 9\n";
  fs::last_write_time(header, mtime);  // what cp -p and touch -d do
  ASSERT_EQ(fs::file_size(header), deps[0].size);
  EXPECT_FALSE(dependencies_hold(deps));
}

// Issue 39, defect 1: a place the compiler looked at and found nothing is recorded; a file
// that appears there (a header that now shadows the one read) is a miss.
TEST_F(RecordedFiles, AFileWherePlacesWereEmptyIsAMiss) {
  const auto deps = record_dependencies({}, {dir_ / "cfg.h"});
  ASSERT_EQ(deps.size(), 1u);
  EXPECT_FALSE(deps[0].exists);
  EXPECT_FALSE(deps[0].read);
  EXPECT_TRUE(dependencies_hold(deps));
  std::ofstream(dir_ / "cfg.h") << "#define REGS 48\n";
  EXPECT_FALSE(dependencies_hold(deps));
  fs::remove(dir_ / "cfg.h");
  fs::create_directory(dir_ / "cfg.h");  // anything there, even a directory
  EXPECT_FALSE(dependencies_hold(deps));
}

}  // namespace
}  // namespace cudatool::detail
