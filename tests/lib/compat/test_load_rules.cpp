// The driver's choice per fatbin container (load_rules.cpp), for every compute capability
// from 5.0 to 12.1, against nvcc-built fatbins of the -gencode matrix
// (tests/data/compat/make_matrix.sh). Each case's expectation is written out here, target
// by target, from NVIDIA's compatibility rules (compat.hpp); the same files are loaded by
// the driver itself on a GPU by tools/compat_vs_driver. Skips without nvcc.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "cudatool/compat/compat.hpp"

namespace cudatool {
namespace {

const std::vector<std::string> kTargets = {"5.0",  "5.2",  "5.3",  "6.0",  "6.1", "6.2", "7.0",
                                           "7.2",  "7.5",  "8.0",  "8.6",  "8.7", "8.9", "9.0",
                                           "10.0", "10.3", "11.0", "12.0", "12.1"};

ComputeCapability cc_of(const std::string& s) {
  return Arch::parse(s, "test").cc;
}

// What a case does on each target under the normal policy: the targets where it runs from
// SASS, by JIT, and where its PTX is too new for the driver; no_binary elsewhere. Under
// CUDA_FORCE_PTX_JIT, `forced_jit` where it is compiled (else as for no PTX: no_binary, or
// ptx_too_new where the only PTX is).
struct Case {
  std::set<std::string> native, jit, too_new, forced_jit, forced_too_new = {};
};

const std::set<std::string> kAtLeast80 = {"8.0",  "8.6",  "8.7",  "8.9",  "9.0",
                                          "10.0", "10.3", "11.0", "12.0", "12.1"};
const std::set<std::string> kAtLeast90 = {"9.0", "10.0", "10.3", "11.0", "12.0", "12.1"};
const std::set<std::string> kAtLeast100 = {"10.0", "10.3", "11.0", "12.0", "12.1"};

const std::map<std::string, Case>& cases() {
  static const std::map<std::string, Case> c = {
      {"sm_75", {{"7.5"}, {}, {}, {}}},
      {"sm_80", {{"8.0", "8.6", "8.7", "8.9"}, {}, {}, {}}},
      {"compute_80", {{}, kAtLeast80, {}, kAtLeast80}},
      {"sm_86+compute_80",
       {{"8.6", "8.7", "8.9"},
        {"8.0", "9.0", "10.0", "10.3", "11.0", "12.0", "12.1"},
        {},
        kAtLeast80}},
      {"sm_80+compute_90", {{"8.0", "8.6", "8.7", "8.9"}, kAtLeast90, {}, kAtLeast90}},
      {"sm_90+compute_80",
       {{"9.0"},
        {"8.0", "8.6", "8.7", "8.9", "10.0", "10.3", "11.0", "12.0", "12.1"},
        {},
        kAtLeast80}},
      {"sm_89", {{"8.9"}, {}, {}, {}}},
      {"sm_90", {{"9.0"}, {}, {}, {}}},
      {"sm_90a", {{"9.0"}, {}, {}, {}}},
      {"compute_90a", {{}, {"9.0"}, {}, {"9.0"}}},
      {"compute_90", {{}, kAtLeast90, {}, kAtLeast90}},
      {"compute_100", {{}, kAtLeast100, {}, kAtLeast100}},
      {"compute_100f", {{}, {"10.0", "10.3"}, {}, {"10.0", "10.3"}}},
      {"sm_100f", {{"10.0", "10.3"}, {}, {}, {}}},
      {"sm_100a", {{"10.0"}, {}, {}, {}}},
      {"sm_103", {{"10.3"}, {}, {}, {}}},
      {"sm_110", {{"11.0"}, {}, {}, {}}},
      {"sm_120+compute_120", {{"12.0", "12.1"}, {}, {}, {"12.0", "12.1"}}},
      {"sm_121a", {{"12.1"}, {}, {}, {}}},
      {"lto_80", {{}, {}, {}, {}}},
      {"lto_90+sm_90", {{"9.0"}, {}, {}, {}}},
      {"compute_80_isa99", {{}, {}, kAtLeast80, {}, kAtLeast80}},
      {"sm_80+compute_80_isa99",
       {{"8.0", "8.6", "8.7", "8.9"},
        {},
        {"9.0", "10.0", "10.3", "11.0", "12.0", "12.1"},
        {},
        kAtLeast80}},
      // Relocatable SASS (-dc) is not loadable as it is: the driver needs a device link.
      {"sm_90_relocatable", {{}, {}, {}, {}}},
  };
  return c;
}

std::filesystem::path matrix() {
  return CUDATOOL_COMPAT_DATA;
}

// The one container of a matrix fatbin, read headers-only.
ScanResult scan(const std::string& name) {
  ScanOptions options;
  options.headers_only = true;
  return scan_binaries({(matrix() / (name + ".fatbin")).string()}, options);
}

std::string outcome(LoadOutcome o) {
  switch (o) {
    case LoadOutcome::native:
      return "native";
    case LoadOutcome::jit:
      return "jit";
    case LoadOutcome::no_binary:
      return "no_binary";
    case LoadOutcome::ptx_too_new:
      return "ptx_too_new";
    case LoadOutcome::jit_disabled:
      return "jit_disabled";
  }
  return "?";
}

class LoadRules : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(matrix() / "sm_80.fatbin"))
      GTEST_SKIP() << "no nvcc-built matrix at " << matrix();
  }
};

