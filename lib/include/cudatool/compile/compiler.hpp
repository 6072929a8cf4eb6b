// Compiling CUDA C++ to CUBIN or PTX, after PyCUDA's SourceModule, with the engine chosen
// for the file (NVRTC in-process, or nvcc as a separate process), through the in-process
// memo and the on-disk cache (compile_cache.hpp).
//
// The engine, when the request names none, is chosen for the file (engine_choice.hpp: the
// rules, and the retries when the choice was wrong); a request that names its engine is
// taken as it is.
//
// The cache key (cache format 3) covers what the request says and the compilers that may
// run: the format, the requested engine, each engine's identity (real path, size and mtime
// of the NVRTC library and of nvcc, so an upgrade is a new key), CUDA's include directories,
// the architecture, output kind, every option and flag, the source name and the source
// text. The files the source includes are not read to make the key: the entry records
// them (path, size, mtime, ctime, SHA-256), and a hit checks them with a stat each, hashing
// only those whose size, mtime or ctime moved (ccache's manifest idea); a file that changed
// makes the entry stale and the source is compiled again. The record is what the textual
// scan (source_scan.hpp) finds the compiler reads, searched in the compiler's order: the
// project's headers, recursively, and CUDA's headers the source includes; and every other
// place the compiler looks for those names, which must stay as they were (a header created
// earlier on the search path is a miss). An include the scan cannot follow (a macro it
// cannot expand) leaves the compile uncached.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"

namespace cudatool {

class CompileCache;

enum class Engine { nvrtc, nvcc };
enum class OutputKind { cubin, ptx };

std::string_view to_string(Engine e);
std::string_view to_string(OutputKind k);

// Policy apart from the grammar (base/arch.hpp): CUDA 13 compiles for sm_75 and up.
// UsageError `<source> <arch>: compute capability X.Y is not supported by CUDA 13 ...`.
void check_supported(const Arch& arch, std::string_view source);

struct CompileRequest {
  std::string source;                     // the text as given (no NUL or 0xFF byte)
  std::string source_name = "kernel.cu";  // appears in the log's file(line) references
  std::filesystem::path source_dir;       // for "..." includes; "" for the current directory
  // The file itself, "" for stdin. nvcc compiles it where it is, as the user's build does
  // (its own folder first for "..." includes; the names nvcc gives static and anonymous-
  // namespace kernels, __nv_static_<hash>_..., derive from its real path); without it, or
  // with extern_c, nvcc compiles a copy of `source` in a private temporary directory.
  std::filesystem::path source_path;
  Arch arch;
  std::optional<OutputKind> output;  // default: CUBIN for sm_XX, PTX for compute_XX
  std::vector<std::string> defines;  // NAME or NAME=VALUE
  std::vector<std::string> include_dirs;
  std::string std;                                // "", "c++17" or "c++20"
  int maxrregcount = 0;                           // 0: not given
  bool extern_c = true;                           // wrap the source in extern "C" { }
  std::vector<std::string> extra_options;         // passed through to whichever engine runs
  std::vector<std::string> nvrtc_options;         // only when NVRTC runs (-Xnvrtc, env defaults)
  std::vector<std::string> nvcc_options;          // only when nvcc runs (-Xnvcc, env defaults)
  std::vector<std::string> ptxas_options;         // -Xptxas: to ptxas, under either engine
  bool rdc = false;                               // relocatable device code (-rdc=true)
  bool device_debug = false;                      // -G
  bool lineinfo = false;                          // -lineinfo
  bool fast_math = false;                         // --use_fast_math
  std::optional<Engine> engine;                   // nullopt: chosen for the source (see above)
  std::optional<std::filesystem::path> keep_dir;  // write intermediates there
  // How the caller names the request's settings in messages and in engine_reason (the
  // `source` that parse_int takes): cudatool passes its flags ("--arch", "--compiler");
  // nothing here is in the cache key.
  struct Sources {
    std::string arch = "architecture";
    std::string std = "C++ standard";
    std::string engine = "requested engine";
    std::string nvcc_options = "nvcc options";
  } sources;
};

struct CompileResult {
  Arch arch;
  OutputKind output = OutputKind::cubin;
  std::string image;  // the CUBIN bytes or the PTX text
  std::string log;
  std::vector<std::string> options;
  std::string compiler;          // the engine that ran: "nvrtc" or "nvcc"
  std::string engine_reason;     // why that engine (and -rdc, when it was added)
  std::string compiler_version;  // "13.0" (NVRTC) or "13.0.88" (nvcc)
  std::string cache_key;
  std::string cache_path;  // the entry, when the cache was used
  bool cache_hit = false;
  bool memo_hit = false;
  double compile_seconds = 0;         // the compiler's own time; 0 for a hit
  std::vector<std::string> includes;  // the project headers the compiler reads
  std::vector<std::string> kept_files;
};
// Everything but the image.

// The default-flags environment variable of an engine: CUDATOOL_DEFAULT_NVRTC_FLAGS or
// CUDATOOL_DEFAULT_NVCC_FLAGS (the PYCUDA_DEFAULT_NVCC_FLAGS analogue), split on
// whitespace; they come before the options of the command line.
std::string default_flags_variable(Engine engine);
std::vector<std::string> default_flags_from_environment(Engine engine);

// CUDA's include directories, as nvcc has them: <root>/include and <root>/include/cccl where
// they exist, the root found the way NVRTC is (CUDATOOL_LIBNVRTC's toolkit, CUDA_HOME,
// CUDA_PATH, /usr/local/cuda).
std::vector<std::string> toolkit_include_dirs();

// The options `engine` gets (its spelling), in order. For NVRTC they include CUDA's
// include directories.
std::vector<std::string> build_options(const CompileRequest& request, Engine engine);
// The same for the engine choose_engine (engine_choice.hpp) picks.
std::vector<std::string> build_options(const CompileRequest& request);

// The source as compiled: wrapped in extern "C" { } unless !extern_c, with a #line so the
// log's line numbers are the user's.
std::string prepared_source(const CompileRequest& request);
// The project headers the entry records (see above), in discovery order.
std::vector<std::filesystem::path> find_includes(const CompileRequest& request);
// The content-addressed key (64 hex digits). Throws LibraryNotFoundError when no engine
// the request allows can be found.
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
