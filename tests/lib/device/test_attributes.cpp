#include <gtest/gtest.h>

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include "cudatool/base/error.hpp"
#include "cudatool/device/attributes.hpp"
#include "device/cuda_attribute.hpp"

using namespace cudatool;

namespace {

// Every CU_DEVICE_ATTRIBUTE_* enumerator of the cuda.h this build compiles against.
std::vector<std::string> enumerators_in_cuda_h() {
  std::ifstream file(std::string(CUDATOOL_CUDA_INCLUDE_DIR) + "/cuda.h");
  std::stringstream text;
  text << file.rdbuf();
  const std::string header = text.str();
  const auto begin = header.find("typedef enum CUdevice_attribute_enum");
  const auto end = header.find("} CUdevice_attribute;", begin);
  EXPECT_NE(begin, std::string::npos);
  EXPECT_NE(end, std::string::npos);
  const std::string body = header.substr(begin, end - begin);
  // Each enumerator starts a line: "    CU_DEVICE_ATTRIBUTE_NAME = 1, /**< ... */".
  std::vector<std::string> names;
  std::istringstream lines(body);
  for (std::string line; std::getline(lines, line);) {
    const auto start = line.find_first_not_of(" \t");
    if (start == std::string::npos || line.compare(start, 20, "CU_DEVICE_ATTRIBUTE_") != 0)
      continue;
    auto end = start;
    while (end < line.size() &&
           (std::isalnum(static_cast<unsigned char>(line[end])) || line[end] == '_'))
      ++end;
    names.push_back(line.substr(start, end - start));
  }
  return names;
}

}  // namespace

TEST(AttributeTable, CoversEveryEnumeratorOfCudaH) {
  std::set<std::string> known;
  for (const auto& info : device_attributes()) known.insert(std::string(info.enumerator));
  for (const auto& alias : device_attribute_aliases()) known.insert(std::string(alias.enumerator));
  const auto names = enumerators_in_cuda_h();
  ASSERT_GT(names.size(), 140u);
  for (const auto& name : names) {
    if (name == "CU_DEVICE_ATTRIBUTE_MAX") continue;  // the enum's end marker
    EXPECT_TRUE(known.count(name)) << name
                                   << " is in cuda.h but not in the table: run "
                                      "tools/gen_attribute_table.py";
  }
}

TEST(AttributeTable, NamesAndValuesAreUnique) {
  std::set<std::string_view> names;
  std::set<DeviceAttribute> values;
  for (const auto& info : device_attributes()) {
    EXPECT_TRUE(names.insert(info.name).second) << info.name;
    EXPECT_TRUE(values.insert(info.attribute).second) << info.name;
  }
  for (const auto& alias : device_attribute_aliases()) {
    EXPECT_FALSE(names.count(alias.name)) << alias.name << " is both an attribute and an alias";
    EXPECT_NE(find_attribute(alias.target), nullptr) << alias.target;
  }
}

TEST(AttributeTable, PyCudaStyleNames) {
  const AttributeInfo* info = find_attribute("max_threads_per_block");
  ASSERT_NE(info, nullptr);
  EXPECT_EQ(info->attribute, to_attribute(CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK));
  EXPECT_EQ(find_attribute("MULTIPROCESSOR_COUNT")->attribute,
            to_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT));
  EXPECT_EQ(find_attribute("CU_DEVICE_ATTRIBUTE_WARP_SIZE")->attribute,
            to_attribute(CU_DEVICE_ATTRIBUTE_WARP_SIZE));
  EXPECT_EQ(find_attribute("compute-capability-major")->attribute,
            to_attribute(CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR));
}

TEST(AttributeTable, DeprecatedDuplicatesAreAliases) {
  // SHARED_MEMORY_PER_BLOCK has MAX_SHARED_MEMORY_PER_BLOCK's value: one attribute, two names.
  EXPECT_EQ(find_attribute("shared_memory_per_block"),
            find_attribute("max_shared_memory_per_block"));
  EXPECT_EQ(find_attribute("registers_per_block")->name, "max_registers_per_block");
  // A deprecated enumerator with a value of its own stays an attribute, marked.
  ASSERT_NE(find_attribute("gpu_overlap"), nullptr);
  EXPECT_TRUE(find_attribute("gpu_overlap")->deprecated);
  EXPECT_FALSE(find_attribute("warp_size")->deprecated);
  EXPECT_EQ(find_attribute("max"), nullptr);  // the end marker is not an attribute
}

TEST(AttributeTable, UnknownNameSuggestsNearNames) {
  EXPECT_EQ(find_attribute("max_thread_per_block"), nullptr);
  const auto near = suggest_attributes("max_thread_per_block");
  ASSERT_FALSE(near.empty());
  EXPECT_EQ(near.front(), "max_threads_per_block");
  EXPECT_EQ(suggest_attributes("warp").front(), "warp_size");
  try {
    attribute_by_name("multiprocesor_count");
    FAIL() << "no error";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown attribute \"multiprocesor_count\""),
              std::string::npos);
    EXPECT_NE(std::string(e.what()).find("multiprocessor_count"), std::string::npos);
  }
}
