// DeviceData without a GPU: architecture names, the compiled-in table (against the file
// in share/ and against cuda_occupancy.h), PyCUDA's alignment helpers, validation.
#include "cudatool/occupancy/device_data.hpp"

#include <cuda_occupancy.h>
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

nlohmann::json table_file() {
  std::ifstream in(std::string(CUDATOOL_SOURCE_DIR) + "/share/architectures.json");
  EXPECT_TRUE(in.good());
  return nlohmann::json::parse(in);
}

TEST(DeviceDataNames, ArchitectureSpellingsParse) {
  struct Case {
    const char* text;
    int major, minor;
  };
  for (const Case& c :
       {Case{"sm_90", 9, 0}, Case{"sm_90a", 9, 0}, Case{"compute_90", 9, 0}, Case{"9.0", 9, 0},
        Case{"SM_121", 12, 1}, Case{" sm_86 ", 8, 6}, Case{"sm_100f", 10, 0},
        Case{"compute_75", 7, 5}, Case{"12.0", 12, 0}, Case{"sm_50", 5, 0}}) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(parse_architecture(c.text), (ComputeCapability{c.major, c.minor}));
  }
}

TEST(DeviceDataNames, MalformedOrUnknownArchitecturesAreUsageErrorsNamingTheValue) {
  for (const char* text :
       {"banana", "", "sm_", "sm_9", "sm_1234", "9.10", "9", "sm_9x", "compute_", "sm90", "-1.0"}) {
    SCOPED_TRACE(text);
    try {
      parse_architecture(text);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("\"" + std::string(text) + "\""), std::string::npos)
          << e.what();
      EXPECT_NE(std::string(e.what()).find("sm_90"), std::string::npos) << "lists the known ones";
    }
  }
  // Well formed but not in the table.
  for (const char* text : {"sm_13", "sm_88", "sm_101", "compute_35", "13.0"}) {
    SCOPED_TRACE(text);
    try {
      DeviceData data(text);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("not in cudatool's table"), std::string::npos)
          << e.what();
    }
  }
}

TEST(DeviceDataTable, CoversMaxwellToBlackwellInOrder) {
  const auto rows = known_architectures();
  ASSERT_EQ(rows.size(), 19u);
  EXPECT_EQ(rows.front().name, "sm_50");
  EXPECT_EQ(rows.back().name, "sm_121");
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_LT(rows[i - 1].compute_capability, rows[i].compute_capability);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.name, row.compute_capability.sm());
    EXPECT_FALSE(row.family.empty());
    EXPECT_EQ(row.max_threads_per_multiprocessor % row.warp_size, 0);
    EXPECT_GE(row.shared_memory_per_block_optin, row.shared_memory_per_block);
    EXPECT_LE(row.shared_memory_per_block_optin + row.reserved_shared_memory_per_block,
              row.shared_memory_per_multiprocessor);
    EXPECT_LE(row.registers_per_block, row.registers_per_multiprocessor);
    EXPECT_EQ(row.sm_count.has_value(), !row.sm_count_part.empty());
    EXPECT_NO_THROW(DeviceData(row, DeviceDataOrigin::architecture_table));
  }
}

// The compiled-in table is the file in share/, and every column names its source.
TEST(DeviceDataTable, CompiledInTableIsTheFileAndEveryValueHasASource) {
  const nlohmann::json file = table_file();
  const auto& sources = file.at("sources");
  const auto& fields = file.at("fields");
  for (const auto& [field, source] : fields.items()) {
    SCOPED_TRACE(field);
    EXPECT_TRUE(sources.contains(source.get<std::string>())) << source;
  }
  const std::set<std::string> descriptive = {"compute_capability", "family", "sm_count_part"};
  ASSERT_EQ(file.at("architectures").size(), known_architectures().size());
  for (const auto& row : file.at("architectures")) {
    const std::string cc = row.at("compute_capability").get<std::string>();
    SCOPED_TRACE(cc);
    for (const auto& [field, value] : row.items()) {
      if (!descriptive.count(field)) {
        EXPECT_TRUE(fields.contains(field)) << field << " has no source";
      }
    }
    for (const auto& [field, source] : fields.items())
      EXPECT_TRUE(row.contains(field)) << "row lacks " << field;
    // The compiled-in row has the file's values.
    nlohmann::json compiled = DeviceData(cc).properties();
    for (const auto& [field, source] : fields.items())
      EXPECT_EQ(compiled.at(field), row.at(field)) << field;
  }
}

