// cudatool compile FILE|- [options]: NVRTC (or nvcc) to CUBIN or PTX through the compile
// cache, and what every kernel costs, read from the CUBIN (no GPU needed); --threads adds
// occupancy on the target, --load checks the offline values against the driver's.
// This file parses flags and renders; the work is in the library (compiler.hpp,
// compile_cache.hpp, cubin.hpp, module.hpp, occupancy.hpp).
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "command.hpp"
#include "compile_json.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/numbers.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compile_commands.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/kernel_occupancy.hpp"
#include "cudatool/occupancy/occupancy.hpp"
#include "kernel_occupancy_json.hpp"
#include "render.hpp"

namespace cudatool::app {
namespace {
namespace fs = std::filesystem;

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

std::string read_source(const std::string& file) {
  std::string data;
  char buffer[65536];
  int fd = 0;
  // A file: the one input reader (refuses FIFOs, devices and directories, never blocks).
  if (file != "-") return read_input_file(file, "source");
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int saved = errno;
      if (fd != 0) ::close(fd);
      throw UsageError((file == "-" ? std::string("stdin") : file) +
                       ": cannot read: " + std::strerror(saved));
    }
    if (n == 0) break;
    // The bound every input file has (file_io.hpp): /dev/zero on stdin must not grow memory.
    if (data.size() + static_cast<std::size_t>(n) > kMaxInputFileBytes)
      throw UsageError("stdin: larger than " + std::to_string(kMaxInputFileBytes) + " bytes");
    data.append(buffer, static_cast<std::size_t>(n));
    // A NUL or 0xFF byte is refused whatever follows (the compile's validation names where):
    // no need to read on (/dev/zero would otherwise run to the bound).
    if (std::memchr(buffer, 0, static_cast<std::size_t>(n)) ||
        std::memchr(buffer, 0xff, static_cast<std::size_t>(n)))
      break;
  }
  if (fd != 0) ::close(fd);
  return data;
}

void check_output_path(const std::string& output) {
  const fs::path path(output);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError("-o " + output + ": directory " + dir.string() + " does not exist");
  if (fs::is_directory(path, ec)) throw UsageError("-o " + output + ": is a directory");
}

// --arch (a comma-separated list), else the architectures of the -p entry, else the
// compute capability of the device --device/CUDA_DEVICE selects.
std::vector<Arch> target_archs(const CompileFlags& flags, const ProjectFlags* project) {
  std::vector<Arch> archs;
  auto add = [&](const std::string& text) {
    const Arch arch = Arch::parse(text, "--arch");
    check_supported(arch, "--arch");
    for (const auto& a : archs)
      if (a == arch) return;
    archs.push_back(arch);
  };
  if (flags.arch) {
    const std::string& list = *flags.arch;
    for (const std::string& item : split_list(list, "--arch", "sm_80,sm_90")) {
      try {
        add(item);
      } catch (const UsageError& e) {
        if (item == list) throw;
        throw UsageError("--arch " + quote_input(list) + ": entry " + quote_input(item) + ": " +
                         std::string(e.what()).substr(std::string(e.what()).find(": ") + 2));
      }
    }
    return archs;
  }
  if (project && !project->archs.empty()) {
    for (const auto& a : project->archs) add(a);
    return archs;
  }
  try {
    const Device device = select_device(flags.device);
    const ComputeCapability cc = device.compute_capability();
    add(cc.sm());
    return archs;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("--arch is required where no GPU can be asked (") + e.what() +
                     "); e.g. --arch sm_90");
  }
}

int run_cache_command(const CompileFlags& flags, const GlobalOptions& global) {
  CacheConfig config = CacheConfig::from_environment(flags.cache_dir, false);
  CompileCache cache(config);
  nlohmann::json out;
  if (flags.cache_clear) {
    const auto removed = cache.clear();
    out["removed_entries"] = removed;
    if (!global.json)
      std::cout << "removed " << removed << " entries from " << config.dir.string() << '\n';
  }
  if (flags.cache_trim) {
    const auto limit = parse_size(*flags.cache_trim, "--cache-trim");
    const auto removed = cache.trim(limit);
    out["trimmed_entries"] = removed;
    if (!global.json)
      std::cout << "trimmed " << removed << " entries (limit " << limit << " bytes)\n";
  }
  const CacheStats stats = cache.stats();
  out["cache"] = stats;
  out["cache"]["enabled"] = CacheConfig::from_environment(flags.cache_dir, flags.no_cache).enabled;
  if (global.json) {
    print_json(out, kCompileSchemaVersion);
  } else if (flags.cache_stats || (!flags.cache_clear && !flags.cache_trim)) {
    std::cout << "cache " << stats.dir << ": " << stats.entries << " entries, " << stats.bytes
              << " bytes (bound " << stats.max_bytes << " bytes)\n";
  }
  return 0;
}

