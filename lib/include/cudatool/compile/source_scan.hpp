// The textual scan of a source that the engine choice (engine_choice.hpp) and the cache
// (the headers an entry records, compiler.hpp's find_includes) read: its `#include` lines
// resolved as the compiler resolves them (a "..." name beside the including file first, then
// the source's directory, the -I directories and CUDA's include directories, in that order),
// recursively through the project's headers; whether it defines `main`; and whether its
// kernels have internal linkage. Textual, not a preprocessor: #if'd-out lines are taken as
// written, and an include through a macro (`#define CFG "cfg.h"` / `#include CFG`) takes
// every header name the macro is defined as anywhere in the files (or by a -D). An include
// the scan cannot work out (a function-like macro, an unknown one) makes it incomplete: the
// cache then keeps no entry for the compile.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cudatool {

struct CompileRequest;

struct SourceScan {
  std::vector<std::filesystem::path> found;  // the project's headers read, in discovery order
  // Every other place the compiler looks for those names, and CUDA's headers the source
  // includes: a file that appears, changes or goes there may change what is compiled.
  std::vector<std::filesystem::path> checked;
  std::vector<std::string> unresolved;  // names found nowhere: host headers or missing ones
  std::vector<std::string> toolkit;     // names found in CUDA's include directories
  bool complete = true;                 // false: an include the scan could not follow
  bool has_main = false;
  bool static_kernels = false;               // `static __global__` (internal linkage)
  bool anonymous_namespace_kernels = false;  // __global__ in a file with `namespace {`
};

inline constexpr int kMaxIncludeDepth = 64;
inline constexpr std::size_t kMaxScannedFiles = 10000;

// A file's text, or nullopt where there is no regular file: the scan's one access to the
// file system (a fuzz harness gives it files in memory).
using IncludeReader = std::function<std::optional<std::string>(const std::filesystem::path&)>;

// Scans the request's source and the project headers it includes (read from disk, or
// through `read`).
SourceScan scan_source(const CompileRequest& request);
SourceScan scan_source(const CompileRequest& request, const IncludeReader& read);

namespace detail {

struct IncludeDirective {
  std::string name;  // the header name; "" for one given by a macro
  bool quoted = false;
  std::string macro;  // the macro's name (`#include CFG`); both "": a form not followed
};
// `#define NAME "x"`, `#define NAME <x>` or `#define NAME OTHER`.
struct IncludeDefinition {
  std::string name;
  std::string header;  // "" where the value is another macro's name
  bool quoted = false;
  std::string other;
};
struct IncludeDirectives {
  std::vector<IncludeDirective> includes;      // in order
  std::vector<IncludeDefinition> definitions;  // the ones that may name a header
};
// The include and define lines of one file's text (any bytes).
IncludeDirectives include_directives(std::string_view text);

}  // namespace detail
}  // namespace cudatool
