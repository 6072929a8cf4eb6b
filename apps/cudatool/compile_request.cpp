// cudatool compile: the flags' checks and the compile request they make (with the -p entry's
// settings, compile_commands.hpp), the target architectures, the source from FILE or stdin.
#include <stdlib.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "compile_command.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/base/file_io.hpp"
#include "cudatool/base/text.hpp"
#include "cudatool/device/selection.hpp"

namespace cudatool::app {
namespace {
namespace fs = std::filesystem;

std::string read_source(const std::string& file) {
  // A file: the one input reader (refuses FIFOs, devices and directories, never blocks).
  if (file != "-") return read_input_file(file, "source");
  std::string data;
  char buffer[65536];
  for (;;) {
    const ReadOutcome got = read_some(STDIN_FILENO, buffer);
    if (got.error != 0)
      throw UsageError("stdin: cannot read: " + std::string(std::strerror(got.error)));
    if (got.bytes == 0) break;
    // The bound every input file has (file_io.hpp): /dev/zero on stdin must not grow memory.
    if (data.size() + got.bytes > kMaxInputFileBytes)
      throw UsageError("stdin: larger than " + std::to_string(kMaxInputFileBytes) + " bytes");
    data.append(buffer, got.bytes);
    // A NUL or 0xFF byte is refused whatever follows (the compile's validation names where):
    // no need to read on (/dev/zero would otherwise run to the bound).
    if (std::memchr(buffer, 0, got.bytes) || std::memchr(buffer, 0xff, got.bytes)) break;
  }
  return data;
}

void check_output_path(const std::string& output) {
  if (output == "-") return;  // standard output
  const fs::path path(output);
  const fs::path dir = path.parent_path().empty() ? fs::path(".") : path.parent_path();
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw UsageError("-o " + output + ": directory " + dir.string() + " does not exist");
  if (fs::is_directory(path, ec)) throw UsageError("-o " + output + ": is a directory");
}

void append(std::vector<std::string>& to, const std::vector<std::string>& values) {
  to.insert(to.end(), values.begin(), values.end());
}

}  // namespace

void check_compile_flags(const CompileFlags& flags) {
  if (flags.file.empty()) throw UsageError("no source given: FILE, or - for stdin");
  if (flags.output) check_output_path(*flags.output);
  if (flags.output && *flags.output == "-" && flags.load)
    throw UsageError(
        "-o -: the image goes to standard output, where --load prints its "
        "report; give -o a file");
  if (flags.compiler == "nvrtc" && !flags.xnvcc.empty())
    throw UsageError("-Xnvcc " + flags.xnvcc.front() +
                     ": an nvcc option, but --compiler nvrtc runs NVRTC");
  if (flags.compiler == "nvcc" && !flags.xnvrtc.empty())
    throw UsageError("-Xnvrtc " + flags.xnvrtc.front() +
                     ": an NVRTC option, but --compiler nvcc runs nvcc");
  if (flags.build_dir && flags.file == "-")
    throw UsageError("-p " + *flags.build_dir + ": needs a FILE (its entry), not stdin");
}

CompileRequest compile_request(const CompileFlags& flags, const ProjectFlags* project) {
  CompileRequest r = project ? project_request(*project) : CompileRequest{};
  r.sources.arch = "--arch";
  r.sources.std = "--std";
  r.sources.engine = "--compiler";
  r.sources.nvcc_options = "-Xnvcc options";
  r.source = read_source(flags.file);
  if (flags.file != "-") {
    r.source_name = flags.file;
    r.source_dir = fs::path(flags.file).parent_path();
    r.source_path = flags.file;
  } else {
    r.source_name = "stdin.cu";
  }
  if (flags.ptx) r.output = OutputKind::ptx;
  if (flags.cubin) r.output = OutputKind::cubin;
  append(r.defines, flags.defines);
  append(r.include_dirs, flags.include_dirs);
  if (!flags.std.empty()) r.std = flags.std;
  if (flags.maxrregcount) r.maxrregcount = *flags.maxrregcount;
  // A file is the translation unit it is; stdin keeps PyCUDA's wrap (snippets).
  r.extern_c = flags.extern_c || (flags.file == "-" && !flags.no_extern_c);
  r.rdc = r.rdc || flags.rdc;
  r.device_debug = r.device_debug || flags.device_debug;
  r.lineinfo = r.lineinfo || flags.lineinfo;
  r.fast_math = r.fast_math || flags.fast_math;
  append(r.ptxas_options, flags.xptxas);
  if (flags.compiler) r.engine = *flags.compiler == "nvcc" ? Engine::nvcc : Engine::nvrtc;
  r.nvrtc_options = default_flags_from_environment(Engine::nvrtc);
  append(r.nvrtc_options, flags.xnvrtc);
  // The environment's defaults, -Xnvcc, then the project's nvcc-only switches
  // (--extended-lambda: they make nvcc the engine).
  std::vector<std::string> nvcc = default_flags_from_environment(Engine::nvcc);
  append(nvcc, flags.xnvcc);
  append(nvcc, r.nvcc_options);
  r.nvcc_options = std::move(nvcc);
  if (r.engine == Engine::nvrtc) r.nvcc_options.clear();
  if (r.engine == Engine::nvcc) r.nvrtc_options.clear();
  return r;
}

std::vector<Arch> target_archs(const CompileFlags& flags, const ProjectFlags* project) {
  std::vector<Arch> archs;
  // `source`: where the target came from, as check_supported names it.
  auto add = [&](const Arch& arch, const std::string& source) {
    check_supported(arch, source);
    for (const auto& a : archs)
      if (a == arch) return;
    archs.push_back(arch);
  };
  if (flags.arch) {
    const std::string& list = *flags.arch;
    for (const std::string& item : split_list(list, "--arch", "sm_80,sm_90")) {
      try {
        add(Arch::parse(item, "--arch"), "--arch");
      } catch (const UsageError& e) {
        if (item == list) throw;
        throw UsageError("--arch " + quote_input(list) + ": entry " + quote_input(item) + ": " +
                         std::string(e.what()).substr(std::string(e.what()).find(": ") + 2));
      }
    }
    return archs;
  }
  if (project && !project->archs.empty()) {
    for (const Arch& a : project->archs) add(a, entry_source(*project) + ": target");
    return archs;
  }
  try {
    const Device device = select_device(flags.device, "--device");
    add(Arch{.code = Arch::Code::sass, .cc = device.compute_capability()}, "--arch");
    return archs;
  } catch (const UsageError&) {
    throw;
  } catch (const Error& e) {
    throw UsageError(std::string("--arch is required where no GPU can be asked (") + e.what() +
                     "); e.g. --arch sm_90");
  }
}

fs::path make_keep_dir() {
  const char* tmp = std::getenv("TMPDIR");
  const std::string dir = tmp && *tmp ? tmp : "/tmp";
  std::string pattern = dir + "/cudatool-keep-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr)
    throw UsageError("--keep: cannot create a directory in " +
                     std::string(tmp && *tmp ? "TMPDIR=" : "") + dir + ": " + std::strerror(errno));
  return pattern;
}

CacheConfig cache_config(const CompileFlags& flags, bool no_cache) {
  return CacheConfig::from_environment(flags.cache_dir, no_cache, "--cache-dir");
}

}  // namespace cudatool::app
