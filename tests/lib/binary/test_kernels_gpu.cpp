// `cudatool kernels`' offline answer against the driver, on a GPU: every sm_90 image of a
// toolkit library (libcusparse.so.12 by default: about 5,000 sm_90 kernels in 148 zstd
// images; CUDATOOL_KERNELS_GPU_LIBRARY picks another) is extracted, loaded, and every
// function the module enumerates is loaded (cuFuncLoad: enumerated functions are not
// loaded yet under lazy loading) and compared: the five cuFuncGetAttribute values, and
// cuOccupancyMaxActiveBlocksPerMultiprocessor at several block sizes against the offline
// table's occupancy. Zero differences is the bar. Runs only on an sm_90 device.
#include <cuda.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cudatool/base/mapped_file.hpp"
#include "cudatool/binary/fatbin.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/driver/driver.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

using testing::GpuTest;

std::string library_path() {
  if (const char* p = std::getenv("CUDATOOL_KERNELS_GPU_LIBRARY")) return p;
  const char* home = std::getenv("CUDA_HOME");
  return std::string(home ? home : "/usr/local/cuda") + "/lib64/libcusparse.so.12";
}

class KernelsGpu : public GpuTest {};

TEST_F(KernelsGpu, EverySm90KernelOfAToolkitLibraryMatchesTheDriver) {
  const Device& device = this->device();
  if (device.compute_capability().major != 9 || device.compute_capability().minor != 0)
    GTEST_SKIP() << "needs an sm_90 device, " << device.name() << " is "
                 << device.compute_capability().sm();
  const std::string path = library_path();
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is not there";

  ScanOptions options;
  options.arch = {"sm_90"};
  const ScanResult scan = scan_binaries({path}, options);
  std::map<std::size_t, std::vector<const ScannedKernel*>> by_image;
  for (const auto& k : scan.kernels) by_image[k.image].push_back(&k);

  const MappedFile file(path);
  const ByteReader reader(file.bytes(), path);
  const DeviceData table("sm_90");
  const Context context(device);
  const auto& api = driver::initialized();
  ASSERT_NE(api.cuFuncLoad, nullptr) << "the driver has no cuFuncLoad";
  Decompressor decompressor;
  std::size_t images = 0, kernels = 0, occupancy_checks = 0, differences = 0;
  std::size_t by_enumeration = 0, not_comparable = 0;
  const auto report = [&](const std::string& what) {
    if (++differences <= 30) std::cout << "DIFFERENCE " << what << '\n';
  };
  for (std::size_t i = 0; i < scan.images.size(); ++i) {
    const ScannedImage& image = scan.images[i];
    if (image.kind != "elf" || image.skipped) continue;
    ASSERT_EQ(image.error, "") << image.error;
    // The entry again, by its offsets, decompressed.
    const FatbinContainer container = read_fatbin_container(reader, image.container_offset);
    const FatbinEntry* entry = nullptr;
    for (const auto& e : container.entries)
      if (e.offset == image.offset) entry = &e;
    ASSERT_NE(entry, nullptr);
    const auto bytes = decompressor.contents(*entry, path);
    const Module module(
        context, std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size()));
    ++images;
    unsigned count = 0;
    driver::checked("cuModuleGetFunctionCount", api.cuModuleGetFunctionCount, &count,
                    module.handle());
    std::vector<CUfunction> functions(count);
    if (count > 0)  // an empty array is CUDA_ERROR_INVALID_VALUE
      driver::checked("cuModuleEnumerateFunctions", api.cuModuleEnumerateFunctions,
                      functions.data(), count, module.handle());
    // The enumeration lists every function, device functions too. A kernel is what
    // cuModuleGetFunction finds by name (which loads it); cuFuncLoad is called on each
    // enumerated function as well (on the H100 with driver 580 it answered
    // CUDA_ERROR_NOT_FOUND for kernels of cuSPARSE, so its failure is not a difference).
    std::map<std::string, CUfunction> loaded, enumerated;
    for (CUfunction f : functions) {
      const char* name = nullptr;
      driver::checked("cuFuncGetName", api.cuFuncGetName, &name, f);
      (void)driver::unchecked("cuFuncLoad", api.cuFuncLoad, f);
      enumerated[name] = f;
      CUfunction kernel = nullptr;
      if (driver::unchecked("cuModuleGetFunction", api.cuModuleGetFunction, &kernel,
                            module.handle(), name) == CUDA_SUCCESS)
        loaded[name] = kernel;
    }
    const auto& offline = by_image[i];
    std::set<std::string> offline_names;
    for (const ScannedKernel* k : offline) offline_names.insert(k->resources.name);
    for (const auto& [name, f] : loaded)
      if (!offline_names.count(name))
        report(name + ": a kernel to the driver, offline lists no such kernel");
    for (const ScannedKernel* k : offline) {
      const KernelResources& r = k->resources;
      auto it = loaded.find(r.name);
      if (it == loaded.end()) {
        // An entry the driver enumerates but will not hand out by name (seen on the H100
        // for cuSPARSE's spmm_op_fixup_kernel and csrmm_op_kernel templates): compared
        // through the enumerated handle where the driver answers for it, else counted as
        // not comparable (printed, never a silent pass).
        const auto e = enumerated.find(r.name);
        // CONST_SIZE_BYTES answers only for a loaded function (cuFuncLoad).
        int probe = 0;
        if (e != enumerated.end() &&
            driver::unchecked("cuFuncGetAttribute", api.cuFuncGetAttribute, &probe,
                              CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, e->second) == CUDA_SUCCESS) {
          ++by_enumeration;
          it = e;
        } else {
          if (e == enumerated.end())
            report(r.name + ": not a function the driver enumerates in the module");
          else if (++not_comparable <= 5)
            std::cout << "NOT COMPARABLE " << r.name
                      << ": enumerated, but the driver cannot load it (cuFuncLoad fails)\n";
          continue;
        }
      }
      ++kernels;
      const auto attribute = [&](CUfunction_attribute a) {
        int v = -1;
        driver::checked("cuFuncGetAttribute", api.cuFuncGetAttribute, &v, a, it->second);
        return v;
      };
      const std::pair<const char*, std::pair<int, int>> values[] = {
          {"num_regs", {r.num_regs, attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)}},
          {"shared_size_bytes",
           {r.shared_size_bytes, attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)}},
          {"local_size_bytes", {r.local_size_bytes, attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)}},
          {"const_size_bytes", {r.const_size_bytes, attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)}},
          {"max_threads_per_block",
           {r.max_threads_per_block, attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)}}};
      for (const auto& [key, v] : values)
        if (v.first != v.second)
          report(r.name + " " + key + ": offline " + std::to_string(v.first) + ", driver " +
                 std::to_string(v.second));
      for (int threads : {32, 64, 128, 256, 512, 1024}) {
        if (threads > r.max_threads_per_block) continue;
        if (k->bounds.reqntid &&
            (*k->bounds.reqntid)[0] * (*k->bounds.reqntid)[1] * (*k->bounds.reqntid)[2] != threads)
          continue;
        int blocks = -1;
        const CUresult result = driver::unchecked("cuOccupancyMaxActiveBlocksPerMultiprocessor",
                                                  api.cuOccupancyMaxActiveBlocksPerMultiprocessor,
                                                  &blocks, it->second, threads, std::size_t{0});
        ++occupancy_checks;
        const OccupancyRecord record(table, threads, static_cast<std::size_t>(r.shared_size_bytes),
                                     r.num_regs, std::max(1, r.num_barriers));
        if (result != CUDA_SUCCESS || blocks != record.tb_per_mp)
          report(r.name + " occupancy at " + std::to_string(threads) + " threads: offline " +
                 std::to_string(record.tb_per_mp) + ", driver " +
                 (result == CUDA_SUCCESS ? std::to_string(blocks)
                                         : "error " + std::to_string(static_cast<int>(result))));
      }
    }
  }
  std::cout << "kernels GPU comparison: " << path << ": " << images << " sm_90 images, " << kernels
            << " kernels, " << kernels * 5 << " attributes and " << occupancy_checks
            << " occupancy queries compared on " << device.name() << ": " << differences
            << " differences (" << by_enumeration
            << " kernels compared through their enumerated handle, " << not_comparable
            << " enumerated kernels the driver cannot load)\n";
  EXPECT_GT(kernels, 1000u);
  EXPECT_EQ(differences, 0u);
}

}  // namespace
}  // namespace cudatool
