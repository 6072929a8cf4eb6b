// Wheels read as the zip archives they are (lib/src/compat/wheel.cpp, through libzip opened at
// run time): the members with their sizes and execute bits, a member's bytes whole, and
// hostile archives (no zip, cut short, a member whose bytes fail their CRC, a member not
// there) as InputError. The wheels are made by Python's zipfile; skipped where this build
// reads no wheels or libzip is missing.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "compat/wheel.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compat/compat.hpp"
#include "process.hpp"
#include "temp_dir.hpp"

namespace cudatool {
namespace {

using cudatool::testing::TempDir;

namespace fs = std::filesystem;
namespace wheel = cudatool::detail;  // the one use of the internal namespace

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

const std::string kLibrary =
    "\x7f"
    "ELF stored bytes of a shared library: MARKER-0123456789";
const std::string kInit = "x = 1\n" + std::string(5000, '#') + "\n";

// A wheel: an executable library stored as it is, a deflated module, a directory entry, an
// empty file, and a member from a zip made on Windows (no Unix mode) with its bits set.
fs::path make_wheel(const fs::path& dir) {
  const fs::path path = dir / "pkg-1.0-py3-none-manylinux_2_17_x86_64.whl";
  const testing::ProcessResult made = testing::run_process(
      "/usr/bin/python3",
      {"-c",
       "import sys, zipfile\n"
       "z = zipfile.ZipFile(sys.argv[1], 'w')\n"
       "def add(name, data, mode, method, system=3):\n"
       "    i = zipfile.ZipInfo(name, (2024, 1, 1, 0, 0, 0))\n"
       "    i.create_system = system\n"
       "    i.external_attr = mode << 16\n"
       "    i.compress_type = method\n"
       "    z.writestr(i, data)\n"
       "add('pkg/lib/libk.so', sys.argv[2].encode('latin-1'), 0o100755, zipfile.ZIP_STORED)\n"
       "add('pkg/__init__.py', sys.argv[3], 0o100644, zipfile.ZIP_DEFLATED)\n"
       "add('pkg/data/', b'', 0o40755, zipfile.ZIP_STORED)\n"
       "add('pkg/data/empty.txt', b'', 0o100644, zipfile.ZIP_STORED)\n"
       "add('pkg/windows.dll', b'MZ', 0o100755, zipfile.ZIP_STORED, system=0)\n"
       "z.close()\n",
       path.string(), kLibrary.substr(1), kInit});
  EXPECT_EQ(made.exit_code, 0) << made.err;
  return path;
}

// Skips the calling test where wheels cannot be read here.
#define CUDATOOL_REQUIRE_WHEELS(wheel_path)                                            \
  if (!compat_reads_wheels()) GTEST_SKIP() << "this build reads no wheels (no zip.h)"; \
  try {                                                                                \
    wheel::list_wheel(wheel_path);                                                     \
  } catch (const LibraryNotFoundError& e) {                                            \
    GTEST_SKIP() << e.what();                                                          \
  } catch (const std::exception&) {                                                    \
  }

template <class Fn>
std::string input_error_of(Fn&& fn) {
  try {
    fn();
  } catch (const InputError& e) {
    return e.what();
  } catch (const std::exception& e) {
    return std::string("another error: ") + e.what();
  }
  return "(nothing thrown)";
}

TEST(Wheel, MembersWithTheirSizesAndExecuteBitsDirectoriesLeftOut) {
  TempDir dir{"cudatool-wheel"};
  const fs::path whl = make_wheel(dir.path);
  CUDATOOL_REQUIRE_WHEELS(whl.string());
  const auto members = wheel::list_wheel(whl.string());
  ASSERT_EQ(members.size(), 4u);
  EXPECT_EQ(members[0].name, "pkg/lib/libk.so");
  EXPECT_EQ(members[0].size, kLibrary.size() - 1);  // the script drops the leading 0x7f
  EXPECT_TRUE(members[0].executable);
  EXPECT_EQ(members[1].name, "pkg/__init__.py");
  EXPECT_EQ(members[1].size, kInit.size()) << "the uncompressed size";
  EXPECT_FALSE(members[1].executable);
  EXPECT_EQ(members[2].name, "pkg/data/empty.txt");
  EXPECT_EQ(members[2].size, 0u);
  EXPECT_EQ(members[3].name, "pkg/windows.dll");
  EXPECT_FALSE(members[3].executable) << "no Unix mode in a zip made on Windows";
}

TEST(Wheel, AMembersBytesWholeStoredOrDeflated) {
  TempDir dir{"cudatool-wheel"};
  const fs::path whl = make_wheel(dir.path);
  CUDATOOL_REQUIRE_WHEELS(whl.string());
  const auto library = wheel::read_wheel_member(whl.string(), "pkg/lib/libk.so");
  EXPECT_EQ(std::string(library.begin(), library.end()), kLibrary.substr(1));
  const auto init = wheel::read_wheel_member(whl.string(), "pkg/__init__.py");
  EXPECT_EQ(std::string(init.begin(), init.end()), kInit);
  EXPECT_TRUE(wheel::read_wheel_member(whl.string(), "pkg/data/empty.txt").empty());
  const std::string why =
      input_error_of([&] { wheel::read_wheel_member(whl.string(), "pkg/missing.so"); });
  EXPECT_TRUE(why.starts_with("\"" + whl.string().substr(0, 20))) << why;
  EXPECT_NE(why.find("\": not in the wheel"), std::string::npos) << why;
}

TEST(Wheel, AMemberWhoseBytesFailTheirCrcIsCorrupt) {
  TempDir dir{"cudatool-wheel"};
  const fs::path whl = make_wheel(dir.path);
  CUDATOOL_REQUIRE_WHEELS(whl.string());
  std::string bytes = read_all(whl);
  const std::size_t at = bytes.find("MARKER");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = 'm';  // same size, another CRC
  write_all(whl, bytes);
  EXPECT_EQ(wheel::list_wheel(whl.string()).size(), 4u) << "the directory is intact";
  const std::string why =
      input_error_of([&] { wheel::read_wheel_member(whl.string(), "pkg/lib/libk.so"); });
  EXPECT_NE(why.find("corrupt or truncated in the wheel"), std::string::npos) << why;
  // The other members still read.
  EXPECT_EQ(wheel::read_wheel_member(whl.string(), "pkg/__init__.py").size(), kInit.size());
}

TEST(Wheel, WhatIsNoZipIsAnInputErrorNamingTheFile) {
  TempDir dir{"cudatool-wheel"};
  const fs::path whl = make_wheel(dir.path);
  CUDATOOL_REQUIRE_WHEELS(whl.string());
  const std::string bytes = read_all(whl);
  const fs::path cut = dir.path / "cut.whl", text = dir.path / "text.whl",
                 magic = dir.path / "magic.whl";
  write_all(cut, bytes.substr(0, bytes.size() / 2));
  write_all(text, "this is no zip archive\n");
  write_all(magic, std::string("PK\x03\x04", 4) + std::string(100, '\xff'));
  for (const fs::path& bad : {cut, text, magic, dir.path / "missing.whl", dir.path}) {
    const std::string why = input_error_of([&] { wheel::list_wheel(bad.string()); });
    EXPECT_NE(why.find("\"" + bad.string() + "\": not a readable wheel (zip: "), std::string::npos)
        << why;
    const std::string member =
        input_error_of([&] { wheel::read_wheel_member(bad.string(), "pkg/lib/libk.so"); });
    EXPECT_NE(member.find("not a readable wheel"), std::string::npos) << member;
  }
}

}  // namespace
}  // namespace cudatool
