// check_compat (lib/src/compat/compat.cpp): the targets named, the driver the code would meet,
// the visible GPUs as targets, and each file judged per target with the gap that keeps it
// from running. The files are the nvcc-built -gencode matrix (tests/data/compat/make_matrix.sh;
// those tests skip without it); the per-container rules are test_load_rules.cpp's.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "cudatool/base/error.hpp"
#include "cudatool/compat/compat.hpp"
#include "fake_driver_child.hpp"

namespace cudatool {
namespace {

namespace fs = std::filesystem;

TEST(CompatTargets, NamesArchitecturesAndProducts) {
  const auto t = compat_targets_named({"sm_90", "8.6", "H100", "compute_80"}, "--arch");
  ASSERT_EQ(t.size(), 4u);
  EXPECT_EQ(t[0].cc, (ComputeCapability{9, 0}));
  EXPECT_EQ(t[1].name, "sm_86");
  EXPECT_EQ(t[2].source, "product table");
  EXPECT_EQ(t[3].cc, (ComputeCapability{8, 0}));
  EXPECT_THROW(compat_targets_named({"sm_9"}, "--arch"), UsageError);
  EXPECT_THROW(compat_driver_from_release("banana", "--driver"), UsageError);
  EXPECT_THROW(compat_driver_from_cuda("7.5", "--cuda"), UsageError);
}

TEST(CompatTargets, ANameThatIsNoneIsRefusedWithTheSourceAndTheProductsKnown) {
  try {
    compat_targets_named({"sm_90", "Voodoo"}, "--arch");
    ADD_FAILURE() << "Voodoo is no GPU";
  } catch (const UsageError& e) {
    const std::string why = e.what();
    EXPECT_TRUE(why.starts_with("--arch \"Voodoo\": neither an architecture")) << why;
    EXPECT_NE(why.find("H100"), std::string::npos) << "the products known: " << why;
  }
  // An architecture keeps the spelling given; a compute capability is named as its sm_.
  const auto t = compat_targets_named({"sm_90a", "9.0", "compute_90"}, "--arch");
  ASSERT_EQ(t.size(), 3u);
  EXPECT_EQ(t[0].name, "sm_90");
  EXPECT_EQ(t[1].name, "sm_90");
  EXPECT_EQ(t[2].name, "sm_90");
  for (const auto& target : t) EXPECT_EQ(target.source, "--arch");
}

TEST(CompatDriver, FromADriverReleaseOrACudaVersion) {
  const CompatDriver by_release = compat_driver_from_release("535.104.05", "--driver");
  EXPECT_EQ(by_release.cuda.str(), "12.2");
  EXPECT_EQ(by_release.release, "535.104.05");
  EXPECT_EQ(by_release.source, "--driver");
  const CompatDriver by_cuda = compat_driver_from_cuda("12.4", "--cuda");
  EXPECT_EQ(by_cuda.cuda.str(), "12.4");
  EXPECT_EQ(by_cuda.release, "");
  const CompatDriver newest = compat_driver_newest();
  EXPECT_EQ(newest.source, "assumed");
  EXPECT_EQ(newest.cuda.str(), cuda_releases().back().str());
  try {
    compat_driver_from_release("100.00", "--driver");
    ADD_FAILURE() << "older than every release";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find(cuda_releases().front().driver + " or newer"),
              std::string::npos)
        << e.what();
  }
}

TEST(CompatTargets, TheVisibleGpusAreOneTargetPerDevice) {
  using cudatool::testing::FakeChecks;
  cudatool::testing::expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICES", "9.0,8.6"}}, [](FakeChecks& c) {
        const auto targets = visible_gpu_targets(false, "--fresh");
        c.expect(targets.size() == 2, "two devices");
        if (targets.size() != 2) return;
        c.expect(targets[0].name == "Fake GPU 0" && targets[0].cc == ComputeCapability{9, 0} &&
                     targets[0].source == "device 0",
                 "device 0: " + targets[0].name + " " + targets[0].source);
        c.expect(targets[1].cc == ComputeCapability{8, 6} && targets[1].source == "device 1",
                 "device 1: " + targets[1].source);
      });
  cudatool::testing::expect_in_fake_driver(
      CUDATOOL_FAKE_LIBCUDA, {{"FAKE_CUDA_DEVICES", ""}}, [](FakeChecks& c) {
        c.expect_throw<DeviceNotFoundError>([] { visible_gpu_targets(false, "--fresh"); },
                                            "no device: the driver's answer, not an empty list");
      });
}