std::string describe_kernel(const KernelResources& k) {
  return k.demangled == k.name ? k.name : k.demangled + " [" + k.name + "]";
}

// One architecture's compile and what it tells.
struct Target {
  CompileRequest request;
  CompileResult result;
  std::vector<KernelResources> kernels;
  std::vector<KernelBounds> bounds;        // one per kernel
  bool relocatable = false;                // --rdc: no occupancy before the device link
  std::vector<KernelOccupancy> occupancy;  // at --threads
  std::vector<KernelResources> loaded;
  std::vector<ResourceDifference> differences;
};

void print_hints(const std::string& log, const CompileRequest& request, Engine engine) {
  // A hint names a header from the source: escaped as every message is (render.hpp).
  for (const auto& hint : compile_hints(log, request, engine))
    std::cerr << printable(hint, kMaxMessageLine) << '\n';
}

nlohmann::json target_json(const Target& t, const CompileFlags& flags, const CompileCache& cache) {
  nlohmann::json out = t.result;
  out["source"] = t.request.source_name;
  if (flags.output) out["output_path"] = *flags.output;
  // One cache object: the result's own cache_key/cache_hit/cache_path move into it.
  out["cache"] = {{"enabled", cache.enabled()},
                  {"dir", cache.config().dir.string()},
                  {"hit", t.result.cache_hit},
                  {"key", t.result.cache_key}};
  if (!t.result.cache_path.empty()) out["cache"]["path"] = t.result.cache_path;
  for (const char* moved : {"cache_key", "cache_hit", "cache_path"}) out.erase(moved);
  if (t.request.keep_dir) out["kept_dir"] = t.request.keep_dir->string();
  nlohmann::json list = nlohmann::json::array();
  for (std::size_t i = 0; i < t.kernels.size(); ++i) {
    nlohmann::json k = t.kernels[i];
    if (flags.threads) k["occupancy"] = kernel_occupancy_json(t.occupancy[i]);
    if (flags.load) k["loaded"] = t.loaded[i];
    list.push_back(std::move(k));
  }
  out["kernels"] = std::move(list);
  if (flags.load) out["differences"] = t.differences;
  return out;
}

void print_target_text(const Target& t, const CompileFlags& flags) {
  const CompileResult& result = t.result;
  std::cout << t.request.source_name << " -> " << result.arch.str() << ' '
            << to_string(result.output) << ", " << result.image.size() << " bytes";
  if (flags.output) std::cout << " in " << *flags.output;
  std::cout << " (" << result.compiler << ' ' << result.compiler_version << ", "
            << (result.memo_hit ? "memo hit"
                : result.cache_hit
                    ? "cache hit"
                    : "compiled in " +
                          std::to_string(static_cast<int>(result.compile_seconds * 1000 + 0.5)) +
                          " ms")
            << ")\n";
  std::cout << "engine: " << result.compiler << " (" << result.engine_reason << ")\n";
  if (!t.kernels.empty()) {
    std::size_t width = 6;
    for (const auto& k : t.kernels) width = std::max(width, describe_kernel(k).size());
    std::cout << pad("kernel", width) << "  num_regs  shared_size_bytes  local_size_bytes"
              << "  const_size_bytes  max_threads_per_block";
    if (flags.threads) std::cout << "  occupancy@" << *flags.threads;
    std::cout << '\n';
    auto column = [](long long v, std::size_t w) {
      std::string s = std::to_string(v);
      return std::string(w > s.size() ? w - s.size() : 0, ' ') + s;
    };
    for (std::size_t i = 0; i < t.kernels.size(); ++i) {
      const auto& k = t.kernels[i];
      std::cout << pad(describe_kernel(k), width) << "  " << column(k.num_regs, 8) << "  "
                << column(k.shared_size_bytes, 17) << "  " << column(k.local_size_bytes, 16) << "  "
                << column(k.const_size_bytes, 16) << "  " << column(k.max_threads_per_block, 21);
      if (flags.threads) {
        if (const auto& record = t.occupancy[i].record) {
          std::cout << "  " << static_cast<int>(record->occupancy * 100 + 0.5) << "% ("
                    << record->tb_per_mp << " blocks/SM, " << record->limited_by << ")";
        } else {
          std::cout << "  - (" << t.occupancy[i].reason << ")";
        }
      }
      std::cout << '\n';
    }
  }
  if (flags.load) {
    if (t.differences.empty()) {
      std::cout << "loaded on device: all " << t.kernels.size()
                << " kernels match the driver's attributes\n";
    }
    for (const auto& d : t.differences)
      std::cout << "MISMATCH " << d.kernel << ' ' << d.attribute << ": cubin " << d.offline
                << ", driver " << d.loaded << '\n';
  }
}

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

