// DeviceData without a GPU: architecture names, the compiled-in table (against the file
// in share/ and against cuda_occupancy.h), PyCUDA's alignment helpers, validation.
#include "cudatool/occupancy/device_data.hpp"
#include "json_tree.hpp"
#include "occupancy_json.hpp"  // the renderer (apps/cudatool/)

#include <cuda_occupancy.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"

namespace cudatool {
namespace {

// The table row of a name as a flag gives it (the grammar, then the table), or nullptr.
const DeviceProperties* row_of(std::string_view text) {
  const auto arch = Arch::try_parse(text);
  return arch ? find_architecture(arch->cc) : nullptr;
}

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
        Case{"sm_121", 12, 1}, Case{"sm_86", 8, 6}, Case{"sm_100f", 10, 0},
        Case{"compute_75", 7, 5}, Case{"12.0", 12, 0}, Case{"sm_50", 5, 0}}) {
    SCOPED_TRACE(c.text);
    EXPECT_EQ(DeviceData(Arch::parse(c.text, "--arch")).properties().compute_capability,
              (ComputeCapability{c.major, c.minor}));
  }
}

// The names images carry: architecture-specific ("a") and family-specific ("f") targets
// share the base row; CUDA 12.8/12.9's sm_101 is CUDA 13's sm_110.
TEST(DeviceDataNames, SuffixedAndFormerNamesMapToTheBaseRow) {
  struct Case {
    const char* text;
    const char* row;
  };
  for (const Case& c :
       {Case{"sm_90a", "sm_90"}, Case{"sm_100a", "sm_100"}, Case{"sm_100f", "sm_100"},
        Case{"sm_103a", "sm_103"}, Case{"sm_103f", "sm_103"}, Case{"sm_110a", "sm_110"},
        Case{"sm_110f", "sm_110"}, Case{"sm_120a", "sm_120"}, Case{"sm_120f", "sm_120"},
        Case{"sm_121a", "sm_121"}, Case{"sm_121f", "sm_121"}, Case{"compute_120f", "sm_120"},
        Case{"sm_90a", "sm_90"}, Case{"sm_88", "sm_88"}, Case{"sm_101", "sm_110"},
        Case{"sm_101a", "sm_110"}, Case{"sm_101f", "sm_110"}, Case{"compute_101", "sm_110"},
        Case{"10.1", "sm_110"}}) {
    SCOPED_TRACE(c.text);
    const DeviceProperties* row = row_of(c.text);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->name, c.row);
    EXPECT_EQ(DeviceData(Arch::parse(c.text, "test")).properties().name, c.row);
  }
  // Without the table: the number the name spells, suffix dropped, former name kept.
  EXPECT_EQ(Arch::try_parse("sm_101a")->cc, (ComputeCapability{10, 1}));
  EXPECT_EQ(Arch::try_parse("sm_999")->cc, (ComputeCapability{99, 9}));
  EXPECT_EQ(find_architecture(ComputeCapability{10, 1}),
            find_architecture(ComputeCapability{11, 0}));
  // find_architecture never throws: nullptr for numbers not in the table.
  for (const char* text : {"sm_999", "sm_102", "sm_35", "13.0"}) {
    SCOPED_TRACE(text);
    EXPECT_EQ(find_architecture(Arch::parse(text, "test").cc), nullptr);
  }
}

TEST(DeviceDataNames, MalformedOrUnknownArchitecturesAreUsageErrorsNamingTheValue) {
  for (const char* text : {"banana", "", "sm_", "sm_9", "sm_1234", "9.10", "9", "sm_9x", "compute_",
                           "sm90", "-1.0", "SM_90", " sm_90", "sm_090"}) {
    SCOPED_TRACE(text);
    try {
      DeviceData(Arch::parse(text, "--arch"), "--arch", text);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("\"" + std::string(text) + "\""), std::string::npos)
          << e.what();
      EXPECT_EQ(std::string(e.what()).rfind("--arch \"", 0), 0u) << "names the source";
    }
  }
  // Well formed but not in the table.
  for (const char* text : {"sm_13", "sm_102", "sm_104", "compute_35", "13.0"}) {
    SCOPED_TRACE(text);
    try {
      DeviceData data(Arch::parse(text, "--arch"), "--arch", text);
      ADD_FAILURE() << "accepted";
    } catch (const UsageError& e) {
      EXPECT_NE(std::string(e.what()).find("not in cudatool's table"), std::string::npos)
          << e.what();
      // The name as it was written ("13.0", not sm_130), after the source.
      EXPECT_EQ(std::string(e.what()).rfind("--arch \"" + std::string(text) + "\": ", 0), 0u)
          << e.what();
    }
  }
}

