// OccupancyRecord against the driver on a real GPU: the committed PTX
// (tests/data/occupancy/heavy_kernels.ptx) is loaded with CU_JIT_MAX_REGISTERS at many
// caps, so every register count comes from a real compilation, and each kernel has a
// different amount of static shared memory. For every function, block size and dynamic
// shared-memory size (without and with the opt-in), cuOccupancyMaxActiveBlocksPerMultiprocessor
// must agree with OccupancyRecord, both from the live device's DeviceData and from the
// architecture table's row for its compute capability (sm_90 on an H100).
#include <cuda.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cudatool/device/context.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "device/cuda_attribute.hpp"
#include "driver/driver_api.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

// The kernels of heavy_kernels.cu and their static shared memory.
const std::vector<std::pair<const char*, std::size_t>> kKernels = {
    {"heavy_smem_0", 0},         {"heavy_smem_1024", 1024},   {"heavy_smem_4096", 4096},
    {"heavy_smem_12288", 12288}, {"heavy_smem_24576", 24576}, {"heavy_smem_40960", 40960},
    {"heavy_smem_49152", 49152},
};
// Register caps given to the JIT; the PTX wants more than 255 registers, so the cap
// decides (the JIT's floor is 24).
const std::vector<unsigned> kRegisterCaps = {24, 32, 40, 48, 56, 64, 72, 96, 128, 168, 200, 255};

