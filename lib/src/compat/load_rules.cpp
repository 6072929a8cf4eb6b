// The driver's choice of code for one fatbin container (compat.hpp has the rules and where
// NVIDIA states them). Pure: tested for every target sm_50..sm_121 without a GPU
// (test_load_rules.cpp) and against the driver on the GPU (tools/compat_vs_driver).
#include <cstdlib>

#include "cudatool/compat/compat.hpp"

namespace cudatool {

bool sass_runs_on(const Arch& arch, ComputeCapability target) {
  if (arch.variant == Arch::Variant::a) return arch.cc == target;
  return arch.cc.major == target.major && arch.cc.minor <= target.minor;
}

bool ptx_compiles_for(const Arch& arch, ComputeCapability target) {
  switch (arch.variant) {
    case Arch::Variant::a:
      return arch.cc == target;
    case Arch::Variant::f:
      return arch.cc.major == target.major && arch.cc.minor <= target.minor;
    case Arch::Variant::none:
      break;
  }
  return arch.cc <= target;
}

ContainerDecision decide_container(const std::vector<const ScannedImage*>& entries,
                                   ComputeCapability target, const CompatDriver& driver,
                                   JitPolicy policy) {
  ContainerDecision d;
  // The best SASS: the highest minor that runs (an a or f variant over the plain one of the
  // same number, as it is the most specific).
  std::optional<std::size_t> sass, ptx;
  const auto better = [&](std::optional<std::size_t> current, std::size_t candidate) {
    if (!current) return true;
    const Arch& a = *entries[*current]->arch;
    const Arch& b = *entries[candidate]->arch;
    if (b.cc != a.cc) return a.cc < b.cc;
    return a.variant == Arch::Variant::none && b.variant != Arch::Variant::none;
  };
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const ScannedImage& e = *entries[i];
    if (!e.arch || !e.error.empty()) continue;
    if (e.kind == ImageKind::elf && !e.relocatable && sass_runs_on(*e.arch, target)) {
      d.holds_code_for_target = true;
      if (better(sass, i)) sass = i;
    } else if (e.kind == ImageKind::ptx && ptx_compiles_for(*e.arch, target)) {
      d.holds_code_for_target = true;
      // Of PTX the driver can compile, the newest architecture; else the newest at all.
      const bool compilable = !e.ptx_version || *e.ptx_version <= driver.cuda.ptx;
      const bool current_compilable =
          ptx && (!entries[*ptx]->ptx_version || *entries[*ptx]->ptx_version <= driver.cuda.ptx);
      if (!ptx || (compilable && !current_compilable) ||
          (compilable == current_compilable && better(ptx, i)))
        ptx = i;
    } else if (e.kind == ImageKind::elf && e.relocatable && sass_runs_on(*e.arch, target)) {
      // Relocatable code for this GPU: meant for it, but only after a device link.
      d.holds_code_for_target = true;
    }
  }
  if (sass && policy != JitPolicy::force_ptx_jit) {
    d.outcome = LoadOutcome::native;
    d.entry = sass;
    return d;
  }
  if (!ptx) {
    d.outcome = LoadOutcome::no_binary;
    return d;
  }
  d.entry = ptx;
  const ScannedImage& p = *entries[*ptx];
  // JIT disabled is said before the PTX's version is looked at (CUDA_DISABLE_PTX_JIT=1 with
  // PTX of ISA 9.9: CUDA_ERROR_JIT_COMPILATION_DISABLED, measured on an H200, driver 580).
  if (policy == JitPolicy::disable_ptx_jit)
    d.outcome = LoadOutcome::jit_disabled;
  else if (p.ptx_version && *p.ptx_version > driver.cuda.ptx)
    d.outcome = LoadOutcome::ptx_too_new;
  else
    d.outcome = LoadOutcome::jit;
  return d;
}

JitPolicy jit_policy_from_environment() {
  const auto set = [](const char* name) {
    const char* v = std::getenv(name);
    return v != nullptr && std::atoi(v) != 0;
  };
  if (set("CUDA_FORCE_PTX_JIT")) return JitPolicy::force_ptx_jit;
  if (set("CUDA_DISABLE_PTX_JIT")) return JitPolicy::disable_ptx_jit;
  return JitPolicy::normal;
}

}  // namespace cudatool