// The columns taken from cuda_occupancy.h agree with it for every architecture.
TEST(DeviceDataTable, AgreesWithCudaOccupancyHeader) {
  for (const auto& row : known_architectures()) {
    SCOPED_TRACE(row.name);
    cudaOccDeviceProp prop;
    prop.computeMajor = row.compute_capability.major;
    prop.computeMinor = row.compute_capability.minor;
    int value = 0;
    ASSERT_EQ(cudaOccMaxBlocksPerMultiprocessor(&value, &prop), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, row.max_blocks_per_multiprocessor);
    ASSERT_EQ(cudaOccRegAllocationGranularity(&value, &prop), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, row.register_allocation_granularity);
    ASSERT_EQ(cudaOccSMemAllocationGranularity(&value, &prop), CUDA_OCC_SUCCESS);
    EXPECT_EQ(value, row.shared_memory_allocation_granularity);
    // The header allows 256 registers per thread from 7.x on; the guide's limit is 255.
    ASSERT_EQ(cudaOccRegAllocationMaxPerThread(&value, &prop), CUDA_OCC_SUCCESS);
    EXPECT_LE(row.max_registers_per_thread, value);
    // The shared memory per SM is one of the carve-outs the header knows (Volta on).
    if (row.compute_capability.major >= 7) {
      std::size_t size = row.shared_memory_per_multiprocessor;
      ASSERT_EQ(cudaOccAlignUpShmemSizeVoltaPlus(&size, &prop), CUDA_OCC_SUCCESS);
      EXPECT_EQ(size, row.shared_memory_per_multiprocessor);
    }
  }
}

// Spot checks against the Programming Guide's specification table, written out by hand.
TEST(DeviceDataTable, ProgrammingGuideValues) {
  struct Expected {
    const char* arch;
    int warps_per_mp, blocks_per_mp, registers_per_block;
    std::size_t smem_per_mp_kib, smem_optin_kib, reserved;
  };
  for (const Expected& e : {
           Expected{"sm_50", 64, 32, 65536, 64, 48, 0},
           Expected{"sm_52", 64, 32, 65536, 96, 48, 0},
           Expected{"sm_53", 64, 32, 32768, 64, 48, 0},
           Expected{"sm_62", 64, 32, 32768, 64, 48, 0},
           Expected{"sm_70", 64, 32, 65536, 96, 96, 0},
           Expected{"sm_75", 32, 16, 65536, 64, 64, 0},
           Expected{"sm_80", 64, 32, 65536, 164, 163, 1024},
           Expected{"sm_86", 48, 16, 65536, 100, 99, 1024},
           Expected{"sm_87", 48, 16, 65536, 164, 163, 1024},
           Expected{"sm_89", 48, 24, 65536, 100, 99, 1024},
           Expected{"sm_90", 64, 32, 65536, 228, 227, 1024},
           Expected{"sm_100", 64, 32, 65536, 228, 227, 1024},
           Expected{"sm_120", 48, 24, 65536, 100, 99, 1024},
       }) {
    SCOPED_TRACE(e.arch);
    const DeviceData d(e.arch);
    EXPECT_EQ(d.warps_per_mp(), e.warps_per_mp);
    EXPECT_EQ(d.thread_blocks_per_mp(), e.blocks_per_mp);
    EXPECT_EQ(d.registers(), e.registers_per_block);
    EXPECT_EQ(d.properties().registers_per_multiprocessor, 65536);
    EXPECT_EQ(d.properties().shared_memory_per_multiprocessor, e.smem_per_mp_kib * 1024);
    EXPECT_EQ(d.properties().shared_memory_per_block_optin, e.smem_optin_kib * 1024);
    EXPECT_EQ(d.properties().reserved_shared_memory_per_block, e.reserved);
    EXPECT_EQ(d.shared_memory(), 49152u);
    EXPECT_EQ(d.max_threads(), 1024);
    EXPECT_EQ(d.warp_size(), 32);
    EXPECT_EQ(d.properties().max_registers_per_thread, 255);
    EXPECT_EQ(d.smem_granularity(), 32);
  }
  EXPECT_EQ(DeviceData("sm_75").smem_alloc_granularity(), 256);
  EXPECT_EQ(DeviceData("sm_80").smem_alloc_granularity(), 128);
  EXPECT_EQ(DeviceData("sm_90").properties().sm_count, 132);
  EXPECT_EQ(DeviceData("sm_90").properties().sm_count_part, "H100 SXM5");
  EXPECT_FALSE(DeviceData("sm_86").properties().sm_count.has_value());
}

