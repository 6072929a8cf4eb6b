// Echoed input made printable (issue 13, 13).
#include <gtest/gtest.h>

#include <string>

#include "cudatool/base/text.hpp"

namespace cudatool {
namespace {

TEST(Text, PlainTextAndUtf8AreKept) {
  EXPECT_EQ(printable("sm_90"), "sm_90");
  EXPECT_EQ(printable("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x98\x80");
  EXPECT_EQ(quote_input("0"), "\"0\"");
}

TEST(Text, ControlCharactersAndBadBytesAreEscaped) {
  EXPECT_EQ(printable("a\nb\tc\rd"), "a\\nb\\tc\\rd");
  EXPECT_EQ(printable("\x1b[31mred\x07"), "\\x1b[31mred\\x07");
  EXPECT_EQ(printable(std::string("a\0b", 3)), "a\\x00b");
  EXPECT_EQ(printable("\x7f"), "\\x7f");
  EXPECT_EQ(printable("caf\xe9"), "caf\\xe9");                       // Latin-1
  EXPECT_EQ(printable("\xc0\xaf"), "\\xc0\\xaf");                    // overlong
  EXPECT_EQ(printable("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(printable("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(printable("\xe2\x82"), "\\xe2\\x82");                    // cut short
  EXPECT_EQ(printable("\xc2\x9b"
                      "31m"),
            "\\xc2\\x9b31m");  // C1 CSI
}

TEST(Text, LongValuesAreCut) {
  const std::string shown = printable(std::string(1 << 20, '7'));
  EXPECT_EQ(shown, std::string(kMaxEchoedValue, '7') + "...");
  EXPECT_EQ(printable("abcdef", 3), "abc...");
  EXPECT_EQ(printable("abc", 3), "abc");
}

}  // namespace
}  // namespace cudatool

namespace cudatool {
namespace {

// Invisible and reordering characters were echoed as they are (issue 20, item 17):
// `CUDA_DEVICE "1\u200b"` showed as "1"; U+202E reversed the rest of the line.
TEST(Text, InvisibleAndBidiCharactersAreEscapedAsCodePoints) {
  EXPECT_EQ(printable("1\xe2\x80\x8b"), "1\\u200b");  // zero-width space
  EXPECT_EQ(printable("\xef\xbb\xbf"
                      "0"),
            "\\ufeff0");  // byte order mark
  EXPECT_EQ(printable("evil\xe2\x80\xae"
                      "txt.exe"),
            "evil\\u202etxt.exe");  // RTL override
  EXPECT_EQ(printable("a\xe2\x81\xa6"
                      "b\xe2\x81\xa9"),
            "a\\u2066b\\u2069");  // isolates
  EXPECT_EQ(printable("a\xe2\x80\xa8"
                      "b"),
            "a\\u2028b");  // line separator
  EXPECT_EQ(printable("soft\xc2\xad"
                      "hyphen"),
            "soft\\u00adhyphen");
  EXPECT_EQ(printable("tag\xf3\xa0\x80\x81"), "tag\\U000e0001");  // a tag character
  // Visible characters around them are kept.
  EXPECT_EQ(printable("caf\xc3\xa9\xe2\x80\x8d\xf0\x9f\x98\x80"),
            "caf\xc3\xa9\\u200d\xf0\x9f\x98\x80");
  EXPECT_EQ(quote_input("\xe2\x80\x8b"), "\"\\u200b\"");
}

}  // namespace
}  // namespace cudatool

namespace cudatool {
namespace {

TEST(Text, ValidUtf8ReplacesEachBadByteWithTheReplacementCharacter) {
  EXPECT_EQ(valid_utf8("caf\xc3\xa9 \xf0\x9f\x98\x80"), "caf\xc3\xa9 \xf0\x9f\x98\x80");
  EXPECT_EQ(valid_utf8("a\xff"
                       "b"),
            "a\xef\xbf\xbd"
            "b");
  EXPECT_EQ(valid_utf8("\xc3"), "\xef\xbf\xbd");                                  // cut short
  EXPECT_EQ(valid_utf8("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate
  EXPECT_EQ(valid_utf8(std::string("\0\n", 2)), std::string("\0\n", 2));  // controls are valid
}

}  // namespace
}  // namespace cudatool
