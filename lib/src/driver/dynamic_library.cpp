#include "cudatool/driver/dynamic_library.hpp"

#include <dlfcn.h>

#include <utility>

#include "cudatool/base/error.hpp"

namespace cudatool {

DynamicLibrary DynamicLibrary::open_first(const std::vector<std::string>& candidates,
                                          const std::string& what) {
  std::string reasons;
  for (const auto& candidate : candidates) {
    if (void* handle = ::dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL)) {
      DynamicLibrary lib;
      lib.handle_ = handle;
      lib.path_ = candidate;
      return lib;
    }
    const char* message = ::dlerror();
    if (!reasons.empty()) reasons += "; ";
    reasons += message ? message : candidate + ": cannot open";
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
