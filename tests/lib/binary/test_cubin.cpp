// The offline CUBIN reader against ptxas's own report of the same compilation (NVRTC's
// log with --ptxas-options=-v, and nvcc --resource-usage), over the kernel corpus and
// several architectures; and against malformed input. Needs NVRTC, not a GPU.
#include <gtest/gtest.h>

#include <cstdio>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <map>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "binary/cubin_reader.hpp"
#include "compile_corpus.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compiler.hpp"

namespace cudatool {
namespace {

using testing::compile_corpus;
using testing::nvrtc_unavailable;
using testing::parse_ptxas_report;

std::span<const std::uint8_t> bytes(const std::string& s) {
  return {reinterpret_cast<const std::uint8_t*>(s.data()), s.size()};
}

CompileRequest corpus_request(const testing::CorpusFile& file, const std::string& arch,
                              Engine engine = Engine::nvrtc) {
  CompileRequest r;
  r.source = testing::read_file(file.path);
  r.source_name = file.name;
  r.arch = Arch::parse(arch, "arch");
  r.extern_c = false;  // the corpus says extern "C" itself; templates need C++ linkage
  r.maxrregcount = file.maxrregcount;
  r.engine = engine;
  r.extra_options = {engine == Engine::nvrtc ? "--ptxas-options=-v" : "--resource-usage"};
  return r;
}

class CubinAgainstPtxas : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
  }
};

TEST_P(CubinAgainstPtxas, EveryKernelOfTheCorpusMatchesPtxasReport) {
  const std::string arch = GetParam();
  int kernels_checked = 0;
  for (const auto& file : compile_corpus()) {
    SCOPED_TRACE(file.name + " " + arch);
    CompileResult result = compile_uncached(corpus_request(file, arch));
    if (result.log.empty()) {
      // NVRTC 13.0.2 on the GPU machine returned an empty program log, --ptxas-options=-v
      // notwithstanding, when an sm_90 compile was the first of its process (four runs;
      // after sm_75 and sm_80 compiles in the same process it reported). Then the same
      // source goes through nvcc --resource-usage, whose ptxas reports the same figures
      // (CubinNvcc), so the CUBIN's values are still checked against a report.
      std::printf("[ ptxas ] %s %s: NVRTC gave no log; comparing with nvcc --resource-usage\n",
                  file.name.c_str(), arch.c_str());
      try {
        result = compile_uncached(corpus_request(file, arch, Engine::nvcc));
      } catch (const LibraryNotFoundError& e) {
        GTEST_SKIP() << "NVRTC gave no ptxas report and nvcc is not available: " << e.what();
      }
    }
    const auto report = parse_ptxas_report(result.log);
    const CubinInfo info = read_cubin(bytes(result.image));
    EXPECT_EQ(info.arch.number(), result.arch.number());
    EXPECT_TRUE(info.arch.real());
    ASSERT_EQ(info.kernels.size(), report.size()) << result.log;
    for (const auto& k : info.kernels) {
      SCOPED_TRACE(k.name);
      auto it = report.find(k.name);
      ASSERT_NE(it, report.end()) << "ptxas did not report " << k.name << ":\n" << result.log;
      EXPECT_EQ(k.num_regs, it->second.registers);
      EXPECT_EQ(k.shared_size_bytes, it->second.shared);
      EXPECT_EQ(k.local_size_bytes, it->second.stack_frame);
      EXPECT_GT(k.max_threads_per_block, 0);
      EXPECT_LE(k.max_threads_per_block, 1024);
      EXPECT_EQ(k.max_threads_per_block % 32, 0);
      ++kernels_checked;
    }
  }
  EXPECT_GE(kernels_checked, 18);
}

INSTANTIATE_TEST_SUITE_P(Architectures, CubinAgainstPtxas,
                         ::testing::Values("sm_75", "sm_80", "sm_90", "sm_120"));

class CubinCorpus : public ::testing::Test {
 protected:
  void SetUp() override {
    if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
  }
  // kernel name -> resources for a corpus file at sm_90.
  std::map<std::string, KernelResources> kernels(const std::string& name) {
    for (const auto& file : compile_corpus()) {
      if (file.name != name) continue;
      const CompileResult result = compile_uncached(corpus_request(file, "sm_90"));
      std::map<std::string, KernelResources> out;
      for (auto& k : read_cubin(bytes(result.image)).kernels) out[k.name] = k;
      return out;
    }
    ADD_FAILURE() << "no corpus file " << name;
    return {};
  }
};

