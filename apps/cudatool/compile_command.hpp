// cudatool compile, between its files: the flags as parsed (compile.cpp), the request made
// of them (compile_request.cpp), one architecture's compile and what it tells, and its
// renderings (compile_render.cpp).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "cudatool/base/arch.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compile_commands.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "json_stream.hpp"
#include "render.hpp"

namespace cudatool::app {

struct CompileFlags {
  std::string file;
  std::optional<std::string> arch;
  std::optional<std::string> output;
  bool ptx = false;
  bool cubin = false;
  std::vector<std::string> defines;
  std::vector<std::string> include_dirs;
  std::string std;
  std::optional<std::string> maxrregcount_text;  // parsed by parse_int (numbers.hpp)
  std::optional<int> maxrregcount;
  bool extern_c = false;
  bool no_extern_c = false;
  bool rdc = false;
  bool device_debug = false;
  bool lineinfo = false;
  bool fast_math = false;
  std::vector<std::string> xptxas;
  std::vector<std::string> xnvrtc;
  std::vector<std::string> xnvcc;
  std::optional<std::string> build_dir;
  bool keep = false;
  std::optional<std::string> cache_dir;
  bool no_cache = false;
  bool load = false;
  std::optional<std::string> threads_text;
  std::optional<int> threads;
  std::optional<std::string> compiler;
  std::optional<std::string> device;
  bool cache_stats = false;
  bool cache_clear = false;
  std::optional<std::string> cache_trim;
};

// One architecture's compile and what it tells.
struct CompileTarget {
  CompileRequest request;
  CompileResult result;
  std::vector<KernelResources> kernels;
  std::vector<KernelBounds> bounds;        // one per kernel
  bool relocatable = false;                // --rdc: no occupancy before the device link
  std::vector<KernelOccupancy> occupancy;  // at --threads
  std::vector<KernelResources> loaded;
  std::vector<ResourceDifference> differences;
};

// compile_request.cpp: the flags' checks that need no compile, and the request they make.
void check_compile_flags(const CompileFlags& flags);
// The request without its architecture: the source (FILE or stdin), the -p entry's settings,
// then the flags', the engines' default flags from the environment. Names cudatool's flags
// in the request's messages.
CompileRequest compile_request(const CompileFlags& flags, const ProjectFlags* project);
// --arch (a comma-separated list), else the architectures of the -p entry, else the
// compute capability of the device --device/CUDA_DEVICE selects.
std::vector<Arch> target_archs(const CompileFlags& flags, const ProjectFlags* project);
// --keep's directory, created under TMPDIR.
std::filesystem::path make_keep_dir();
// The cache the flags ask for; the note on why it is off, when there is one, is printed.
CacheConfig cache_config(const CompileFlags& flags, bool no_cache);

// What a failed compile shows besides the error: the executable's print_compile_failure (the
// compiler's log, hints, the kept files); the Python module's CompileError carries the log.
using CompileFailure = std::function<void(const CompileError&, const CompileRequest&)>;

// compile_target.cpp: `base` for `arch` (in a folder of --keep's when `several`) compiled
// through `cache`, and read. The compiler's log goes to stderr (not with `json`); the cache's
// warnings to `message`, a failure to `failure` before the CompileError propagates.
CompileTarget compile_target(const CompileRequest& base, const Arch& arch, bool several,
                             const CompileFlags& flags, CompileCache& cache, bool json,
                             const Messages& message, const CompileFailure& failure);

// compile.cpp: the flags (all but --json), for the executable and for the Python module's
// compile() alike.
void add_compile_options(CLI::App& sub, CompileFlags& flags);
// --maxrregcount and --threads through the one strict parser (compile_target.cpp).
void parse_compile_numbers(CompileFlags& flags);

// compile_target.cpp: every architecture's compile, as the flags ask (checked first), through the
// cache; the cache's note and warnings and the kept files' folder told to `message`; -o FILE
// written.
struct CompileRun {
  std::vector<CompileTarget> targets;
  std::unique_ptr<CompileCache> cache;
};
CompileRun compile_targets(CompileFlags& flags, bool json, const Messages& message,
                           const CompileFailure& failure);
// 8 (told to `message`) where --load found the driver's resources differ from the CUBIN's.
ExitStatus differences_status(const CompileRun& run, const Messages& message);

// compile_render.cpp.
int run_cache_command(const CompileFlags& flags, const GlobalOptions& global);
// The compiler's log of a failed compile, the hints for it and where the kept files are.
void print_compile_failure(const CompileError& error, const CompileRequest& request);
void print_targets(const std::vector<CompileTarget>& targets, const CompileFlags& flags,
                   const CompileCache& cache, const GlobalOptions& global);
// The --json document without schema_version (print_json adds kCompileSchemaVersion).
JsonObject compile_json(const std::vector<CompileTarget>& targets, const CompileFlags& flags,
                        const CompileCache& cache);

}  // namespace cudatool::app
