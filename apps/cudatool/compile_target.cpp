// cudatool compile: every architecture's compile as the flags ask, each through the cache, its
// kernels read from the CUBIN, their occupancy at --threads, and with --load the driver's view
// of them.
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "compile_command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace fs = std::filesystem;

// One architecture: compiled through the cache, its kernels read from the CUBIN, their
// occupancy at --threads, and with --load the driver's view of them.
CompileTarget compile_target(const CompileRequest& base, const Arch& arch, bool several,
                             const CompileFlags& flags, CompileCache& cache, bool json,
                             const Messages& message, const CompileFailure& failure) {
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
    for (const auto& w : cache.warnings()) message("warning: " + w);
    failure(e, t.request);
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

// Numbers through the one strict parser: decimal digits only (no hex, sign or octal reading
// of a leading 0).
void parse_compile_numbers(CompileFlags& f) {
  if (f.maxrregcount_text)
    f.maxrregcount = parse_int(*f.maxrregcount_text, "--maxrregcount", 1, 255);
  if (f.threads_text) f.threads = parse_block_size(*f.threads_text, "--threads");
}

CompileRun compile_targets(CompileFlags& f, bool json, const Messages& message,
                           const CompileFailure& failure) {
  parse_compile_numbers(f);
  const CompileFlags& flags = f;
  if (flags.cache_stats || flags.cache_clear || flags.cache_trim)
    throw UsageError("--cache-stats, --cache-clear and --cache-trim take no FILE");
  check_compile_flags(flags);
  if (flags.output && *flags.output == "-" && json)
    throw UsageError(
        "-o -: the image goes to standard output, where --json prints the "
        "document; give -o a file");
  std::optional<ProjectFlags> project;
  if (flags.build_dir) project = project_flags(*flags.build_dir, flags.file, "-p");
  const ProjectFlags* entry = project ? &*project : nullptr;
  CompileRequest base = compile_request(flags, entry);
  const std::vector<Arch> archs = target_archs(flags, entry);
  if (archs.size() > 1 && flags.output)
    throw UsageError("-o " + *flags.output + ": one output file, but " +
                     std::to_string(archs.size()) + " architectures in --arch");
  if (archs.size() > 1 && flags.load)
    throw UsageError("--load checks one architecture, the device's: give one --arch");
  if (flags.keep) base.keep_dir = make_keep_dir();

  CompileRun run;
  run.cache = std::make_unique<CompileCache>(cache_config(flags, flags.no_cache));
  CompileCache& cache = *run.cache;
  if (!cache.config().note.empty()) message("note: " + cache.config().note);
  for (const Arch& arch : archs)
    run.targets.push_back(
        compile_target(base, arch, archs.size() > 1, flags, cache, json, message, failure));
  for (const auto& w : cache.warnings()) message("warning: " + w);
  if (base.keep_dir) message("kept intermediate files in " + base.keep_dir->string());
  if (flags.output && *flags.output != "-")
    cudatool::write_atomically(*flags.output, run.targets.front().result.image);
  return run;
}

ExitStatus differences_status(const CompileRun& run, const Messages& message) {
  std::size_t differences = 0;
  for (const auto& t : run.targets) differences += t.differences.size();
  if (differences == 0) return ExitStatus::success;
  message(std::to_string(differences) + " difference(s) between the CUBIN and the driver");
  return ExitStatus::mismatch;
}

}  // namespace cudatool::app
