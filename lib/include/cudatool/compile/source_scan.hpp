// The textual scan of a source that the engine choice (engine_choice.hpp) and the cache
// (the project headers an entry records, compiler.hpp's find_includes) read: its `#include`
// lines resolved in the source's directory, the -I directories and CUDA's include
// directories, recursively through the project's headers; whether it defines `main`; and
// whether its kernels have internal linkage. Textual, not a preprocessor: includes whose name
// comes from a macro, and #if'd-out lines, are taken as written.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace cudatool {

struct CompileRequest;

struct SourceScan {
  std::vector<std::filesystem::path> found;  // the project's headers, in discovery order
  std::vector<std::string> unresolved;       // names found nowhere: host headers or missing ones
  std::vector<std::string> toolkit;          // names found in CUDA's include directories
  bool has_main = false;
  bool static_kernels = false;               // `static __global__` (internal linkage)
  bool anonymous_namespace_kernels = false;  // __global__ in a file with `namespace {`
};

// Scans the request's source and the project headers it includes (read from disk).
SourceScan scan_source(const CompileRequest& request);

}  // namespace cudatool
