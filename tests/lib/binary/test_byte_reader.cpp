// The checked byte reader under every binary reader (lib/src/binary/byte_reader.cpp).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "binary/byte_reader.hpp"
#include "binary_samples.hpp"
#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

using testing::Bytes;
using testing::error_of;

TEST(ByteReader, EveryReadIsCheckedAndErrorsNameSourceOffsetAndWhat) {
  const Bytes data{1, 2, 3, 4, 5, 6, 7, 8, 9};
  const ByteReader r(data, "file.bin", 0x100);
  EXPECT_EQ(r.u32(1, "x"), 0x05040302u);  // little-endian at an odd offset
  EXPECT_EQ(r.u64(1, "x"), 0x0908070605040302ull);
  EXPECT_THROW(r.u64(2, "x"), UsageError);
  EXPECT_THROW(r.bytes(UINT64_MAX - 2, 8, "x"), UsageError);  // offset + length overflows
  EXPECT_THROW(r.bytes(4, UINT64_MAX, "x"), UsageError);
  EXPECT_NO_THROW(r.bytes(9, 0, "x"));
  const std::string e = error_of([&] { r.u32(7, "section header 3"); });
  EXPECT_NE(e.find("file.bin"), std::string::npos) << e;
  EXPECT_NE(e.find("section header 3"), std::string::npos) << e;
  EXPECT_NE(e.find("0x107"), std::string::npos) << e;
  const Bytes text{'a', 'b', 0, 'c'};
  EXPECT_EQ(ByteReader(text, "t").c_string(0, "s"), "ab");
  EXPECT_THROW(ByteReader(text, "t").c_string(3, "s"), UsageError);  // no terminator
  EXPECT_THROW(ByteReader(text, "t").c_string(4, "s"), UsageError);
}

// A read past the end is bad file contents, not a bad flag: InputError (still a UsageError,
// exit 2), the whole message "<source>: <what> at offset 0x.. (<n> bytes) runs past ...".
TEST(ByteReader, AFailedReadIsAnInputError) {
  const Bytes data{1, 2, 3, 4};
  const ByteReader r(data, "lib.so");
  EXPECT_THROW(r.u64(0, "ELF header"), InputError);
  EXPECT_THROW(r.fail(2, "bad magic"), InputError);
  const std::string e = error_of([&] { r.u64(0, "ELF header"); });
  EXPECT_EQ(e.rfind("lib.so: ELF header at offset 0x0 (8 bytes) runs past the end of its data", 0),
            0u)
      << e;
  EXPECT_EQ(error_of([&] { r.fail(2, "bad magic"); }), "lib.so: bad magic at offset 0x2");
  // Inside an enclosing range, offsets are the file's.
  const ByteReader inner(data, "lib.so", 0x1000);
  EXPECT_EQ(error_of([&] { inner.fail(3, "x"); }), "lib.so: x at offset 0x1003");
}

}  // namespace
}  // namespace cudatool
