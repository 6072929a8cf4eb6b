#include "driver/dynamic_library.hpp"

#include <dlfcn.h>
#include <sys/stat.h>

#include <utility>

#include "cudatool/base/error.hpp"
#include "cudatool/base/text.hpp"

namespace cudatool {

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates,
                                          const std::string& what) {
  std::string reasons;
  for (const auto& candidate : candidates) {
    // A path (CUDATOOL_LIBCUDA=...) must name a regular file: dlopen on a FIFO would wait
    // for a writer forever, on /dev/zero read without end.
    if (candidate.find('/') != std::string::npos) {
      struct stat st {};
      if (::stat(candidate.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
        if (!reasons.empty()) reasons += "; ";
        reasons += quote_input(candidate) + ": not a regular file";
        continue;
      }
    }
    if (void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      DynamicLibrary lib;
      lib.handle_ = handle;
      lib.path_ = candidate;
      return lib;
    }
    const char* message = ::dlerror();
    if (!reasons.empty()) reasons += "; ";
    reasons += message ? printable(message, 300) : quote_input(candidate) + ": cannot open";
  }
  throw LibraryNotFoundError(what + ": " + reasons, what);
}

DynamicLibrary::DynamicLibrary(DynamicLibrary&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

DynamicLibrary& DynamicLibrary::operator=(DynamicLibrary&& other) noexcept {
  if (this != &other) {
    if (handle_) ::dlclose(handle_);
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

DynamicLibrary::~DynamicLibrary() {
  if (handle_) ::dlclose(handle_);
}

void* DynamicLibrary::symbol(const char* name) const {
  return handle_ ? ::dlsym(handle_, name) : nullptr;
}

}  // namespace cudatool
