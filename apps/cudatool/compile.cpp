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
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/units.hpp"
#include "cudatool/binary/cubin.hpp"
#include "cudatool/compile/compile_cache.hpp"
#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/module.hpp"
#include "cudatool/device/context.hpp"
#include "cudatool/device/selection.hpp"
#include "cudatool/occupancy/device_data.hpp"
#include "cudatool/occupancy/occupancy.hpp"
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
  std::optional<int> maxrregcount;
  bool no_extern_c = false;
  bool keep = false;
  std::optional<std::string> cache_dir;
  bool no_cache = false;
  bool load = false;
  std::optional<int> threads;
  std::string compiler = "nvrtc";
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
    data.append(buffer, static_cast<std::size_t>(n));
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

// --arch, or the compute capability of the device --device/CUDA_DEVICE selects.
Arch target_arch(const CompileFlags& flags) {
  if (flags.arch) return Arch::parse(*flags.arch);
  try {
    const Device device = select_device(flags.device);
    const ComputeCapability cc = device.compute_capability();
    return Arch::parse(cc.sm());
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
    print_json(out);
  } else if (flags.cache_stats || (!flags.cache_clear && !flags.cache_trim)) {
    std::cout << "cache " << stats.dir << ": " << stats.entries << " entries, " << stats.bytes
              << " bytes (bound " << stats.max_bytes << " bytes)\n";
  }
  return 0;
}

std::string describe_kernel(const KernelResources& k) {
  return k.demangled == k.name ? k.name : k.demangled + " [" + k.name + "]";
}

}  // namespace

