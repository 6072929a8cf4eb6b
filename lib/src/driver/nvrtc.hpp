// Internal: NVRTC, the CUDA runtime compiler, opened at run time like the driver: cudatool links no
// CUDA library, so it starts (and explains what is missing) where NVRTC is not installed.
//
// Where it is looked for, in order: the file named by CUDATOOL_LIBNVRTC (that file only:
// tests use it for "NVRTC absent"); $CUDA_HOME/lib64, $CUDA_PATH/lib64 and
// /usr/local/cuda/lib64 (libnvrtc.so.13, then libnvrtc.so); then the loader's search path
// (LD_LIBRARY_PATH, ld.so.cache) for the same two names.
#pragma once

#include <nvrtc.h>

#include <cstdint>
#include <string>
#include <vector>

namespace cudatool::driver::nvrtc {

#define CUDATOOL_NVRTC_FUNCTIONS(X) \
  X(nvrtcVersion)                   \
  X(nvrtcGetErrorString)            \
  X(nvrtcGetNumSupportedArchs)      \
  X(nvrtcGetSupportedArchs)         \
  X(nvrtcCreateProgram)             \
  X(nvrtcDestroyProgram)            \
  X(nvrtcCompileProgram)            \
  X(nvrtcGetProgramLogSize)         \
  X(nvrtcGetProgramLog)             \
  X(nvrtcGetPTXSize)                \
  X(nvrtcGetPTX)                    \
  X(nvrtcGetCUBINSize)              \
  X(nvrtcGetCUBIN)

struct Api {
#define CUDATOOL_NVRTC_MEMBER(name) decltype(&::name) name = nullptr;
  CUDATOOL_NVRTC_FUNCTIONS(CUDATOOL_NVRTC_MEMBER)
#undef CUDATOOL_NVRTC_MEMBER
  std::string library_path;  // the candidate that opened
  int major = 0;
  int minor = 0;
  std::string version() const {
    return std::to_string(major) + "." + std::to_string(minor);
  }
};

// The candidates above, in order (explicit paths first, then bare sonames).
std::vector<std::string> library_candidates();

// The first candidate that exists as a file, without opening it (a stat per candidate),
// or "" when only the loader's search could find one. The compile cache keys on this
// file's identity so that a cache hit never pays for loading NVRTC (~10 ms).
std::string locate_library();

// The loaded library, entry points resolved, once per process. Throws
// LibraryNotFoundError naming what to install when NVRTC is absent or too old.
const Api& api();

// Compute capabilities this NVRTC can target, as 75, 80, ... (nvrtcGetSupportedArchs).
std::vector<int> supported_archs();

// Throws CompileError-free RuntimeError naming `call` and NVRTC's message for a failed
// call (not for a failed compilation: Program::compile returns false for that).
void check(nvrtcResult result, const char* call);

// One NVRTC program: created from source, destroyed with the object. Move-only.
class Program {
 public:
  Program(const std::string& source, const std::string& name);
  Program(Program&& other) noexcept;
  Program& operator=(Program&& other) noexcept;
  Program(const Program&) = delete;
  Program& operator=(const Program&) = delete;
  ~Program();

  // True when the source compiled; false for a compilation error (the log says why).
  // Throws for anything else (an invalid option is a compilation error to NVRTC).
  bool compile(const std::vector<std::string>& options);
  std::string log() const;
  std::string ptx() const;                  // "" when NVRTC produced none
  std::vector<std::uint8_t> cubin() const;  // empty when NVRTC produced none
  nvrtcProgram handle() const { return program_; }

 private:
  void destroy() noexcept;
  nvrtcProgram program_ = nullptr;
};

}  // namespace cudatool::driver::nvrtc
