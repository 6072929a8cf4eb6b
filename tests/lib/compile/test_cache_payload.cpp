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
  c.dependencies = {{"/p/a.h", 12, 1700000000123456789, std::string(64, 'a')},
                    {"/p/b.h", 0, -5, std::string(64, 'b')}};
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
  ASSERT_EQ(back->dependencies.size(), 2u);
  EXPECT_EQ(back->dependencies[0].path, "/p/a.h");
  EXPECT_EQ(back->dependencies[0].size, 12u);
  EXPECT_EQ(back->dependencies[0].mtime_ns, 1700000000123456789);
  EXPECT_EQ(back->dependencies[1].mtime_ns, -5);
  EXPECT_EQ(back->dependencies[1].sha256, std::string(64, 'b'));
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
  };
  for (const std::string& payload : bad) {
    EXPECT_FALSE(decode_cache_payload(payload)) << payload;
    std::vector<std::string> fields;
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

TEST(CachePayload, RecordedHeadersHoldUntilTheirContentChanges) {
  std::string pattern = (fs::temp_directory_path() / "cudatool-payload-XXXXXX").string();
  ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const fs::path header = dir / "a.h";
  std::ofstream(header) << "#define A 1\n";
  const auto deps = record_dependencies({header, dir / "missing.h"});
  ASSERT_EQ(deps.size(), 1u);  // what cannot be read is not recorded
  EXPECT_EQ(deps[0].path, header.string());
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
  fs::remove_all(dir);
}

}  // namespace
}  // namespace cudatool::detail