Command add_compile(CLI::App& root, GlobalOptions& global) {
  auto* sub = root.add_subcommand(
      "compile", "Compile CUDA C++ with NVRTC (cached) and report each kernel's resources");
  auto f = std::make_shared<CompileFlags>();
  add_json_flag(*sub, global);
  sub->add_option("file", f->file, "Source file, or - for stdin");
  sub->add_option("--arch,-a", f->arch,
                  "Target: sm_XX (CUBIN) or compute_XX (PTX); default: the device's");
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
  sub->add_option("--std", f->std, "C++ dialect")->check(CLI::IsMember({"c++17", "c++20"}));
  sub->add_option("--maxrregcount", f->maxrregcount, "Registers per thread at most (1-255)")
      ->check(CLI::Range(1, 255));
  sub->add_flag("--no-extern-c", f->no_extern_c, "Do not wrap the source in extern \"C\" { }");
  sub->add_flag("--keep", f->keep, "Keep the intermediate files (compiles afresh) and say where");
  sub->add_option("--cache-dir", f->cache_dir,
                  "Cache directory (default: CUDATOOL_CACHE_DIR, "
                  "$XDG_CACHE_HOME/cudatool, ~/.cache/cudatool)");
  sub->add_flag("--no-cache", f->no_cache, "Do not use the on-disk cache");
  sub->add_flag("--load", f->load,
                "Load the module on the GPU and check the offline resources against the "
                "driver's (exit 8 on any difference)");
  sub->add_option("--threads", f->threads, "Add each kernel's occupancy at this block size")
      ->check(CLI::Range(1, 1 << 20));
  sub->add_option("--compiler", f->compiler, "Engine: nvrtc (in-process) or nvcc")
      ->check(CLI::IsMember({"nvrtc", "nvcc"}));
  sub->add_option("--device,-d", f->device,
                  "Device for the default --arch and for --load (ordinal, PCI bus id, UUID)");
  sub->add_flag("--cache-stats", f->cache_stats, "Print the cache's size and entries, and exit");
  sub->add_flag("--cache-clear", f->cache_clear, "Remove every cache entry, and exit");
  sub->add_option("--cache-trim", f->cache_trim,
                  "Remove the oldest entries down to SIZE (bytes, or K, M, G), and exit");

  return {
      sub, [f, &global]() -> ExitStatus {
        const CompileFlags& flags = *f;
        if (flags.cache_stats || flags.cache_clear || flags.cache_trim) {
          if (!flags.file.empty())
            throw UsageError("--cache-stats, --cache-clear and --cache-trim take no FILE");
          run_cache_command(flags, global);
          return ExitStatus::success;
        }
        if (flags.file.empty()) throw UsageError("no source given: FILE, or - for stdin");
        if (flags.output) check_output_path(*flags.output);

        CompileRequest request;
        request.source = read_source(flags.file);
        if (flags.file != "-") {
          request.source_name = flags.file;
          request.source_dir = fs::path(flags.file).parent_path();
        } else {
          request.source_name = "stdin.cu";
        }
        request.arch = target_arch(flags);
        if (flags.ptx) request.output = OutputKind::ptx;
        if (flags.cubin) request.output = OutputKind::cubin;
        request.defines = flags.defines;
        request.include_dirs = flags.include_dirs;
        request.std = flags.std;
        request.maxrregcount = flags.maxrregcount.value_or(0);
        request.extern_c = !flags.no_extern_c;
        request.engine = flags.compiler == "nvcc" ? Engine::nvcc : Engine::nvrtc;
        request.extra_options = default_flags_from_environment(request.engine);
        const OutputKind kind =
            request.output.value_or(request.arch.real ? OutputKind::cubin : OutputKind::ptx);
        if ((flags.threads || flags.load) && kind != OutputKind::cubin)
          throw UsageError(std::string(flags.load ? "--load" : "--threads") +
                           " needs a CUBIN (an sm_XX target, without --ptx)");
        std::optional<DeviceData> devdata;
        if (flags.threads) devdata.emplace(request.arch.str());

        if (flags.keep) {
          const char* tmp = std::getenv("TMPDIR");
          std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/cudatool-keep-XXXXXX";
          if (::mkdtemp(pattern.data()) == nullptr)
            throw RuntimeError("--keep: cannot create a directory: " +
                               std::string(std::strerror(errno)));
          request.keep_dir = pattern;
        }

        CompileCache cache(CacheConfig::from_environment(flags.cache_dir, flags.no_cache));
        CompileResult result;
        try {
          result = compile(request, &cache);
        } catch (const CompileError& e) {
          for (const auto& w : cache.warnings()) std::cerr << "cudatool: warning: " << w << '\n';
          if (!e.log().empty()) std::cerr << e.log() << (e.log().back() == '\n' ? "" : "\n");
          if (request.keep_dir)
            std::cerr << "cudatool: kept intermediate files in " << request.keep_dir->string()
                      << '\n';
          throw;
        }
        for (const auto& w : cache.warnings()) std::cerr << "cudatool: warning: " << w << '\n';
        if (!result.log.empty() && !global.json)
          std::cerr << result.log << (result.log.back() == '\n' ? "" : "\n");
        if (request.keep_dir)
          std::cerr << "cudatool: kept intermediate files in " << request.keep_dir->string()
                    << '\n';

        std::vector<KernelResources> kernels;
        if (result.output == OutputKind::cubin)
          kernels = read_cubin(std::span(reinterpret_cast<const std::uint8_t*>(result.image.data()),
                                         result.image.size()))
                        .kernels;

        // Occupancy per kernel at --threads; nullopt where the block cannot launch.
        std::vector<std::optional<OccupancyRecord>> occupancy;
        std::vector<std::string> occupancy_notes;
        if (flags.threads) {
          for (const auto& k : kernels) {
            if (*flags.threads > k.max_threads_per_block) {
              occupancy.emplace_back();
              occupancy_notes.push_back(std::to_string(*flags.threads) +
                                        " threads exceed this kernel's max_threads_per_block " +
                                        std::to_string(k.max_threads_per_block));
              continue;
            }
            occupancy.emplace_back(OccupancyRecord(*devdata, *flags.threads,
                                                   static_cast<std::size_t>(k.shared_size_bytes),
                                                   k.num_regs, std::max(1, k.num_barriers)));
            occupancy_notes.emplace_back();
          }
        }

        std::vector<KernelResources> loaded;
        std::vector<ResourceDifference> differences;
        if (flags.load) {
          const Context context(select_device(flags.device));
          const auto module = load_module_memoized(context, result.image);
          for (const auto& k : kernels) loaded.push_back(module->resources(k.name, k.demangled));
          differences = compare_resources(kernels, loaded);
        }

        if (flags.output) cudatool::write_atomically(*flags.output, result.image);

        if (global.json) {
          nlohmann::json out = result;
          out["source"] = request.source_name;
          if (flags.output) out["output_path"] = *flags.output;
          out["cache"] = {{"enabled", cache.enabled()},
                          {"dir", cache.config().dir.string()},
                          {"hit", result.cache_hit}};
          if (request.keep_dir) out["kept_dir"] = request.keep_dir->string();
          nlohmann::json list = nlohmann::json::array();
          for (std::size_t i = 0; i < kernels.size(); ++i) {
            nlohmann::json k = kernels[i];
            if (flags.threads) {
              if (occupancy[i])
                k["occupancy"] = *occupancy[i];
              else
                k["occupancy"] = {{"threads", *flags.threads}, {"error", occupancy_notes[i]}};
            }
            if (flags.load) k["loaded"] = loaded[i];
            list.push_back(std::move(k));
          }
          out["kernels"] = std::move(list);
          if (flags.load) out["differences"] = differences;
          print_json(out);
        } else {
          std::cout << request.source_name << " -> " << result.arch.str() << ' '
                    << to_string(result.output) << ", " << result.image.size() << " bytes";
          if (flags.output) std::cout << " in " << *flags.output;
          std::cout << " (" << result.compiler << ' ' << result.compiler_version << ", "
                    << (result.memo_hit    ? "memo hit"
                        : result.cache_hit ? "cache hit"
                                           : "compiled in " +
                                                 std::to_string(static_cast<int>(
                                                     result.compile_seconds * 1000 + 0.5)) +
                                                 " ms")
                    << ")\n";
          if (!kernels.empty()) {
            std::size_t width = 6;
            for (const auto& k : kernels) width = std::max(width, describe_kernel(k).size());
            std::cout << pad("kernel", width) << "  num_regs  shared_size_bytes  local_size_bytes"
                      << "  const_size_bytes  max_threads_per_block";
            if (flags.threads) std::cout << "  occupancy@" << *flags.threads;
            std::cout << '\n';
            auto column = [](long long v, std::size_t w) {
              std::string s = std::to_string(v);
              return std::string(w > s.size() ? w - s.size() : 0, ' ') + s;
            };
            for (std::size_t i = 0; i < kernels.size(); ++i) {
              const auto& k = kernels[i];
              std::cout << pad(describe_kernel(k), width) << "  " << column(k.num_regs, 8) << "  "
                        << column(k.shared_size_bytes, 17) << "  " << column(k.local_size_bytes, 16)
                        << "  " << column(k.const_size_bytes, 16) << "  "
                        << column(k.max_threads_per_block, 21);
              if (flags.threads) {
                if (occupancy[i]) {
                  std::cout << "  " << static_cast<int>(occupancy[i]->occupancy * 100 + 0.5)
                            << "% (" << occupancy[i]->tb_per_mp << " blocks/SM, "
                            << occupancy[i]->limited_by << ")";
                } else {
                  std::cout << "  - (" << occupancy_notes[i] << ")";
                }
              }
              std::cout << '\n';
            }
          }
          if (flags.load) {
            if (differences.empty()) {
              std::cout << "loaded on device: all " << kernels.size()
                        << " kernels match the driver's attributes\n";
            }
            for (const auto& d : differences)
              std::cout << "MISMATCH " << d.kernel << ' ' << d.attribute << ": cubin " << d.offline
                        << ", driver " << d.loaded << '\n';
          }
        }
        if (!differences.empty()) {
          std::cerr << "cudatool: " << differences.size()
                    << " difference(s) between the CUBIN and the driver\n";
          return ExitStatus::mismatch;
        }
        return ExitStatus::success;
      }};
}

}  // namespace cudatool::app
