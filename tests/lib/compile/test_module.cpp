// Module (lib/src/compile/module.cpp): an image loaded into a context, its kernels' function
// attributes as the driver reports them, the memo of loaded modules per context, and the
// comparison of offline resources with the driver's. The comparison needs nothing; the rest
// needs a GPU and NVRTC (ModuleGpu, skipped without them).
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "compile_corpus.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "gpu_test.hpp"

namespace cudatool {
namespace {

KernelResources kernel(std::string name, int regs, int shared = 0, int local = 0, int constant = 0,
                       int threads = 1024) {
  KernelResources k;
  k.name = std::move(name);
  k.num_regs = regs;
  k.shared_size_bytes = shared;
  k.local_size_bytes = local;
  k.const_size_bytes = constant;
  k.max_threads_per_block = threads;
  return k;
}

std::string describe(const std::vector<ResourceDifference>& differences) {
  std::string text;
  for (const auto& d : differences)
    text += d.kernel + " " + d.attribute + " " + std::to_string(d.offline) + "/" +
            std::to_string(d.loaded) + "\n";
  return text;
}

TEST(CompareResources, EqualKernelsInAnyOrderHaveNoDifference) {
  const std::vector<KernelResources> offline = {kernel("a", 32, 1024), kernel("b", 16)};
  const std::vector<KernelResources> loaded = {kernel("b", 16), kernel("a", 32, 1024)};
  EXPECT_TRUE(compare_resources(offline, loaded).empty())
      << describe(compare_resources(offline, loaded));
  EXPECT_TRUE(compare_resources({}, {}).empty());
}

TEST(CompareResources, EachAttributeThatDiffersIsOneDifference) {
  const std::vector<KernelResources> offline = {kernel("k", 32, 1024, 8, 16, 1024)};
  const std::vector<KernelResources> loaded = {kernel("k", 40, 2048, 0, 16, 768)};
  EXPECT_EQ(describe(compare_resources(offline, loaded)),
            "k num_regs 32/40\n"
            "k shared_size_bytes 1024/2048\n"
            "k local_size_bytes 8/0\n"
            "k max_threads_per_block 1024/768\n");
  const std::vector<KernelResources> constant = {kernel("k", 32, 1024, 8, 0, 1024)};
  EXPECT_EQ(describe(compare_resources(offline, constant)), "k const_size_bytes 16/0\n");
}

TEST(CompareResources, AKernelOnOneSideOnlyIsPresentOnThatSide) {
  const std::vector<KernelResources> offline = {kernel("only_offline", 8), kernel("both", 8)};
  const std::vector<KernelResources> loaded = {kernel("both", 8), kernel("only_loaded", 8)};
  EXPECT_EQ(describe(compare_resources(offline, loaded)),
            "only_offline present 1/0\n"
            "only_loaded present 0/1\n");
}

class ModuleGpu : public testing::GpuTest {
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

// A kernel whose attributes are known from its source: 1 KiB of static shared memory, at
// most 128 threads per block (__launch_bounds__), 64 bytes of __constant__.
const char* const kKnownKernel =
    "__constant__ float table[16];\n"
    "__global__ void __launch_bounds__(128) known(float* out) {\n"
    "  __shared__ float tile[256];\n"
    "  tile[threadIdx.x] = out[threadIdx.x] * table[threadIdx.x % 16];\n"
    "  __syncthreads();\n"
    "  out[threadIdx.x] = tile[255 - threadIdx.x];\n"
    "}\n";

TEST_F(ModuleGpu, PtxAndCubinImagesLoadWithTheKernelsAttributes) {
  const Context context(device());
  for (const bool ptx : {false, true}) {
    CompileRequest r;
    r.source = kKnownKernel;
    r.arch = Arch::parse(ptx ? "compute_75" : device().compute_capability().sm(), "arch");
    const CompileResult result = compile_uncached(r);
    // A PTX image is text without a NUL: the module adds the one the driver reads up to.
    if (ptx) {
      ASSERT_EQ(result.image.find('\0'), std::string::npos);
    }
    const Module module(context, result.image);
    const KernelResources k = module.resources("known");
    const std::string which = ptx ? "PTX: " : "CUBIN: ";
    EXPECT_EQ(k.name, "known") << which;
    EXPECT_EQ(k.demangled, "known") << which;
    EXPECT_EQ(k.shared_size_bytes, 1024) << which;
    EXPECT_EQ(k.const_size_bytes, 64) << which;
    EXPECT_EQ(k.max_threads_per_block, 128) << which;
    EXPECT_GT(k.num_regs, 0) << which;
    EXPECT_THROW(module.function("not_a_kernel"), Error) << which;
  }
}

TEST_F(ModuleGpu, AMovedModuleIsUnloadedOnce) {
  const Context context(device());
  CompileRequest r;
  r.source = kKnownKernel;
  r.arch = Arch::parse(device().compute_capability().sm(), "arch");
  const CompileResult result = compile_uncached(r);
  Module a(context, result.image);
  Module b(std::move(a));
  EXPECT_NE(b.function("known"), nullptr);
  Module c(context, result.image);
  c = std::move(b);  // unloads c's own module, takes b's
  EXPECT_EQ(c.resources("known").shared_size_bytes, 1024);
}

TEST_F(ModuleGpu, ModulesAreMemoisedPerContextUntilCleared) {
  const Context context(device());
  const auto corpus = testing::compile_corpus();
  const CompileResult result = compile_for(corpus.front(), device());
  clear_module_memo();
  const auto a = load_module_memoized(context, result.image);
  const auto b = load_module_memoized(context, result.image);
  EXPECT_EQ(a.get(), b.get());
  EXPECT_EQ(module_memo_size(), 1u);
  const CompileResult other = compile_for(corpus.back(), device());
  EXPECT_NE(load_module_memoized(context, other.image).get(), a.get());
  EXPECT_EQ(module_memo_size(), 2u);
  EXPECT_EQ(clear_module_memo(), 2u);
  EXPECT_EQ(module_memo_size(), 0u);
  // Still usable by whoever holds it after the memo let go.
  const auto names =
      read_cubin({reinterpret_cast<const std::uint8_t*>(result.image.data()), result.image.size()})
          .kernels;
  ASSERT_FALSE(names.empty());
  EXPECT_GT(a->resources(names.front().name).num_regs, 0);
}

}  // namespace
}  // namespace cudatool
