// The device cache's entry parser on bytes a damaged disk or another program wrote: numbers
// of the wrong kind are refused, never converted (a float out of int's range once reached an
// undefined conversion inside the JSON library; the fuzzer found it).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>

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