std::string read_ptx() {
  const std::string path =
      std::string(CUDATOOL_SOURCE_DIR) + "/tests/data/occupancy/heavy_kernels.ptx";
  std::ifstream in(path);
  if (!in) throw std::runtime_error("cannot read " + path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

class Module {
 public:
  Module(const std::string& ptx, unsigned max_registers) {
    CUjit_option options[] = {CU_JIT_MAX_REGISTERS};
    void* values[] = {reinterpret_cast<void*>(static_cast<std::uintptr_t>(max_registers))};
    CUDATOOL_CU(cuModuleLoadDataEx, &module_, ptx.c_str(), 1u, options, values);
  }
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;
  ~Module() {
    if (module_) CUDATOOL_CU_RESULT(cuModuleUnload, module_);
  }
  CUfunction function(const char* name) const {
    CUfunction f = nullptr;
    CUDATOOL_CU(cuModuleGetFunction, &f, module_, name);
    return f;
  }

 private:
  CUmodule module_ = nullptr;
};

int function_attribute(CUfunction f, CUfunction_attribute attribute) {
  int value = 0;
  CUDATOOL_CU(cuFuncGetAttribute, &value, attribute, f);
  return value;
}

std::vector<int> block_sizes() {
  std::vector<int> sizes = {1, 31, 33, 100, 250, 513, 1000};
  for (int threads = 32; threads <= 1024; threads += 32) sizes.push_back(threads);
  return sizes;
}

// Dynamic sizes up to `limit`: small ones, a spread, and the limit itself.
std::vector<std::size_t> dynamic_sizes(std::size_t limit) {
  std::set<std::size_t> sizes = {0, 1, 100, 1000, 3000};
  for (int i = 1; i <= 8; ++i) sizes.insert(limit * static_cast<std::size_t>(i) / 8);
  sizes.insert(limit);
  std::vector<std::size_t> result;
  for (std::size_t size : sizes)
    if (size <= limit) result.push_back(size);
  return result;
}

struct Disagreement {
  std::string source;  // "device" or the table row's name
  int registers;
  std::size_t static_smem, dynamic_smem;
  int threads, driver, ours;
  std::string limited_by;
};

class OccupancyGpu : public testing::GpuTest {};

// Every architecture-level field of the table's row is what the device reports.
TEST_F(OccupancyGpu, TableRowEqualsTheDevice) {
  const DeviceData live(device());
  const DeviceProperties* row = find_architecture(device().compute_capability());
  ASSERT_NE(row, nullptr) << "compute capability " << device().compute_capability().str()
                          << " is not in the table";
  const DeviceProperties& d = live.properties();
  std::cout << "device " << device().ordinal() << ": " << d.name << ", table row " << row->name
            << '\n';
  EXPECT_EQ(d.compute_capability, row->compute_capability);
  EXPECT_EQ(d.max_threads_per_block, row->max_threads_per_block);
  EXPECT_EQ(d.warp_size, row->warp_size);
  EXPECT_EQ(d.max_threads_per_multiprocessor, row->max_threads_per_multiprocessor);
  EXPECT_EQ(d.max_blocks_per_multiprocessor, row->max_blocks_per_multiprocessor);
  EXPECT_EQ(d.registers_per_multiprocessor, row->registers_per_multiprocessor);
  EXPECT_EQ(d.registers_per_block, row->registers_per_block);
  EXPECT_EQ(d.shared_memory_per_multiprocessor, row->shared_memory_per_multiprocessor);
  EXPECT_EQ(d.shared_memory_per_block, row->shared_memory_per_block);
  EXPECT_EQ(d.shared_memory_per_block_optin, row->shared_memory_per_block_optin);
  EXPECT_EQ(d.reserved_shared_memory_per_block, row->reserved_shared_memory_per_block);
  EXPECT_EQ(d.sm_count,
            device().get_attribute(to_attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)));
  if (device().compute_capability() == ComputeCapability{9, 0}) {
    // The H100 the issue names: the same through the name users type.
    const DeviceProperties& sm90 = DeviceData(Arch::parse("sm_90", "test")).properties();
    EXPECT_EQ(sm90.shared_memory_per_multiprocessor, d.shared_memory_per_multiprocessor);
    EXPECT_EQ(sm90.shared_memory_per_block_optin, d.shared_memory_per_block_optin);
    EXPECT_EQ(sm90.max_blocks_per_multiprocessor, d.max_blocks_per_multiprocessor);
  }
}

TEST_F(OccupancyGpu, AgreesWithTheDriverOnEveryConfiguration) {
  const Context context(device());
  const DeviceData live(device());
  const DeviceProperties* row = find_architecture(device().compute_capability());
  ASSERT_NE(row, nullptr);
  const DeviceData table(Arch::parse(row->name, "test"));
  const std::size_t optin = live.properties().shared_memory_per_block_optin;
  const std::size_t default_limit = live.properties().shared_memory_per_block;
  const std::string ptx = read_ptx();
  const std::vector<int> threads_list = block_sizes();

  long configurations = 0, driver_rejections = 0, suggestions = 0;
  std::set<int> register_counts;
  std::vector<Disagreement> disagreements;
  double jit_seconds = 0;
  const auto started = std::chrono::steady_clock::now();

  for (const unsigned cap : kRegisterCaps) {
    const auto jit_start = std::chrono::steady_clock::now();
    const Module module(ptx, cap);
    jit_seconds +=
        std::chrono::duration<double>(std::chrono::steady_clock::now() - jit_start).count();
    for (const auto& [name, declared_static] : kKernels) {
      const CUfunction f = module.function(name);
      const int registers = function_attribute(f, CU_FUNC_ATTRIBUTE_NUM_REGS);
      const auto static_smem =
          static_cast<std::size_t>(function_attribute(f, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES));
      ASSERT_LE(registers, static_cast<int>(std::max(cap, 24u))) << name << " cap " << cap;
      ASSERT_GE(static_smem, declared_static) << name;
      register_counts.insert(registers);

      auto compare = [&](std::size_t dynamic_smem) {
        for (const int threads : threads_list) {
          int driver = 0;
          const CUresult result = CUDATOOL_CU_RESULT(cuOccupancyMaxActiveBlocksPerMultiprocessor,
                                                     &driver, f, threads, dynamic_smem);
          // A launch the driver refuses outright counts as 0 resident blocks.
          if (result != CUDA_SUCCESS) {
            driver = 0;
            ++driver_rejections;
          }
          for (const DeviceData* data : {&live, &table}) {
            const OccupancyRecord ours(*data, threads, static_smem + dynamic_smem, registers);
            ++configurations;
            if (ours.tb_per_mp != driver)
              disagreements.push_back({data == &live ? "device" : data->properties().name,
                                       registers, static_smem, dynamic_smem, threads, driver,
                                       ours.tb_per_mp, std::string(ours.limited_by)});
          }
        }
      };
      // Without opting in: dynamic memory up to the default per-block limit.
      for (const std::size_t dynamic : dynamic_sizes(default_limit - static_smem)) compare(dynamic);

      // The suggested block size, against cuOccupancyMaxPotentialBlockSize.
      int min_grid = 0, block = 0;
      CUDATOOL_CU(cuOccupancyMaxPotentialBlockSize, &min_grid, &block, f, nullptr, 0, 0);
      const BlockSizeSuggestion suggestion = suggest_block_size(live, static_smem, registers);
      EXPECT_EQ(suggestion.block_size, block) << name << " with " << registers << " registers";
      EXPECT_EQ(suggestion.min_grid_size, min_grid)
          << name << " with " << registers << " registers";
      ++suggestions;

      // Opted in to everything the device allows.
      CUDATOOL_CU(cuFuncSetAttribute, f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  static_cast<int>(optin - static_smem));
      for (const std::size_t dynamic : dynamic_sizes(optin - static_smem))
        if (static_smem + dynamic > default_limit) compare(dynamic);
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::cout << "occupancy vs driver on " << live.properties().name << " (table row "
            << table.properties().name << "): " << configurations << " configurations, "
            << disagreements.size() << " disagreements; " << register_counts.size()
            << " register counts (" << *register_counts.begin() << ".." << *register_counts.rbegin()
            << "), " << kKernels.size() << " static sizes, " << driver_rejections
            << " driver rejections, " << suggestions << " block-size suggestions; " << seconds
            << " s (JIT " << jit_seconds << " s)\n";
  for (std::size_t i = 0; i < disagreements.size() && i < 10; ++i) {
    const auto& d = disagreements[i];
    std::cout << "  disagreement (" << d.source << "): regs " << d.registers << ", static "
              << d.static_smem << " B, dynamic " << d.dynamic_smem << " B, threads " << d.threads
              << ": driver " << d.driver << ", cudatool " << d.ours << " (" << d.limited_by
              << ")\n";
  }
  EXPECT_GE(configurations, 20000);
  EXPECT_GE(register_counts.size(), 10u);
  EXPECT_EQ(disagreements.size(), 0u);
}

}  // namespace
}  // namespace cudatool
