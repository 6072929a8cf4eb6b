#include "driver_comparison.hpp"

#include <cuda.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <set>
#include <string_view>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/binary/kernel_scan.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "driver/driver_api.hpp"

namespace cudatool::tools {

ComparisonCounts& ComparisonCounts::operator+=(const ComparisonCounts& o) {
  images += o.images;
  relocatable_images += o.relocatable_images;
  not_loadable_images += o.not_loadable_images;
  unreadable_images += o.unreadable_images;
  kernels += o.kernels;
  by_enumeration += o.by_enumeration;
  not_comparable += o.not_comparable;
  occupancy_checks += o.occupancy_checks;
  differences += o.differences;
  shared_reserve_rule += o.shared_reserve_rule;
  return *this;
}

namespace {

// One image against the driver; runs on the scan's worker threads, each with the context
// made current by Module.
void compare_image(const ImageKernels& image, const Context& context, const DeviceData& table,
                   ComparisonCounts& counts, std::vector<std::string>& lines) {
  const auto& api = driver::initialized();
  const auto report = [&](const std::string& what) {
    ++counts.differences;
    lines.push_back("DIFFERENCE " + what);
  };
  std::optional<Module> module;
  try {
    module.emplace(context, std::string_view(reinterpret_cast<const char*>(image.cubin.data()),
                                             image.cubin.size()));
  } catch (const std::exception& e) {
    ++counts.not_loadable_images;
    lines.push_back("NOT LOADABLE " + image.info.arch.value_or(Arch{}).str() + " image at offset " +
                    std::to_string(image.info.offset) + ": " + e.what());
    return;
  }
  ++counts.images;
  unsigned count = 0;
  driver::checked("cuModuleGetFunctionCount", api.cuModuleGetFunctionCount, &count,
                  module->handle());
  std::vector<CUfunction> functions(count);
  if (count > 0)  // an empty array is CUDA_ERROR_INVALID_VALUE
    driver::checked("cuModuleEnumerateFunctions", api.cuModuleEnumerateFunctions, functions.data(),
                    count, module->handle());
  // The enumeration lists every function, device functions too. A kernel is what
  // cuModuleGetFunction finds by name (which loads it); cuFuncLoad is called on each
  // enumerated function as well (it can answer CUDA_ERROR_NOT_FOUND for kernels, so its
  // failure is not a difference).
  std::map<std::string, CUfunction> loaded, enumerated;
  for (CUfunction f : functions) {
    const char* name = nullptr;
    driver::checked("cuFuncGetName", api.cuFuncGetName, &name, f);
    if (api.cuFuncLoad) (void)driver::unchecked("cuFuncLoad", api.cuFuncLoad, f);
    enumerated[name] = f;
    CUfunction kernel = nullptr;
    if (driver::unchecked("cuModuleGetFunction", api.cuModuleGetFunction, &kernel, module->handle(),
                          name) == CUDA_SUCCESS)
      loaded[name] = kernel;
  }
  std::set<std::string> offline_names;
  for (const ScannedKernel& k : image.kernels) offline_names.insert(k.resources.name);
  for (const auto& [name, f] : loaded)
    if (!offline_names.count(name))
      report(name + ": a kernel to the driver, offline lists no such kernel");
  for (const ScannedKernel& k : image.kernels) {
    const KernelResources& r = k.resources;
    auto it = loaded.find(r.name);
    if (it == loaded.end()) {
      // An entry the driver enumerates but will not hand out by name: compared through the
      // enumerated handle where the driver answers for it, else counted as not comparable
      // (printed, never a silent pass).
      const auto e = enumerated.find(r.name);
      int probe = 0;  // CONST_SIZE_BYTES answers only for a loaded function (cuFuncLoad)
      if (e != enumerated.end() &&
          driver::unchecked("cuFuncGetAttribute", api.cuFuncGetAttribute, &probe,
                            CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES, e->second) == CUDA_SUCCESS) {
        ++counts.by_enumeration;
        it = e;
      } else {
        if (e == enumerated.end())
          report(r.name + ": not a function the driver enumerates in the module");
        else {
          ++counts.not_comparable;
          lines.push_back("NOT COMPARABLE " + r.name +
                          ": enumerated, but the driver cannot load it (cuFuncLoad fails)");
        }
        continue;
      }
    }
    ++counts.kernels;
    const auto attribute = [&](CUfunction_attribute a) {
      int v = -1;
      driver::checked("cuFuncGetAttribute", api.cuFuncGetAttribute, &v, a, it->second);
      return v;
    };
    const int driver_shared = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
    const std::pair<const char*, std::pair<int, int>> values[] = {
        {"num_regs", {r.num_regs, attribute(CU_FUNC_ATTRIBUTE_NUM_REGS)}},
        {"shared_size_bytes", {r.shared_size_bytes, driver_shared}},
        {"local_size_bytes", {r.local_size_bytes, attribute(CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)}},
        {"const_size_bytes", {r.const_size_bytes, attribute(CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)}},
        {"max_threads_per_block",
         {r.max_threads_per_block, attribute(CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)}}};
    for (const auto& [key, v] : values)
      if (v.first != v.second)
        report(image.info.arch.value_or(Arch{}).str() + " " + r.name + " " + key + ": offline " +
               std::to_string(v.first) + ", driver " + std::to_string(v.second) +
               (r.stack_unknown ? " (stack_unknown)" : ""));
    for (int threads : {32, 64, 128, 256, 512, 1024}) {
      if (threads > r.max_threads_per_block) continue;
      if (k.bounds.reqntid &&
          (*k.bounds.reqntid)[0] * (*k.bounds.reqntid)[1] * (*k.bounds.reqntid)[2] != threads)
        continue;
      int blocks = -1;
      const CUresult result = driver::unchecked("cuOccupancyMaxActiveBlocksPerMultiprocessor",
                                                api.cuOccupancyMaxActiveBlocksPerMultiprocessor,
                                                &blocks, it->second, threads, std::size_t{0});
      ++counts.occupancy_checks;
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

}  // namespace

ComparisonCounts compare_file_with_driver(const std::string& path, const Context& context,
                                          std::ostream& log, std::size_t max_printed) {
  const ComputeCapability cc = context.device().compute_capability();
  const Arch device_arch{.cc = cc};  // sm_90 also keeps sm_90a (and PTX, not compared)
  const DeviceData table(device_arch);
  ScanOptions options;
  options.arch = {device_arch};
  options.keep_kernels = false;
  std::mutex mutex;
  ComparisonCounts total;
  std::vector<std::string> lines;
  options.on_image = [&](const ImageKernels& image) {
    if (image.info.kind != ImageKind::elf) return;
    ComparisonCounts counts;
    std::vector<std::string> mine;
    if (image.info.relocatable)
      ++counts.relocatable_images;
    else
      compare_image(image, context, table, counts, mine);
    const std::lock_guard<std::mutex> lock(mutex);
    total += counts;
    lines.insert(lines.end(), mine.begin(), mine.end());
  };
  const ScanResult scan = scan_binaries({path}, options);
  for (const ScannedImage& image : scan.images)
    if (!image.error.empty()) {
      ++total.unreadable_images;
      lines.push_back("UNREADABLE " + image.error);
    }
  std::size_t printed = 0;
  for (const std::string& line : lines) {
    if (printed++ >= max_printed) break;
    log << printable(line, 400) << '\n';
  }
  log << printable(path, 400) << ": " << total.images << " " << device_arch.str() << " images, "
      << total.kernels << " kernels, " << total.kernels * 5 << " attributes and "
      << total.occupancy_checks << " occupancy queries compared: " << total.differences
      << " differences (" << total.by_enumeration << " through their enumerated handle, "
      << total.not_comparable << " the driver cannot load; " << total.relocatable_images
      << " relocatable, " << total.not_loadable_images << " refused by the driver, "
      << total.unreadable_images << " unreadable images)\n";
  return total;
}

}  // namespace cudatool::tools
