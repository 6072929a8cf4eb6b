// cudatool compat PATH...: will the CUDA code in these files run on these GPUs. Options ->
// the request (targets, driver, JIT policy) -> check_compat -> the answer -> text or JSON
// (compat_report.hpp). Needs no GPU with --arch; otherwise the visible GPUs, from the
// device cache where it serves.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "compat_report.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/compat/compat.hpp"

namespace cudatool::app {
namespace {

ExitStatus run(const CompatOptions& o, const GlobalOptions& global) {
  const CompatAnswer answer = compat_answer(o);
  if (global.json())
    print_compat_json(answer);
  else
    print_compat_text(answer);
  return compat_exit_status(answer);
}

}  // namespace

CompatAnswer compat_answer(const CompatOptions& o) {
  CompatRequest request;
  request.paths = o.paths;
  if (o.python) {
    const std::string python = active_python();
    if (python.empty())
      throw UsageError(
          "--python: no active Python environment ($VIRTUAL_ENV, $CONDA_PREFIX) "
          "and no python3 on PATH");
    request.paths.push_back(python);
  }
  if (request.paths.empty())
    throw UsageError(
        "name the files, directories, wheels or Python interpreters to judge, or --python");
  bool require_native = false;
  if (o.require) {
    if (*o.require != "native")
      throw UsageError("--require " + quote_input(*o.require) + ": the one requirement is native");
    require_native = true;
  }
  request.policy = jit_policy_from_environment();
  if (o.ptx_jit) {
    if (*o.ptx_jit == "force")
      request.policy = JitPolicy::force_ptx_jit;
    else if (*o.ptx_jit == "disable")
      request.policy = JitPolicy::disable_ptx_jit;
    else if (*o.ptx_jit == "normal")
      request.policy = JitPolicy::normal;
    else
      throw UsageError("--ptx-jit " + quote_input(*o.ptx_jit) +
                       ": expected normal, force or disable");
  }
  if (o.driver && o.cuda) throw UsageError("--driver and --cuda exclude each other");
  if (o.jobs) request.threads = static_cast<unsigned>(parse_int(*o.jobs, "--jobs", 1, 1024));
  request.containers = o.containers;
  // Targets and driver: named ones need no GPU; else the visible GPUs and this machine's driver.
  std::vector<std::string> names;
  for (const std::string& list : o.arch)
    for (std::string& name : split_list(list, "--arch", "sm_90,H100"))
      names.push_back(std::move(name));
  if (!names.empty()) {
    request.targets = compat_targets_named(names, "--arch");
  } else {
    // No --arch: the visible GPUs; where there are none, say how to name some.
    constexpr const char* hint = " (or name the target GPUs with --arch: sm_90, 8.6, H100)";
    try {
      request.targets = visible_gpu_targets(o.fresh, "--fresh");
    } catch (const LibraryNotFoundError& e) {
      throw LibraryNotFoundError(e.what() + std::string(hint), e.library());
    } catch (const DeviceNotFoundError& e) {
      throw DeviceNotFoundError(e.what() + std::string(hint));
    }
  }
  request.driver = o.driver ? compat_driver_from_release(*o.driver, "--driver")
                   : o.cuda ? compat_driver_from_cuda(*o.cuda, "--cuda")
                            : machine_compat_driver();
  return {check_compat(request), require_native, o.all};
}

Command add_compat(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "compat",
      "Will the CUDA code in these files run on these GPUs, natively or by JIT, and if not why "
      "(headers only, no GPU needed with --arch)");
  auto o = std::make_shared<CompatOptions>();
  sub->add_option("PATH", o->paths,
                  "Files (shared libraries, executables, objects, archives, CUBIN, fatbin), "
                  "directories (walked), wheels (.whl) or Python interpreters (their "
                  "site-packages)");
  sub->add_option("--arch,-a", o->arch,
                  "Target GPUs instead of the visible ones: architectures (sm_90), compute "
                  "capabilities (9.0) or products (H100, A100, L4, RTX 4090); comma-separated")
      ->expected(1)
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
      ->check(completion_choices(architecture_names()));
  sub->add_option("--driver", o->driver,
                  "Judge for this driver version (535.104.05) instead of this machine's");
  sub->add_option("--cuda", o->cuda,
                  "Judge for a driver of this CUDA version (12.4) instead of this machine's");
  sub->add_option("--require", o->require,
                  "native: fail (exit 12) where some code runs only by JIT-compiling PTX")
      ->check(completion_choices({"native"}, true));
  sub->add_option("--ptx-jit", o->ptx_jit,
                  "normal, force (as CUDA_FORCE_PTX_JIT=1) or disable (as CUDA_DISABLE_PTX_JIT=1); "
                  "default: as this process's environment sets them")
      ->check(completion_choices({"normal", "force", "disable"}, true));
  sub->add_flag("--python", o->python,
                "Judge the active Python environment ($VIRTUAL_ENV, $CONDA_PREFIX, else python3 on "
                "PATH): its site-packages");
  sub->add_flag("--all", o->all, "List the files without CUDA code too");
  sub->add_flag("--containers", o->containers,
                "JSON: every fatbin container with its entries and the driver's decision");
  sub->add_option("--jobs", o->jobs,
                  "Worker threads, 1 to 1024 (default: one per CPU this process may use)");
  add_fresh_flag(*sub, o->fresh);
  add_json_flag(*sub, global);
  return {sub, [o, &global] { return run(*o, global); }};
}

}  // namespace cudatool::app