TEST_F(CubinCorpus, ConstantDataIsTheModulesConstantBank) {
  // 256 floats + 8 ints in constant.cu; 64 floats in mixed.cu; none in saxpy.cu.
  for (const auto& [name, k] : kernels("constant.cu")) EXPECT_EQ(k.const_size_bytes, 1056) << name;
  EXPECT_EQ(kernels("mixed.cu").at("weighted_block").const_size_bytes, 256);
  EXPECT_EQ(kernels("saxpy.cu").at("saxpy").const_size_bytes, 0);
}

TEST_F(CubinCorpus, LaunchBoundsLimitTheBlockSize) {
  const auto bounded = kernels("launch_bounds.cu");
  EXPECT_EQ(bounded.at("bounded_128").max_threads_per_block, 128);
  EXPECT_EQ(bounded.at("bounded_96").max_threads_per_block, 96);
  EXPECT_EQ(kernels("mixed.cu").at("weighted_block").max_threads_per_block, 256);
  EXPECT_EQ(kernels("saxpy.cu").at("saxpy").max_threads_per_block, 1024);
}

TEST_F(CubinCorpus, RegistersLimitTheBlockSizeOfARegisterHeavyKernel) {
  const auto k = kernels("register_heavy.cu").at("many_accumulators");
  EXPECT_GT(k.num_regs, 64);
  EXPECT_LT(k.max_threads_per_block, 1024);
  EXPECT_EQ(k.max_threads_per_block, register_limited_block_size(k.num_regs));
}

TEST_F(CubinCorpus, StaticSharedMemoryIsTheDeclaredSize) {
  EXPECT_EQ(kernels("static_shared.cu").at("transpose").shared_size_bytes, 32 * 33 * 4);
  EXPECT_EQ(kernels("dynamic_shared.cu").at("block_sum").shared_size_bytes, 0);
  const auto multi = kernels("multi.cu");
  EXPECT_EQ(multi.at("histogram").shared_size_bytes, 1024);
  // 130 floats, rounded up to 16 bytes as ptxas lays the section out (and reports it).
  EXPECT_EQ(multi.at("stencil").shared_size_bytes, 528);
  EXPECT_EQ(multi.at("fill").shared_size_bytes, 0);
  EXPECT_EQ(multi.size(), 4u);
}

TEST_F(CubinCorpus, LocalArraysAndSpillsHaveAStackFrame) {
  EXPECT_GE(kernels("local_spill.cu").at("gather_local").local_size_bytes, 96 * 4);
  const auto spill = kernels("maxrreg_spill.cu").at("pressure");
  EXPECT_LE(spill.num_regs, 32);
  EXPECT_GT(spill.local_size_bytes, 0);
}

TEST_F(CubinCorpus, TemplateKernelsHaveMangledAndDemangledNames) {
  const auto t = kernels("templates.cu");
  ASSERT_EQ(t.size(), 4u);
  ASSERT_TRUE(t.count("_Z5scaleIfLi4EEvPT_S0_i"));
  EXPECT_EQ(t.at("_Z5scaleIfLi4EEvPT_S0_i").demangled, "void scale<float, 4>(float*, float, int)");
  EXPECT_EQ(t.at("_Z9tile_copyIdEvPKT_PS0_i").shared_size_bytes, 256 * 8);
  EXPECT_EQ(kernels("saxpy.cu").at("saxpy").demangled, "saxpy");
}

TEST(CubinNvcc, NvccResourceUsageAgreesWithTheCubin) {
  if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
  int checked = 0;
  for (const auto& file : compile_corpus()) {
    if (file.name != "multi.cu" && file.name != "local_spill.cu" && file.name != "templates.cu")
      continue;
    CompileResult result;
    try {
      result = compile_uncached(corpus_request(file, "sm_90", Engine::nvcc));
    } catch (const LibraryNotFoundError& e) {
      GTEST_SKIP() << "nvcc is not available: " << e.what();
    }
    const auto report = parse_ptxas_report(result.log);
    for (const auto& k : read_cubin(bytes(result.image)).kernels) {
      SCOPED_TRACE(file.name + " " + k.name);
      ASSERT_TRUE(report.count(k.name)) << result.log;
      EXPECT_EQ(k.num_regs, report.at(k.name).registers);
      EXPECT_EQ(k.shared_size_bytes, report.at(k.name).shared);
      EXPECT_EQ(k.local_size_bytes, report.at(k.name).stack_frame);
      ++checked;
    }
  }
  EXPECT_EQ(checked, 4 + 1 + 4);
}