TEST_F(LoadRules, EveryCaseOnEveryTargetUnderEveryPolicy) {
  const CompatDriver driver = compat_driver_from_cuda("13.0", "test");
  std::size_t checked = 0;
  for (const auto& [name, expect] : cases()) {
    const ScanResult found = scan(name);
    std::vector<const ScannedImage*> entries;
    for (const ScannedImage& image : found.images) entries.push_back(&image);
    ASSERT_FALSE(entries.empty()) << name;
    for (const std::string& t : kTargets) {
      const ComputeCapability cc = cc_of(t);
      const std::string normal = expect.native.count(t)    ? "native"
                                 : expect.jit.count(t)     ? "jit"
                                 : expect.too_new.count(t) ? "ptx_too_new"
                                                           : "no_binary";
      const std::string forced = expect.forced_jit.count(t)       ? "jit"
                                 : expect.forced_too_new.count(t) ? "ptx_too_new"
                                                                  : "no_binary";
      // JIT disabled comes before the PTX's version (as the driver answers).
      const std::string disabled = expect.native.count(t)    ? "native"
                                   : expect.jit.count(t)     ? "jit_disabled"
                                   : expect.too_new.count(t) ? "jit_disabled"
                                                             : "no_binary";
      EXPECT_EQ(outcome(decide_container(entries, cc, driver, JitPolicy::normal).outcome), normal)
          << name << " on " << t;
      EXPECT_EQ(outcome(decide_container(entries, cc, driver, JitPolicy::force_ptx_jit).outcome),
                forced)
          << name << " on " << t << " under CUDA_FORCE_PTX_JIT";
      EXPECT_EQ(outcome(decide_container(entries, cc, driver, JitPolicy::disable_ptx_jit).outcome),
                disabled)
          << name << " on " << t << " under CUDA_DISABLE_PTX_JIT";
      checked += 3;
    }
  }
  EXPECT_EQ(checked, cases().size() * kTargets.size() * 3);
}

TEST_F(LoadRules, TheChosenImageIsTheBestThatApplies) {
  const CompatDriver driver = compat_driver_from_cuda("13.0", "test");
  const ScanResult found = scan("sm_86+compute_80");
  std::vector<const ScannedImage*> entries;
  for (const ScannedImage& image : found.images) entries.push_back(&image);
  const auto on_89 = decide_container(entries, {8, 9}, driver, JitPolicy::normal);
  ASSERT_TRUE(on_89.entry);
  EXPECT_EQ(entries[*on_89.entry]->arch->str(), "sm_86");
  const auto on_90 = decide_container(entries, {9, 0}, driver, JitPolicy::normal);
  ASSERT_TRUE(on_90.entry);
  EXPECT_EQ(entries[*on_90.entry]->arch->str(), "compute_80");
  EXPECT_TRUE(on_90.holds_code_for_target);
  // Code only for older GPUs: nothing meant for sm_90.
  const ScanResult old = scan("sm_80");
  const auto none = decide_container({&old.images[0]}, {9, 0}, driver, JitPolicy::normal);
  EXPECT_FALSE(none.holds_code_for_target);
  EXPECT_FALSE(none.entry);
}