Command add_compile(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "compile",
      "Compile a CUDA source (NVRTC or nvcc, chosen for the file; cached) and report each "
      "kernel's resources");
  auto f = std::make_shared<CompileFlags>();
  add_json_flag(*sub, global);
  sub->add_option("file", f->file, "Source file, or - for stdin");
  sub->add_option("--arch,-a", f->arch,
                  "Targets: sm_XX (CUBIN) or compute_XX (PTX), comma-separated for several; "
                  "default: the -p entry's, else the device's")
      ->check(completion_choices(architecture_names()));
  sub->add_option("-o,--output", f->output, "Write the CUBIN or PTX here (atomically)");
  auto* ptx = sub->add_flag("--ptx", f->ptx, "Produce PTX");
  sub->add_flag("--cubin", f->cubin, "Produce a CUBIN (the default for sm_XX)")->excludes(ptx);
  sub->add_option("-D,--define", f->defines, "Define a macro: NAME or NAME=VALUE")
      ->allow_extra_args(false)
      ->check(  // an empty name would make the compiler take the next option as the macro
          [](const std::string& v) {
            return v.empty() || v[0] == '=' || v[0] == '-'
                       ? std::string("a macro name is required (NAME or NAME=VALUE)")
                       : std::string();
          },
          "NAME[=VALUE]");
  sub->add_option("-I,--include-dir", f->include_dirs, "Add an include directory")
      ->allow_extra_args(false);
  sub->add_option("--std", f->std, "C++ dialect")
      ->check(CLI::IsMember({"c++11", "c++14", "c++17", "c++20"}));
  sub->add_option("--maxrregcount", f->maxrregcount_text, "Registers per thread at most (1-255)");
  auto* extern_c = sub->add_flag(
      "--extern-c", f->extern_c,
      "Wrap the source in extern \"C\" { } as PyCUDA does (the default for stdin only)");
  sub->add_flag("--no-extern-c", f->no_extern_c, "Do not wrap stdin in extern \"C\" { }")
      ->excludes(extern_c);
  sub->add_flag("--rdc", f->rdc, "Relocatable device code (nvcc's -rdc=true)");
  sub->add_flag("-G,--device-debug", f->device_debug, "Device debug code (-G)");
  sub->add_flag("--lineinfo", f->lineinfo, "Line information (-lineinfo)");
  sub->add_flag("--use_fast_math", f->fast_math, "Fast math (--use_fast_math)");
  sub->add_option("--Xptxas", f->xptxas, "Pass an option to ptxas (either engine)")
      ->allow_extra_args(false);
  sub->add_option("--Xnvrtc", f->xnvrtc, "Pass an option to NVRTC when it runs")
      ->allow_extra_args(false);
  sub->add_option("--Xnvcc", f->xnvcc, "Pass an option to nvcc when it runs")
      ->allow_extra_args(false);
  sub->add_option("-p,--build-dir", f->build_dir,
                  "Take the file's flags from BUILD_DIR/compile_commands.json");
  sub->add_flag("--keep", f->keep, "Keep the intermediate files (compiles afresh) and say where");
  sub->add_option("--cache-dir", f->cache_dir,
                  "Cache directory (default: CUDATOOL_CACHE_DIR, "
                  "$XDG_CACHE_HOME/cudatool, ~/.cache/cudatool)");
  sub->add_flag("--no-cache", f->no_cache, "Do not use the on-disk cache");
  sub->add_flag("--load", f->load,
                "Load the module on the GPU and check the offline resources against the "
                "driver's (exit 8 on any difference)");
  sub->add_option("--threads", f->threads_text,
                  "Add each kernel's occupancy at this block size (1-1048576)");
  sub->add_option("--compiler", f->compiler,
                  "Engine: nvrtc (in-process) or nvcc; default: chosen for the file")
      ->check(CLI::IsMember({"nvrtc", "nvcc"}));
  sub->add_option("--device,-d", f->device,
                  "Device for the default --arch and for --load (ordinal, PCI bus id, UUID)");
  sub->add_flag("--cache-stats", f->cache_stats, "Print the cache's size and entries, and exit");
  sub->add_flag("--cache-clear", f->cache_clear, "Remove every cache entry, and exit");
  sub->add_option("--cache-trim", f->cache_trim,
                  "Remove the oldest entries down to SIZE (bytes, or K, M, G), and exit");

  return {
      sub, [f, &global]() -> ExitStatus {
        // Numbers through the one strict parser: decimal digits only (no hex, sign or
        // octal reading of a leading 0).
        if (f->maxrregcount_text)
          f->maxrregcount = parse_int(*f->maxrregcount_text, "--maxrregcount", 1, 255);
        if (f->threads_text) f->threads = parse_int(*f->threads_text, "--threads", 1, 1 << 20);
        const CompileFlags& flags = *f;
        if (flags.cache_stats || flags.cache_clear || flags.cache_trim) {
          if (!flags.file.empty())
            throw UsageError("--cache-stats, --cache-clear and --cache-trim take no FILE");
          run_cache_command(flags, global);
          return ExitStatus::success;
        }
        if (flags.file.empty()) throw UsageError("no source given: FILE, or - for stdin");
        if (flags.output) check_output_path(*flags.output);
        if (flags.compiler == "nvrtc" && !flags.xnvcc.empty())
          throw UsageError("-Xnvcc " + flags.xnvcc.front() +
                           ": an nvcc option, but --compiler nvrtc runs NVRTC");
        if (flags.compiler == "nvcc" && !flags.xnvrtc.empty())
          throw UsageError("-Xnvrtc " + flags.xnvrtc.front() +
                           ": an NVRTC option, but --compiler nvcc runs nvcc");
        if (flags.build_dir && flags.file == "-")
          throw UsageError("-p " + *flags.build_dir + ": needs a FILE (its entry), not stdin");

        std::optional<ProjectFlags> project;
        if (flags.build_dir) project = project_flags(*flags.build_dir, flags.file);

        CompileRequest base;
        base.source = read_source(flags.file);
        if (flags.file != "-") {
          base.source_name = flags.file;
          base.source_dir = fs::path(flags.file).parent_path();
          base.source_path = flags.file;
        } else {
          base.source_name = "stdin.cu";
        }
        const std::vector<Arch> archs = target_archs(flags, project ? &*project : nullptr);
        if (archs.size() > 1 && flags.output)
          throw UsageError("-o " + *flags.output + ": one output file, but " +
                           std::to_string(archs.size()) + " architectures in --arch");
        if (archs.size() > 1 && flags.load)
          throw UsageError("--load checks one architecture, the device's: give one --arch");
        if (flags.ptx) base.output = OutputKind::ptx;
        if (flags.cubin) base.output = OutputKind::cubin;
        if (project) {
          base.include_dirs = project->include_dirs;
          base.defines = project->defines;
          base.std = project->std;
          base.rdc = project->rdc;
          base.device_debug = project->device_debug;
          base.lineinfo = project->lineinfo;
          base.fast_math = project->fast_math;
          base.ptxas_options = project->ptxas_options;
          base.maxrregcount = project->maxrregcount;
        }
        base.defines.insert(base.defines.end(), flags.defines.begin(), flags.defines.end());
        base.include_dirs.insert(base.include_dirs.end(), flags.include_dirs.begin(),
                                 flags.include_dirs.end());
        if (!flags.std.empty()) base.std = flags.std;
        if (flags.maxrregcount) base.maxrregcount = *flags.maxrregcount;
        // A file is the translation unit it is; stdin keeps PyCUDA's wrap (snippets).
        base.extern_c = flags.extern_c || (flags.file == "-" && !flags.no_extern_c);
        base.rdc = base.rdc || flags.rdc;
        base.device_debug = base.device_debug || flags.device_debug;
        base.lineinfo = base.lineinfo || flags.lineinfo;
        base.fast_math = base.fast_math || flags.fast_math;
        base.ptxas_options.insert(base.ptxas_options.end(), flags.xptxas.begin(),
                                  flags.xptxas.end());
        if (flags.compiler) base.engine = *flags.compiler == "nvcc" ? Engine::nvcc : Engine::nvrtc;
        base.nvrtc_options = default_flags_from_environment(Engine::nvrtc);
        base.nvrtc_options.insert(base.nvrtc_options.end(), flags.xnvrtc.begin(),
                                  flags.xnvrtc.end());
        base.nvcc_options = default_flags_from_environment(Engine::nvcc);
        base.nvcc_options.insert(base.nvcc_options.end(), flags.xnvcc.begin(), flags.xnvcc.end());
        // The project's nvcc-only switches (--extended-lambda): they make nvcc the engine.
        if (project)
          base.nvcc_options.insert(base.nvcc_options.end(), project->nvcc_language_options.begin(),
                                   project->nvcc_language_options.end());
        if (base.engine == Engine::nvrtc) base.nvcc_options.clear();
        if (base.engine == Engine::nvcc) base.nvrtc_options.clear();

        if (flags.keep) {
          const char* tmp = std::getenv("TMPDIR");
          const std::string dir = tmp && *tmp ? tmp : "/tmp";
          std::string pattern = dir + "/cudatool-keep-XXXXXX";
          if (::mkdtemp(pattern.data()) == nullptr)
            throw UsageError("--keep: cannot create a directory in " +
                             std::string(tmp && *tmp ? "TMPDIR=" : "") + dir + ": " +
                             std::strerror(errno));
          base.keep_dir = pattern;
        }

        CompileCache cache(CacheConfig::from_environment(flags.cache_dir, flags.no_cache));
        if (!cache.config().note.empty()) print_message("note: " + cache.config().note);
        std::vector<Target> targets;
        for (const Arch& arch : archs) {
          Target t;
          t.request = base;
          t.request.arch = arch;
          if (archs.size() > 1 && t.request.keep_dir) {
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
            if (!e.log().empty()) std::cerr << e.log() << (e.log().back() == '\n' ? "" : "\n");
            print_hints(e.log(), t.request,
                        e.compiler_version().rfind("nvcc", 0) == 0 ? Engine::nvcc : Engine::nvrtc);
            if (t.request.keep_dir)
              print_message("kept intermediate files in " + t.request.keep_dir->string());
            throw;
          }
          if (!t.result.log.empty() && !global.json)
            std::cerr << t.result.log << (t.result.log.back() == '\n' ? "" : "\n");
          if (t.result.output == OutputKind::cubin) {
            CubinInfo info =
                read_cubin(std::span(reinterpret_cast<const std::uint8_t*>(t.result.image.data()),
                                     t.result.image.size()));
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
            const Context context(select_device(flags.device));
            const auto module = load_module_memoized(context, t.result.image);
            for (const auto& k : t.kernels)
              t.loaded.push_back(module->resources(k.name, k.demangled));
            t.differences = compare_resources(t.kernels, t.loaded);
          }
          targets.push_back(std::move(t));
        }
        for (const auto& w : cache.warnings()) print_message("warning: " + w);
        if (base.keep_dir) print_message("kept intermediate files in " + base.keep_dir->string());

        if (flags.output) cudatool::write_atomically(*flags.output, targets.front().result.image);

        std::size_t differences = 0;
        for (const auto& t : targets) differences += t.differences.size();
        if (global.json) {
          if (targets.size() == 1) {
            print_json(target_json(targets.front(), flags, cache), kCompileSchemaVersion);
          } else {
            nlohmann::json out = {{"source", base.source_name}};
            nlohmann::json list = nlohmann::json::array();
            for (const auto& t : targets) list.push_back(target_json(t, flags, cache));
            out["targets"] = std::move(list);
            print_json(out, kCompileSchemaVersion);
          }
        } else {
          for (std::size_t i = 0; i < targets.size(); ++i) {
            if (i > 0) std::cout << '\n';
            print_target_text(targets[i], flags);
          }
        }
        if (differences > 0) {
          std::cerr << "cudatool: " << differences
                    << " difference(s) between the CUBIN and the driver\n";
          return ExitStatus::mismatch;
        }
        return ExitStatus::success;
      }};
}

}  // namespace cudatool::app