TEST(DeviceDataAlignment, WarpSpanCappedAtOneCacheLine) {
  const DeviceData d("sm_90");
  EXPECT_EQ(d.align_bytes(1), 32);
  EXPECT_EQ(d.align_bytes(2), 64);
  EXPECT_EQ(d.align_bytes(), 128);
  EXPECT_EQ(d.align_bytes(8), 128);
  EXPECT_EQ(d.align_bytes(16), 128);
  for (int bad : {0, 3, 12, 32, -4}) EXPECT_THROW(d.align_bytes(bad), UsageError) << bad;

  EXPECT_EQ(d.align(0), 0u);
  EXPECT_EQ(d.align(1), 128u);
  EXPECT_EQ(d.align(128), 128u);
  EXPECT_EQ(d.align(129), 256u);
  EXPECT_EQ(d.align(33, 1), 64u);

  EXPECT_EQ(d.align_words(1), 32);
  EXPECT_EQ(d.align_words(4), 32);
  EXPECT_EQ(d.align_words(8), 16);
  EXPECT_EQ(d.align_words(16), 8);

  EXPECT_EQ(d.align_dtype(0, 4), 0u);
  EXPECT_EQ(d.align_dtype(1, 4), 32u);
  EXPECT_EQ(d.align_dtype(32, 4), 32u);
  EXPECT_EQ(d.align_dtype(33, 4), 64u);
  EXPECT_EQ(d.align_dtype(17, 8), 32u);
  EXPECT_EQ(d.align_dtype(9, 16), 16u);
}

TEST(DeviceDataAlignment, TextureChannelCounts) {
  EXPECT_EQ(DeviceData::make_valid_tex_channel_count(1), 1);
  EXPECT_EQ(DeviceData::make_valid_tex_channel_count(2), 2);
  EXPECT_EQ(DeviceData::make_valid_tex_channel_count(3), 4);
  EXPECT_EQ(DeviceData::make_valid_tex_channel_count(4), 4);
  EXPECT_THROW(DeviceData::make_valid_tex_channel_count(0), UsageError);
  EXPECT_THROW(DeviceData::make_valid_tex_channel_count(5), UsageError);
}

TEST(DeviceDataCustom, PlainStructIsValidatedFieldByField) {
  const DeviceProperties good = DeviceData("sm_90").properties();
  EXPECT_EQ(DeviceData(good).properties(), good);
  EXPECT_EQ(DeviceData(good).origin(), DeviceDataOrigin::custom);

  auto expect_rejected = [&](auto mutate, const std::string& field) {
    DeviceProperties p = good;
    mutate(p);
    try {
      DeviceData data(p);
      ADD_FAILURE() << field << " accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find(field), std::string::npos) << e.what();
    }
  };
  expect_rejected([](DeviceProperties& p) { p.warp_size = 0; }, "warp_size");
  expect_rejected([](DeviceProperties& p) { p.registers_per_block = -1; }, "registers_per_block");
  expect_rejected([](DeviceProperties& p) { p.shared_memory_per_multiprocessor = 0; },
                  "shared_memory_per_multiprocessor");
  expect_rejected([](DeviceProperties& p) { p.max_blocks_per_multiprocessor = 0; },
                  "max_blocks_per_multiprocessor");
  expect_rejected([](DeviceProperties& p) { p.sm_count = 0; }, "sm_count");
  expect_rejected([](DeviceProperties& p) { p.shared_memory_per_block_optin = 1024; },
                  "shared_memory_per_block_optin");
}

TEST(DeviceDataCustom, SmCountOverride) {
  DeviceData d("sm_86");
  d.set_sm_count(84);
  EXPECT_EQ(d.properties().sm_count, 84);
  EXPECT_THROW(d.set_sm_count(0), UsageError);
  EXPECT_EQ(d.properties().sm_count, 84);
}

TEST(DeviceDataJson, HasTheTableFieldsAndPyCudaNames) {
  const nlohmann::json j = DeviceData("sm_90");
  EXPECT_EQ(j.at("name"), "sm_90");
  EXPECT_EQ(j.at("compute_capability"), "9.0");
  EXPECT_EQ(j.at("origin"), "architecture_table");
  EXPECT_EQ(j.at("warps_per_mp"), 64);
  EXPECT_EQ(j.at("thread_blocks_per_mp"), 32);
  EXPECT_EQ(j.at("max_threads"), 1024);
  EXPECT_EQ(j.at("registers"), 65536);
  EXPECT_EQ(j.at("shared_memory"), 49152);
  EXPECT_EQ(j.at("shared_memory_per_block_optin"), 232448);
  EXPECT_EQ(j.at("sm_count"), 132);
  const nlohmann::json unknown = DeviceData("sm_89");
  EXPECT_TRUE(unknown.at("sm_count").is_null());
  EXPECT_TRUE(unknown.at("sm_count_part").is_null());
}

}  // namespace
}  // namespace cudatool
