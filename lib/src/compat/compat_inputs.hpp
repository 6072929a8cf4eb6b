// What `compat` reads, from the paths it is given: files, the files of directories (walked),
// wheels' members and Python environments' site-packages; and the packages they belong to
// (a .dist-info's RECORD, or a wheel's name). Internal to compat/.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cudatool/compat/compat.hpp"

namespace cudatool::detail {

struct Input {
  std::string path;        // the file (or the wheel)
  std::string member;      // a wheel's member, "" otherwise
  std::string shown;       // path, or "wheel!member"
  std::uint64_t size = 0;  // its size (a member's uncompressed size)
  bool named = false;      // given by the user itself, not found by a walk
  std::size_t package = SIZE_MAX;
};

struct Inputs {
  std::vector<Input> files;
  std::vector<CompatPackage> packages;
  // Per package: the names of the files it has that are CUDA runtimes (libcudart.so.12).
  std::vector<std::vector<std::string>> runtime_files;
};

// Expands the request's paths. Throws UsageError for a path that does not exist, or a
// wheel that cannot be read.
Inputs expand_inputs(const std::vector<std::string>& paths);

// Whether a file's name is one a CUDA binary may have: a shared library (.so, .so.N), an
// object or archive (.o, .a), a CUBIN or fatbin (.cubin, .fatbin), or none of the names of
// source, text and data files Python packages are made of (.py, .pyi, .pyc, .h, .txt, .json,
// ...) where it is executable.
bool may_hold_cuda_code(const std::string& name, bool executable);

// The entries of a .dist-info's RECORD (CSV: path,hash,size): the paths, as written.
std::vector<std::string> record_paths(std::string_view record);

}  // namespace cudatool::detail
