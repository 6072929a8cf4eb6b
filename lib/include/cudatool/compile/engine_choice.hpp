// Which engine compiles a request, and what to do when it fails: pure rules over the request
// and its source scan (source_scan.hpp), apart from the engines that run (compiler.hpp).
//
// The engine, when the request names none: the figures must be what the user's own build
// gets, so
//   - a source with host code (a `main`, a header NVRTC has not got such as <cstdio> or
//     cuda_runtime.h, an unannotated function) is compiled by nvcc (`-cubin`, device code
//     only): only nvcc builds such a file;
//   - a source that includes CUB or Thrust is compiled by nvcc: CCCL's algorithms take other
//     code paths under NVRTC (__CUDACC_RTC__), so NVRTC's registers can differ from those of
//     the nvcc build that such a file normally gets (90 against 72 has been seen for a CUB
//     radix sort); asking for NVRTC reports NVRTC's own, what a JIT user gets;
//   - kernels whose names nvcc derives from the file's path (an anonymous namespace, static
//     __global__ under -rdc), and nvcc options NVRTC has no equivalent for, also get nvcc;
//   - anything else (kernels, cooperative groups, libcu++, the project's headers) is
//     compiled by NVRTC, which gives nvcc's figures for such code (tests/data/compile/real
//     is checked kernel by kernel against `nvcc -cubin -Xptxas -v`) in a fraction of the
//     time.
// The scan that decides is textual; when it is wrong and NVRTC rejects the file as host
// code, nvcc is run instead. A file whose device-side launches or extern __device__
// functions need relocatable device code, compiled without -rdc, is compiled again with -rdc
// (what any build of it must use); the result says so in `engine_reason`. A request that
// names its engine is taken as it is: no fallback to nvcc and no -rdc added
// (diagnose_failure says what went wrong).
#pragma once

#include <string>
#include <vector>

#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/source_scan.hpp"

namespace cudatool {

// The engine a request gets (its own, or the choice described above) and why.
struct EngineChoice {
  Engine engine = Engine::nvrtc;
  std::string reason;
};
EngineChoice choose_engine(const CompileRequest& request, const SourceScan& scan);
// The same after scanning the request's source.
EngineChoice choose_engine(const CompileRequest& request);

// What to do after `engine` failed to compile `request` with `log`: nothing (the failure
// stands), nvcc instead of NVRTC (NVRTC rejected host code the scan did not see), or the same
// again with -rdc (device-side launches need relocatable device code). Only for requests
// that name no engine. Whether nvcc exists is the caller's question.
enum class Retry { none, with_nvcc, with_rdc };
Retry retry_after_failure(const CompileRequest& request, Engine engine, const std::string& log);
// The phrases the rules match in a compiler's log.
bool log_needs_rdc(const std::string& log);
bool log_rejects_host_code(const std::string& log);

// What a failed compilation's log says went wrong, for the caller to tell the user how to
// fix it (cudatool's hints name its flags).
struct CompileFailureCause {
  enum class Kind {
    nvrtc_missing_header,  // NVRTC cannot open `header` (a host header, or not on the path)
    nvrtc_host_functions,  // NVRTC met host functions
    missing_header,        // nvcc (or its host compiler) cannot find a header
    extern_c_wrap,         // the request's extern "C" wrap holds C++ templates or headers
    extern_c_block,        // an extern "C" block of the source itself does
    needs_rdc,             // device-side launches need relocatable device code
  };
  Kind kind;
  std::string header;  // nvrtc_missing_header: the name as the log gives it
};
std::vector<CompileFailureCause> diagnose_failure(const std::string& log,
                                                  const CompileRequest& request, Engine engine);

}  // namespace cudatool