TEST_F(LoadRules, PtxHeadersAreReadWithoutTheRest) {
  // The version from the entry header alone; the text where asked, which agrees.
  const ScanResult plain = scan("sm_80+compute_80_isa99");
  const ScannedImage& header =
      plain.images[0].kind == ImageKind::ptx ? plain.images[0] : plain.images[1];
  ASSERT_TRUE(header.ptx_version);
  EXPECT_EQ(*header.ptx_version, (PtxVersion{9, 9}));
  EXPECT_FALSE(header.ptx_text_version);
  ScanOptions options;
  options.headers_only = true;
  options.read_ptx_text = true;
  const ScanResult found =
      scan_binaries({(matrix() / "sm_80+compute_80_isa99.fatbin").string()}, options);
  ASSERT_EQ(found.images.size(), 2u);
  const ScannedImage& ptx =
      found.images[0].kind == ImageKind::ptx ? found.images[0] : found.images[1];
  ASSERT_TRUE(ptx.ptx_text_version);
  EXPECT_EQ(*ptx.ptx_text_version, (PtxVersion{9, 9}));
  ASSERT_TRUE(ptx.ptx_target);
  EXPECT_EQ(ptx.ptx_target->str(), "compute_80");
  EXPECT_TRUE(found.kernels.empty());  // no CUBIN read
  // A driver that knows PTX ISA 9.9 does not exist: the fix names none.
  EXPECT_EQ(first_release_for_ptx({9, 9}), nullptr);
}

TEST_F(LoadRules, LtoIrIsNamedAndNeverLoadable) {
  const ScanResult found = scan("lto_80");
  ASSERT_EQ(found.images.size(), 1u);
  EXPECT_EQ(found.images[0].kind, ImageKind::lto_ir);
  ASSERT_TRUE(found.images[0].arch);
  EXPECT_EQ(found.images[0].arch->number(), 80);
}

TEST_F(LoadRules, RelocatableCubinsAreMarked) {
  const ScanResult found = scan("sm_90_relocatable");
  ASSERT_EQ(found.images.size(), 1u);
  EXPECT_TRUE(found.images[0].relocatable);
  const auto d =
      decide_container({&found.images[0]}, {9, 0}, compat_driver_newest(), JitPolicy::normal);
  EXPECT_EQ(d.outcome, LoadOutcome::no_binary);
  EXPECT_TRUE(d.holds_code_for_target);
}

TEST(LoadRulesByArch, FamilyAndArchitectureSpecificVariants) {
  const auto arch = [](const char* s) { return Arch::parse(s, "test"); };
  EXPECT_TRUE(sass_runs_on(arch("sm_100f"), {10, 3}));
  EXPECT_FALSE(sass_runs_on(arch("sm_103f"), {10, 0}));
  EXPECT_FALSE(sass_runs_on(arch("sm_100a"), {10, 3}));
  EXPECT_TRUE(sass_runs_on(arch("sm_120"), {12, 1}));
  EXPECT_FALSE(sass_runs_on(arch("sm_90"), {10, 0}));
  EXPECT_TRUE(ptx_compiles_for(arch("compute_120f"), {12, 1}));
  EXPECT_FALSE(ptx_compiles_for(arch("compute_120f"), {13, 0}));
  EXPECT_FALSE(ptx_compiles_for(arch("compute_90a"), {10, 0}));
  EXPECT_TRUE(ptx_compiles_for(arch("compute_52"), {12, 1}));
}

TEST(JitPolicyFromEnvironment, AsTheDriverReadsIt) {
  ::setenv("CUDA_FORCE_PTX_JIT", "1", 1);
  EXPECT_EQ(jit_policy_from_environment(), JitPolicy::force_ptx_jit);
  ::setenv("CUDA_FORCE_PTX_JIT", "0", 1);
  ::setenv("CUDA_DISABLE_PTX_JIT", "1", 1);
  EXPECT_EQ(jit_policy_from_environment(), JitPolicy::disable_ptx_jit);
  ::unsetenv("CUDA_FORCE_PTX_JIT");
  ::unsetenv("CUDA_DISABLE_PTX_JIT");
  EXPECT_EQ(jit_policy_from_environment(), JitPolicy::normal);
}

}  // namespace
}  // namespace cudatool
