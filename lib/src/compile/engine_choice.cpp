#include "cudatool/compile/engine_choice.hpp"

#include <initializer_list>

namespace cudatool {
namespace {

// CUDA headers that exist in $CUDA/include but are host API: NVRTC cannot compile them.
bool host_toolkit_header(const std::string& name) {
  static const char* const host[] = {"cuda_runtime.h",
                                     "cuda_runtime_api.h",
                                     "cuda.h",
                                     "cudaProfiler.h",
                                     "cuda_profiler_api.h",
                                     "nvrtc.h",
                                     "cublas_v2.h",
                                     "cublas.h",
                                     "cufft.h",
                                     "curand.h",
                                     "cusparse.h",
                                     "cusolverDn.h",
                                     "cuda_gl_interop.h",
                                     "nvml.h",
                                     "nvtx3/nvToolsExt.h"};
  for (const char* h : host)
    if (name == h) return true;
  return name.rfind("thrust/", 0) == 0;
}

// nvcc's language switches NVRTC 13 has no option for (it refuses --extended-lambda and
// --expt-relaxed-constexpr in every spelling as "unrecognized option"; its documented
// options have neither): a file built with them compiles under nvcc only.
bool nvcc_only_language_option(const std::string& option) {
  for (const char* name :
       {"--extended-lambda", "-extended-lambda", "--expt-extended-lambda", "-expt-extended-lambda",
        "--expt-relaxed-constexpr", "-expt-relaxed-constexpr"})
    if (option == name) return true;
  return false;
}

}  // namespace

EngineChoice choose_engine(const CompileRequest& r, const SourceScan& scan) {
  if (r.engine) return {*r.engine, r.sources.engine + " " + std::string(to_string(*r.engine))};
  for (const auto& option : r.nvcc_options)
    if (nvcc_only_language_option(option))
      return {Engine::nvcc, option + ": an nvcc option NVRTC has no equivalent for"};
  if (!r.nvcc_options.empty() && r.nvrtc_options.empty())
    return {Engine::nvcc, r.sources.nvcc_options + " given"};
  for (const auto& name : scan.unresolved)
    return {Engine::nvcc, "host code: <" + name + "> is a host header NVRTC has not got"};
  for (const auto& name : scan.toolkit)
    if (host_toolkit_header(name)) return {Engine::nvcc, "host code: <" + name + "> is host API"};
  if (scan.has_main) return {Engine::nvcc, "host code: the file defines main"};
  // Kernels with internal linkage: nvcc names them from the file's real path
  // (_GLOBAL__N__<hash>_..., and __nv_static_<hash>_... under -rdc); NVRTC names them
  // otherwise, so only nvcc gives the names the user's build has.
  if (scan.anonymous_namespace_kernels)
    return {Engine::nvcc,
            "kernels in an anonymous namespace: their names come from the file's path under "
            "nvcc, not under NVRTC"};
  if (r.rdc && scan.static_kernels)
    return {Engine::nvcc,
            "static __global__ under -rdc: nvcc names it __nv_static_<hash>_... from the "
            "file's path, NVRTC does not"};
  for (const auto& name : scan.toolkit)
    if (name.rfind("cub/", 0) == 0)
      return {Engine::nvcc,
              "<" + name + ">: CUB's code under NVRTC can differ from the nvcc build's"};
  return {Engine::nvrtc, "device code only"};
}

EngineChoice choose_engine(const CompileRequest& request) {
  return choose_engine(request, scan_source(request));
}

namespace {

bool log_says(const std::string& log, std::initializer_list<const char*> needles) {
  for (const char* n : needles)
    if (log.find(n) != std::string::npos) return true;
  return false;
}

}  // namespace

bool log_needs_rdc(const std::string& log) {
  return log_says(log, {"requires separate compilation mode",
                        "could not be processed as the required runtime APIs are not declared",
                        "Unresolved extern function", "unresolved extern function"});
}

bool log_rejects_host_code(const std::string& log) {
  return log_says(log, {"host functions are not allowed in JIT mode", "cannot open source file"});
}

Retry retry_after_failure(const CompileRequest& r, Engine engine, const std::string& log) {
  if (r.engine) return Retry::none;
  if (engine == Engine::nvrtc && log_rejects_host_code(log)) return Retry::with_nvcc;
  if (!r.rdc && log_needs_rdc(log)) return Retry::with_rdc;
  return Retry::none;
}

std::vector<CompileFailureCause> diagnose_failure(const std::string& log, const CompileRequest& r,
                                                  Engine engine) {
  using Kind = CompileFailureCause::Kind;
  std::vector<CompileFailureCause> causes;
  const std::string open_marker = "cannot open source file \"";
  if (engine == Engine::nvrtc) {
    if (const auto pos = log.find(open_marker); pos != std::string::npos) {
      const auto start = pos + open_marker.size();
      causes.push_back(
          {Kind::nvrtc_missing_header, log.substr(start, log.find('"', start) - start)});
    }
    if (log.find("host functions are not allowed in JIT mode") != std::string::npos)
      causes.push_back({Kind::nvrtc_host_functions, ""});
  } else if (log.find(open_marker) != std::string::npos ||
             (log.find(": fatal error: ") != std::string::npos &&
              log.find("No such file or directory") != std::string::npos)) {
    causes.push_back({Kind::missing_header, ""});
  }
  if (log.find("may not have extern \"C\" linkage") != std::string::npos)
    causes.push_back({r.extern_c ? Kind::extern_c_wrap : Kind::extern_c_block, ""});
  if (!r.rdc && log_needs_rdc(log)) causes.push_back({Kind::needs_rdc, ""});
  return causes;
}

}  // namespace cudatool
