// `cudatool kernels`' offline answer against the driver, on a GPU, for several toolkit
// libraries (tools/kernels_vs_driver/driver_comparison.hpp does the comparing: every
// loadable image handed to the driver, every kernel's five attributes and its occupancy
// at several block sizes). CUDATOOL_KERNELS_GPU_LIBRARIES (colon-separated paths) picks
// others. Zero differences is the bar. Runs on the GPU's own architecture.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cudatool/device/context.hpp"
#include "driver_comparison.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

using testing::GpuTest;

std::vector<std::string> libraries() {
  std::vector<std::string> paths;
  if (const char* list = std::getenv("CUDATOOL_KERNELS_GPU_LIBRARIES")) {
    std::string rest = list;
    for (std::size_t start = 0; start <= rest.size();) {
      const std::size_t end = std::min(rest.find(':', start), rest.size());
      if (end > start) paths.push_back(rest.substr(start, end - start));
      start = end + 1;
    }
    return paths;
  }
  const char* home = std::getenv("CUDA_HOME");
  const std::string lib = std::string(home ? home : "/usr/local/cuda") + "/lib64/";
  for (const char* name : {"libcusparse.so.12", "libcublas.so.13", "libcufft.so.12",
                           "libcurand.so.10", "libcusolver.so.12", "libnvjpeg.so.13"})
    if (std::filesystem::exists(lib + name)) paths.push_back(lib + name);
  return paths;
}

class KernelsGpu : public GpuTest {};

TEST_F(KernelsGpu, EveryKernelOfSeveralToolkitLibrariesMatchesTheDriver) {
  const std::vector<std::string> paths = libraries();
  if (paths.empty()) GTEST_SKIP() << "none of the toolkit libraries is there";
  const Context context(device());
  tools::ComparisonCounts total;
  for (const std::string& path : paths) {
    const tools::ComparisonCounts counts =
        tools::compare_file_with_driver(path, context, std::cout);
    EXPECT_EQ(counts.differences, 0u) << path;
    EXPECT_EQ(counts.unreadable_images, 0u) << path;
    total += counts;
  }
  std::cout << "kernels GPU comparison on " << device().name() << ": " << paths.size()
            << " libraries, " << total.images << " images, " << total.kernels << " kernels, "
            << total.differences << " differences\n";
  EXPECT_GT(total.kernels, 1000u);
}

}  // namespace
}  // namespace cudatool
