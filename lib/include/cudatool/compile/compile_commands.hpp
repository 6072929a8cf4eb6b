// A project's own flags for one source, from the compile_commands.json of its build
// directory (CMake's CMAKE_EXPORT_COMPILE_COMMANDS, for CUDA sources too; `-p BUILD_DIR`, as
// clang's tools take it). The entry's command line is read as nvcc's: include directories
// (-I, -isystem, and those in an --options-file, as CMake writes them), defines, the C++
// standard, the architectures (-arch, --generate-code/-gencode code=sm_XX), -rdc / -dc, -G,
// -lineinfo, --use_fast_math, -Xptxas, --maxrregcount and nvcc's language switches
// (--expt-relaxed-constexpr, --extended-lambda: NVRTC has no equivalent, so they make
// nvcc the engine). Everything else (host compiler flags, -O levels, outputs) does not
// change the device code's resources and is left out.
//
// The database is input, never a script: nvcc hands -D values, include directories (with
// the entry's `directory` they are made absolute against) and -Xptxas values to /bin/sh
// (process.hpp), so a value that a shell would act on is refused, naming the entry and the
// value (InputError), whichever engine would compile the file.
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cudatool/base/arch.hpp"
#include "cudatool/compile/compiler.hpp"

namespace cudatool {

struct ProjectFlags {
  std::string file;       // the entry's source, as an absolute path
  std::string directory;  // the entry's working directory
  std::string database;   // the compile_commands.json that holds the entry
  std::vector<std::string> include_dirs;
  std::vector<std::string> defines;
  std::string std;  // "c++17", or "" when the entry gives none
  // The machine-code targets (sm_80, sm_90a; -arch=compute_80 as sm_80) in the entry's order,
  // without duplicates.
  std::vector<Arch> archs;
  bool rdc = false;
  bool device_debug = false;
  bool lineinfo = false;
  bool fast_math = false;
  std::vector<std::string> ptxas_options;
  std::vector<std::string> nvcc_language_options;  // nvcc only (see above)
  int maxrregcount = 0;
};

// The flags of `source` in `build_dir`/compile_commands.json. Throws UsageError when the
// file is missing (naming the directory as `build_dir_source` says: cudatool's "-p"), has
// no entry for `source`, or names a target outside the architecture grammar (base/arch.hpp),
// naming the option and the entry; InputError when it is not JSON (or not a list of entries).
ProjectFlags project_flags(const std::filesystem::path& build_dir,
                           const std::filesystem::path& source,
                           std::string_view build_dir_source = "build directory");

// The entry as errors name it: `<database>: the entry for "<file>"`.
std::string entry_source(const ProjectFlags& flags);

// A request with the entry's settings (include directories, defines, the C++ standard, -rdc,
// -G, -lineinfo, --use_fast_math, -Xptxas, --maxrregcount; its nvcc language switches as
// nvcc options); the source, the architecture and the engine are the caller's to set.
CompileRequest project_request(const ProjectFlags& flags);

// A command line split as a POSIX shell would (quotes and backslashes), as
// compile_commands.json's "command" is written.
std::vector<std::string> split_command_line(const std::string& command);

}  // namespace cudatool
