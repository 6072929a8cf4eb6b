// Compiling CUDA C++ to CUBIN or PTX, after PyCUDA's SourceModule: NVRTC in-process by
// default (nvrtc.hpp), nvcc as a separate process on request; through the in-process memo
// and the on-disk cache (compile_cache.hpp).
//
// What the cache key covers: the engine, the compiler's identity (the NVRTC library or
// nvcc executable that would run: its real path, size and modification time, so that an
// upgrade or a different toolkit is a different key; the version string itself would cost
// loading NVRTC on every hit), the architecture, the output kind, every option (defaults
// from the environment included), the source name, the source as compiled (after the
// extern "C" wrapping), and every file the source #includes that cudatool can find: each
// `#include "..."` or `#include <...>` line, found by a textual scan, looked up as the
// compiler would (the including file's directory for "...", then -I directories, then the
// source's directory), hashed by path and content, recursively. Not covered: headers the
// scan cannot resolve (the CUDA toolkit's and NVRTC's built-in headers, which belong to
// the compiler identity) and includes whose name comes from a macro.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

class CompileCache;

enum class Engine { nvrtc, nvcc };
enum class OutputKind { cubin, ptx };

std::string_view to_string(Engine e);
std::string_view to_string(OutputKind k);

// sm_XX (real, CUBIN) or compute_XX (virtual, PTX only), with optional a/f suffix.
struct Arch {
  bool real = true;
  int cc = 0;          // 90 for sm_90
  std::string suffix;  // "", "a" or "f"
  std::string str() const { return (real ? "sm_" : "compute_") + std::to_string(cc) + suffix; }
  // Throws UsageError for garbage, or for a compute capability below 7.5 (CUDA 13's oldest).
  static Arch parse(std::string_view text);
};

struct CompileRequest {
  std::string source;                     // the text as given
  std::string source_name = "kernel.cu";  // appears in the log's file(line) references
  std::filesystem::path source_dir;       // for "..." includes; "" for the current directory
  Arch arch;
  std::optional<OutputKind> output;  // default: CUBIN for sm_XX, PTX for compute_XX
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  std::vector<std::string> include_dirs;
  std::string std;                         // "", "c++17" or "c++20"
  int maxrregcount = 0;                    // 0: not given
  bool extern_c = true;                    // wrap the source in extern "C" { }
  std::vector<std::string> extra_options;  // passed through (default flags from the env)
  Engine engine = Engine::nvrtc;
  std::optional<std::filesystem::path> keep_dir;  // write intermediates there
};

struct CompileResult {
  Arch arch;
  OutputKind output = OutputKind::cubin;
  std::string image;  // the CUBIN bytes or the PTX text
  std::string log;
  std::vector<std::string> options;
  std::string compiler;          // "nvrtc" or "nvcc"
  std::string compiler_version;  // "13.0" (NVRTC) or "13.0.88" (nvcc)
  std::string cache_key;
  std::string cache_path;  // the entry, when the cache was used
  bool cache_hit = false;
  bool memo_hit = false;
  double compile_seconds = 0;         // the compiler's own time; 0 for a hit
  std::vector<std::string> includes;  // files hashed into the key
  std::vector<std::string> kept_files;
};
// Everything but the image.
void to_json(nlohmann::json& j, const CompileResult& r);

// The default-flags environment variable of an engine: CUDATOOL_DEFAULT_NVRTC_FLAGS or
// CUDATOOL_DEFAULT_NVCC_FLAGS (the PYCUDA_DEFAULT_NVCC_FLAGS analogue), split on
// whitespace; they come before the options of the command line.
std::string default_flags_variable(Engine engine);
std::vector<std::string> default_flags_from_environment(Engine engine);

// The options the engine gets (NVRTC or nvcc spelling), in order.
std::vector<std::string> build_options(const CompileRequest& request);
// The source as compiled: wrapped in extern "C" { } unless !extern_c, with a #line so the
// log's line numbers are the user's.
std::string prepared_source(const CompileRequest& request);
// The files the key covers (see above), as absolute-or-given paths, in discovery order.
std::vector<std::filesystem::path> find_includes(const CompileRequest& request);
// The content-addressed key (64 hex digits). Throws LibraryNotFoundError when the engine
// cannot be found.
std::string cache_key(const CompileRequest& request);

// Compiles through the in-process memo and `cache` (nullptr or disabled: no disk cache).
// Throws UsageError for bad requests, LibraryNotFoundError without NVRTC/nvcc,
// CompileError (log, options, compiler version) when the source does not compile.
CompileResult compile(const CompileRequest& request, CompileCache* cache);
// The same without memo or cache.
CompileResult compile_uncached(const CompileRequest& request);
// Forgets the in-process memo.
void clear_compile_memo();
std::size_t compile_memo_size();

}  // namespace cudatool