// DeviceData from an Arch (an image's architecture, or a flag's once parsed): the row its
// name gives, and the same refusals, naming the source.
TEST(DeviceDataNames, AnArchGivesTheRowOfItsName) {
  for (const char* name : {"sm_90", "sm_90a", "sm_100f", "compute_90", "9.0", "sm_101"}) {
    SCOPED_TRACE(name);
    EXPECT_EQ(DeviceData(Arch::parse(name, "test")).properties(), *row_of(name));
    EXPECT_EQ(DeviceData(Arch::parse(name, "test")).origin(), DeviceDataOrigin::architecture_table);
  }
  Arch sm_5;  // from a malformed fatbin entry: outside the grammar
  sm_5.cc = {0, 5};
  try {
    DeviceData data(sm_5, "image");
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("image \"sm_5\": expected an architecture", 0), 0u)
        << e.what();
  }
  try {
    DeviceData data(Arch::parse("sm_13", "test"));
    ADD_FAILURE() << "accepted";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("not in cudatool's table"), std::string::npos) << e.what();
  }
}

TEST(DeviceDataTable, CoversMaxwellToBlackwellInOrder) {
  const auto rows = known_architectures();
  ASSERT_EQ(rows.size(), 20u);
  EXPECT_EQ(rows.front().name, "sm_50");
  EXPECT_EQ(rows.back().name, "sm_121");
  for (std::size_t i = 1; i < rows.size(); ++i)
    EXPECT_LT(rows[i - 1].compute_capability, rows[i].compute_capability);
  for (const auto& row : rows) {
    SCOPED_TRACE(row.name);
    EXPECT_EQ(row.name, row.compute_capability.sm());
    EXPECT_EQ(row.sm_count.has_value(), !row.sm_count_part.empty());
    // Every row loads, unknown values and all.
    EXPECT_NO_THROW(DeviceData(row, DeviceDataOrigin::architecture_table));
    EXPECT_EQ(row.unknown_fields.empty(), row.unknown_reason.empty());
    if (!row.unknown_fields.empty()) continue;
    EXPECT_FALSE(row.family.empty());
    EXPECT_EQ(row.max_threads_per_multiprocessor % row.warp_size, 0);
    EXPECT_GE(row.shared_memory_per_block_optin, row.shared_memory_per_block);
    EXPECT_LE(row.shared_memory_per_block_optin + row.reserved_shared_memory_per_block,
              row.shared_memory_per_multiprocessor);
    EXPECT_LE(row.registers_per_block, row.registers_per_multiprocessor);
  }
}

// Every architecture CUDA 13.0's nvcc compiles for (`nvcc --list-gpu-code`, which also
// lists compute_XX for the same numbers) has a row.
TEST(DeviceDataTable, EveryCuda13TargetHasARow) {
  for (const char* arch : {"sm_75", "sm_80", "sm_86", "sm_87", "sm_88", "sm_89", "sm_90", "sm_100",
                           "sm_110", "sm_103", "sm_120", "sm_121"}) {
    SCOPED_TRACE(arch);
    const DeviceProperties* row = row_of(arch);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->name, arch);
  }
  // The rows whose every value is known: all but sm_88.
  std::vector<std::string> partial;
  for (const auto& row : known_architectures())
    if (!row.unknown_fields.empty()) partial.push_back(row.name);
  EXPECT_EQ(partial, std::vector<std::string>{"sm_88"});
}