// The scan's cache gives what demangle gives, for a name seen once or many times, from
// several threads at once, mangled, static (-rdc) or plain.
TEST(DemangleCache, GivesWhatDemangleGivesFromEveryThread) {
  const std::vector<std::string> names = {
      "_Z5scaleIfLi4EEvPT_S0_i",
      "_Z9tile_copyIdEvPKT_PS0_i",
      "saxpy",
      "_Z",
      "_Znot a name",
      "__nv_static_16__0c6ea2b8_4_a_cu__Z2k1Pi",
      "__nv_static_garbage",
      "",
      "_ZN7cutlass6KernelI48cutlass_80_simt_sgemm_grouped_128x128_8x4_align1EEvNT_6ParamsE"};
  DemangleCache cache;
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&] {
      for (int round = 0; round < 50; ++round)
        for (const std::string& name : names)
          if (cache.demangle(name) != demangle(name)) ++wrong;
    });
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(cache.demangle("_Z5scaleIfLi4EEvPT_S0_i"), "void scale<float, 4>(float*, float, int)");
  EXPECT_EQ(cache.demangle("__nv_static_16__0c6ea2b8_4_a_cu__Z2k1Pi"), "k1(int*)");
}

TEST(CubinReader, RegisterLimitedBlockSizeFollowsTheHardwareRule) {
  EXPECT_EQ(register_limited_block_size(32), 1024);
  EXPECT_EQ(register_limited_block_size(64), 1024);
  EXPECT_EQ(register_limited_block_size(72), 896);  // 2304 per warp: 7 warps per quarter
  EXPECT_EQ(register_limited_block_size(80), 768);  // 2560 per warp: 6 warps per quarter
  EXPECT_EQ(register_limited_block_size(128), 512);
  EXPECT_EQ(register_limited_block_size(255), 256);
  EXPECT_EQ(register_limited_block_size(256), 0);
}

TEST(CubinReader, RejectsWhatIsNotACubin) {
  EXPECT_THROW(read_cubin({}), UsageError);
  EXPECT_THROW(read_cubin(bytes("hello, world")), UsageError);
  std::string elf(64, '\0');
  elf[0] = 0x7f, elf[1] = 'E', elf[2] = 'L', elf[3] = 'F', elf[4] = 2, elf[5] = 1;
  elf[18] = 62;  // EM_X86_64
  try {
    read_cubin(bytes(elf));
    FAIL() << "an x86-64 ELF header was taken for a CUBIN";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("EM_CUDA"), std::string::npos) << e.what();
  }
}

TEST(CubinReader, EveryTruncationOfARealCubinIsRejectedCleanly) {
  if (auto why = nvrtc_unavailable()) GTEST_SKIP() << *why;
  const auto corpus = compile_corpus();
  const auto file = std::find_if(corpus.begin(), corpus.end(),
                                 [](const auto& f) { return f.name == "multi.cu"; });
  ASSERT_NE(file, corpus.end());
  const std::string image = compile_uncached(corpus_request(*file, "sm_90")).image;
  ASSERT_EQ(read_cubin(bytes(image)).kernels.size(), 4u);
  // The section and program header tables sit at the end of the file, so every shorter
  // prefix lacks part of them: each must be refused with UsageError, never read out of
  // bounds.
  std::uint64_t shoff = 0;
  std::memcpy(&shoff, image.data() + 40, 8);
  ASSERT_GT(shoff, image.size() / 2);
  for (std::size_t length = 0; length < image.size(); length += 7) {
    EXPECT_THROW(read_cubin(bytes(image.substr(0, length))), UsageError) << length;
  }
  // A corrupted section header offset.
  std::string broken = image;
  const std::uint64_t far = 1ull << 40;
  std::memcpy(broken.data() + 40, &far, 8);
  EXPECT_THROW(read_cubin(bytes(broken)), UsageError);
}

}  // namespace
}  // namespace cudatool
