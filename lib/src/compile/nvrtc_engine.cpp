// The NVRTC engine: the prepared source compiled in-process (driver/nvrtc.hpp), and with a
// keep_dir its intermediate files (prepared source, options, log, PTX, CUBIN) written there.
#include <dlfcn.h>

#include <algorithm>
#include <chrono>

#include "compile/engines.hpp"
#include "cudatool/base/error.hpp"
#include "cudatool/compile/process.hpp"
#include "driver/nvrtc.hpp"

namespace cudatool::detail {

std::string nvrtc_library_file() {
  std::string path = driver::nvrtc::locate_library();
  if (!path.empty()) return path;
  const driver::nvrtc::Api& api = driver::nvrtc::api();  // throws LibraryNotFoundError when absent
  Dl_info info{};
  if (::dladdr(reinterpret_cast<void*>(api.nvrtcVersion), &info) != 0 && info.dli_fname)
    return info.dli_fname;
  return api.library_path;
}

CompileResult compile_nvrtc(const CompileRequest& r) {
  const driver::nvrtc::Api& api = driver::nvrtc::api();
  const Arch target = target_of(r);
  const auto supported = driver::nvrtc::supported_archs();
  if (std::find(supported.begin(), supported.end(), target.number()) == supported.end()) {
    std::string list;
    for (int cc : supported)
      list += (list.empty() ? "" : ", ") + std::string("sm_") + std::to_string(cc);
    throw UsageError(r.sources.arch + " " + r.arch.str() + ": NVRTC " + api.version() +
                     " cannot target it (it supports " + list + ")");
  }
  CompileResult result;
  result.arch = r.arch;
  result.output = output_of(r);
  result.compiler = "nvrtc";
  result.compiler_version = api.version();
  result.options = build_options(r, Engine::nvrtc);
  const std::string source = prepared_source(r);
  driver::nvrtc::Program program(source, r.source_name);
  const auto start = std::chrono::steady_clock::now();
  const bool ok = program.compile(result.options);
  result.compile_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  result.log = cap_compiler_output(program.log());
  if (r.keep_dir) {
    const std::string stem = stem_of(r.source_name);
    auto keep = [&](const std::string& name, std::string_view data) {
      write_intermediate(*r.keep_dir / name, data);
      result.kept_files.push_back((*r.keep_dir / name).string());
    };
    keep(stem + ".prepared.cu", source);
    std::string options;
    for (const auto& o : result.options) options += o + "\n";
    keep(stem + ".options", options);
    keep(stem + ".log", result.log);
    if (ok) {
      if (const std::string ptx = program.ptx(); !ptx.empty()) keep(stem + ".ptx", ptx);
      if (const auto cubin = program.cubin(); !cubin.empty())
        keep(stem + ".cubin",
             std::string_view(reinterpret_cast<const char*>(cubin.data()), cubin.size()));
    }
  }
  if (!ok) throw_compile_error(r, result.log, result.options, "NVRTC " + api.version());
  if (result.output == OutputKind::cubin) {
    const auto cubin = program.cubin();
    result.image.assign(reinterpret_cast<const char*>(cubin.data()), cubin.size());
  } else {
    result.image = program.ptx();
  }
  if (result.image.empty())
    throw LibraryNotFoundError("NVRTC " + api.version() + " (" + api.library_path +
                                   ") produced no " + std::string(to_string(result.output)) +
                                   " for " + r.source_name + ": not a working NVRTC",
                               "libnvrtc.so.13");
  return result;
}

}  // namespace cudatool::detail
