// The strict number parser (issue 13, 12): every flag and variable reads numbers through it.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"

namespace cudatool {
namespace {

std::string message_of(auto&& call) {
  try {
    call();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(Numbers, IntegersInRange) {
  EXPECT_EQ(parse_integer("0", "--x", 0, 10), 0);
  EXPECT_EQ(parse_integer("10", "--x", 0, 10), 10);
  EXPECT_EQ(parse_integer("-5", "--x", -10, 10), -5);
  EXPECT_EQ(parse_integer("9223372036854775807", "--x", 0, INT64_MAX), INT64_MAX);
  EXPECT_EQ(parse_unsigned("18446744073709551615", "--seed"), UINT64_MAX);
  EXPECT_EQ(parse_int("2147483647", "--x", 0), 2147483647);
}

TEST(Numbers, RejectsWhatLenientParsersTake) {
  for (const std::string bad :
       {"", "-", "+1", " 1", "1 ", "0x10", "1e3", "1.0", "1,000", "--1", "00x", "\xff", "1\n"}) {
    EXPECT_THROW(parse_integer(bad, "--x", -100, 100), UsageError) << bad;
    EXPECT_THROW(parse_unsigned(bad, "--x"), UsageError) << bad;
  }
}

TEST(Numbers, NegativeSeedDoesNotWrapAndOverflowDoesNotSaturate) {
  EXPECT_EQ(message_of([] { parse_unsigned("-1", "--seed"); }),
            "--seed \"-1\": expected a whole number 0..18446744073709551615");
  EXPECT_EQ(message_of([] { parse_unsigned("18446744073709551616", "--seed"); }),
            "--seed \"18446744073709551616\": expected a whole number 0..18446744073709551615");
  EXPECT_EQ(message_of([] { parse_integer("99999999999999999999", "--live", 1, 1048576); }),
            "--live \"99999999999999999999\": expected a whole number 1..1048576");
  EXPECT_EQ(message_of([] { parse_int("-1", "--min-count", 0); }),
            "--min-count \"-1\": expected a whole number 0..2147483647");
}

TEST(Numbers, MessagesEscapeAndCutTheValue) {
  const std::string m =
      message_of([] { parse_int("\x1b[31m" + std::string(1000, '9'), "--x", 0); });
  EXPECT_EQ(m.find('\x1b'), std::string::npos) << m;
  EXPECT_NE(m.find("\\x1b[31m"), std::string::npos) << m;
  EXPECT_LT(m.size(), 200u) << m;
}

TEST(Numbers, Durations) {
  EXPECT_DOUBLE_EQ(parse_duration("2", "--duration", 0.001, 3600), 2.0);
  EXPECT_DOUBLE_EQ(parse_duration("0.5", "--duration", 0.001, 3600), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration("1.5s", "--duration", 0.001, 3600), 1.5);
  EXPECT_DOUBLE_EQ(parse_duration("500ms", "--duration", 0.001, 3600), 0.5);
  EXPECT_DOUBLE_EQ(parse_duration("2m", "--duration", 0.001, 3600), 120.0);
  for (const std::string bad :
       {"", "s", ".", "-1", "0", "inf", "nan", "1e3", "1h", "3601", " 1", "1 s", "1..2"})
    EXPECT_THROW(parse_duration(bad, "--duration", 0.001, 3600), UsageError) << bad;
  EXPECT_EQ(message_of([] { parse_duration("", "--duration", 0.001, 3600); }),
            "--duration \"\": expected a duration such as 2, 0.5s, 500ms or 2m, from 0.001 s to "
            "3600 s");
}

TEST(Numbers, Decimals) {
  EXPECT_DOUBLE_EQ(parse_decimal("0.75", "--min-fraction", 0, 1), 0.75);
  EXPECT_DOUBLE_EQ(parse_decimal("1", "--min-fraction", 0, 1), 1.0);
  EXPECT_DOUBLE_EQ(parse_decimal(".5", "--min-fraction", 0, 1), 0.5);
  EXPECT_DOUBLE_EQ(parse_decimal("12.", "--min-h2d-gbps", 0, 1e9), 12.0);
  EXPECT_DOUBLE_EQ(parse_decimal("-2.5", "--x", -10, 10), -2.5);
  for (const std::string& bad :
       std::vector<std::string>{"", ".", "-", "-0.5", "1.5", "nan", "inf", "1e-3", "0x0.8", " 0.5",
                                "0.5 ", "+0.5", "0.5.1", "0,5", "\xff", std::string(50, '0')})
    EXPECT_THROW(parse_decimal(bad, "--min-fraction", 0, 1), UsageError) << bad;
  EXPECT_EQ(message_of([] { parse_decimal("fast", "--min-h2d-gbps", 0, 1e9); }),
            "--min-h2d-gbps \"fast\": expected a decimal number from 0 to 1000000000");
}

}  // namespace
}  // namespace cudatool
