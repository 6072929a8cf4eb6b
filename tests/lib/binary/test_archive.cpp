// ar archives (lib/src/binary/archive.cpp): members with short and long names, and the
// malformed and thin archives it refuses.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "binary/archive.hpp"
#include "binary/byte_reader.hpp"
#include "cudatool/base/error.hpp"
#include "fatbin_builder.hpp"

namespace cudatool {
namespace {

using testing::Bytes;

TEST(Archive, ReadsMembersWithShortAndLongNames) {
  const std::string long_name = "a_rather_long_object_name.o";
  std::string a = "!<arch>\n";
  const auto header = [](std::string name, std::size_t size) {
    char h[61];
    std::snprintf(h, sizeof h, "%-16s%-12s%-6s%-6s%-8s%-10zu`\n", name.c_str(), "0", "0", "0",
                  "644", size);
    return std::string(h, 60);
  };
  const std::string names = long_name + "/\n";
  a += header("//", names.size()) + names + "\n";  // members are 2-byte aligned
  a += header("short.o/", 3) + "abc" + "\n";
  a += header("/0", 4) + "wxyz";
  const Bytes bytes(a.begin(), a.end());
  const auto members = read_ar_archive(ByteReader(bytes, "lib.a"));
  ASSERT_EQ(members.size(), 2u);
  EXPECT_EQ(members[0].name, "short.o");
  EXPECT_EQ(members[0].data.size(), 3u);
  EXPECT_EQ(members[1].name, long_name);
  EXPECT_EQ(members[1].data.size(), 4u);
  // A member size past the end, a broken terminator, a thin archive.
  std::string past = "!<arch>\n" + header("x.o/", 1000) + "abc";
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(past.begin(), past.end()), "lib.a")), InputError);
  std::string broken = "!<arch>\n" + header("x.o/", 3) + "abc";
  broken[8 + 58] = 'x';
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(broken.begin(), broken.end()), "lib.a")),
               InputError);
  std::string thin = "!<thin>\n";
  EXPECT_THROW(read_ar_archive(ByteReader(Bytes(thin.begin(), thin.end()), "lib.a")), InputError);
}

}  // namespace
}  // namespace cudatool
