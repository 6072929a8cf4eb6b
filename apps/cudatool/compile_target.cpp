// cudatool compile: one architecture's compile through the cache, its kernels read from the
// CUBIN, their occupancy at --threads, and with --load the driver's view of them.
#include <filesystem>
#include <iostream>
#include <span>
#include <string>

#include "compile_command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace fs = std::filesystem;

// One architecture: compiled through the cache, its kernels read from the CUBIN, their
// occupancy at --threads, and with --load the driver's view of them.
CompileTarget compile_target(const CompileRequest& base, const Arch& arch, bool several,
                             const CompileFlags& flags, CompileCache& cache, bool json) {
  CompileTarget t;
  t.request = base;
  t.request.arch = arch;
  if (several && t.request.keep_dir) {
    t.request.keep_dir = *base.keep_dir / arch.str();
    fs::create_directories(*t.request.keep_dir);
  }
  const OutputKind kind =
      t.request.output.value_or(arch.real() ? OutputKind::cubin : OutputKind::ptx);
  if ((flags.threads || flags.load) && kind != OutputKind::cubin)
    throw UsageError(std::string(flags.load ? "--load" : "--threads") +
                     " needs a CUBIN (an sm_XX target, without --ptx)");
  try {
    t.result = compile(t.request, &cache);
  } catch (const CompileError& e) {
    for (const auto& w : cache.warnings()) print_message("warning: " + w);
    print_compile_failure(e, t.request);
    throw;
  }
  if (!t.result.log.empty() && !json)
    command_err() << t.result.log << (t.result.log.back() == '\n' ? "" : "\n");
  if (t.result.output == OutputKind::cubin) {
    CubinInfo info = read_cubin(std::span(
        reinterpret_cast<const std::uint8_t*>(t.result.image.data()), t.result.image.size()));
    t.kernels = std::move(info.kernels);
    t.bounds = std::move(info.bounds);
    t.relocatable = info.relocatable;
  }
  if (flags.threads) {
    ArchitectureTable table;
    for (std::size_t i = 0; i < t.kernels.size(); ++i)
      t.occupancy.push_back(occupancy_for_kernel(table, arch, t.kernels[i], t.bounds[i],
                                                 t.relocatable, *flags.threads));
  }
  if (flags.load) {
    const Context context(select_device(flags.device, "--device"));
    const auto module = load_module_memoized(context, t.result.image);
    for (const auto& k : t.kernels) t.loaded.push_back(module->resources(k.name, k.demangled));
    t.differences = compare_resources(t.kernels, t.loaded);
  }
  return t;
}

}  // namespace cudatool::app
