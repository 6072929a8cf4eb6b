// cudatool compile FILE|- [options]: NVRTC (or nvcc) to CUBIN or PTX through the compile
// cache, and what every kernel costs, read from the CUBIN (no GPU needed); --threads adds
// occupancy on the target, --load checks the offline values against the driver's.
// Options (here) -> the request (compile_request.cpp) -> the library (compiler.hpp,
// compile_cache.hpp, cubin.hpp, kernel_occupancy.hpp, module.hpp) -> the output
// (compile_render.cpp).
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "compile_command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {

// nvcc-style spellings that CLI11 cannot declare (one dash, several letters) become the
// long options below: -rdc[=true], -lineinfo, -Xptxas/-Xnvrtc/-Xnvcc [=]VALUE,
// -use_fast_math.
std::string normalized_compile_argument(const std::string& arg) {
  if (arg == "-rdc" || arg == "-rdc=true" || arg == "--relocatable-device-code=true" ||
      arg == "--relocatable-device-code")
    return "--rdc";
  if (arg == "-lineinfo" || arg == "--generate-line-info") return "--lineinfo";
  if (arg == "-use_fast_math") return "--use_fast_math";
  for (const char* x : {"-Xptxas", "-Xnvrtc", "-Xnvcc"}) {
    const std::string name = x;
    if (arg == name) return "-" + name;
    if (arg.rfind(name + "=", 0) == 0) return "-" + arg;
  }
  return arg;
}

ExitStatus run_compile(CompileFlags& f, const GlobalOptions& global) {
  if (f.cache_stats || f.cache_clear || f.cache_trim) {
    parse_compile_numbers(f);
    if (!f.file.empty())
      throw UsageError("--cache-stats, --cache-clear and --cache-trim take no FILE");
    run_cache_command(f, global);
    return ExitStatus::success;
  }
  const CompileRun run = compile_targets(f, global.json(), print_message, print_compile_failure);
  // `-o -`: the image is the output (for a pipe), in place of the report.
  if (f.output && *f.output == "-") {
    const std::string& image = run.targets.front().result.image;
    command_out().write(image.data(), static_cast<std::streamsize>(image.size()));
    return ExitStatus::success;
  }
  print_targets(run.targets, f, *run.cache, global);
  return differences_status(run, print_message);
}

}  // namespace

std::vector<std::string> normalize_compile_arguments(const std::vector<std::string>& args) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    // A value that follows an option taking one stays as it is (-D -rdc would be odd, but
    // it is the user's value).
    if (i > 0 &&
        (args[i - 1] == "-Xptxas" || args[i - 1] == "-Xnvrtc" || args[i - 1] == "-Xnvcc" ||
         args[i - 1] == "--Xptxas" || args[i - 1] == "--Xnvrtc" || args[i - 1] == "--Xnvcc")) {
      out.push_back(args[i]);
      continue;
    }
    out.push_back(i < 2 ? args[i] : normalized_compile_argument(args[i]));
  }
  return out;
}

void add_compile_options(CLI::App& sub, CompileFlags& f) {
  sub.add_option("file", f.file, "Source file, or - for stdin");
  sub.add_option("--arch,-a", f.arch,
                 "Targets: sm_XX (CUBIN) or compute_XX (PTX), comma-separated for several; "
                 "default: the -p entry's, else the device's")
      ->check(completion_choices(architecture_names()));
  sub.add_option("-o,--output", f.output, "Write the CUBIN or PTX here (atomically)");
  auto* ptx = sub.add_flag("--ptx", f.ptx, "Produce PTX");
  sub.add_flag("--cubin", f.cubin, "Produce a CUBIN (the default for sm_XX)")->excludes(ptx);
  sub.add_option("-D,--define", f.defines, "Define a macro: NAME or NAME=VALUE")
      ->allow_extra_args(false)
      ->check(  // an empty name would make the compiler take the next option as the macro
          [](const std::string& v) {
            return v.empty() || v[0] == '=' || v[0] == '-'
                       ? std::string("a macro name is required (NAME or NAME=VALUE)")
                       : std::string();
          },
          "NAME[=VALUE]");
  sub.add_option("-I,--include-dir", f.include_dirs, "Add an include directory")
      ->allow_extra_args(false);
  sub.add_option("--std", f.std, "C++ dialect")
      ->check(CLI::IsMember({"c++11", "c++14", "c++17", "c++20"}));
  sub.add_option("--maxrregcount", f.maxrregcount_text, "Registers per thread at most (1-255)");
  auto* extern_c = sub.add_flag(
      "--extern-c", f.extern_c,
      "Wrap the source in extern \"C\" { } as PyCUDA does (the default for stdin only)");
  sub.add_flag("--no-extern-c", f.no_extern_c, "Do not wrap stdin in extern \"C\" { }")
      ->excludes(extern_c);
  sub.add_flag("--rdc", f.rdc, "Relocatable device code (nvcc's -rdc=true)");
  sub.add_flag("-G,--device-debug", f.device_debug, "Device debug code (-G)");
  sub.add_flag("--lineinfo", f.lineinfo, "Line information (-lineinfo)");
  sub.add_flag("--use_fast_math", f.fast_math, "Fast math (--use_fast_math)");
  sub.add_option("--Xptxas", f.xptxas, "Pass an option to ptxas (either engine)")
      ->allow_extra_args(false);
  sub.add_option("--Xnvrtc", f.xnvrtc, "Pass an option to NVRTC when it runs")
      ->allow_extra_args(false);
  sub.add_option("--Xnvcc", f.xnvcc, "Pass an option to nvcc when it runs")
      ->allow_extra_args(false);
  sub.add_option("-p,--build-dir", f.build_dir,
                 "Take the file's flags from BUILD_DIR/compile_commands.json");
  sub.add_flag("--keep", f.keep, "Keep the intermediate files (compiles afresh) and say where");
  sub.add_option("--cache-dir", f.cache_dir,
                 "Cache directory (default: CUDATOOL_CACHE_DIR, "
                 "$XDG_CACHE_HOME/cudatool, ~/.cache/cudatool)");
  sub.add_flag("--no-cache", f.no_cache, "Do not use the on-disk cache");
  sub.add_flag("--load", f.load,
               "Load the module on the GPU and check the offline resources against the "
               "driver's (exit 8 on any difference)");
  sub.add_option("--threads", f.threads_text,
                 "Add each kernel's occupancy at this block size (1 to 1024)");
  sub.add_option("--compiler", f.compiler,
                 "Engine: nvrtc (in-process) or nvcc; default: chosen for the file")
      ->check(CLI::IsMember({"nvrtc", "nvcc"}));
  sub.add_option("--device,-d", f.device,
                 "Device for the default --arch and for --load (ordinal, PCI bus id, UUID)");
  sub.add_flag("--cache-stats", f.cache_stats, "Print the cache's size and entries, and exit");
  sub.add_flag("--cache-clear", f.cache_clear, "Remove every cache entry, and exit");
  sub.add_option("--cache-trim", f.cache_trim,
                 "Remove the oldest entries down to SIZE (bytes, or K, M, G), and exit");
}

Command add_compile(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "compile",
      "Compile a CUDA source (NVRTC or nvcc, chosen for the file; cached) and report each "
      "kernel's resources");
  auto f = std::make_shared<CompileFlags>();
  add_json_flag(*sub, global);
  add_compile_options(*sub, *f);

  return {sub, [f, &global]() { return run_compile(*f, global); }};
}

}  // namespace cudatool::app