// A row with unknown values: what is known is there, what is not is 0, named, explained.
TEST(DeviceDataTable, UnknownValuesAreNamedAndExplained) {
  const DeviceData d(Arch::parse("sm_88", "test"));
  const auto& p = d.properties();
  EXPECT_EQ(p.compute_capability, (ComputeCapability{8, 8}));
  EXPECT_EQ(p.family, "");
  EXPECT_NE(p.unknown_reason.find("8.8"), std::string::npos) << p.unknown_reason;
  // What cuda_occupancy.h hard-codes for 8.x is known.
  EXPECT_TRUE(d.knows("max_blocks_per_multiprocessor"));
  EXPECT_EQ(p.max_blocks_per_multiprocessor, 16);
  EXPECT_TRUE(d.knows("register_allocation_granularity"));
  EXPECT_TRUE(d.knows("shared_memory_allocation_granularity"));
  for (const char* field : {"warp_size", "max_threads_per_multiprocessor",
                            "shared_memory_per_multiprocessor", "cache_line_size"}) {
    SCOPED_TRACE(field);
    EXPECT_FALSE(d.knows(field));
  }
  EXPECT_EQ(p.warp_size, 0);
  EXPECT_EQ(d.warps_per_mp(), 0);  // no division by an unknown warp size
  const std::vector<std::string> inputs = d.unknown_occupancy_inputs();
  EXPECT_EQ(inputs.size(), 10u);
  EXPECT_EQ(inputs.front(), "max_threads_per_block");
  EXPECT_TRUE(std::find(inputs.begin(), inputs.end(), "cache_line_size") == inputs.end())
      << "the cache line is no occupancy input";
  EXPECT_THROW(d.align_bytes(4), RequirementError);
  // Fully known rows have no unknown inputs.
  for (const char* arch : {"sm_75", "sm_90", "sm_110", "sm_121"})
    EXPECT_TRUE(DeviceData(Arch::parse(arch, "test")).unknown_occupancy_inputs().empty()) << arch;

  // JSON: null where the table says null, the PyCUDA names too.
  const nlohmann::json j = cudatool::test::json_tree(d);
  EXPECT_TRUE(j.at("warp_size").is_null());
  EXPECT_TRUE(j.at("warps_per_mp").is_null());
  EXPECT_TRUE(j.at("family").is_null());
  EXPECT_EQ(j.at("max_blocks_per_multiprocessor"), 16);
  EXPECT_EQ(j.at("thread_blocks_per_mp"), 16);
  EXPECT_EQ(j.at("unknown_fields").size(), p.unknown_fields.size());
  EXPECT_EQ(j.at("unknown_reason"), p.unknown_reason);
  const nlohmann::json known = cudatool::test::json_tree(DeviceData(Arch::parse("sm_90", "test")));
  EXPECT_TRUE(known.at("unknown_fields").empty());
  EXPECT_TRUE(known.at("unknown_reason").is_null());
}

