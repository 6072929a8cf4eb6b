// libFuzzer harness for the include scanner (source_scan.hpp): the text of a source and of
// the headers it may include (untrusted: a project's files), over files held in memory. The
// input is split at NUL bytes: the source, then files in a fixed set of places (the
// source's folder, two -I folders, nested folders), so that names resolve, shadow each
// other, include each other in cycles and go through macros. It must not crash, hang or
// grow without bound; every header found is a file that exists, found once; no place is
// both read and merely looked at; and the scan is deterministic.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "cudatool/compile/compiler.hpp"
#include "cudatool/compile/source_scan.hpp"

namespace fs = std::filesystem;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const char* const kPlaces[] = {
      "/p/src/a.h",     "/p/inc/a.h",     "/p/inc2/a.h",  "/p/src/b.h",   "/p/inc/b.h",
      "/p/src/sub/a.h", "/p/inc/sub/c.h", "/p/src/cfg.h", "/p/inc/cfg.h", "/p/inc2/cfg.h"};
  const std::string_view bytes(reinterpret_cast<const char*>(data), size);
  std::map<fs::path, std::string> files;
  std::size_t start = 0, place = 0;
  std::string source;
  for (bool first = true; start <= bytes.size(); first = false) {
    std::size_t end = bytes.find('\0', start);
    if (end == std::string_view::npos) end = bytes.size();
    const std::string text(bytes.substr(start, end - start));
    if (first)
      source = text;
    else if (place < std::size(kPlaces))
      files[kPlaces[place++]] = text;
    start = end + 1;
  }
  cudatool::CompileRequest r;
  r.source = source;
  r.source_dir = "/p/src";
  r.include_dirs = {"/p/inc", "/p/inc2"};
  r.defines = {"FROM_FLAG=\"cfg.h\"", "OTHER=<b.h>"};
  std::size_t reads = 0;
  const cudatool::IncludeReader read = [&](const fs::path& path) -> std::optional<std::string> {
    ++reads;
    const auto it = files.find(path);
    if (it == files.end()) return std::nullopt;
    return it->second;
  };
  const cudatool::SourceScan scan = cudatool::scan_source(r, read);
  std::set<fs::path> found(scan.found.begin(), scan.found.end());
  if (found.size() != scan.found.size()) std::abort();  // each header once
  for (const auto& path : scan.found)
    if (!files.count(path)) std::abort();  // only files that exist
  for (const auto& path : scan.checked)
    if (found.count(path)) std::abort();  // read or looked at, not both
  // Bounded: a few reads per name and place, never a loop.
  if (reads > 100000) std::abort();
  const cudatool::SourceScan again = cudatool::scan_source(r, read);
  if (again.found != scan.found || again.checked != scan.checked ||
      again.complete != scan.complete || again.unresolved != scan.unresolved)
    std::abort();
  return 0;
}