// The matrix's files, copied where a test wants them.
class CheckCompat : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(matrix() / "sm_80.fatbin"))
      GTEST_SKIP() << "no nvcc-built matrix at " << matrix();
    std::string pattern = (fs::temp_directory_path() / "cudatool-compat-XXXXXX").string();
    dir_ = ::mkdtemp(pattern.data());
  }
  void TearDown() override {
    std::error_code ignored;
    if (!dir_.empty()) fs::remove_all(dir_, ignored);
  }
  static fs::path matrix() { return CUDATOOL_COMPAT_DATA; }
  fs::path copy(const std::string& name, const std::string& as) {
    fs::create_directories((dir_ / as).parent_path());
    fs::copy_file(matrix() / (name + ".fatbin"), dir_ / as);
    return dir_ / as;
  }
  void write(const std::string& as, const std::string& bytes) {
    fs::create_directories((dir_ / as).parent_path());
    std::ofstream(dir_ / as, std::ios::binary) << bytes;
  }
  CompatRequest request(std::vector<std::string> archs, const std::string& cuda = "13.0") {
    CompatRequest r;
    r.paths = {dir_.string()};
    r.targets = compat_targets_named(archs, "--arch");
    r.driver = compat_driver_from_cuda(cuda, "--cuda");
    r.threads = 2;
    return r;
  }
  const CompatFile* file(const CompatReport& report, const std::string& as) {
    for (const CompatFile& f : report.files)
      if (f.path == (dir_ / as).string()) return &f;
    ADD_FAILURE() << as << " is not in the report";
    return nullptr;
  }
  fs::path dir_;
};

TEST_F(CheckCompat, EachFileOnEachTargetWithWhatKeepsItFromRunning) {
  copy("sm_80", "lib/libsass.so");
  copy("compute_80", "lib/libptx.so");
  copy("compute_80_isa99", "lib/libnewptx.so");
  write("lib/notes.txt", "text is never opened");
  write("lib/libempty.so", "");
  const CompatReport report = check_compat(request({"sm_90", "sm_80"}));
  EXPECT_EQ(report.files_examined, 4u) << "the text file is not a candidate";
  ASSERT_EQ(report.files.size(), 3u) << "the empty file is no CUDA binary: left out";
  const CompatFile* sass = file(report, "lib/libsass.so");
  const CompatFile* ptx = file(report, "lib/libptx.so");
  const CompatFile* newer = file(report, "lib/libnewptx.so");
  ASSERT_TRUE(sass && ptx && newer);
  ASSERT_EQ(sass->targets.size(), 2u);
  EXPECT_EQ(sass->targets[0].verdict, CompatVerdict::cannot_run) << "sm_80 SASS on 9.0";
  EXPECT_EQ(sass->targets[0].gap, CompatGap::predates);
  EXPECT_EQ(sass->targets[1].verdict, CompatVerdict::native);
  EXPECT_EQ(sass->targets[1].native, 1u);
  EXPECT_TRUE(sass->has_cuda_code);
  EXPECT_EQ(ptx->targets[0].verdict, CompatVerdict::jit);
  EXPECT_GT(ptx->targets[0].jit_ptx_bytes, 0u);
  EXPECT_EQ(ptx->targets[1].verdict, CompatVerdict::jit);
  EXPECT_EQ(newer->targets[0].verdict, CompatVerdict::cannot_run);
  EXPECT_EQ(newer->targets[0].gap, CompatGap::ptx_too_new);
  ASSERT_TRUE(newer->targets[0].ptx_needed.has_value());
  EXPECT_EQ(*newer->targets[0].ptx_needed, (PtxVersion{9, 9}));
  EXPECT_TRUE(report.containers.empty()) << "kept only where asked";
}

TEST_F(CheckCompat, DisabledJitLeavesPtxUnrunAndContainersAreKeptWhereAsked) {
  copy("compute_80", "libptx.so");
  auto r = request({"sm_90"});
  r.policy = JitPolicy::disable_ptx_jit;
  r.containers = true;
  const CompatReport report = check_compat(r);
  ASSERT_EQ(report.files.size(), 1u);
  EXPECT_EQ(report.files[0].targets[0].verdict, CompatVerdict::cannot_run);
  EXPECT_EQ(report.files[0].targets[0].gap, CompatGap::jit_disabled);
  ASSERT_EQ(report.containers.size(), 1u);
  EXPECT_EQ(report.containers[0].file, 0u);
  ASSERT_EQ(report.containers[0].decisions.size(), 1u);
  EXPECT_EQ(report.containers[0].decisions[0].outcome, LoadOutcome::jit_disabled);
}

TEST_F(CheckCompat, ANamedFileThatIsNoCudaBinaryIsAnErrorAndADamagedOneAnInputError) {
  write("notes.txt", "hello");
  auto r = request({"sm_90"});
  r.paths = {(dir_ / "notes.txt").string()};
  EXPECT_THROW(check_compat(r), UsageError);
  // A fatbin cut short: its header promises more than the file holds.
  const fs::path whole = copy("sm_80", "whole.fatbin");
  std::string bytes;
  {
    std::ifstream in(whole, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  write("cut.fatbin", bytes.substr(0, bytes.size() / 2));
  r.paths = {(dir_ / "cut.fatbin").string()};
  EXPECT_THROW(check_compat(r), InputError);
  // Met in a walk, it is reported with its error, not thrown.
  r.paths = {dir_.string()};
  const CompatReport report = check_compat(r);
  const CompatFile* cut = file(report, "cut.fatbin");
  ASSERT_NE(cut, nullptr);
  EXPECT_FALSE(cut->error.empty());
  r.targets.clear();
  EXPECT_THROW(check_compat(r), UsageError) << "no target";
}

}  // namespace
}  // namespace cudatool