// The compiled-in table is the file in share/, and every value names its source: each
// column lists sources (document, section, url), and a known value's row is covered by
// one of them; a null value's row says why.
TEST(DeviceDataTable, CompiledInTableIsTheFileAndEveryValueHasASource) {
  const nlohmann::json file = table_file();
  const auto& sources = file.at("sources");
  const auto& fields = file.at("fields");
  for (const auto& [key, source] : sources.items()) {
    SCOPED_TRACE(key);
    EXPECT_FALSE(source.at("document").get<std::string>().empty());
    EXPECT_FALSE(source.at("section").get<std::string>().empty());
    EXPECT_TRUE(source.at("url").is_null() ||
                source.at("url").get<std::string>().starts_with("https://"));
  }
  for (const auto& [field, list] : fields.items()) {
    SCOPED_TRACE(field);
    ASSERT_FALSE(list.empty());
    for (const auto& key : list) EXPECT_TRUE(sources.contains(key.get<std::string>())) << key;
  }
  const std::set<std::string> descriptive = {
      "compute_capability",          "family",       "sm_count_part", "unknown_reason",
      "former_compute_capabilities", "former_source"};
  ASSERT_EQ(file.at("architectures").size(), known_architectures().size());
  for (const auto& row : file.at("architectures")) {
    const std::string cc = row.at("compute_capability").get<std::string>();
    SCOPED_TRACE(cc);
    for (const auto& [field, value] : row.items()) {
      if (!descriptive.count(field)) {
        EXPECT_TRUE(fields.contains(field)) << field << " has no source";
      }
    }
    bool any_null = false;
    for (const auto& [field, list] : fields.items()) {
      ASSERT_TRUE(row.contains(field)) << "row lacks " << field;
      if (row.at(field).is_null()) {
        // sm_count is null where an architecture has no single part: not an unknown.
        if (field != "sm_count") any_null = true;
        continue;
      }
      // Some source of the column covers this row (no compute_capabilities: every row).
      bool covered = false;
      for (const auto& key : list) {
        const auto& source = sources.at(key.get<std::string>());
        if (!source.contains("compute_capabilities"))
          covered = true;
        else
          for (const auto& covers : source.at("compute_capabilities"))
            if (covers == cc) covered = true;
      }
      EXPECT_TRUE(covered) << field << " = " << row.at(field) << " has no source for " << cc;
    }
    EXPECT_EQ(row.contains("unknown_reason"), any_null) << "a null value needs unknown_reason";
    if (row.contains("former_compute_capabilities")) {
      ASSERT_TRUE(row.contains("former_source"));
      EXPECT_TRUE(sources.contains(row.at("former_source").get<std::string>()));
    }
    // The compiled-in row has the file's values, nulls included.
    const DeviceData data(Arch::parse(cc, "test"));
    nlohmann::json compiled = cudatool::test::json_tree(data.properties());
    for (const auto& [field, source] : fields.items()) {
      EXPECT_EQ(compiled.at(field), row.at(field)) << field;
      if (field != "sm_count") {
        EXPECT_EQ(data.knows(field), !row.at(field).is_null()) << field;
      }
    }
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
    if (!row.unknown_fields.empty()) continue;  // no shared memory size to check
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
           // CUDA 13.0 Programming Guide, Tables 30 and 31 (10.3, 11.0 and 12.x columns).
           Expected{"sm_103", 64, 32, 65536, 228, 227, 1024},
           Expected{"sm_110", 48, 24, 65536, 228, 227, 1024},
           Expected{"sm_120", 48, 24, 65536, 100, 99, 1024},
           Expected{"sm_121", 48, 24, 65536, 100, 99, 1024},
       }) {
    SCOPED_TRACE(e.arch);
    const DeviceData d(Arch::parse(e.arch, "test"));
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
  EXPECT_EQ(DeviceData(Arch::parse("sm_75", "test")).smem_alloc_granularity(), 256);
  EXPECT_EQ(DeviceData(Arch::parse("sm_80", "test")).smem_alloc_granularity(), 128);
  EXPECT_EQ(DeviceData(Arch::parse("sm_90", "test")).properties().sm_count, 132);
  EXPECT_EQ(DeviceData(Arch::parse("sm_90", "test")).properties().sm_count_part, "H100 SXM5");
  EXPECT_FALSE(DeviceData(Arch::parse("sm_86", "test")).properties().sm_count.has_value());
}

TEST(DeviceDataAlignment, WarpSpanCappedAtOneCacheLine) {
  const DeviceData d(Arch::parse("sm_90", "test"));
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
  const DeviceProperties good = DeviceData(Arch::parse("sm_90", "test")).properties();
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
  expect_rejected([](DeviceProperties& p) { p.unknown_fields = {"warps"}; }, "warps");
  // A value listed as unknown may be 0; the others are still checked.
  DeviceProperties partial = good;
  partial.warp_size = 0;
  partial.unknown_fields = {"warp_size"};
  partial.unknown_reason = "not measured";
  const DeviceData data(partial);
  EXPECT_FALSE(data.knows("warp_size"));
  EXPECT_EQ(data.unknown_occupancy_inputs(), std::vector<std::string>{"warp_size"});
  partial.registers_per_block = 0;
  expect_rejected([&](DeviceProperties& p) { p = partial; }, "registers_per_block");
}

TEST(DeviceDataCustom, SmCountOverride) {
  DeviceData d(Arch::parse("sm_86", "test"));
  d.set_sm_count(84);
  EXPECT_EQ(d.properties().sm_count, 84);
  EXPECT_THROW(d.set_sm_count(0), UsageError);
  EXPECT_EQ(d.properties().sm_count, 84);
}

TEST(DeviceDataJson, HasTheTableFieldsAndPyCudaNames) {
  const nlohmann::json j = cudatool::test::json_tree(DeviceData(Arch::parse("sm_90", "test")));
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
  const nlohmann::json unknown =
      cudatool::test::json_tree(DeviceData(Arch::parse("sm_89", "test")));
  EXPECT_TRUE(unknown.at("sm_count").is_null());
  EXPECT_TRUE(unknown.at("sm_count_part").is_null());
}

}  // namespace
}  // namespace cudatool
