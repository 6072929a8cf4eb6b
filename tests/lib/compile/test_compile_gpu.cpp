// On a GPU: every kernel of the corpus, compiled for the device's architecture, loaded
// with cuModuleLoadDataEx; the five function attributes the driver reports must equal
// what the offline CUBIN reader found (zero differences). Skips cleanly without a GPU
// (GpuTest) or without NVRTC.
#include <gtest/gtest.h>

#include <iostream>
#include <span>

#include "compile_corpus.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

class CompileGpu : public testing::GpuTest {
 protected:
  void SetUp() override {
    GpuTest::SetUp();
    if (IsSkipped()) return;
    if (auto why = testing::nvrtc_unavailable()) GTEST_SKIP() << *why;
  }
};

CompileResult compile_for(const testing::CorpusFile& file, const Device& device) {
  return testing::compile_corpus_file(file, Arch::parse(device.compute_capability().sm(), "arch"));
}

TEST_F(CompileGpu, OfflineResourcesEqualTheDriversForTheWholeCorpus) {
  for (const Device& device : devices()) {
    const Context context(device);
    int kernels = 0;
    std::vector<ResourceDifference> all;
    for (const auto& file : testing::compile_corpus()) {
      const CompileResult result = compile_for(file, device);
      const auto offline = read_cubin({reinterpret_cast<const std::uint8_t*>(result.image.data()),
                                       result.image.size()})
                               .kernels;
      const Module module(context, result.image);
      std::vector<KernelResources> loaded;
      for (const auto& k : offline) loaded.push_back(module.resources(k.name, k.demangled));
      for (auto& d : compare_resources(offline, loaded)) {
        d.kernel = file.name + ":" + d.kernel;
        all.push_back(d);
      }
      kernels += static_cast<int>(offline.size());
    }
    for (const auto& d : all)
      ADD_FAILURE() << device.name() << " " << d.kernel << " " << d.attribute << ": cubin "
                    << d.offline << ", driver " << d.loaded;
    std::cout << "[ compile-gpu ] " << device.name() << " (" << device.compute_capability().sm()
              << "): " << kernels << " kernels, " << all.size() << " differences\n";
    EXPECT_GE(kernels, 18);
  }
}

}  // namespace
}  // namespace cudatool
